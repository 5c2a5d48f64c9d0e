"""``envbench name-overlap``: the table, the exit code, the JSON, the Example."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.envbench.cli.invoke import run, run_examples


def test_the_example_runs_and_the_pools_share_no_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    lines = run_examples("name-overlap")
    code, out = run(*lines[-1].split()[1:], "--out", "overlap.json")
    assert code == 0 and out.splitlines()[-1] == "the pools share no name"
    got = json.loads((tmp_path / "overlap.json").read_text())
    assert got["ok"] is True and [r["shared"] for r in got["rows"]] == [0, 0, 0]
    assert all(r["of"] > 0 for r in got["rows"])


def test_twins_that_take_test_names_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the recipe's overlap step fails on pools that overlap: twins held off the training file only
    monkeypatch.chdir(tmp_path)
    run_examples("name-overlap")
    code, out = run("generate", "data/sample/docs/train.json", "--index", "data/index", "--links",
                    "data/sample/links.json", "--pool", "train", "--seeds", "1", "--twins", "--no-progress",
                    "--exclude-names-from", "data/sample/docs/train.json", "--out", "data/free")
    assert code == 0, out
    code, out = run("name-overlap", "--twins", "data/free/train_twins.json", "--twins-source",
                    "data/sample/docs/train.json", "--env", "data/env/test_env.json", "--env-source",
                    "data/sample/docs/test.json", "--out", "bad.json")
    assert code == 1
    table, error = out.splitlines()[:-1], out.splitlines()[-1]
    shared = json.loads((tmp_path / "bad.json").read_text())["rows"][0]
    assert shared["key"] == "twins_in_test" and shared["shared"] > 0
    assert table[-1] == "the pools share names (see above)"
    assert error == (f"Error: the name pools overlap: {shared['shared']} of {shared['of']} new names of the twins are "
                     f"test mention names (first: {shared['examples'][0]!r}); generate the twins with "
                     "--exclude-names-from the test file and its Env version, and the Env version with "
                     "--exclude-names-from the training documents")


def test_a_renamed_file_needs_its_source(tmp_path: Path) -> None:
    twins = tmp_path / "t.json"
    twins.write_text("[]")
    code, out = run("name-overlap", "--twins", twins)
    assert (code, out) == (1, f"Error: --twins {twins}: pass the file it was generated from as --twins-source, so "
                              "that its new names can be told from the names it kept\n")
