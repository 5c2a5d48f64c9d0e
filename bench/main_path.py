"""A main-path run over real Wikidata items: the sample world's dump with ``../shared/data/wikidata-samples``.

    .venv/bin/python bench/main_path.py --out runs/mainpath [--shared ../shared/data] [--read 20 --salt S]

No Wikidata dump and no gold links of Re-DocRED are here, so the main path (ingest-dump of Wikidata JSON,
generate with gold links) is run over what is: the sample world (``envbench make-sample``: humans with
P21, countries with a singular P1549 demonym as Wikidata has them, gold links) with the real entities of
``wikidata-samples`` added to its dump (Douglas Adams, Oliver Kahn, Portugal, Chicago, Bielefeld, The
Beatles, ...; real classes, so they join the draws of their fine types), and, beside its test split,
documents that name a people by the plural of a country's demonym ("Many Vordians have stayed in
Vordia .", "Many Portuguese have stayed in Portugal ."), which the sample world's templates never write.
Steps: make-sample, the combined dump, ingest-dump, generate --seeds 5 --links. Then it prints:

* name-built-on-name pairs (``bench/built_on.py``) and the plural demonyms of the added documents: a
  renamed plural mention is *broken* unless its new name is a plural people's name of the new item (a
  regular plural of one of its P1549 demonyms, the demonym itself where it is its own plural, a P518 plural
  form; ``core.demonym_plurals``), never one of its noun names ("Many Australian Guinea have stayed here");
* ``--read`` renamed sentences of the documents (the sample test split and the added ones), chosen by md5
  of the salt, the title and the sentence, original above renamed, to read by eye.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from envbench.core.demonym_plurals import regular_plural, same_in_plural  # noqa: E402

ENVBENCH = str(REPO / ".venv" / "bin" / "envbench")
COUNTRY = "Q6256"


def run(*args: str) -> None:
    subprocess.run([ENVBENCH, *args], check=True, stdout=subprocess.DEVNULL)


def real_entities(shared: Path) -> list[dict[str, Any]]:
    """The items and properties of every file of ``wikidata-samples`` (entity JSON in its envelopes: one
    entity, ``{"entities": {...}}``, or a list), the first of each id, legacy ones left out."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted((shared / "wikidata-samples").rglob("*.json")):
        if "legacy" in str(path):
            continue  # the 2014 format
        data = json.loads(path.read_text("utf-8"))
        ents = (list(data["entities"].values()) if isinstance(data, dict) and "entities" in data
                else data if isinstance(data, list) else [data])
        for e in ents:
            if isinstance(e, dict) and e.get("type") == "item" and str(e.get("id", "")).startswith("Q"):
                out.setdefault(e["id"], e)
    return [out[k] for k in sorted(out, key=lambda q: int(q[1:]))]


def en(e: dict[str, Any], key: str) -> str | None:
    v = (e.get(key) or {}).get("en")
    return v["value"] if isinstance(v, dict) else None


def demonyms(e: dict[str, Any]) -> list[str]:
    out = []
    for st in (e.get("claims") or {}).get("P1549", []):
        dv = st.get("mainsnak", {}).get("datavalue", {}).get("value", {})
        if isinstance(dv, dict) and dv.get("language") == "en":
            out.append(dv["text"])
    return out


def is_country(e: dict[str, Any]) -> bool:
    return any(st.get("mainsnak", {}).get("datavalue", {}).get("value", {}).get("id") == COUNTRY
               for st in (e.get("claims") or {}).get("P31", []))


