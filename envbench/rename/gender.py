"""Renamed people keep their gender: which gender a PER entity has, and which candidates fit it.

The document's evidence is ``envbench.core.gender.document_genders`` (pronouns after its mentions,
gendered nouns beside them); the item's is its P21 value (``core.gender.item_gender`` over the index's
``genders`` table). The rule (:func:`person_gender`, :func:`fits`):

* **Which gender.** The document wins: when it shows the person's gender, that is the gender, whatever
  P21 says ("document"; "document_over_p21" when P21 says otherwise, which ``substitutions.parquet``
  notes); when it does not, the P21 value ("p21"); when neither speaks, the *context gender*
  ("context", ``core.gender.context_genders``): the one gender of every pronoun in the sentences that
  mention the person and the sentence after each, when none of its own evidence is of the other
  gender. It is not the person's gender, but a name of that
  gender contradicts no pronoun near it ("Aguilera revealed that Furler is one of her favorite people
  to work with and that she is very inspiring": Furler never becomes "Derek Shepherd"). When none of
  these speaks, the person's own names ("name", :func:`name_gender`): the lexicon's gender of their first
  names, all of them the same and told by at least ``core.gender.LEXICON_TELLS`` of the carriers, or of a
  name of one word when every name is one word and a common given name ("Josephine"; on the main path a
  person whose item has no P21 and whose document has no pronoun for it). Else unknown (None).
* **Which candidates.** A person whose gender source is P21 draws among items with the same P21 value;
  one whose gender comes from the document or the context, among items whose P21 is that gender's main value
  (Q6581097 male, Q6581072 female). A candidate without P21 is never taken then, since its name may be
  of the other gender ("her eldest son Barbara Stanwyck"). A person of unknown gender takes any
  candidate. An index without the ``genders`` table knows no candidate's gender: there the rule cannot
  apply and every candidate fits (``generate`` says so once).
* **Which names read right.** A person of known gender never takes a name a reader may take for the
  other gender, whatever the candidate's P21 says (:func:`reads_against`): a new name whose first name
  (``core.gender.first_name``) fewer than ``READS_AS`` (75%) of its carriers of the person's gender carry
  (``core.gender.first_name_share``, a lexicon of 36 sources from many countries) is skipped: "Kim",
  "Sasha" and "Jean" for either gender, as readers and lexicons differ on them. A new name of one word
  is read as a first name too when it is a given name (:data:`ONE_WORD_CARRIERS` carriers): "His wife , Napoleon , … she" never (the caller leaves out the one-word surnames it wrote
  from a full name, "Smith" of "Anna Smith", whose full name is read instead). Wikidata's actress Kyle Richards (P21 female)
  never renames a woman whose document says "she": a reader meets "Kyle Richards ... her" as a man's name
  with a woman's pronoun; nor does the rapper Tinie Tempah (P21 male) rename a man, as most Tinies are women. The rule reads
  the names the candidate would write, not its P21, so it applies on an index without P21 too.
* When no drawn candidate is left and some of them had another gender, or a name that reads as one, the
  entity is kept (``KeptReason.NO_GENDER``; ``no_candidate`` when none of them did).

Examples: the document says "her eldest son Edward VII" (male) and the item has P21 Q6581097: Edward
draws among Q6581097 items, never "Barbara Stanwyck" (Q6581072). "Representative X ... in his 1838
attack", item without P21: drawn among Q6581097 items ("document"). An item with P21 Q6581072 whose
document reads "he" throughout: drawn among Q6581097 items ("document_over_p21"). A name in a list,
without pronouns, item P21 Q6581072: drawn among Q6581072 items ("p21").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from envbench.core.gender import (
    P21_OF,
    first_name,
    first_name_lexicon,
    first_name_share,
    item_gender,
    lexicon_genders,
    lexicon_key,
    one_word_gender,
    pronoun_class,
)
from envbench.core.gender import (
    name_gender as first_names_gender,
)

FROM_P21 = "p21"
FROM_DOCUMENT = "document"
DOCUMENT_OVER_P21 = "document_over_p21"
FROM_CONTEXT = "context"
FROM_NAME = "name"
SOURCES = (FROM_P21, FROM_DOCUMENT, DOCUMENT_OVER_P21, FROM_CONTEXT, FROM_NAME)


@dataclass(frozen=True)
class PersonGender:
    """A PER entity's gender ("male", "female" or None), where it came from, and the P21 value its
    candidates must have (None: any candidate)."""

    gender: str | None = None
    source: str | None = None  # one of SOURCES, None when unknown
    want: str | None = None


UNKNOWN = PersonGender()


def person_gender(document: str | None, p21: str | None, context: str | None = None,
                  names: Iterable[str] = ()) -> PersonGender:
    """The rule of the module docstring: ``document`` is the document gender ("male", "female" or
    None), ``p21`` the item's P21 value (``core.gender.item_gender``) or None, ``context`` the context
    gender (``core.gender.context_genders``) or None, ``names`` the person's own names (read last,
    :func:`name_gender`)."""
    if document is not None:
        if p21 is not None and pronoun_class(p21) == document:
            return PersonGender(document, FROM_P21, p21)
        return PersonGender(document, DOCUMENT_OVER_P21 if p21 is not None else FROM_DOCUMENT, P21_OF[document])
    if p21 is not None:
        return PersonGender(pronoun_class(p21), FROM_P21, p21)
    if context is not None:
        return PersonGender(context, FROM_CONTEXT, P21_OF[context])
    if (own := name_gender(names)) is not None:
        return PersonGender(own, FROM_NAME, P21_OF[own])
    return UNKNOWN


def name_gender(names: Iterable[str]) -> str | None:
    """The gender a person's own names tell through the lexicon: their first names (all telling one gender,
    ``core.gender.lexicon_genders``), or, when every name is one word, those words as given names
    (``core.gender.one_word_gender``: "Josephine" female, "Napoleon" male; "Tempah", "Jean" none)."""
    names = [n for n in names if n.split()]
    if not names:
        return None
    if all(len(n.split()) == 1 for n in names):
        return one_word_gender(names)
    return first_names_gender([n for n in names if len(n.split()) > 1], lexicon_genders())


def fits(person: PersonGender, candidate_p21: str | None, index_knows: bool) -> bool:
    """Whether a candidate with P21 value ``candidate_p21`` may give its name to ``person``."""
    return person.want is None or not index_knows or candidate_p21 == person.want


READS_AS = 0.75  # the share of a first name's carriers of the person's gender a new name needs to read as it


def reads_against(person: PersonGender, names: Iterable[str]) -> bool:
    """Whether one of ``names`` (the new names a candidate would write) fails to read to a reader as
    ``person``'s gender: fewer than ``READS_AS`` of its first name's carriers have that gender
    (``core.gender.first_name_share``), so a reader may take it for the other one, or for either. Always
    False for a person of unknown gender. Examples, for a woman: "Kyle Richards" True (0.07 of Kyles are
    women), "Lee Hyo-ri" True (the family name comes first, and most Lees are men), "Kim Lee" True (0.67:
    a third of the Kims are men), "Mary Pickford" False; for a man: "Hélène Desmarais" True (read as
    "helene"), "Tinie Tempah" True (0.05 of Tinies are men), "Gul Hamid" True, "Kim Lee" True, "Otis
    Briggs" False; for either, "Tempah" (one word, no first name), "A. R. Kardar" (initials) and a first
    name the lexicon does not count False; for a woman, "Napoleon" (one word, a common given name of men) True."""
    if person.gender is None:
        return False
    return any((f := first_name(n) or _one_word_given(n)) is not None
               and (share := first_name_share(f, person.gender)) is not None and share < READS_AS for n in names)


# a new name of one word is read as a given name when the lexicon counts this many carriers of it ("Napoleon":
# 8,956; "Billy"), fewer than a person's own one-word name needs to be read so (``core.gender.ONE_WORD_MIN_COUNT``):
# here a doubt only passes a candidate over
ONE_WORD_CARRIERS = 1_000


def _one_word_given(name: str) -> str | None:
    """A one-word name as a first name, lower-cased, when it is a given name (at least
    :data:`ONE_WORD_CARRIERS` carriers in the lexicon: "Napoleon", "Billy"); else None."""
    words = name.split()
    if len(words) != 1 or not words[0][:1].isupper():
        return None
    hit = first_name_lexicon().get(lexicon_key(words[0]))
    return words[0].casefold() if hit is not None and hit[1] >= ONE_WORD_CARRIERS else None


def fetch_genders(con: Any, qids: Iterable[str]) -> dict[str, str]:
    """The P21 value (``item_gender``) of each of ``qids`` that has one; {} on an index without the table."""
    import duckdb

    from wikidata_index.index import genders_of

    try:
        rows = genders_of(con, qids)
    except duckdb.CatalogException:  # a bare connection without the index's views
        return {}
    return {q: g for q, r in rows.items() if (g := item_gender(r)) is not None}


def knows_genders(con: Any) -> bool:
    """Whether the index has any P21 row (an index made before P21 was ingested has none)."""
    import duckdb

    try:
        return bool(con.execute("SELECT EXISTS (SELECT 1 FROM genders)").fetchall()[0][0])
    except duckdb.CatalogException:
        return False


__all__ = ["DOCUMENT_OVER_P21", "FROM_CONTEXT", "FROM_DOCUMENT", "FROM_NAME", "FROM_P21", "SOURCES", "UNKNOWN", "PersonGender", "fetch_genders",
           "fits", "knows_genders", "name_gender", "person_gender", "reads_against"]
