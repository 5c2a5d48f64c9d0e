"""Options that several commands share, so each is spelt and explained once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

PROGRESS_HELP = "Progress on stderr, drawn only when it is a terminal (never into a pipe or a log file)."


def progress_option(f: F) -> F:
    """``--progress/--no-progress`` (default on): the one pair of flags that quiets the bars of every command
    (``etl.progress`` draws them, and only on a terminal)."""
    return click.option("--progress/--no-progress", "progress", default=True, show_default=True,
                        help=PROGRESS_HELP)(f)


__all__ = ["PROGRESS_HELP", "progress_option"]
