"""Short names that follow their full name: "Yukon River ... the Yukon", "National Hockey League ... NHL".

An entity often has, beside its full name, a short name made from it: its initials, or the name less
its last or first words. The paper's rule draws an item with at least as many names as the entity,
so such an entity needs a candidate with an alias of the right shape, and where the offline KB (or a
small class) has none the entity is kept (``no_candidate``). This module states when a name is a
short form of another name of the same entity, and how the new full name gives the new short one,
so that ``engine.settle_linked`` can, once every candidate with enough names has failed, draw among
items with fewer names and write the short names itself. Draws that succeed under the paper's rule
are left as they are.

The rule (:func:`short_names`), for a LOC, ORG or MISC entity (a person's surname has its own rule,
``substitute.surnames_follow``), comparing names without a leading "the" and word by word:

* **initials** (``ACRONYM``): the short name is 2 to 6 capital letters, dotted or not ("NHL",
  "U.S."), and the initials of the words of a longer name of the entity (split at spaces and
  hyphens), small words such as "of", "the", "and" skipped ("National Hockey League" -> "NHL",
  "Quebec Major Junior Hockey League" -> "QMJHL", "United Kingdom" -> "UK") or not ("Museum of
  Contemporary Art" -> "MOCA");
* **the front** (``DROP_LAST``): a longer name is the short name and more words, the last of them
  capitalised: "Yukon River" -> "Yukon", "Overbrook High School" -> "Overbrook", "Atari , SA" -> "Atari";
* **the back** (``DROP_FIRST``): a longer name is more words and the short name: "American Civil War"
  -> "Civil War", "Kingdom of Scotland" -> "Scotland";
* **the plural** (``PLURAL``): another name with its last word in a regular plural: "Connecticut
  Rivers" of "Connecticut River", "Route Armies" of "Route Army", "Stewart rivers" of "Stewart River".

A name that is itself the full name of another short name, or an adjectival name (it takes a demonym),
is no short name; a short name with several full names takes the first in the entity's order.

How a new full name gives the new short name (:func:`derive`), or None when it cannot, so the
candidate is passed over:

* initials: the initials of the new name's words, each of which but the small ones must open with a
  capital letter, and no digit in it ("2011 - 12 ACT Budget" gives none); at least as many letters as
  the old short name, up to 3 ("NHL" never becomes "HS" of "Hague School", "TD" may become "MP"), and
  3 for a place ("Mongol Empire" would give a "ME" no reader knows, "Central African Republic" gives
  "CAR"); dotted when the old short name was ("U.S." -> "F.R."); "the" kept where the old short name
  had it ("the UK" -> "the CAR"); where the old initials gave small words a letter, the new ones do,
  from a name with as many small words ("Museum of Fine Arts" -> "MOFA", never "OOMMOC" of
  "Organization of Military Museums of Canada");
* the front: only when the new name ends with the same words ("Yukon River" -> "Mackenzie River"
  gives "Mackenzie", "Lincoln High School" gives "Lincoln"; "Lake Baikal" gives nothing);
* the back: when the new name opens with the same words ("Kingdom of Scotland" -> "Kingdom of Fife"
  gives "Fife"), or ends with the old short name itself, which it then keeps ("American Civil War" ->
  "Spanish Civil War" gives "Civil War", "Delaware Senate" -> "Ohio State Senate" gives "Senate"); a
  new name that ends only with its last word gives nothing, for what is left may be no name at all
  ("London Heathrow Airport" / "Heathrow Airport" -> "Vienna International Airport" would give
  "International Airport"), nor does one that shares no word ("Star Trek" -> "Doctor Who");
* the plural: only when the new name ends with the same head word, which takes the old plural's
  form ("Orongorongo River" gives "Orongorongo Rivers"; "Orongorongo Valley" gives nothing, where
  alias-wise pairing had made "Connecticut Rivers" read "Orongorongo Valley");
* what is left of a new name after words are dropped must read as a name: it opens with no small
  word and every word in it is capitalised but the small words the old short name had ("Piracy on
  Falcon Lake", a corpus KB's lake, gives no "Piracy on Falcon" for "Liangzi" of "Liangzi Lake"; "United
  States Department of Energy" gives "Department of Energy" for "Department of the Interior").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from envbench.rename.substitute import NewName, nested_key

ACRONYM = "acronym"
DROP_LAST = "drop_last"
DROP_FIRST = "drop_first"
PLURAL = "plural"
SHORT_TYPES = frozenset({"LOC", "ORG", "MISC"})
# words an acronym skips ("United States of America" -> "USA", "Food and Drug Administration" -> "FDA")
_SMALL = frozenset({"of", "the", "and", "for", "in", "on", "at", "to", "a", "an", "&", "de", "du", "des", "la",
                    "le", "les", "del", "der", "von", "van", "y", "e", "et", "und"})
_ACRONYM = re.compile(r"^(?:[A-Z]\.){2,6}$|^[A-Z]{2,6}$")
_SPLIT = re.compile(r"[\s\-–]+")
# a new acronym has at least as many letters as the old one, up to this many ("NHL" never becomes "HS" of
# "Hague School", "TD" may become "MP"), and a place's at least this many ("Mongol Empire" gives no "ME")
_MIN_INITIALS = 3


@dataclass(frozen=True)
class ShortName:
    """How one short name of an entity is made from one of its longer names."""

    full: str  # the entity's longer name it is made from
    rule: str  # ACRONYM, DROP_LAST, DROP_FIRST or PLURAL
    # DROP_LAST, DROP_FIRST: the words dropped ("High School" of "Overbrook High School"); PLURAL: the plural
    # last word ("Rivers"); ACRONYM: none when small words give no letter ("NHL"), ("small",) when they do
    # ("MOCA", Museum of Contemporary Art)
    words: tuple[str, ...] = ()


def _bare(name: str) -> tuple[str, str]:
    """(the leading "the " or "", the name without it)."""
    first, _, rest = name.partition(" ")
    return (first + " ", rest) if first.casefold() == "the" and rest else ("", name)


def _initials(words: Sequence[str], capitals: bool, small: bool = False) -> str | None:
    out = []
    for w in words:
        if not w[:1].isalpha():
            continue  # punctuation and numbers ("Township High School District 214")
        if w.casefold() in _SMALL:
            if small:
                out.append(w[0].upper())
            continue
        if capitals and not w[:1].isupper():
            return None
        out.append(w[0].upper())
    return "".join(out)


def _small_words(name: str) -> int:
    return sum(w.casefold() in _SMALL for w in _SPLIT.split(_bare(name)[1].strip()))


def _plural_of(word: str, of: str) -> bool:
    """Whether ``word`` is a regular plural of ``of`` ("Rivers", "rivers" of "River"; "Armies" of "Army")."""
    w, o = word.casefold(), of.casefold()
    return len(o) > 1 and o[-1].isalpha() and w in {o + "s", o + "es", o[:-1] + "ies" if o.endswith("y") else o + "s"}


def _made_from(short: str, full: str) -> ShortName | None:
    """How ``short`` is made from ``full`` (both without "the"), else None."""
    if _ACRONYM.match(short) and " " in full.strip():
        letters, words = short.replace(".", ""), _SPLIT.split(full.strip())
        if _initials(words, capitals=False) == letters:
            return ShortName(full, ACRONYM)
        if _initials(words, capitals=False, small=True) == letters:
            return ShortName(full, ACRONYM, ("small",))
    s, f = short.split(), full.split()
    if len(f) > 1 and len(s) == len(f) and s[:-1] == f[:-1] and _plural_of(s[-1], f[-1]):
        return ShortName(full, PLURAL, (s[-1],))
    if s and len(f) > len(s) and s[0].casefold() not in _SMALL:  # "of Hanover" is no name
        if f[:len(s)] == s and f[-1][:1].isupper():
            return ShortName(full, DROP_LAST, tuple(f[len(s):]))
        if f[-len(s):] == s:
            return ShortName(full, DROP_FIRST, tuple(f[:-len(s)]))
    return None


@functools.lru_cache(maxsize=1 << 16)  # asked of every accepted candidate, its names against the entity's
def same_by_form(old: str, new: str) -> bool:
    """Whether a new name is an old name made short by the rule of the module docstring ("United Nations"
    -> "UN", "Yukon River" -> "Yukon", "UNESCO World Heritage Site" -> "... Sites"), or the old one is the
    initials or the plural of the new one ("UN" -> "United Nations"), with or without "the": the same
    thing, so a renaming to it renames nothing a reader would notice. A longer name that merely holds the
    old one is another thing ("Senate" -> "Massachusetts State Senate", "University" -> "University of Uyo")."""
    x, y = _bare(old)[1].strip(), _bare(new)[1].strip()
    if x == y:
        return False
    if _made_from(y, x) is not None:
        return True
    back = _made_from(x, y)
    return back is not None and back.rule in (ACRONYM, PLURAL)


def short_names(names: Sequence[str], coarse: str, adjectival: Sequence[str] = ()) -> dict[str, ShortName]:
    """The entity's names that are short forms of its other names (the rule of the module docstring)."""
    if coarse not in SHORT_TYPES or len(names) < 2:
        return {}
    return dict(_short_names(tuple(names), tuple(adjectival)))


