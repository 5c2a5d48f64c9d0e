from __future__ import annotations

import pytest

from envbench.core.placeholders import PLACEHOLDER_WORDS, first_mention_order, numbered, placeholder
from envbench.core.types import COARSE_TYPES
from tests.envbench.index_fixture import mention


def test_one_word_per_coarse_type_and_a_number() -> None:
    assert set(PLACEHOLDER_WORDS) == set(COARSE_TYPES)
    assert placeholder("PER", 3) == "Person 3" and placeholder("ORG", 1) == "Organization 1"
    assert placeholder("ODD", 2) == "Miscellaneous 2"  # an unknown type reads as MISC, as entity_type defaults
    with pytest.raises(ValueError, match="placeholders count from 1, not 0"):
        placeholder("PER", 0)


def test_numbered_per_type_by_first_mention() -> None:
    vs = [[mention("B", 1, [0, 1], "PER")], [mention("A", 0, [3, 4], "PER"), mention("A", 2, [0, 1], "PER")],
          [mention("X", 0, [0, 1], "LOC")], [mention("C", 0, [5, 6], "PER")]]
    coarse = ["PER", "PER", "LOC", "PER"]
    assert first_mention_order(vs) == [2, 1, 3, 0]
    assert numbered(vs, coarse) == {1: ("Person", "1"), 3: ("Person", "2"), 0: ("Person", "3"),
                                    2: ("Location", "1")}
    # an entity left out takes no number; the others count on without a gap
    assert numbered(vs, coarse, [0, 3]) == {3: ("Person", "1"), 0: ("Person", "2")}
