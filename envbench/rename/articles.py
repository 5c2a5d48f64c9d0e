"""Indefinite-article agreement: "a British soldier" renamed to "Italian" reads "an Italian soldier".

The rule (:func:`article_for`) is the spoken one, approximated from spelling:

* "an" before a vowel sound, "a" before a consonant sound: "an Italian", "a Danish", "an 8-track",
  "an 11th", "an 18-year-old", "a 7";
* vowel letters that sound as consonants take "a": "a European", "a Ukrainian", "a Uruguayan",
  "a United", "a one-off", "a Utah"; a silent h takes "an": "an hour", "an honorary", "an heir";
* an abbreviation of at most three capitals, or a letter before a non-letter, is read letter by
  letter: "an FBI", "an NBA", "an X-ray", "an R&B", "a UK"; longer capitals are read as a word:
  "a NATO", "an ESPN".

:func:`agree` changes the token before a renamed mention only when that token is "a" or "an"
(any case), the original name agreed with it under this rule (so a rule gap or a typo in the source
is left as written) and the new name wants the other article. One token changes, never the count;
its case follows the old token ("A" -> "An", "an" -> "a", "AN" -> "A").
"""

from __future__ import annotations

_SILENT_H = ("hour", "honest", "honor", "honour", "heir", "herb")
_YOO = ("uni", "uk", "ug", "ura", "ure", "uri", "uru", "usa", "use", "usu", "uti", "utah", "eu", "ewe",
        "one", "once")
_UN_PREFIXED = ("unin", "unim", "unid")  # un- words: "an uninhabited", "an unidentified"
_LETTERS_AN = frozenset("AEFHILMNORSX")  # letters whose names start with a vowel sound ("eff", "aitch")


def article_for(word: str) -> str | None:
    """ "a" or "an" before ``word`` (a token: "Italian", "FBI", "18-year-old"); None when it starts
    with no letter or digit (a quote, a bracket)."""
    w = word.lstrip("\"'“‘(«[")
    if not w or not w[0].isalnum():
        return None
    if w[0].isdigit():
        digits = len(w) - len(w.lstrip("0123456789"))
        if w[0] == "8" or (w[:2] in ("11", "18") and digits in (2, 4, 5)):  # eight..., eleven, eighteen
            return "an"
        return "a"
    if w[0].isupper() and (len(w) == 1 or not w[1].isalpha() or (w.isupper() and w.isalpha() and len(w) <= 3)):
        return "an" if w[0] in _LETTERS_AN else "a"
    low = w.casefold()
    if low.startswith(_SILENT_H):
        return "an"
    if low.startswith(_YOO) and not low.startswith(_UN_PREFIXED):
        return "a"
    return "an" if low[0] in "aeiou" else "a"


def _cased(article: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return article.upper()
    return article.capitalize() if like[0].isupper() else article


def agree(token: str, old_word: str, new_word: str) -> str:
    """The token before a renamed mention whose first token went from ``old_word`` to ``new_word``."""
    if token.casefold() not in ("a", "an"):
        return token
    old, new = article_for(old_word), article_for(new_word)
    if old is None or new is None or old != token.casefold() or new == old:
        return token
    return _cased(new, token)


__all__ = ["agree", "article_for"]
