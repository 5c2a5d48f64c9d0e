"""The attack a ``generate`` run makes: one definition, read by the renaming and by the reports.

``envbench generate --attack NAME [--rate P] [--popularity low|high]`` (``envbench/rename/attacks.py``
does the renaming) records the attack in ``stats.json`` (key ``attack``) and in its manifest's
parameters; ``envbench report --env`` reads it back (:func:`attack_of_stats`) to label each Env folder.
The default, ``rename`` at rate 1.0 from any popularity, is the Env benchmark, and records nothing, so
its bytes stay as they were.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from envbench.core.errors import EnvbenchError

ATTACKS = ("rename", "mask", "shuffle", "type-swap")
# attacks that break what the labels assume of their arguments (a place cannot be born): a control, not a
# robustness figure; every report marks them so
NEGATIVE_CONTROLS = frozenset({"type-swap"})
# ``--popularity``: new items from the lower or upper quartile of popularity in their class
POPULARITY_BINS = ("low", "high")


@dataclass(frozen=True)
class Attack:
    """What ``generate`` does to the names: the attack, the share renamed, the popularity bin drawn from."""

    name: str = "rename"
    rate: float = 1.0
    popularity: str | None = None  # "low" / "high": candidates of that popularity quartile of their class

    @property
    def is_default(self) -> bool:
        """The Env benchmark itself: nothing of the attack is written, so its bytes stay as they were."""
        return self == Attack()

    @property
    def negative_control(self) -> bool:
        return self.name in NEGATIVE_CONTROLS

    def record(self) -> dict[str, Any]:
        """The attack as ``stats.json`` (key ``attack``) and the manifest's parameters record it."""
        return {"name": self.name, "rate": self.rate, "popularity": self.popularity,
                "negative_control": self.negative_control}

    def label(self) -> str:
        """How a report names it: "rename", "rename 0.4", "rename (popularity high)", "type-swap (negative control)"."""
        text = self.name
        if self.rate < 1:
            text += f" {self.rate:g}"
        if self.popularity is not None:
            text += f" (popularity {self.popularity})"
        if self.negative_control:
            text += " (negative control)"
        return text


def make_attack(name: str = "rename", rate: float = 1.0, popularity: str | None = None, *,
                twins: bool = False) -> Attack:
    """The attack of ``generate``'s options, checked: one line naming the option and the fix."""
    if name not in ATTACKS:
        raise EnvbenchError(f"--attack {name!r}: not an attack; use one of {', '.join(ATTACKS)}")
    if isinstance(rate, bool) or not (isinstance(rate, (int, float)) and math.isfinite(rate) and 0 < rate <= 1):
        raise EnvbenchError(f"--rate {rate}: the share of renamable entities to rename, above 0 and at most 1 "
                            "(1 renames all of them, the Env benchmark)")
    if popularity is not None and popularity not in POPULARITY_BINS:
        raise EnvbenchError(f"--popularity {popularity!r}: use one of {', '.join(POPULARITY_BINS)}")
    if name != "rename" and rate < 1:
        raise EnvbenchError(f"--rate {rate:g} is for --attack rename (a share of the Env renaming); --attack {name} "
                            "changes every entity it can, so leave --rate out")
    if name != "rename" and popularity is not None:
        raise EnvbenchError(f"--popularity draws the Env renaming's candidates; --attack {name} draws none by "
                            "popularity, so leave --popularity out")
    if twins and name != "rename":
        raise EnvbenchError(f"--twins writes EVRT training twins, which are renamed; --attack {name} is for "
                            "benchmarks: leave --twins out, or use --attack rename")
    return Attack(name, float(rate), popularity)


def attack_of_stats(stats: Mapping[str, Any], where: str = "stats.json") -> Attack:
    """The attack a ``stats.json`` records (none recorded: the Env benchmark), checked as ``make_attack`` checks
    options, so a hand-edited record is one line naming the file."""
    rec = stats.get("attack")
    if rec is None:
        return Attack()
    if not isinstance(rec, dict):
        raise EnvbenchError(f"{where}: 'attack' is not an object; pass the stats.json `envbench generate` wrote")
    try:
        return make_attack(rec.get("name", "rename"), rec.get("rate", 1.0), rec.get("popularity"))
    except EnvbenchError as exc:
        raise EnvbenchError(f"{where}: its 'attack' record is not one generate writes ({exc})") from None


__all__ = ["ATTACKS", "NEGATIVE_CONTROLS", "POPULARITY_BINS", "Attack", "attack_of_stats", "make_attack"]
