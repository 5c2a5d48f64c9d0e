"""Measurement: do renamed demonym mentions stay demonyms? (issue 13, target <= 2% become noun names)

    .venv/bin/python bench/demonyms.py runs/lock/env ../shared/data/re-docred/test_revised.json
    .venv/bin/python bench/demonyms.py ENV_DIR SOURCE.json [--show 20]

For every renamed mention of a linked entity (``substitutions.parquet`` pairs each old name with its new
name) whose old name is an adjectival form in the bundled lexicon (``envbench.worlds.gazetteers``:
"American", "Austrians", "Catholic"), the new name is judged:

* **adjectival**: the lexicon knows it as an adjectival form ("Croatian");
* **language**: the entity's fine type is language (Q34770) or the new name is a language name
  (pycountry's languages through the gazetteer). A MISC entity named
  "English" is the language, renamed to another language, and a language name is itself used as an
  adjective ("a Telugu poet"), so this is not counted as a miss; it is printed apart;
* **noun**: anything else ("Rhodesia" for "Equatoguinean"): a miss.

The lexicon that judges is the one the renamer uses, so a LOC name outside it that looks adjectival by
its form (one capitalised word ending in -an, -ese, -ish, -ic, -i: "Equatoguinean") is counted apart,
as a check on the lexicon's coverage. Mentions are counted, not names (each mention of a renamed name in the source document once per seed).
Prints the shares and the first ``--show`` misses with their documents.

The other way round (issue 31): of the renamed ORG/LOC/MISC mentions whose old name is a noun (neither in
the lexicon nor adjectival by form), how many became an adjective: a singular form of the lexicon, or a
phrase whose last word is one ("Imperial Russian"), a language name aside ("written in Catalan" reads
right). "The Royal Arsenal , Woolwich" had read "The Royal Arsenal , Patagonian". A country's short form
("US", "U.S.", "UK") is counted apart: written as a modifier ("a U.S. Representative") it takes an adjective
("an Emirati Representative"), written as a noun a noun.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from envbench.formats.docred import read_docred  # noqa: E402
from envbench.worlds.gazetteers import load_gazetteer  # noqa: E402

LANGUAGE = "Q34770"  # the entity was typed a language and drew another language


SUFFIXES = ("an", "ese", "ish", "ic", "i")
# countries' short forms, dots ignored: a noun ("in the US") or a modifier ("a U.S. Representative")
SHORT_FORMS = frozenset({"US", "USA", "UK", "USSR", "UAE", "PRC", "DRC", "ROC", "GDR", "FRG", "DPRK", "ROK"})


def looks_adjectival(name: str) -> bool:
    """A lexicon-free guess, to see what the lexicon misses: "Equatoguinean", "Bhutanese", "Omani"."""
    return " " not in name.strip() and name[:1].isupper() and name.lower().endswith(SUFFIXES) and len(name) > 4


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("env", help="a generate output folder (substitutions.parquet)")
    ap.add_argument("source", help="the DocRED-format file it was generated from")
    ap.add_argument("--show", type=int, default=15, help="misses to print")
    args = ap.parse_args()
    import pyarrow.parquet as pq

    gz = load_gazetteer()
    docs = {d["title"]: d for d in read_docred(args.source).docs}
    rows = pq.read_table(Path(args.env) / "substitutions.parquet").to_pylist()
    verdicts: Counter[str] = Counter()
    outside: Counter[str] = Counter()
    outside_misses: list[str] = []
    misses: list[str] = []
    nouns: Counter[str] = Counter()
    noun_misses: list[str] = []

    def singular_form(name: str) -> bool:
        return any(not a.kind.endswith("_plural") for a in gz.adjectival_for(name))

    shorts: Counter[str] = Counter()  # country short forms: nouns, or modifiers ("a U.S. Representative")
    for r in rows:
        if r["kind"] != "linked" or not r["new_qid"]:
            continue
        ent = docs[r["source_title"]]["vertexSet"][r["entity"]]
        per_name = Counter(m["name"] for m in ent)
        for old, new in zip(r["old_names"], r["new_names"]):
            if r["coarse_type"] == "LOC" and old.replace(".", "") in SHORT_FORMS:
                shorts["adjective" if singular_form(new) else "noun"] += per_name[old]
                continue  # a short form may be either (counted apart; the renamer's rule is read by eye)
            if r["coarse_type"] != "PER" and not gz.adjectival_for(old) and not looks_adjectival(old):
                words = new.split()
                if singular_form(new) or (len(words) > 1 and singular_form(words[-1])):
                    v = "language" if any(p.kind == "language" for p in gz.places_for(new)) else "adjective"
                    if v == "adjective" and len(noun_misses) < args.show:
                        noun_misses.append(f"  {r['title']}: {old} -> {new} ({r['coarse_type']})")
                else:
                    v = "noun"
                nouns[v] += per_name[old]
            if not gz.adjectival_for(old):
                if r["coarse_type"] == "LOC" and looks_adjectival(old):  # outside the lexicon: judged by form
                    outside["adjectival" if gz.adjectival_for(new) or looks_adjectival(new) else "noun"] += per_name[old]
                    if not (gz.adjectival_for(new) or looks_adjectival(new)) and len(outside_misses) < args.show:
                        outside_misses.append(f"  {r['title']}: {old} -> {new}")
                continue
            if gz.adjectival_for(new):
                v = "adjectival"
            elif r["fine_type"] == LANGUAGE or gz.reads_as_adjective(new):
                v = "language"
            else:
                v = "noun"
                if len(misses) < args.show:
                    misses.append(f"  {r['title']}: {old} -> {new} ({r['coarse_type']})")
            verdicts[v] += per_name[old]
    total = sum(verdicts.values())
    print(f"{args.env}: {total} renamed mentions whose old name is an adjectival form")
    for v in ("adjectival", "language", "noun"):
        print(f"  {v:<11} {verdicts[v]:>6}  {verdicts[v] / max(1, total):6.2%}")
    print(f"became noun names: {verdicts['noun'] / max(1, total):.2%} (target <= 2%); counting language names "
          f"as misses too: {(verdicts['noun'] + verdicts['language']) / max(1, total):.2%}")
    print("\n".join(misses))
    n_out = sum(outside.values())
    print(f"LOC mentions outside the lexicon that look adjectival (one capitalised word ending in "
          f"{'/'.join(SUFFIXES)}): {n_out}; renamed to a name that does not: {outside['noun']} "
          f"({outside['noun'] / max(1, n_out):.1%})")
    print("\n".join(outside_misses))
    n_nouns = sum(nouns.values())
    print(f"renamed ORG/LOC/MISC noun mentions: {n_nouns}; became an adjective: {nouns['adjective']} "
          f"({nouns['adjective'] / max(1, n_nouns):.2%}), a language name: {nouns['language']}")
    print("\n".join(noun_misses))
    print(f"renamed country short forms (US, U.S., UK, ...; a noun, or a modifier in 'a U.S. Representative', "
          f"which takes an adjective): {sum(shorts.values())}; became an adjective: {shorts['adjective']}")
    print(json.dumps({"mentions": total, **verdicts, "noun_mentions": n_nouns,
                      "nouns_to_adjectives": nouns["adjective"], "short_forms": sum(shorts.values()),
                      "short_forms_to_adjectives": shorts["adjective"]}))


if __name__ == "__main__":
    main()
