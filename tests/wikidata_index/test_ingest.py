"""ingest_dump end to end: real samples, determinism, bad input, resume after SIGKILL."""

from __future__ import annotations

import errno
import gzip
import hashlib
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from etl.io import InputError
from tests.conftest import REPO, fast_extractor_or_skip, shared_path
from wikidata_index.index import WikidataIndex
from wikidata_index.ingest import ingest_dump
from wikidata_index.schema import TABLES

SAMPLES = [
    ("syvb-wikidata", "Q45.json"),
    ("wikibase-sdk", "Q2112.json"),
    ("wikibase-sdk", "Q4132785.json"),
    ("dahlia-wikidata", "Q1299.json"),
    ("entitybase-backend", "P17.json"),
    ("wikidata-toolkit", "wbgetentites-Oliver-Kahn.json"),
    ("wikidata-toolkit", "wbgetentities-Q1.json"),
    ("wikidata-toolkit", "JsonDeserializer-item.json"),
    ("wikidata-toolkit", "JsonDeserializer-property.json"),
    ("wikidata-toolkit", "JsonDeserializer-lexeme.json"),
    ("wikidata-toolkit", "JsonDeserializer-mediainfo.json"),
    ("syvb-wikidata", "Q42.json"),
]


def _sample_entities() -> list[dict]:
    out = []
    for parts in SAMPLES:
        doc = orjson.loads(shared_path("wikidata-samples", *parts).read_bytes())
        out += list(doc["entities"].values()) if "entities" in doc else [doc]
    return out


def _dump_bytes(records: list[dict | bytes]) -> bytes:
    lines = [r if isinstance(r, bytes) else orjson.dumps(r) for r in records]
    return b"[\n" + b",\n".join(lines) + b"\n]\n"


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(gzip.compress(data, mtime=0) if path.suffix == ".gz" else data)
    return path


def _item(n: int, p31: list[int], p279: list[int] = (), label: str | None = None, aliases: list[str] = ()) -> dict:
    def st(pid: str, q: int) -> dict:
        return {"mainsnak": {"snaktype": "value", "property": pid, "datatype": "wikibase-item",
                             "datavalue": {"type": "wikibase-entityid",
                                           "value": {"entity-type": "item", "numeric-id": q, "id": f"Q{q}"}}},
                "type": "statement", "rank": "normal"}

    ent = {"type": "item", "id": f"Q{n}", "labels": {}, "aliases": {}, "descriptions": {}, "sitelinks": {},
           "claims": {"P31": [st("P31", q) for q in p31], "P279": [st("P279", q) for q in p279]}}
    if label:
        ent["labels"]["en"] = {"language": "en", "value": label}
    if aliases:
        ent["aliases"]["en"] = [{"language": "en", "value": a} for a in aliases]
    return ent


def _synthetic(n: int = 120) -> list[dict]:
    return [_item(i, [(i % 7) + 1], [(i % 3) + 1] if i < 10 else [], f"Item {i}", [f"I{i}", f"Ítem {i}"])
            for i in range(1, n + 1)]


def _table_bytes(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
            for t in TABLES for p in sorted((out / t).glob("*.parquet"))}


def test_real_samples_rows_and_manifest(tmp_path: Path) -> None:
    ents = _sample_entities()
    dump = _write(tmp_path / "samples.json.gz", _dump_bytes(ents))
    res = ingest_dump(dump, tmp_path / "ix", workers=2, progress=False, chunk_lines=3)
    kept = [e for e in ents if e["type"] in ("item", "property")]
    # Q42 twice? no: one Q42 sample only; every kept entity once
    assert res.rows["entities"] == len({e["id"] for e in kept})
    assert res.stats["skipped_lexeme"] == 1 and res.stats["skipped_mediainfo"] == 1
    assert res.stats["malformed"] == 0
    p31 = {(e["id"], s["mainsnak"]["datavalue"]["value"].get("id"), s["rank"])
           for e in kept for s in e.get("claims", {}).get("P31", []) if s["mainsnak"]["snaktype"] == "value"}
    assert res.rows["types"] == len(p31)
    n_alias = sum(len({a["value"] for a in e.get("aliases", {}).get("en", [])}
                      - {e.get("labels", {}).get("en", {}).get("value")}) for e in kept)
    n_label = sum("en" in e.get("labels", {}) for e in kept)
    assert res.rows["names"] == n_alias + n_label
    assert res.rows["demonyms"] == 1  # Q45's "Portuguese"@en, the samples' only English demonym
    man = orjson.loads((tmp_path / "ix" / "manifest.json").read_bytes())
    assert man["inputs"][0]["sha256"] == hashlib.sha256(dump.read_bytes()).hexdigest()
    assert man["inputs"][0]["bytes"] == dump.stat().st_size
    assert man["rows"] == res.rows and man["parameters"]["languages"] == ["en"]
    assert {"parse_s", "finalize_s", "total_s"} <= set(man["timings"])
    assert not list((tmp_path / "ix").glob(".staging-*"))
    import duckdb

    con = duckdb.connect(str(tmp_path / "ix" / "index.duckdb"), read_only=True)
    assert {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in TABLES} == res.rows
    con.close()
    with WikidataIndex(tmp_path / "ix") as ix:
        assert ix.names("Q42")[0] == "Douglas Adams"
        assert ix.types("Q45") == sorted({c for i, c, r in p31 if i == "Q45" and r != "deprecated"})
        # popularity counts statements with Q5 as object among the samples
        assert ix.popularity("Q42") >= 50
        assert ix.demonyms("Q45") == ["Portuguese"] and ix.demonyms("Q42") == [] and ix.has("demonyms")


def test_single_document_shapes_ingest(tmp_path: Path) -> None:
    for i, parts in enumerate([("wikibase-sdk", "Q2112.json"), ("syvb-wikidata", "Q42.json"),
                               ("wikidata-toolkit", "mock-dump-for-long-testing.json")]):
        res = ingest_dump(shared_path("wikidata-samples", *parts), tmp_path / f"ix{i}", workers=1, progress=False)
        assert res.rows["entities"] >= 1
    lines = shared_path("wikidata-samples", "wikidata-toolkit", "mock-dump-for-long-testing.json").read_bytes()
    ents = [orjson.loads(x.rstrip(b",")) for x in lines.splitlines()[1:-1]]
    p31 = {(e["id"], s["mainsnak"]["datavalue"]["value"]["numeric-id"])
           for e in ents for s in e["claims"].get("P31", [])}
    assert res.rows["entities"] == len(ents) == 101 and res.rows["types"] == len(p31)


def test_output_is_byte_identical_across_workers_and_chunking(tmp_path: Path) -> None:
    dump = _write(tmp_path / "d.json.gz", _dump_bytes(_synthetic() + _sample_entities()[:3]))
    ingest_dump(dump, tmp_path / "a", workers=1, progress=False, chunk_lines=1000)
    ingest_dump(dump, tmp_path / "b", workers=2, progress=False, chunk_lines=7)
    a, b = _table_bytes(tmp_path / "a"), _table_bytes(tmp_path / "b")
    assert a == b and len(a) == len(TABLES)
    t = pq.read_table(tmp_path / "a" / "entities")
    assert t.column("id").to_pylist() == sorted(t.column("id").to_pylist())


def test_popularity_counts_subject_and_object_statements(tmp_path: Path) -> None:
    ents = [_item(1, [2, 3]), _item(2, [3]), _item(3, [3])]  # Q3 P31 Q3: one statement
    ents[0]["claims"]["P31"].append(dict(ents[0]["claims"]["P31"][0], rank="deprecated"))
    dump = _write(tmp_path / "p.json", _dump_bytes(ents))
    ingest_dump(dump, tmp_path / "ix", workers=1, progress=False)
    with WikidataIndex(tmp_path / "ix") as ix:
        assert [ix.popularity(q) for q in ("Q1", "Q2", "Q3", "Q99")] == [2, 2, 3, 0]


