"""CLI: make-sample, kb-from-corpus, validate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from envbench.cli import cli
from etl.io import sha256_file


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
    assert "Invalid value for '--entities': 10 is not in the range 60<=x<=100000000." in r.output
    # and endless ones: 10**11 items ran until killed, writing nothing (a hostile-input probe)
    r = CliRunner().invoke(cli, ["make-sample", "--out", str(tmp_path), "--entities", str(10**11)])
    assert r.exit_code == 2
    assert "Invalid value for '--entities': 100000000000 is not in the range 60<=x<=100000000." in r.output
    # a full world is built in memory: beyond 2,000,000 items only --lean streams them (100,000,000 had grown
    # silently towards some 250 GB)
    r = CliRunner().invoke(cli, ["make-sample", "--out", str(tmp_path / "w"), "--entities", "2000001"])
    assert (r.exit_code, r.output) == (1, "Error: --entities 2,000,001 is more than a full world of 2,000,000 items, "
                                          "which is built in memory (about 3 KB an item); pass --lean to stream the "
                                          "items beyond the default world\n")
    assert list(tmp_path.iterdir()) == []


def test_validate_reports_per_file(sample: Path) -> None:
    r = CliRunner().invoke(cli, ["validate", str(sample / "docs/test.json"), str(sample / "docs/test.linked-docred.json")])
    assert r.exit_code == 0, r.output
    releases = [x for x in r.output.splitlines() if x.startswith("  release: ")]
    assert len(releases) == 2 and all("a modified or unknown version" in x for x in releases)  # not DocRED's files
    lines = [x for x in r.output.splitlines() if not x.startswith("  release: ")]
    assert lines[:2] == [
        f"{sample / 'docs/test.json'}: DocRED, 6 documents, 6 valid, 0 skipped, 0 warnings",
        f"{sample / 'docs/test.linked-docred.json'}: Linked-DocRED, 6 documents, 6 valid, 0 skipped, 7 warnings",
    ]
    # Linked-DocRED merges the entities linked to one page and re-points their relations, so one fact can be
    # stated twice: a warning (scorers count it once)
    assert len(lines) == 2 + 7 and all(" (the same h, t and r); scorers count the fact once" in w for w in lines[2:])


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
    assert r.output.splitlines()[1].startswith("  release: a modified or unknown version")
    assert r.output.splitlines()[2].startswith(f"  skipped: {bad}: document 1 {title!r}: label 0")
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
    assert "items per inferred type, the 10 largest:" in r.output and "human (Q5)" in r.output
    assert "typed finer than coarse:" in r.output and "aliases per item: 0:" in r.output
    assert "typed by: " in r.output and "items carry demonyms (P1549)" in r.output
    links = json.loads((tmp_path / "links.json").read_text())
    assert len(links) == 12
    per_type = json.loads((tmp_path / "kb.json.gz.manifest.json").read_text())["report"]["per_type"]
    listed = [x for x in r.output.splitlines() if x.startswith("  ") and not x.startswith("  ...")]
    assert len(per_type) > 10 and len(listed) == 10
    assert f"  ... and {len(per_type) - 10} more classes of " in r.output and "--verbose" in r.output
    r = CliRunner().invoke(cli, ["kb-from-corpus", str(sample / "docs/dev.json"), str(sample / "docs/test.json"),
                                 "--out", str(tmp_path / "kb.json.gz"), "--links", str(tmp_path / "links.json"),
                                 "--force", "--verbose"])
    assert r.exit_code == 0, r.output
    assert len([x for x in r.output.splitlines() if x.startswith("  ")]) == len(per_type)


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
    assert r.output == f"Error: --out {blocker / 'sample'}: {blocker} is a file, not a folder; choose another path\n"
    r = CliRunner().invoke(cli, ["kb-from-corpus", str(sample / "docs/dev.json"), "--out", str(blocker / "kb.json.gz"),
                                 "--links", str(tmp_path / "links.json")])
    assert r.exit_code == 1
    assert r.output == f"Error: --out {blocker / 'kb.json.gz'}: {blocker} is a file, not a folder; choose another path\n"
    r = CliRunner().invoke(cli, ["kb-from-corpus", str(sample / "docs/dev.json"), "--out", str(tmp_path / "kb.json.gz"),
                                 "--links", str(blocker / "links.json")])
    assert r.exit_code == 1
    assert r.output == f"Error: --links {blocker / 'links.json'}: {blocker} is a file, not a folder; choose another path\n"
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
    bad_zst.write_bytes(b"\x28\xb5\x2f\xfdgarbage")  # zstd's magic bytes, then no valid frame
    for path, reason in ((cut, "Compressed file ended before the end-of-stream marker was reached"),
                         (bad_zst, "zstd decompressor error: Dictionary mismatch")):
        for cmd in (["validate", str(path)], ["kb-from-corpus", str(path), "--out", str(tmp_path / "o" / "kb.json.gz"),
                                              "--links", str(tmp_path / "o" / "l.json")]):
            r = CliRunner().invoke(cli, cmd)
            assert r.exit_code == 1, r.output
            assert r.output == (f"Error: {path}: cannot decompress it ({reason}); the file is corrupt or ends early; "
                                "download it again or compress it again\n")
    assert not (tmp_path / "o").exists()


def test_validate_json_reports_every_file_even_an_invalid_one(sample: Path, tmp_path: Path) -> None:
    """`validate --json` had printed no JSON for an invalid file and skipped the files after it."""
    import zstandard

    docs = json.loads((sample / "docs/dev.json").read_text())
    docs[0]["title"] = ""
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(docs))
    whole = zstandard.ZstdCompressor().compress((sample / "docs/dev.json").read_bytes())
    cut = tmp_path / "cut.json.zst"
    cut.write_bytes(whole[: len(whole) // 2])
    good = sample / "docs/test.json"
    r = CliRunner().invoke(cli, ["validate", "--json", str(bad), str(cut), str(good)])
    assert r.exit_code == 1
    assert [json.loads(line) for line in r.output.splitlines()] == [
        {"file": str(bad), "error": f"{bad}: document 0 '': title: is empty; give every document a title: it names "
                                    "the document in predictions, links and the Env copies; or pass --skip-invalid "
                                    "to skip invalid documents"},
        {"file": str(cut), "error": f"{cut}: cannot decompress it (zstd frame ends early); the file is corrupt or "
                                    "ends early; download it again or compress it again"},
        {"file": str(good), "format": "DocRED", "documents": 6, "valid": 6, "skipped": 0, "warnings": 0,
         "skipped_examples": [], "warning_examples": [],
         "release": {"official": False, "corpus": None, "split": None, "bytes": good.stat().st_size,
                     "sha256": sha256_file(good)}},
    ]
    # without --json the first invalid file stops the run, as before
    r = CliRunner().invoke(cli, ["validate", str(cut), str(good)])
    assert (r.exit_code, r.output) == (1, f"Error: {cut}: cannot decompress it (zstd frame ends early); the file is "
                                          "corrupt or ends early; download it again or compress it again\n")


def test_make_sample_rerun_is_up_to_date_and_force_writes_again(tmp_path: Path) -> None:
    out = tmp_path / "s"
    args = ["make-sample", "--out", str(out), "--entities", "60", "--docs", "3"]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0 and r.output.startswith(f"wrote {out}: 124 items"), r.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["step"] == "make-sample" and manifest["parameters"] == {
        "seed": 0, "entities": 60, "docs": 3, "lean": False}
    assert sorted(o["name"] for o in manifest["outputs"]) == [
        "docs/dev.json", "docs/test.json", "docs/test.linked-docred.json", "docs/train.json", "links.json",
        "wikidata-sample.json.gz"]
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    r = CliRunner().invoke(cli, args)
    assert (r.exit_code, r.output) == (0, f"{out} is up to date (same seed and sizes); nothing to do. "
                                          "Pass --force to write it again.\n")
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()} == before
    (out / "links.json").write_text("{}")  # a damaged output makes the rerun write again
    r = CliRunner().invoke(cli, args)
    assert r.output.startswith(f"wrote {out}: 124 items") and json.loads((out / "links.json").read_text())
    r = CliRunner().invoke(cli, [*args, "--force"])
    assert r.exit_code == 0 and r.output.startswith(f"wrote {out}: 124 items")


def test_kb_from_corpus_skip_invalid_says_how_many_and_why(sample: Path, tmp_path: Path) -> None:
    # regression (issue 17, item 14): --skip-invalid used to drop documents without a word
    docs = json.loads((sample / "docs/dev.json").read_text())
    docs[2]["labels"][0]["r"] = "P0"
    docs[4]["vertexSet"][0][0]["sent_id"] = 99
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(docs))
    args = ["kb-from-corpus", str(bad), "--out", str(tmp_path / "kb.json.gz"), "--links", str(tmp_path / "l.json"),
            "--skip-invalid"]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[-1] == (
        f"skipped 2 invalid documents of {bad}; the first: document 2 {docs[2]['title']!r}: label 0: relation 'P0' "
        "is not one of the 96 DocRED relations; use a DocRED property id such as P17")
    assert len(json.loads((tmp_path / "l.json").read_text())) == 4
    assert json.loads((tmp_path / "kb.json.gz.manifest.json").read_text())["step"] == "kb-from-corpus"
    r = CliRunner().invoke(cli, args)
    assert (r.exit_code, r.output) == (0, f"{tmp_path / 'kb.json.gz'} and {tmp_path / 'l.json'} are up to date (same "
                                          "documents, index and options); nothing to do. Pass --force to build them "
                                          "again.\n")


def test_a_mention_type_outside_docred_is_an_error(sample: Path, tmp_path: Path) -> None:
    # regression (issue 17, item 13): a type such as "PERSON" passed validate and generate
    docs = json.loads((sample / "docs/test.json").read_text())
    docs[1]["vertexSet"][0][0]["type"] = "PERSON"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(docs))
    r = CliRunner().invoke(cli, ["validate", str(bad)])
    assert r.exit_code == 1
    assert r.output == (f"Error: {bad}: document 1 {docs[1]['title']!r}: entity 0 mention 0: type 'PERSON' is not a "
                        "DocRED type; give each mention one of PER, ORG, LOC, MISC, NUM, TIME (MISC when none fits); "
                        "or pass --skip-invalid to skip invalid documents\n")
    r = CliRunner().invoke(cli, ["validate", str(bad), "--skip-invalid"])
    assert r.output.splitlines()[0] == f"{bad}: DocRED, 6 documents, 5 valid, 1 skipped, 0 warnings"


@pytest.mark.parametrize(("change", "problem"), [
    (lambda d: d["labels"][0].update(evidence=5),
     "label 0: evidence 5 is not a list; write evidence as a list of sentence ids, e.g. [0, 2]"),
    (lambda d: d.update(labels=5),
     "labels: is an integer, not a list; write labels as a list of {h, t, r, evidence} objects (or leave it out)"),
    (lambda d: d["labels"][0].update(h=True), "label 0: h=true is not an entity index; write h and t as 0-based "
                                              "integers"),
])
def test_validate_names_hostile_gold_and_skips_it(sample: Path, tmp_path: Path, change, problem: str) -> None:
    """These ended in `TypeError: 'int' object is not iterable` (or passed, h=true) in validate, generate,
    evaluate and icl prompts (issue 29)."""
    docs = json.loads((sample / "docs/dev.json").read_text())
    change(docs[1])
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(docs))
    title = docs[1]["title"]
    r = CliRunner().invoke(cli, ["validate", str(bad)])
    assert r.exit_code == 1
    assert r.output == (f"Error: {bad}: document 1 {title!r}: {problem}; or pass --skip-invalid to skip invalid "
                        "documents\n")
    r = CliRunner().invoke(cli, ["validate", str(bad), "--skip-invalid"])
    assert r.exit_code == 0 and r.output.splitlines()[0] == f"{bad}: DocRED, 6 documents, 5 valid, 1 skipped, 0 warnings"
    r = CliRunner().invoke(cli, ["evaluate", "--gold", str(bad), "--pred", str(bad)])
    assert r.exit_code == 1 and r.output.startswith(f"Error: {bad}: document 1 {title!r}: {problem}")


def test_make_sample_refuses_an_empty_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--out ""` wrote the world into the current folder, among the user's files."""
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(cli, ["make-sample", "--out", ""])
    assert (r.exit_code, r.output) == (1, "Error: --out is empty; give the folder for the sample world, e.g. "
                                          "--out data/sample\n")
    assert list(tmp_path.iterdir()) == []


