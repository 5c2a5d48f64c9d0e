"""Option checks that several commands make, each written once with its one error text.

    check_seeds(5)                       # returns 5
    check_seeds(0)                       # EnvbenchError: --seeds must be at least 1 (got 0); ...
    check_choice("eval", ("eval", "train"), "--pool")

They run before any work, so a bad option never leaves half a result behind.
"""

from __future__ import annotations

from collections.abc import Sequence

from envbench.core.errors import EnvbenchError

# the most renamed copies per document: the paper's setting is 5, and --seeds 10**11 would run for ever
MAX_SEEDS = 1000


def check_seeds(seeds: int) -> int:
    """``--seeds K``: K renamed copies per document, from 1 to ``MAX_SEEDS`` (``generate``, ``demo``, ``lock``)."""
    if not isinstance(seeds, int) or isinstance(seeds, bool) or seeds < 1:
        raise EnvbenchError(f"--seeds must be at least 1 (got {seeds}); pass --seeds 5 for the Env-DocRED setting")
    if seeds > MAX_SEEDS:
        raise EnvbenchError(f"--seeds must be at most {MAX_SEEDS} (got {seeds}); pass --seeds 5 for the Env-DocRED "
                            "setting")
    return seeds


def check_choice(value: str, choices: Sequence[str], option: str) -> str:
    """A value that must be one of ``choices`` (for library callers; click checks the CLI's own)."""
    if value not in choices:
        raise EnvbenchError(f"{option} must be one of {', '.join(choices)} (got {value!r})")
    return value


__all__ = ["MAX_SEEDS", "check_choice", "check_seeds"]
