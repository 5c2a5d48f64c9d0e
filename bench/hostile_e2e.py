"""Issue 56's end-to-end fuzz, kept: mutated prediction files through `envbench evaluate --end-to-end`.

    .venv/bin/python bench/hostile_e2e.py --gold ../shared/data/re-docred/dev_revised.json [--files 400] [--seed 7]

The gold's first 3 documents are written as predictions in both formats `evaluate --end-to-end` reads (the
envbench rows and JEREX's current layout); each fuzzed file takes one of them and applies one to three
mutations drawn from :data:`MUTATIONS` (a value replaced by None, -1, 1e30, a list, an object, a string with
a lone surrogate or a bidi control; a key deleted; a list emptied or doubled; a mention copied into another
entity), by `random.Random(seed)`. Each file is scored twice, with and without `--skip-invalid`, through the
CLI in this process (click's runner), with `--out`.

A run is *bad* when it raises anything but click's own exit (a traceback), or when it exits 0 and writes a
fraction outside [0, 1]. The script prints the counts, the distinct one-line errors, and every bad run with
its file (kept under --keep), and exits 1 if there is any. Nothing here is asserted by the test suite: the
cases it once found are tests of their own (tests/envbench/scoring/test_evaluate_end_to_end.py).
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from envbench.cli import cli

HOSTILE_VALUES: list[Any] = [None, -1, 1e30, [1, 2], {"id": "P17"}, "\ud800", "\u202e17", True, "", 0.5]


def as_envbench(doc: dict[str, Any]) -> dict[str, Any]:
    return {"title": doc["title"],
            "entities": [{"mentions": [[m["sent_id"], *m["pos"]] for m in e], "type": e[0]["type"]}
                         for e in doc["vertexSet"]],
            "relations": [{"h": lab["h"], "t": lab["t"], "r": lab["r"]} for lab in doc.get("labels", [])]}


def as_jerex(doc: dict[str, Any]) -> dict[str, Any]:
    starts, n = [], 0
    for s in doc["sents"]:
        starts.append(n)
        n += len(s)
    mentions: list[dict[str, int]] = []
    entities = []
    for e in doc["vertexSet"]:
        idx = []
        for m in e:
            idx.append(len(mentions))
            mentions.append({"start": starts[m["sent_id"]] + m["pos"][0], "end": starts[m["sent_id"]] + m["pos"][1]})
        entities.append({"mentions": idx, "type": e[0]["type"]})
    return {"tokens": [t for s in doc["sents"] for t in s], "mentions": mentions, "entities": entities,
            "relations": [{"head": lab["h"], "tail": lab["t"], "type": lab["r"]} for lab in doc.get("labels", [])]}


def _paths(x: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside rows (dict keys and list indices)."""
    out = [at]
    if isinstance(x, dict):
        for k in sorted(x):
            out += _paths(x[k], (*at, k))
    elif isinstance(x, list):
        for i, v in enumerate(x[:6]):  # the first few items of long lists are enough
            out += _paths(v, (*at, i))
    return out


def _parent(rows: Any, path: tuple[Any, ...]) -> tuple[Any, Any]:
    node = rows
    for k in path[:-1]:
        node = node[k]
    return node, path[-1]


def _replace(rows: Any, path: tuple[Any, ...], rng: random.Random) -> None:
    node, key = _parent(rows, path)
    node[key] = copy.deepcopy(rng.choice(HOSTILE_VALUES))


def _delete(rows: Any, path: tuple[Any, ...], rng: random.Random) -> None:
    node, key = _parent(rows, path)
    del node[key]


def _empty_or_double(rows: Any, path: tuple[Any, ...], rng: random.Random) -> None:
    node, key = _parent(rows, path)
    if isinstance(node[key], list):
        node[key] = [] if rng.random() < 0.5 else node[key] + copy.deepcopy(node[key])


def _share_mention(rows: Any, path: tuple[Any, ...], rng: random.Random) -> None:
    row = rows[path[0]] if isinstance(path[0], int) and path[0] < len(rows) else rows[0]
    ents = row.get("entities") if isinstance(row, dict) else None
    if isinstance(ents, list) and len(ents) > 1 and all(isinstance(e, dict) and e.get("mentions") for e in ents[:2]):
        ents[1]["mentions"] = list(ents[1]["mentions"]) + [ents[0]["mentions"][0]]


