"""Type placeholders: what a masked mention reads ("Person 3", "Organization 1").

One definition, read by the ``mask`` attack of ``envbench generate`` (``envbench/rename/attacks.py``)
and by the names-only baseline of ``envbench train`` (``names_only`` in ``models/config.py``), so a
model trained without names is read against a masked benchmark that writes the same placeholders.

A placeholder is the word of the entity's coarse DocRED type and a number, written as two tokens as
the corpus tokenises "Person 3" ("Person", "3"). The number counts the entities of that type in the
order of their first mention in the document (sentence, then token, then entity index), from 1: the
first person mentioned is "Person 1", the second "Person 2", whatever their vertexSet order. So one
document always gets the same placeholders, every entity of a type a different one, and a reader of
a masked document can still tell the entities apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

# the word of each coarse type (DocRED's six); an unknown type reads as MISC, as entity_type defaults
PLACEHOLDER_WORDS: Mapping[str, str] = {
    "PER": "Person",
    "ORG": "Organization",
    "LOC": "Location",
    "MISC": "Miscellaneous",
    "TIME": "Time",
    "NUM": "Number",
}


def placeholder_tokens(coarse: str, number: int) -> tuple[str, str]:
    """The tokens of the ``number``-th placeholder of a coarse type: ("Person", "3")."""
    if number < 1:
        raise ValueError(f"placeholders count from 1, not {number}")
    return PLACEHOLDER_WORDS.get(coarse, PLACEHOLDER_WORDS["MISC"]), str(number)


def placeholder(coarse: str, number: int) -> str:
    """The written placeholder: placeholder("PER", 3) == "Person 3"."""
    return " ".join(placeholder_tokens(coarse, number))


def first_mention_order(vertex_set: Sequence[Sequence[Mapping[str, Any]]]) -> list[int]:
    """The entity indices in the order of their first mention (sentence, start token, entity index)."""
    def first(ei: int) -> tuple[int, int, int]:
        ms = vertex_set[ei]
        if not ms:
            return (1 << 30, 1 << 30, ei)  # an entity without mentions (invalid input) goes last
        return min((int(m["sent_id"]), int(m["pos"][0]), ei) for m in ms)
    return sorted(range(len(vertex_set)), key=first)


def numbered(vertex_set: Sequence[Sequence[Mapping[str, Any]]], coarse: Sequence[str],
             masked: Iterable[int] | None = None) -> dict[int, tuple[str, str]]:
    """The placeholder tokens of each entity of a document, numbered per type by first mention.

    ``coarse`` is each entity's coarse type; ``masked`` the entities to number (default: all), so an
    entity left out takes no number and the others of its type count on without a gap.
    """
    wanted = set(range(len(vertex_set))) if masked is None else set(masked)
    counts: dict[str, int] = {}
    out: dict[int, tuple[str, str]] = {}
    for ei in first_mention_order(vertex_set):
        if ei not in wanted:
            continue
        word = PLACEHOLDER_WORDS.get(coarse[ei], PLACEHOLDER_WORDS["MISC"])
        counts[word] = counts.get(word, 0) + 1
        out[ei] = placeholder_tokens(coarse[ei], counts[word])
    return out


__all__ = ["PLACEHOLDER_WORDS", "first_mention_order", "numbered", "placeholder", "placeholder_tokens"]
