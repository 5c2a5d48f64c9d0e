"""Benchmark `envbench ingest-dump` against a floor measured on the same file and cores.

The floor is what any ingest must pay at least: decompress the dump and ``orjson.loads`` every
line, with as many processes as the ingest uses (the main process decompresses and cuts chunks
exactly as the ingest does). The dump comes from a deterministic generator of entities in the
real JSON format with a realistic, heavy-tailed size distribution (mean about 12 KB per line):
many languages (a third of them in non-Latin scripts), statements with qualifiers and references,
coordinates, quantities, sitelinks.

    python bench/ingest.py --quick          # < 90 s
    python bench/ingest.py --repeat 3 --keep data/bench   # the figures in the README (about 8 min)
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from etl.readers import Chunk, DumpStream, iter_chunks, iter_records  # noqa: E402

LANGS = ["en", "de", "fr", "es", "it", "nl", "pl", "ru", "ja", "zh", "pt", "sv", "uk", "ca", "ar", "fa", "cs",
         "he", "fi", "ko", "hu", "no", "tr", "id", "ro", "vi", "eo", "da", "sr", "bg", "el", "sk", "lt", "et",
         "sl", "hr", "eu", "gl", "ms", "hy", "ka", "be", "az", "kk", "uz", "ta", "hi", "bn", "th", "la", "cy",
         "ga", "is", "lv", "mk", "sq", "bs", "af", "sw", "tl", "ur", "mr", "te", "ml", "kn", "gu", "pa", "ne",
         "si", "km", "lo", "my", "mn", "ky", "tg", "tt", "ba", "cv", "ce", "os", "br", "oc", "an", "ast", "fy",
         "lb", "li", "nds", "vec", "pms", "lmo", "scn", "nap", "co", "wa", "frp", "sc", "rm", "fur", "lij", "mul"]
WORDS = ("alpha beta gamma delta river mount saint north south castle church school station bridge lake "
         "valley island county district village town city province state republic kingdom empire order "
         "society party club team company university museum library theatre hospital airport railway "
         "novel film album song painting opera symphony poem journal magazine newspaper award prize").split()
ITEM_PROPS = ["P31", "P279", "P17", "P131", "P27", "P106", "P21", "P19", "P20", "P69", "P108", "P463", "P166",
              "P50", "P57", "P161", "P136", "P495", "P407", "P361", "P527", "P150", "P47", "P30", "P36", "P1412"]
STRING_PROPS = ["P214", "P227", "P244", "P268", "P269", "P213", "P349", "P646", "P2671", "P1417", "P7859"]


# Labels in these languages are written in their script (real dumps are full of multi-byte UTF-8):
# each ASCII letter of a word maps into the script's block.
SCRIPTS = {**dict.fromkeys(["ru", "uk", "bg", "be", "kk", "sr", "mk", "ky", "tg", "tt", "ba", "cv", "ce", "os",
                            "mn"], (0x430, 32)),
           **dict.fromkeys(["ja", "zh"], (0x4E00, 2000)), **dict.fromkeys(["ar", "fa", "ur"], (0x627, 26)),
           "el": (0x3B1, 25), "he": (0x5D0, 27), **dict.fromkeys(["hi", "mr", "ne"], (0x915, 37)),
           "th": (0xE01, 46), "ka": (0x10D0, 33), "hy": (0x561, 38), "ko": (0xAC00, 2000),
           "ta": (0xB95, 20), "bn": (0x995, 37)}


def _words(rng: random.Random, k: int, lang: str = "en") -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(k)).title()
    if lang not in SCRIPTS:
        return text
    base, span = SCRIPTS[lang]
    return "".join(chr(base + (ord(ch.lower()) * 7 + i) % span) if ch.isalpha() else ch for i, ch in enumerate(text))


POOL = 512


@functools.cache
def _pool(lang: str, k: int) -> tuple[str, ...]:
    """POOL texts of ``k`` words in ``lang``'s script, drawn once (generating is then mostly choosing)."""
    rng = random.Random(f"{lang} {k}")  # str seeds hash with SHA-512: the same pool in every process
    return tuple(_words(rng, k, lang) for _ in range(POOL))