@functools.lru_cache(maxsize=1 << 14)  # an entity is asked once per seed, and again after each fetch
def _short_names(names: tuple[str, ...], adjectival: tuple[str, ...]) -> tuple[tuple[str, ShortName], ...]:
    skip = set(adjectival)
    found: dict[str, ShortName] = {}
    for short in names:
        if short in skip:
            continue
        for full in names:
            if full == short or full in skip:
                continue
            made = _made_from(_bare(short)[1], _bare(full)[1])
            if made is not None:
                found[short] = ShortName(full, made.rule, made.words)
                break
    # a name some other name is made from stays a full name: "Civil War" of "American Civil War" is short,
    # but in {"Opole Voivodeship", "Opole", "Op"} only what hangs off a full name is written by rule
    fulls = {s.full for s in found.values()}
    return tuple((nm, s) for nm, s in found.items() if nm not in fulls)


def _cut(text: str, toks: Sequence[str], n: int, front: bool) -> str | None:
    """``text`` less its first (``front``) or last ``n`` tokens, or None when they are not written in it."""
    for t in (toks[:n] if front else reversed(toks[len(toks) - n:])):
        text = text.lstrip() if front else text.rstrip()
        if not (text.startswith(t) if front else text.endswith(t)):
            return None
        text = text[len(t):] if front else text[: len(text) - len(t)]
    return text.strip()