def test_kb_from_corpus_names_the_links_option_for_a_file_it_did_not_write(sample: Path, tmp_path: Path) -> None:
    mine = tmp_path / "ul.json"
    mine.write_text('{"mine": 1}')
    r = CliRunner().invoke(cli, ["kb-from-corpus", str(sample / "docs/dev.json"), "--out", str(tmp_path / "kb.json.gz"),
                                 "--links", str(mine)])
    assert (r.exit_code, r.output) == (1, f"Error: --links {mine}: ul.json is there and no `kb-from-corpus` run wrote "
                                          "it; move it, or choose another --links, or pass --force to replace it\n")
    assert mine.read_text() == '{"mine": 1}' and not (tmp_path / "kb.json.gz").exists()


def test_kb_from_corpus_names_the_links_option_for_an_input_it_would_overwrite(sample: Path, tmp_path: Path) -> None:
    """A --links that is a hard link to an input document file had been reported as --out's."""
    docs, hard = tmp_path / "t.json", tmp_path / "hard.json"
    docs.write_bytes((sample / "docs/dev.json").read_bytes())
    hard.hardlink_to(docs)
    r = CliRunner().invoke(cli, ["kb-from-corpus", str(docs), "--out", str(tmp_path / "kb.json.gz"),
                                 "--links", str(hard)])
    assert (r.exit_code, r.output) == (1, f"Error: --links {hard}: the input {docs} would be overwritten by this "
                                          f"step's output {hard}; choose another output location or move the input\n")
    assert docs.read_bytes() == (sample / "docs/dev.json").read_bytes()


