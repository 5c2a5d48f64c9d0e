"""The plural of a demonym, shared by the offline lexicon and the renaming."""

from __future__ import annotations

from envbench.core.demonym_plurals import regular_plural, same_in_plural, singular_of


def test_regular_plurals() -> None:
    assert [regular_plural(f) for f in ("American", "Israeli", "Argentine", "Englishman", "German", "Ottoman")] == [
        "Americans", "Israelis", "Argentines", "Englishmen", "Germans", "Ottomans"]
    assert regular_plural("French") is None and regular_plural("Chinese") is None and regular_plural("New Zealander") is None
    assert same_in_plural("Chinese") and same_in_plural("Swiss") and not same_in_plural("Danish")
    assert singular_of("Americans") == "American" and singular_of("Germans") == "German"
    assert singular_of("Swiss") is None and singular_of("Danes") is None and singular_of("Celtics") is None
