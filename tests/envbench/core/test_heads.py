"""The head noun of a name (``envbench.core.heads``), on names from Re-DocRED's renamed text (issue 31)."""

from __future__ import annotations

import pytest

from envbench.core.heads import name_head, shared_head, singular


@pytest.mark.parametrize(("name", "head"), [
    ("Supreme Court of Ohio", "court"),
    ("the Supreme Court of Ohio", "court"),
    ("B.C. Ferries", "ferry"),
    ("Augusta City Council", "council"),
    ("University of Bologna", "university"),
    ("National Endowment for the Arts", "endowment"),
    ("Multnomah Falls", "fall"),
    ("Congress of Vienna", "congress"),
    ("Library of Congress National Recording Registry", "library"),  # the first "of" decides
    ("Sala Planeta", "planeta"),  # English word order is assumed
    ("Huskies", None),  # one word: the kind does not show
    ("Route 66", None),  # not a word of letters
    ("Levi 's", None),  # the possessive is left out: one word
])
def test_the_head_noun_rule(name: str, head: str | None) -> None:
    assert name_head(name) == head


def test_singular_and_shared_heads() -> None:
    assert [singular(w) for w in ("ferries", "records", "congress", "campus", "analysis")] == [
        "ferry", "record", "congress", "campus", "analysis"]
    assert shared_head("Augusta City Council", "Liverpool City Council") == "council"
    assert shared_head("Supreme Court of Ohio", "Societe Internationale de Telecommunications Aeronautiques") is None
    assert shared_head("Huskies", "Levi 's") is None
