"""Locks and verify on the sample world: an identical rerun passes, a changed parameter and an edited
document are named precisely, inputs are checked, Parquet is compared by rows, and the JSON outputs do
not depend on PYTHONHASHSEED, locale, time zone or worker count."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson
import pyarrow.parquet as pq
import pytest

import envbench.rename.candidates as candidates
import envbench.rename.generate as generate_module
from envbench.core.errors import EnvbenchError
from envbench.rename.generate import generate
from envbench.rename.lock import (
    LOCK_FORMAT,
    build_lock,
    describe_output,
    describe_path,
    dumps_lock,
    first_difference,
    index_identity,
    read_lock,
    verify,
    write_lock,
)
from etl.io import sha256_file
from tests.envbench.index_fixture import sample_env, sample_world
from wikidata_index.ingest import ingest_dump, write_tables

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def locked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample benchmark and its lock, OUT/test_env.lock.json (read only: tests copy it)."""
    w = sample_world()
    out = sample_env(tmp_path_factory.mktemp("locked") / "env")
    write_lock(out, w.index)
    return out


def _copy(src: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "published"
    shutil.copytree(src, dest)
    return dest


def _tree(path: Path) -> list[tuple[str, str]]:
    return sorted((str(p.relative_to(path)), sha256_file(p) if p.is_file() else "dir") for p in path.rglob("*"))


@pytest.fixture(autouse=True)
def _own_temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """verify's temporary folders go to this test's own folder, so other processes' runs of verify (tests
    in parallel, another checkout's suite) never show up in what a test counts as left behind."""
    own = tmp_path / "tmp"
    own.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(own))


def _verify_temp_dirs() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("envbench-verify-*")}


def test_lock_content(locked: Path) -> None:
    w = sample_world()
    lock = read_lock(locked / "test_env.lock.json")
    assert lock["format"] == LOCK_FORMAT
    assert lock["inputs"]["docs"]["sha256"] == sha256_file(w.test)
    assert lock["inputs"]["links"]["sha256"] == sha256_file(w.links)
    assert lock["parameters"]["seeds"] == 5 and lock["parameters"]["pool"] == "eval"
    dump = sample_world().sample / "wikidata-sample.json.gz"
    assert lock["index"] == {"dump": dump.name, "dump_sha256": sha256_file(dump), "languages": ["en"],
                             "index_format": 1}
    assert {"python", "duckdb", "pyarrow", "orjson"} <= set(lock["versions"])
    by_name = {o["name"]: o for o in lock["outputs"]}
    assert sorted(by_name) == ["stats.json", "substitutions.parquet", "test_env.json"]
    docs = json.loads((locked / "test_env.json").read_text())
    entry = by_name["test_env.json"]
    assert entry["sha256"] == sha256_file(locked / "test_env.json")
    assert [t for t, _ in entry["documents"]] == [d["title"] for d in docs]
    canon = orjson.dumps(docs[7], option=orjson.OPT_SORT_KEYS)
    assert entry["documents"][7][1] == hashlib.sha256(canon).hexdigest()[:16]
    subs = by_name["substitutions.parquet"]
    assert subs["kind"] == "parquet" and subs["rows"] == pq.read_metadata(locked / "substitutions.parquet").num_rows


def test_lock_file_is_one_line_per_document(locked: Path) -> None:
    text = (locked / "test_env.lock.json").read_text()
    first = json.loads((locked / "test_env.json").read_text())[0]["title"]
    assert f'        ["{first}","' in text
    assert orjson.loads(text) == read_lock(locked / "test_env.lock.json")  # still plain JSON
    lock = read_lock(locked / "test_env.lock.json")
    assert dumps_lock(lock).decode() == text


def test_identical_rerun_passes_and_leaves_nothing(locked: Path) -> None:
    w = sample_world()
    before_index, before_out, before_tmp = _tree(w.index), _tree(locked), _verify_temp_dirs()
    res = verify(locked / "test_env.lock.json", w.test, w.index, links=w.links)
    assert res.ok, res.report()
    assert res.problems == [] and res.report().startswith(f"OK: {locked / 'test_env.lock.json'}: regenerated "
                                                         "stats.json, substitutions.parquet, test_env.json")
    assert (_tree(w.index), _tree(locked), _verify_temp_dirs()) == (before_index, before_out, before_tmp)