# English names as dumps hold them: most are words of letters, the rest carry digits, initials,
# brackets, commas, hyphens, apostrophes, colons or letters outside ASCII, which the ingest's
# name_tokens step tokenises with spaCy (real labels: "Apollo 11", "St. Louis", "Paris (Texas)").
ACCENTED = str.maketrans("aeiouc", "áèïõüç")
EN_FORMS = (
    lambda w, r: f"{w()} {w()} {r.randint(1, 3000)}",
    lambda w, r: f"{r.randint(1500, 2025)} {w()} {w()}",
    lambda w, r: f"{w()} ({w()})",
    lambda w, r: f"St. {w()}",
    lambda w, r: f"{w()}-{w()}",
    lambda w, r: f"{w()}, {w()}",
    lambda w, r: f"{w()}'s {w()}",
    lambda w, r: f"{r.choice('ABCDEFGHJKLMNPRSTW')}. {w()} {w()}",
    lambda w, r: f"{w()} {w().translate(ACCENTED)}",
    lambda w, r: f"On the {w().lower()} of {w().lower()}: a {w().lower()} study",
    lambda w, r: f"{w()} {r.choice('ABCDEFGHJKLMNPRSTW')}-{r.randint(1, 99999)}",
)
EN_PLAIN = 0.7


def _en_name(rng: random.Random) -> str:
    if rng.random() < EN_PLAIN:
        return rng.choice(_pool("en", 2))
    return rng.choice(EN_FORMS)(lambda: rng.choice(WORDS).title(), rng)


def _coordinate_snak(rng: random.Random) -> dict:
    # Wikidata's usual arc-second precision, 0.0002777777777777778, has 19 significant digits.
    return {"snaktype": "value", "property": "P625", "hash": f"{rng.getrandbits(160):040x}",
            "datavalue": {"value": {"latitude": rng.uniform(-90, 90), "longitude": rng.uniform(-180, 180),
                                    "altitude": None, "precision": 1 / 3600,
                                    "globe": "http://www.wikidata.org/entity/Q2"}, "type": "globecoordinate"},
            "datatype": "globe-coordinate"}


def _quantity_snak(rng: random.Random) -> dict:
    return {"snaktype": "value", "property": "P1082", "hash": f"{rng.getrandbits(160):040x}",
            "datavalue": {"value": {"amount": f"+{rng.randint(10, 10**8)}", "unit": "1"}, "type": "quantity"},
            "datatype": "quantity"}


def _item_snak(prop: str, q: int) -> dict:
    return {"snaktype": "value", "property": prop, "hash": f"{q * 2654435761 % 2**160:040x}",
            "datavalue": {"value": {"entity-type": "item", "numeric-id": q, "id": f"Q{q}"},
                          "type": "wikibase-entityid"}, "datatype": "wikibase-item"}


def _time_snak(prop: str, rng: random.Random) -> dict:
    return {"snaktype": "value", "property": prop, "hash": f"{rng.getrandbits(160):040x}",
            "datavalue": {"value": {"time": f"+{rng.randint(1000, 2024)}-01-01T00:00:00Z", "timezone": 0,
                                    "before": 0, "after": 0, "precision": 9,
                                    "calendarmodel": "http://www.wikidata.org/entity/Q1985727"},
                          "type": "time"}, "datatype": "time"}


def _reference(rng: random.Random) -> dict:
    return {"hash": f"{rng.getrandbits(160):040x}",
            "snaks": {"P248": [_item_snak("P248", rng.randint(1, 10**8))],
                      "P813": [_time_snak("P813", rng)],
                      "P854": [{"snaktype": "value", "property": "P854", "datavalue": {
                          "value": f"https://example.org/{rng.getrandbits(48):x}/{_words(rng, 2)}", "type": "string"},
                          "datatype": "url"}]},
            "snaks-order": ["P248", "P813", "P854"]}


@functools.cache
def _references() -> tuple[orjson.Fragment, ...]:
    """POOL references, serialised once."""
    rng = random.Random("references")
    return tuple(orjson.Fragment(orjson.dumps(_reference(rng))) for _ in range(POOL))


def _statement(eid: str, prop: str, snak: dict, rng: random.Random, rich: float) -> dict:
    st: dict = {"mainsnak": snak, "type": "statement", "id": f"{eid}${rng.getrandbits(128):032X}",
                "rank": "deprecated" if rng.random() < 0.01 else ("preferred" if rng.random() < 0.05 else "normal")}
    if rng.random() < 0.3 * rich:
        st["qualifiers"] = {"P580": [_time_snak("P580", rng)], "P582": [_time_snak("P582", rng)]}
        st["qualifiers-order"] = ["P580", "P582"]
    if rng.random() < 0.8:
        st["references"] = [rng.choice(_references()) for _ in range(1 + int(rng.random() * min(rich, 3.0)))]
    return st