def test_malformed_lines_are_counted_and_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    recs: list = _synthetic(5)
    recs.insert(2, b'{"type": "item", "id": "Q77", "labels": {')  # line 4 of the file
    recs.append(b"not json at all")
    dump = _write(tmp_path / "m.json", _dump_bytes(recs))
    with caplog.at_level(logging.WARNING, logger="wikidata_index.ingest"):
        res = ingest_dump(dump, tmp_path / "ix", workers=1, progress=False, chunk_lines=2)
    assert res.stats["malformed"] == 2 and res.stats["malformed_invalid_json"] == 2
    assert res.rows["entities"] == 5
    assert [e["line"] for e in res.errors] == [4, 8]
    assert "m.json: line 4 (byte" in caplog.text and '{"type": "item", "id": "Q77"' in caplog.text


def test_max_errors_stops_with_clear_error(tmp_path: Path) -> None:
    recs: list = _synthetic(3) + [b"{bad"] * 3
    dump = _write(tmp_path / "m.json", _dump_bytes(recs))
    with pytest.raises(InputError) as exc:
        ingest_dump(dump, tmp_path / "ix", workers=1, progress=False, max_errors=2, chunk_lines=1)
    assert str(exc.value) == (
        f"{dump}: 3 malformed entities, more than --max-errors 2 (first at line 5: invalid JSON); "
        "check that this is a Wikidata JSON dump, or raise --max-errors"
    )
    assert not (tmp_path / "ix").exists()  # finished chunks of refused input are not kept (issue 17 #24)


def test_an_interrupted_run_keeps_its_finished_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C (or a kill) is not the input's fault: the stage stays, and the rerun resumes from it."""
    import wikidata_index.ingest as ing

    dump = _write(tmp_path / "d.json", _dump_bytes(_synthetic(30)))

    def interrupted(*a, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(ing, "_finalize", interrupted)
    with pytest.raises(KeyboardInterrupt):
        ingest_dump(dump, tmp_path / "ix", workers=1, progress=False, chunk_lines=10)
    assert [p.name.startswith(".staging-") for p in (tmp_path / "ix").iterdir()] == [True]
    monkeypatch.undo()
    res = ingest_dump(dump, tmp_path / "ix", workers=1, progress=False, chunk_lines=10)
    assert res.resumed_chunks == 4 and res.rows["entities"] == 30  # 32 lines in chunks of 10


def test_truncated_gz_fails_and_keeps_previous_index(tmp_path: Path) -> None:
    good = _write(tmp_path / "good.json.gz", _dump_bytes(_synthetic(20)))
    ingest_dump(good, tmp_path / "ix", workers=1, progress=False)
    before = _table_bytes(tmp_path / "ix")
    data = gzip.compress(_dump_bytes(_synthetic(3000)), mtime=0)
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=r"bad.json.gz: the gz archive is truncated or damaged at compressed byte \d+"):
        ingest_dump(bad, tmp_path / "ix", workers=2, progress=False, chunk_lines=100)
    assert _table_bytes(tmp_path / "ix") == before
    with WikidataIndex(tmp_path / "ix") as ix:
        assert ix.counts()["entities"] == 20


def test_legacy_lexeme_mediainfo_redirect_records(tmp_path: Path) -> None:
    legacy = orjson.loads(shared_path("wikidata-samples", "wikidata-toolkit-legacy-2014", "Haaften.json").read_bytes())
    lexeme = orjson.loads(shared_path("wikidata-samples", "wikidata-toolkit", "JsonDeserializer-lexeme.json").read_bytes())
    recs = [_item(1, [5], label="One"), legacy, lexeme, {"entity": "Q8", "redirect": "Q1"},
            {"type": "item", "id": "Q2"}]
    res = ingest_dump(_write(tmp_path / "x.json", _dump_bytes(recs)), tmp_path / "ix", workers=1, progress=False)
    assert res.stats["malformed_legacy_format"] == 1 and res.stats["skipped_lexeme"] == 1
    assert res.stats["skipped_redirect"] == 1 and res.rows["entities"] == 2
    assert "legacy 2014" in res.errors[0]["message"] and res.errors[0]["line"] == 3


