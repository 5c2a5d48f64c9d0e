"""envbench.formats.releases: the official corpus files known by size and sha256, and `validate` naming them."""

from __future__ import annotations

import shutil
from pathlib import Path

from envbench.formats.releases import RELEASES, identify
from tests.conftest import shared_path
from tests.envbench.cli.invoke import run


def test_the_shared_re_docred_files_are_the_official_releases(tmp_path: Path) -> None:
    for split in ("dev", "test"):
        path = shared_path("re-docred", f"{split}_revised.json")
        found = identify(path)
        assert found.release is not None and (found.release.corpus, found.release.split) == ("Re-DocRED", split)
        assert found.to_dict()["official"] is True
    # one byte more is another version, named as such beside the official file's hash
    copy = tmp_path / "test_revised.json"
    shutil.copyfile(shared_path("re-docred", "test_revised.json"), copy)
    with copy.open("a") as fh:
        fh.write("\n")
    other = identify(copy)
    assert other.release is None
    official = next(r for r in RELEASES if r.file == "test_revised.json")
    assert other.line() == (f"release: a modified or unknown version (3,207,229 bytes, sha256 {other.sha256[:12]}...), "
                            "not one of the official DocRED or Re-DocRED files (the official Re-DocRED test "
                            f"(test_revised.json, 3,207,228 bytes) has sha256 {official.sha256[:12]}...); scores on it "
                            "are not comparable with published ones")


def test_validate_names_the_release(tmp_path: Path) -> None:
    path = shared_path("re-docred", "dev_revised.json")
    code, out = run("validate", path, "--show", "0")
    assert code == 0
    assert out.splitlines()[1] == ("  release: the official Re-DocRED dev (dev_revised.json, 3,245,588 bytes), sha256 "
                                   "051ee1d05720...")
    code, out = run("validate", path, "--json")
    assert code == 0 and '"release":{"bytes":3245588,"corpus":"Re-DocRED","official":true' in out


def test_the_issue_s_official_files_are_listed() -> None:
    assert {(r.corpus, r.file, r.bytes) for r in RELEASES} >= {
        ("Re-DocRED", "train_revised.json", 18_602_933), ("DocRED", "train_annotated.json", 13_029_595),
        ("DocRED", "dev.json", 4_287_303)}


def test_a_kb_of_the_official_re_docred_files_is_said_to_be_under_mit() -> None:
    from envbench.formats.provenance import describe

    docs = [{"name": r.file, "sha256": r.sha256} for r in RELEASES if r.corpus == "Re-DocRED" and r.split != "train"]
    said = describe({"kind": "corpus_kb", "documents": docs})
    assert said["licence"] == "mit"
    assert said["source"] == ("a knowledge base made by `envbench kb-from-corpus` from the documents "
                              "dev_revised.json, test_revised.json (Re-DocRED dev, Re-DocRED test, official releases); "
                              "no Wikidata dump")
    assert said["names"].endswith("under the corpus's licence (MIT)")
    assert describe({"kind": "unknown"})["licence"] is None
    assert describe({"kind": "wikidata_dump", "files": ["latest-all.json.gz"], "date": None})["source"] == \
        "the Wikidata JSON dump latest-all.json.gz, of a date its name does not give"
