"""Shared fixtures: the real data in ../shared/data, skipped with a reason when absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("ENVBENCH_SHARED", REPO.parent / "shared" / "data"))


def shared_path(*parts: str) -> Path:
    """Path under ../shared/data; skip (or fail in CI, where ENVBENCH_REQUIRE_SHARED=1) if missing."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        msg = (
            f"shared data not found at {p}; these tests read the real Re-DocRED and Wikidata samples "
            "from ../shared/data (set ENVBENCH_SHARED to point elsewhere)"
        )
        if os.environ.get("ENVBENCH_REQUIRE_SHARED") == "1":
            pytest.fail(msg)
        pytest.skip(msg)
    return p


@pytest.fixture
def shared() -> type:
    """Gives tests ``shared("re-docred", "dev_revised.json")``."""
    return shared_path  # type: ignore[return-value]


def fast_extractor_or_skip():
    """The compiled extractor module; skip (or fail in CI, where ENVBENCH_REQUIRE_FAST=1) without it."""
    from wikidata_index import extract
    from wikidata_index.ingest import fast_extractor

    mod = fast_extractor()
    if mod is None:
        why = ("the compiled extractor is not built" if extract._fastextract is None
               else "the compiled extractor was built for other tables (a stale build)")
        msg = f"{why}; run `make setup` with a C compiler"
        if os.environ.get("ENVBENCH_REQUIRE_FAST") == "1":
            pytest.fail(f"{msg} (ENVBENCH_REQUIRE_FAST=1 requires it)", pytrace=False)
        pytest.skip(msg)
    return mod


@pytest.fixture
def stand_in_lbzip2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An `lbzip2 -dc FILE` on PATH (the real one may be absent) that reads only its file argument."""
    import stat
    import sys

    bindir = tmp_path / "stand-in-bin"
    bindir.mkdir()
    tool = bindir / "lbzip2"
    tool.write_text(f"#!{sys.executable}\nimport bz2, sys\n"
                    "sys.stdout.buffer.write(bz2.decompress(open(sys.argv[-1], 'rb').read()))\n")
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    return tool
