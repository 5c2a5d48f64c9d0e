from __future__ import annotations

import pytest

from envbench.core.attacks import Attack, attack_of_stats, make_attack
from envbench.core.errors import EnvbenchError


def test_labels_mark_rates_bins_and_the_negative_control() -> None:
    assert Attack().is_default and Attack().label() == "rename"
    assert make_attack("rename", 0.4).label() == "rename 0.4"
    assert make_attack("rename", 1, "high").label() == "rename (popularity high)"
    assert make_attack("type-swap").label() == "type-swap (negative control)"
    assert make_attack("type-swap").record() == {"name": "type-swap", "rate": 1.0, "popularity": None,
                                                 "negative_control": True}
    assert not make_attack("rename", 1.0).record()["negative_control"] and make_attack("rename", 1.0).is_default


@pytest.mark.parametrize(("args", "message"), [
    (("rename", float("nan")), "--rate nan: the share of renamable entities to rename, above 0 and at most 1 (1 "
                               "renames all of them, the Env benchmark)"),
    (("rename", 1.5), "--rate 1.5: the share of renamable entities to rename, above 0 and at most 1 (1 renames all "
                      "of them, the Env benchmark)"),
    (("rename", 1.0, "middle"), "--popularity 'middle': use one of low, high"),
    (("type-swap", 0.2), "--rate 0.2 is for --attack rename (a share of the Env renaming); --attack type-swap changes "
                         "every entity it can, so leave --rate out"),
])
def test_bad_options_are_one_line(args: tuple, message: str) -> None:
    with pytest.raises(EnvbenchError) as exc:
        make_attack(*args)
    assert str(exc.value) == message


def test_twins_take_only_renaming() -> None:
    with pytest.raises(EnvbenchError, match="--twins writes EVRT training twins, which are renamed; --attack mask"):
        make_attack("mask", twins=True)
    assert make_attack("rename", 0.5, twins=True).rate == 0.5


def test_attack_read_back_from_stats() -> None:
    assert attack_of_stats({}) == Attack()
    assert attack_of_stats({"attack": make_attack("shuffle").record()}) == Attack("shuffle")
    with pytest.raises(EnvbenchError) as exc:
        attack_of_stats({"attack": {"name": "mask", "rate": 0.3}}, "x/stats.json")
    assert str(exc.value).startswith("x/stats.json: its 'attack' record is not one generate writes (--rate 0.3 is for")