MUTATIONS: list[Callable[[Any, tuple[Any, ...], random.Random], None]] = [
    _replace, _replace, _delete, _empty_or_double, _share_mention]


def mutate(rows: list[Any], rng: random.Random) -> list[Any]:
    rows = copy.deepcopy(rows)
    for _ in range(rng.randint(1, 3)):
        paths = [p for p in _paths(rows) if p]
        if not paths:
            break
        try:
            rng.choice(MUTATIONS)(rows, rng.choice(paths), rng)
        except (KeyError, IndexError, TypeError):  # the path vanished under an earlier mutation
            continue
    return rows


def _fractions_ok(scores: Any) -> bool:
    """Every value named like a fraction (precision, recall, F1) is in [0, 1]."""
    if isinstance(scores, dict):
        return all(_fractions_ok(v) for v in scores.values()) and all(
            0.0 <= v <= 1.0 for k, v in scores.items()
            if isinstance(v, float) and k.rsplit("_", 1)[-1] in ("p", "r", "f1", "precision", "recall"))
    if isinstance(scores, list):
        return all(_fractions_ok(v) for v in scores)
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gold", type=Path, required=True, help="a DocRED-format file (its first 3 documents are used)")
    ap.add_argument("--files", type=int, default=400, help="fuzzed prediction files (default 400)")
    ap.add_argument("--seed", type=int, default=7, help="seed of the mutations (default 7)")
    ap.add_argument("--keep", type=Path, help="folder to keep the files of bad runs in")
    args = ap.parse_args()
    docs = json.loads(args.gold.read_text(encoding="utf-8"))[:3]
    rng = random.Random(args.seed)
    runner = CliRunner()
    errors: Counter[str] = Counter()
    bad: list[str] = []
    runs = 0
    with tempfile.TemporaryDirectory() as tmp:
        gold = Path(tmp) / "gold.json"
        gold.write_text(json.dumps(docs), encoding="utf-8")
        for i in range(args.files):
            base = [as_envbench(d) for d in docs] if i % 2 == 0 else [as_jerex(d) for d in docs]
            pred = Path(tmp) / f"pred-{i}.json"
            pred.write_text(json.dumps(mutate(base, rng), ensure_ascii=False, allow_nan=False, default=str),
                            encoding="utf-8", errors="surrogatepass")
            for skip in ([], ["--skip-invalid"]):
                out = Path(tmp) / f"scores-{i}.json"
                out.unlink(missing_ok=True)
                res = runner.invoke(cli, ["evaluate", "--end-to-end", "--gold", str(gold), "--pred", str(pred),
                                          "--out", str(out), *skip])
                runs += 1
                if res.exception is not None and not isinstance(res.exception, SystemExit):
                    bad.append(f"{pred.name} {' '.join(skip)}: {type(res.exception).__name__}: {res.exception}")
                elif res.exit_code == 0 and out.exists() and not _fractions_ok(json.loads(out.read_text())):
                    bad.append(f"{pred.name} {' '.join(skip)}: a fraction outside [0, 1]")
                elif res.exit_code != 0:
                    line = (res.output.strip().splitlines() or ["(no message)"])[-1]
                    errors[line.replace(str(pred), "PRED").replace(str(gold), "GOLD")[:150]] += 1
                if bad and args.keep is not None and bad[-1].startswith(pred.name):
                    args.keep.mkdir(parents=True, exist_ok=True)
                    (args.keep / pred.name).write_bytes(pred.read_bytes())
    print(f"{runs} runs of `evaluate --end-to-end` over {args.files} fuzzed files (seed {args.seed}): "
          f"{len(bad)} bad (a traceback, or a fraction outside [0, 1]); {len(errors)} distinct one-line errors")
    for b in bad:
        print("  BAD", b)
    for msg, n in errors.most_common(8):
        print(f"  {n:4d}  {msg}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
