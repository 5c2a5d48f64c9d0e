"""Demonym-aware pairing: an adjectival mention ("American") becomes an adjectival name ("Danish").

DocRED annotates demonyms as mentions of the country ("the debut album by American rock musician"),
so pairing them with the new item's noun names gives "by Denmark rock musician". The rule
(:func:`pair_item_names`), over the P1549 (demonym) statements of the index:

* a mention name is an *adjectival name* (:func:`adjectival_names`) when its folded form
  (``wikidata_index.names.fold``) is an English demonym of the entity's own item in any grammatical
  form, or (not for a person) a singular English demonym of *any* item of the index ("Vietnamese"
  linked to the Vietnamese people, "English" to the English people, "Nepali" to a region of Nepal),
  or it is written as an adjective in its sentence (:func:`written_as_adjective`: one word of an
  adjectival form, "Caribbean", before a lower-case word, "Caribbean island"; a country's short form
  before a noun or a title in all its mentions, "a U.S. Representative", :func:`written_as_modifier`),
  whatever its link points to;
* the adjectival names pair (``substitute.pair_names``) with the new item's *adjectival forms*
  (:func:`adjectival_forms`): its usable demonyms (:func:`usable_demonyms`: English, plural forms
  left out, preferred rank first, one per folded form); for an ethnic group (``ETHNIC_GROUP``
  through P279) its label without "people" ("Vili people" -> "Vili"); for a language (``LANGUAGE``)
  its label without "language". A plural ("Hungarians", "Serbs": P518 plural, or a last word in -s
  that is not -ss) is never one; an adjectival name that is itself plural ("the Germans", people)
  takes the new item's plural demonyms instead (:func:`plural_forms`: "the Danes", never "the Dane").
  The first form takes the place of the label. A new item with too
  few forms is not a candidate for that entity (:data:`NO_DEMONYM`), and when no candidate of the
  entity's draws had one the entity is kept with ``KeptReason.NO_DEMONYM``;
* every other name pairs with the new item's label and aliases, leaving out its demonyms and the
  names that read as adjectives (``adjectives``, :func:`reads_adjectival`: a singular demonym of *any*
  item, or a phrase ending in one, "Imperial Russian"), so a noun mention ("United States") never
  becomes an adjective ("Danish"), even where the new item's own name is one without a P1549 statement
  of its own (a corpus KB's item "Philippine", made of the mentions in "a 2012 Philippine melodrama":
  "between the United States and the Philippine"). A language or an ethnic group is the exception:
  its label is a noun as well ("written in Kurdish"). When the new item's label is left out so, its
  first noun alias (aliases are sorted) stands in for the label, and an item with no noun name cannot
  take noun names (not a candidate).

Examples from Re-DocRED test's renamed text: "Barbadian recording artist" never reads "Hungarians
recording artist" (a plural) or "Vili people recording artist" (a label with "people"), but may read
"Vili recording artist"; "uses an English slogan" (linked to the English people) never "uses a Serbs
slogan"; "Caribbean" never becomes "Great Lakes region", a candidate without an adjectival form.
The entity {"United States", "American"} of Q30 and the candidate Q35 (label "Denmark",
aliases "Danmark", "Danish"; demonym "Danish") pair as "United States" -> "Denmark" and "American"
-> "Danish". The same entity and a candidate without a P1549 statement: not a candidate. The entity
{"Italy"} and a candidate whose alias "Italian" is a demonym: "Italy" -> the label, never "Italian".
The entity {"Woolwich"} and a candidate whose only name is "Patagonian" (a demonym of Patagonia): not
a candidate.

An index without a ``demonyms`` table (older than P1549) knows no demonyms: no name is a demonym
name and every candidate pairs as before.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from envbench.core.demonym_plurals import regular_plural, same_in_plural, singular_of
from envbench.rename.articles import is_country_name, is_country_short_form
from envbench.rename.substitute import NewName, pair_names
from envbench.rename.verb_number import reads_plural
from wikidata_index.index import DEMONYM_LANGUAGE, Demonym, demonyms_of
from wikidata_index.names import fold

PLURAL = "Q146786"  # P518 "plural": "Americans" is not an adjective
LANGUAGE = "Q34770"  # a language's label is its adjective ("a Telugu poet")
ETHNIC_GROUP = "Q41710"  # an ethnic group's label less "people" is its adjective ("a Vili singer")
# where a one-word name reads as an adjective by its form ("Caribbean", "Burmese", "Flemish", "Celtic")
_ADJECTIVE_ENDINGS = ("ian", "ean", "ese", "ish", "ic")


class _NoDemonym:
    """The answer of :func:`pair_item_names` when the candidate lacks the demonyms the entity needs."""

    def __repr__(self) -> str:
        return "NO_DEMONYM"


NO_DEMONYM = _NoDemonym()

_fold = functools.lru_cache(maxsize=1 << 16)(fold)


def looks_plural(text: str) -> bool:
    """Whether a name reads as a plural noun: its last word ends in -s but not -ss ("Hungarians",
    "Yemenis", "Serbs"; not "Swiss"). Demonyms in English are not written that way."""
    words = text.split()
    last = words[-1].casefold() if words else ""
    return len(last) > 2 and last.endswith("s") and not last.endswith("ss")


def usable_demonyms(rows: Sequence[Demonym]) -> tuple[str, ...]:
    """The demonym texts a mention may take, in preference order: plural forms (P518 plural, or
    :func:`looks_plural`) left out, preferred rank first, then forms that are no noun of persons only
    (:func:`names_persons`: "Luxembourgish" before "Luxembourger"), then the order given (which
    ``demonyms_of`` sorts by text), one per folded form."""
    seen: set[str] = set()
    out: list[str] = []
    # stable: keeps the given order within a rank
    for d in sorted(rows, key=lambda d: (d.rank != "preferred", names_persons(d.text))):
        if d.form == PLURAL or d.folded in seen or not d.text.strip() or looks_plural(d.text):
            continue
        seen.add(d.folded)
        out.append(d.text)
    return tuple(out)


def names_persons(text: str) -> bool:
    """Whether a demonym is a noun for a person, not an adjective: its last word ends in "-er"
    ("New Zealander", "Luxembourger", "Icelander", "New Yorker"). As an adjective it reads wrong ("only
    New Zealander citizens", "the 1998 Luxembourger census"), so it comes after the item's other forms."""
    words = text.split()
    return bool(words) and len(words[-1]) > 3 and words[-1].casefold().endswith("er")


def adjectival_kinds(classes: Iterable[str], anc: Mapping[str, frozenset[str]]) -> frozenset[str]:
    """Which of ``LANGUAGE`` and ``ETHNIC_GROUP`` an item with these P31 classes is an instance of
    (through the P279 closure ``anc``, a class missing from it being its own only ancestor)."""
    found: set[str] = set()
    for c in classes:
        up = anc.get(c, frozenset({c}))
        found.update(k for k in (LANGUAGE, ETHNIC_GROUP) if k in up)
    return frozenset(found)


def _strip_last(label: str, word: str) -> str:
    words = label.split()
    return " ".join(words[:-1]) if len(words) > 1 and words[-1].casefold() == word else label


def adjectival_forms(rows: Sequence[Demonym], label: str, kinds: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The new item's adjectival forms, in preference order (the module docstring's rule): its usable
    demonyms, then for an ethnic group its label without "people", for a language its label without
    "language"; plurals left out, one per folded form. Example: the Vili people (no P1549) -> ("Vili",);
    the Serbs -> () (a plural label); Hungary with "Hungarian" and "Hungarians" -> ("Hungarian",)."""
    out = list(usable_demonyms(rows))
    if ETHNIC_GROUP in kinds:
        out.append(_strip_last(label, "people"))
    if LANGUAGE in kinds:
        out.append(_strip_last(label, "language"))
    seen: set[str] = set()
    forms: list[str] = []
    for t in out:
        f = _fold(t)
        if f in seen or not t.strip() or looks_plural(t):
            continue
        seen.add(f)
        forms.append(t)
    return tuple(forms)


def plural_forms(rows: Sequence[Demonym], label: str = "", kinds: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """What a plural mention ("Many Germans have stayed here", "against the Germans") takes from a
    candidate, in preference order, one per folded form: its plural demonyms (P518 plural, or a last word in
    -s that is not -ss: "Danes", "Americans"), preferred rank first; then the plurals of its singular
    demonyms (``core.demonym_plurals``: "Ghanaian" -> "Ghanaians", "Chinese" as it is), since Wikidata's
    P1549 mostly holds the adjective alone; then, for an ethnic group, its label where it names a plural
    ("Yoruba people", "Serbs"). A candidate with none of them gives a plural mention nothing: never "Many
    Australian Guinea have stayed here" nor "the Shingini language"."""
    seen: set[str] = set()
    out: list[str] = []

    def add(text: str) -> None:
        if text.strip() and (f := _fold(text)) not in seen:
            seen.add(f)
            out.append(text)

    ranked = sorted(rows, key=lambda d: d.rank != "preferred")
    for d in ranked:
        if d.form == PLURAL or looks_plural(d.text):
            add(d.text)
    for text in usable_demonyms(ranked):
        if (plural := regular_plural(text)) is not None:
            add(plural)
        elif same_in_plural(text):
            add(text)
    if ETHNIC_GROUP in kinds and (looks_plural(label) or label.endswith(" people")):
        add(label)
    return tuple(out)


def looks_adjectival(name: str) -> bool:
    """One capitalised word with an adjectival ending (``_ADJECTIVE_ENDINGS``: "Caribbean", "Burmese"),
    not an acronym ("ASEAN countries")."""
    return (" " not in name.strip() and name[:1].isupper() and not name.isupper() and len(name) > 4
            and name.casefold().endswith(_ADJECTIVE_ENDINGS))


def written_as_adjective(name: str, next_tokens: Iterable[str]) -> bool:
    """Whether a one-word name of an adjectival form (:func:`looks_adjectival`) stands before a
    lower-case word in one of its mentions ("Caribbean island", "Flemish painter"; the tokens after
    each mention are ``next_tokens``), as an adjective stands before its noun; or a country's short
    form stands before a word in every one of its mentions (:func:`written_as_modifier`)."""
    if is_country_short_form(name):
        return written_as_modifier(name, next_tokens)
    if not looks_adjectival(name):
        return False
    return any(t[:1].islower() and t.isalpha() and t not in _NOT_NOUNS for t in next_tokens)


def written_as_modifier(name: str, next_tokens: Iterable[str]) -> bool:
    """Whether a country's short form (``articles.is_country_short_form``) is written as a modifier in
    every one of its mentions: before a noun or a title, not before punctuation, a function word or a
    past tense ("a U.S. Representative", "U.S. railway history", "under U.S. control", "the US Billboard
    Hot 100"; not "in the U.S. .", "the US and Canada", "the US invaded"). Renamed as a noun, such a
    mention reads "a Mongolia Representative"; as an adjective, "a Mongolian Representative". All its
    mentions, because every mention of a name takes one new name, and "in the Mongolian" reads worse."""
    if not is_country_short_form(name):
        return False
    toks = list(next_tokens)
    return bool(toks) and all(t[:1].isalpha() and t.casefold() not in _NOT_MODIFIED
                              and not (t.islower() and t.endswith("ed")) for t in toks)


# lower-case words after a name that do not make it an adjective ("Celtic won", "Titanic sank" aside)
_NOT_NOUNS = frozenset({
    "a", "an", "the", "of", "and", "or", "in", "on", "at", "to", "for", "from", "by", "with", "as", "is", "was",
    "are", "were", "has", "had", "have", "be", "been", "which", "who", "that", "but", "when", "where", "while",
    "after", "before", "during", "since", "until", "its", "his", "her", "their", "also", "won", "sank", "said"})


def modifier_spellings(names: Sequence[str], adjectival: Sequence[str]) -> dict[str, str]:
    """{short form: the adjectival name it takes the new name of}: a country's short form written as a
    modifier (:func:`written_as_modifier`) where the entity also has a singular adjectival name of another
    kind ("an American lawyer ... the U.S. Representative") says what that name says, so it takes the
    same adjectival form ("a Tongan lawyer ... the Tongan Representative"), as a spelling takes its name's
    (``short_names.spellings``). Counted as two names, they would need two forms of one country, which
    few items have ("Luxembourgish", "Luxembourger")."""
    shorts = [nm for nm in adjectival if is_country_short_form(nm)]
    if not shorts:
        return {}
    other = next((nm for nm in names if nm in adjectival and not is_country_short_form(nm) and not looks_plural(nm)),
                 None)
    return {nm: other for nm in shorts} if other is not None else {}


# words after a country's short form that make it no modifier ("the US and Canada", "the U.S. Because ...")
_NOT_MODIFIED = _NOT_NOUNS | frozenset({
    "because", "then", "there", "it", "he", "she", "they", "we", "this", "these", "those", "however", "both",
    "not", "so", "if", "will", "would", "could", "can", "did", "does", "do", "into", "over", "under", "between",
    "against", "through", "via", "per", "about", "than", "all", "nor", "yet", "though", "although"})


def reads_adjectival(name: str, known: frozenset[str]) -> bool:
    """Whether a name reads as an adjective to a reader: it is a singular demonym of some item (``known``:
    folded, :func:`known_demonyms`), or a phrase of two words or more whose last word is one ("Imperial
    Russian", "South African"), not opened by "The" (a title: "The American", a film). Examples, with
    "russian" known: "Russian" and "Imperial Russian" True, "Russia", "Russian Empire" and "The Russian"
    False."""
    words = name.split()
    if not words or words[0].casefold() == "the":
        return False
    return _fold(name) in known or (len(words) > 1 and _fold(words[-1]) in known)


def known_demonyms(con: Any, names: Iterable[str]) -> frozenset[str]:
    """The folded forms among ``names`` that are a singular English demonym (P518 not plural) of any
    item of the index (an index without the table: none)."""
    import duckdb

    from envbench.rename.fine_types import register_rows

    folded = sorted({_fold(n) for n in names})
    if not folded:
        return frozenset()
    try:
        register_rows(con, "_dem_names", ((f,) for f in folded), {"folded": "VARCHAR"})
        rows = con.execute(
            """SELECT DISTINCT d.folded FROM demonyms d SEMI JOIN _dem_names n ON d.folded = n.folded
               WHERE d.lang = ? AND (d.form IS NULL OR d.form <> ?)""", [DEMONYM_LANGUAGE, PLURAL]).fetchall()
    except duckdb.CatalogException:  # a bare connection without the index's views knows no demonyms
        return frozenset()
    return frozenset(r[0] for r in rows if not looks_plural(r[0]))


def fetch_demonyms(con: Any, qids: Iterable[str]) -> dict[str, tuple[Demonym, ...]]:
    """English P1549 rows of each of ``qids`` that has any (an index without the table: {})."""
    import duckdb

    try:
        return {q: tuple(rows) for q, rows in demonyms_of(con, qids).items()}
    except duckdb.CatalogException:  # a bare connection without the index's views knows no demonyms
        return {}


def knows_demonyms(con: Any) -> bool:
    """Whether the index has any English P1549 row (an index built before P1549, or from a KB
    without demonyms, has none: then no draw needs to ask)."""
    import duckdb

    try:
        rows = con.execute("SELECT EXISTS (SELECT 1 FROM demonyms WHERE lang = ?)", [DEMONYM_LANGUAGE]).fetchall()
        return bool(rows[0][0])  # fetchall: a result left unfinished would block the connection
    except duckdb.CatalogException:
        return False


def demonym_names(originals: Sequence[str], own: Sequence[Demonym]) -> list[str]:
    """The mention names that are demonyms (any form) of the entity's own item, in the given order."""
    if not own:
        return []
    folded = {d.folded for d in own}
    return [nm for nm in originals if _fold(nm) in folded]


def adjectival_names(originals: Sequence[str], own: Sequence[Demonym], known: frozenset[str] = frozenset(),
                     written: frozenset[str] = frozenset(), plurals: bool = True) -> list[str]:
    """The entity's adjectival names (the module docstring's rule), in the given order: demonyms of its
    own item, names in ``known`` (folded singular demonyms of any item, :func:`known_demonyms`; the
    caller passes none for a person) and names ``written`` as adjectives (:func:`written_as_adjective`);
    and plural people's names (:func:`plural_people`): the regular plural of a demonym of its own item
    ("Germans" of Germany, whose P1549 is "German"), or, with ``plurals`` (not for a team: "the Celtics"),
    of one in ``known``."""
    folded = {d.folded for d in own}
    return [nm for nm in originals if nm in written or (f := _fold(nm)) in folded or f in known
            or plural_people(nm, folded, known if plurals else frozenset())]


# words before a people's name that make it plural ("Many Japanese", "most Swiss") and verbs after it
_PLURAL_BEFORE = frozenset({"many", "most", "some", "several", "few", "numerous", "these", "those", "other", "all"})
_PLURAL_VERBS = frozenset({"are", "were", "have", "do"})


def used_as_plural(name: str, around: Iterable[tuple[str, str]]) -> bool:
    """Whether a demonym that is its own plural (``core.demonym_plurals.same_in_plural``: "Japanese",
    "Swiss") names a people in one of its mentions (``around``: the tokens before and after each): after
    "many", "most", "some" ... or before "are", "were", "have" ("Many Japanese have stayed here"). Such a
    name takes a plural ("Many Ghanaians"), where as an adjective it took an adjective ("a Japanese
    singer" -> "a Ghanaian singer"), never "Many Ghanaian have stayed here"."""
    if not same_in_plural(name):
        return False
    return any(before.casefold() in _PLURAL_BEFORE or after in _PLURAL_VERBS for before, after in around)


def plural_people(name: str, own: Iterable[str], known: frozenset[str] = frozenset()) -> bool:
    """Whether a name is the regular plural of a demonym (``core.demonym_plurals.singular_of``: "Americans",
    "Israelis") of the entity's own item (``own``: folded demonyms) or in ``known`` (folded singular
    demonyms of any item): a people, which takes a people's plural (:func:`plural_forms`). A place named so
    is no people: "the Balkans" (of "Balkan"), "the Philippines" (``verb_number.PLURAL_LAST_WORDS``, the
    countries' names)."""
    singular = singular_of(name)
    if singular is None or reads_plural(name) or is_country_name(name):
        return False  # a place's plural name ("the Balkans", "the Philippines") is no people
    f = _fold(singular)
    return f in known or f in set(own)


def pair_item_names(originals: Sequence[str], own: Sequence[Demonym], label: str, aliases: Sequence[str],
                    demonyms: Sequence[Demonym],
                    tokens: Mapping[str, Sequence[str]] | None = None, *,
                    adjectival: Sequence[str] | None = None,
                    kinds: frozenset[str] = frozenset(),
                    adjectives: frozenset[str] = frozenset(),
                    plurals: frozenset[str] = frozenset()) -> dict[str, NewName] | _NoDemonym | None:
    """Each original name's new name under the rule of the module docstring.

    ``own`` are the P1549 rows of the entity's item, ``demonyms`` those of the candidate, ``kinds``
    the candidate's :func:`adjectival_kinds`. ``adjectival``: the entity's adjectival names
    (:func:`adjectival_names`; None: the demonyms of its own item). Returns :data:`NO_DEMONYM` when
    the entity has adjectival names the candidate cannot serve, None when the candidate has too few
    other names (as ``pair_names``). ``tokens``: the original names' document tokens, as
    ``pair_names`` takes them. ``adjectives``: folded names that are a singular demonym of some item
    (:func:`known_demonyms`; the caller may pass only those among the candidate's names), which noun
    names never take unless ``kinds`` makes the candidate a language or an ethnic group. ``plurals``:
    adjectival names used as a plural though their form is not one (:func:`used_as_plural`: "Many Japanese"),
    which take plural forms as the names in -s do.
    """
    if adjectival is None:
        adjectival = demonym_names(originals, own)
    if adjectives and kinds & {LANGUAGE, ETHNIC_GROUP}:
        adjectives = frozenset()  # "written in Kurdish", "the Vili": such a label is a noun as well
    if not adjectival and not demonyms and not adjectives:  # most entities and candidates: plain alias-wise pairing
        return pair_names(originals, label, aliases, tokens)
    nouns = [nm for nm in originals if nm not in set(adjectival)]
    cand_folded = {d.folded for d in demonyms} | adjectives
    out: dict[str, NewName] = {}
    # singular adjectival names take adjectival forms; plural ones ("the Americans", people) plural
    # demonyms: "the Danes", never "the Dane"
    plural = {nm for nm in adjectival if looks_plural(nm) or nm in plurals}
    for names, forms in (([nm for nm in adjectival if nm not in plural], lambda: adjectival_forms(demonyms, label, kinds)),
                         ([nm for nm in adjectival if nm in plural], lambda: plural_forms(demonyms, label, kinds))):
        if not names:
            continue
        usable = forms()  # (the plural forms: its plural demonyms, their regular plurals, a people's label)
        paired = pair_names(names, usable[0], usable[1:], tokens) if len(usable) >= len(names) else None
        if paired is None:
            return NO_DEMONYM
        out.update(paired)
    if nouns:
        kept = [a for a in aliases if _fold(a) not in cand_folded] if cand_folded else list(aliases)
        if cand_folded and _fold(label) in cand_folded:  # its label is an adjective ("Danish")
            if not kept:
                return None  # no noun name to give
            label, kept = kept[0], kept[1:]  # its first noun alias stands in for the label
        paired = pair_names(nouns, label, kept, tokens)
        if paired is None:
            return None
        out.update(paired)
    return out


__all__ = ["ETHNIC_GROUP", "LANGUAGE", "NO_DEMONYM", "PLURAL", "adjectival_forms", "adjectival_kinds",
           "adjectival_names", "demonym_names", "fetch_demonyms", "known_demonyms", "knows_demonyms",
           "looks_adjectival", "looks_plural", "modifier_spellings", "names_persons", "pair_item_names", "plural_forms",
           "plural_people", "used_as_plural", "reads_adjectival", "usable_demonyms",
           "written_as_adjective", "written_as_modifier"]
