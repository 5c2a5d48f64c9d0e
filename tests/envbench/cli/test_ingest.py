"""`envbench ingest-dump` and `envbench index ...` through click's CliRunner."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from envbench.cli import cli
from tests.conftest import shared_path


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "index"
    dump = shared_path("wikidata-samples", "syvb-wikidata", "Q42.json")
    res = CliRunner().invoke(cli, ["ingest-dump", str(dump), "--out", str(out), "--workers", "1", "-q"])
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
    data = orjson.loads(CliRunner().invoke(cli, ["index", "get", str(index), "Q42", "--json"]).output)
    assert data["types"] == ["Q5"] and data["popularity"] > 0 and data["label"] == "Douglas Adams"


def test_index_get_unknown_id(index: Path) -> None:
    res = CliRunner().invoke(cli, ["index", "get", str(index), "Q1"])
    assert res.exit_code == 1
    assert res.output == f"Error: Q1 is not in the index at {index}; check the id (e.g. Q42)\n"


def test_index_find(index: Path) -> None:
    res = CliRunner().invoke(cli, ["index", "find", str(index), "douglas noel ADAMS"])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("Q42\tDouglas Adams - English writer and humorist\t(popularity ")
    res = CliRunner().invoke(cli, ["index", "find", str(index), "Nobody", "--json"])
    assert res.exit_code == 0 and orjson.loads(res.output) == []


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
                                   "-q", "--workers", "1"])
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
    res = CliRunner().invoke(cli, ["ingest-dump", "-", "--out", str(tmp_path / "o"), "-q", "--workers", "1"],
                             input=data)
    assert res.exit_code == 0, res.output
    assert "rows: entities 3, names 0," in res.output and "skipped_lexeme 1" in res.output
    manifest = orjson.loads((tmp_path / "o" / "manifest.json").read_bytes())
    assert manifest["inputs"][0]["name"] == "-" and manifest["inputs"][0]["bytes"] == len(data)


def test_a_file_that_is_not_a_dump_is_refused(tmp_path: Path) -> None:
    docs = tmp_path / "dev.json"
    docs.write_bytes(orjson.dumps([{"title": "T", "sents": [["a"]], "vertexSet": []}]))
    out = tmp_path / "index"
    res = CliRunner().invoke(cli, ["ingest-dump", str(docs), "--out", str(out), "--workers", "1", "-q"])
    assert res.exit_code == 1
    assert res.output.splitlines()[-1] == (
        f"Error: {docs}: none of its 1 records is a Wikidata entity (line 1: record is not a JSON object); "
        "give a Wikidata JSON dump such as latest-all.json.gz"
    )
    assert not (out / "manifest.json").exists()  # the staging folder stays for a resume; nothing is published


def test_extractor_c_without_the_build_names_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from wikidata_index import ingest

    monkeypatch.setattr(ingest, "fast_extractor", lambda: None)
    dump = shared_path("wikidata-samples", "syvb-wikidata", "Q42.json")
    args = ["ingest-dump", str(dump), "--out", str(tmp_path / "ix"), "--workers", "1", "-q"]
    res = CliRunner().invoke(cli, [*args, "--extractor", "c"])
    assert res.exit_code == 1
    assert res.output == (
        "Error: the compiled extractor (wikidata_index._fastextract) is not built; reinstall with a C compiler "
        "present (`make setup`), or use --extractor python\n"
    )
    res = CliRunner().invoke(cli, args)  # auto falls back to the Python extractor
    assert res.exit_code == 0 and "rows: entities 1, names 4, types 1," in res.output
    assert orjson.loads((tmp_path / "ix" / "manifest.json").read_bytes())["timings"]["extractor"] == "python"