def _name_diff(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> str:
    """The expected message, found the plain way: the first document, entity and mention whose name differs."""
    for a, b in zip(old, new):
        for e, (ea, eb) in enumerate(zip(a["vertexSet"], b["vertexSet"])):
            for m, (ma, mb) in enumerate(zip(ea, eb)):
                if ma["name"] != mb["name"]:
                    return (f"test_env.json: {a['title']!r} entity {e} mention {m}: name {ma['name']!r} "
                            f"in the lock's run, {mb['name']!r} now")
    raise AssertionError("no name differs")


def test_changed_parameter_names_document_entity_and_field(locked: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    w = sample_world()
    # what the code would do with a first candidate window of 1 instead of 4
    monkeypatch.setattr(candidates, "WINDOW", 1)
    monkeypatch.setattr(generate_module, "WINDOW", 1)
    other = tmp_path / "other"
    index = tmp_path / "index"
    shutil.copytree(w.index, index)  # the candidate cache is per index; keep the shared one untouched
    generate(w.test, index, other, links=w.links, seeds=5, progress=False, allow_training_names=True)
    expected = _name_diff(json.loads((locked / "test_env.json").read_text()),
                          json.loads((other / "test_env.json").read_text()))
    before = _verify_temp_dirs()
    res = verify(locked / "test_env.lock.json", w.test, index, links=w.links)
    assert not res.ok and _verify_temp_dirs() == before  # nothing left behind on a failure either
    assert res.problems[0] == expected
    assert "parameters that differ from the lock's: window 4 in the lock, 1 now" in res.problems
    assert res.report().splitlines()[:2] == [
        f"FAIL: {locked / 'test_env.lock.json'}: the regenerated benchmark differs from the lock", expected]


def _edit(out: Path) -> tuple[str, str]:
    """Rename entity 4 mention 0 of the third document with five entities; (title, old name)."""
    path = out / "test_env.json"
    docs = json.loads(path.read_text())
    doc = [d for d in docs if len(d["vertexSet"]) >= 5][2]
    old = doc["vertexSet"][4][0]["name"]
    doc["vertexSet"][4][0]["name"] = "Edited Name"
    path.write_bytes(orjson.dumps(docs, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE))
    return doc["title"], old


def test_edited_document_in_the_locked_run(locked: Path, tmp_path: Path) -> None:
    """A lock of a benchmark whose document was edited by hand: regenerating names that document."""
    w = sample_world()
    pub = _copy(locked, tmp_path)
    title, old = _edit(pub)
    manifest = json.loads((pub / "manifest.json").read_text())  # as if generate had written the edit
    for o in manifest["outputs"]:
        if o["name"] == "test_env.json":
            o["sha256"], o["bytes"] = sha256_file(pub / "test_env.json"), (pub / "test_env.json").stat().st_size
    (pub / "manifest.json").write_text(json.dumps(manifest))
    lock = write_lock(pub, w.index)
    res = verify(lock, w.test, w.index, links=w.links)
    assert not res.ok
    assert res.problems == [f"test_env.json: {title!r} entity 4 mention 0: name 'Edited Name' in the lock's run, "
                            f"{old!r} now"]
    # without the published files: the document is named by its hash
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(lock, alone / lock.name)
    res = verify(alone / lock.name, w.test, w.index, links=w.links)
    assert res.problems[0].startswith(f"test_env.json: {title!r} (document ")
    assert res.problems[0].endswith("now; pass --published DIR with the published files to see the field")


def test_edited_published_document(locked: Path, tmp_path: Path) -> None:
    """The lock is right, the published file was edited afterwards: verify names it."""
    w = sample_world()
    pub = _copy(locked, tmp_path)
    title, old = _edit(pub)
    res = verify(pub / "test_env.lock.json", w.test, w.index, links=w.links)
    assert not res.ok
    assert res.problems == [f"published test_env.json: {title!r} entity 4 mention 0: name 'Edited Name' "
                            f"in the published file, {old!r} in the lock's run"]


def test_lock_refuses_edited_outputs(locked: Path, tmp_path: Path) -> None:
    pub = _copy(locked, tmp_path)
    _edit(pub)
    with pytest.raises(EnvbenchError, match=r"test_env.json: not the file generate wrote"):
        build_lock(pub, sample_world().index)


def test_input_mismatch_names_the_input(locked: Path, tmp_path: Path) -> None:
    w = sample_world()
    docs = json.loads(w.test.read_text())
    other = tmp_path / "test.json"
    other.write_text(json.dumps(docs[:-1]))
    lock = locked / "test_env.lock.json"
    want = read_lock(lock)["inputs"]["docs"]["sha256"][:12]
    with pytest.raises(EnvbenchError) as err:
        verify(lock, other, w.index, links=w.links)
    assert str(err.value) == (f"--docs {other}: sha256 {sha256_file(other)[:12]}... differs from the lock's "
                              f"(test.json, {want}...); pass the file the lock was made from")
    with pytest.raises(EnvbenchError, match=r"^the lock was made with --links links.json \(sha256 "):
        verify(lock, w.test, w.index)


def test_parquet_compared_by_rows_not_bytes(locked: Path, tmp_path: Path) -> None:
    table = pq.read_table(locked / "substitutions.parquet")
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pq.write_table(table, a, compression="zstd")
    pq.write_table(table, b, compression="none", row_group_size=100)
    da, db = describe_output(a), describe_output(b)
    assert da["sha256"] != db["sha256"]
    assert (da["rows"], da["rows_sha256"]) == (db["rows"], db["rows_sha256"])
    pq.write_table(table.slice(1), b)
    assert describe_output(b)["rows_sha256"] != da["rows_sha256"]  # the check can fail


def test_other_parquet_bytes_are_a_note_not_a_failure(locked: Path, tmp_path: Path) -> None:
    w = sample_world()
    pub = _copy(locked, tmp_path)
    lock = json.loads((pub / "test_env.lock.json").read_text())
    for o in lock["outputs"]:
        if o["name"] == "substitutions.parquet":
            o["sha256"] = "0" * 64  # as if another pyarrow had written the published file
    (pub / "test_env.lock.json").write_text(json.dumps(lock))
    res = verify(pub / "test_env.lock.json", w.test, w.index, links=w.links)
    assert res.ok, res.report()
    assert any(n.startswith("note: substitutions.parquet: the same ") for n in res.notes)


def test_index_identity_ignores_writer_bytes(tmp_path: Path) -> None:
    w = sample_world()
    dump = w.sample / "wikidata-sample.json.gz"
    ingest_dump(dump, tmp_path / "again", progress=False, workers=1, chunk_lines=7)
    assert index_identity(tmp_path / "again") == index_identity(w.index)
    rows = [{"id": "Q1", "popularity": 1}, {"id": "Q2", "popularity": 2}]
    one = index_identity(write_tables(tmp_path / "t1", {"entities": rows}))
    two = index_identity(write_tables(tmp_path / "t2", {"entities": rows[::-1]}))
    three = index_identity(write_tables(tmp_path / "t3", {"entities": rows[:1]}))
    assert one == two and one != three and "rows_sha256" in one


def test_first_difference_and_paths() -> None:
    a = {"title": "T", "sents": [["A", "b"]], "vertexSet": [[{"name": "A", "pos": [0, 1]}]], "labels": []}
    b = json.loads(json.dumps(a))
    assert first_difference(a, b) is None
    b["sents"][0][0], b["vertexSet"][0][0]["name"], b["vertexSet"][0][0]["pos"] = "C", "C", [0, 2]
    assert first_difference(a, b) == (("vertexSet", 0, 0, "name"), "A", "C")  # the entity, before the tokens
    assert describe_path(("vertexSet", 4, 0, "name")) == ("entity 4 mention 0", "name")
    assert describe_path(("vertexSet", 4, 0, "pos", 1)) == ("entity 4 mention 0", "pos[1]")
    assert describe_path(("sents", 3, 5)) == ("sentence 3 token 5", "")
    assert describe_path(("labels", 2, "r")) == ("label 2", "r")
    assert describe_path(("title",)) == ("", "title")


def test_read_lock_errors(tmp_path: Path) -> None:
    bad = tmp_path / "x.lock.json"
    bad.write_text('{"format": "other"}')
    with pytest.raises(EnvbenchError, match=r"not an envbench lock \(format 'other'"):
        read_lock(bad)
    bad.write_text("{")
    with pytest.raises(EnvbenchError, match=r"x.lock.json: not valid JSON"):
        read_lock(bad)


_CHILD = """
import sys
from pathlib import Path
import wikidata_index.index as wi
import envbench.rename.generate as g
threads, chunk = int(sys.argv[5]), int(sys.argv[6])
init = wi.WikidataIndex.__init__
def with_threads(self, path, **kw):
    init(self, path, **{**kw, "threads": threads})
wi.WikidataIndex.__init__ = with_threads
g.CHUNK_RUNS = chunk
g.generate(sys.argv[1], sys.argv[2], sys.argv[4], links=sys.argv[3], seeds=5, progress=False, allow_training_names=True)
"""


@pytest.mark.slow
def test_json_outputs_do_not_depend_on_hash_seed_locale_time_zone_or_workers(locked: Path, tmp_path: Path) -> None:
    w = sample_world()
    locales = subprocess.run(["locale", "-a"], capture_output=True, text=True).stdout.split() \
        if shutil.which("locale") else []
    other_locale = next((loc for loc in locales if loc.lower().startswith(("de_de", "fr_fr", "tr_tr"))), "C.UTF-8")
    settings = [  # (PYTHONHASHSEED, LC_ALL, TZ, DuckDB threads of generate, runs per chunk)
        ("1", "C", "Pacific/Kiritimati", 1, 3),
        ("4242", other_locale, "America/St_Johns", 4, 100_000),
    ]
    for n, (seed, loc, tz, threads, chunk) in enumerate(settings):
        index = tmp_path / f"index{n}"
        if n == 0:  # an index ingested with one worker, in chunks of 7 lines
            ingest_dump(w.sample / "wikidata-sample.json.gz", index, progress=False, workers=1, chunk_lines=7)
        else:
            shutil.copytree(w.index, index, ignore=shutil.ignore_patterns("derived"))  # the cache is rebuilt too
        env = {**os.environ, "PYTHONHASHSEED": seed, "LC_ALL": loc, "LANG": loc, "TZ": tz,
               "PYTHONPATH": str(REPO)}
        out = tmp_path / f"out{n}"
        subprocess.run([sys.executable, "-c", _CHILD, str(w.test), str(index), str(w.links), str(out),
                        str(threads), str(chunk)], env=env, check=True, timeout=600)
        for name in ("test_env.json", "stats.json"):
            assert (out / name).read_bytes() == (locked / name).read_bytes(), (name, seed, loc, tz, threads)
        assert _content(build_lock(out, index)) == _content(read_lock(locked / "test_env.lock.json"))


def _content(lock: dict[str, Any]) -> list[dict[str, Any]]:
    """The outputs less the Parquet bytes (information only)."""
    return [{k: v for k, v in o.items() if o["kind"] != "parquet" or k not in ("bytes", "sha256")}
            for o in lock["outputs"]]


def test_nothing_left_behind_when_generate_fails(locked: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    w = sample_world()

    def failing(docs: Any, index: Any, out: Path, **kw: Any) -> None:
        Path(out).mkdir(parents=True)
        (Path(out) / "test_env.json").write_text("[")
        raise EnvbenchError("disk on fire")

    monkeypatch.setattr(generate_module, "generate", failing)
    before, index_before = _verify_temp_dirs(), _tree(w.index)
    with pytest.raises(EnvbenchError, match="disk on fire"):
        verify(locked / "test_env.lock.json", w.test, w.index, links=w.links)
    assert (_verify_temp_dirs(), _tree(w.index)) == (before, index_before)
