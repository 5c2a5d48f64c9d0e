"""`envbench ingest-dump` and `envbench index ...` through click's CliRunner."""

from __future__ import annotations

import errno
import gzip
import os
import shutil
import subprocess
import sys
from pathlib import Path

import click
import orjson
import pytest
from click.testing import CliRunner

from envbench.cli import cli
from tests.conftest import REPO, shared_path

MOCK = ("wikidata-samples", "wikidata-toolkit", "mock-dump-for-long-testing.json")  # 101 entities


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "index"
    dump = shared_path("wikidata-samples", "syvb-wikidata", "Q42.json")
    res = CliRunner().invoke(cli, ["ingest-dump", str(dump), "--out", str(out), "--workers", "1", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert res.output.startswith(f"index written to {out} in ")
    assert "rows: entities 1, names 4, types 1," in res.output
    return out


def test_index_info(index: Path) -> None:
    res = CliRunner().invoke(cli, ["index", "info", str(index)])
    assert res.exit_code == 0, res.output
    assert "input: Q42.json (223,067 bytes" in res.output
    assert "  entities                           1" in res.output
    res = CliRunner().invoke(cli, ["index", "info", str(index), "--json"])
    data = orjson.loads(res.output)
    assert data["rows"]["names"] == 4 and data["manifest"]["step"] == "ingest-dump"


def test_index_get(index: Path) -> None:
    res = CliRunner().invoke(cli, ["index", "get", str(index), "Q42"])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[:3] == [
        "Q42  Douglas Adams",
        "  description: English writer and humorist",
        "  aliases:     Douglas N. Adams, Douglas Noel Adams, Douglas Noël Adams",
    ]
    assert "  types:       Q5" in res.output and "sitelinks:   115 (enwiki: Douglas Adams)" in res.output
    assert "\n  P21:         Q6581097 (male, normal)\n" in res.output  # what keeps a renamed person's gender
    data = orjson.loads(CliRunner().invoke(cli, ["index", "get", str(index), "Q42", "--json"]).output)
    assert data["types"] == ["Q5"] and data["popularity"] > 0 and data["label"] == "Douglas Adams"
    assert data["p21"] == [["Q6581097", "normal"]]


def test_index_get_shows_demonyms(tmp_path: Path, index: Path) -> None:
    """P1549 demonyms in the --lang asked for (English is always ingested, others with --languages);
    no demonyms line for an item without any (Q42 above)."""
    assert "demonyms" not in CliRunner().invoke(cli, ["index", "get", str(index), "Q42"]).output
    out = tmp_path / "pt"
    dump = shared_path("wikidata-samples", "syvb-wikidata", "Q45.json")
    res = CliRunner().invoke(cli, ["ingest-dump", str(dump), "--out", str(out), "--languages", "fr",
                                   "--workers", "1", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "property_constraints 0, demonyms 3" in res.output
    res = CliRunner().invoke(cli, ["index", "get", str(out), "Q45"])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[:5] == [
        "Q45  Portugal", "  description: country in southwestern Europe",
        "  aliases:     -",  # names were ingested in French only
        "  demonyms:    Portuguese", "  types:       Q20181813, Q3624078, Q6256"]
    res = CliRunner().invoke(cli, ["index", "get", str(out), "Q45", "--lang", "fr"])
    assert "\n  demonyms:    Portugais, Portugaise\n" in res.output
    # a language the index holds no names in is refused, not shown as an entity without aliases
    for command in (["get", str(out), "Q45"], ["find", str(out), "Portugal"]):
        bad = CliRunner().invoke(cli, ["index", *command, "--lang", "de"])
        assert (bad.exit_code, bad.output) == (1, f"Error: {out} holds names in fr only, not 'de'; pass --lang fr, "
                                                  "or ingest the dump again with --languages fr,de\n")
    # a language asked for is quoted cut short (a 5,000-character one was echoed whole, twice)
    bad = CliRunner().invoke(cli, ["index", "find", str(out), "Portugal", "--lang", "y" * 5000])
    assert (bad.exit_code, bad.output) == (1, f"Error: {out} holds names in fr only, not '{'y' * 36}...; pass --lang "
                                              "fr, or ingest the dump again with --languages fr,<the language>\n")
    # a search reads names only: English, whose labels the card shows, finds nothing here either
    bad = CliRunner().invoke(cli, ["index", "find", str(out), "Portugal"])
    assert (bad.exit_code, bad.output) == (1, f"Error: {out} holds names in fr only, not 'en'; pass --lang fr, "
                                              "or ingest the dump again with --languages fr,en\n")
    data = orjson.loads(CliRunner().invoke(cli, ["index", "get", str(out), "Q45", "--json"]).output)
    assert data["demonyms"] == ["Portuguese"] and data["p21"] == []
    assert "P21" not in res.output  # a country has none: no line
    data = orjson.loads(CliRunner().invoke(cli, ["index", "get", str(index), "Q42", "--json"]).output)
    assert data["demonyms"] == []


def test_index_get_unknown_id(index: Path) -> None:
    res = CliRunner().invoke(cli, ["index", "get", str(index), "Q1"])
    assert res.exit_code == 1
    assert res.output == f"Error: 'Q1' is not in the index at {index}; check the id (e.g. Q42)\n"


def test_index_get_takes_an_id_written_in_lower_case(index: Path) -> None:
    """`index get IDX q42` had said "'q42' is not in the index" (a hostile-input probe): Wikidata ids are
    written with a capital Q, P or L, and the index reads them so."""
    expected = CliRunner().invoke(cli, ["index", "get", str(index), "Q42"]).output
    for given in ("q42", " Q42 "):
        res = CliRunner().invoke(cli, ["index", "get", str(index), given])
        assert (res.exit_code, res.output) == (0, expected), given
    res = CliRunner().invoke(cli, ["index", "get", str(index), "x42"])
    assert (res.exit_code, res.output) == (1, f"Error: 'x42' is not in the index at {index}; check the id (e.g. Q42)\n")


def test_index_find(index: Path) -> None:
    res = CliRunner().invoke(cli, ["index", "find", str(index), "douglas noel ADAMS"])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("Q42\tDouglas Adams - English writer and humorist\t(popularity ")
    res = CliRunner().invoke(cli, ["index", "find", str(index), "Nobody", "--json"])
    assert res.exit_code == 0 and orjson.loads(res.output) == []


def test_index_commands_cut_a_long_query_short(index: Path) -> None:
    """A name, id or language of 5,000 characters was echoed whole (twice for --lang): cut to 40."""
    long = "x" * 5000
    cut = "'" + "x" * 36 + "..."
    res = CliRunner().invoke(cli, ["index", "find", str(index), long])
    assert (res.exit_code, res.output) == (0, f"no entity named {cut} in en\n")
    res = CliRunner().invoke(cli, ["index", "find", str(index), "Douglas Adams", "--lang", long])
    assert (res.exit_code, res.output) == (1, f"Error: {index} holds names in en only, not {cut}; pass --lang en, or "
                                              "ingest the dump again with --languages en,<the language>\n")
    res = CliRunner().invoke(cli, ["index", "get", str(index), long])
    assert (res.exit_code, res.output) == (1, f"Error: {cut} is not in the index at {index}; check the id (e.g. Q42)\n")


def test_missing_index_message(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["index", "info", str(tmp_path / "x")])
    assert res.exit_code == 1
    assert res.output == (f"Error: no index at {tmp_path / 'x'}; run `envbench ingest-dump DUMP --out "
                          f"{tmp_path / 'x'}` first\n")


def test_ingest_errors(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["ingest-dump", str(tmp_path / "none.json"), "--out", str(tmp_path / "o")])
    assert res.exit_code == 1
    assert res.output == f"Error: no such dump file: {tmp_path / 'none.json'}; check the path\n"
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"[\n{oops,\n{oops\n]\n")
    res = CliRunner().invoke(cli, ["ingest-dump", str(bad), "--out", str(tmp_path / "o"), "--max-errors", "1",
                                   "--no-progress", "--workers", "1"])
    assert res.exit_code == 1
    assert res.output.endswith(
        f"Error: {bad}: 2 malformed entities, more than --max-errors 1 (first at line 2: invalid JSON); "
        "check that this is a Wikidata JSON dump, or raise --max-errors\n"
    )


def test_help_has_examples() -> None:
    for args in (["ingest-dump", "--help"], ["index", "--help"], ["index", "get", "--help"]):
        res = CliRunner().invoke(cli, args)
        assert res.exit_code == 0 and "Example:" in res.output


def test_ingest_from_stdin(tmp_path: Path) -> None:
    data = shared_path("wikidata-samples", "wikidata-toolkit", "mock-dump-for-testing.json").read_bytes()
    res = CliRunner().invoke(cli, ["ingest-dump", "-", "--out", str(tmp_path / "o"), "--no-progress", "--workers", "1"],
                             input=data)
    assert res.exit_code == 0, res.output
    assert "rows: entities 3, names 0," in res.output and "skipped_lexeme 1" in res.output
    manifest = orjson.loads((tmp_path / "o" / "manifest.json").read_bytes())
    assert manifest["inputs"][0]["name"] == "-" and manifest["inputs"][0]["bytes"] == len(data)


def test_a_file_that_is_not_a_dump_is_refused(tmp_path: Path) -> None:
    docs = tmp_path / "dev.json"
    docs.write_bytes(orjson.dumps([{"title": "T", "sents": [["a"]], "vertexSet": []}]))
    out = tmp_path / "index"
    res = CliRunner().invoke(cli, ["ingest-dump", str(docs), "--out", str(out), "--workers", "1", "--no-progress"])
    assert res.exit_code == 1
    assert res.output.splitlines()[-1] == (
        f"Error: {docs}: none of its 1 records is a Wikidata entity (line 1: record is not a JSON object); "
        "give a Wikidata JSON dump such as latest-all.json.gz"
    )
    assert not out.exists()  # issue 17 #24: a refused input into a new folder leaves no folder, lock or stage


def test_extractor_c_without_the_build_names_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from wikidata_index import ingest

    monkeypatch.setattr(ingest, "fast_extractor", lambda: None)
    dump = shared_path("wikidata-samples", "syvb-wikidata", "Q42.json")
    args = ["ingest-dump", str(dump), "--out", str(tmp_path / "ix"), "--workers", "1", "--no-progress"]
    res = CliRunner().invoke(cli, [*args, "--extractor", "c"])
    assert res.exit_code == 1
    assert res.output == (
        "Error: the compiled extractor (wikidata_index._fastextract) is not built; reinstall with a C compiler "
        "present (`make setup`), or use --extractor python\n"
    )
    res = CliRunner().invoke(cli, args)  # auto falls back to the Python extractor
    assert res.exit_code == 0 and "rows: entities 1, names 4, types 1," in res.output
    assert orjson.loads((tmp_path / "ix" / "manifest.json").read_bytes())["timings"]["extractor"] == "python"


def _ingest(*args: str, input: bytes | None = None):  # noqa: A002 - click's name
    return CliRunner().invoke(cli, ["ingest-dump", *args, "--no-progress", "--workers", "1"], input=input)


def _reingest(path: Path) -> str:
    return f"re-ingest: envbench ingest-dump DUMP --out {path} --force"


def test_an_empty_dump_does_not_replace_a_good_index(tmp_path: Path) -> None:
    """Issue 17 #1, as reported: `printf '[\\n]\\n' > e.json; envbench ingest-dump e.json --out idx`."""
    idx = tmp_path / "idx"
    assert _ingest(str(shared_path(*MOCK)), "--out", str(idx)).exit_code == 0
    before = (idx / "manifest.json").read_bytes()
    empty = tmp_path / "e.json"
    empty.write_bytes(b"[\n]\n")
    res = _ingest(str(empty), "--out", str(idx))
    assert res.exit_code == 1
    assert res.output == (f"Error: {empty}: the dump holds no entities (an empty list); give a Wikidata JSON dump "
                          "such as latest-all.json.gz\n")
    small = tmp_path / "small.json"
    small.write_bytes(shared_path("wikidata-samples", "syvb-wikidata", "Q42.json").read_bytes())
    res = _ingest(str(small), "--out", str(idx))
    assert res.exit_code == 1
    assert res.output == (f"Error: --out {idx}: the new index would have 1 entities where the index there has 101 "
                          "(made from mock-dump-for-long-testing.json); pass --force to replace it anyway, or "
                          "choose another --out\n")
    assert (idx / "manifest.json").read_bytes() == before
    assert sorted(p.name for p in idx.iterdir() if p.name.startswith(".")) == [".file-hashes.json"]
    res = _ingest(str(small), "--out", str(idx), "--force")
    assert res.exit_code == 0 and "rows: entities 1," in res.output


def test_a_compressed_dump_on_stdin_is_decompressed(tmp_path: Path) -> None:
    """Issue 17 #22: gzip on stdin was called "not valid UTF-8"."""
    data = shared_path(*MOCK).read_bytes()
    plain = _ingest("-", "--out", str(tmp_path / "plain"), input=data)
    packed = _ingest("-", "--out", str(tmp_path / "gz"), input=gzip.compress(data))
    assert plain.exit_code == packed.exit_code == 0, packed.output
    assert plain.output.splitlines()[1:] == packed.output.splitlines()[1:]  # the same rows and records
    for t in ("entities", "types"):
        assert (tmp_path / "plain" / t / "part-00000.parquet").read_bytes() == \
            (tmp_path / "gz" / t / "part-00000.parquet").read_bytes()


def test_a_dump_inside_the_index_is_refused(tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    (idx / "names").mkdir(parents=True)
    dump = idx / "names" / "d.json"
    dump.write_bytes(shared_path(*MOCK).read_bytes())
    res = _ingest(str(dump), "--out", str(idx))
    assert res.exit_code == 1
    assert res.output == (f"Error: --out {idx}: the dump {dump} would be overwritten by the index written there; "
                          "move the dump or choose another --out\n")


class _Usage:
    free = 10_000


def test_a_full_disk_names_the_folder_and_the_space_needed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 17 #23 (and #24): ENOSPC while staging the first chunk of a new --out."""
    import wikidata_index.ingest as ing

    def full(*a, **kw):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ing.pq, "write_table", full)
    monkeypatch.setattr(ing.shutil, "disk_usage", lambda p: _Usage)
    dump = shared_path(*MOCK)
    out = tmp_path / "new"
    res = _ingest(str(dump), "--out", str(out))
    assert res.exit_code == 1
    total = dump.stat().st_size * ing.STAGED_PER_RAW_BYTE * (1 + ing.FINAL_PER_STAGED_BYTE)
    assert res.output == (f"Error: {out}: no space left on the device while writing the index (10.0 KB free; it "
                          f"needs about {total / 1000:,.1f} KB there in all, {(total - 10_000) / 1000:,.1f} KB more); "
                          "free some space or choose another --out, then rerun\n")
    assert not out.exists()


def test_a_full_disk_in_the_final_step_keeps_the_chunks_for_a_resume(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import wikidata_index.ingest as ing

    real = ing.PartWriter.close

    def full(self):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ing.PartWriter, "close", full)
    monkeypatch.setattr(ing.shutil, "disk_usage", lambda p: _Usage)
    out = tmp_path / "new"
    res = CliRunner().invoke(cli, ["ingest-dump", str(shared_path(*MOCK)), "--out", str(out), "--no-progress", "--workers", "1",
                                   "--chunk-mb", "1"])
    assert res.exit_code == 1
    assert res.output.startswith(f"Error: {out}: no space left on the device while writing the index (10.0 KB free")
    assert res.output.endswith("free some space or choose another --out, then rerun the same command: its 1 "
                               "finished chunks are kept and resume\n")
    assert [p.name for p in out.iterdir()] == [next(out.glob(".staging-*")).name]  # no lock file, no tables
    monkeypatch.setattr(ing.PartWriter, "close", real)
    from wikidata_index.ingest import ingest_dump

    res = ingest_dump(shared_path(*MOCK), out, workers=1, progress=False, chunk_bytes=1 << 20)  # the same command
    assert res.resumed_chunks == 1 and res.rows["entities"] == 101
    assert not list(out.glob(".staging-*")) and not (out / ".ingest.lock").exists()


def test_a_full_disk_in_another_library_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """DuckDB's IOException is no OSError: the CLI still gives one line, not a traceback."""
    import wikidata_index.index as wi

    class IOException(Exception):
        pass

    def full(*a, **kw):
        raise IOException('IO Error: Could not write file "/x/y.tmp": No space left on device')

    monkeypatch.setattr(wi, "index_info", full)
    res = CliRunner().invoke(cli, ["index", "info", str(tmp_path)])
    assert res.exit_code == 1
    assert res.output.startswith("Error: no space left on the device (")
    assert res.output.endswith(' free there): IO Error: Could not write file "/x/y.tmp": No space left on device; '
                               "free some space there, or write elsewhere (an --out on another disk)\n")


def _damaged_copy(index: Path, tmp_path: Path, how: str) -> Path:
    ix = tmp_path / how
    shutil.copytree(index, ix)
    names = ix / "names" / "part-00000.parquet"
    data = bytearray(names.read_bytes())
    if how == "truncated":
        del data[300:]
    else:  # the first page header, flipped: DuckDB fails on every read of the table
        data[4:64] = bytes(b ^ 0xFF for b in data[4:64])
    names.write_bytes(bytes(data))
    return ix


def test_a_damaged_table_is_one_line_in_every_index_command(index: Path, tmp_path: Path) -> None:
    """Issue 17 #4: 40-line DuckDB tracebacks in `index info`, `index find` and `index get`."""
    cut = _damaged_copy(index, tmp_path, "truncated")
    size = (index / "names" / "part-00000.parquet").stat().st_size
    for args in (["info"], ["find", "Douglas Adams"], ["get", "Q42"]):
        res = CliRunner().invoke(cli, ["index", args[0], str(cut), *args[1:]])
        assert res.exit_code == 1, res.output
        assert res.output == (f"Error: index at {cut}: table 'names' is damaged (names/part-00000.parquet has 300 "
                              f"bytes, manifest.json says {size:,}); {_reingest(cut)}\n")
    flipped = _damaged_copy(index, tmp_path, "flipped")
    damaged = (f"Error: index at {flipped}: table 'names' is damaged (names/part-00000.parquet does not match its "
               f"sha256 in manifest.json); {_reingest(flipped)}\n")
    for args in (["find", "Douglas Adams"], ["get", "Q42"], ["info", "--verify"]):
        res = CliRunner().invoke(cli, ["index", args[0], str(flipped), *args[1:]])
        assert (res.exit_code, res.output) == (1, damaged)


def test_index_info_verify(index: Path) -> None:
    res = CliRunner().invoke(cli, ["index", "info", str(index), "--verify"])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[-1] == "verified: 10 table files match the sha256s in manifest.json"
    data = orjson.loads(CliRunner().invoke(cli, ["index", "info", str(index), "--verify", "--json"]).output)
    assert data["verified_files"] == 10  # name_tokens since 2026-12-01, genders (P21) since 2026-12-02


def test_index_info_names_a_deleted_table_and_a_missing_manifest(index: Path, tmp_path: Path) -> None:
    """Issue 17 #15: a deleted table was listed as missing nothing; no manifest was accepted."""
    ix = tmp_path / "ix"
    shutil.copytree(index, ix)
    shutil.rmtree(ix / "types")
    res = CliRunner().invoke(cli, ["index", "info", str(ix)])
    assert (res.exit_code, res.output) == (1, f"Error: index at {ix} has no table 'types'; rerun `envbench "
                                              f"ingest-dump DUMP --out {ix} --force`\n")
    (ix / "manifest.json").unlink()
    res = CliRunner().invoke(cli, ["index", "info", str(ix)])
    assert res.exit_code == 1 and res.output.startswith(f"Error: index at {ix} is incomplete: it has no manifest.json")


def test_generate_and_popularity_name_a_damaged_table(tmp_path: Path) -> None:
    """Issue 17 #4 through WikidataIndex: generate (its up-to-date check hashes the files) and
    report's popularity lookup."""
    from envbench.scoring.report.analyses import popularity
    from etl.io import InputError
    from tests.envbench.index_fixture import sample_world

    w = sample_world()
    flipped = _damaged_copy(w.index, tmp_path, "flipped")
    damaged = (f"index at {flipped}: table 'names' is damaged (names/part-00000.parquet does not match its "
               f"sha256 in manifest.json); {_reingest(flipped)}")
    res = CliRunner().invoke(cli, ["generate", "--allow-training-names", str(w.test), "--index", str(flipped), "--links", str(w.links),
                                   "--seeds", "1", "--out", str(tmp_path / "env"), "--no-progress"])
    assert (res.exit_code, res.output.splitlines()[-1]) == (1, f"Error: {damaged}")
    entities = flipped / "entities" / "part-00000.parquet"
    data = bytearray(entities.read_bytes())
    data[4:64] = bytes(b ^ 0xFF for b in data[4:64])
    entities.write_bytes(bytes(data))
    with pytest.raises(InputError, match=r"tables 'entities', 'names' are damaged \(entities/part-00000.parquet and "
                                         r"1 more files do not match their sha256s in manifest.json\)"):
        popularity(flipped, ["Q1"])


_PROBE = """
import threading, sys
from wikidata_index.ingest import ingest_dump
try:
    ingest_dump(sys.argv[1], sys.argv[2], workers=2, progress=False, chunk_lines=1)
except Exception as exc:
    others = [t.name for t in threading.enumerate() if t.name not in ("MainThread", "tqdm_monitor")]
    print(type(exc).__name__, len(others), "duckdb" in sys.modules)
"""


def test_no_thread_outlives_a_failed_ingest(tmp_path: Path) -> None:
    """Issue 17 #3: the DuckDB import started in a thread near the end of parsing raced the
    interpreter's exit after an error, and DuckDB's native code aborted ("terminate called ...")."""
    lexeme = shared_path("wikidata-samples", "wikidata-toolkit", "JsonDeserializer-lexeme.json").read_bytes()
    dump = tmp_path / "lex.json"
    dump.write_bytes(b"[\n" + lexeme.replace(b"\n", b"") + b"\n]\n")  # a dump, but no item or property
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", _PROBE, str(dump), str(tmp_path / "o")], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.stdout.split() == ["InputError", "0", "True"], out.stderr  # the import ran, and was waited for


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_empty_input_never_aborts_at_exit(tmp_path: Path) -> None:
    """Issue 17 #3: about 1 run in 5 died with exit 134/139 after the right error; 50 runs, three
    at a time (stdin, a 0-byte file, a 0-byte .gz), each into its own new --out."""
    empty, empty_gz = tmp_path / "z.json", tmp_path / "z.json.gz"
    empty.write_bytes(b"")
    empty_gz.write_bytes(b"")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    sources = ["-", str(empty), str(empty_gz)]
    for start in range(0, 50, 3):
        runs = []
        for i in range(start, min(start + 3, 50)):
            src = sources[i % 3]
            cmd = [sys.executable, "-m", "envbench", "ingest-dump", src, "--out", str(tmp_path / f"o{i}"), "--no-progress"]
            runs.append((i, src, subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                                  stderr=subprocess.PIPE, env=env, text=True)))
        for i, src, proc in runs:
            _, err = proc.communicate(timeout=60)
            assert (proc.returncode, err) == (
                1, f"Error: {src}: the input is empty (0 bytes after decompression); check the file\n"), f"run {i}"
            assert not (tmp_path / f"o{i}").exists()


def test_a_full_disk_while_writing_a_file_names_it_and_the_space_needed(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 17 #23, for any command that writes through etl.io: the path, what is free and needed."""
    import envbench.cli._errors as errors
    from etl.io import write_json_atomic

    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left")))
    monkeypatch.setattr(errors.shutil, "disk_usage", lambda p: _Usage)
    with pytest.raises(OSError) as exc:
        write_json_atomic(tmp_path / "stats.json", {"x": "y" * 2_000_000})
    assert errors.describe_os_error(exc.value) == (
        f"{tmp_path / 'stats.json'}: no space left on the device (10.0 KB free there, 2.0 MB needed); free some "
        "space there, or write elsewhere (an --out on another disk)")


def test_ingest_stores_name_tokens_unless_told_not_to(tmp_path: Path) -> None:
    """By default the CLI stores DocRED's tokens of the names that need spaCy (an initial, a non-ASCII
    letter), not of "Douglas Adams"; --no-name-tokens leaves the table empty and records no tokenizer."""
    from envbench.core.text import tokenizer_version
    from wikidata_index.index import WikidataIndex

    dump = shared_path("wikidata-samples", "syvb-wikidata", "Q42.json")
    for flag, tokenizer in (([], tokenizer_version()), (["--no-name-tokens"], None)):
        out = tmp_path / f"ix{len(flag)}"
        res = CliRunner().invoke(cli, ["ingest-dump", str(dump), "--out", str(out), "--workers", "1", "--no-progress", *flag])
        assert res.exit_code == 0, res.output
        shown = CliRunner().invoke(cli, ["index", "info", str(out)]).output
        assert ("  name_tokens                        2  (tokens of spacy " in shown) == (tokenizer is not None)
        with WikidataIndex(out) as ix:
            assert ix.name_tokenizer() == tokenizer
            rows = ix.con.execute("SELECT name, tokens FROM name_tokens ORDER BY name").fetchall()
            assert "Douglas Adams" in ix.names("Q42")
        assert rows == ([] if flag else [("Douglas N. Adams", ["Douglas", "N.", "Adams"]),
                                         ("Douglas Noël Adams", ["Douglas", "Noël", "Adams"])])


_LIMITED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))  # ulimit -f 64
from envbench.cli import main
sys.argv = ["envbench", "ingest-dump", sys.argv[1], "--out", sys.argv[2], "--workers", "1", "--no-progress"]
main()
"""


def test_a_file_size_limit_names_the_index_and_blames_no_permission(tmp_path: Path) -> None:
    """Under `ulimit -f 64` the error names the index folder and the limit (Python ignores SIGXFSZ, so
    the write fails with EFBIG, which said 'File too large; check the path and its permissions')."""
    from tests.wikidata_index.test_ingest import _dump_bytes, _synthetic

    dump = tmp_path / "d.json"
    dump.write_bytes(_dump_bytes(_synthetic(3000)))
    out = tmp_path / "ix"
    res = subprocess.run([sys.executable, "-c", _LIMITED, str(dump), str(out)], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(REPO)), check=False)
    assert res.returncode == 1, res.stderr
    assert res.stderr.splitlines()[-1] == (
        f"Error: {out}: a file grew past the file-size limit (ulimit -f 64) while writing the index; raise the "
        "limit (ulimit -f unlimited), then rerun")


def test_the_same_ingest_again_is_up_to_date(tmp_path: Path) -> None:
    dump = shared_path("wikidata-samples", "syvb-wikidata", "Q42.json")
    out = tmp_path / "ix"
    args = ["ingest-dump", str(dump), "--out", str(out), "--workers", "1", "--no-progress"]
    assert CliRunner().invoke(cli, args).exit_code == 0
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0] == (f"index at {out} is up to date (made by the same command from the same "
                                          "dump); pass --force to ingest it again")
    assert CliRunner().invoke(cli, [*args, "--force"]).output.startswith(f"index written to {out} in ")


def test_a_pretty_printed_array_is_named_as_such(tmp_path: Path) -> None:
    """json.dump(entities, f, indent=2) spreads each entity over lines: one line says so (it used to be
    twenty 'invalid JSON' warnings and an error that never named the cause)."""
    dump = tmp_path / "pretty.json"
    dump.write_text(orjson.dumps([{"type": "item", "id": "Q1", "labels": {}}], option=orjson.OPT_INDENT_2).decode())
    res = _ingest(str(dump), "--out", str(tmp_path / "idx"))
    assert res.exit_code == 1
    assert res.output == (f"Error: {dump}: a JSON array written across lines (line 2 is a lone '{{'), not a dump "
                          "with one entity per line; rewrite it one entity per line (for example with jq -c '.[]')\n")
    assert not (tmp_path / "idx").exists()


def test_languages_that_are_no_language_codes_are_refused(tmp_path: Path) -> None:
    dump = tmp_path / "d.json"
    dump.write_text('[\n{"type": "item", "id": "Q1", "labels": {}}\n]\n')
    for bad in ("EN", "*", "../../etc"):
        res = _ingest(str(dump), "--out", str(tmp_path / "idx"), "--languages", bad)
        assert res.exit_code == 1
        assert res.output == (f"Error: --languages {bad!r} is not a Wikidata language code (lower-case letters, "
                              "digits and '-', such as en, de, zh-hant); check the list\n")


def test_the_help_states_the_bounds_the_ingest_enforces() -> None:
    # the CLI does not import the ingest (pyarrow) to print its help, so the numbers are written twice
    from envbench.cli.ingest import ingest_dump
    from wikidata_index.ingest import MAX_CHUNK_MB, MAX_WORKERS

    helps = {p.name: p.help for p in ingest_dump.params if isinstance(p, click.Option)}
    assert f"at most {MAX_WORKERS})" in helps["workers"]
    assert f"at most {MAX_CHUNK_MB} (" in helps["chunk_mb"]


def test_index_get_with_its_arguments_swapped_or_an_empty_id(index: Path, tmp_path: Path, monkeypatch) -> None:
    # a hostile-input probe: "no index at Q5; run `envbench ingest-dump DUMP --out Q5`", and "Error:  is not ..."
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["index", "get", "Q5", str(index)])
    assert (res.exit_code, res.output) == (1, "Error: no index at Q5, a Wikidata id, not a folder; give the folder "
                                              "`envbench ingest-dump --out` wrote (`envbench index get DIR ID`: the "
                                              "folder first)\n")
    res = CliRunner().invoke(cli, ["index", "get", str(index), ""])
    assert (res.exit_code, res.output) == (1, f"Error: '' is not in the index at {index}; check the id (e.g. Q42)\n")


def test_ingest_of_a_device_or_pipe_says_not_a_regular_file(tmp_path: Path) -> None:
    """Issue 56: `ingest-dump /dev/zero` said "no such dump file"; every other reader says "not a regular file"."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for dump in (Path("/dev/zero"), fifo):
        res = _ingest(str(dump), "--out", str(tmp_path / "o"))
        assert (res.exit_code, res.output) == (1, f"Error: {dump}: not a regular file (a pipe, socket or device); "
                                                  "save what it gives to a file, and give that\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]


@pytest.mark.parametrize(("args", "what", "shown", "at"), [
    (["find", "caf\udce9"], "the name", "'caf\\xe9'", "byte 0xE9 at character 3"),
    (["get", "Q\udce942"], "the id", "'Q\\xe942'", "byte 0xE9 at character 1"),
    (["find", "Adams", "--lang", "e\udcffn"], "the language", "'e\\xffn'", "byte 0xFF at character 1"),
    (["get", "Q42", "--lang", "\udce9"], "the language", "'\\xe9'", "byte 0xE9 at character 0"),
])
def test_index_lookups_name_text_that_is_not_utf8(index: Path, args: list[str], what: str, shown: str,
                                                  at: str) -> None:
    """Issue 56: a Latin-1 terminal typing "café" (Python reads the byte 0xE9 as the surrogate U+DCE9) gave a
    DuckDB InvalidInputException traceback."""
    res = CliRunner().invoke(cli, ["index", args[0], str(index), *args[1:]])
    assert (res.exit_code, res.output) == (1, f"Error: {what} {shown} is not UTF-8 text ({at}); the terminal sent "
                                              "another encoding: set it to UTF-8 (e.g. LANG=C.UTF-8) and type it "
                                              "again\n")


def test_index_find_with_latin1_bytes_on_the_command_line(index: Path) -> None:
    """The same through a real process, whose argv holds the raw byte."""
    res = subprocess.run([sys.executable, "-m", "envbench", "index", "find", str(index).encode(), b"caf\xe9"],
                         capture_output=True, env=dict(os.environ, PYTHONPATH=str(REPO), LC_ALL="C.UTF-8"),
                         check=False)
    assert (res.returncode, res.stderr.decode()) == (
        1, "Error: the name 'caf\\xe9' is not UTF-8 text (byte 0xE9 at character 3); the terminal sent another "
           "encoding: set it to UTF-8 (e.g. LANG=C.UTF-8) and type it again\n")