def make_entity(n: int, rng: random.Random) -> dict:
    """One item; ``size`` is log-normal so a few entities are huge, like countries and famous people."""
    size = min(40.0, rng.lognormvariate(-0.1, 0.85))  # mean ~1.3, heavy tail
    eid = f"Q{n}"
    n_lang = max(1, min(len(LANGS), int(6 * size + rng.random() * 4)))
    langs = LANGS[:1] + rng.sample(LANGS[1:], n_lang - 1)
    name = _en_name(rng)
    labels = {lang: {"language": lang, "value": name if lang == "en" or (lang not in SCRIPTS and rng.random() < 0.6)
                     else rng.choice(_pool(lang, 2))} for lang in langs}
    descriptions = {lang: {"language": lang, "value": rng.choice(_pool(lang, 5))} for lang in langs
                    if rng.random() < 0.7}
    aliases = {lang: [{"language": lang, "value": _en_name(rng) if lang == "en" else rng.choice(_pool(lang, 2))}
                      for _ in range(rng.randint(1, 3))] for lang in langs if rng.random() < 0.3}
    claims: dict[str, list] = {}
    n_claims = max(2, int(3 * size))
    for prop in ["P31"] + rng.sample(ITEM_PROPS[1:], min(len(ITEM_PROPS) - 1, n_claims // 2)):
        k = 1 if prop == "P31" else max(1, int(rng.random() * size))
        claims[prop] = [_statement(eid, prop, _item_snak(prop, rng.randint(1, 10**8)), rng, size) for _ in range(k)]
    for prop in rng.sample(STRING_PROPS, min(len(STRING_PROPS), n_claims // 3 + 1)):
        snak = {"snaktype": "value", "property": prop, "hash": f"{rng.getrandbits(160):040x}",
                "datavalue": {"value": f"{rng.getrandbits(40):d}", "type": "string"}, "datatype": "external-id"}
        claims[prop] = [_statement(eid, prop, snak, rng, size)]
    claims["P569"] = [_statement(eid, "P569", _time_snak("P569", rng), rng, size)]
    if rng.random() < 0.25:
        claims["P625"] = [_statement(eid, "P625", _coordinate_snak(rng), rng, size)]
    if rng.random() < 0.1:
        claims["P1082"] = [_statement(eid, "P1082", _quantity_snak(rng), rng, size)]
    elif rng.random() < 0.05:
        claims["P1082"] = [_statement(eid, "P1082", {"snaktype": "novalue", "property": "P1082", "hash": "0" * 40,
                                                     "datatype": "quantity"}, rng, size)]
    sitelinks = {f"{lang}wiki": {"site": f"{lang}wiki", "title": labels[lang]["value"], "badges": []}
                 for lang in langs if lang != "mul" and rng.random() < 0.5}
    return {"type": "item", "id": eid, "labels": labels, "descriptions": descriptions, "aliases": aliases,
            "claims": claims, "sitelinks": sitelinks, "pageid": n + 100, "ns": 0, "title": eid,
            "lastrevid": rng.getrandbits(31), "modified": "2025-01-01T00:00:00Z"}


GENERATE_SLICE = 10_000


def _generate_slice(args: tuple[int, int, int, int]) -> tuple[bytes, int]:
    """One gzip member holding the lines of entities ``first + 1 .. first + n`` (the dump's framing
    lines where they fall), and its decompressed size: a slice depends only on its numbers."""
    from isal import igzip

    seed, first, n, entities = args
    rng = random.Random(f"{seed} {first}")
    lines = [b"[\n"] if first == 0 else []
    for i in range(first, first + n):
        lines.append(orjson.dumps(make_entity(i + 1, rng)) + (b",\n" if i + 1 < entities else b"\n"))
    if first + n == entities:
        lines.append(b"]\n")
    data = b"".join(lines)
    return igzip.compress(data, compresslevel=1), len(data)


def generate(path: Path, entities: int, seed: int = 0, procs: int | None = None) -> int:
    """Write a gzip dump of ``entities`` items (slices generated on ``procs`` processes, one gzip
    member each, the same bytes for any number); return the decompressed size."""
    import multiprocessing

    slices = [(seed, first, min(GENERATE_SLICE, entities - first), entities)
              for first in range(0, entities, GENERATE_SLICE)]
    total = 0
    tmp = path.with_suffix(".part")
    with open(tmp, "wb") as fh, multiprocessing.get_context("fork").Pool(procs or os.cpu_count() or 1) as pool:
        for member, size in pool.imap(_generate_slice, slices):
            fh.write(member)
            total += size
    tmp.rename(path)
    return total


# ----------------------------------------------------------------------------- floor


def _loads_chunk(chunk) -> int:
    """orjson.loads of every record of a chunk, reading it as the ingest worker does (a ring slot
    mapped, not copied; each record a memoryview of it)."""
    data = chunk.view()
    if isinstance(data, bytes):  # not spooled (one process)
        n = 0
        for _, _, rec in iter_records(Chunk(chunk.index, chunk.offset, data)):
            orjson.loads(rec)
            n += 1
        return n
    n, start, end = 0, 0, len(data)
    view = memoryview(data)
    try:
        while start < end:
            nl = data.find(b"\n", start)
            nl = end if nl < 0 else nl
            stop = nl - 1 if nl > start and data[nl - 1] == 0x2C else nl  # the usual trailing comma
            if stop - start > 1:  # not "[" or "]" or blank
                orjson.loads(view[start:stop])
                n += 1
            start = nl + 1
    finally:
        view.release()
        data.close()
    return n


def floor(path: Path, workers: int, chunk_bytes: int) -> tuple[float, int]:
    """Seconds to decompress + orjson.loads every line with ``workers`` processes, and the count."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from wikidata_index.ingest import make_spool

    t = time.perf_counter()
    stream = DumpStream(path, digest=False)  # the ingest hashes its input; the floor need not
    n = 0
    spool = make_spool(Path(tempfile.mkdtemp()), workers)
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        pending = []
        # The same transport as the ingest: at most 2 * workers chunks unfinished, so that + 1 slots.
        for chunk in iter_chunks(stream, chunk_bytes=chunk_bytes, spool=spool, spool_slots=2 * workers + 1):
            pending.append(pool.submit(_loads_chunk, chunk))
            if len(pending) > 2 * workers:
                n += pending.pop(0).result()
        n += sum(f.result() for f in pending)
    stream.close()
    if spool:
        shutil.rmtree(spool, ignore_errors=True)
    return time.perf_counter() - t, n


def _best_cpu(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def per_core_rates(path: Path, chunk_bytes: int) -> dict[str, float]:
    """CPU-time MB/s of each stage on one chunk, in this process (best of 3: least disturbed by
    other load on the machine): decompression, orjson.loads, and the ingest worker (extraction +
    staging Parquet) with the C and the Python extractor, plus the extraction alone: C,
    pysimdjson and orjson."""
    from wikidata_index.extract import EntityParser, Rows, extract_entity
    from wikidata_index.ingest import fast_extractor, process_chunk
    from wikidata_index.names import fold

    stream = DumpStream(path)
    chunk = next(iter_chunks(stream, chunk_bytes=chunk_bytes))
    stream.close()
    mb = len(chunk.data) / 1e6
    out = Path(tempfile.mkdtemp())

    total_mb = [0.0]

    def decompress(digest: bool) -> None:  # the whole file: one 32 MB chunk is too short to time
        s = DumpStream(path, digest=digest)
        pos = 0
        while block := s.read(1 << 23, pos):
            pos += len(block)
        if digest:
            s.finish()
        s.close()
        total_mb[0] = pos / 1e6

    def extract(simd: bool) -> None:
        parser, rows, stats = EntityParser(simd), Rows(), {}
        for _, _, rec in iter_records(chunk):
            extract_entity(parser.parse(rec), ["en"], rows, stats)

    rates = {
        "decompress": (lambda t: total_mb[0] / t)(_best_cpu(lambda: decompress(False), repeat=2)),
        "decompress + sha256": (lambda t: total_mb[0] / t)(_best_cpu(lambda: decompress(True), repeat=2)),
        "orjson.loads": mb / _best_cpu(lambda: _loads_chunk(chunk)),
        "ingest worker, python": mb / _best_cpu(lambda: process_chunk(chunk, out, languages=("en",),
                                                                        extractor="python")),
        "extract, pysimdjson": mb / _best_cpu(lambda: extract(True)),
        "extract, orjson": mb / _best_cpu(lambda: extract(False)),
    }
    fx = fast_extractor()
    if fx is not None:
        rates["ingest worker, c"] = mb / _best_cpu(lambda: process_chunk(chunk, out, languages=("en",), extractor="c"))
        rates["extract, c"] = mb / _best_cpu(lambda: fx.extract_chunk(chunk.data, ("en",), fold))
    shutil.rmtree(out, ignore_errors=True)
    return rates


# ----------------------------------------------------------------------------- ingest in a child


_CHILD = """
import json, resource, sys, time
sys.path.insert(0, "bench")
t = time.perf_counter()
path, mode, workers, chunk_bytes = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
if mode == "floor":
    from ingest import floor
    _, n = floor(path, workers, chunk_bytes)
    r = {"records": n, "timings": {}}
elif mode == "qwikidata":
    from ingest import qwikidata_names
    r = {"records": qwikidata_names(path), "timings": {}}
else:
    from wikidata_index.ingest import ingest_dump
    tokenizer = None
    if mode == "tokens":
        from envbench.core.text import name_tokenizer  # as `envbench ingest-dump` passes it
        tokenizer = name_tokenizer()
    res = ingest_dump(path, sys.argv[5], workers=workers, progress=False, force=True, chunk_bytes=chunk_bytes,
                      extractor=sys.argv[6], tokenizer=tokenizer)
    r = {"records": res.stats["records"], "timings": res.manifest["timings"], "rows": res.rows}
dt = time.perf_counter() - t
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps(r | {"seconds": dt, "cpu_s": me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime,
                      "main_rss_mb": me.ru_maxrss / 1024, "worker_rss_mb": kids.ru_maxrss / 1024}))
"""


def qwikidata_names(path: str) -> int:
    """What a user of qwikidata writes to read a dump's English names: its dump reader (gzip and
    json.loads, one process) and its item class; the number of entities."""
    from qwikidata.entity import WikidataItem
    from qwikidata.json_dump import WikidataJsonDump

    n = names = 0
    for entity in WikidataJsonDump(str(path)):
        n += 1
        if entity.get("type") == "item":
            item = WikidataItem(entity)
            names += bool(item.get_label("en")) + len(item.get_aliases("en"))
    return n


def run_child(path: Path, mode: str, workers: int, chunk_bytes: int, out: Path | None = None,
              extractor: str = "auto") -> dict:
    """Run one measurement in a fresh process: ``mode`` is floor, qwikidata, tokens (ingest-dump as the
    CLI runs it) or plain (--no-name-tokens); wall, CPU and peak RSS."""
    repo = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(repo))
    argv = [sys.executable, "-c", _CHILD, str(path), mode, str(workers), str(chunk_bytes), str(out), extractor]
    res = subprocess.run(cwd=repo, args=argv, env=env, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{res.stderr}")
    return orjson.loads(res.stdout.strip().splitlines()[-1])


def ingest(path: Path, out: Path | str, workers: int, chunk_bytes: int, extractor: str = "auto") -> dict:
    """The ingest with name tokens, as `envbench ingest-dump` runs it (or, with out="FLOOR", the floor)."""
    if out == "FLOOR":
        return run_child(path, "floor", workers, chunk_bytes)
    return run_child(path, "tokens", workers, chunk_bytes, Path(out), extractor)


def bz2_compare(path: Path, dumps_dir: Path, tmp: Path, workers: int, chunk_bytes: int, repeat: int) -> None:
    """Single-core bz2 decompression (Python's bz2, i.e. libbz2) against the ingest from the same
    .json.bz2 through lbzip2, alternated ``repeat`` times; the best time of each is compared."""
    if not shutil.which("lbzip2"):
        print("bz2: lbzip2 not on PATH; skipped (the ingest falls back to single-core bz2)")
        return
    import bz2

    bz = dumps_dir / path.name.replace(".json.gz", ".json.bz2")
    if not bz.exists():  # lbzip2 -9 writes a standard bzip2 stream, on all cores
        with open(bz.with_suffix(".tmp"), "wb") as out:
            unzip = subprocess.Popen(["gzip", "-dc", str(path)], stdout=subprocess.PIPE)
            subprocess.run(["lbzip2", "-9", "-c"], stdin=unzip.stdout, stdout=out, check=True)
            unzip.wait()
        bz.with_suffix(".tmp").rename(bz)
    single, ingested = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        with bz2.open(bz) as fh:
            while fh.read(1 << 24):
                pass
        single.append(time.perf_counter() - t)
        ingested.append(ingest(bz, tmp / "ix-bz2", workers, chunk_bytes)["seconds"])
    print(f"bz2 ({bz.stat().st_size / 1e6:,.0f} MB .bz2), best of {repeat}: single-core bz2 decompression "
          f"{min(single):.2f}s (runs {', '.join(f'{x:.1f}' for x in single)}); ingest via lbzip2 {min(ingested):.2f}s "
          f"(runs {', '.join(f'{x:.1f}' for x in ingested)}): {min(single) / min(ingested):.2f}x")


MODES = {"qwikidata": "qwikidata (gzip + json.loads + WikidataItem, 1 proc)",
         "floor": "perfect split (isal + orjson.loads, {w} proc)",
         "tokens": "envbench ingest-dump ({w} proc)",
         "plain": "envbench ingest-dump --no-name-tokens ({w} proc)"}
FULL_DUMP_ENTITIES, FULL_DUMP_BYTES = 110e6, 1.7e12


def measure(path: Path, n: int, mb: float, args: argparse.Namespace, tmp: Path) -> dict[str, dict]:
    """Every mode ``args.repeat`` times, alternating (a slow spell of the shared machine hits all of
    them), qwikidata only in the first round with --qwikidata-once; the fastest run of each is printed."""
    runs: dict[str, list[dict]] = {m: [] for m in MODES}
    modes = [m for m in MODES if m != "qwikidata" or args.qwikidata]
    for r in range(args.repeat):
        for mode in modes:
            if mode == "qwikidata" and r and args.qwikidata_once:
                continue
            out = tmp / f"ix-{n}-{mode}" if mode in ("tokens", "plain") else None
            runs[mode].append(run_child(path, mode, args.workers, args.chunk_mb << 20, out))
            load = os.getloadavg()[0]
            runs[mode][-1]["load"] = load
    best = {m: min(rs, key=lambda r: r["seconds"]) for m, rs in runs.items() if rs}
    q = best.get("qwikidata")
    for mode, r in best.items():
        t = r["timings"]
        stages = (f"  parse {t['parse_s']:.2f}s, finalize {t['finalize_s']:.2f}s, tokenise {t['name_tokens_s']:.2f}s"
                  if t else "")
        ratio = ""
        if q is not None and mode != "qwikidata":
            rounds = ", ".join(f"{a['seconds'] / b['seconds']:.2f}x" for a, b in zip(runs["qwikidata"], runs[mode]))
            ratio = (f"  {q['seconds'] / r['seconds']:5.2f}x qwikidata wall, {q['cpu_s'] / r['cpu_s']:5.2f}x CPU"
                     f" (rounds {rounds})")
        print(f"{MODES[mode].format(w=args.workers):52s} {r['seconds']:7.2f}s {mb / r['seconds']:7.1f} MB/s "
              f"cpu {r['cpu_s']:7.2f}s  RSS main {r['main_rss_mb']:4.0f} MB, worker {r['worker_rss_mb']:4.0f} MB"
              f"{ratio}{stages}  (runs {_listed(runs[mode], 'seconds')}; load {_listed(runs[mode], 'load')})")
    if "tokens" in best:
        rows = best["tokens"]["rows"]
        print(f"  name_tokens rows {rows['name_tokens']:,} of {rows['names']:,} names rows")
    return best


def _listed(runs: list[dict], key: str) -> str:
    return ", ".join(f"{r[key]:.1f}" for r in runs)


def project(best: dict[str, dict], n: int, workers: int) -> None:
    """The full dump's time, stage by stage, scaled from the run at ``n`` entities: parse by the bytes
    (the same entity shape), finalize and tokenise by the entities (their sorts grow a little faster;
    the distinct names that need spaCy, slower)."""
    t = best["tokens"]["timings"]
    scale = FULL_DUMP_ENTITIES / n
    parse, final, tok = t["parse_s"] * scale, t["finalize_s"] * scale, t["name_tokens_s"] * scale
    print(f"\nprojected full dump (~{FULL_DUMP_ENTITIES / 1e6:.0f}M entities) from {n:,} at {workers} workers: "
          f"parse {parse / 3600:.2f} h, finalize {final / 3600:.2f} h, tokenise {tok / 60:.1f} min; "
          f"total {(parse + final + tok) / 3600:.2f} h")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="20,000 and 40,000 entities, one round (about 3 min)")
    ap.add_argument("--sizes", default="100000,1000000",
                    help="entities of each dump, comma-separated (100,000: 1.27 GB of JSON; 1,000,000: 12.7 GB)")
    ap.add_argument("--workers", type=int, default=2, help="processes for the split and the ingest")
    ap.add_argument("--chunk-mb", type=int, default=32, help="chunk size for floor and ingest (MB; the ingest-dump default)")
    ap.add_argument("--keep", type=Path, default=None, help="folder to keep the generated dumps in")
    ap.add_argument("--repeat", type=int, default=2, help="rounds per size (the fastest run of each mode counts)")
    ap.add_argument("--no-qwikidata", dest="qwikidata", action="store_false",
                    help="leave qwikidata out (it is not installed: pip install qwikidata mypy-extensions)")
    ap.add_argument("--qwikidata-once", action="store_true", help="qwikidata in the first round only (it is slow)")
    ap.add_argument("--per-core", action="store_true", help="also the CPU rate of each stage, one process")
    ap.add_argument("--bz2", action="store_true", help="also the ingest from .json.bz2 against single-core bz2")
    args = ap.parse_args()
    if args.qwikidata and importlib.util.find_spec("qwikidata") is None:
        raise SystemExit("qwikidata is not installed: pip install qwikidata mypy-extensions, or pass --no-qwikidata")
    sizes = [20000, 40000] if args.quick else [int(x) for x in args.sizes.split(",")]
    if args.quick:
        args.repeat = 1
    tmp = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    dumps_dir = args.keep or tmp
    dumps_dir.mkdir(parents=True, exist_ok=True)
    try:
        print(f"workers {args.workers}, cores {os.cpu_count()}, load {os.getloadavg()[0]:.1f}; sizes {sizes} entities")
        best: dict[int, dict[str, dict]] = {}
        for n in sizes:
            path = dumps_dir / f"dump-v2-{n}.json.gz"
            t = time.perf_counter()
            dec = generate(path, n) if not path.exists() else _decompressed_size(path)
            gen_s = time.perf_counter() - t
            mb = dec / 1e6
            print(f"\n== {n:,} entities: {mb:,.0f} MB JSON ({dec / n / 1e3:.1f} KB/line), "
                  f"{path.stat().st_size / 1e6:,.0f} MB .gz (generated or sized in {gen_s:.0f}s)")
            best[n] = measure(path, n, mb, args, tmp)
        if len(sizes) > 1:
            (n1, b1), (n2, b2) = sorted(best.items())[:1] + sorted(best.items())[-1:]
            for mode in ("tokens", "plain"):
                d = b2[mode]["seconds"] - b1[mode]["seconds"]
                if "qwikidata" in b1 and d > 0:  # the fixed costs (process start, imports, DuckDB) cancel out
                    dq = b2["qwikidata"]["seconds"] - b1["qwikidata"]["seconds"]
                    print(f"marginal, {n1:,} -> {n2:,} entities, {mode}: {dq / d:.2f}x qwikidata")
        n_big = max(sizes)
        project(best[n_big], n_big, args.workers)
        path = dumps_dir / f"dump-v2-{n_big}.json.gz"
        if args.per_core:
            rates = per_core_rates(path, args.chunk_mb << 20)
            print("\nper-core CPU rates, one process (MB of JSON per CPU-second):")
            for name, rate in rates.items():
                print(f"  {name:22s} {rate:7.0f} MB/s")
        if args.bz2:
            bz2_compare(path, dumps_dir, tmp, args.workers, args.chunk_mb << 20, args.repeat)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _decompressed_size(path: Path) -> int:
    from isal import igzip

    n = 0
    with igzip.open(path) as fh:
        while block := fh.read(1 << 24):
            n += len(block)
    return n


if __name__ == "__main__":
    main()