def test_force_and_missing_input(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such dump file: /nope.json; check the path"):
        ingest_dump("/nope.json", tmp_path / "ix")
    dump = _write(tmp_path / "d.json", _dump_bytes(_synthetic(4)))
    ingest_dump(dump, tmp_path / "ix", workers=1, progress=False)
    res = ingest_dump(dump, tmp_path / "ix", workers=1, progress=False, force=True)
    assert res.rows["entities"] == 4


_KILLABLE = """
import sys, time
from pathlib import Path
import etl.step
import wikidata_index.ingest as ing
flag = Path(sys.argv[4])
real_chunk, real_final, real_manifest = ing.process_chunk, ing._finalize, etl.step.write_json_atomic
def slow_chunk(chunk, out_dir, **kw):
    time.sleep(0.05)
    return real_chunk(chunk, out_dir, **kw)
def hang(name, real):
    def f(*a, **kw):
        # stop half-way through this phase and wait to be killed (publishing: at the manifest, after
        # the claim and the tables)
        if sys.argv[5] == name and (name != "publish" or Path(a[0]).name == "manifest.json"):
            flag.touch()
            time.sleep(60)
        return real(*a, **kw)
    return f
ing.process_chunk = slow_chunk
ing._finalize = hang("finalize", real_final)
etl.step.write_json_atomic = hang("publish", real_manifest)  # the manifest, after the tables were moved into DIR
ing.ingest_dump(sys.argv[1], sys.argv[2], workers=2, progress=False, chunk_lines=int(sys.argv[3]))
"""


@pytest.mark.slow
@pytest.mark.parametrize("phase", ["chunks:3", "chunks:25", "finalize", "publish"])
def test_sigkill_then_rerun_gives_identical_tables(tmp_path: Path, phase: str, monkeypatch: pytest.MonkeyPatch) -> None:
    dump = _write(tmp_path / "d.json.gz", _dump_bytes(_synthetic(300)))
    ingest_dump(dump, tmp_path / "ref", workers=1, progress=False, chunk_lines=10)
    ref = _table_bytes(tmp_path / "ref")
    old = _write(tmp_path / "old.json", _dump_bytes(_synthetic(3)))
    out = tmp_path / "ix"
    ingest_dump(old, out, workers=1, progress=False)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    flag = tmp_path / "flag"
    proc = subprocess.Popen([sys.executable, "-c", _KILLABLE, str(dump), str(out), "10", str(flag), phase], env=env)
    kill_after = int(phase.split(":")[1]) if phase.startswith("chunks") else 0
    deadline = time.time() + 30
    while time.time() < deadline and proc.poll() is None:
        if kill_after and sum(len(list(s.glob("chunks/done/*.json"))) for s in out.glob(".staging-*")) >= kill_after:
            break
        if not kill_after and flag.exists():
            break
        time.sleep(0.005)
    assert proc.poll() is None, "the run ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    if phase != "publish":
        with WikidataIndex(out) as ix:  # the previous index is untouched
            assert ix.counts()["entities"] == 3
    else:  # tables moved, no manifest yet: no reader accepts the half-published index
        import wikidata_index.index as index_module

        monkeypatch.setattr(index_module, "PUBLISH_WAIT_S", 0.1)
        with pytest.raises(InputError, match=f"index at {out} is being published .* or was stopped while publishing"):
            WikidataIndex(out)
    res = ingest_dump(dump, out, workers=2, progress=False, chunk_lines=10)
    assert res.resumed_chunks >= kill_after
    if phase == "finalize":  # every chunk was parsed: the rerun does not read the dump again
        assert res.resumed_chunks == res.manifest["timings"]["chunks"] == 31  # 302 lines
    assert _table_bytes(out) == ref
    assert not list(out.glob(".staging-*"))
    with WikidataIndex(out) as ix:
        assert ix.counts()["entities"] == 300


def test_several_languages(tmp_path: Path) -> None:
    dump = shared_path("wikidata-samples", "wikidata-toolkit", "mock-dump-for-testing.json")
    res = ingest_dump(dump, tmp_path / "ix", languages=("de", "en", "de"), workers=1, progress=False)
    assert res.manifest["parameters"]["languages"] == ["de", "en"]
    with WikidataIndex(tmp_path / "ix") as ix:
        assert ix.names("Q1", "de") == ["Universum", "All", "Kosmos", "Weltall", "Weltraum"]
        assert ix.names("P16", "de") == ["Straßennetz", "Strassennetz"]
        assert ix.names("Q1", "en") == [] and ix.entity("Q1")["label"] is None
        assert ix.find("GLUCK", "de") == ["Q8"]
    with pytest.raises(InputError, match="--languages is empty"):
        ingest_dump(dump, tmp_path / "iy", languages=(" ",))


def test_a_dump_without_entities_is_an_error_and_leaves_nothing(tmp_path: Path) -> None:
    """Issue 17 #1: an empty dump used to publish an empty index. Zero items and properties is an
    error, and a first failure into a new folder leaves no folder, lock file or stage behind."""
    empty = _write(tmp_path / "e.json", b"[\n]\n")
    with pytest.raises(InputError) as exc:
        ingest_dump(empty, tmp_path / "ix", workers=1, progress=False)
    assert str(exc.value) == (f"{empty}: the dump holds no entities (an empty list); give a Wikidata JSON dump "
                              "such as latest-all.json.gz")
    assert not (tmp_path / "ix").exists()
    lexeme = orjson.loads(shared_path("wikidata-samples", "wikidata-toolkit", "JsonDeserializer-lexeme.json").read_bytes())
    only = _write(tmp_path / "lex.json", _dump_bytes([lexeme, {"entity": "Q8", "redirect": "Q1"}]))
    with pytest.raises(InputError) as exc:
        ingest_dump(only, tmp_path / "ix", workers=2, progress=False, chunk_lines=1)
    assert str(exc.value) == (f"{only}: none of its 2 records is an item or a property (skipped: lexeme 1, "
                              "redirect 1); an index needs at least one: give a Wikidata JSON dump such as "
                              "latest-all.json.gz")
    assert not (tmp_path / "ix").exists()
    for name, data in (("z.json", b""), ("z.json.gz", b"")):
        with pytest.raises(InputError, match=f"{name}: the input is empty"):
            ingest_dump(_write(tmp_path / name, data), tmp_path / "iz", workers=1, progress=False)
        assert not (tmp_path / "iz").exists()


def test_an_index_is_never_lowered_without_force(tmp_path: Path) -> None:
    """Issue 17 #1: publishing over an index must not lose what it had: fewer entities, or no names
    in one of its languages, needs force (and then replaces it)."""
    out = tmp_path / "ix"
    big = _write(tmp_path / "big.json", _dump_bytes(_synthetic(20)))
    ingest_dump(big, out, workers=1, progress=False)
    before = _table_bytes(out)
    small = _write(tmp_path / "small.json", _dump_bytes(_synthetic(5)))
    with pytest.raises(InputError) as exc:
        ingest_dump(small, out, workers=1, progress=False)
    assert str(exc.value) == (f"--out {out}: the new index would have 5 entities where the index there has 20 "
                              "(made from big.json); pass --force to replace it anyway, or choose another --out")
    assert _table_bytes(out) == before and not list(out.glob(".staging-*"))
    with pytest.raises(InputError) as exc:
        ingest_dump(big, out, workers=1, progress=False, languages=("de",))
    assert str(exc.value).startswith(f"--out {out}: the new index would have no names in en, which the index there has")
    more = _write(tmp_path / "more.json", _dump_bytes(_synthetic(30)))
    assert ingest_dump(more, out, workers=1, progress=False, languages=("en", "de")).rows["entities"] == 30
    assert ingest_dump(small, out, workers=1, progress=False, force=True).rows["entities"] == 5
    with WikidataIndex(out) as ix:
        assert ix.counts()["entities"] == 5


def test_lowers_defines_what_a_smaller_index_loses() -> None:
    from wikidata_index.ingest import lowers

    old = {"rows": {"entities": 10}, "parameters": {"languages": ["en", "de"]}}
    assert lowers(None, {"entities": 0}, ["en"]) is None  # nothing trustworthy to lose
    assert lowers(old, {"entities": 10}, ["de", "en", "fr"]) is None
    assert lowers(old, {"entities": 9}, ["en", "de"]) == "9 entities where the index there has 10"
    assert lowers(old, {"entities": 11}, ["en"]) == "no names in de, which the index there has"
    assert lowers({"rows": "junk", "parameters": []}, {"entities": 1}, ["en"]) is None


@pytest.mark.parametrize("extractor", ["python", "c"])
def test_integer_past_64_bits_is_a_malformed_line_not_a_crash(tmp_path: Path, extractor: str) -> None:
    # pysimdjson raises RuntimeError (BIGINT_ERROR), not ValueError, for this line.
    if extractor == "c":
        fast_extractor_or_skip()
    recs: list = _synthetic(3)
    recs.insert(1, b'{"type": "item", "id": "Q9", "labels": {}, "x": 123456789012345678901}')
    dump = _write(tmp_path / "b.json", _dump_bytes(recs))
    res = ingest_dump(dump, tmp_path / "ix", workers=1, progress=False, extractor=extractor)
    assert res.stats["malformed_invalid_json"] == 1 and res.rows["entities"] == 3
    assert res.errors[0]["line"] == 3 and res.errors[0]["reason"] == "invalid_json"


def test_c_and_python_extractors_give_byte_identical_indexes(tmp_path: Path) -> None:
    fast_extractor_or_skip()
    recs: list = _synthetic(60) + _sample_entities() + [b"{bad", b'{"entity": "Q1", "redirect": "Q2"}']
    dump = _write(tmp_path / "d.json.gz", _dump_bytes(recs))
    a = ingest_dump(dump, tmp_path / "c", workers=2, progress=False, chunk_lines=17, extractor="c")
    b = ingest_dump(dump, tmp_path / "py", workers=1, progress=False, extractor="python")
    assert _table_bytes(tmp_path / "c") == _table_bytes(tmp_path / "py")
    assert a.stats == b.stats and a.errors == b.errors and a.stats["kept_item"] > 60
    assert a.manifest["timings"]["extractor"] == "c" and b.manifest["timings"]["extractor"] == "python"



@pytest.mark.timeout(120)
def test_ingest_through_lbzip2_with_two_workers_finishes(tmp_path: Path, stand_in_lbzip2: Path) -> None:
    # Regression: the tool used to read a pipe fed by the main process; workers forked afterwards
    # inherited its write end, so the tool never saw end of input and the ingest hung for good.
    import bz2

    data = _dump_bytes(_synthetic(40))
    dump = tmp_path / "d.json.bz2"
    dump.write_bytes(bz2.compress(data))
    res = ingest_dump(dump, tmp_path / "ix", workers=2, progress=False, chunk_lines=7)
    assert res.rows["entities"] == 40
    assert res.manifest["inputs"][0]["sha256"] == hashlib.sha256(dump.read_bytes()).hexdigest()
    _write(tmp_path / "d.json", data)
    ingest_dump(tmp_path / "d.json", tmp_path / "plain", workers=1, progress=False)
    assert _table_bytes(tmp_path / "ix") == _table_bytes(tmp_path / "plain")


@pytest.mark.parametrize("workers", [1, 2])
def test_an_entity_twice_gives_one_row_per_key(tmp_path: Path, workers: int) -> None:
    """Dumps can hold an entity twice. Its least row is kept (by type, label, description,
    sitelinks, enwiki; nulls last), a name that is a label in either copy is a label, and
    statements are not doubled. The copies sit in different chunks (chunk_lines=1)."""
    q1a = _item(1, [5, 6], label="Beta", aliases=["Alpha"])
    q1b = _item(1, [5], label="Alpha", aliases=["Gamma"])
    q2a = _item(2, [5], aliases=["Ex"])
    q2b = _item(2, [5], label="Ex")
    q3a = _item(3, [6], aliases=["Why"])
    q3b = dict(_item(3, [6], label="Zed", aliases=["Why"]), descriptions={"en": {"language": "en", "value": "d"}})
    dump = _write(tmp_path / "d.json", _dump_bytes([q1a, q2a, q3a, _item(4, [5]), q1b, q2b, q3b]))
    ingest_dump(dump, tmp_path / "ix", workers=workers, progress=False, chunk_lines=1)
    ents = pq.read_table(tmp_path / "ix" / "entities").to_pylist()
    assert [(e["id"], e["label"], e["description"]) for e in ents] == [
        ("Q1", "Alpha", None), ("Q2", "Ex", None), ("Q3", "Zed", "d"), ("Q4", None, None)]
    names = pq.read_table(tmp_path / "ix" / "names").to_pylist()
    assert [(n["id"], n["name"], n["is_label"]) for n in names] == [
        ("Q1", "Alpha", True), ("Q1", "Beta", True), ("Q1", "Gamma", False), ("Q2", "Ex", True),
        ("Q3", "Why", False), ("Q3", "Zed", True)]
    types = pq.read_table(tmp_path / "ix" / "types").to_pylist()
    assert [(t["id"], t["class"]) for t in types] == [("Q1", "Q5"), ("Q1", "Q6"), ("Q2", "Q5"), ("Q3", "Q6"), ("Q4", "Q5")]
    assert pq.read_table(tmp_path / "ix" / "edges").num_rows == 5


def _demonym(text: str, lang: str = "en", rank: str = "normal", form: str | None = None) -> dict:
    st = {"mainsnak": {"snaktype": "value", "property": "P1549", "datatype": "monolingualtext",
                       "datavalue": {"type": "monolingualtext", "value": {"text": text, "language": lang}}},
          "type": "statement", "rank": rank}
    if form:
        st["qualifiers"] = {"P518": [{"snaktype": "value", "property": "P518", "datatype": "wikibase-item",
                                      "datavalue": {"type": "wikibase-entityid", "value": {"id": form}}}]}
    return st


@pytest.mark.parametrize("extractor", ["python", "c"])
def test_demonyms_table_keeps_one_row_per_form_with_the_best_rank(tmp_path: Path, extractor: str) -> None:
    """A demonym stated twice (in one entity, or in two copies of it in different chunks) is one row,
    with the preferred rank when either says so; deprecated ones are dropped; English beside the
    requested languages."""
    if extractor == "c":
        fast_extractor_or_skip()
    q1a = dict(_item(1, [6256]), claims={"P1549": [_demonym("Danish"), _demonym("Dane"), _demonym("Danish"),
                                                   _demonym("dänisch", "de", form="Q499327"),
                                                   _demonym("Danskie", rank="deprecated")]})
    q1b = dict(_item(1, [6256]), claims={"P1549": [_demonym("Danish", rank="preferred"), _demonym("dänisch", "de"),
                                                   _demonym("danois", "fr")]})
    q2 = dict(_item(2, [6256]), claims={"P1549": [_demonym("Italian", rank="preferred"), _demonym("Ital", "xx")]})
    dump = _write(tmp_path / "d.json", _dump_bytes([q1a, q2, _item(3, [5]), q1b]))
    res = ingest_dump(dump, tmp_path / "ix", languages=("de",), workers=2, progress=False, chunk_lines=1,
                      extractor=extractor)
    rows = pq.read_table(tmp_path / "ix" / "demonyms").to_pylist()
    assert [(r["id"], r["lang"], r["text"], r["rank"], r["form"], r["folded"]) for r in rows] == [
        ("Q1", "de", "dänisch", "normal", None, "danisch"), ("Q1", "de", "dänisch", "normal", "Q499327", "danisch"),
        ("Q1", "en", "Dane", "normal", None, "dane"), ("Q1", "en", "Danish", "preferred", None, "danish"),
        ("Q2", "en", "Italian", "preferred", None, "italian")]
    assert res.rows["demonyms"] == 5
    with WikidataIndex(tmp_path / "ix") as ix:
        assert ix.demonyms("Q1") == ["Danish", "Dane"] and ix.demonyms("Q1", "de") == ["dänisch"]
        assert ix.demonyms("Q1", "fr") == [] and ix.demonyms("Q3") == []
        got = ix.demonyms_of(["Q3", "Q2", "Q1", "Q2", "Q404"])
        assert {q: [(d.text, d.rank) for d in ds] for q, ds in got.items()} == {
            "Q1": [("Danish", "preferred"), ("Dane", "normal")], "Q2": [("Italian", "preferred")]}
        assert [(d.text, d.form) for d in ix.demonyms_of(["Q1"], "de")["Q1"]] == [("dänisch", None),
                                                                                ("dänisch", "Q499327")]
        assert ix.demonyms_of([]) == {}
        assert ix.find_demonym("danish") == ["Q1"] and ix.find_demonym("Dänisch", "de") == ["Q1"]
        assert ix.find_demonym("Danskie") == [] and ix.find_demonym("Denmark") == []


def test_final_schedule_covers_every_table() -> None:
    from wikidata_index.ingest import FINAL_QUERIES, FINAL_SCHEDULE
    from wikidata_index.schema import EXTRACTED_TABLES

    assert sorted([*FINAL_SCHEDULE, "entities"]) == sorted(EXTRACTED_TABLES) == sorted(FINAL_QUERIES)
    assert sorted(TABLES) == sorted([*EXTRACTED_TABLES, "name_tokens"])  # the one derived table


def _split_at_dots(names: list[str]) -> list[list[str] | None]:
    """A stand-in tokenizer (the index knows none): names with a dot are stored, split after each dot."""
    return [n.replace(".", ". ").split() if "." in n else None for n in names]


@pytest.mark.parametrize("batch", [2, 1 << 14])
def test_name_tokens_holds_what_the_tokenizer_stores(tmp_path: Path, batch: int,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """English labels, aliases and demonym texts, each distinct name once, in name order, with the
    tokens of the whitespace-collapsed name; other languages are not read; the batch size does not
    change a byte; the manifest names the tokenizer, and the index reports it."""
    import wikidata_index.ingest as ingest_module
    from wikidata_index.index import name_tokens_of
    from wikidata_index.names import NameTokenizer

    monkeypatch.setattr(ingest_module, "NAME_TOKENS_BATCH", batch)
    q1 = dict(_item(1, [6256], label="St. Kitts", aliases=["Mary  J. Blige", "Plain Name", "St. Kitts"]),
              claims={"P1549": [_demonym("Kittit.ian"), _demonym("franz.", "fr")]})
    q2 = _item(2, [5], label="Mary  J. Blige", aliases=["A.B.C."])
    q2["labels"]["fr"] = {"language": "fr", "value": "M. Blige"}
    dump = _write(tmp_path / "d.json", _dump_bytes([q2, q1]))
    tok = NameTokenizer("dots 1", _split_at_dots)
    res = ingest_dump(dump, tmp_path / "ix", languages=("en", "fr"), workers=1, progress=False, tokenizer=tok)
    rows = pq.read_table(tmp_path / "ix" / "name_tokens").to_pylist()
    assert rows == [{"name": "A.B.C.", "tokens": ["A.", "B.", "C."]},
                    {"name": "Kittit.ian", "tokens": ["Kittit.", "ian"]},
                    {"name": "Mary  J. Blige", "tokens": ["Mary", "J.", "Blige"]},
                    {"name": "St. Kitts", "tokens": ["St.", "Kitts"]}]
    assert res.rows["name_tokens"] == 4 and res.manifest["name_tokens"] == {"tokenizer": "dots 1"}
    with WikidataIndex(tmp_path / "ix") as ix:
        assert ix.name_tokenizer() == "dots 1"
        assert name_tokens_of(ix.con, ["St. Kitts", "Plain Name", "nowhere", "St. Kitts"]) == {
            "St. Kitts": ("St.", "Kitts")}
        assert name_tokens_of(ix.con, []) == {}
    ingest_dump(dump, tmp_path / "plain", workers=1, progress=False)
    assert pq.read_table(tmp_path / "plain" / "name_tokens").num_rows == 0
    with WikidataIndex(tmp_path / "plain") as ix:
        assert ix.name_tokenizer() is None and ix.has("name_tokens")


def test_a_tokenizer_that_drops_names_is_an_error(tmp_path: Path) -> None:
    from wikidata_index.names import NameTokenizer

    dump = _write(tmp_path / "d.json", _dump_bytes([_item(1, [5], label="A. B")]))
    with pytest.raises(ValueError, match=r"^tokenizer short gave 0 results for 1 names$"):
        ingest_dump(dump, tmp_path / "ix", workers=1, progress=False, tokenizer=NameTokenizer("short", lambda n: []))
    assert not (tmp_path / "ix" / "manifest.json").exists()


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from([None, "a", "b", "ab"]), st.sampled_from([None, True, False]),
                               st.integers(0, 3)), max_size=40),
       key=st.sampled_from([["s"], ["s", "f"], ["s", "f", "n"]]), cuts=st.lists(st.integers(0, 40), max_size=6))
