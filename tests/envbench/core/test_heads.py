"""The head noun of a name (``envbench.core.heads``), on names from Re-DocRED's renamed text (issue 31)."""

from __future__ import annotations

import pytest

from envbench.core.heads import label_head, name_head, shared_head, singular


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
    assert [singular(w) for w in ("ferries", "records", "congress", "campus", "analysis", "series")] == [
        "ferry", "record", "congress", "campus", "analysis", "series"]
    assert shared_head("Augusta City Council", "Liverpool City Council") == "council"
    assert shared_head("Supreme Court of Ohio", "Societe Internationale de Telecommunications Aeronautiques") is None
    assert shared_head("Huskies", "Levi 's") is None


def test_the_kind_word_of_a_class_label() -> None:
    assert [label_head(x) for x in ("river", "record label", "city of France", "hamlet in New York",
                                    "council (head noun)", "television series")] == [
        "river", "label", "city", "hamlet", "council", "series"]
    assert label_head("") is None and label_head("R2") is None
