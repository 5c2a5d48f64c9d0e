"""A person's new name keeps the form of the old one: a full name, a surname after a title, a peerage.

The paper's alias-wise pairing gives a name of the new item to each name of the person, whatever its
form, and a reader notices: "Its founding dean was Charles Kothe" read "… was Billy", "Confederate
general Robert E. Lee" read "Confederate general Matthew" (a corpus person known by a given name
only), and "Arthur Peel , 1st Viscount Peel" read "James Monroe , 1st Tom Coburn". The rule
(:func:`keep_forms`), on a person's pairing after its surnames (``substitute.surnames_follow``):

* **a full name stays a full name**: an old name of two words or more takes no new name of one word
  ("Charles Kothe" never "Billy"); the candidate is passed over;
* **a surname after a title stays a surname**: a one-word name that the document writes after a title
  that goes with a surname (:data:`SURNAME_TITLES`: "General Lee", "Mr. Smith", "President Lincoln",
  "Dr. Jones"; not "Sir", "King" or "Saint", which go with a given name) takes the last word of a longer
  new name, with its particle ("General Lee" -> "General Smith" of "Matthew Smith"), and never a new name of
  one word that is a common given name (:func:`is_given_name`: "General Matthew");
* **a peerage stays a peerage**: a name of a rank and a name (:func:`is_peerage`: "Viscount Peel", "Earl of
  Derby", "Baron Rothschild") keeps its rank and takes the new surname, the last word of the person's new
  full name (the longest new name of two words or more; else the new item's label): "Arthur Peel , 1st
  Viscount Peel" -> "James Monroe , 1st Viscount Monroe".

The names written so count as names the rule wrote (``substitutions.parquet`` ``written``); a peerage beside
another name of the person (:func:`peerage_names`) takes no name of the new item, so the draw needs one name
fewer.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence

from envbench.core.gender import ONE_WORD_MIN_COUNT, first_name_lexicon, lexicon_key
from envbench.rename.substitute import PARTICLES, NewName

# titles written before a surname alone ("General Lee", "Mr. Smith"); case-folded, with and without a dot
SURNAME_TITLES = frozenset({
    "mr", "mr.", "mrs", "mrs.", "ms", "ms.", "miss", "dr", "dr.", "doctor", "professor", "prof.", "general", "gen.",
    "colonel", "col.", "captain", "capt.", "major", "lieutenant", "lt.", "admiral", "adm.", "commander", "sergeant",
    "sgt.", "corporal", "private", "marshal", "senator", "sen.", "governor", "gov.", "president", "judge", "justice",
    "representative", "rep.", "congressman", "congresswoman", "chancellor", "minister", "premier", "mayor",
    "inspector", "detective", "coach", "officer", "agent", "monsieur", "madame", "herr", "frau", "señor", "señora"})
# the ranks of a peerage, written before the title's name ("Viscount Peel", "Earl of Derby")
PEERAGE_RANKS = frozenset({"viscount", "viscountess", "baron", "baroness", "earl", "countess", "duke", "duchess",
                           "marquess", "marquis", "marchioness", "lord", "baronet"})


def is_peerage(name: str) -> bool:
    """Whether a name is a rank of a peerage and a capitalised name, "of" between them or not: "Viscount
    Peel", "Earl of Derby", "Lord Byron"; not "Viscount" alone, nor "Duke of the Abruzzi family"."""
    words = name.split()
    if len(words) < 2 or words[0].casefold() not in PEERAGE_RANKS:
        return False
    rest = words[2:] if words[1] == "of" else words[1:]
    return bool(rest) and all(w[:1].isupper() for w in rest)


@functools.lru_cache(maxsize=1 << 14)
def is_given_name(word: str) -> bool:
    """Whether one word is a common given name: the first-name lexicon counts at least
    ``core.gender.ONE_WORD_MIN_COUNT`` carriers of it ("Matthew", "Billy"; not "Tempah", not "Kothe")."""
    hit = first_name_lexicon().get(lexicon_key(word))
    return hit is not None and hit[1] >= ONE_WORD_MIN_COUNT


