"""Shared fixtures: the real data in ../shared/data, skipped with a reason when absent."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("ENVBENCH_SHARED", REPO.parent / "shared" / "data"))


def bench_script(name: str) -> ModuleType:
    """``bench/<name>.py`` loaded as the module ``bench_<name>`` (bench/ is scripts, not a package); registered
    in ``sys.modules`` first, since dataclasses look their module up by name."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def reference_elbow(top_values: Sequence[float]) -> int:
    """DocRED-HWE MAP_metric.py's elbow, transcribed with scipy (the reference's own tools): over the top 100
    attribution values scaled by 1/sum(v^2) and sorted descending, a cubic interp1d on linspace(0, 100, 100),
    first and second derivatives by central differences of step 0.1 at 0.1 ... 10.0; the first sign change of
    the first derivative (else its smallest value), then the first later point where the second derivative
    is negative and changes sign. The tests hold envbench's own numpy-free rule against it."""
    np = pytest.importorskip("numpy")
    interpolate = pytest.importorskip("scipy.interpolate")
    vals = np.asarray(top_values, dtype=float)
    top = np.sort(vals)[::-1][:100]
    top = np.sort(top / np.sum(top ** 2))[::-1]
    f = interpolate.interp1d(np.linspace(0, 100, 100), top, kind="cubic")
    x = 0.1 + 0.1 * np.arange(100)
    one = (f(x + 0.1) - f(x - 0.1)) / 0.2
    two = (f(x + 0.1) - 2 * f(x) + f(x - 0.1)) / 0.01
    sign = [j for j in range(99) if one[j] * one[j + 1] < 0]
    m = sign[0] if sign else int(np.argmin(np.abs(one)))
    return next((j for j in range(m, 99) if two[j] < 0 and two[j] * two[j + 1] < 0), m)


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
