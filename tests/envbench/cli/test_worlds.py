"""CLI: make-sample, kb-from-corpus, validate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from envbench.cli import cli


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "sample"
    r = CliRunner().invoke(cli, ["make-sample", "--out", str(out), "--docs", "30"])
    assert r.exit_code == 0, r.output
    assert r.output.startswith(f"wrote {out}: 1196 items, 71 classes, 99 properties")
    assert "documents train 18, dev 6, test 6" in r.output
    return out


def test_make_sample_writes_the_documented_files(sample: Path) -> None:
    for f in ("wikidata-sample.json.gz", "docs/train.json", "docs/dev.json", "docs/test.json", "links.json",
              "docs/test.linked-docred.json"):
        assert (sample / f).is_file(), f


def test_make_sample_rejects_tiny_worlds(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["make-sample", "--out", str(tmp_path), "--entities", "10"])
    assert r.exit_code == 2
    assert "Invalid value for '--entities': 10 is not in the range x>=60." in r.output


def test_validate_reports_per_file(sample: Path) -> None:
    r = CliRunner().invoke(cli, ["validate", str(sample / "docs/test.json"), str(sample / "docs/test.linked-docred.json")])
    assert r.exit_code == 0, r.output
    assert r.output.splitlines() == [
        f"{sample / 'docs/test.json'}: DocRED, 6 documents, 6 valid, 0 skipped, 0 warnings",
        f"{sample / 'docs/test.linked-docred.json'}: Linked-DocRED, 6 documents, 6 valid, 0 skipped, 0 warnings",
    ]


def test_validate_stops_on_the_first_invalid_document_unless_skipping(sample: Path, tmp_path: Path) -> None:
    docs = json.loads((sample / "docs/dev.json").read_text())
    docs[1]["labels"][0]["evidence"] = [99]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(docs))
    r = CliRunner().invoke(cli, ["validate", str(bad)])
    assert r.exit_code == 1
    title = docs[1]["title"]
    n = len(docs[1]["sents"])
    assert r.output == (f"Error: {bad}: document 1 {title!r}: label 0: evidence sentence 99 is out of range "
                        f"({n} sentences); fix the evidence list; or pass --skip-invalid to skip invalid documents\n")
    r = CliRunner().invoke(cli, ["validate", str(bad), "--skip-invalid"])
    assert r.exit_code == 0
    assert r.output.splitlines()[0] == f"{bad}: DocRED, 6 documents, 5 valid, 1 skipped, 0 warnings"
    assert r.output.splitlines()[1].startswith(f"  skipped: {bad}: document 1 {title!r}: label 0")
    r = CliRunner().invoke(cli, ["validate", str(bad), "--skip-invalid", "--json"])
    assert json.loads(r.output)["skipped"] == 1


def test_validate_names_a_missing_file(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["validate", str(tmp_path / "nope.json")])
    assert r.exit_code == 1
    assert r.output == f"Error: no such file: {tmp_path / 'nope.json'}; check the path\n"


def test_kb_from_corpus_prints_the_report(sample: Path, tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["kb-from-corpus", str(sample / "docs/dev.json"), str(sample / "docs/test.json"),
                                 "--out", str(tmp_path / "kb.json.gz"), "--links", str(tmp_path / "links.json")])
    assert r.exit_code == 0, r.output
    assert "items per inferred type:" in r.output and "human (Q5)" in r.output
    assert "typed finer than coarse:" in r.output and "aliases per item: 0:" in r.output
    links = json.loads((tmp_path / "links.json").read_text())
    assert len(links) == 12


def test_help_texts_have_examples() -> None:
    for cmd in ("make-sample", "kb-from-corpus", "validate"):
        r = CliRunner().invoke(cli, [cmd, "--help"])
        assert r.exit_code == 0 and "Example:" in r.output, cmd


def test_validate_names_a_prediction_file(tmp_path: Path) -> None:
    pred = tmp_path / "pred.json"
    pred.write_text(json.dumps([{"title": "Loud Tour", "h_idx": 0, "t_idx": 1, "r": "P17"}]))
    for cmd in (["validate", str(pred)],
                ["kb-from-corpus", str(pred), "--out", str(tmp_path / "kb.json.gz"), "--links", str(tmp_path / "l.json")]):
        r = CliRunner().invoke(cli, cmd)
        assert r.exit_code == 1
        assert r.output == (
            f"Error: {pred}: holds predictions (a list of {{title, h_idx, t_idx, r}}), not DocRED documents; give a "
            "DocRED-format file (title, sents, vertexSet) here, and predictions to `envbench evaluate --pred`\n"
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pred.json"]


def test_unwritable_output_is_one_line(sample: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = CliRunner().invoke(cli, ["make-sample", "--out", str(blocker / "sample"), "--entities", "60", "--docs", "3"])
    assert r.exit_code == 1
    assert r.output == (f"Error: {blocker / 'sample'}: Not a directory; a file stands where a folder is needed; "
                        "choose another path\n")
    r = CliRunner().invoke(cli, ["kb-from-corpus", str(sample / "docs/dev.json"), "--out", str(blocker / "kb.json.gz"),
                                 "--links", str(tmp_path / "links.json")])
    assert r.exit_code == 1
    assert r.output == f"Error: {blocker}: File exists; a file stands where a folder is needed; choose another path\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_os_errors_become_one_line_but_a_closed_pipe_stays_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    import click
    from click.testing import CliRunner

    import envbench.cli as cli_module

    @click.command("fails")
    @click.argument("kind")
    def fails(kind: str) -> None:
        if kind == "pipe":
            raise BrokenPipeError(32, "Broken pipe")
        raise PermissionError(13, "Permission denied", "out/scores.json")

    module = types.ModuleType("envbench_test_fails")
    module.fails = fails  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "envbench_test_fails", module)
    monkeypatch.setitem(cli_module.COMMANDS, "fails", "envbench_test_fails:fails")
    res = CliRunner().invoke(cli_module.cli, ["fails", "perm"])
    assert res.exit_code == 1
    assert res.output == ("Error: out/scores.json: Permission denied; choose a location you can write to "
                          "(or fix its permissions)\n")
    res = CliRunner().invoke(cli_module.cli, ["fails", "pipe"])  # click ends quietly when piped into `head`
    assert (res.exit_code, res.output) == (1, "")


def test_truncated_compressed_input_is_one_line(sample: Path, tmp_path: Path) -> None:
    # regression: a truncated .gz made click print a bare "Aborted!" (EOFError), a bad .zst a traceback
    import gzip

    data = gzip.compress((sample / "docs/dev.json").read_bytes())
    cut = tmp_path / "dev.json.gz"
    cut.write_bytes(data[: len(data) // 2])
    bad_zst = tmp_path / "dev.json.zst"
    bad_zst.write_bytes(b"not zstd")
    for path, reason in ((cut, "Compressed file ended before the end-of-stream marker was reached"),
                         (bad_zst, "zstd decompress error: Unknown frame descriptor")):
        for cmd in (["validate", str(path)], ["kb-from-corpus", str(path), "--out", str(tmp_path / "o" / "kb.json.gz"),
                                              "--links", str(tmp_path / "o" / "l.json")]):
            r = CliRunner().invoke(cli, cmd)
            assert r.exit_code == 1, r.output
            assert r.output == (f"Error: {path}: cannot decompress it ({reason}); the file is corrupt or ends early; "
                                "download it again or compress it again\n")
    assert not (tmp_path / "o").exists()
