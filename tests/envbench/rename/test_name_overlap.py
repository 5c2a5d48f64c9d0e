"""The names an EVRT experiment's twins, scored documents and training share (issue 60)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envbench.core.errors import DataError, EnvbenchError
from envbench.rename.name_overlap import name_overlap, new_names
from tests.envbench.index_fixture import mention


def _doc(title: str, person: str, place: str, year: str = "1990") -> dict[str, Any]:
    """ "<person> moved to <place> in <year> ." with a PER, a LOC and a TIME entity."""
    p, c = person.split(), place.split()
    sent = [*p, "moved", "to", *c, "in", year, "."]
    at = len(p) + 2
    return {"title": title, "sents": [sent],
            "vertexSet": [[mention(person, 0, [0, len(p)], "PER")], [mention(place, 0, [at, at + len(c)], "LOC")],
                          [mention(year, 0, [at + len(c) + 1, at + len(c) + 2], "TIME")]],
            "labels": []}


def _write(path: Path, docs: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(docs))
    return path


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """Training "Anna Vance" in Rome; test "Boris Kell" in Oslo; Env renames him to "Carl Mott" and Oslo to
    "Lima" (twice: seeds 1 and 2); the twin of the training document renames Anna and Rome."""
    return {
        "train": _write(tmp_path / "train.json", [_doc("T", "Anna Vance", "Rome")]),
        "test": _write(tmp_path / "test.json", [_doc("X", "Boris Kell", "Oslo")]),
        "env": _write(tmp_path / "env.json", [_doc("X-1", "Carl Mott", "Lima", "1991"),
                                              _doc("X-2", "Dora Finn", "Oslo", "1992")]),
        "dir": tmp_path,
    }


def _twins(files: dict[str, Path], person: str, place: str) -> Path:
    return _write(files["dir"] / "twins.json", [_doc("T", person, place, "1995")])


def test_new_names_are_the_linked_names_a_source_lacks(files: dict[str, Path]) -> None:
    env = json.loads(files["env"].read_text())
    test = json.loads(files["test"].read_text())
    got = new_names(env, test)
    # "Oslo" was kept in copy 2 and the years are renamed by rule: neither is a new name
    assert got == {("carl", "mott"): ("Carl Mott", 1), ("lima",): ("Lima", 1), ("dora", "finn"): ("Dora Finn", 1)}
    with pytest.raises(DataError, match=r"renamed: document 'X-1' has no source document in source \(by its title"):
        new_names(env, [])


def test_isolated_pools_share_no_name(files: dict[str, Path]) -> None:
    res = name_overlap(twins=_twins(files, "Emil Ross", "Kyiv"), twins_source=files["train"], env=files["env"],
                       env_source=files["test"], train=[files["train"]])
    assert res.ok and res.problem() is None
    assert [(r.key, r.shared, r.of) for r in res.rows] == [("twins_in_test", 0, 2), ("twins_in_env", 0, 2),
                                                           ("env_in_train", 0, 3)]
    assert res.summary().splitlines()[-1] == "the pools share no name"


def test_pools_that_share_names_fail(files: dict[str, Path]) -> None:
    # the twin takes the test document's "Boris Kell" and the Env copy's "Lima"; Env took the training "Rome"
    env = _write(files["dir"] / "env2.json", [_doc("X-1", "Carl Mott", "Rome", "1991")])
    res = name_overlap(twins=_twins(files, "Boris Kell", "LIMA"), twins_source=files["train"], env=env,
                       env_source=files["test"], train=[files["train"]])
    assert not res.ok
    assert [(r.key, r.shared, r.mentions, r.examples) for r in res.rows] == [
        ("twins_in_test", 1, 1, ("Boris Kell",)), ("twins_in_env", 0, 0, ()), ("env_in_train", 1, 1, ("Rome",))]
    assert res.problem() == (
        "the name pools overlap: 1 of 2 new names of the twins are test mention names (first: 'Boris Kell'); "
        "1 of 2 new names of the Env benchmark are training mention names (first: 'Rome'); generate the twins "
        "with --exclude-names-from the test file and its Env version, and the Env version with "
        "--exclude-names-from the training documents")
    res = name_overlap(twins=_twins(files, "Emil Ross", "LIMA"), twins_source=files["train"], env=files["env"],
                       env_source=files["test"])
    assert [(r.key, r.shared) for r in res.rows] == [("twins_in_test", 0), ("twins_in_env", 1)]  # case folded


def test_each_file_needs_its_source(files: dict[str, Path]) -> None:
    with pytest.raises(EnvbenchError, match=r"^--twins .*twins.json: pass the file it was generated from as "
                                            r"--twins-source, so that its new names"):
        name_overlap(twins=_twins(files, "Emil Ross", "Kyiv"))
    with pytest.raises(EnvbenchError, match=r"^nothing to compare: pass --twins and --env"):
        name_overlap(env=files["env"], env_source=files["test"])
    with pytest.raises(EnvbenchError, match=r"missing.json: no such file; check the path"):
        name_overlap(env=files["env"], env_source=files["test"], train=[files["dir"] / "missing.json"])
