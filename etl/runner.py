"""Sharded parallel map with a done-marker per finished shard, so a killed run resumes.

Each shard writes its outputs into ``STAGE/shards/<NNNNNNNN>/`` through a temporary folder that
is renamed into place, then a marker ``STAGE/done/<NNNNNNNN>.json`` holding the shard's result.
A shard counts as done only when its marker exists; anything else is redone. Shard numbers
must be deterministic (e.g. chunks cut by line count) for resume to be correct.

STAGE is the caller's own staging folder (``wikidata_index.ingest`` makes it with ``etl.step``'s
marker). Of what is in it, the runner removes only what it names itself: a killed shard's
``shards/NNNNNNNN.tmpPID/`` and a shard's own ``shards/NNNNNNNN/`` that it redoes.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import re
import shutil
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Protocol

import orjson

from etl.io import InputError, write_json_atomic


class Shard(Protocol):
    index: int


ShardFn = Callable[[Any, Path], dict]
TMP_NAME = re.compile(r"[0-9]{8}\.tmp[0-9]+")  # _run_one's work folder: shard number, ".tmp", pid


def shard_name(index: int) -> str:
    return f"{index:08d}"


class ShardRunner:
    """Runs ``fn(shard, out_dir) -> result`` over shards, skipping shards already marked done.

    ``workers`` > 1 uses a process pool (fork) with at most ``window`` shards in flight, which
    bounds memory; results come back in shard order so logs and early stops are deterministic.
    """

    def __init__(self, stage: str | os.PathLike[str], fn: ShardFn, *, workers: int = 1, window: int | None = None):
        self.stage = Path(stage)
        self.fn = fn
        self.workers = max(1, int(workers))
        self.window = window or 2 * self.workers
        self.done_dir = self.stage / "done"
        self.shard_dir = self.stage / "shards"
        self.done_dir.mkdir(parents=True, exist_ok=True)
        self.shard_dir.mkdir(parents=True, exist_ok=True)
        for tmp in self.shard_dir.glob("*.tmp*"):  # left by a killed run; by the exact name _run_one gives
            if TMP_NAME.fullmatch(tmp.name):
                shutil.rmtree(tmp, ignore_errors=True)

    def marker(self, index: int) -> Path:
        return self.done_dir / f"{shard_name(index)}.json"

    def is_done(self, index: int) -> bool:
        return self.marker(index).exists()

    def done_results(self) -> dict[int, dict]:
        out = {}
        for p in sorted(self.done_dir.glob("*.json")):
            out[int(p.stem)] = orjson.loads(p.read_bytes())
        return out

    def output_dirs(self) -> list[Path]:
        return [self.shard_dir / p.stem for p in sorted(self.done_dir.glob("*.json"))]

    def run(self, shards: Iterable[Shard]) -> Iterator[tuple[int, dict, bool]]:
        """Yield (index, result, was_done_before) in shard order."""
        if self.workers == 1:
            for shard in shards:
                if self.is_done(shard.index):
                    yield shard.index, self._load(shard.index), True
                else:
                    yield shard.index, _run_one(self.fn, shard, self.shard_dir, self.done_dir), False
            return
        ctx = multiprocessing.get_context("fork")
        pending: deque[tuple[int, Future | None]] = deque()
        with ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx, initializer=_die_with_parent,
                                 initargs=(os.getpid(),)) as pool:
            try:
                for shard in shards:
                    if self.is_done(shard.index):
                        pending.append((shard.index, None))
                    else:
                        pending.append(
                            (shard.index, pool.submit(_run_one, self.fn, shard, self.shard_dir, self.done_dir))
                        )
                    while len(pending) > self.window or (pending and pending[0][1] is None):
                        yield self._collect(pending.popleft())
                while pending:
                    yield self._collect(pending.popleft())
            except BaseException as exc:
                for _, fut in pending:
                    if fut is not None:
                        fut.cancel()
                pool.shutdown(wait=True, cancel_futures=True)
                if isinstance(exc, BrokenProcessPool):  # noticed at submit, before any result
                    raise _died(None) from None
                raise

    def _collect(self, item: tuple[int, Future | None]) -> tuple[int, dict, bool]:
        index, fut = item
        if fut is None:
            return index, self._load(index), True
        try:
            return index, fut.result(), False
        except BrokenProcessPool:
            raise _died(index) from None

    def _load(self, index: int) -> dict:
        return orjson.loads(self.marker(index).read_bytes())


class WorkerDied(InputError):
    """A worker process died (killed, out of memory): the finished shards are good, so a rerun resumes."""


def _died(index: int | None) -> WorkerDied:
    where = f" while on shard {index}" if index is not None else ""
    return WorkerDied(
        f"a worker process died{where} (killed, or out of memory); rerun the same command to resume "
        "from the finished shards (use fewer --workers if memory is short)"
    )


def _die_with_parent(parent: int) -> None:
    """Workers die with the main process; an orphan finishing a shard during a rerun would race it."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # pragma: no cover
            pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def _run_one(fn: ShardFn, shard: Shard, shard_dir: Path, done_dir: Path) -> dict:
    name = shard_name(shard.index)
    final = shard_dir / name
    tmp = shard_dir / f"{name}.tmp{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    result = fn(shard, tmp)
    if final.exists():  # from a run killed between rename and marker
        shutil.rmtree(final)
    os.replace(tmp, final)
    write_json_atomic(done_dir / f"{name}.json", result)
    return result
