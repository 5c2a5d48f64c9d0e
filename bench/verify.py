"""Benchmark: `envbench verify` of Env-Re-DocRED test (target: under 30 s on 2 cores).

    .venv/bin/python bench/verify.py              # 2 repeats of each measurement
    .venv/bin/python bench/verify.py --repeats 1

The offline flow of `make lock` from ../shared/data (kb-from-corpus dev+test, ingest-dump, generate
test --seeds 5, lock) runs once into a temporary folder (not timed). Then, side by side, each as the
command a user's CI runs (a fresh process, so the imports count):

- baseline: `envbench generate --force` alone, the regeneration verify cannot avoid;
- `envbench verify` with the index's candidate cache (INDEX/derived/) present, as on a reused index;
- `envbench verify` on a fresh index without it, as in CI after `ingest-dump` (verify removes the cache
  it made, leaving the index as it found it).

Printed: wall seconds (median), CPU seconds (user + sys of the child), and verify / generate. The
machine's other load shows in wall - CPU; the target is on wall time.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("ENVBENCH_SHARED", REPO.parent / "shared" / "data"))
ENVBENCH = [sys.executable, "-m", "envbench"]
TARGET_S = 30.0


def run(args: list[str], *, check: bool = True) -> tuple[float, float, int]:
    """(wall s, CPU s of the child, exit code) of one command; its output goes to stderr when it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([*ENVBENCH, *args], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        print(f"failed: envbench {' '.join(args)}\n{proc.stdout}{proc.stderr}", file=sys.stderr)
        if check:
            sys.exit(1)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=2, help="runs of each measurement (the median is printed)")
    opts = ap.parse_args()
    redocred = SHARED / "re-docred"
    if not (redocred / "test_revised.json").is_file():
        sys.exit(f"no Re-DocRED at {redocred}; set ENVBENCH_SHARED")
    work = Path(tempfile.mkdtemp(prefix="envbench-bench-verify-"))
    try:
        kb, links, index, env = work / "kb.json.gz", work / "links.json", work / "index", work / "env"
        docs = str(redocred / "test_revised.json")
        run(["kb-from-corpus", str(redocred / "dev_revised.json"), docs, "--out", str(kb), "--links", str(links)])
        run(["ingest-dump", str(kb), "--out", str(index), "--no-progress"])
        dev = str(redocred / "dev_revised.json")
        gen = ["generate", docs, "--index", str(index), "--links", str(links), "--exclude-names-from", dev,
               "--seeds", "5", "--out", str(env), "--no-progress"]
        run(gen)
        lock = work / "env-redocred-test.lock.json"
        run(["lock", str(env), "--index", str(index), "--out", str(lock)])
        verify = ["verify", str(lock), "--docs", docs, "--index", str(index), "--links", str(links),
                  "--exclude-names-from", dev]
        rows: dict[str, list[tuple[float, float]]] = {"generate --force": [], "verify (cache present)": [],
                                                      "verify (fresh index)": []}
        for _ in range(opts.repeats):
            rows["generate --force"].append(run([*gen, "--force"])[:2])
            w, c, code = run(verify, check=False)
            if code != 0:
                sys.exit("verify failed on an unchanged tree: the code changed during the benchmark?")
            rows["verify (cache present)"].append((w, c))
            shutil.rmtree(index / "derived")
            w, c, code = run(verify, check=False)
            if code != 0 or (index / "derived").exists():
                sys.exit("verify on a fresh index failed, or left the candidate cache behind")
            rows["verify (fresh index)"].append((w, c))
            run([*gen, "--force"])  # the cache back for the next round's first two rows
    finally:
        shutil.rmtree(work, ignore_errors=True)
    base = statistics.median(w for w, _ in rows["generate --force"])
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}; Env-Re-DocRED test: 500 documents x 5 seeds")
    print(f"{'command':<24} {'wall s':>7} {'CPU s':>7} {'/ generate':>10}")
    for name, values in rows.items():
        wall, cpu = statistics.median(w for w, _ in values), statistics.median(c for _, c in values)
        print(f"{name:<24} {wall:>7.1f} {cpu:>7.1f} {wall / base:>10.2f}")
    worst = max(statistics.median(w for w, _ in rows[k]) for k in rows if k.startswith("verify"))
    print(f"target: verify under {TARGET_S:.0f} s wall: {'met' if worst < TARGET_S else 'NOT met'} ({worst:.1f} s)")


if __name__ == "__main__":
    main()
