"""Numbers and dates a reader can check, after renaming; and how novel the renamed NUM and TIME values are.

Reads a ``generate`` output folder (its ``*_env.json`` and ``substitutions.parquet``) beside the source
documents, and counts four kinds of *checkable pairs* in the source, found by this script's own reading of
the text (it imports nothing of ``envbench.rename.coherence``, the rule it checks):

* **age vs span**: a person written with a birth-death span, "Name ( D1 – D2 )" (two TIME mentions), and
  an age after it in the document ("aged N", "at the age of N", "age N", "N years old"); the age's event
  is a date of its sentence, else the death (D2) where the sentence says "died" or "death". The pair
  agrees when N is the whole years from D1 to the event, at the precision both give (years alone: N or
  N + 1 years apart);
* **interval vs dates**: a count of days, weeks, months or years followed by "later" or "after", with a
  date before it (its sentence or the one before) and a date after it in its sentence ("premiere ... on
  October 11 , 2008 ... one week later on October 18"). It agrees when the count is the whole units between
  the two (a date without a year takes the earlier one's);
* **count vs list**: a NUM count (two to thirty), its noun, then ":", "," or "(" and the entity mentions
  up to the sentence's end (or the closing parenthesis). It agrees when the count equals the number of
  mentions listed;
* **figure vs years**: an age or a count of years or decades (a number with "year(s)" or "decade(s)" in or
  right after its mention) and any two dated mentions of the document whose years lie that far apart (one
  mention per year, the first written; an age: or a year more, a birthday not yet reached). It agrees when
  the count is the distance between the two years as written (an age: or a year less): the pairs a
  renaming that stretches the gaps between years (``envbench.rename.year_map``) must keep.

And **year order**: of the pairs of distinct years the source's TIME mentions write, the share the renamed
document writes in the same order (a monotone map keeps them all; a date kept while the others moved, an
entity with no valid new value, does not).

For each kind: the pairs that agree in the source, and of those the share that still agrees in the renamed
documents (every seed), with a 95% interval from 2,000 bootstrap draws of source documents (a document and
its renamed copies are drawn together). Then the seen-in-training ratios of the paper's Table 5: among the
mentions of NUM and TIME entities the renaming changed, the share whose name is a mention name of the
training documents (``--train``; compared as ``generate --exclude-names-from`` compares names), renamed over
original, with its bootstrap interval.

    # Env dev, names off test (the renaming measured on dev; never a hand check on test):
    .venv/bin/envbench generate ../shared/data/re-docred/dev_revised.json --index runs/lock/index \\
        --links runs/lock/redocred-links.json --exclude-names-from ../shared/data/re-docred/test_revised.json \\
        --seeds 5 --out runs/env-dev --force
    .venv/bin/python bench/numbers_agree.py runs/env-dev --docs ../shared/data/re-docred/dev_revised.json \\
        --train ../shared/data/re-docred/test_revised.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import random
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from envbench.rename.novelty import keys_of, mention_keys, seen

MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december"]
WORDS = {w: i for i, w in enumerate(["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                     "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
                                     "seventeen", "eighteen", "nineteen", "twenty"])}
WORDS.update({"a": 1, "an": 1, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
              "ninety": 90})
UNIT_OF = {"day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month", "months": "month",
           "year": "year", "years": "year"}
DASHES = {"–", "-", "—"}


def number(tokens: Sequence[str]) -> int | None:
    """The count a name writes: digits, or a number word ("sixty - eight" as 68)."""
    words = [w for t in tokens for w in re.split(r"(?<=[a-z0-9])-(?=[a-z])", t.casefold())]
    for i, w in enumerate(words):
        if re.fullmatch(r"\d{1,3}(,\d{3})*|\d+", w):
            return int(w.replace(",", ""))
        if w in WORDS:
            rest = [x for x in words[i + 1:i + 3] if x != "-"]
            if WORDS[w] >= 20 and rest and rest[0] in WORDS and WORDS[rest[0]] < 10:
                return WORDS[w] + WORDS[rest[0]]
            return WORDS[w]
    return None


def date(tokens: Sequence[str], year_from: tuple[int, int | None, int | None] | None = None
         ) -> tuple[int, int | None, int | None] | None:
    """(year, month, day) a name writes; a name without a year takes ``year_from``'s (or the next, when it
    would fall before it)."""
    year = month = day = None
    for t in tokens:
        low = t.casefold().rstrip(".")
        if year is None and re.fullmatch(r"[12]\d{3}", t):
            year = int(t)
        elif month is None and (low in MONTHS or (len(low) >= 3 and any(m.startswith(low) for m in MONTHS))):
            month = next(i + 1 for i, m in enumerate(MONTHS) if m.startswith(low))
        elif day is None and re.fullmatch(r"\d{1,2}(st|nd|rd|th)?", t) and 1 <= int(re.match(r"\d+", t)[0]) <= 31:
            day = int(re.match(r"\d+", t)[0])
    if year is None:
        if year_from is None or month is None:
            return None
        year = year_from[0]
        if (month, day or 0) < (year_from[1] or 0, year_from[2] or 0):
            year += 1
    return year, month, day if month is not None else None


def whole(a: tuple[int, int | None, int | None], b: tuple[int, int | None, int | None], unit: str) -> set[int]:
    """The whole units from ``a`` to ``b`` the two dates allow (two values where the precision leaves a
    birthday or a month's day open)."""
    if unit in ("day", "week"):
        if None in (a[1], a[2], b[1], b[2]):
            return set()
        try:
            days = (datetime.date(*b) - datetime.date(*a)).days  # type: ignore[arg-type]
        except ValueError:
            return set()
        size = 7 if unit == "week" else 1
        return {days // size} if days % size == 0 else set()
    months = 12 * (b[0] - a[0])
    if a[1] is not None and b[1] is not None:
        months += b[1] - a[1]
        if a[2] is not None and b[2] is not None:
            months -= b[2] < a[2]
            options = {months}
        else:
            options = {months, months - 1} if a[1] == b[1] or unit == "month" else {months}
    else:
        options = {months - 11, months} if unit == "year" else set(range(months - 11, months + 12))
    per = 12 if unit == "year" else 1
    return {m // per for m in options if m >= 0}


def mentions_by_sentence(doc: dict[str, Any]) -> list[list[tuple[int, int, int, str]]]:
    out: list[list[tuple[int, int, int, str]]] = [[] for _ in doc["sents"]]
    for ei, ent in enumerate(doc["vertexSet"]):
        for mi, m in enumerate(ent):
            out[m["sent_id"]].append((m["pos"][0], ei, mi, m["type"]))
    return [sorted(x) for x in out]


Ref = tuple[int, int]  # (entity, mention)


def pairs_of(doc: dict[str, Any]) -> list[tuple[str, Ref, Ref, Ref | None, str]]:
    """The checkable pairs of a source document: (kind, the figure, its first date or list, its second date,
    unit); for a count vs list the second is None and the unit is the number of listed mentions."""
    sents = doc["sents"]
    by_sent = mentions_by_sentence(doc)
    vs = doc["vertexSet"]

    def name(ref: Ref) -> list[str]:
        m = vs[ref[0]][ref[1]]
        return sents[m["sent_id"]][m["pos"][0]:m["pos"][1]]

    dates = [(sid, a, (ei, mi)) for sid, ms in enumerate(by_sent) for a, ei, mi, t in ms
             if t == "TIME" and date(sents[sid][a:vs[ei][mi]["pos"][1]], (2000, 1, 1)) is not None
             and not any(UNIT_OF.get(w.casefold()) for w in sents[sid][a:vs[ei][mi]["pos"][1]])]
    out: list[tuple[str, Ref, Ref, Ref | None, str]] = []
    spans: list[tuple[int, int, Ref, Ref]] = []  # (sentence, token, birth, death)
    for sid, ms in enumerate(by_sent):
        sent = sents[sid]
        starts = {a: (ei, mi, t) for a, ei, mi, t in ms}
        for a, ei, mi, t in ms:
            b = vs[ei][mi]["pos"][1]
            if t == "PER" and b < len(sent) and sent[b] == "(" and b + 1 in starts and starts[b + 1][2] == "TIME":
                e1, m1, _ = starts[b + 1]
                end1 = vs[e1][m1]["pos"][1]
                if end1 < len(sent) and sent[end1] in DASHES and end1 + 1 in starts and starts[end1 + 1][2] == "TIME":
                    e2, m2, _ = starts[end1 + 1]
                    spans.append((sid, a, (e1, m1), (e2, m2)))
    for sid, ms in enumerate(by_sent):
        sent = sents[sid]
        low = [t.casefold() for t in sent]
        starts = {a: (ei, mi, t) for a, ei, mi, t in ms}
        for a, ei, mi, t in ms:
            if t not in ("NUM", "TIME"):
                continue
            b = vs[ei][mi]["pos"][1]
            words = [w.casefold() for w in sent[a:b]]
            before = low[max(0, a - 3):a]
            after = low[b:b + 3]
            is_age = (before[-1:] in (["aged"], ["age"]) or before[-2:] == ["age", "of"] or words[:1] == ["age"]
                      or after[:2] in (["years", "old"], ["year", "old"]) or "old" in words)
            value = number(sent[a:b])
            years_of = _years_counted(sent, a, b, is_age)
            if value is not None and years_of is not None:
                out.extend(("figure vs years", (ei, mi), first, second, years_of)
                           for first, second in _year_pairs(dates, name, value * (10 if years_of == "decade" else 1),
                                                            years_of == "age"))
            if is_age and spans:
                earlier = [s for s in spans if (s[0], s[1]) < (sid, a)]
                if earlier:
                    _, _, birth, death = earlier[-1]
                    here = [(abs(p - a), ref) for s, p, ref in dates if s == sid and ref[0] not in (birth[0], ei)]
                    if here:
                        out.append(("age vs span", (ei, mi), birth, min(here)[1], "year"))
                    elif {"died", "death", "dies"} & set(low):
                        out.append(("age vs span", (ei, mi), birth, death, "year"))
                continue
            unit = next((UNIT_OF[w] for w in [*words, *after[:1]] if w in UNIT_OF), None)
            k = b + (0 if any(w in UNIT_OF for w in words) else 1)
            if unit and number(sent[a:b]) is not None and k < len(sent) and low[k] in ("later", "after"):
                first = [ref for s, p, ref in dates if (s == sid and p < a) or s == sid - 1]
                second = [ref for s, p, ref in dates if s == sid and p > k]
                if first and second and first[-1][0] != second[0][0]:
                    out.append(("interval vs dates", (ei, mi), first[-1], second[0], unit))
                continue
            value = number(sent[a:b])
            if t == "NUM" and value is not None and 2 <= value <= 30 and b + 2 < len(sent) and sent[b].isalpha() \
                    and sent[b].islower() and sent[b + 1] in (":", ",", "("):
                # a list: a mention (or "the" and a mention) right after the mark, "and" before the end
                close = sent.index(")", b + 1) if sent[b + 1] == "(" and ")" in sent[b + 1:] else len(sent)
                opens = b + 2 in starts or (low[b + 2] in ("the", "a") and b + 3 in starts)
                joined = sent[b + 1] == "(" or "and" in low[b + 2:close]
                listed = {e for p, e, _, typ in ms if b + 1 < p < close and typ != "NUM" and e != ei}
                if opens and joined and len(listed) >= 2:
                    out.append(("count vs list", (ei, mi), (ei, mi), None, str(len(listed))))
    return out


def _years_counted(sent: Sequence[str], a: int, b: int, is_age: bool) -> str | None:
    """What a figure counts in years: "age", "year" ("17 years", "a 30 - year", "two years later") or "decade";
    None for anything else."""
    if is_age:
        return "age"
    words = [w for t in sent[a:b + 2] for w in re.split(r"(-)", t.casefold()) if w and w != "-"]
    for w in words[1:]:
        if w in ("year", "years"):
            return "year"
        if w in ("decade", "decades"):
            return "decade"
    return None


def _year_pairs(dates: list[tuple[int, int, Ref]], name: Any, years: int, age: bool) -> list[tuple[Ref, Ref]]:
    """Every pair of the document's dated mentions (one per year, the first written) whose years lie ``years``
    apart (an age: or one more, a birthday not yet reached), the earlier first."""
    first: dict[int, Ref] = {}
    for _, _, ref in dates:
        d = date(name(ref))
        if d is not None and re.fullmatch(r"[12]\d{3}", str(d[0])):
            first.setdefault(d[0], ref)
    return [(first[y], first[z]) for y in sorted(first) for z in sorted(first)
            if z - y == years or (age and z - y == years + 1)]


def year_order(doc: dict[str, Any], renamed: dict[str, Any]) -> tuple[int, int]:
    """Of the pairs of distinct years the source's TIME mentions write (one mention per year, the first),
    how many the renamed document writes in the same order, and how many there are."""
    first: dict[int, tuple[int, int]] = {}
    for ei, ent in enumerate(doc["vertexSet"]):
        for mi, m in enumerate(ent):
            if m["type"] == "TIME":
                toks = doc["sents"][m["sent_id"]][m["pos"][0]:m["pos"][1]]
                if not any(UNIT_OF.get(w.casefold()) for w in toks) and (d := date(toks)) is not None:
                    first.setdefault(d[0], (ei, mi))
    new: dict[int, int] = {}
    for y, (ei, mi) in first.items():
        m = renamed["vertexSet"][ei][mi]
        d = date(renamed["sents"][m["sent_id"]][m["pos"][0]:m["pos"][1]])
        if d is not None:
            new[y] = d[0]
    ys = sorted(new)
    pairs = [(y, z) for i, y in enumerate(ys) for z in ys[i + 1:]]
    return sum(new[y] < new[z] for y, z in pairs), len(pairs)


def agrees(doc: dict[str, Any], pair: tuple[str, Ref, Ref, Ref | None, str]) -> bool:
    kind, fig, first, second, unit = pair
    vs, sents = doc["vertexSet"], doc["sents"]

    def toks(ref: Ref) -> list[str]:
        m = vs[ref[0]][ref[1]]
        return sents[m["sent_id"]][m["pos"][0]:m["pos"][1]]
    value = number(toks(fig))
    if value is None:
        return False
    if kind == "count vs list":
        return value == int(unit)
    assert second is not None
    a = date(toks(first))
    b = date(toks(second), a)
    if kind == "figure vs years":
        if a is None or b is None:
            return False
        apart = (b[0] - a[0]) // (10 if unit == "decade" else 1)
        return value == apart or (unit == "age" and value == apart - 1)
    return a is not None and b is not None and value in whole(a, b, unit)


def bootstrap(groups: list[tuple[float, ...]], draws: int = 2000, ratio: bool = False,
              stat: Callable[[list[float]], float | None] | None = None) -> tuple[float, float]:
    """95% interval of sum(x)/sum(y) over documents drawn with replacement (``groups``: per document (x, y));
    ``ratio``: groups hold (x1, y1, x2, y2) and the interval is of (x1/y1) / (x2/y2); ``stat``: of that
    function of the columns' sums instead (None where it is undefined: "x1/y1 - x2/y2", ``bench/places.py --vs``)."""
    rnd = random.Random(57)
    values = []
    for _ in range(draws):
        sample = [groups[rnd.randrange(len(groups))] for _ in groups]
        if stat is not None:
            if (v := stat([sum(g[i] for g in sample) for i in range(len(groups[0]))])) is not None:
                values.append(v)
        elif ratio:
            s = [sum(g[i] for g in sample) for i in range(4)]  # type: ignore[misc]
            if s[1] and s[3] and s[2]:
                values.append((s[0] / s[1]) / (s[2] / s[3]))
        else:
            x, y = sum(g[0] for g in sample), sum(g[1] for g in sample)
            if y:
                values.append(x / y)
    values.sort()
    return values[int(0.025 * len(values))], values[int(0.975 * len(values)) - 1]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a generate output folder")
    parser.add_argument("--docs", type=Path, required=True, help="the source documents it renamed")
    parser.add_argument("--train", type=Path, required=True, help="the training documents of the seen ratios")
    parser.add_argument("--show", type=int, default=0, help="print this many pairs that broke")
    args = parser.parse_args(argv)
    src = {d["title"]: d for d in json.loads(args.docs.read_bytes())}
    env_path = next(args.run.glob("*_env.json"))
    env = json.loads(env_path.read_bytes())
    rows = pq.read_table(args.run / "substitutions.parquet",
                         columns=["title", "source_title", "entity", "coarse_type", "kind"]).to_pylist()
    changed = {(r["title"], r["entity"]) for r in rows if r["kind"] in ("num", "time")}
    source_of = {r["title"]: r["source_title"] for r in rows}
    pairs = {t: pairs_of(d) for t, d in src.items()}
    kinds = ("age vs span", "interval vs dates", "count vs list", "figure vs years")
    tally: dict[str, dict[str, list[float]]] = {k: {} for k in kinds}  # kind -> source title -> [kept, total]
    found = {k: [0, 0] for k in kinds}
    for t, ps in pairs.items():
        for p in ps:
            found[p[0]][1] += 1
            found[p[0]][0] += agrees(src[t], p)
    broke: list[str] = []
    for d in env:
        s = source_of[d["title"]]
        for p in pairs[s]:
            if agrees(src[s], p):
                cell = tally[p[0]].setdefault(s, [0.0, 0.0])
                cell[1] += 1
                ok = agrees(d, p)
                cell[0] += ok
                if not ok:
                    m = d["vertexSet"][p[1][0]][p[1][1]]
                    broke.append(f"{d['title']}: {p[0]}: {' '.join(d['sents'][m['sent_id']])}")
    order: dict[str, list[float]] = {}
    for d in env:
        cell = order.setdefault(source_of[d["title"]], [0.0, 0.0])
        kept, total = year_order(src[source_of[d["title"]]], d)
        cell[0] += kept
        cell[1] += total
    print(f"{env_path} against {args.docs.name} ({len(src)} documents, {len(env)} renamed)")
    for k in kinds:
        groups = [tuple(v) for v in tally[k].values()]
        kept, total = sum(g[0] for g in groups), sum(g[1] for g in groups)
        ci = bootstrap(groups) if groups else (float("nan"), float("nan"))
        print(f"{k:18s} pairs {found[k][1]:4d}, agreeing in the source {found[k][0]:4d}; renamed copies that "
              f"still agree {int(kept)} of {int(total)} = {kept / max(total, 1):.3f} (95% CI {ci[0]:.3f}-{ci[1]:.3f})")
    groups = [tuple(v) for v in order.values() if v[1]]
    kept, total = sum(g[0] for g in groups), sum(g[1] for g in groups)
    lo, hi = bootstrap(groups) if groups else (float("nan"), float("nan"))
    print(f"year order         pairs of years written {int(total)}, in the same order after renaming {int(kept)} = "
          f"{kept / max(total, 1):.4f} (95% CI {lo:.4f}-{hi:.4f})")
    for line in broke[:args.show]:
        print("  broke:", line)
    train = frozenset(mention_keys(json.loads(args.train.read_bytes())))
    per_doc: dict[str, dict[str, list[float]]] = {"TIME": {}, "NUM": {}}
    for d in env:
        s = source_of[d["title"]]
        for ei, (old, new) in enumerate(zip(src[s]["vertexSet"], d["vertexSet"], strict=True)):
            typ = old[0]["type"]
            if typ not in per_doc or (d["title"], ei) not in changed:
                continue
            cell = per_doc[typ].setdefault(s, [0.0, 0.0, 0.0, 0.0])  # env seen, mentions, original seen, mentions
            for mo, mn in zip(old, new, strict=True):
                cell[0] += seen(keys_of(d, mn), train)
                cell[2] += seen(keys_of(src[s], mo), train)
                cell[1] += 1
                cell[3] += 1
    for typ, docs in per_doc.items():
        groups = list(docs.values())
        e, n, o = sum(g[0] for g in groups), sum(g[1] for g in groups), sum(g[2] for g in groups)
        lo, hi = bootstrap(groups, ratio=True)  # type: ignore[arg-type]
        print(f"{typ:4s} seen in {args.train.name}: renamed {e / n:.3f}, original {o / n:.3f} of {int(n)} mentions of "
              f"changed entities; ratio {(e / n) / (o / n):.3f} (95% CI {lo:.3f}-{hi:.3f})")


if __name__ == "__main__":
    main()
