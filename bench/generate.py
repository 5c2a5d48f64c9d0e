"""Benchmark: `generate` for 1000 documents x 5 seeds against lean indexes of growing size.

    .venv/bin/python bench/generate.py            # 1M and 10M items
    .venv/bin/python bench/generate.py --quick    # 100k and 1M items (about a minute and a half)
    .venv/bin/python bench/generate.py --rss      # peak RSS on 5 MB and 50 MB DocRED files, --seeds 2
    .venv/bin/python bench/generate.py --against 5bf86fc   # this tree against a commit, side by side

Lean indexes are written straight to Parquet by one DuckDB query per table (the ingest path
for 10M items would take too long here): every item has a label, 0-3 aliases, one P31 class
from a skewed mix (40% human, 15% city, ...), a popularity, and there is a small P279 tree and a
few type constraints, and the name_tokens table that `envbench ingest-dump` writes (so `generate` tokenises
its names without loading spaCy, as on an ingested index). They are cached under runs/bench/ (delete
to rebuild).

Documents: Re-DocRED dev + test (1000 real documents) from ../shared/data when present, else the
sample world's documents repeated to 1000. Every PER/ORG/LOC/MISC entity is linked to an item
of a matching class among the first 100k items, so every index size sees the same links and the
same work; only the size of the index differs. The time covers `generate` end to end (reading,
typing, candidate SQL, substitution, audit, writing), measured side by side in one run: a first run
(which numbers the candidates of every class once and caches that in INDEX/derived/) and a later
run on the same index.

``--against REV`` compares this working tree with a commit (exported with ``git archive`` under
``--work``) on the 1M-item index (100k with ``--quick``): each round runs each version in a fresh
process, alternating, with its own copy of the index (so neither reuses the other's numbering
cache), as one first run and one later run; it prints the fastest and the median time of each and
their ratios, and judges issue 13's bound (this tree within 1.2x of 5bf86fc) on the fastest runs,
since on a shared machine noise only ever adds time; it also prints the CPU time of each (all threads),
which the machine's other tenants do not inflate.

``--rss`` measures memory instead: each input size (the 1000 documents repeated under new titles
until the file reaches the size) runs `generate --seeds 2` on the 100k-item index in a fresh
process, which reports its peak RSS (``ru_maxrss``). The target: peak RSS grows sublinearly with
the input size (10x the input, well under 10x the memory) and stays under 1.5 GB for 50 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from envbench.core.seeding import derive_seed  # noqa: E402
from envbench.core.text import name_tokenizer  # noqa: E402
from envbench.formats.docred import entity_type  # noqa: E402
from etl.io import sha256_file, write_json_atomic  # noqa: E402
from wikidata_index.ingest import write_name_tokens  # noqa: E402

SYLLABLES = ["ka", "lo", "mi", "ren", "dor", "sa", "vel", "tin", "mar", "bel", "or", "an", "ish", "tu", "gar",
             "nel", "po", "ri", "sen", "ca", "del", "fa", "hu", "ja", "ke", "lu", "mo", "na", "pe", "qui",
             "ro", "su", "ta", "ul", "vi", "wa", "xe", "yo", "ze", "bra", "cle", "dri", "fro", "gla", "pra",
             "sto", "tri", "vro", "ald", "eno"]
# P31 class per bucket of i % 100, and the coarse type it serves
BUCKETS = [("Q5", 0, 40), ("Q515", 40, 55), ("Q6256", 55, 58), ("Q43229", 58, 68), ("Q4830453", 68, 78),
           ("Q7725634", 78, 90), ("Q482994", 90, 100)]
COARSE_BUCKETS = {"PER": [("Q5", 0, 40)], "LOC": [("Q515", 40, 55), ("Q6256", 55, 58)],
                  "ORG": [("Q43229", 58, 68), ("Q4830453", 68, 78)],
                  "MISC": [("Q7725634", 78, 90), ("Q482994", 90, 100)]}
SUBCLASSES = [("Q5", "Q215627"), ("Q515", "Q486972"), ("Q486972", "Q2221906"), ("Q6256", "Q2221906"),
              ("Q4830453", "Q43229"), ("Q7725634", "Q47461344"), ("Q47461344", "Q386724"), ("Q482994", "Q386724")]
CONSTRAINTS = [("P27", "Q21503250", "Q5"), ("P27", "Q21510865", "Q6256"), ("P17", "Q21510865", "Q6256"),
               ("P131", "Q21503250", "Q2221906"), ("P19", "Q21510865", "Q2221906"), ("P569", "Q21503250", "Q5")]
LINK_RANGE = 100_000  # links point into the first 100k items, present in every index size
RSS_TARGET_MB = 1536  # peak RSS of generate on a 50 MB DocRED file (issue 17 #26)


def qid(i: int) -> str:
    return f"Q{100_000_000 + i}"


def build_lean_index(root: Path, items: int) -> Path:
    """Write a lean index of ``items`` items (cached: reused when its manifest exists, and given the
    name_tokens table that `envbench ingest-dump` writes when its manifest does not record it)."""
    import duckdb

    manifest = root / "manifest.json"
    if manifest.is_file():
        if json.loads(manifest.read_text()).get("name_tokens") != name_tokenizer().record():
            _write_manifest(root, items)  # an index cached before the table, or under another spaCy
        return root
    root.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    syl = "[" + ", ".join(f"'{s}'" for s in SYLLABLES) + "]"
    n = len(SYLLABLES)
    cls_case = "CASE " + " ".join(f"WHEN i % 100 < {hi} THEN '{c}'" for c, _, hi in BUCKETS) + " END"
    con.execute(f"""CREATE MACRO cap(s) AS upper(s[1]) || s[2:];
        CREATE MACRO w1(i) AS cap({syl}[i % {n} + 1] || {syl}[(i // {n}) % {n} + 1]);
        CREATE MACRO w2(i) AS cap({syl}[(i // {n**2}) % {n} + 1] || {syl}[(i // {n**3}) % {n} + 1]
                                   || {syl}[(i // {n**4}) % {n} + 1]);
    """)
    base = f"SELECT range AS i FROM range({items})"

    def copy(table: str, sql: str) -> None:
        (root / table).mkdir(exist_ok=True)
        con.execute(f"COPY ({sql}) TO '{root / table / 'part-00000.parquet'}' "
                    "(FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 1000000)")

    copy("entities", f"""SELECT 'Q' || (100000000 + i) AS id, 'item' AS type, w1(i) || ' ' || w2(i) AS label,
        NULL::VARCHAR AS description, 0::INT AS sitelinks, NULL::VARCHAR AS enwiki,
        ((i * 7919) % 1000)::BIGINT AS popularity FROM ({base})""")
    copy("names", f"""SELECT id, 'en' AS lang, name, is_label, lower(name) AS folded FROM (
        SELECT i, 'Q' || (100000000 + i) AS id, w1(i) || ' ' || w2(i) AS name, true AS is_label, 0 AS k FROM ({base})
        UNION ALL SELECT i, 'Q' || (100000000 + i), w2(i), false, 1 FROM ({base}) WHERE (i // 7) % 4 >= 1
        UNION ALL SELECT i, 'Q' || (100000000 + i), left(w1(i), 1) || '. ' || w2(i), false, 2 FROM ({base})
                  WHERE (i // 7) % 4 >= 2
        UNION ALL SELECT i, 'Q' || (100000000 + i), w1(i) || ' ' || left(w2(i), 1) || '.', false, 3 FROM ({base})
                  WHERE (i // 7) % 4 >= 3
        ) ORDER BY i, k""")
    copy("types", f"SELECT 'Q' || (100000000 + i) AS id, {cls_case} AS class, 'normal' AS rank FROM ({base})")
    sub = " UNION ALL ".join(f"SELECT '{a}' AS id, '{b}' AS superclass, 'normal' AS rank" for a, b in SUBCLASSES)
    copy("subclasses", sub)
    copy("edges", f"""SELECT 'Q' || (100000000 + i) AS subject, 'P17' AS property,
        'Q' || (100000000 + 55 + 100 * ((i * 31) % greatest({items} // 100, 1))) AS object
        FROM ({base}) WHERE i % 10 = 0""")
    copy("properties", "SELECT 'P17' AS id, 'wikibase-item' AS datatype, 'country' AS label")
    cons = " UNION ALL ".join(
        f"SELECT '{p}' AS property, '{t}' AS constraint_type, '{c}' AS class, 'Q21503252' AS relation"
        for p, t, c in CONSTRAINTS)
    copy("property_constraints", cons)
    con.close()
    _write_manifest(root, items)
    return root


def _write_manifest(root: Path, items: int) -> None:
    """name_tokens as `envbench ingest-dump` writes it, then the manifest over every table file."""
    tokenizer = name_tokenizer()
    write_name_tokens(root / "names", None, root / "name_tokens", tokenizer)
    outputs = [{"name": str(p.relative_to(root)), "bytes": p.stat().st_size, "sha256": sha256_file(p)}
               for p in sorted(root.glob("*/*.parquet"))]
    write_json_atomic(root / "manifest.json", {"step": "bench lean index", "items": items, "outputs": outputs,
                                               "name_tokens": tokenizer.record()},
                      indent=True)


def _links_for(docs: list[dict]) -> dict[str, list[str | None]]:
    """Every PER/ORG/LOC/MISC entity linked to an item of a matching class, from a hash of its title."""
    links = {}
    for d in docs:
        row = []
        for ei, ent in enumerate(d["vertexSet"]):
            t = entity_type(ent)
            if t not in COARSE_BUCKETS:
                row.append(None)
                continue
            h = derive_seed("bench-link", d["title"], ei)
            cls, lo, hi = COARSE_BUCKETS[t][h % len(COARSE_BUCKETS[t])]
            row.append(qid(100 * ((h >> 8) % (LINK_RANGE // 100)) + lo + (h >> 40) % (hi - lo)))
        links[d["title"]] = row
    return links


def bench_docs(work: Path) -> tuple[Path, Path, str]:
    """1000 documents and links into the lean indexes."""
    shared = REPO.parent / "shared" / "data" / "re-docred"
    if (shared / "dev_revised.json").is_file() and (shared / "test_revised.json").is_file():
        docs = json.loads((shared / "dev_revised.json").read_text()) + json.loads((shared / "test_revised.json").read_text())
        source = "Re-DocRED dev + test"
    else:
        from envbench.worlds.sample import make_sample

        make_sample(work / "sample")
        base = json.loads((work / "sample" / "docs" / "train.json").read_text())
        docs = []
        for r in range(1000 // len(base) + 1):
            for d in base:
                docs.append({**d, "title": f"{d['title']} ({r})"})
        source = "sample world train split, repeated"
    docs = docs[:1000]
    work.mkdir(parents=True, exist_ok=True)
    write_json_atomic(work / "docs.json", docs)
    write_json_atomic(work / "links.json", _links_for(docs))
    return work / "docs.json", work / "links.json", source


def sized_docs(base: Path, work: Path, megabytes: int) -> tuple[Path, Path]:
    """The base documents repeated under new titles ("<title> (r)") until the file holds ``megabytes``."""
    from etl.io import dumps_json

    docs_path, links_path = work / f"docs-{megabytes}mb.json", work / f"links-{megabytes}mb.json"
    if docs_path.is_file() and links_path.is_file():
        return docs_path, links_path
    src = json.loads(base.read_text())
    per_copy = len(dumps_json(src))
    copies = max(1, -(-megabytes * 1_000_000 // per_copy))
    docs = [{**d, "title": f"{d['title']} ({r})"} for r in range(copies) for d in src]
    write_json_atomic(docs_path, docs)
    write_json_atomic(links_path, _links_for(docs))
    return docs_path, links_path


_RSS_CHILD = """
import resource, sys, time
from envbench.rename.generate import generate
t = time.perf_counter()
res = generate(sys.argv[1], sys.argv[2], sys.argv[3], links=sys.argv[4], seeds=int(sys.argv[5]), force=True,
               progress=False, allow_training_names=True)
print(res.stats["output_documents"], time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def bench_rss(work: Path, sizes_mb: list[int], seeds: int) -> None:
    """Peak RSS of `generate` per input size, each in a fresh process (see the module docstring)."""
    docs, _, source = bench_docs(work / "generate-docs")
    index = build_lean_index(work / "lean-100000", 100_000)
    print(f"peak RSS of generate --seeds {seeds} on {source} repeated to size, 100k-item index")
    results = []
    for mb in sizes_mb:
        docs_path, links_path = sized_docs(docs, work / "generate-docs", mb)
        out = work / f"generate-rss-{mb}mb"
        proc = subprocess.run([sys.executable, "-c", _RSS_CHILD, str(docs_path), str(index), str(out),
                               str(links_path), str(seeds)], capture_output=True, text=True, cwd=REPO)
        if proc.returncode != 0:
            sys.exit(f"generate on {docs_path} failed:\n{proc.stderr}")
        n_out, secs, rss_kb = proc.stdout.split()
        size = docs_path.stat().st_size / 1e6
        rss = int(rss_kb) / 1024
        results.append((size, rss))
        print(f"  input {size:6.1f} MB: {n_out:>6} output docs in {float(secs):6.1f} s, peak RSS {rss:7.0f} MB")
    if len(results) > 1:
        (s0, r0), (s1, r1) = results[0], results[-1]
        verdict = "sublinear" if r1 / r0 < s1 / s0 else "NOT sublinear"
        print(f"growth: input x{s1 / s0:.1f} -> peak RSS x{r1 / r0:.2f} ({verdict})")
        # what is left of linear growth: the reader holds the whole file while it validates it
        slopes = ", ".join(f"{a:.0f}->{b:.0f} MB: {(rb - ra) / (b - a):.1f}"
                           for (a, ra), (b, rb) in zip(results, results[1:]))
        print(f"  MB of peak RSS per MB of input, between sizes: {slopes}")
    big = [r for s, r in results if s >= 50]
    if big:
        print(f"target: < {RSS_TARGET_MB} MB at 50 MB: {'met' if max(big) < RSS_TARGET_MB else 'MISSED'}")


_AGAINST_CHILD = """
import json, shutil, sys, time
from pathlib import Path
try:
    from envbench.rename.generate import generate
except ImportError:  # the layout before the restructure (5bf86fc and older)
    from envbench.generate import generate
docs, index, out, links, seeds = sys.argv[1:6]
shutil.rmtree(Path(index) / "derived", ignore_errors=True)
times = []
for _ in range(2):
    t, c = time.perf_counter(), time.process_time()  # CPU time of every thread: DuckDB's too
    generate(docs, index, out, links=links, seeds=int(seeds), force=True, progress=False, allow_training_names=True)
    times.append([time.perf_counter() - t, time.process_time() - c])
print(json.dumps(times))
"""
AGAINST_BOUND = 1.2  # issue 13: generation stays within 1.2x of the time of 5bf86fc


def bench_against(work: Path, rev: str, quick: bool, seeds: int, rounds: int) -> None:
    """This tree against commit ``rev``, side by side (see the module docstring)."""
    import statistics

    sha = subprocess.run(["git", "rev-parse", "--short", rev], cwd=REPO, capture_output=True, text=True)
    if sha.returncode != 0:
        sys.exit(f"--against {rev}: not a commit of this repository ({sha.stderr.strip()}); give a commit or tag")
    sha_s = sha.stdout.strip()
    tree = work / f"tree-{sha_s}"
    if not (tree / "envbench").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", sha_s], cwd=REPO, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    size = 100_000 if quick else 1_000_000
    index = build_lean_index(work / f"lean-{size}", size)
    docs, links, source = bench_docs(work / "generate-docs")
    versions = {sha_s: tree, "this tree": REPO}
    copies = {}
    for name, root in versions.items():
        copy = work / f"against-index-{'head' if root == REPO else sha_s}"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(index, copy, ignore=shutil.ignore_patterns("derived"))
        copies[name] = copy
    print(f"generate, {source} x {seeds} seeds, {size:,}-item lean index: {sha_s} against this tree, "
          f"{rounds} rounds, each a fresh process per version (one first run, one later run)")
    first: dict[str, list[float]] = {n: [] for n in versions}
    later: dict[str, list[float]] = {n: [] for n in versions}
    cpu: dict[str, dict[str, list[float]]] = {"first run": {n: [] for n in versions},
                                              "later run": {n: [] for n in versions}}
    for r in range(rounds):
        for name, root in (versions.items() if r % 2 == 0 else reversed(versions.items())):
            proc = subprocess.run([sys.executable, "-c", _AGAINST_CHILD, str(docs), str(copies[name]),
                                   str(work / f"against-out-{'head' if root == REPO else sha_s}"), str(links),
                                   str(seeds)], capture_output=True, text=True, cwd=root,
                                  env={**os.environ, "PYTHONPATH": str(root)})
            if proc.returncode != 0:
                sys.exit(f"generate of {name} failed:\n{proc.stderr[-2000:]}")
            (w0, c0), (w1, c1) = json.loads(proc.stdout.strip().splitlines()[-1])
            first[name].append(w0)
            later[name].append(w1)
            cpu["first run"][name].append(c0)
            cpu["later run"][name].append(c1)
            print(f"  round {r + 1}, {name}: first {w0:.2f} s (cpu {c0:.2f} s), later {w1:.2f} s (cpu {c1:.2f} s)")
    # The bound is judged on each version's fastest run: on a shared machine noise only adds time,
    # so the least-disturbed run is the best estimate of what the code costs; medians are printed too.
    for label, got in (("first run", first), ("later run", later)):
        base, head = min(got[sha_s]), min(got["this tree"])
        verdict = "within" if head / base <= AGAINST_BOUND else "OVER"
        mb, mh = statistics.median(got[sha_s]), statistics.median(got["this tree"])
        print(f"{label}: {sha_s} {base:.2f} s, this tree {head:.2f} s (fastest of {len(got[sha_s])}): "
              f"x{head / base:.2f}, {verdict} the {AGAINST_BOUND}x bound; medians {mb:.2f} and {mh:.2f} s: x{mh / mb:.2f}")
        # CPU time (all threads) is what the code costs without the machine's other tenants: a VM's
        # stolen time and other jobs add wall time, not CPU time
        cb, ch = min(cpu[label][sha_s]), min(cpu[label]["this tree"])
        print(f"{label} cpu: {sha_s} {cb:.2f} s, this tree {ch:.2f} s (least of {len(got[sha_s])}): x{ch / cb:.2f}; "
              f"medians x{statistics.median(cpu[label]['this tree']) / statistics.median(cpu[label][sha_s]):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="100k and 1M items instead of 1M and 10M")
    parser.add_argument("--seeds", type=int, default=None, help="seeds per document (5; 2 with --rss)")
    parser.add_argument("--work", default=str(REPO / "runs" / "bench"), help="cache for indexes and outputs")
    parser.add_argument("--rss", action="store_true", help="measure peak RSS per input size instead (seeds 2)")
    parser.add_argument("--rss-sizes", default="5,50", help="input sizes in MB for --rss")
    parser.add_argument("--against", metavar="REV", help="time this tree against commit REV instead, side by side")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of --against (each version once per round)")
    args = parser.parse_args()
    from envbench.rename.generate import generate

    work = Path(args.work)
    args.seeds = args.seeds or (2 if args.rss else 5)
    if args.against:
        bench_against(work, args.against, args.quick, args.seeds, args.rounds)
        return
    if args.rss:
        bench_rss(work, [int(x) for x in args.rss_sizes.split(",")], args.seeds)
        return
    sizes = [100_000, 1_000_000] if args.quick else [1_000_000, 10_000_000]
    docs, links, source = bench_docs(work / "generate-docs")
    n_docs = len(json.loads(docs.read_text()))
    print(f"documents: {n_docs} ({source}) x {args.seeds} seeds")
    results = []
    for size in sizes:
        t = time.perf_counter()
        index = build_lean_index(work / f"lean-{size}", size)
        built = time.perf_counter() - t
        print(f"index {size:>11,} items (built or reused in {built:.1f} s)")
        shutil.rmtree(index / "derived", ignore_errors=True)  # the first run numbers the candidates
        for label in ("first run", "later run"):
            out = work / f"generate-out-{size}"
            t = time.perf_counter()
            res = generate(docs, index, out, links=links, seeds=args.seeds, force=True, progress=False, allow_training_names=True)
            secs = time.perf_counter() - t
            rate = res.stats["substitution_rate"]["total"]
            print(f"  {label}: generate {secs:6.1f} s, {n_docs / secs:6.1f} source docs/s, "
                  f"{n_docs * args.seeds / secs:7.1f} output docs/s, substitution rate {rate:.3f}")
            print("    stages (s): " + ", ".join(f"{k} {v:.1f}" for k, v in res.timings.items()))
        results.append((size, secs))
    (s0, t0), (s1, t1) = results[0], results[-1]
    print(f"growth (later runs): index x{s1 // s0} -> time x{t1 / t0:.2f}")
    import resource

    print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB "
          "(memory per input size: --rss)")


if __name__ == "__main__":
    main()
