"""Regnal names: a person named as a monarch is renamed as one, and no one else is.

A reader takes "Frederick I", "Carol I" or "Queen Cleopatra VII" for a ruler. Renamed without this rule,
a film director read "directed by Frederick I", "Walt Disney" became "Ptolemaic Queen Cleopatra VII", and
"Charles IV of Spain abdicated" read "Bob Carr of Spain abdicated" (the lock had 298 such persons of
7,605, Env dev 379 of 7,415).

The rule (:func:`is_regnal`), on a name's words:

* a regnal name is one given name followed by a Roman numeral (I to XXXIX): "Frederick I", "Carol I",
  "Louis XIV", "Léopold I"; titles may stand before it ("King Carol I", "Elector Frederick III",
  "Ptolemaic Queen Cleopatra VII") and a place after it ("Charles IV of Spain");
* two or more name words before the numeral make a generational suffix, not a reign: "John D.
  Rockefeller III", "John E. Jones III" read as anyone else;
* "Malcolm X" is a name, not a reign.

A PER entity written right after a sovereign's title ("Emperor Xuanzong", "Pope Francis", "Queen Victoria";
:func:`after_sovereign_title`) is named as a monarch too, though its name has no numeral, and takes nothing
else: renamed as anyone, "an eunuch official of Emperor Xuanzong" read "of Emperor Lino S. Cayetano"; where
no drawn candidate has a monarch's name it keeps its own (``no_candidate``).

A PER entity without a regnal name never takes one (``engine.settle_linked``). An entity with one
prefers a candidate that gives one among all its draws and takes the first that fits when none does:
a monarch is a human to Wikidata, like everyone else, so on a real index a few in a thousand of a
window's candidates are monarchs, and requiring one would keep most monarchs unrenamed (on the lock it
kept 61 more rows, as ``no_gender``, when only queens were drawn).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

_NUMERAL = re.compile(r"(?=[IVX])X{0,3}(?:IX|IV|V?I{0,3})")
# words that stand before a monarch's given name ("King Carol I", "Pope Pius X", "Elector Frederick III")
TITLES = frozenset({"king", "queen", "pope", "emperor", "empress", "tsar", "czar", "tsarina", "sultan", "shah",
                     "elector", "prince", "princess", "duke", "duchess", "archduke", "archduchess", "grand", "count",
                     "countess", "margrave", "landgrave", "saint", "st.", "patriarch", "pharaoh", "caliph", "emir",
                     "ptolemaic", "antipope", "regent", "infante", "infanta"})
_NOT_REGNAL = frozenset({"Malcolm X"})
# titles only a sovereign bears, in the singular and the plural ("Popes Pius XII , John XXIII"): a name after
# one is a monarch's; not "prince", "count" or "duke", which a name of any form may follow ("Count Lev
# Nikolayevich Tolstoy")
SOVEREIGN_TITLES = frozenset({"king", "queen", "pope", "emperor", "empress", "tsar", "czar", "tsarina", "sultan",
                              "shah", "pharaoh", "caliph", "kings", "queens", "popes", "emperors", "tsars",
                              "sultans", "pharaohs", "caliphs"})


@functools.lru_cache(maxsize=1 << 16)
def is_regnal(name: str) -> bool:
    """Whether ``name`` reads as a monarch's (the module docstring's rule).

    Example: is_regnal("Charles IV of Spain") is True; is_regnal("John D. Rockefeller III") is False."""
    if name in _NOT_REGNAL:
        return False
    words = name.split()
    at = next((i for i, w in enumerate(words) if i > 0 and _NUMERAL.fullmatch(w)), None)
    if at is None or (at + 1 < len(words) and words[at + 1] != "of"):
        return False
    given = words[at - 1]
    return given[:1].isupper() and given.replace("-", "").isalpha() and all(
        w.casefold() in TITLES for w in words[:at - 1])


def after_sovereign_title(sents: Sequence[Sequence[str]], mentions: Iterable[Mapping[str, Any]]) -> bool:
    """Whether a mention stands right after a sovereign's title (``SOVEREIGN_TITLES``, any case): "Emperor
    Xuanzong", "Pope Francis", "Popes Pius XII"."""
    for m in mentions:
        a = m["pos"][0]
        if a > 0 and sents[m["sent_id"]][a - 1].casefold() in SOVEREIGN_TITLES:
            return True
    return False


def any_regnal(names: Iterable[str]) -> bool:
    """Whether one of ``names`` is regnal."""
    return any(is_regnal(n) for n in names)


__all__ = ["SOVEREIGN_TITLES", "TITLES", "after_sovereign_title", "any_regnal", "is_regnal"]