def _span(toks: Sequence[str], words: Sequence[str], front: bool) -> int | None:
    """How many tokens at the front (or end) of ``toks`` spell ``words`` (spaces aside), leaving at least
    one token; None when none do."""
    want = "".join(words)
    got = ""
    for k in range(1, len(toks)):
        got = got + toks[k - 1] if front else toks[-k] + got
        if got == want:
            return k
        if len(got) >= len(want):
            return None
    return None


def derive(old_short: str, short: ShortName, new_full: NewName, coarse: str) -> NewName | None:
    """The new short name that ``new_full`` (what ``short.full`` became) gives, or None (module docstring)."""
    the, old = _bare(old_short)
    _, full_text = _bare(new_full.name)
    toks = list(new_full.tokens[1:] if new_full.tokens and new_full.tokens[0].casefold() == "the"
                and len(new_full.tokens) > 1 else new_full.tokens)
    written = the.strip()
    if short.rule == ACRONYM:
        if any(ch.isdigit() for ch in full_text):
            return None  # "2011 - 12 ACT Budget" has no initials a reader would make
        words = _SPLIT.split(full_text.strip())
        if short.words and sum(w.casefold() in _SMALL for w in words) != _small_words(short.full):
            return None  # "MOCA" of "Museum of Contemporary Art" never becomes "OOMMOC"
        letters = _initials(words, capitals=True, small=bool(short.words))
        least = _MIN_INITIALS if coarse == "LOC" else min(_MIN_INITIALS, len(old.replace(".", "")))
        if not letters or not least <= len(letters) <= 6:
            return None
        text = ".".join(letters) + "." if "." in old else letters
        return NewName(f"{written} {text}", (written, text)) if written else NewName(text, (text,))
    # words are compared as written, however either side was tokenised ("Ubisoft, SA" has the tokens
    # "Ubisoft" "," "SA", and the old "Atari , SA" the words "Atari" "," "SA")
    if short.rule == PLURAL:  # the same head, in the old plural's form: "Orongorongo River" -> "Orongorongo Rivers"
        head = short.full.split()[-1]
        if len(toks) < 2 or toks[-1] != head or (stem := _cut(full_text, toks, 1, front=False)) is None or not stem:
            return None
        text = f"{stem} {short.words[0]}"
        return (NewName(f"{written} {text}", (written, *toks[:-1], short.words[0])) if written
                else NewName(text, (*toks[:-1], short.words[0])))
    if short.rule == DROP_LAST:  # the new name must end with the words dropped: "Mackenzie River" -> "Mackenzie"
        if (k := _span(toks, short.words, front=False)) is None:
            return None
        rest, text = toks[:-k], _cut(full_text, toks, k, front=False)
    elif (k := _span(toks, short.words, front=True)) is not None:  # the same words open it: "Kingdom of Fife"
        rest, text = toks[k:], _cut(full_text, toks, k, front=True)
    elif (k := _span(toks, tuple(old.split()), front=False)) is not None:
        # it ends with the old short name itself: "Spanish Civil War" -> "Civil War", "Ohio Senate" -> "Senate";
        # "Vienna International Airport" gives no "International Airport" for "Heathrow Airport"
        rest, text = toks[-k:], _cut(full_text, toks, len(toks) - k, front=True)
    else:
        return None
    # what is left reads as a name: no small word first, every word capitalised but the small words the old
    # short name had ("Piracy on Falcon Lake" gives no "Piracy on Falcon")
    words = text.split() if text else []  # as written: the tokens of "Whys" are "Why" "s"
    if not words or not rest or words[0].casefold() in _SMALL or not words[0][:1].isalnum():
        return None
    small_ok = any(w.casefold() in _SMALL for w in old.split())  # "Department of the Interior" -> "Department of Energy"
    if any(w[:1].isalpha() and not w[:1].isupper() and not (small_ok and w.casefold() in _SMALL) for w in words):
        return None
    return NewName(f"{written} {text}", (written, *rest)) if written else NewName(text, tuple(rest))


