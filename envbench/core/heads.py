"""The head noun of a multi-word name: the word a reader takes a thing's kind from.

"Supreme Court of Ohio" is a court, "Augusta City Council" a council, "B.C. Ferries" a ferry line. The
rule reads English word order, so "Sala Planeta" gives "planeta", and it takes the first "of": the
"Library of Congress National Recording Registry" gives "library". The rule
(:func:`name_head`), on the name's words (case-folded, hyphens as spaces, a leading "the" and a
possessive "'s" left out):

* a name of one word has no head noun (its kind does not show: "Huskies");
* a name with "of" or "for" after its first word takes the word before the first of them ("Supreme
  Court of Ohio" -> court, "University of Bologna" -> university, "National Endowment for the Arts"
  -> endowment);
* any other name takes its last word ("Augusta City Council" -> council, "B.C. Ferries" -> ferry);
* the word is made singular the simple way ("Ferries" -> ferry, "Falls" -> fall, "Springs" ->
  spring, not "-ss": "Congress" -> congress), and a word that is not all letters, or shorter than
  three, gives no head noun ("Route 66", "Apollo 10").

kb-from-corpus types the clusters no signal typed by their head noun
(``worlds.fine_typing.FineTyper.head_pass``), and ``generate`` writes the head noun an old and a new
name share into ``substitutions.parquet`` (``head_noun``).
"""

from __future__ import annotations

import functools

_SKIP = frozenset({"the", "'s", "’s"})
_LINKS = ("of", "for")
_SAME_IN_PLURAL = frozenset({"series", "species"})  # "TV Series" is a series, not a "sery"


def singular(word: str) -> str:
    """A lower-case word made singular the simple way: "ferries" -> ferry, "falls" -> fall, "congress" and
    "series" stay."""
    if word in _SAME_IN_PLURAL:
        return word
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@functools.lru_cache(maxsize=1 << 16)
@functools.lru_cache(maxsize=1 << 16)  # asked of every accepted new name, and of the same names in every seed
def name_head(name: str) -> str | None:
    """The head noun of a name under the module docstring's rule, or None."""
    words = [w for w in name.casefold().replace("-", " ").split() if w not in _SKIP]
    if len(words) < 2:
        return None
    at = next((i for i, w in enumerate(words) if w in _LINKS and i > 0), None)
    word = words[at - 1] if at is not None else words[-1]
    if not word.isalpha() or len(word) < 3:
        return None
    return singular(word)


def label_head(label: str) -> str | None:
    """The kind word of a class label: its head noun (:func:`name_head`, also before "in": "hamlet in New
    York" -> hamlet), or the label itself, made singular, when it is one word; a parenthesis is left out
    ("council (head noun)" -> council). Examples: "river" -> river, "record label" -> label, "city of
    France" -> city, "Wikimedia" -> wikimedia (the caller judges), "" -> None."""
    text = label.split(" (", 1)[0].casefold().replace(" in ", " of ", 1)
    words = text.split()
    if len(words) == 1:
        word = words[0]
        return singular(word) if word.isalpha() and len(word) >= 3 else None
    return name_head(text)


def shared_head(old: str, new: str) -> str | None:
    """The head noun two names share ("Augusta City Council", "Liverpool City Council" -> council), or None."""
    h = name_head(old)
    return h if h is not None and name_head(new) == h else None


__all__ = ["label_head", "name_head", "shared_head", "singular"]