def test_drop_repeats_keeps_the_first_row_of_each_key(rows: list[tuple], key: list[str], cuts: list[int]) -> None:
    """Sorted rows arrive in batches cut anywhere; a row is dropped when its key equals the
    previous row's, across batch boundaries too, with null equal to null (as SELECT DISTINCT)."""
    import pyarrow as pa

    from wikidata_index.ingest import _drop_repeats

    pos = {"s": 0, "f": 1, "n": 2}
    rows = sorted(rows, key=lambda r: [(r[pos[k]] is None, r[pos[k]] or 0) for k in key])
    expected = [r for i, r in enumerate(rows) if i == 0 or [r[pos[k]] for k in key] != [rows[i - 1][pos[k]] for k in key]]
    schema = pa.schema([("s", pa.string()), ("f", pa.bool_()), ("n", pa.int32())])
    table = pa.Table.from_pylist([dict(zip("sfn", r)) for r in rows], schema=schema)
    bounds = sorted({0, len(rows), *(c for c in cuts if c <= len(rows))})
    batches = [b for lo, hi in zip(bounds, bounds[1:]) for b in table.slice(lo, hi - lo).to_batches()]
    got = [tuple(r.values()) for b in _drop_repeats(batches, key) for r in b.to_pylist()]
    assert got == expected


