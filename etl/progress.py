"""Progress bars: one rule for every step that takes more than a moment.

A bar is drawn on stderr only when the command asks for one (every long command's
``--progress/--no-progress``, on by default) **and** stderr is a terminal, so a log file, a pipe or a
CI capture never receives a bar or its carriage returns. tqdm draws it; ``bar`` is the only place
that makes one, so the rule is said once.

    for doc in bar(docs, desc="score", unit="doc", enabled=progress):
        ...
    with bar(total=n_bytes, desc="ingest", unit="B", unit_scale=True, enabled=progress) as b:
        b.update(k)

A step made of a few long calls without a loop of its own (read the gold file, score, draw the plots)
shows its stages instead, with a clock that keeps ticking while a stage works:

    with Stages("report", 4, enabled=progress) as stage:
        stage("read the gold files")
        ...
        stage("score")
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterable
from typing import Any

TICK_S = 0.5  # how often a stage's clock is redrawn while the stage works


def stderr_is_terminal() -> bool:
    """Whether stderr is an interactive terminal (False for a pipe, a file, or no stderr at all)."""
    stream = sys.stderr
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


def shown(enabled: bool = True) -> bool:
    """Whether a bar asked for with ``enabled`` is drawn: asked for, and stderr is a terminal."""
    return bool(enabled) and stderr_is_terminal()


def bar(iterable: Iterable[Any] | None = None, *, desc: str, total: float | None = None, unit: str = "doc",
        enabled: bool = True, leave: bool = False, **options: Any) -> Any:
    """A tqdm bar on stderr, disabled unless ``shown(enabled)``; usable as an iterable wrapper or by hand
    (``update``, ``close``, a ``with`` block). ``leave=False``: the finished bar is wiped, so the
    command's own summary is what stays on the screen."""
    from tqdm import tqdm

    return tqdm(iterable, desc=desc, total=total, unit=unit, file=sys.stderr, disable=not shown(enabled),
                dynamic_ncols=True, leave=leave, mininterval=0.2, **options)


class Stages:
    """``desc: 2/4 score [00:12]``: the stage a step is in, numbered, with its elapsed time redrawn every
    ``TICK_S`` by a daemon thread (a stage that is one long call has no loop to redraw it). Nothing at all,
    no thread either, when the bar is not shown. Call the object with each stage's name as it starts;
    leaving the ``with`` block wipes the line."""

    def __init__(self, desc: str, total: int | None, *, enabled: bool = True) -> None:
        self._bar = bar(desc=desc, total=total, unit="stage", enabled=enabled,
                        bar_format="{desc}: {n_fmt}/{total_fmt} {postfix} [{elapsed}]" if total
                        else "{desc}: {n_fmt} {postfix} [{elapsed}]")
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if not self._bar.disable:
            self._thread = threading.Thread(target=self._tick, name=f"progress-{desc}", daemon=True)
            self._thread.start()

    def _tick(self) -> None:
        while not self._stop.wait(TICK_S):
            self._bar.refresh()

    def __call__(self, name: str) -> None:
        """Stage ``name`` starts (the one before it is done); the count shown is this stage's number."""
        self._bar.set_postfix_str(name, refresh=False)
        self._bar.update(1)
        self._bar.refresh()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._bar.close()

    def __enter__(self) -> Stages:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["Stages", "bar", "shown", "stderr_is_terminal"]
