"""Hostile input, one class of failure at a time, through the real command line (issue 17).

Each case is what a careless or hostile user does; each must end in exit code 1 (or a warning and
exit 0 where the input is usable) with ONE line that names the file and the fix, must not print a
traceback, and must leave nothing half-written behind. The regression tests of each fix live beside
their modules; this module keeps the classes together so a new command can be checked against all.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from envbench.cli import cli
from etl.step import mark_staging
from tests.envbench.index_fixture import sample_world


def _run(*args: str, stdin: bytes | None = None) -> tuple[int, str]:
    res = CliRunner().invoke(cli, list(args), input=stdin)
    assert "Traceback" not in res.output, res.output
    return res.exit_code, res.output


def _error_line(out: str) -> str:
    """The one error line (progress bars and warnings may precede it)."""
    lines = [ln for ln in out.splitlines() if ln.startswith("Error: ")]
    assert len(lines) == 1, out
    return lines[0]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    return sample_world()


# ---------------------------------------------------------------------------- data loss
def _tree(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` but the index's own hash cache (rewritten when a copy is first read)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != ".file-hashes.json"}


def test_no_output_lands_in_the_index_a_step_reads(tmp_path: Path, world) -> None:
    index = tmp_path / "index"
    shutil.copytree(world.index, index)
    before = _tree(index)
    part = next(iter(sorted((index / "names").glob("*.parquet"))))
    # each named by the option that gave it (--report and --links had been called --out)
    for args, option, target in ((("link", str(world.test), "--index", str(index), "--out", str(index / "manifest.json")),
                                  "--out", index / "manifest.json"),
                                 (("link", str(world.test), "--index", str(index), "--out", str(tmp_path / "l.json"),
                                   "--report", str(part), "--force"), "--report", part),
                                 (("kb-from-corpus", str(world.test), "--index", str(index), "--out",
                                   str(tmp_path / "kb.json.gz"), "--links", str(index / "new-links.json")),
                                  "--links", index / "new-links.json")):
        code, out = _run(*args)
        assert code == 1 and _error_line(out) == (f"Error: {option} {target}: inside {index}, which this step reads; "
                                                  "choose an output outside it"), out
    assert _tree(index) == before


def test_an_output_named_as_the_steps_own_manifest_is_refused(tmp_path: Path, world) -> None:
    out = tmp_path / "x.json"
    code, text = _run("link", str(world.test), "--index", str(world.index), "--out", str(out),
                      "--report", str(tmp_path / "x.json.manifest.json"))
    assert code == 1 and _error_line(text) == (f"Error: --out {out}: {tmp_path / 'x.json.manifest.json'} is the "
                                               "manifest this step writes beside x.json; give that output another name")
    assert list(tmp_path.iterdir()) == []


def test_ingest_into_a_folder_of_the_users_removes_nothing(tmp_path: Path, world) -> None:
    dump = world.sample / "wikidata-sample.json.gz"
    out = tmp_path / "out"
    (out / "names").mkdir(parents=True)
    (out / "names" / "mine.txt").write_text("mine")
    (out / "manifest.json").write_text("mine")  # not JSON: no step's manifest (they are written atomically)
    code, text = _run("ingest-dump", str(dump), "--out", str(out), "--no-progress")
    assert code == 1 and _error_line(text) == (f"Error: --out {out}: manifest.json there is not a manifest an "
                                               "envbench step wrote (not a JSON object); move it, or choose another "
                                               "--out, or pass --force to replace it")
    # with --force it is taken for a damaged one of ours, which still vouches for no file inside a folder
    code, text = _run("ingest-dump", str(dump), "--out", str(out), "--no-progress", "--force")
    assert code == 1 and _error_line(text) == (f"Error: --out {out}: names/ holds files that no `ingest-dump` run "
                                               "wrote (names/mine.txt); move them out of it, or choose another --out")
    (out / "names" / "mine.txt").unlink()
    (out / "manifest.json").unlink()
    (out / "index.duckdb").write_text("mine")
    code, text = _run("ingest-dump", str(dump), "--out", str(out), "--no-progress")
    assert code == 1 and _error_line(text) == (f"Error: --out {out}: index.duckdb is there and no ingest-dump run "
                                               "wrote it; move it, or choose another --out, or pass --force to "
                                               "replace it")
    assert (out / "index.duckdb").read_text() == "mine" and not (out / "manifest.json").exists()
    code, text = _run("ingest-dump", str(dump), "--out", "", "--no-progress")
    assert (code, _error_line(text)) == (1, "Error: --out is empty; give the index folder, e.g. --out data/index")


def test_an_empty_dump_never_replaces_a_good_index(tmp_path: Path, world) -> None:
    idx = tmp_path / "idx"
    shutil.copytree(world.index, idx)
    before = sorted(p.relative_to(idx) for p in idx.rglob("*"))
    empty = tmp_path / "e.json"
    empty.write_text("[\n]\n")
    code, out = _run("ingest-dump", str(empty), "--out", str(idx))
    assert code == 1 and _error_line(out) == (f"Error: {empty}: the dump holds no entities (an empty list); give a "
                                              "Wikidata JSON dump such as latest-all.json.gz")
    assert sorted(p.relative_to(idx) for p in idx.rglob("*")) == before


def test_an_input_inside_out_is_never_overwritten(tmp_path: Path, world) -> None:
    out = tmp_path / "o"
    out.mkdir()
    links = out / "stats.json"
    shutil.copyfile(world.links, links)
    code, text = _run("generate", "--allow-training-names", str(world.test), "--index", str(world.index), "--links", str(links), "--seeds", "1",
                      "--out", str(out))
    assert code == 1 and "would be overwritten by this step's output" in _error_line(text)
    assert links.read_bytes() == Path(world.links).read_bytes()


# ---------------------------------------------------------------------------- tracebacks
def test_a_damaged_index_table_is_named(tmp_path: Path, world) -> None:
    idx = tmp_path / "idx"
    shutil.copytree(world.index, idx)
    part = sorted((idx / "names").glob("*.parquet"))[0]
    part.write_bytes(part.read_bytes()[:1000])
    for args in (["index", "info", str(idx)], ["generate", "--allow-training-names", str(world.test), "--index", str(idx), "--links",
                                                str(world.links), "--out", str(tmp_path / "o")]):
        code, out = _run(*args)
        line = _error_line(out)
        assert code == 1 and line.startswith(f"Error: index at {idx}: table 'names' is damaged"), line
        assert line.endswith(f"re-ingest: envbench ingest-dump DUMP --out {idx} --force")
    assert not (tmp_path / "o").exists()


def test_a_manifest_that_is_not_an_object(tmp_path: Path, world) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / "manifest.json").write_text("[1, 2]")
    args = ["generate", "--allow-training-names", str(world.test), "--index", str(world.index), "--links", str(world.links), "--seeds", "1",
            "--out", str(out)]
    code, text = _run(*args)  # no step writes such a manifest: somebody's file, kept unless --force
    assert code == 1 and _error_line(text) == (f"Error: --out {out}: manifest.json there is not a manifest an "
                                               "envbench step wrote (not a JSON object); move it, or choose another "
                                               "--out, or pass --force to replace it")
    assert (out / "manifest.json").read_text() == "[1, 2]"
    code, text = _run(*args, "--force")
    assert code == 0, text
    assert json.loads((out / "manifest.json").read_text())["step"] == "generate"


# ---------------------------------------------------------------------------- silent degradation
def test_a_mention_type_outside_docred_is_an_error(tmp_path: Path, world) -> None:
    docs = json.loads(Path(world.test).read_text())
    docs[0]["vertexSet"][0][0]["type"] = "XYZ"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(docs))
    code, out = _run("validate", str(bad))
    line = _error_line(out)
    assert code == 1 and "type 'XYZ' is not a DocRED type; give each mention one of PER, ORG, LOC, MISC, NUM, TIME" in line


def test_train_equal_to_gold_warns(tmp_path: Path, world) -> None:
    pred = tmp_path / "pred.json"
    pred.write_text("[]")
    code, out = _run("evaluate", "--gold", str(world.test), "--pred", str(pred), "--train", str(world.test))
    assert code == 0 and f"Warning: --train {world.test} is the same file as --gold {world.test}" in out


def test_an_env_looking_title_is_scored_as_plain(tmp_path: Path, world) -> None:
    doc = json.loads(Path(world.test).read_text())[:1]
    doc[0]["title"] = "Su-27"
    gold = tmp_path / "su.json"
    gold.write_text(json.dumps(doc))
    pred = tmp_path / "pred.json"
    pred.write_text("[]")
    code, out = _run("evaluate", "--gold", str(gold), "--pred", str(pred))
    assert code == 0 and "Note: scored as a plain benchmark: the titles of" in out


# ---------------------------------------------------------------------------- misleading messages
def test_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    bad = tmp_path / "ff.json"
    bad.write_bytes(b'[{"title": "a\xff"}]')
    code, out = _run("validate", str(bad))
    assert code == 1 and _error_line(out) == (f"Error: {bad}: not UTF-8 text: byte 13 (0xFF, line 1) is not valid "
                                              "UTF-8; save the DocRED JSON file as UTF-8, or re-download it")


def test_compression_is_read_from_the_first_bytes(tmp_path: Path, world, caplog: pytest.LogCaptureFixture) -> None:
    misnamed = tmp_path / "g.json.bz2"
    misnamed.write_bytes(gzip.compress(Path(world.test).read_bytes()))
    code, out = _run("validate", str(misnamed))
    assert code == 0 and out.splitlines()[0].endswith("DocRED, 20 documents, 20 valid, 0 skipped, 0 warnings")
    assert f"{misnamed} is gz-compressed (by its first bytes) although its name ends in .bz2; reading it as gz" in [
        r.getMessage() for r in caplog.records]


def test_a_compressed_dump_on_stdin_is_decompressed(tmp_path: Path, world) -> None:
    data = Path(world.root / "sample" / "wikidata-sample.json.gz").read_bytes()
    code, out = _run("ingest-dump", "-", "--out", str(tmp_path / "idx"), stdin=data)
    assert code == 0, out
    assert (tmp_path / "idx" / "manifest.json").is_file()


def test_empty_stdin_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    code, out = _run("ingest-dump", "-", "--out", str(tmp_path / "o"), stdin=b"")
    assert code == 1 and _error_line(out) == "Error: -: the input is empty (0 bytes after decompression); check the file"
    assert not (tmp_path / "o").exists()


# ---------------------------------------------------------------------------- leftovers and races
def test_a_killed_run_leaves_nothing_a_rerun_trips_on(tmp_path: Path, world) -> None:
    out = tmp_path / "o"
    out.mkdir()
    stale = out / ".staging-generate-0123abcd"  # what a SIGKILL during staging leaves: marked, half written
    stale.mkdir()
    mark_staging(stale, "generate")
    (stale / "half.json").write_text("[")
    # a user's folders named like staging are not ours: the rerun leaves them (a hostile-input probe found
    # them removed)
    (out / ".staging-generate-mine").mkdir()
    (out / ".staging-generate-mine" / "keep.txt").write_text("precious")
    (out / ".generate-x1y2").mkdir()
    code, text = _run("generate", "--allow-training-names", str(world.test), "--index", str(world.index), "--links", str(world.links),
                      "--seeds", "1", "--out", str(out))
    assert code == 0, text
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == [".generate-x1y2",
                                                                              ".staging-generate-mine"]
    assert (out / ".staging-generate-mine" / "keep.txt").read_text() == "precious"


def test_sigterm_unwinds_like_ctrl_c_and_leaves_no_staging(tmp_path: Path, world) -> None:
    """timeout, CI and systemd stop a run with SIGTERM: the command line turns it into an exit that
    runs every step's cleanup (the staging folder of generate used to stay behind)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "o"
    proc = subprocess.Popen([sys.executable, "-c", "from envbench.cli import main; main()", "generate",
                             "--allow-training-names", str(world.test), "--index", str(world.index), "--links", str(world.links),
                             "--seeds", "400", "--out", str(out), "--no-progress"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not list(out.glob(".staging-generate-*")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    assert proc.poll() is None, "generate ended before its staging folder was seen"
    os.kill(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM and b"Traceback" not in err, err
    assert not out.exists() or not list(out.iterdir())


def test_links_made_for_another_index_are_refused_and_gaps_warned(tmp_path: Path, world) -> None:
    # issue 17 items 10 and 12, through generate: the sample world's links against a KB of the same
    # documents (other QIDs) are refused; a link file missing a title warns and renames the rest
    from envbench.worlds.kb_from_corpus import kb_from_corpus
    from wikidata_index.ingest import ingest_dump

    kb_from_corpus([world.test], tmp_path / "kb.json.gz", tmp_path / "kb-links.json")
    ingest_dump(tmp_path / "kb.json.gz", tmp_path / "kbidx", progress=False)
    code, out = _run("generate", "--allow-training-names", str(world.test), "--index", str(tmp_path / "kbidx"), "--links", str(world.links),
                     "--seeds", "1", "--out", str(tmp_path / "o"))
    line = _error_line(out)
    assert code == 1 and "the link file was most likely made for another index" in line, line
    assert not (tmp_path / "o").exists()
    links = json.loads(Path(world.links).read_text())
    first = json.loads(Path(world.test).read_text())[0]["title"]
    del links[first]
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps(links))
    code, out = _run("generate", "--allow-training-names", str(world.test), "--index", str(world.index), "--links", str(partial),
                     "--seeds", "1", "--out", str(tmp_path / "o2"))
    assert code == 0, out
    assert (f"warning: {partial}: 1 of the 20 documents have no entry in this link file (e.g. {first!r}); their "
            "entities stay unlinked") in out.splitlines()


def test_a_usage_error_is_one_line(tmp_path: Path) -> None:
    """Click's usage block and its "Try ... for help" no longer precede the error line."""
    assert _run("generate", "--allow-training-names", "x", "--pool", "bad") == (
        2, "Error: Invalid value for '--pool': 'bad' is not one of 'eval', 'train'.\n")
    assert _run("link", str(tmp_path / "d.json")) == (2, "Error: Missing option '--index'.\n")
    assert _run("icl", "prompts", "--limit", "-1") == (2, "Error: Invalid value for '--limit': -1 is not in the "
                                                          "range x>=1.\n")


# ---------------------------------------------------------------------------- limits of the machine (issue 56)
_UNDER_ULIMIT = """
import resource, sys
resource.setrlimit(resource.RLIMIT_FSIZE, (8 * 1024, 8 * 1024))  # ulimit -f 8
from envbench.cli import main
sys.argv = ["envbench", *sys.argv[1:]]
main()
"""


@pytest.mark.parametrize("command", ["generate", "make-sample"])
def test_a_file_size_limit_is_said_as_ingest_dump_says_it(tmp_path: Path, world, command: str) -> None:
    """Under `ulimit -f` generate and make-sample said "File too large; check the path and its permissions",
    with no path and blaming permissions; they name --out and the limit, as ingest-dump does."""
    import os
    import subprocess
    import sys

    from tests.conftest import REPO

    out = tmp_path / "o"
    args = (["generate", str(world.test), "--index", str(world.index), "--links", str(world.links), "--out",
             str(out), "--no-progress", "--allow-training-names"] if command == "generate" else ["make-sample", "--out", str(out)])
    res = subprocess.run([sys.executable, "-c", _UNDER_ULIMIT, *args], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(REPO)), check=False)
    assert (res.returncode, res.stderr) == (1, f"Error: {out}: a file grew past the file-size limit (ulimit -f 8) "
                                               "while writing; raise the limit (ulimit -f unlimited), then rerun\n")
    assert not out.exists()