def test_the_ram_spool_is_removed_after_a_run_and_after_a_failure(tmp_path: Path) -> None:
    """Chunk bytes travel through files in /dev/shm, which is RAM: nothing may stay behind."""
    from wikidata_index.ingest import SPOOL_PREFIX

    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        pytest.skip("no writable /dev/shm here: the spool lives in the staging folder, removed with it")
    mine = f"{SPOOL_PREFIX}{os.getpid()}-*"
    ingest_dump(_write(tmp_path / "d.json", _dump_bytes(_synthetic(200))), tmp_path / "ix", workers=2,
                progress=False, chunk_lines=30)
    assert not list(shm.glob(mine))
    data = gzip.compress(_dump_bytes(_synthetic(3000)), mtime=0)
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="truncated"):
        ingest_dump(bad, tmp_path / "ix2", workers=2, progress=False, chunk_lines=100)
    assert not list(shm.glob(mine))


# ----------------------------------------------------------------------------- hostile dumps (issue 29)


def _extractors() -> list[str]:
    from wikidata_index.ingest import fast_extractor

    return ["c", "python"] if fast_extractor() is not None else ["python"]


def test_unusable_names_are_never_written_and_are_counted(tmp_path: Path) -> None:
    """Labels and aliases with NUL, a bidi override or more than 250 characters are left out of names
    (so no benchmark draws them), by both extractors alike; the manifest's stats and the summary count them."""
    q1 = _item(1, [5], label="Nul\x00Name", aliases=["Fine Name", "Tab\tis whitespace"])
    q2 = _item(2, [5], label="evil\u202eoverride", aliases=["iso\u2066late"])
    q3 = _item(3, [5], label="L" * 5000, aliases=["M" * 250])
    q3["claims"]["P1549"] = [_demonym("Bad\x01demonym"), _demonym("Good")]
    dump = _write(tmp_path / "d.json", _dump_bytes([q1, q2, q3]))
    tables = []
    for extractor in _extractors():
        res = ingest_dump(dump, tmp_path / extractor, workers=1, progress=False, extractor=extractor)
        names = pq.read_table(tmp_path / extractor / "names").column("name").to_pylist()
        assert names == ["Fine Name", "Tab\tis whitespace", "M" * 250]
        assert pq.read_table(tmp_path / extractor / "demonyms").column("text").to_pylist() == ["Good"]
        assert res.stats["unusable_names"] == 5
        assert res.summary().splitlines()[-1] == (
            "records: 3, items 3, properties 0, malformed 0, unusable names 5 (left out: control or format "
            "characters, or more than 250 characters)")
        tables.append(_table_bytes(tmp_path / extractor))
    assert all(t == tables[0] for t in tables)


INVISIBLE = {"zero-width joiner": "\u200d", "zero-width space": "\u200b", "right-to-left mark": "\u200f",
             "byte-order mark": "\ufeff", "soft hyphen": "\u00ad", "word joiner": "\u2060", "tag": "\U000e0041"}


def test_names_with_a_format_character_are_left_out_as_bidi_overrides_are(tmp_path: Path) -> None:
    """Issue 56: a zero-width joiner or space, a right-to-left mark, a BOM or a soft hyphen inside a name
    became a KB label, then part of new names in renamed documents; every Unicode Cf character is treated as
    U+202E is: the name is left out and counted."""
    items = [_item(k + 1, [5], label=f"Ana{ch}Lind", aliases=[f"Lind {k}"]) for k, ch in enumerate(INVISIBLE.values())]
    items[0]["claims"]["P1549"] = [_demonym("Vor\u200ddian"), _demonym("Vordian")]
    dump = _write(tmp_path / "d.json", _dump_bytes(items))
    for extractor in _extractors():
        res = ingest_dump(dump, tmp_path / extractor, workers=1, progress=False, extractor=extractor)
        names = pq.read_table(tmp_path / extractor / "names").column("name").to_pylist()
        assert sorted(names) == [f"Lind {k}" for k in range(len(INVISIBLE))]
        assert pq.read_table(tmp_path / extractor / "demonyms").column("text").to_pylist() == ["Vordian"]
        assert res.stats["unusable_names"] == len(INVISIBLE) + 1


