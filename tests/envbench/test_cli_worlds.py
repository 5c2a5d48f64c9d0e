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
