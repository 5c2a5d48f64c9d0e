"""New names that read as common words, not as names: "Rare", "Prize", "Delta Amacuro states".

A corpus knowledge base (``kb-from-corpus``) names its items by the mentions of its documents, and a
mention may be a capitalised common word ("Prize" of a prize, "Rare" of the games company, "University"
of a university written short) or end in a kind word written in lower case ("Delta Amacuro states" of
"the Monagas and Delta Amacuro states", "PAL region"). Drawn as a new name they read wrong where the old
name was a name: "based on the Marvel comic book" had read "based on the Rare comic book", "awarded the
VC" read "awarded the Prize", "Shinkafi in Zamfara State" read "Shinkafi in Delta Amacuro states", and
"Kahn said" read "Chief said".

* :func:`written_common`: the words the documents being renamed write in lower case, outside every
  mention, at least :data:`COMMON_MIN` times. The usage is read off the documents, as
  ``articles.written_bare`` reads theirs; a word they never write is not judged.
* :func:`reads_common`: a one-word name, capitalised and otherwise in lower-case letters, that is one of
  those words ("Rare", "Prize", "Wall"; not "UN", "Graz" or "iTunes").
* :func:`ends_common`: a name of more than one word whose last word is a lower-case word its old name does
  not end in ("Delta Amacuro states" for "Zamfara State"; "Dadhumati river" for "Big Black River" reads
  as the old name did and passes).
* :func:`opens_article`: a name opening with an article ("The Corporal"), which a person's name that does
  not open with one never takes ("co - founded by Costis Palamas" had read "by The Corporal").

``generate`` refuses a candidate whose new name for an old name does one of these where the old name does
not: the old name "Rare" of the games company takes another capitalised common word, and a person named
"The Edge" another "The" name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from envbench.core.mentions import mention_mask
from envbench.rename.articles import ARTICLE_WORDS

COMMON_MIN = 1  # lower-case uses outside mentions that make a word common: a test set of 500 documents writes "rare" once


def written_common(docs: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """The alphabetic words the documents write in lower case, outside every mention, at least
    :data:`COMMON_MIN` times ("rare", "prize", "university")."""
    counts: dict[str, int] = {}
    for doc in docs:
        covered = mention_mask(doc)
        for si, sent in enumerate(doc["sents"]):
            for i, tok in enumerate(sent):
                if not covered[si][i] and tok.isalpha() and tok.islower():
                    counts[tok] = counts.get(tok, 0) + 1
    return frozenset(w for w, n in counts.items() if n >= COMMON_MIN)


def reads_common(name: str, common: frozenset[str]) -> bool:
    """Whether ``name`` is one capitalised word whose lower-case form the documents write as a common word
    ("Rare", "Prize"); never a run of capitals ("UN"), a word with inner capitals or one they never write."""
    word = name.strip()
    return (word.isalpha() and word[:1].isupper() and word[1:].islower() and " " not in word
            and word.lower() in common)


def ends_common(old: str, new: str) -> bool:
    """Whether ``new`` has more than one word and ends in a lower-case word that ``old`` does not end in:
    "Delta Amacuro states" for "Zamfara State", "PAL region" for "Umbria"; not "Dadhumati river" for "Big
    Black River", nor "Newman festivals" for "Bach festivals"."""
    words, own = new.split(), old.split()
    if len(words) < 2 or not own:
        return False
    last = words[-1]
    return (last.isalpha() and last.islower() and last.casefold() != own[-1].casefold()
            and not (own[-1].isalpha() and own[-1].islower()))


def opens_article(name: str) -> bool:
    """Whether ``name`` opens with an article and goes on: "The Corporal", "The Edge"."""
    words = name.split()
    return len(words) > 1 and words[0].casefold() in ARTICLE_WORDS


def new_name_reads_common(old: str, new: str, common: frozenset[str], coarse: str) -> bool:
    """Whether new name ``new`` of old name ``old`` (of an entity of coarse type ``coarse``) reads as a common
    word where ``old`` reads as a name: :func:`reads_common`; for a person :func:`opens_article`; for a place
    or an organisation :func:`ends_common` (a title of a work may end in a lower-case word: "Portugal in my
    heart")."""
    if reads_common(new, common) and not reads_common(old, common):
        return True
    if coarse == "PER":
        return opens_article(new) and not opens_article(old)
    return coarse in ("LOC", "ORG") and ends_common(old, new)


__all__ = ["COMMON_MIN", "ends_common", "new_name_reads_common", "opens_article", "reads_common", "written_common"]
