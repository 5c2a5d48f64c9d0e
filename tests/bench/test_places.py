"""bench/places.py's paired difference of contradicted shares between two renamings of one source."""

from __future__ import annotations

from tests.conftest import bench_script

paired_difference = bench_script("places").paired_difference


def test_identical_runs_differ_by_nothing() -> None:
    run = {"A": [1.0, 4.0], "B": [3.0, 5.0], "C": [0.0, 2.0]}
    assert paired_difference(run, run) == (0.0, 0.0, 0.0)


def test_a_run_better_in_every_document_is_below_with_its_whole_interval() -> None:
    worse = {t: [4.0, 5.0] for t in "ABCDEFGH"}
    better = {t: [1.0 + (i % 2), 5.0] for i, t in enumerate("ABCDEFGH")}
    d, lo, hi = paired_difference(better, worse)
    assert d == (12 / 40) - (32 / 40)
    assert lo <= d <= hi < 0
    # a document one run has no pair in counts as none there
    d, _, _ = paired_difference({"A": [1.0, 2.0]}, {"A": [1.0, 2.0], "B": [2.0, 2.0]})
    assert d == 0.5 - 0.75