def test_the_format_character_table_covers_unicodedata() -> None:
    """FORMAT_CHARACTERS is fixed (the same names left out on every machine); it must hold every Cf
    character of this Python's Unicode database, or a newer Unicode's Cf would slip through."""
    import unicodedata

    from wikidata_index.names import FORMAT_CHARACTERS, char_class

    table = {cp for a, b in FORMAT_CHARACTERS for cp in range(a, b + 1)}
    cf = {cp for cp in range(0x110000) if unicodedata.category(chr(cp)) == "Cf"}
    assert cf <= table, [f"U+{cp:04X}" for cp in sorted(cf - table)]
    assert all(unicodedata.category(chr(cp)) in ("Cf", "Cn") for cp in table)  # nothing else: unassigned at most
    pattern = re.compile(f"[{char_class(FORMAT_CHARACTERS)}]")
    assert all(pattern.fullmatch(chr(cp)) for cp in table) and not pattern.search("Ana Lind, ad\u00e9le")


def test_a_qid_held_twice_warns_naming_it_and_its_lines(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Each repeated QID is named with every line it is on (across chunks too), whatever the extractor
    or chunking; the index merges the copies as before and counts them in the stats."""
    entities = [_item(i, [5], label=f"N{i}") for i in range(1, 30)]
    entities.insert(7, _item(3, [6], label="Again"))  # line 9; the first Q3 is on line 4
    entities.append(_item(20, [6], label="Twenty"))  # line 32; the first Q20 is on line 22
    dump = _write(tmp_path / "d.json.gz", _dump_bytes(entities))
    for extractor in _extractors():
        for chunk_lines in (None, 4):
            caplog.clear()
            with caplog.at_level(logging.WARNING, logger="wikidata_index.ingest"):
                res = ingest_dump(dump, tmp_path / f"{extractor}-{chunk_lines}", workers=1, progress=False,
                                  extractor=extractor, chunk_lines=chunk_lines)
            assert [r.getMessage() for r in caplog.records] == [
                f"{dump}: Q20 appears 2 times (lines 22, 32); its copies are merged into one entity (one entities "
                "row, the names, types and statements of all copies)",
                f"{dump}: Q3 appears 2 times (lines 4, 9); its copies are merged into one entity (one entities "
                "row, the names, types and statements of all copies)"]
            assert res.stats["duplicate_entities"] == 2 and res.rows["entities"] == 29
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="wikidata_index.ingest"):
        ingest_dump(_write(tmp_path / "once.json", _dump_bytes(entities[:7])), tmp_path / "once", workers=1,
                    progress=False)
    assert not caplog.records  # no repeat, no warning
    # a dump written with spaces ("id": "Q3") and a copy without claims: the C path named line "?"
    spaced = b"[\n" + b",\n".join(orjson.dumps(e).replace(b'":', b'": ') for e in entities[:9]) + b"\n]\n"
    for extractor in _extractors():
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="wikidata_index.ingest"):
            ingest_dump(_write(tmp_path / "spaced.json", spaced), tmp_path / f"spaced-{extractor}", workers=1,
                        progress=False, extractor=extractor)
        assert [r.getMessage() for r in caplog.records] == [
            f"{tmp_path / 'spaced.json'}: Q3 appears 2 times (lines 4, 9); its copies are merged into one entity "
            "(one entities row, the names, types and statements of all copies)"]


def test_a_qid_held_twice_in_several_files_names_the_files_and_records(tmp_path: Path,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    """Several input files are combined into a temporary file for the run: the warning names the input
    files and the record of each copy, never that temporary file."""
    a = _write(tmp_path / "a.json", _dump_bytes([_item(i, [5], label=f"N{i}") for i in range(1, 5)]))
    b = _write(tmp_path / "b.json", _dump_bytes([_item(7, [5], label="Seven"), _item(3, [6], label="Again")]))
    with caplog.at_level(logging.WARNING, logger="wikidata_index.ingest"):
        res = ingest_dump([str(a), str(b)], tmp_path / "index", workers=1, progress=False)
    assert [r.getMessage() for r in caplog.records] == [
        f"{a}, {b}: Q3 appears 2 times (at {a} record 3; {b} record 2); its copies are merged into one entity "
        "(one entities row, the names, types and statements of all copies)"]
    assert res.stats["duplicate_entities"] == 1 and res.rows["entities"] == 5


def test_a_record_over_the_size_limit_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A line longer than the record limit stops the read with one line naming its byte, whether it is
    the first line or a later one; the index there is untouched."""
    import etl.readers

    monkeypatch.setattr(etl.readers, "MAX_RECORD_BYTES", 1 << 20)
    big = dict(_item(2, [5], label="Big"), descriptions={"en": {"language": "en", "value": "x" * (3 << 20)}})
    later = _write(tmp_path / "later.json.gz", _dump_bytes([_item(1, [5], label="A"), big]))
    first = _write(tmp_path / "first.json", orjson.dumps(big))  # one line, no dump framing
    offset = len(b"[\n" + orjson.dumps(_item(1, [5], label="A")) + b",\n")
    for dump, at in ((later, offset), (first, 0)):
        with pytest.raises(InputError) as err:
            ingest_dump(dump, tmp_path / "ix", workers=1, progress=False, chunk_bytes=1 << 16)
        assert str(err.value) == (
            f"{dump}: the record at decompressed byte {at:,} is longer than 1 MB, the most one entity may take; "
            "a dump holds one entity per line, as the official dumps do (a whole dump on one line, as one "
            "JSON array, is not read): check the file")
    assert not (tmp_path / "ix").exists()


# The peak is this process's own VmHWM: ru_maxrss is not, as Linux carries the parent's peak across
# exec (a subprocess of a pytest run that had grown to 1 GB read 1,044-1,220 MB here, alone 135 MB).
_BIG_LINE = """
import sys
from etl.io import InputError
from wikidata_index.ingest import ingest_dump
try:
    ingest_dump(sys.argv[1], sys.argv[2], workers=2, progress=False)
except InputError as exc:
    print(exc)
status = open("/proc/self/status").read()
print(int(status.split("VmHWM:")[1].split()[0]) // 1024)
"""


@pytest.mark.slow
def test_a_300_mb_line_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    """The real limit (128 MB): a small .gz holding one 300 MB line is refused before it is read whole,
    the process staying far below the 1.2 GB that holding and copying it would take."""
    import zlib

    dump = tmp_path / "big.json.gz"
    comp = zlib.compressobj(1, zlib.DEFLATED, 31)
    with open(dump, "wb") as fh:
        fh.write(comp.compress(b'[\n{"type":"item","id":"Q1","descriptions":{"en":{"language":"en","value":"'))
        block = b"x" * (1 << 20)
        for _ in range(300):
            fh.write(comp.compress(block))
        fh.write(comp.compress(b'"}}}\n]\n') + comp.flush())
    out = subprocess.run([sys.executable, "-c", _BIG_LINE, str(dump), str(tmp_path / "ix")], capture_output=True,
                         text=True, check=True, env=dict(os.environ, PYTHONPATH=str(REPO))).stdout.splitlines()
    assert out[0] == (f"{dump}: the record at decompressed byte 2 is longer than 128 MB, the most one entity may "
                      "take; a dump holds one entity per line, as the official dumps do (a whole dump on one line, "
                      "as one JSON array, is not read): check the file")
    # The open line is held in one ring slot that grows by doubling (at most 256 MB for the 128 MB
    # limit), beside the interpreter and its imports: measured 134 MB on 2026-12-02 (4.28 GB for a
    # 1 GiB line before the limit)
    assert int(out[1]) < 400  # MB


def test_a_one_line_json_array_of_entities_is_read(tmp_path: Path) -> None:
    """A dump written as one JSON array on one line gives the same tables as the official shape."""
    entities = _synthetic(5)
    one = _write(tmp_path / "one.json", orjson.dumps(entities) + b"\n")
    ingest_dump(_write(tmp_path / "ref.json", _dump_bytes(entities)), tmp_path / "ref", workers=1, progress=False)
    for extractor in _extractors():
        res = ingest_dump(one, tmp_path / extractor, workers=1, progress=False, extractor=extractor)
        assert res.stats == {"kept_item": 5, "malformed": 0, "records": 5}
        assert _table_bytes(tmp_path / extractor) == _table_bytes(tmp_path / "ref")


def test_opening_an_index_mid_publish_waits_for_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While a publish is under way (its claim there, the manifest not yet), opening waits and then
    reads the new index; a claim that stays without a manifest (a publish that was stopped) is named."""
    import threading

    import wikidata_index.index as index_module
    from etl.step import claim_of

    out = tmp_path / "ix"
    ingest_dump(_write(tmp_path / "d.json", _dump_bytes(_synthetic(4))), out, workers=1, progress=False)
    man = out / "manifest.json"
    saved = man.read_bytes()
    man.unlink()
    claim_of(man).write_bytes(b"{}")

    def publish() -> None:
        time.sleep(0.3)
        man.write_bytes(saved)
        claim_of(man).unlink()

    thread = threading.Thread(target=publish)
    thread.start()
    with WikidataIndex(out) as ix:
        assert ix.counts()["entities"] == 4
    thread.join()
    man.unlink()
    claim_of(man).write_bytes(b"{}")
    monkeypatch.setattr(index_module, "PUBLISH_WAIT_S", 0.2)
    with pytest.raises(InputError) as err:
        WikidataIndex(out)
    assert str(err.value) == (
        f"index at {out} is being published (its .manifest.json.publishing is there) and no manifest.json came "
        "within 0.2 s: an ingest-dump is writing it, or was stopped while publishing; open it again once that run "
        "ends, or rerun the ingest-dump command that wrote it")


_TERMINATED = """
import os, shutil, signal, sys
import wikidata_index.ingest as ing
real_db, real_rmtree = ing.write_index_db, shutil.rmtree
def stop_in_db(out_dir):  # SIGTERM while index.duckdb is being written (its temporary folder exists)
    def stop(src, dst):
        if str(dst).endswith("index.duckdb"):
            os.kill(os.getpid(), signal.SIGTERM)
    os.replace = stop
    real_db(out_dir)
def stop_in_stage(path, *a, **kw):  # SIGTERM half-way through removing the finished stage
    if ".staging-" in str(path) and os.path.basename(path) == "chunks":
        real_rmtree(os.path.join(path, "done"))
        os.kill(os.getpid(), signal.SIGTERM)
    return real_rmtree(path, *a, **kw)
if sys.argv[3] == "db":
    ing.write_index_db = stop_in_db
else:
    shutil.rmtree = stop_in_stage
ing.ingest_dump(sys.argv[1], sys.argv[2], workers=1, progress=False, chunk_lines=3)
"""


@pytest.mark.parametrize("where", ["db", "stage"])
def test_a_rerun_after_sigterm_at_the_end_is_up_to_date_and_cleans_up(tmp_path: Path, where: str) -> None:
    """SIGTERM after the manifest, while index.duckdb is written or the stage removed: the same command
    again finds the index up to date (it reads no dump), removes what the stopped run left, and writes
    index.duckdb when it is missing; another dump, or --force, ingests again."""
    dump = _write(tmp_path / "d.json", _dump_bytes(_synthetic(12)))
    out = tmp_path / "ix"
    proc = subprocess.run([sys.executable, "-c", _TERMINATED, str(dump), str(out), where],
                          env=dict(os.environ, PYTHONPATH=str(REPO)), check=False)
    assert proc.returncode == -signal.SIGTERM
    left = sorted(p.name for p in out.iterdir() if p.name.startswith("."))
    assert any(n.startswith(".staging-index-db-" if where == "db" else ".staging-") for n in left)
    res = ingest_dump(dump, out, workers=1, progress=False, chunk_lines=3)
    assert res.up_to_date and res.rows["entities"] == 12
    assert res.summary().splitlines()[0] == (
        f"index at {out} is up to date (made by the same command from the same dump); pass --force to ingest it "
        "again")
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == [".file-hashes.json"] * (where == "stage")
    assert (out / "index.duckdb").is_file()
    with WikidataIndex(out) as ix:
        assert ix.counts()["entities"] == 12
    assert not ingest_dump(dump, out, workers=1, progress=False, chunk_lines=3, force=True).up_to_date
    assert not ingest_dump(dump, out, workers=1, progress=False, chunk_lines=4).up_to_date  # other chunking


# ----------------------------------------------------------------------------- what an ingest may remove


def test_a_users_folders_named_like_stages_stay_and_marked_leftovers_go(tmp_path: Path) -> None:
    """Stages, spools and index.duckdb temporaries are removed by their marker, never by name alone."""
    from etl.step import mark_staging
    from wikidata_index.ingest import DB_OWNER, DB_STAGING, STAGE_OWNER

    dump = _write(tmp_path / "d.json", _dump_bytes(_synthetic(12)))
    out = tmp_path / "ix"
    mine = [".staging-0123456789abcdef", ".staging-0123456789abcdef.removing", ".staging-ingest-dump-mine",
            f"{DB_STAGING}mine"]
    for name in mine:
        (out / name).mkdir(parents=True)
        (out / name / "keep.txt").write_text("precious")
    # empty and in exactly the form a run makes, but without the marker: still not ours (they had been rmdir-ed)
    empty = [".staging-0123456789abcdee", ".staging-0123456789abcdee.removing", ".staging-ingest-dump-0123abcd",
             f"{DB_STAGING}0123abcd"]
    for name in empty:
        (out / name).mkdir()
    (out / ".index.duckdb.abcd1234.tmp").write_text("precious")  # the temporary's name in earlier versions

    def killed(leftovers: dict[str, str]) -> None:  # what stopped runs leave: folders with their marker
        for name, owner in leftovers.items():
            (out / name).mkdir()
            mark_staging(out / name, owner)

    killed({".staging-fedcba9876543210": STAGE_OWNER, ".staging-ingest-dump-0badc0de": "ingest-dump"})
    ingest_dump(dump, out, workers=1, progress=False)
    kept = sorted([*mine, *empty, ".index.duckdb.abcd1234.tmp", ".file-hashes.json"])
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == kept
    killed({f"{DB_STAGING}0badc0de": DB_OWNER, ".staging-fedcba9876543210.removing": STAGE_OWNER})
    (out / ".manifest.json.publishing").write_bytes(orjson.dumps({"step": "ingest-dump", "outputs": []}))
    assert ingest_dump(dump, out, workers=1, progress=False).up_to_date  # and removes what the kills left
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == kept
    assert all((out / name / "keep.txt").read_text() == "precious" for name in mine)


@pytest.mark.parametrize("empty", [False, True])
def test_a_users_folder_with_the_stages_own_name_is_refused_and_kept(tmp_path: Path, empty: bool) -> None:
    """Empty too: it had been marked and taken (and later removed), as if a kill between a stage's mkdir and
    its marker had left it; a stage now has its marker before its name, so an unmarked one is never ours."""
    from wikidata_index.ingest import DEFAULT_CHUNK_BYTES, _staging_key

    dump = _write(tmp_path / "d.json", _dump_bytes(_synthetic(12)))
    out = tmp_path / "ix"
    stage = out / f".staging-{_staging_key(str(dump), ('en',), None, DEFAULT_CHUNK_BYTES)}"
    stage.mkdir(parents=True)
    if not empty:
        (stage / "keep.txt").write_text("precious")
    for force in (False, True):  # --force starts over: from a stage of its own, never from this folder
        with pytest.raises(InputError) as err:
            ingest_dump(dump, out, workers=1, progress=False, force=force)
        assert str(err.value) == (f"--out {out}: {stage.name} there was not made by an ingest-dump run (it has no "
                                  f".envbench-staging file); move it out of {out}, or choose another --out")
        assert [p.name for p in out.iterdir()] == [stage.name]
        assert [p.name for p in stage.iterdir()] == ([] if empty else ["keep.txt"])
    if not empty:
        assert (stage / "keep.txt").read_text() == "precious"


def test_the_cli_refuses_an_empty_folder_with_the_stages_own_name(tmp_path: Path) -> None:
    from tests.envbench.cli.invoke import run
    from wikidata_index.ingest import DEFAULT_CHUNK_BYTES, _staging_key

    dump = _write(tmp_path / "d.json", _dump_bytes(_synthetic(12)))
    out = tmp_path / "ix"
    stage = out / f".staging-{_staging_key(str(dump), ('en',), None, DEFAULT_CHUNK_BYTES)}"
    stage.mkdir(parents=True)
    for force in ([], ["--force"]):
        code, text = run("ingest-dump", dump, "--out", out, "--workers", 1, "--no-progress", *force)
        assert (code, text) == (1, f"Error: --out {out}: {stage.name} there was not made by an ingest-dump run (it "
                                   f"has no .envbench-staging file); move it out of {out}, or choose another --out\n")
        assert [p.name for p in out.iterdir()] == [stage.name] and not any(stage.iterdir())
    stage.rmdir()  # the fix the message names: then the same command ingests
    code, text = run("ingest-dump", dump, "--out", out, "--workers", 1, "--no-progress")
    assert code == 0, text
    assert not list(out.glob(".staging-*")) and not list(out.glob(".envbench-new-*"))


def test_a_stage_appears_under_its_name_marked_and_a_kill_before_the_rename_is_cleaned_up(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stage is made and marked as .envbench-new-*, then renamed: a kill before the rename leaves that
    marked folder (never an unmarked stage), which the next run removes; after it, the marked stage,
    which the next run resumes."""
    import wikidata_index.ingest as ing
    from etl.step import NEW_STAGING, is_staging

    out = tmp_path / "ix"
    out.mkdir()
    stage = out / ".staging-0123456789abcdef"
    seen: list[bool] = []
    real_rename = os.rename

    def killed(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        if Path(dst) == stage:  # what a SIGKILL here leaves: the marked new folder, no stage
            seen.append(is_staging(Path(src), ing.STAGE_OWNER) and Path(src).name.startswith(NEW_STAGING))
            raise SystemExit("killed")
        real_rename(src, dst)

    import etl.step

    with monkeypatch.context() as m:
        m.setattr(etl.step.os, "rename", killed)
        m.setattr(etl.step, "_discard_new", lambda *a: None)  # a SIGKILL runs no cleanup
        with pytest.raises(SystemExit):
            ing._take_stage(stage, out, fresh=False)
    assert seen == [True] and not stage.exists()
    (left,) = out.iterdir()
    assert left.name.startswith(NEW_STAGING) and is_staging(left, ing.STAGE_OWNER)
    ing._take_stage(stage, out, fresh=False)  # the rerun: removes it, and makes its stage
    assert [p.name for p in out.iterdir()] == [stage.name] and is_staging(stage, ing.STAGE_OWNER)
    (stage / "chunks").mkdir()
    ing._take_stage(stage, out, fresh=False)  # a marked stage is resumed, not made again
    assert sorted(p.name for p in stage.iterdir()) == [".envbench-staging", "chunks"]
    ing._take_stage(stage, out, fresh=True)  # --force: a new, empty stage
    assert [p.name for p in stage.iterdir()] == [".envbench-staging"] and [p.name for p in out.iterdir()] == [
        stage.name]


def test_a_folder_that_takes_the_stages_name_while_it_is_made_is_refused_and_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rename would replace an empty folder: one that appears between the make and the rename is refused,
    and the new folder removed."""
    import etl.step
    import wikidata_index.ingest as ing

    out = tmp_path / "ix"
    out.mkdir()
    stage = out / ".staging-0123456789abcdef"
    real = etl.step.mark_staging

    def and_a_user_mkdirs(*args: object) -> None:  # between the new folder's marker and its rename
        real(*args)  # type: ignore[arg-type]
        stage.mkdir()

    monkeypatch.setattr(etl.step, "mark_staging", and_a_user_mkdirs)
    with pytest.raises(InputError, match="not made by an ingest-dump run"):
        ing._take_stage(stage, out, fresh=False)
    assert [p.name for p in out.iterdir()] == [stage.name] and not any(stage.iterdir())


def test_only_marked_spools_of_dead_runs_are_removed(tmp_path: Path) -> None:
    """/dev/shm is shared: a folder there named like a spool is removed only with a spool's marker."""
    from etl.step import is_staging, mark_staging
    from wikidata_index.ingest import SPOOL_OWNER, SPOOL_PREFIX, make_spool

    stage = tmp_path / "stage"
    stage.mkdir()
    shm = Path("/dev/shm")
    base = shm if shm.is_dir() and os.access(shm, os.W_OK) else stage
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True).stdout.strip()
    theirs, killed = (base / f"{SPOOL_PREFIX}{dead}-{tmp_path.name}-{who}" for who in ("theirs", "killed"))
    made: list[Path] = []
    try:
        theirs.mkdir()
        (theirs / "keep.txt").write_text("precious")
        killed.mkdir()
        mark_staging(killed, SPOOL_OWNER)
        made.append(Path(make_spool(stage, 2) or ""))
        assert not killed.exists() and (theirs / "keep.txt").read_text() == "precious"
        assert is_staging(made[0], SPOOL_OWNER) and made[0].parent == base
    finally:
        for p in (theirs, killed, *made):
            shutil.rmtree(p, ignore_errors=True)


def test_workers_and_chunk_mb_are_bounded(tmp_path: Path) -> None:
    """--workers 3000 ended in "RuntimeError: can't start new thread"; --chunk-mb had no bound either."""
    from tests.envbench.cli.invoke import run

    dump = _write(tmp_path / "d.json", _dump_bytes(_synthetic(12)))
    out = tmp_path / "ix"
    code, text = run("ingest-dump", dump, "--out", out, "--workers", 3000, "--no-progress")
    assert (code, text) == (1, f"Error: --workers 3000 is more than 256, the most parsing processes an ingest starts; "
                               f"give at most 256 (about the number of cores, {os.cpu_count()} here, is fastest)\n")
    code, text = run("ingest-dump", dump, "--out", out, "--chunk-mb", 100_000_000, "--no-progress")
    assert (code, text) == (1, "Error: --chunk-mb 100000000 is more than 1024; give at most 1024 (memory is about "
                               "4 x workers x --chunk-mb; the default, 32, is fastest)\n")
    assert not out.exists()


@pytest.mark.parametrize("error", [MemoryError(), OSError(errno.ENOMEM, "Cannot allocate memory")])
def test_running_out_of_memory_says_to_lower_chunk_mb_or_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 error: BaseException) -> None:
    """ENOMEM (an mmap of a chunk's spool slot) had said "check the path and its permissions"."""
    import wikidata_index.ingest as ing

    def no_memory(*args: object, **kwargs: object) -> Iterator[object]:
        raise error
        yield  # a generator, as iter_chunks is

    monkeypatch.setattr(ing, "iter_chunks", no_memory)
    dump = _write(tmp_path / "d.json", _dump_bytes(_synthetic(12)))
    with pytest.raises(InputError) as err:
        ingest_dump(dump, tmp_path / "ix", workers=1, progress=False, chunk_bytes=64 << 20)
    assert str(err.value) == (f"{dump}: out of memory while ingesting with --workers 1 and --chunk-mb 64 (memory is "
                              "about 4 x workers x --chunk-mb); lower --chunk-mb or --workers, then rerun")
