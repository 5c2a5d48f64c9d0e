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

A count right before a mention shows its number too: "having won two EuroLeague Championships" had read
"having won five Ryder Cup". Where a count of two or more stands right before a name whose last word is a
plural in -s (:func:`reads_counted_plural`: "Championships", "Awards", "Games"), the new name must end in
one as well (``COUNTED``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from envbench.rename.numtime import counts_a_noun, leading_number

# last words that make a place's name plural in English ("the Faroe Islands are", "the Rocky Mountains were")
PLURAL_LAST_WORDS = frozenset({"Islands", "Isles", "Mountains", "Hills", "Lakes", "Keys", "Cays", "Reefs", "Rocks",
                               "Plains", "Dunes", "Heights", "Highlands", "Alps", "Andes", "Rockies", "Himalayas",
                               "Pyrenees", "Carpathians", "Appalachians", "Balkans", "Caribbees", "Azores",
                               "Canaries", "Maldives", "Seychelles", "Philippines", "Bahamas"})
SINGULAR = "singular"
PLURAL = "plural"
COUNTED = "counted"  # a count of two or more right before a name in the plural ("two EuroLeague Championships")
_VERBS = {"is": SINGULAR, "was": SINGULAR, "has": SINGULAR, "does": SINGULAR,
          "are": PLURAL, "were": PLURAL, "have": PLURAL, "do": PLURAL}


def reads_plural(name: str) -> bool:
    """Whether a name takes a plural verb by its last word ("Faroe Islands", "the Alps"; not "Wales",
    "United States")."""
    words = name.split()
    return bool(words) and words[-1] in PLURAL_LAST_WORDS


def reads_counted_plural(name: str) -> bool:
    """Whether a name ends in a plural in -s that a count may stand before ("EuroLeague Championships",
    "Grammy Awards"; not "Ryder Cup", "Davis Cup", "Lord 's", "Mars", "Olympus" or "Memphis", nor "Africa
    Cup of Nations", whose head is before "of")."""
    words = name.split()
    if "of" in words[1:]:
        words = words[:words.index("of")]  # the head is before "of": "Africa Cup of Nations" is one cup
    last = words[-1] if words else ""
    return len(words) > 1 and len(last) > 3 and last[-1] == "s" and last[-2:] not in ("ss", "us", "is", "'s")


def _counted(sent: Sequence[str], a: int) -> bool:
    """Whether a count of two or more stands right before the token at ``a`` ("two", "12")."""
    if a == 0:
        return False
    tok = sent[a - 1]
    if len(tok) == 4 and tok.isdigit():
        return False  # a year: "the 2006 Commonwealth Games"
    value = leading_number([tok])
    return value is not None and value >= 2 and tok.replace(",", "").isalnum()


def verb_numbers(sents: Sequence[Sequence[str]], entity: Iterable[Mapping[str, object]]) -> dict[str, str]:
    """Per name of an entity, the number of the verb right after one of its mentions (the first such
    mention's), where one shows it, else ``COUNTED`` where a count of two or more stands right before a
    mention of a name in the plural (:func:`reads_counted_plural`)."""
    out: dict[str, str] = {}
    for m in entity:
        name = str(m["name"])
        pos = m["pos"]
        assert isinstance(pos, (list, tuple))
        sent = sents[int(m["sent_id"])]  # type: ignore[call-overload]
        a, b = int(pos[0]), int(pos[1])
        # the first verb decides, and outranks a count seen at an earlier mention
        if b < len(sent) and (number := _VERBS.get(sent[b])) is not None and out.get(name, COUNTED) == COUNTED:
            out[name] = number
        elif name not in out and reads_counted_plural(name) and _counted(sent, a) and not (
                b < len(sent) and counts_a_noun(sent[b])):  # "the 14 Africa Cup teams" counts the teams
            out[name] = COUNTED
    return out


def breaks_number(old: str, new: str, number: str | None) -> bool:
    """Whether ``new``, written where ``old`` stands before a verb of ``number``, reads against that verb: a
    plural name before a singular verb the old name agreed with, or the other way round; after a count
    (``COUNTED``), a name not in the plural ("two EuroLeague Championships" never "five Ryder Cup")."""
    if number == COUNTED:
        return not reads_counted_plural(new)
    if number is None or reads_plural(old) == reads_plural(new):
        return False
    return reads_plural(new) if number == SINGULAR else not reads_plural(new)


__all__ = ["COUNTED", "PLURAL", "PLURAL_LAST_WORDS", "SINGULAR", "breaks_number", "reads_counted_plural", "reads_plural", "verb_numbers"]
