"""ingest-dump of several files and of a folder: the real Special:EntityData and wbgetentities answers of
../shared/data/wikidata-samples, ingested together without a merge script."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from etl.io import InputError, sha256_file
from tests.conftest import shared_path
from tests.envbench.cli.invoke import run
from wikidata_index.index import WikidataIndex
from wikidata_index.ingest import ingest_dump
from wikidata_index.inputs import expand


def test_several_envelopes_and_a_folder_make_one_index(tmp_path: Path) -> None:
    syvb = shared_path("wikidata-samples", "syvb-wikidata")  # Special:EntityData answers: Q42, Q45
    wdtk = shared_path("wikidata-samples", "wikidata-toolkit")
    answers = [wdtk / "wbgetentities-Douglas-Adams.json", wdtk / "wbgetentites-Oliver-Kahn.json"]
    folder = tmp_path / "entities"
    shutil.copytree(syvb, folder)
    code, out = run("ingest-dump", folder, *answers, "--out", tmp_path / "idx", "--workers", "1", "--no-progress")
    assert code == 0, out
    with WikidataIndex(tmp_path / "idx") as ix:
        assert ix.entity("Q42")["label"] == "Douglas Adams" and ix.entity("Q45")["label"] == "Portugal"
        assert ix.entity("Q131261")["label"] == "Oliver Kahn"
        assert ix.demonyms("Q45") == ["Portuguese"]
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    files = [folder / "Q42.json", folder / "Q45.json", *answers]
    assert manifest["inputs"] == [{"name": f.name, "bytes": f.stat().st_size, "sha256": sha256_file(f)} for f in files]
    assert manifest["provenance"] == {"kind": "wikidata_dump", "files": [f.name for f in files], "date": None}
    assert not list(tmp_path.glob(".envbench-dumps-*"))  # the combined file is gone


def test_a_folder_without_entity_files_and_a_file_given_twice_are_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("x")
    with pytest.raises(InputError, match="a folder with no entity JSON file in it"):
        expand([tmp_path / "empty"])
    one = tmp_path / "a.json"
    one.write_text("{}")
    with pytest.raises(InputError, match="given twice"):
        expand([one, tmp_path / "." / "a.json"])
    with pytest.raises(InputError, match="read alone"):
        ingest_dump(["-", str(one)], tmp_path / "o")
