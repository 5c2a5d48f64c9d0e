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