def may_follow(shorts: Mapping[str, ShortName], names: Sequence[str]) -> bool:
    """A quick test before pairing: whether some name of a candidate could give each short name (a name
    ending with the dropped words, opening with them, ending with the head; spaces aside), so a second draw
    does not pair the hundreds of candidates that give none (:func:`derive` decides)."""
    flat = ["".join(_bare(n)[1].split()) for n in names]
    for nm, short in shorts.items():
        if short.rule == ACRONYM:
            continue
        if short.rule == PLURAL:
            ends = ("".join(short.full.split()[-1:]),)
            starts: tuple[str, ...] = ()
        elif short.rule == DROP_LAST:
            ends, starts = ("".join(short.words),), ()
        else:
            ends, starts = ("".join(_bare(nm)[1].split()),), ("".join(short.words),)
        if not any(f.endswith(ends) or (starts and f.startswith(starts)) for f in flat):
            return False
    return True


def follow(shorts: Mapping[str, ShortName], mapping: Mapping[str, NewName], coarse: str) -> dict[str, NewName] | None:
    """``mapping`` (the full names' new names) with every short name's new name added, or None when
    one cannot be made or would repeat another new name of the entity."""
    out = dict(mapping)
    for nm, short in shorts.items():
        full = out.get(short.full)
        made = derive(nm, short, full, coarse) if full is not None else None
        if made is None or any(made.name == nn.name for nn in out.values()):
            return None
        out[nm] = made
    return out


# ---------------------------------------------------------------------------- one name, spelled two ways
def spellings(names: Sequence[str], adjectival: Sequence[str] = ()) -> dict[str, str]:
    """The entity's names that spell another of its names differently ({spelling: the name it spells}):
    the same letters and digits, case, spacing, punctuation and a leading "the" aside ("First - Nations"
    and "First Nations", "Cine-Allianz" and "Cine - Allianz", "The Lightning Seeds" and "Lightning
    Seeds", "U.S." and "US"). Each spells the plainest of them (no leading "the", then the fewest
    marks other than letters, digits and spaces, then the first in the entity's order: "US" for "U.S.",
    "Drossinis" for "Drossinis’"), and takes its new name (:func:`spell_like`): one name needs one new
    name, where alias-wise pairing had made "The Lightning Seeds" / "Lightning Seeds" read "Throwing
    Muses" / "Muses" and "Cine-Allianz" / "Cine - Allianz" two different companies. Adjectival names are
    left out (they take demonyms)."""
    if len(names) < 2:
        return {}
    return dict(_spellings(tuple(names), tuple(adjectival)))


@functools.lru_cache(maxsize=1 << 14)
def _spellings(names: tuple[str, ...], adjectival: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    skip = set(adjectival)
    groups: dict[str, list[str]] = {}
    for nm in names:
        if nm not in skip and (key := nested_key(nm)):
            groups.setdefault(key, []).append(nm)
    out: dict[str, str] = {}
    for group in groups.values():
        if len(group) < 2:
            continue
        plain = min(group, key=lambda nm: (bool(_bare(nm)[0]), sum(not (c.isalnum() or c.isspace()) for c in nm)))
        out.update({nm: plain for nm in group if nm != plain})
    return tuple(out.items())


def spell_like(spelling: str, name: str, new: NewName) -> NewName:
    """What ``spelling`` of ``name`` becomes when ``name`` became ``new``: the same new name, but an
    acronym keeps the old spelling's dots ("US" -> "CAR", so "U.S." -> "C.A.R.") and the "the" before
    it ("the UK" -> "the CAR"); "the" before any other new name is the article rule's to write
    (``articles.keep_the``)."""
    the, bare = _bare(spelling)
    _, new_bare = _bare(new.name)
    if not (_ACRONYM.match(new_bare.replace(".", "")) and _ACRONYM.match(bare.replace(".", ""))):
        return new
    letters = new_bare.replace(".", "")
    text = ".".join(letters) + "." if "." in bare else letters
    written = the.strip()
    return NewName(f"{written} {text}", (written, text)) if written else NewName(text, (text,))


__all__ = ["ACRONYM", "DROP_FIRST", "DROP_LAST", "PLURAL", "SHORT_TYPES", "ShortName", "derive", "follow", "may_follow",
           "same_by_form",
           "short_names", "spell_like", "spellings"]