def test_make_sample_refuses_a_seed_beyond_64_bits(tmp_path: Path) -> None:
    # it had ended in a traceback (orjson stores 64-bit integers) and left half a world behind
    r = CliRunner().invoke(cli, ["make-sample", "--out", str(tmp_path / "w"), "--seed", str(2**70), "--docs", "3",
                                 "--entities", "60"])
    assert r.exit_code == 2 and r.output.endswith(f"Error: Invalid value for '--seed': {2**70} is not in the range "
                                                  "-9223372036854775808<=x<=9223372036854775807.\n")
    assert not (tmp_path / "w").exists()


@pytest.mark.parametrize("char", ["\u200d", "\u200b", "\u200f", "\ufeff", "\u00ad"])
def test_validate_warns_of_a_format_character_as_of_u202e(sample: Path, tmp_path: Path, char: str) -> None:
    """Issue 56: zero-width joiner and space, right-to-left mark, BOM and soft hyphen passed `validate` silently
    (only U+202E was caught); each is a warning naming the document, the token and the code point."""
    docs = json.loads((sample / "docs/dev.json").read_text())
    docs[1]["sents"][0].append(f"Vor{char}dia")
    bad = tmp_path / "zw.json"
    bad.write_text(json.dumps(docs))
    r = CliRunner().invoke(cli, ["validate", str(bad)])
    assert r.exit_code == 0, r.output
    n = len(docs[1]["sents"][0]) - 1
    # the "release:" line (a modified file, not an official one) is validate's own and tested with it
    lines = [line for line in r.output.splitlines() if not line.startswith("  release: ")]
    assert lines[:2] == [
        f"{bad}: DocRED, 6 documents, 6 valid, 0 skipped, 1 warnings",
        f"  warning: {bad}: document 1 {docs[1]['title']!r}: sentence 0 token {n}: holds the invisible format "
        f"character U+{ord(char):04X}; it makes a name look like another (and would come out inside new names); "
        "remove it unless the text needs it"]