def _words(name: str) -> list[str]:
    return [w for w in name.split() if any(ch.isalpha() for ch in w)]


def _surname(nn: NewName) -> tuple[str, ...] | None:
    """The last word of a name of two words or more, with its particle ("da Vinci"); None for one word."""
    toks = nn.tokens
    if len(toks) < 2 or not toks[-1][:1].isalpha():
        return None
    return toks[-2:] if len(toks) > 2 and toks[-2] in PARTICLES else toks[-1:]


def keep_forms(originals: Sequence[str], mapping: Mapping[str, NewName], titled: Iterable[str], label: str,
               full: Mapping[str, NewName] | None = None) -> tuple[dict[str, NewName], frozenset[str]] | None:
    """A person's new names with their forms kept (the module docstring's rule), and the old names whose new
    names the rule wrote; None when a full name would become one word, or a surname after a title a given
    name. ``titled``: the one-word names the document writes after a title of :data:`SURNAME_TITLES`;
    ``label``: the new item's label; ``full``: the pairing of an earlier entity of the same item, whose full
    names give the surname of a peerage as this one's own would."""
    out = dict(mapping)
    wrote: set[str] = set()
    fulls = [nn for nm, nn in [*(full or {}).items(), *mapping.items()] if len(_words(nm)) > 1 and not is_peerage(nm)
             and len(nn.tokens) > 1]
    source = max(fulls, key=lambda nn: (len(nn.tokens), nn.name), default=None)
    titles = frozenset(titled)
    for nm in originals:
        nn = out.get(nm)
        if nn is None and not is_peerage(nm):
            continue
        if is_peerage(nm):
            words = nm.split()
            rank = words[:2] if words[1] == "of" else words[:1]
            surname = _surname(source) if source is not None else None
            if surname is None:
                first = NewName(label, tuple(label.split()))
                surname = _surname(first) if len(first.tokens) > 1 else None
            if surname is None:
                return None  # no surname to make a peerage of
            out[nm] = NewName(" ".join((*rank, *surname)), (*rank, *surname))
            wrote.add(nm)
        elif nn is None:
            continue
        elif nm in titles and len(_words(nm)) == 1:
            surname = _surname(nn)
            if surname is not None:
                if surname != nn.tokens:
                    out[nm] = NewName(" ".join(surname), surname)
                    wrote.add(nm)
            elif is_given_name(nn.name):
                return None  # "Confederate general Matthew"
        elif len(_words(nm)) > 1 and len(_words(nn.name)) < 2:
            return None  # "Its founding dean was Billy"
    return out, frozenset(wrote)


def peerage_names(names: Sequence[str]) -> list[str]:
    """The peerages among a person's names that another name of the person stands beside (:func:`is_peerage`):
    written from the new full name, they take no name of the new item ("Arthur Peel", "Viscount Peel")."""
    peerages = [nm for nm in names if is_peerage(nm)]
    return peerages if len(peerages) < len(names) else []


def titled_names(doc_sents: Sequence[Sequence[str]], entity: Sequence[Mapping[str, object]]) -> frozenset[str]:
    """The one-word names of a person the document writes after a title of :data:`SURNAME_TITLES` in one of
    their mentions ("General Lee", "Mr. Smith")."""
    out: set[str] = set()
    for m in entity:
        name = str(m["name"])
        pos = m["pos"]
        assert isinstance(pos, (list, tuple))
        a = int(pos[0])
        sid = int(m["sent_id"])  # type: ignore[call-overload]
        if len(name.split()) == 1 and a > 0 and doc_sents[sid][a - 1].casefold() in SURNAME_TITLES:
            out.add(name)
    return frozenset(out)


__all__ = ["PEERAGE_RANKS", "SURNAME_TITLES", "is_given_name", "is_peerage", "keep_forms", "peerage_names",
           "titled_names"]
