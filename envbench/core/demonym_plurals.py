"""The plural of a demonym: how a text names a people ("Americans", "Israelis"), from the adjective.

One rule for the two jobs that need it: the offline lexicon (``worlds.gazetteers``) lists the plural
forms it knows as forms of their own, and ``generate`` gives a plural mention ("Many Americans have
stayed here") the plural of the new item's demonym ("Many Danes", "Many Ghanaians") where the item has
no plural form of its own (Wikidata's P1549 mostly holds the adjective alone).
"""

from __future__ import annotations


def regular_plural(form: str) -> str | None:
    """The regular plural of a one-word demonym: -an, -i, -ine, -ite and -er take an -s ("American" ->
    "Americans", "Israeli" -> "Israelis", "Argentine" -> "Argentines", "New Zealander" is two words), and a
    noun in -man takes -men ("Englishman" -> "Englishmen");
    None for forms that have none ("French", "Danish") or are the same in the plural ("Chinese", "Swiss")."""
    if " " in form or not form[:1].isupper():
        return None
    if form.endswith(_MAN):  # "Englishman" -> "Englishmen"; not "German", "Roman", "Ottoman"
        return form[:-2] + "en"
    if form.endswith(("an", "i", "ine", "ite", "er")):
        return form + "s"
    return None


# the endings of a demonym made with "-man" ("Englishman", "Frenchman", "Scotsman", "Manxman", "Norseman")
_MAN = ("shman", "chman", "sman", "xman", "seman")


def same_in_plural(form: str) -> bool:
    """Whether a one-word demonym is its own plural: "Chinese", "Japanese", "Swiss" ("Many Chinese have
    stayed here")."""
    return " " not in form and form[:1].isupper() and form.endswith(("ese", "ss"))


def singular_of(name: str) -> str | None:
    """The singular a plural people's name was made from by :func:`regular_plural` ("Americans" ->
    "American", "Israelis" -> "Israeli"); None for a name that is no such plural."""
    if " " in name or not name[:1].isupper() or not name.endswith("s") or name.endswith("ss"):
        return None
    stem = name[:-1]
    return stem if regular_plural(stem) == name else None


__all__ = ["regular_plural", "same_in_plural", "singular_of"]
