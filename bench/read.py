"""Whole renamed sentences to read by eye: one changed sentence per source document, original above renamed.

    .venv/bin/python bench/read.py ENV_DIR SOURCE.json [--n 40] [--salt S] [--only num|kind]

The reads RESULTS reports ("32 of 40 whole sentences right, salt whole1207") are judged by a person; this
script only makes the sample reproducible: the source documents are ordered by md5 of the salt and the
title, each contributes one renamed copy (md5 of salt and title picks the seed) and one sentence of it that
renaming changed (md5 of salt, title and sentence index), so the same salt shows the same sentences on the
same output. A new salt is a fresh sample, which a read that decides anything needs. ``--only num`` reads
only sentences that hold a changed NUM or TIME mention, ``--only kind`` only those where a changed non-person
mention has a lower-case noun right after it or "the/a/an ... NOUN" right before it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def _md5(*parts: object) -> str:
    return hashlib.md5("\x1f".join(str(p) for p in parts).encode()).hexdigest()


def _env_file(env_dir: Path) -> Path:
    found = sorted(env_dir.glob("*_env.json"))
    if len(found) != 1:
        sys.exit(f"{env_dir}: expected one *_env.json file of `envbench generate`, found {len(found)}")
    return found[0]


def _changed_sentences(src: Mapping[str, Any], env: Mapping[str, Any], only: str | None) -> list[int]:
    """Indices of the sentences whose tokens renaming changed (and, with ``only``, that hold such a mention)."""
    out = []
    for si, (a, b) in enumerate(zip(src["sents"], env["sents"], strict=True)):
        if a == b:
            continue
        if only is None or _holds(src, env, si, only):
            out.append(si)
    return out


def _holds(src: Mapping[str, Any], env: Mapping[str, Any], si: int, only: str) -> bool:
    for ent, new in zip(src["vertexSet"], env["vertexSet"], strict=True):
        for m, n in zip(ent, new, strict=True):
            if m["sent_id"] != si or m["name"] == n["name"]:
                continue
            if only == "num" and m["type"] in ("NUM", "TIME"):
                return True
            if only == "kind" and m["type"] in ("ORG", "LOC", "MISC"):
                toks = src["sents"][si]
                after = toks[m["pos"][1]] if m["pos"][1] < len(toks) else ""
                before = toks[max(0, m["pos"][0] - 3):m["pos"][0]]
                if (after.isalpha() and after.islower()) or any(t.casefold() in ("the", "a", "an") for t in before):
                    return True
    return False


def sample(source: Sequence[Mapping[str, Any]], env: Sequence[Mapping[str, Any]], n: int, salt: str,
           only: str | None) -> list[tuple[str, int, str, str]]:
    """(title, seed, original sentence, renamed sentence) for up to ``n`` source documents."""
    copies: dict[str, list[tuple[int, Mapping[str, Any]]]] = {}
    for doc in env:
        base, _, seed = doc["title"].rpartition("-")
        copies.setdefault(base, []).append((int(seed), doc))
    out = []
    for src in sorted(source, key=lambda d: _md5(salt, d["title"])):
        mine = sorted(copies.get(src["title"], []), key=lambda c: c[0])
        if not mine:
            continue
        seed, doc = mine[int(_md5(salt, "seed", src["title"]), 16) % len(mine)]
        changed = _changed_sentences(src, doc, only)
        if not changed:
            continue
        si = min(changed, key=lambda i: _md5(salt, src["title"], i))
        out.append((src["title"], seed, " ".join(src["sents"][si]), " ".join(doc["sents"][si])))
        if len(out) == n:
            break
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("env_dir", type=Path, help="an output folder of `envbench generate`")
    ap.add_argument("source", type=Path, help="the DocRED-format file it renamed")
    ap.add_argument("--n", type=int, default=40, help="sentences to print (default 40)")
    ap.add_argument("--salt", default="read", help="salt of the md5 order: a new salt is a fresh sample")
    ap.add_argument("--only", choices=("num", "kind"), help="only sentences with a changed NUM/TIME mention, "
                    "or with a kind word beside a changed non-person mention")
    args = ap.parse_args()
    source = json.loads(args.source.read_text(encoding="utf-8"))
    env = json.loads(_env_file(args.env_dir).read_text(encoding="utf-8"))
    for i, (title, seed, old, new) in enumerate(sample(source, env, args.n, args.salt, args.only), 1):
        print(f"{i}. [{title}-{seed}]\n   {old}\n   {new}\n")


if __name__ == "__main__":
    main()