def plural_docs(entities: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, list[str | None]]]:
    """A document per country with a usable demonym: its people named by the plural twice, its name once."""
    docs, links = [], {}
    for e in entities:
        label, dems = en(e, "labels"), demonyms(e)
        if not label or not is_country(e) or not dems:
            continue
        d = dems[0]
        plural = regular_plural(d) or (d if same_in_plural(d) else None)
        if plural is None:
            continue
        title = f"The {plural} of {label}"
        s0 = ["Many", plural, "have", "stayed", "in", *label.split(), "."]
        s1 = ["The", "museum", "was", "built", "by", "the", plural, "."]
        ents = [[{"name": plural, "sent_id": 0, "pos": [1, 2], "type": "LOC"},
                 {"name": plural, "sent_id": 1, "pos": [6, 7], "type": "LOC"}],
                [{"name": label, "sent_id": 0, "pos": [5, 5 + len(label.split())], "type": "LOC"}]]
        docs.append({"title": title, "sents": [s0, s1], "vertexSet": ents, "labels": []})
        links[title] = [e["id"], e["id"]]
    return docs, links


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True, help="folder for the run (sample, dump, index, env)")
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "data", help="the shared data folder")
    ap.add_argument("--seeds", type=int, default=5, help="seeds (default 5)")
    ap.add_argument("--read", type=int, default=20, help="renamed sentences to print (default 20)")
    ap.add_argument("--salt", default="main-path", help="salt of the md5 order of the printed sentences")
    args = ap.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    run("make-sample", "--out", str(out / "sample"))
    with gzip.open(out / "sample" / "wikidata-sample.json.gz", "rt", encoding="utf-8") as fh:
        sample = [json.loads(line.rstrip().rstrip(",")) for line in fh if line.strip() not in ("[", "]")]
    real = real_entities(args.shared)
    have = {e["id"] for e in sample}
    entities = sample + [e for e in real if e["id"] not in have]
    with gzip.open(out / "dump.json.gz", "wt", encoding="utf-8") as fh:
        fh.write("[\n" + ",\n".join(json.dumps(e, ensure_ascii=False, sort_keys=True) for e in entities) + "\n]\n")
    docs = json.loads((out / "sample" / "docs" / "test.json").read_text("utf-8"))
    links = json.loads((out / "sample" / "links.json").read_text("utf-8"))
    extra, extra_links = plural_docs(entities)
    (out / "docs.json").write_text(json.dumps(docs + extra, ensure_ascii=False), "utf-8")
    (out / "links.json").write_text(json.dumps({**links, **extra_links}, ensure_ascii=False), "utf-8")
    run("ingest-dump", str(out / "dump.json.gz"), "--out", str(out / "index"), "--force", "--no-progress")
    run("generate", str(out / "docs.json"), "--index", str(out / "index"), "--links", str(out / "links.json"),
        "--seeds", str(args.seeds), "--out", str(out / "env"), "--force", "--no-progress",
        # as the demo does: the new names stay off the sample world's training and dev documents
        "--exclude-names-from", str(out / "sample" / "docs" / "train.json"),
        "--exclude-names-from", str(out / "sample" / "docs" / "dev.json"))
    print(f"dump: {len(sample)} sample entities + {len(entities) - len(sample)} real ones; documents: "
          f"{len(docs)} sample + {len(extra)} plural ones")
    subprocess.run([sys.executable, str(REPO / "bench" / "built_on.py"), str(out / "env"), str(out / "docs.json"),
                    "--show", "5"], check=True)
    import pyarrow.parquet as pq

    rows = pq.read_table(out / "env" / "substitutions.parquet").to_pylist()
    by_qid = {e["id"]: e for e in entities}
    verdicts = {"plural": 0, "broken": 0, "kept": 0}
    shown: list[str] = []
    for r in rows:
        if r["source_title"] not in extra_links or r["entity"] != 0:
            continue
        if r["kind"] == "kept":
            verdicts["kept"] += 2
            continue
        new = r["new_names"][0]
        item = by_qid.get(r["new_qid"] or "", {})
        forms = {p for d in demonyms(item) for p in (regular_plural(d), d if same_in_plural(d) else None) if p}
        ok = new in forms or new.endswith(" people")
        verdicts["plural" if ok else "broken"] += 2  # two mentions
        shown.append(f"  {r['title']}: {r['old_names'][0]} -> {new} ({'plural' if ok else 'BROKEN'})")
    renamed = verdicts["plural"] + verdicts["broken"]
    print(f"plural demonym mentions: {sum(verdicts.values())}; kept {verdicts['kept']}; renamed {renamed}: "
          f"broken {verdicts['broken']} ({verdicts['broken'] / max(1, renamed):.1%})")
    print("\n".join(shown[:10]))
    env = {d["title"]: d for d in json.loads((out / "env" / "docs_env.json").read_text("utf-8"))}
    source = {d["title"]: d for d in docs + extra}
    pairs = []
    for title, d in env.items():
        src = source.get(title.rsplit("-", 1)[0])
        if src is None:
            continue
        for sid, (a, b) in enumerate(zip(src["sents"], d["sents"], strict=True)):
            if a != b:
                key = hashlib.md5(f"{args.salt}\x1f{title}\x1f{sid}".encode()).hexdigest()
                pairs.append((key, title, " ".join(a), " ".join(b)))
    pairs.sort()
    for _, title, a, b in pairs[:args.read]:
        print(f"\n[{title}]\n  {a}\n  {b}")


if __name__ == "__main__":
    main()
