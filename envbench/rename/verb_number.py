"""A name and the verb after it agree in number: "Tasmania is an island" never "Faroe Islands is an island".

Where a mention is followed right away by a verb that shows its number ("is", "was", "has" against
"are", "were", "have"), the document reads the name as singular or plural, and a new name of the other
number reads wrong: "… is an island" with an archipelago ("the Canary Islands is an island"), "The
Bahamas are" with "Jamaica are". The rule (:func:`breaks_number`) reads a name as plural by its last word
only where English treats such a name as plural (:data:`PLURAL_LAST_WORDS`: "Islands", "Isles",
"Mountains", "Alps"), since many names that end in -s take a singular verb ("the United States is",
"the Netherlands is", "Wales is", "Athens is"); a candidate whose name breaks the number of a mention is
passed over. Persons and numbers are left out: "Many Americans have stayed here" is a people's plural,
which ``demonyms.plural_forms`` keeps.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

# last words that make a place's name plural in English ("the Faroe Islands are", "the Rocky Mountains were")
PLURAL_LAST_WORDS = frozenset({"Islands", "Isles", "Mountains", "Hills", "Lakes", "Keys", "Cays", "Reefs", "Rocks",
                               "Plains", "Dunes", "Heights", "Highlands", "Alps", "Andes", "Rockies", "Himalayas",
                               "Pyrenees", "Carpathians", "Appalachians", "Balkans", "Caribbees", "Azores",
                               "Canaries", "Maldives", "Seychelles", "Philippines", "Bahamas"})
SINGULAR = "singular"
PLURAL = "plural"
_VERBS = {"is": SINGULAR, "was": SINGULAR, "has": SINGULAR, "does": SINGULAR,
          "are": PLURAL, "were": PLURAL, "have": PLURAL, "do": PLURAL}


def reads_plural(name: str) -> bool:
    """Whether a name takes a plural verb by its last word ("Faroe Islands", "the Alps"; not "Wales",
    "United States")."""
    words = name.split()
    return bool(words) and words[-1] in PLURAL_LAST_WORDS


def verb_numbers(sents: Sequence[Sequence[str]], entity: Iterable[Mapping[str, object]]) -> dict[str, str]:
    """Per name of an entity, the number of the verb right after one of its mentions (the first such
    mention's), where one shows it."""
    out: dict[str, str] = {}
    for m in entity:
        name = str(m["name"])
        pos = m["pos"]
        assert isinstance(pos, (list, tuple))
        sent = sents[int(m["sent_id"])]  # type: ignore[call-overload]
        b = int(pos[1])
        if name not in out and b < len(sent) and (number := _VERBS.get(sent[b])) is not None:
            out[name] = number
    return out


def breaks_number(old: str, new: str, number: str | None) -> bool:
    """Whether ``new``, written where ``old`` stands before a verb of ``number``, reads against that verb: a
    plural name before a singular verb the old name agreed with, or the other way round."""
    if number is None or reads_plural(old) == reads_plural(new):
        return False
    return reads_plural(new) if number == SINGULAR else not reads_plural(new)


__all__ = ["PLURAL", "PLURAL_LAST_WORDS", "SINGULAR", "breaks_number", "reads_plural", "verb_numbers"]
