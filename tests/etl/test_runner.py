"""Sharded runs: markers, resume, ordering, and parallel == serial."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from etl.runner import ShardRunner


@dataclass
class S:
    index: int
    payload: int


def square(shard: S, out: Path) -> dict:
    (out / "v.txt").write_text(str(shard.payload**2))
    if shard.payload < 0:
        raise ValueError("negative")
    return {"v": shard.payload**2}


@pytest.mark.parametrize("workers", [1, 2])
def test_results_in_order_and_markers(tmp_path: Path, workers: int) -> None:
    runner = ShardRunner(tmp_path, square, workers=workers, window=2)
    got = list(runner.run(S(i, i) for i in range(7)))
    assert got == [(i, {"v": i * i}, False) for i in range(7)]
    assert [p.name for p in runner.output_dirs()] == [f"{i:08d}" for i in range(7)]
    assert (tmp_path / "shards" / "00000003" / "v.txt").read_text() == "9"


def test_rerun_skips_done_shards(tmp_path: Path) -> None:
    calls: list[int] = []

    def fn(shard: S, out: Path) -> dict:
        calls.append(shard.index)
        return square(shard, out)

    list(ShardRunner(tmp_path, fn).run(S(i, i) for i in range(3)))
    (tmp_path / "done" / "00000001.json").unlink()  # as if killed before its marker
    calls.clear()
    got = list(ShardRunner(tmp_path, fn).run(S(i, i) for i in range(3)))
    assert calls == [1]
    assert [d for _, _, d in got] == [True, False, True]


def test_failure_leaves_no_marker_and_cleans_temp(tmp_path: Path) -> None:
    runner = ShardRunner(tmp_path, square, workers=2)
    with pytest.raises(ValueError, match="negative"):
        list(runner.run([S(0, 1), S(1, -1), S(2, 3)]))
    assert not (tmp_path / "done" / "00000001.json").exists()
    ShardRunner(tmp_path, square)  # a new runner removes leftover temp folders
    assert not list((tmp_path / "shards").glob("*.tmp*"))


def die_on_two(shard: S, out: Path) -> dict:
    if shard.index == 2:
        os._exit(9)  # as if killed by the OOM killer
    return square(shard, out)


def test_dead_worker_is_a_clear_error_and_resumable(tmp_path: Path) -> None:
    from etl.io import InputError
    from etl.runner import WorkerDied  # the ingest keeps finished shards for this error, not for bad input

    with pytest.raises(WorkerDied, match=r"a worker process died( while on shard \d)? \(killed, or out of memory\); rerun the same command"):
        list(ShardRunner(tmp_path, die_on_two, workers=2, window=1).run(S(i, i) for i in range(4)))
    assert issubclass(WorkerDied, InputError)
    assert (tmp_path / "done" / "00000000.json").exists()
    got = list(ShardRunner(tmp_path, square, workers=2).run(S(i, i) for i in range(4)))
    assert [r for _, r, _ in got] == [{"v": i * i} for i in range(4)] and got[0][2] is True
