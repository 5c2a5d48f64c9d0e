"""How big the explore site of a real Env benchmark is, and how fast its pages open in a browser.

Builds Env-Re-DocRED test through the offline flow (kb-from-corpus on Re-DocRED dev + test,
ingest-dump, generate --seeds 5: 2,500 renamed documents), writes predictions derived from gold
(the original side all correct, each twin missing every third fact: enough lost facts to fill the
lists; no model is needed to time a page), builds the site, then opens the document list, one
document and the summary in headless Chromium.

Page times are read from the page itself (milliseconds from navigation to the end of rendering,
``data-render-ms``), so the browser's start-up does not count; a blank page is opened side by side
for the floor. The issue's target: the 2,500-document site opens within 2 s.

    python bench/explore.py [--work DIR] [--keep]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data" / "re-docred"
ENVBENCH = [sys.executable, "-m", "envbench"]
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _run(*args: str) -> None:
    subprocess.run([*ENVBENCH, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _open(chromium: str, url: str, profile: Path) -> tuple[float, int | None]:
    t = time.perf_counter()
    dom = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    wall = time.perf_counter() - t
    m = re.search(r'data-render-ms="(\d+)"', dom)
    return wall, int(m.group(1)) if m else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=None, help="working folder (default: a temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the working folder")
    args = ap.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not SHARED.is_dir():
        print(f"needs Re-DocRED in {SHARED}", file=sys.stderr)
        return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="envbench-bench-explore-"))
    try:
        test = SHARED / "test_revised.json"
        t0 = time.perf_counter()
        _run("kb-from-corpus", str(SHARED / "dev_revised.json"), str(test), "--out", str(work / "kb.json.gz"),
             "--links", str(work / "links.json"))
        _run("ingest-dump", str(work / "kb.json.gz"), "--out", str(work / "index"))
        _run("generate", str(test), "--index", str(work / "index"), "--links", str(work / "links.json"),
             "--exclude-names-from", str(SHARED / "dev_revised.json"), "--seeds", "5", "--out", str(work / "env"))
        print(f"offline Env-Re-DocRED test: {time.perf_counter() - t0:.1f} s")
        orig = json.loads(test.read_text())
        env = json.loads((work / "env" / "test_revised_env.json").read_text())
        p0 = [{"title": d["title"], "h_idx": x["h"], "t_idx": x["t"], "r": x["r"]} for d in orig for x in d["labels"]]
        pk = [{"title": d["title"], "h_idx": x["h"], "t_idx": x["t"], "r": x["r"]}
              for d in env for i, x in enumerate(d["labels"]) if i % 3]
        (work / "p0.json").write_text(json.dumps(p0))
        (work / "pk.json").write_text(json.dumps(pk))
        site = work / "site"
        t = time.perf_counter()
        _run("explore", "--env-gold", str(work / "env" / "test_revised_env.json"), "--original-gold", str(test),
             "--original-pred", str(work / "p0.json"), "--env-pred", str(work / "pk.json"), "--out", str(site),
             "--force")
        build = time.perf_counter() - t
        files = [f for f in site.rglob("*") if f.is_file()]
        total = sum(f.stat().st_size for f in files)
        index_js = (site / "data" / "index.js").stat().st_size
        docs = sorted((site / "data" / "docs").glob("*.js"))
        print(f"documents: {len(orig)} source, {len(env)} renamed; build {build:.1f} s")
        print(f"site: {total / 1e6:.1f} MB in {len(files)} files; loaded at once: index.js {index_js / 1e3:.0f} kB; "
              f"per document: mean {sum(f.stat().st_size for f in docs) / len(docs) / 1e3:.0f} kB, loaded on demand")
        if chromium is None:
            print("no chromium on PATH: page times skipped (apt-get install chromium)")
            return 0
        blank = work / "blank.html"
        blank.write_text("<!doctype html><script>document.documentElement.dataset.renderMs="
                         "performance.now().toFixed(0)</script>")
        profile = work / "profile"
        print(f"{'page':<22}{'render ms':>10}{'wall s':>9}   (best of 3; wall includes the browser's start)")
        rows = [("blank page", blank.as_uri()), ("document list", (site / "index.html").as_uri()),
                ("one document", (site / "index.html").as_uri() + "#/doc/250/3"),
                ("summary", (site / "index.html").as_uri() + "#/summary")]
        for name, url in rows:
            runs = [_open(chromium, url, profile) for _ in range(3)]
            wall = min(r[0] for r in runs)
            ms = min((r[1] for r in runs if r[1] is not None), default=None)
            print(f"{name:<22}{ms if ms is not None else '-':>10}{wall:>9.2f}")
    finally:
        if not args.keep and args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
