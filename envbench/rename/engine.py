"""How one renamed document settles its entities: the per-entity state machine of ``generate``.

A *run* is one (source document, seed). What an entity of a run becomes depends only on the source
document, the seed, the index and the entities settled before it in the same run, never on another
run, so runs may be settled in any grouping (``generate`` settles them in chunks). The rule, in
settling order:

1. **TIME entities first, all together** (:func:`settle_times`). One document-level shift
   (``numtime.rename_times``; the gaps between the written years stretch where an age or interval the
   text ties to two of them takes a new value, ``year_map``) renames every TIME entity outside the
   overlap policy. Attempts
   0..49 redraw the shift until no new name clashes, no temporal pair (``TEMPORAL_PAIRS``
   between two ends of one head) is reversed and no two dates of the document that name a month
   swap their order (the cyclic month shift would otherwise let "premiered on 26 January, released
   on 7 February" read "premiered on 8 December, released on 17 January" of one year); when none
   succeeds, the attempt with the fewest failing entities, then the fewest swapped pairs, is used,
   the failing entities keep their names (``no_valid_value``; ``no_rule`` for an entity no rule
   applies to). An entity also fails when it breaks a *number pair* (below). The TIME entities that are
   figures the text checks against those dates (the document's number plan, ``coherence``: ages,
   intervals, fixed forms) are not shifted: after the shift they take the value the renamed dates give
   (:func:`settle_checked`); among the attempts, the first that leaves each a whole value it can write is
   used, waiting a few attempts for one that gives the figures between stretched years new values no
   training document writes (:func:`figure_score`).
2. **Then every other entity, in vertexSet order** (:func:`advance`):

   * a mention overlaps a mention of another entity, or two of its own do: kept (``overlap``), unless
     the two are one name split as "the X" around "X" (``DocInfo.followers``): the outer one follows
     the inner one (:func:`settle_follower`: "the" and its new name), and the inner one's draw passes
     the outer one's audit checks too;
   * linked (a QID with a fine type, not NUM/TIME; :func:`settle_linked`): the first candidate in
     draw order (``candidates``: windows of 4, 16, 64 and 256 items, each tried with the candidates
     sharing the most P31 classes with the entity first, ``fine_types.by_p31_overlap``) that, for a
     person, has its gender and names that do not read as the other (``rename.gender``; ``no_gender``
     when none is left and a drawn candidate failed so), gives no monarch's name unless the person has one
     (``rename.regnal``; one that has prefers a candidate that gives one, in any window) and no name opening
     with a word that is no name ("née Alexander", ``substitute.opens_lower``), whose names pair with the
     entity's names
     (``demonyms.pair_item_names``: demonyms with demonyms, ``no_demonym`` when no candidate has one;
     a name spelled two ways, "US" and "U.S.", counted once and given one new name,
     ``short_names.spellings``) without a clash, none of whose names an eval-pool
     item carries (train pool only) or occurs as a mention name in the ``--exclude-names-from``
     documents (``novelty``; same key as the clash check), none of whose names *doubles a word
     beside a mention* (below), and that passes every type-constraint
     check the original item passed (``audit``; a failure counts as a rejection of that relation), a LOC or
     ORG name written "the X" keeping its "the" where the new name needs one (``articles.keep_the``:
     "the United Kingdom" -> "the Mongol Empire", but "Kuwait"); for an
     ORG or LOC name with a head noun its type does not say, the first such candidate of the first
     ``HEAD_WINDOWS`` windows whose name has that head, where one has (an organisation written "the X"
     as a noun phrase takes no bare one-word name at all: "from the Toyota .", "The Filter has played"
     read wrong); a name that agrees in number with the verb after it (``verb_number``) and a person's
     name of the old one's form (``person_forms``); after the last window, an entity with short names (``short_names``: "Yukon" of
     "Yukon River", "NHL" of "National Hockey League") reads the windows of a second slot among items
     with fewer names, the short names written from the new full name ("Orontes River", "Orontes")
     and a candidate that gives none passed over; after that: kept (``no_candidate``);
   * NUM (:func:`settle_other`), by its role in the number plan (``coherence``): a figure the text checks
     (an age, an interval, a count followed by its list, a fixed form) keeps its value or takes the one its
     renamed dates give (:func:`settle_checked`: ``checked``, ``fixed_form``); counts of one noun move by
     one offset (:func:`settle_tied`); any other takes attempts 0..49 of ``numtime.rename_num`` until no
     new name clashes and no number pair breaks, preferring values no ``--exclude-names-from`` document
     writes; kept with ``no_valid_value`` when every value clashed or none may change (a "one"
     that counts the noun after it: "one terminal platform"), ``no_rule`` when the name holds no
     number;
   * anything else is kept: ``unlinked`` (no QID), ``no_type`` (a QID without a P31 value) or
     ``generic_type`` (its item's only classes are catch-alls, ``core.types.CATCH_ALL_CLASSES``).

A new name *clashes* when its key (``substitute.text_key``: the runs of letters and digits of the
folded name, so neither punctuation nor tokenisation hides a clash), or that key without a leading
"the" (``substitute.clash_keys``), occurs inside a sentence of the source document, or was given to
an entity settled earlier in the same run. Examples:

* "Anna lives in Rome." with Anna linked to a human: a candidate "Rome Vance" is taken (its tokens
  "rome vance" do not occur in that order), a candidate "Rome" for a PER would clash, and if an
  earlier entity of the run became "Maria Lopez", no later entity may become "MARIA LOPEZ".
* "Person 3 (13 March 1963 - 2 April 1963)" with born/died labels: one shift moves both dates;
  an attempt whose month shift puts the death before the birth is redrawn.
* "7%" renamed by rule becomes "1%", written with the old spacing (:func:`respell`).

A new name *doubles a word beside a mention* when its first or last word, case-folded and singular
(:func:`word_form`: "Rivers" is "river"), is a word within ``NEAR`` (2) tokens before or after one
of the mentions it would replace, outside every mention and not a function word ("the", "of", ...),
unless the old name's first or last word was that word too. Such a candidate is skipped and the next
in the draw window is tried; so is a name starting with an article for a mention right after "the"
("buried at the The Aristocrat's Cemetery", "According to the A Bridge Too Far"), and a bare country
name for a mention written "the X" as a noun phrase of its own (:meth:`DocInfo._beside_mentions`: "in
the US from" never reads "in the Kuwait from"). Examples: "the province of Bulacan" takes no "Chubut Province" (nor
"the city of Doisa" a "Quebec City", "the ancient kingdom of Gobir" a "Kingdom of Portugal", "the Union
armies" a "Route Army", "the river Olt" a "Hudson River"); a "Mill River" written before "river"
may become "Solo River", as the old name doubled "river" already.

A *number pair* is two mentions of different NUM/TIME entities at most ``NUMBER_GAP`` (3) tokens
apart in one sentence whose leading numbers (``numtime.leading_number``; names with a month are
dates, ordered by rule 1 instead) differ. Whenever an entity is renamed, each of its pairs, read with
the values the run writes at that moment (the old value of a neighbour not yet settled), must keep
its two numbers different and, for a range ("X to Y", "X - Y", "X through Y", "between X and Y")
whose lower end came first, in that order; against a NUM end settled later (which checks the pair
again) a range only needs room, a value that end's rule can still draw on its side
(``numtime.number_range``). So "one to five years" never reads "nine to nine years" or "nine to
three years" but may read "eight to nine years", and "every two years for a four - year term" never
"every eight years for an eight - year term".

The state machine never queries the index: :func:`advance` returns the (slot, window) it lacks,
and :class:`Renamer` (the one part here that talks to DuckDB) fetches the windows every run of a
chunk lacks in one batch per round, with their items' names, and calls it again.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from envbench.core.demonym_plurals import singular_of
from envbench.core.gender import GenderEvidence, context_genders, document_genders, pronoun_class
from envbench.core.heads import name_head, shared_head
from envbench.core.kind_nouns import KindNoun, document_kind_nouns
from envbench.core.mentions import mention_mask
from envbench.core.reasons import KeptReason, ValueRule
from envbench.core.seeding import stable_hash_hex
from envbench.core.text import remember_tokens
from envbench.formats.docred import Doc, distinct_names, entity_type
from envbench.formats.substitutions import COLUMNS as SUBSTITUTION_COLUMNS
from envbench.formats.substitutions import schema as substitution_schema
from envbench.rename.adjective_of import adjectives_by_place, adjectives_of
from envbench.rename.articles import (
    ARTICLE_WORDS,
    bare_compass,
    bare_country,
    is_country_short_form,
    keep_the,
    reads_bare,
)
from envbench.rename.audit import Auditor
from envbench.rename.built_on import BuiltOn, Embedded, builder_order, embedded_names, holds
from envbench.rename.built_on import derive as derive_built_on
from envbench.rename.candidates import (
    MAX_WINDOWS,
    CandidateSource,
    ItemNames,
    Slot,
    candidate_forms,
    folded_forms,
    item_names,
    item_names_and_tokens,
    names_in_pool,
    pool_of,
    window_bounds,
)
from envbench.rename.coherence import (
    NamesOf,
    count_value,
    derive,
    following_end,
    plan_numbers,
    same_magnitude,
    tied_offset,
    with_value,
)
from envbench.rename.coherence import change as derived_change
from envbench.rename.common_words import new_name_reads_common
from envbench.rename.demonyms import (
    LANGUAGE,
    adjectival_forms,
    adjectival_kinds,
    adjectival_names,
    fetch_demonyms,
    known_demonyms,
    knows_demonyms,
    looks_adjectival,
    looks_plural,
    modifier_spellings,
    pair_item_names,
    reads_adjectival,
    used_as_plural,
    written_as_adjective,
)
from envbench.rename.fine_types import by_p31_overlap, class_kinds, is_catch_all, p31_jaccard
from envbench.rename.gender import (
    UNKNOWN,
    PersonGender,
    fetch_genders,
    fits,
    knows_genders,
    person_gender,
    reads_against,
)
from envbench.rename.kinds import Kinds, NounClasses, entity_kinds, item_classes
from envbench.rename.kinds import fits as of_kind
from envbench.rename.numtime import (
    RANGE_WORDS,
    RENAMERS,
    TEMPORAL_PAIRS,
    DateValue,
    counts_a_noun,
    date_order,
    date_value,
    document_years,
    eras_only,
    leading_number,
    month_of,
    number_range,
    order_kept,
    ranges_in_order,
    rename_times,
    shifted_key,
    short_spans,
    span_end_year,
    weekday_of,
)
from envbench.rename.person_forms import keep_forms, peerage_names, titled_names
from envbench.rename.person_roles import not_a_person
from envbench.rename.places import Containment, containment, fetch_containers
from envbench.rename.plausible import entity_roles, item_roles, plausible
from envbench.rename.plausible_dates import HUMAN_SPAN, decennial, shift_range, year_bounds, year_floors
from envbench.rename.regnal import TITLES, after_sovereign_title, any_regnal
from envbench.rename.short_names import (
    ShortName,
    follow,
    may_follow,
    same_by_form,
    short_names,
    spell_like,
    spellings,
)
from envbench.rename.substitute import (
    NewName,
    Outside,
    clash_keys,
    mention_tokens,
    name_key,
    nested_key,
    nested_spellings,
    opens_lower,
    overlapping_entities,
    self_overlapping_entities,
    surnames_follow,
    text_key,
)
from envbench.rename.unannotated import Unannotated, occurrences, unannotated_spans
from envbench.rename.verb_number import breaks_number, verb_numbers
from envbench.rename.year_map import Offsets, move_years, plan_years, year_pairs
from wikidata_index.index import Demonym
from wikidata_index.names import fold

NUMTIME_ATTEMPTS = 50
# CovEReD's plausibility rule (``rename.plausible``), tried and not adopted (bench/plausible.py): "off", "prefer"
# (among the first HEAD_WINDOWS windows, a candidate that played one of the entity's roles; else the first fit)
# or "filter" (only such a candidate). Off: neither kept the type measurably better, and "filter" kept
# entities enough to take the substitution rate below 0.85
PLAUSIBLE = "off"
# the first attempts of a drawn NUM value or a tied group that wait for values no training document writes
# (``--exclude-names-from``); after them the first value that fits is taken (``settle_other``)
NOVEL_TRIES = 12
# the last attempts of a document's TIME renaming, which move its years by one shift (``year_map``: a stretch
# that leaves some figure without a value it can write falls back to the shift that keeps every distance)
UNIFORM_TRIES = 10
HEAD_WINDOWS = 2  # windows (4 + 16 candidates) searched for a new name with the head noun before the first fit
HEAD_TYPES = frozenset({"ORG", "LOC"})  # coarse types whose names keep their head nouns (MISC names are mostly titles)
# coarse types whose plural names may name a people by a demonym of any item ("Many Americans"; DocRED types
# them LOC or MISC), not an organisation's ("the Celtics", a team)
PEOPLE_TYPES = frozenset({"LOC", "MISC"})
_SENTENCE = "\x1e"  # between the sentences of DocInfo's folded text (no word holds it)
Request = tuple[int, int]  # (slot index, window number) the run waits for
NEAR = 2  # tokens on each side of a mention whose words a new name must not double
NUMBER_GAP = 3  # at most this many tokens between two NUM/TIME mentions that must stay distinct
# words too common beside a name to count as doubled ("the", "of" in "the province of Bulacan")
_FUNCTION_WORDS = frozenset({
    "a", "an", "the", "of", "and", "or", "in", "on", "at", "to", "for", "from", "by", "with", "as", "is", "was",
    "are", "were", "de", "la", "le", "del", "di", "da", "van", "von", "der", "du", "des", "el", "its", "his",
    "her", "their"})
# words after "the X" that end its noun phrase, beside the function words ("the US had", "the UK but")
_HEAD_ENDS = frozenset({"had", "has", "have", "would", "will", "could", "did", "does", "during", "after",
                        "before", "since", "until", "which", "who", "that", "but", "when", "where", "while"})
_PHRASE_ENDS = _FUNCTION_WORDS | _HEAD_ENDS
# determiners before a mention after which a name opening with an article reads doubled ("was a the 48th
# Highlanders officer", "In 1978 his Concerto Grosso was awarded" renamed "his The Secret World")
_DETERMINERS = frozenset({"a", "an", "his", "her", "its", "their", "my", "our", "your", "whose"})
_QUOTES = frozenset({'"', "'", "“", "‘", "«"})  # an opening quote between an article and a name
_ARTICLES_AND_DETERMINERS = _DETERMINERS | {"the"}
_SPAN_MARKS = frozenset({"-", "–", "/"})
_DASHES = frozenset({"-", "–", "—", "/"})  # between two names of one compound ("the Canada – US border")  # between a year and its span's short end ("1980 – 81", "1527 - 8")
# a pair of NUM/TIME mentions a few tokens apart: (entity, name, entity, name, whether their order holds: a range,
# or a comparison the sentence writes)
NumberPair = tuple[int, str, int, str, bool]
# how far apart two NUM mentions a comparison orders may be: "5,172 at the 2010 census , up from 4,232"
COMPARED_GAP = 10
_COMPARED = (("up", "from"), ("down", "from"))


def respell(name: str, old: list[str], new: list[str]) -> str:
    """The new tokens written with the old name's spacing ("7%" -> "1%", not "1 %").

    Falls back to the tokens joined by spaces when the old tokens cannot be found in order in the
    name (a name that does not spell its tokens).
    """
    if len(old) != len(new):
        return " ".join(new)
    parts: list[str] = []
    pos = 0
    for o, n in zip(old, new):
        start = name.find(o, pos)
        if start < 0 or name[pos:start].strip():
            return " ".join(new)
        parts += [name[pos:start], n]
        pos = start + len(o)
    if name[pos:].strip():
        return " ".join(new)
    return "".join(parts) + name[pos:]


@functools.lru_cache(maxsize=1 << 16)
def word_form(token: str) -> str | None:
    """A word as the doubled-word check compares it: case-folded and singular ("Rivers" -> "river",
    "armies" -> "army"); None for a token that is not a word or is a function word ("of")."""
    if not token.isalpha() or (low := token.casefold()) in _FUNCTION_WORDS:
        return None
    if len(low) > 4 and low.endswith("ies"):
        return low[:-3] + "y"
    if len(low) > 3 and low.endswith("s") and not low.endswith("ss"):
        return low[:-1]
    return low


def name_ends(tokens: Sequence[str]) -> frozenset[str]:
    """The :func:`word_form` of a name's first and last words ("Chubut Province" -> chubut, province)."""
    return _name_ends(tuple(tokens))


# stands for a name's leading article ("The", "A", "An") and a "the" just before a mention ("the The
# Aristocrat's Cemetery", "the A Bridge Too Far"); no word_form is this (not a word of letters)
_THE = "the-"
# what may stand before a language that names the language of the words after its colon (``DocInfo.text_languages``)
_OPENS_LANGUAGE = frozenset({"(", ";", ",", "original", "in"})
# stand for a number just before a mention and a name that opens with one ("the 1954 World Championships"
# never "the 1922 1984 Winter Olympics"), and a number just after one and a name that ends in one
_NUMBER_BEFORE = "number-before-"
_NUMBER_AFTER = "number-after-"
# stands for a year just before a mention and a name that holds a year anywhere: "the 2015 Africa Cup of
# Nations" never "the 2003 Eurovision Song Contest 2009" (the year before already dates the event)
_YEAR_IN = "year-in-"
_YEAR = re.compile(r"[12]\d{3}")
# stands for a title just before a mention and a name that opens with one: "named for King Haakon VII" never
# "King Czar Nicholas II" (``regnal.TITLES``)
_TITLE = "title-"
# stands for a place's one-word mention just before a mention and a name that opens with an adjective of a place:
# "never played in Argentine Primera División" never "in Croatian Scottish Football League"
_ADJECTIVE_BEFORE = "adjective-before-"


def _written_range(sent: Sequence[str], a0: int, a1: int, b0: int) -> bool:
    """Whether the mentions at ``a0:a1`` and from ``b0`` on are a range's two ends as the sentence writes
    them: one range word between them ("one to five years", "April 16 to November 16 , 2012", "1965 – 1969";
    ``numtime.RANGE_WORDS``), or "and" after a "between" ("between 18 and 22")."""
    gap = [t.casefold() for t in sent[a1:b0]]
    return (len(gap) == 1 and gap[0] in RANGE_WORDS) or (
        gap == ["and"] and "between" in (t.casefold() for t in sent[max(0, a0 - 2):a0]))


def _compared(sent: Sequence[str], a1: int, b0: int, coarse: tuple[str, str]) -> bool:
    """Whether the sentence compares two NUM mentions, the first ending before ``a1`` and the second
    starting at ``b0``, so their order must hold: "The population was 5,172 at the 2010 census , up from 4,232"
    (it had read "5,349 ... , up from 5,623")."""
    if coarse != ("NUM", "NUM"):
        return False
    gap = tuple(t.casefold() for t in sent[a1:b0])
    return any(gap[-2:] == words for words in _COMPARED)


def _past_tense(token: str) -> bool:
    """A lower-case word in -ed, read as a verb after a noun phrase ("The Marine Band played")."""
    return len(token) > 3 and token.islower() and token.isalpha() and token.endswith("ed")


def _modifies(sent: Sequence[str], b: int) -> bool:
    """Whether the mention ending before token ``b`` stands as a modifier of the lower-case word after it
    ("New Edition members", "the Toyota factory"): a word of letters that is no function word, phrase end
    or verb in -ed."""
    if b >= len(sent):
        return False
    after = sent[b]
    return after.isalpha() and after.islower() and after not in _PHRASE_ENDS and not _past_tense(after)


def _is_number(token: str) -> bool:
    return any(ch.isdigit() for ch in token)


@functools.lru_cache(maxsize=1 << 16)  # a drawn name is checked once per seed and per window it is in
def _name_ends(tokens: tuple[str, ...]) -> frozenset[str]:
    words = [t for t in tokens if t.isalpha()]
    ends = {f for w in words[:1] + words[-1:] if (f := word_form(w)) is not None}
    if tokens and tokens[0].casefold() in ARTICLE_WORDS:  # "According to the A Bridge Too Far" neither
        ends.add(_THE)
    if tokens and tokens[0].casefold() in TITLES:
        ends.add(_TITLE)
    if tokens and looks_adjectival(tokens[0]):
        ends.add(_ADJECTIVE_BEFORE)
    if tokens and _is_number(tokens[0]):
        ends.add(_NUMBER_BEFORE)
    if tokens and _is_number(tokens[-1]):
        ends.add(_NUMBER_AFTER)
    if any(_YEAR.fullmatch(t) for t in tokens):
        ends.add(_YEAR_IN)
    return frozenset(ends)


# what may stand between a name and the date that dates it ("the January Uprising of 1863", "Expo ( 1967 )")
_DATE_LINKS = frozenset({"of", "in", ",", "(", "on", "from", "–", "-"})


def _date_starts(doc: Doc, coarse: Sequence[str]) -> frozenset[tuple[int, int]]:
    """(sentence, token) where a TIME mention that writes a year starts."""
    return frozenset((m["sent_id"], m["pos"][0]) for ei, ent in enumerate(doc["vertexSet"]) if coarse[ei] == "TIME"
                     for m in ent if any(_YEAR.search(t) for t in doc["sents"][m["sent_id"]][m["pos"][0]:m["pos"][1]]))


def _dated_after(sent: Sequence[str], sent_id: int, b: int, dated: frozenset[tuple[int, int]]) -> bool:
    """Whether a date follows a mention ending at ``b``: a TIME mention with a year, or a year, right
    after it or after one linking word ("of 1863", "in 2009", "( 1967 )"). A new name holding a year of its
    own (``_YEAR_IN``) would date the thing twice there: "During the Tzeltal Rebellion of 1712 of 1863"."""
    for k in (b, b + 1):
        if k >= len(sent) or (k == b + 1 and sent[b].casefold() not in _DATE_LINKS):
            return False
        if (sent_id, k) in dated or _YEAR.fullmatch(sent[k]):
            return True
    return False


# ---------------------------------------------------------------------------- the facts of a document
@functools.lru_cache(maxsize=256)
def _word_marks(n: int) -> tuple[bytes, bytes]:
    """The start and end marks of an n-letter word in DocInfo's run-together text."""
    return b"\x01" + b"\x00" * (n - 1), b"\x00" * (n - 1) + b"\x01"


class DocInfo:
    """What every seed of one source document shares."""

    def __init__(self, order: int, doc: Doc, qids: list[str | None], ftypes: Mapping[tuple[str, str], str]) -> None:
        self.order = order
        self.doc = doc
        self.title = doc["title"]
        self.overlap = overlapping_entities(doc) | self_overlapping_entities(doc)
        self.qids = qids
        # "the X" nested around "X", one name Re-DocRED split in two: the inner entity is renamed and the
        # outer one follows it (``substitute.nested_spellings``), where both have an item or both are
        # renamed by rule (so the audit and the rules see them as they see the inner one)
        rule = frozenset(RENAMERS)
        self.followers = {o: i for o, i in nested_spellings(doc, self.overlap).items()
                          if (qids[o] is None) == (qids[i] is None) and (qids[o] is not None or (
                              entity_type(doc["vertexSet"][o]) in rule and entity_type(doc["vertexSet"][i]) in rule))}
        self.leaders = {i: o for o, i in self.followers.items()}
        self.overlap -= set(self.followers) | set(self.leaders)
        self.ftypes = ftypes  # (qid, coarse type) -> fine type (``fine_types.fine_types``)
        self.coarse = [entity_type(e) for e in doc["vertexSet"]]
        # entities linked to an item an earlier entity is linked to, whatever their coarse types (Re-DocRED
        # splits "United States" and "the United States" of one article in two; gold links join them) -> that
        # earlier entity: each tries the item the first became before it draws (``settle_linked``)
        first_of: dict[str, int] = {}
        self.same_item: dict[int, int] = {}
        for ei, q in enumerate(qids):
            if q is None or ei in self.overlap or ei in self.followers or ei in self.leaders or self.coarse[ei] in rule:
                continue
            lead = first_of.setdefault(q, ei)
            if lead != ei:
                self.same_item[ei] = lead
        self.names = [distinct_names(e) for e in doc["vertexSet"]]
        self.tokens = [mention_tokens(doc, e) for e in doc["vertexSet"]]
        # what each NUM and TIME entity is: a date, a drawn value, or a figure the text checks (``coherence``)
        self.numbers = plan_numbers(doc, self.coarse, self.tokens)
        # entities a name of which holds another entity's name ("USS Lyndon B. Johnson"): they follow it
        # (``built_on``), settled after every other entity, each after the ones it follows
        self.built_on: BuiltOn = embedded_names(
            self.names, self.tokens, self.coarse, [*qids, *[None] * (len(self.names) - len(qids))],
            self.overlap | set(self.followers) | set(self.leaders) | set(self.same_item) | set(self.same_item.values()))
        self.builders = builder_order(self.built_on)
        # the places the gold triples put one inside another ("born in Solingen , Germany"): they are drawn
        # together, the outer one after the inner one (``rename.places``)
        self.places: Containment = containment(doc, self.coarse)
        # an entity named only by the demonyms of another's item ("American" beside "United States"): it waits
        # for that place and takes the adjectival forms of what the place became (``rename.adjective_of``);
        # set by ``set_adjectives`` once the items' demonyms are read
        self.adjective_of: dict[int, int] = {}
        self.adjectives: dict[int, tuple[int, ...]] = {}
        # Each sentence as the letters and digits of its folded tokens run together (sentences joined
        # by _SENTENCE), with the offsets where a word starts and ends, so occurs() is a substring
        # search aligned to word boundaries: "Ca" "n't" and "Can't" are both "cant" there, however
        # the corpus and the new name were tokenised. (Sets of every n-gram held most of a run's memory.)
        parts: list[str] = []
        starts, ends = bytearray(), bytearray()
        for sent in doc["sents"]:
            parts.append(_SENTENCE)
            starts.append(0)
            ends.append(0)
            for tok in sent:
                for run in text_key(tok):
                    first, last = _word_marks(len(run))
                    starts += first
                    ends += last
                    parts.append(run)
        self._sentences = len(doc["sents"])
        self._text = "".join(parts)
        self._starts, self._ends = bytes(starts), bytes(ends)
        # (start entity, end entity) pairs whose order must survive (same head, TEMPORAL_PAIRS)
        by_head: dict[tuple[int, str], set[int]] = {}
        for lab in doc.get("labels", []) or []:
            by_head.setdefault((lab["h"], lab["r"]), set()).add(lab["t"])
        self.order_pairs: list[tuple[int, int]] = sorted(
            (a, b)
            for (h, r), ts in by_head.items()
            for start, end in TEMPORAL_PAIRS
            if r == start
            for a in ts
            for b in by_head.get((h, end), ())
            if a != b
        )
        # and the dates the text writes as a span ("from April 16 to November 16 , 2012"), kept in order too
        self.order_pairs = sorted({*self.order_pairs, *self._written_spans()})
        self.near_words, self.the_heads = self._beside_mentions()
        self.number_pairs = self._number_pairs()
        # the TIME entities every seed renames with one shift (settle_times), and the years they write,
        # which each seed's attempts draw the shift against
        self.times = {ei: self.tokens[ei] for ei, c in enumerate(self.coarse)
                      if c == "TIME" and ei not in self.overlap and ei not in self.followers
                      and not self.numbers.settled_with_times(ei)}
        years, decades = document_years(self.times)
        # a decade written, or a census year ("the 2010 census"): the years move by tens (``plausible_dates``)
        self.time_years = (years, decades or decennial(doc, self.times))
        self.span_ends = self._span_ends()
        # the year a span's short end follows ("81" of "1980 – 81"), which it moves with
        self.span_starts = {e: d.year for e, s in self.span_ends.items() if (d := self.date(s)) is not None}
        # the year shifts the dated things allow (``plausible_dates``: films after 1895, living persons, years
        # inside the centuries and periods named beside them)
        self.floors, self.bounds = year_floors(doc, self.coarse, self.times), year_bounds(doc, self.times)
        self.shift_range = shift_range(self.floors, self.bounds)
        # the gaps between the written years that stretch, so the ages and intervals tied to them take new
        # values (``year_map``); a span's short end keeps its distance to its start
        short = [sp for names in self.times.values() for sp in short_spans(names)] + [
            (y, span_end_year(y, next(iter(self.tokens[e].values()))[0])) for e, y in self.span_starts.items()]
        self.year_plan = plan_years(self.time_years[0], self.time_years[1], self.numbers.stretch,
                                    [*self.numbers.rigid, *short], self.numbers.lives)
        self._seen_shifts: tuple[frozenset[tuple[str, ...]], dict[tuple[int, Offsets], int]] | None = None

    def set_adjectives(self, own: Mapping[str, Sequence[Demonym]]) -> None:
        """Pair each place's adjectives with it (``rename.adjective_of``), given the P1549 rows of the items."""
        skip = (self.overlap | set(self.followers) | set(self.leaders) | set(self.same_item)
                | set(self.same_item.values()) | set(self.built_on))
        self.adjective_of = adjectives_of(self.names, self.coarse, self.qids, own, skip)
        self.adjectives = adjectives_by_place(self.adjective_of)

    @functools.cached_property
    def led_runs(self) -> dict[int, list[tuple[int, str, Embedded]]]:
        """For each entity another entity's name holds (``built_on``), those runs: (the builder, its name,
        the run)."""
        out: dict[int, list[tuple[int, str, Embedded]]] = {}
        for b, by_name in sorted(self.built_on.items()):
            for nm, runs in by_name.items():
                for r in runs:
                    out.setdefault(r.leader, []).append((b, nm, r))
        return out

    @functools.cached_property
    def text_languages(self) -> frozenset[int]:
        """The entities a mention of which names the language of the words after it: the mention opens a
        parenthesis or a list item (after "(", ";", ",", "original" or "in") and a colon follows it, or
        "- language :" ("( Italian : Società Dante Alighieri )", "original Catalan - language : La plaça del
        Diamant", "in English : New Bach Edition"). Those words stay in that language, so the name stays:
        renamed, it read "( Tadzhik : Società Mario Puzo )". ``settle_linked`` keeps such an entity where it
        is a language or written as an adjective (not "North Ossetia - Alania , Russia :")."""
        out = set()
        for ei, ent in enumerate(self.doc["vertexSet"]):
            if self.coarse[ei] in ("PER", "NUM", "TIME"):
                continue
            for m in ent:
                sent, (a, b) = self.doc["sents"][m["sent_id"]], m["pos"]
                after = [t.casefold() for t in sent[b:b + 4]]
                colon = after[:1] == [":"] or after[:3] == ["-", "language", ":"]
                if colon and len(after) > (1 if after[0] == ":" else 3) and a > 0 \
                        and sent[a - 1].casefold() in _OPENS_LANGUAGE:
                    out.add(ei)
                    break
        return frozenset(out)

    @functools.cached_property
    def sovereigns(self) -> frozenset[int]:
        """The PER entities a mention of which stands right after a sovereign's title (``regnal``: "Emperor
        Xuanzong"): each takes a monarch's name or keeps its own."""
        return frozenset(ei for ei, c in enumerate(self.coarse) if c == "PER"
                         and after_sovereign_title(self.doc["sents"], self.doc["vertexSet"][ei]))

    @functools.cached_property
    def not_persons(self) -> frozenset[int]:
        """The PER entities the document's gold triples say are no person (``rename.person_roles``): "the former
        mayor of Muleshoe" (Muleshoe, PER, located in Bailey County) had read "the former mayor of Sigmund
        Romberg"."""
        labels = self.doc.get("labels") or []
        return frozenset(ei for ei, c in enumerate(self.coarse)
                         if c == "PER" and not_a_person(entity_roles(labels, ei)))

    @functools.cached_property
    def kind_nouns(self) -> list[list[KindNoun]]:
        """The kind nouns beside each entity's mentions (``core.kind_nouns``: "the 1987 science fiction movie")."""
        return document_kind_nouns(self.doc)

    def _span_ends(self) -> dict[int, int]:
        """The TIME entities written as the short end of a span whose year is another TIME entity, and
        that entity: "81" of "won the 1980 – 81 German championship", "8" of "Austria ( 1527 - 8 )" (Re-DocRED
        annotates 23 such ends). Every mention of the end is one token of one or two digits, right after
        a dash or slash that follows a one-token year mention of the one start entity."""
        doc = self.doc
        starts: dict[tuple[int, int], int] = {}  # (sentence, token after the mention) -> the year's entity
        for ei in self.times:
            for m in doc["vertexSet"][ei]:
                a, b = m["pos"]
                tok = doc["sents"][m["sent_id"]][a]
                if b - a == 1 and len(tok) == 4 and tok.isdigit() and tok[0] in "12":
                    starts[(m["sent_id"], b)] = ei
        out: dict[int, int] = {}
        for ei in self.times:
            leads: set[int] = set()
            for m in doc["vertexSet"][ei]:
                a, b = m["pos"]
                sent = doc["sents"][m["sent_id"]]
                lead = starts.get((m["sent_id"], a - 1))
                short_number = b - a == 1 and sent[a].isdigit() and len(sent[a]) <= 2
                if not short_number or lead is None or lead == ei or sent[a - 1] not in _SPAN_MARKS:
                    break  # (a lead means a > 0: a year mention ends before the dash)
                leads.add(lead)
            else:
                if len(leads) == 1:
                    out[ei] = leads.pop()
        return out

    def _beside_mentions(self) -> tuple[list[dict[str, frozenset[str]]], list[frozenset[str]]]:
        """What the tokens beside an entity's mentions forbid a new name, per entity (one pass):

        * per name, the words (:func:`word_form`) within ``NEAR`` tokens of one of its mentions, outside
          every mention, that the old name does not already double (a new name whose first or last
          word is one of them would double it: "the province of Chubut Province"), ``_THE`` after
          a "the", an "a" or an "an" (no name starting with an article there: "a the 48th Highlanders
          officer"), and ``_NUMBER_BEFORE`` / ``_NUMBER_AFTER``
          beside a number (no name opening / ending with one there: "the 1954 World Championships"
          never "the 1922 1984 Winter Olympics"), and ``_YEAR_IN`` after a year (no name holding a year
          there: "the 2015 Africa Cup of Nations" never "the 2003 Eurovision Song Contest 2009"), and
          ``_ADJECTIVE_BEFORE`` after a place's one-word mention (no name opening with an adjective of a place
          there: "Argentine Primera División" never "Croatian Scottish Football League");
        * the names with a mention written "the X" as a noun phrase of its own: after it the sentence's
          end, a token that starts with no letter or digit, a function word or a verb in -ed ("in the US
          from", "the UK )", "The Marine Band played"; not "the US court system"). Such a name takes no
          bare country name, and, for an organisation, no bare one-word name ("from the Toyota .", "The
          Filter has played"; ``articles.reads_bare``), unless it was one already ("the Allsvenskan").
          A mention that stands as a modifier before a lower-case word, with no article before it, is
          given ``_THE`` too ("New Edition members" never "The Clash members")."""
        covered = mention_mask(self.doc)
        dated = _date_starts(self.doc, self.coarse)
        # (sentence, token) of each one-word place mention, which modifies a mention right after it
        place_words = {(m["sent_id"], m["pos"][0]) for ei, ent in enumerate(self.doc["vertexSet"])
                       if self.coarse[ei] == "LOC" for m in ent if m["pos"][1] - m["pos"][0] == 1}
        near_words: list[dict[str, frozenset[str]]] = []
        the_heads: list[frozenset[str]] = []
        for ei, ent in enumerate(self.doc["vertexSet"]):
            near: dict[str, set[str]] = {}
            heads: set[str] = set()
            for m in ent:
                sent, cov = self.doc["sents"][m["sent_id"]], covered[m["sent_id"]]
                a, b = m["pos"]
                words = near.setdefault(m["name"], set())
                for j in [*range(max(0, a - NEAR), a), *range(b, min(len(sent), b + NEAR))]:
                    if not cov[j] and (f := word_form(sent[j])) is not None:
                        words.add(f)
                if a > 0 and _is_number(sent[a - 1]):  # covered or not: "the 1954 World Championships"
                    words.add(_NUMBER_BEFORE)
                    if _YEAR.fullmatch(sent[a - 1]):
                        words.add(_YEAR_IN)
                    if a > 1 and sent[a - 2].casefold() == "the":  # "at the 2006 the first NBA game" neither
                        words.add(_THE)
                if b < len(sent) and _is_number(sent[b]):
                    words.add(_NUMBER_AFTER)
                if _dated_after(sent, m["sent_id"], b, dated):
                    words.add(_YEAR_IN)  # "the January Uprising of 1863" never "the Tzeltal Rebellion of 1712 of 1863"
                if a > 0 and sent[a - 1].casefold() in TITLES:
                    words.add(_TITLE)  # "named for King Haakon VII" never "for King Czar Nicholas II"
                if a > 0 and (m["sent_id"], a - 1) in place_words:
                    words.add(_ADJECTIVE_BEFORE)  # "Argentine Primera División" never "Croatian Scottish Football League"
                if a > 0 and not cov[a - 1] and sent[a - 1].casefold() in _DETERMINERS:
                    words.add(_THE)  # "was a U.S. Army officer" never "was a the 48th Highlanders officer"
                if a > 1 and not cov[a - 1] and not cov[a - 2] and sent[a - 2].casefold() in _ARTICLES_AND_DETERMINERS \
                        and ((sent[a - 1].isalpha() and sent[a - 1].islower()) or sent[a - 1] in _QUOTES):
                    # an article, then an adjective or a quote: "the proposed Dickey - Lincoln Dam" never "the proposed
                    # The Green Mountain Dam", "list of the " 100 Best Albums "" never "the " the Cambridge ladies ""
                    words.add(_THE)
                if self.coarse[ei] != "PER" and _modifies(sent, b) and not (
                        a > 0 and sent[a - 1].casefold() in ARTICLE_WORDS):
                    words.add(_THE)  # "( excluding Johnny Gill ) New Edition members" never "The Clash members"
                # "the" before the mention, outside every mention or the article of the entity that follows
                # this one ("the United Kingdom" around "United Kingdom": "in the Azerbaijan and" reads wrong)
                follows = ei in self.leaders and any(
                    fm["sent_id"] == m["sent_id"] and fm["pos"][0] == a - 1 and fm["pos"][1] == b
                    for fm in self.doc["vertexSet"][self.leaders[ei]])
                if a > 0 and (not cov[a - 1] or follows) and sent[a - 1].casefold() == "the":
                    if not cov[a - 1]:
                        words.add(_THE)
                    after = sent[b] if b < len(sent) else "."
                    # a place before a capitalised word reads "the X" too: "then - President of the United States
                    # Barack Obama" had read "of the Montenegro Ulises Humala"
                    # (not before a dash and a lower-case word: "the Taipei - based branch" is the branch's "the")
                    compound = after in _DASHES and b + 1 < len(sent) and sent[b + 1][:1].islower()
                    if (not after[:1].isalnum() or after.casefold() in _PHRASE_ENDS or _past_tense(after)
                            or (self.coarse[ei] == "LOC" and after[:1].isupper())) \
                            and not compound and not reads_bare(m["name"], self.coarse[ei]):
                        heads.add(m["name"])
            near_words.append({nm: frozenset(w - name_ends(self.tokens[ei][nm])) for nm, w in near.items() if w})
            the_heads.append(frozenset(heads))
        return near_words, the_heads

    def _number_pairs(self) -> dict[int, list[NumberPair]]:
        """Per NUM/TIME entity, the pairs its mentions form with another NUM/TIME entity's mention at
        most ``NUMBER_GAP`` tokens on in one sentence (left mention first) whose leading numbers
        (``numtime.leading_number``) differ: the renaming keeps them different and, for a range
        ("one to five years", "between 18 and 22"), keeps the lower end first."""
        by_sent: dict[int, list[tuple[int, int, int, str]]] = {}
        for ei, (c, ent) in enumerate(zip(self.coarse, self.doc["vertexSet"], strict=True)):
            if c in ("NUM", "TIME"):
                for m in ent:
                    by_sent.setdefault(m["sent_id"], []).append((m["pos"][0], m["pos"][1], ei, m["name"]))
        out: dict[int, list[NumberPair]] = {}
        for sid in sorted(by_sent):
            sent = self.doc["sents"][sid]
            ms = sorted(by_sent[sid])
            for i, (a0, a1, ea, na) in enumerate(ms):
                for b0, _, eb, nb in ms[i + 1:]:
                    if b0 - a1 > COMPARED_GAP:
                        break
                    if ea == eb or b0 < a1:
                        continue
                    va, vb = leading_number(self.tokens[ea][na]), leading_number(self.tokens[eb][nb])
                    if va is None or vb is None or va == vb:
                        continue
                    compared = _compared(sent, a1, b0, (self.coarse[ea], self.coarse[eb]))
                    if b0 - a1 > NUMBER_GAP and not compared:
                        continue
                    pair = (ea, na, eb, nb, compared or _written_range(sent, a0, a1, b0))
                    out.setdefault(ea, []).append(pair)
                    out.setdefault(eb, []).append(pair)
        return out

    def number_clash(self, pair: NumberPair, tokens: Callable[[int, str], list[str]],
                     pending: Callable[[int], bool]) -> bool:
        """Whether the pair's two numbers, as ``tokens(entity, name)`` now writes them, came out equal
        or, for a range or a comparison (see :meth:`_number_pairs`), in the other order ("from 5,000 to 4,000"
        stays falling, "5,172 ... , up from 4,232" rising). Against an end still ``pending`` (a NUM entity
        settled later, which checks the pair again), the pair only needs room: that end's rule can still draw
        a value on its side (``numtime.number_range``), so "two to three eggs" may become "eight to nine eggs"."""
        ea, na, eb, nb, ranged = pair
        va, vb = leading_number(tokens(ea, na)), leading_number(tokens(eb, nb))
        if va is None or vb is None:
            return False
        if va == vb:
            return True
        old_a, old_b = leading_number(self.tokens[ea][na]), leading_number(self.tokens[eb][nb])
        assert old_a is not None and old_b is not None
        if not ranged:
            return False
        rising = old_a < old_b  # a falling pair ("from 5,000 to 4,000") stays falling
        if pending(eb) and (span := number_range(self.tokens[eb][nb])) is not None:
            # the other end can still be drawn on its side of this one's new value
            return va >= span[1] if rising else va <= span[0]
        if pending(ea) and (span := number_range(self.tokens[ea][na])) is not None:
            return vb <= span[0] if rising else vb >= span[1]
        return va > vb if rising else va < vb

    @functools.cached_property
    def written_adjectives(self) -> list[frozenset[str]]:
        """Per entity, the names written as an adjective in a mention's sentence
        (``demonyms.written_as_adjective``: "Caribbean island", "a U.S. Representative"; a person's name
        after a mention stands as a comma there); none for PER, NUM and TIME."""
        out: list[frozenset[str]] = []
        # where a person's mention starts: "ambassador to the US Husain Haqqani" names the US, no "US Husain"
        persons = {(m["sent_id"], m["pos"][0]) for ei, ent in enumerate(self.doc["vertexSet"])
                   if self.coarse[ei] == "PER" for m in ent}
        for ei, ent in enumerate(self.doc["vertexSet"]):
            after: dict[str, list[str]] = {}
            if self.coarse[ei] not in ("PER", "NUM", "TIME"):
                for m in ent:
                    sent = self.doc["sents"][m["sent_id"]]
                    if m["pos"][1] < len(sent):
                        person = (m["sent_id"], m["pos"][1]) in persons
                        # a short form joined by a dash to the name before it is a noun beside that noun:
                        # "across the Canada – US border" never reads "the Bulgaria – Kuwaiti border"
                        joined = m["pos"][0] > 0 and sent[m["pos"][0] - 1] in _DASHES and is_country_short_form(m["name"])
                        after.setdefault(m["name"], []).append("," if person or joined else sent[m["pos"][1]])
            # a country's short form spelled another way too ("U.S." of "US") is that name, a noun: written
            # as one, it needs a noun; made adjectival, the two would need two demonyms, which few countries have
            twins = {nm for pair in spellings(self.names[ei]).items() for nm in pair}
            out.append(frozenset(nm for nm, toks in after.items() if written_as_adjective(nm, toks)
                                 and not (nm in twins and is_country_short_form(nm))))
        return out

    @functools.cached_property
    def plural_uses(self) -> list[frozenset[str]]:
        """Per LOC or MISC entity, its names that are demonyms of their own plural used as a plural
        (``demonyms.used_as_plural``: "Many Japanese have stayed here")."""
        out: list[frozenset[str]] = []
        for c, ent in zip(self.coarse, self.doc["vertexSet"], strict=True):
            around: dict[str, list[tuple[str, str]]] = {}
            if c in PEOPLE_TYPES:
                for m in ent:
                    sent, (a, b) = self.doc["sents"][m["sent_id"]], m["pos"]
                    around.setdefault(m["name"], []).append((sent[a - 1] if a > 0 else "", sent[b] if b < len(sent) else ""))
            out.append(frozenset(nm for nm, ctx in around.items() if used_as_plural(nm, ctx)))
        return out

    @functools.cached_property
    def verb_numbers(self) -> list[dict[str, str]]:
        """Per entity, the number of the verb right after its names' mentions ("is", "are"; ``verb_number``),
        none for PER, NUM and TIME."""
        return [verb_numbers(self.doc["sents"], ent) if c not in ("PER", "NUM", "TIME") else {}
                for c, ent in zip(self.coarse, self.doc["vertexSet"], strict=True)]

    @functools.cached_property
    def unannotated(self) -> list[Unannotated]:
        """Runs outside every mention that spell one entity's name (``rename.unannotated``), for every seed."""
        return occurrences(self.doc, self.tokens)

    @functools.cached_property
    def genders(self) -> dict[int, GenderEvidence]:
        """Each PER entity's document gender evidence (``core.gender.document_genders``)."""
        return document_genders(self.doc)

    @functools.cached_property
    def context(self) -> dict[int, str]:
        """Each PER entity's context gender, where it has one (``core.gender.context_genders``)."""
        return context_genders(self.doc, self.genders)

    def fine_type(self, ei: int) -> str | None:
        """The fine type of entity ``ei``: its item's, under the entity's coarse type (None unlinked or untyped)."""
        q = self.qids[ei]
        return None if q is None else self.ftypes.get((q, self.coarse[ei]))

    def occurs(self, key: tuple[str, ...]) -> bool:
        """Whether the key's words, run together, occur inside one sentence of the source document,
        starting where a word starts and ending where a word ends (see ``substitute.text_key``)."""
        if not key:
            return self._sentences > 0  # the empty sequence occurs in any sentence
        body = "".join(key)
        if _SENTENCE in body:
            return False  # no word holds the sentence separator
        at = self._text.find(body)
        while at >= 0:
            if self._starts[at] and self._ends[at + len(body) - 1]:
                return True
            at = self._text.find(body, at + 1)
        return False

    def seen_shifts(self, excluded: frozenset[tuple[str, ...]]) -> Callable[..., int] | None:
        """For a year shift (and the offsets of a stretched map, ``year_map``), how many of the document's TIME
        names without a month ("1995", "the 1990s") it makes names of the ``excluded`` (training) documents;
        None when it has none or no such set (``numtime.document_shift`` draws among the shifts with the fewest)."""
        keys = [name_key(t) for ei in sorted(self.times) for t in self.times[ei].values()
                if not any(month_of(x) is not None for x in t) and any(_YEAR.fullmatch(x[:4]) for x in t)]
        if not excluded or not keys:
            return None
        if self._seen_shifts is None or self._seen_shifts[0] is not excluded:
            self._seen_shifts = (excluded, {})
        memo = self._seen_shifts[1]

        def seen(delta: int, offsets: Offsets = ()) -> int:
            if (delta, offsets) not in memo:
                memo[(delta, offsets)] = sum(shifted_key(k, delta, offsets) in excluded for k in keys)
            return memo[(delta, offsets)]
        return seen

    @functools.cached_property
    def month_dates(self) -> list[tuple[int, str, DateValue]]:
        """(TIME entity, name, date) for each name that gives a year and a month, read once per
        document for every seed and attempt of ``settle_times``."""
        return [(ei, nm, d) for ei, c in enumerate(self.coarse)
                if c == "TIME" and ei not in self.overlap and ei not in self.followers
                for nm, toks in self.tokens[ei].items() if (d := date_value(toks)) is not None and d.month is not None]

    def counts_a_noun(self, ei: int) -> bool:
        """Whether a mention of entity ``ei`` is followed by a noun it counts ("two versions")."""
        for m in self.doc["vertexSet"][ei]:
            sent = self.doc["sents"][m["sent_id"]]
            if m["pos"][1] < len(sent) and counts_a_noun(sent[m["pos"][1]]):
                return True
        return False

    def date(self, ei: int, tokens: dict[str, list[str]] | None = None,
             year_of: DateValue | None = None) -> DateValue | None:
        """The date entity ``ei`` writes (``tokens``: its names now), the most precise of its names'; one
        that names a month and no year takes the year of ``year_of``, the end of the span it starts ("April
        16" of "from April 16 to November 16 , 2012")."""
        toks = tokens if tokens is not None else self.tokens[ei]
        values = [v for t in toks.values() if (v := date_value(t)) is not None]
        if not values and year_of is not None:
            values = [v for t in toks.values() if (v := date_value([*t, str(year_of.year)])) is not None
                      and v.month is not None]
        return max(values, key=lambda v: len(v.parts())) if values else None

    def _written_spans(self) -> list[tuple[int, int]]:
        """(start, end) TIME entities the text writes as a range (:func:`_written_range`: "from A to B",
        "between A and B", "A – B"), the end's mention one word after the start's."""
        starts = {(m["sent_id"], m["pos"][0]): (ei, m["pos"][1]) for ei, c in enumerate(self.coarse) if c == "TIME"
                  for m in self.doc["vertexSet"][ei]}
        out = []
        for (sid, a0), (ei, a1) in starts.items():
            end = starts.get((sid, a1 + 1))
            if end is not None and end[0] != ei and _written_range(self.doc["sents"][sid], a0, a1, a1 + 1):
                out.append((ei, end[0]))
        return out


@dataclass
class Row:
    """What one entity of one run became: a row of substitutions.parquet."""

    entity: int
    coarse: str
    kind: str  # linked, num, time or kept
    reason: KeptReason | None  # kept only
    qid: str | None
    fine_type: str | None
    new_qid: str | None
    old_names: list[str]
    new_names: list[str]
    demonym_names: tuple[str, ...] = ()  # old names paired as demonyms (``demonyms``), linked only
    p31_overlap: float | None = None  # P31 Jaccard of the entity's item and the new one, linked only
    # why the substitution is what it is (substitutions.parquet): the classes the new item was drawn by
    # (the fine type, then the other P31 classes it shares with the entity's item), the entity item's
    # classes the catch-all rule set aside (``core.types.CATCH_ALL_CLASSES``; for ``generic_type``
    # its fine type), the head noun the draw kept, and the adjectival forms given
    drawn_by: tuple[str, ...] = ()
    catch_all: tuple[str, ...] = ()
    head_noun: str | None = None
    adjectival: tuple[str, ...] = ()
    # the new names written from another new name of the entity, not taken from the item: a short name
    # ("Orontes" of "Orontes River"), another spelling ("U.A.E." of "UAE"), a surname ("LaMarr");
    # and whether the item came from the entity's second draw (``short_names``)
    written: tuple[str, ...] = ()
    second_draw: bool = False
    # a drawn PER entity's gender (``rename.gender``): "male" / "female" / None, its source, and the
    # gender of the item whose names it took (from that item's P21)
    gender: str | None = None
    gender_from: str | None = None
    new_gender: str | None = None
    # a NUM or TIME entity's role in its document (``coherence``): why its value was kept, derived or drawn
    value_rule: ValueRule | None = None
    # a derived entity's leaders: the entities whose new names its names were written from (``built_on``);
    # and where a renamed name was written outside every mention ("sentence:start-end", ``unannotated``)
    built_on: tuple[int, ...] = ()
    unannotated: tuple[str, ...] = ()


@dataclass
class Run:
    """One (source document, seed): entities are settled in index order."""

    info: DocInfo
    seed: int
    title: str
    slots: dict[int, int]  # entity -> slot index
    # entity -> the slot of its second draw, among items with fewer names, whose short names it writes
    # itself ("NHL" of "National Hockey League"; ``short_names``), read once the first slot is spent
    second: dict[int, int] = field(default_factory=dict)
    cursor: int = 0
    window: int = 0  # window number being read for the current entity
    taken: set[tuple[str, ...]] = field(default_factory=set)
    plan: dict[int, dict[str, NewName]] = field(default_factory=dict)
    new_tokens: dict[int, dict[str, list[str]]] = field(default_factory=dict)
    rows: list[Row] = field(default_factory=list)
    new_items: dict[int, str] = field(default_factory=dict)
    times_done: bool = False  # TIME entities are settled together, before the others
    # entity -> (candidate, names, clash keys): the first fit of an entity that waits, in later windows,
    # for a candidate whose name shares its head noun (``settle_linked``), taken when none does
    # (and the old names whose new names were written from another new name, ``Row.written``)
    fallback: dict[int, tuple[str, dict[str, NewName], list[tuple[str, ...]], frozenset[str]]] = field(
        default_factory=dict)
    # the persons some of whose candidates had a name that reads as the other gender
    # (``rename.gender.reads_against``): kept as ``no_gender``, not ``no_candidate``, when none is left;
    # per run, so one seed's draws never decide another seed's kept reason
    read_other: set[int] = field(default_factory=set)
    # the entities that have tried the item their document's earlier entity of the same item became
    # (``DocInfo.same_item``): once, though settle_linked is entered again after each missing window
    tried_same: set[int] = field(default_factory=set)
    # the runs of tokens outside every mention that take a new name (``rename.unannotated``), once settled
    outside: list[Outside] = field(default_factory=list)
    builders_done: bool = False  # the entities built on others' names are settled last, once
    pinned: set[int] = field(default_factory=set)  # builders that keep their names (``revert``)
    # the entities some of whose candidates were of another kind than a noun beside a mention says
    # (``rename.kinds``): kept as ``kind_noun``, not ``no_candidate``, when none is left
    kind_missed: set[int] = field(default_factory=set)
    # tied counts (``coherence``: "five ministers ... four ministers") settled with the first of their
    # group: entity -> its new tokens (None: kept), read when the run reaches it
    tied: dict[int, dict[str, list[str]] | None] = field(default_factory=dict)
    # outer places waiting for an inner place later in the document (``rename.places``), settled right after
    # it; the entity whose windows run.window counts when it is not the cursor's; and the outer places
    # that have tried the items containing their inner places' new items
    deferred: set[int] = field(default_factory=set)
    window_of: int | None = None
    tried_places: set[int] = field(default_factory=set)
    placing: tuple[tuple[int, int, int], Placement] | None = None  # the last ``placement`` and its run state
    # a place's adjectives -> the adjectival forms its draw gave them (``rename.adjective_of``), written when
    # the run reaches them
    carried: dict[int, dict[str, NewName]] = field(default_factory=dict)


@dataclass
class Draws:
    """What the index has answered so far for the slots of the runs being settled."""

    slots: list[Slot]
    total: Callable[[Slot], int]  # eligible items of a slot's group
    auditor: Auditor
    windows: dict[Request, list[str]] = field(default_factory=dict)  # candidate QIDs in draw order
    names: dict[str, ItemNames] = field(default_factory=dict)
    eval_names: set[str] = field(default_factory=set)  # folded names of eval-pool items (train pool only)
    excluded: frozenset[tuple[str, ...]] = frozenset()  # mention names of --exclude-names-from (novelty)
    required: dict[tuple[int, int], list[tuple[str, str]]] = field(default_factory=dict)
    demonyms: dict[str, tuple[Demonym, ...]] = field(default_factory=dict)  # P1549 rows (entities, candidates)
    known: frozenset[str] = frozenset()  # folded mention names that are a demonym of some item (``known_demonyms``)
    # the folded names of each candidate that are a demonym of some item: noun names never take them
    # ("between the United States and the Philippine"); candidates without such a name are absent
    adjective_named: dict[str, frozenset[str]] = field(default_factory=dict)
    class_kinds: dict[str, str] = field(default_factory=dict)  # class -> kind word (``fine_types.class_kinds``)
    genders: dict[str, str] = field(default_factory=dict)  # P21 value of entities' items and candidates
    knows_genders: bool = False  # whether the index has P21 rows (``rename.gender.fits``)
    # how many adjectival forms (``adjectival_forms``) each candidate has, worked out once: an adjectival
    # entity that no candidate can serve walks every window, and is kept, over the same candidates each seed
    form_counts: dict[str, int] = field(default_factory=dict)
    # (document order, entity, second draw) -> its ``EntityFacts``, worked out once for all seeds and windows
    facts: dict[tuple[int, int, bool], EntityFacts] = field(default_factory=dict)
    # per candidate, worked out once: whether it has a name written in lower case, and a monarch's name. A
    # common noun or a monarch holding a first fit passes over every candidate without one, and the same
    # candidates come back in the windows of every seed
    lower_named: dict[str, bool] = field(default_factory=dict)
    regnal_named: dict[str, bool] = field(default_factory=dict)
    # window (slot, number) -> whether a candidate of it has an adjectival form (``form_count`` > 0)
    window_forms: dict[Request, bool] = field(default_factory=dict)
    nouns: NounClasses | None = None  # the classes of kind nouns (``rename.kinds``); None: no kind is asked
    item_up: dict[str, frozenset[str]] = field(default_factory=dict)  # an item's classes and their ancestors
    plausible: str = "off"  # ``PLAUSIBLE`` for this run of the state machine
    roles: dict[str, frozenset[tuple[str, str]]] = field(default_factory=dict)  # candidates' (relation, role) pairs
    bare: frozenset[str] = frozenset()  # names the renamed documents write without "the" (``articles.written_bare``)
    common_words: frozenset[str] = frozenset()  # words the renamed documents write in lower case (``common_words``)
    # the items each fetched item lies in (``rename.places``: P131, P17), for places drawn together; off
    # under ``generate --popularity``, whose draws must come from one popularity bin of the class
    containers: dict[str, frozenset[str]] = field(default_factory=dict)
    asked_places: set[str] = field(default_factory=set)  # the items whose containers were fetched
    places: bool = True
    pools: dict[str, str] = field(default_factory=dict)  # ``pool_of`` of items, remembered
    labels: dict[str, tuple[tuple[str, ...], ...] | None] = field(default_factory=dict)  # clash keys of labels
    # (document order, place, second draw, its adjectives) -> the place's facts with its adjectives' names
    # (``with_adjectives``), worked out once
    joined: dict[tuple[int, int, bool, tuple[int, ...]], EntityFacts] = field(default_factory=dict)

    def pool(self, qid: str) -> str:
        """The name pool of ``qid`` (``candidates.pool_of``), remembered: places ask it of every container."""
        got = self.pools.get(qid)
        if got is None:
            got = self.pools[qid] = pool_of(qid)
        return got

    def label_keys(self, qid: str) -> tuple[tuple[str, ...], ...] | None:
        """The clash keys of the label of ``qid`` (None while its names are not fetched), remembered once known."""
        if qid in self.labels:
            return self.labels[qid]
        names = self.names.get(qid)
        if names is None:
            return None
        got = self.labels[qid] = clash_keys(names.label)
        return got

    def classes_up(self, qid: str) -> frozenset[str]:
        """The P31 classes of ``qid`` with their P279 ancestors (``rename.kinds.item_classes``), remembered."""
        got = self.item_up.get(qid)
        if got is None:
            got = self.item_up[qid] = item_classes(self.auditor.types.get(qid, ()), self.auditor.anc)
        return got

    @functools.cached_property
    def kind_words(self) -> frozenset[str]:
        """The kind words of all classes: a name's head noun is a type signal only when it is one."""
        return frozenset(self.class_kinds.values())

    def has_lower_name(self, cand: str) -> bool:
        """Whether a name of ``cand`` is written in lower case (``written_lower``; False when not fetched)."""
        return self._names_say(self.lower_named, cand, lambda names: any(written_lower(n) for n in names))

    def has_regnal_name(self, cand: str) -> bool:
        """Whether a name of ``cand`` is a monarch's (``rename.regnal``; False when not fetched)."""
        return self._names_say(self.regnal_named, cand, any_regnal)

    def _names_say(self, memo: dict[str, bool], cand: str, test: Callable[[tuple[str, ...]], bool]) -> bool:
        """``test`` of the label and aliases of ``cand``, remembered in ``memo`` once they are fetched."""
        hit = memo.get(cand)
        if hit is None:
            names = self.names.get(cand)
            if names is None:
                return False
            hit = memo[cand] = test((names.label, *names.aliases))
        return hit

    def window_has_forms(self, window: Request) -> bool:
        """Whether a candidate of a fetched ``window`` has an adjectival form."""
        hit = self.window_forms.get(window)
        if hit is None:
            if window not in self.windows:
                return False  # not fetched (the slot has fewer candidates): nothing to remember yet
            hit = self.window_forms[window] = any(self.form_count(c) > 0 for c in self.windows[window])
        return hit

    def form_count(self, cand: str) -> int:
        """The number of adjectival forms of ``cand`` (-1 when its names are not fetched)."""
        n = self.form_counts.get(cand)
        if n is None:
            if cand not in self.names:
                return -1
            kinds = adjectival_kinds(self.auditor.types.get(cand, ()), self.auditor.anc)
            n = self.form_counts[cand] = len(adjectival_forms(self.demonyms.get(cand, ()), self.names[cand].label, kinds))
        return n


def plan_runs(infos: Sequence[DocInfo], seeds: Sequence[int], pool: str, twins: bool,
              adjectival: Callable[[DocInfo, int], Sequence[str]] | None = None) -> tuple[list[Run], list[Slot]]:
    """The runs of the documents (document order, then seed) and the candidate slots of each linked entity.

    A slot draws items with at least as many names as the entity has distinct names (the paper's rule),
    a name spelled two ways counted once (``short_names.spellings``: "US" and "U.S."), less its
    ``adjectival`` names (the entity's names that are adjectival), which take the new item's
    demonyms instead: a "German | Germany" entity needs a country of one name and one demonym, as the
    corpus KB's countries are ("Kuwait", P1549 "Kuwaiti"), not a country of two names. An entity with
    short names (``short_names``: "Yukon" of "Yukon River", "NHL" of "National Hockey League") also gets
    a second slot, less those names, which it reads only when every candidate of the first has failed."""
    slots: list[Slot] = []
    runs: list[Run] = []
    for info in infos:
        for k in seeds:
            run_slots: dict[int, int] = {}
            second: dict[int, int] = {}
            for ei, q in enumerate(info.qids):
                if q is None or ei in info.overlap or ei in info.followers or info.coarse[ei] in RENAMERS or (
                        ft := info.fine_type(ei)) is None or ei in info.built_on:
                    continue
                if is_catch_all(ft):
                    continue  # kept (generic_type): a catch-all class alone says nothing a reader would know
                run_slots[ei] = len(slots)
                adjectives = adjectival(info, ei) if adjectival is not None else ()
                spelled = spellings(info.names[ei], adjectives)  # "US" and "U.S." need one new name
                if modifiers := modifier_spellings(info.names[ei], adjectives):  # "U.S. Representative", "American"
                    spelled = {**spelled, **modifiers}
                    adjectives = [a for a in adjectives if a not in modifiers]
                names = [nm for nm in info.names[ei] if nm not in spelled]
                if info.coarse[ei] == "PER":  # a peerage is written from the new full name ("Viscount Monroe")
                    names = [nm for nm in names if nm not in peerage_names(names)]
                need = max(1, len(names) - len(adjectives))
                slots.append(Slot(ft, need, pool, q, k, info.title, ei))
                fewer = max(1, need - len(short_names(names, info.coarse[ei], adjectives)))
                if fewer < need:
                    second[ei] = len(slots)
                    slots.append(Slot(ft, fewer, pool, q, k, info.title, ei))
            runs.append(Run(info, k, info.title if twins else f"{info.title}-{k}", run_slots, second))
    return runs, slots


# ---------------------------------------------------------------------------- the state machine
def advance(run: Run, draws: Draws) -> Request | None:
    """Settle entities until a window is missing (returned) or the run is done (None)."""
    info = run.info
    n = len(info.doc["vertexSet"])
    if not run.times_done:
        settle_times(run, draws.excluded)
        run.times_done = True
        for f, lead in sorted(info.followers.items()):
            if info.coarse[lead] == "TIME":
                settle_follower(run, f, lead)
    while run.cursor < n:
        ei = run.cursor
        if ei in info.followers or ei in info.built_on:
            _after(run, ei)  # itself settled with the entity nested in it, or after the entities whose names it holds
        elif ei in run.slots:
            if ei in run.deferred or _settled(run, ei):
                pass  # waits for its inner place, or settled already (the run came back for a waiting outer place)
            elif _waits(run, ei, draws):
                run.deferred.add(ei)  # settled right after its inner place (``rename.places``)
            else:
                need = settle_linked(run, ei, draws)
                if need is not None:
                    return need
                _after(run, ei)
        elif (info.coarse[ei] != "TIME" or ei in info.overlap) and not _settled(run, ei):
            settle_other(run, ei, draws.excluded)
            _after(run, ei)
        need = _settle_waiting(run, ei, draws)
        if need is not None:
            return need
        run.cursor += 1
        run.window = 0
    # none is left unless the gold triples' places make a cycle; the places before their adjectives
    for ei in sorted(run.deferred, key=lambda e: (e in info.adjective_of, e)):
        need = _settle_deferred(run, ei, draws)
        if need is not None:
            return need
    if not run.builders_done:
        run.builders_done = True
        settle_built_on(run)
        settle_unannotated(run)
    return None


def _settled(run: Run, ei: int) -> bool:
    """Whether entity ``ei`` of ``run`` has its row (renamed or kept)."""
    return any(r.entity == ei for r in run.rows)


def _after(run: Run, ei: int) -> None:
    """What follows entity ``ei`` once it is settled: "the X" around its "X" (``DocInfo.followers``)."""
    info = run.info
    if ei in info.leaders and info.coarse[ei] != "TIME" and not _settled(run, info.leaders[ei]):
        settle_follower(run, info.leaders[ei], ei)


def _waits(run: Run, ei: int, draws: Draws) -> bool:
    """Whether entity ``ei`` is an adjective whose place has not drawn yet (``rename.adjective_of``: it takes
    the forms the place's draw gives it), or an outer place that waits for its inner places, none of which
    has drawn yet (later in the document, or waiting themselves): it follows the first that does, and the
    others then prefer an item inside the one it became (``rename.places``). An entity of an item the
    document names twice never waits: the later one of the item follows the earlier (``DocInfo.same_item``),
    which must come first."""
    info = run.info
    if (j := info.adjective_of.get(ei)) is not None and j in run.slots and not _settled(run, j):
        return True
    if not draws.places or ei in info.same_item or ei in info.same_item.values():
        return False
    drawn = [j for j in info.places.inners.get(ei, ()) if j in run.slots]
    return bool(drawn) and not any(_settled(run, j) for j in drawn)


def _settle_waiting(run: Run, ei: int, draws: Draws) -> Request | None:
    """Settle the outer places and the adjectives that waited for entity ``ei`` (and those that waited for
    them), or return the window one of them still needs. ``run.window`` counts that one's windows meanwhile."""
    info = run.info
    for o in (*info.places.outers.get(ei, ()), *info.adjectives.get(ei, ())):
        if o not in run.deferred or not _settled(run, ei):
            continue
        if (j := info.adjective_of.get(o)) is not None and j in run.slots and not _settled(run, j):
            continue  # an adjective that is an outer place too ("Sydney" P17 "Australian") waits for its place
        need = _settle_deferred(run, o, draws) or _settle_waiting(run, o, draws)
        if need is not None:
            return need
    return None


def _settle_deferred(run: Run, ei: int, draws: Draws) -> Request | None:
    """Settle waiting place ``ei`` out of the cursor's order, or return the window it still needs; while it
    waits for one, ``run.window`` counts its windows (``run.window_of``), and the cursor's entity is settled."""
    if run.window_of != ei:
        run.window, run.window_of = 0, ei
    need = settle_linked(run, ei, draws)
    if need is not None:
        return need
    run.deferred.discard(ei)
    run.window, run.window_of = 0, None
    _after(run, ei)
    return None


def _place_item(run: Run, ei: int) -> tuple[bool, str | None]:
    """Whether place ``ei`` is settled, and the item it names now: its new item, its own where it keeps
    its names or will (an entity that draws nothing), the leader's for "the X" around "X"."""
    info = run.info
    if ei in run.new_items:
        return True, run.new_items[ei]
    if ei in info.followers:
        return _place_item(run, info.followers[ei])
    if ei not in run.slots or _settled(run, ei):
        return True, info.qids[ei]
    return False, None


def _may_become(run: Run, ei: int, draws: Draws, cand: str, became: frozenset[str] | None = None) -> bool:
    """Whether item ``cand`` could be drawn for entity ``ei``: of its fine type and name pool, not its own
    item nor an item another entity of the run became (``became``, worked out when not given)."""
    slot = draws.slots[run.slots[ei]]
    if cand == run.info.qids[ei] or draws.pool(cand) != slot.pool or slot.fine_type not in draws.auditor.types.get(cand, ()):
        return False
    keys = draws.label_keys(cand)
    # a label the excluded documents name ("Germany", for a benchmark excluding dev) is never a new name
    return (keys is not None and cand not in (became if became is not None else run.new_items.values())
            and not any(k in draws.excluded or k in run.taken for k in keys))


class Placement(NamedTuple):
    """What a candidate for one place of a pair must meet now (``placed``), worked out once per state of its run."""

    inside: frozenset[str]  # the items of its settled outer places: it lies in each
    contains: tuple[str, ...]  # the new items of its renamed inner places: it contains each
    follow: tuple[int, ...]  # its outer places still to draw: it lies in an item each could become
    became: frozenset[str]  # the items the run's entities became
    could: dict[int, dict[str, bool]]  # outer place -> container -> whether it could become it, as asked


def placement(run: Run, ei: int) -> Placement:
    """The ``Placement`` of place ``ei`` in ``run`` as it stands (remembered until an entity settles)."""
    state = (ei, len(run.rows), len(run.new_items))
    if run.placing is not None and run.placing[0] == state:
        return run.placing[1]
    info = run.info
    inside, follow = set(), []
    for o in info.places.outers.get(ei, ()):
        done, item = _place_item(run, o)
        if done:
            if item is not None:
                inside.add(item)
        elif o in run.slots:
            follow.append(o)
    # a renamed inner place (one that kept its name cannot be followed but by keeping)
    contains = tuple(run.new_items[j] for j in info.places.inners.get(ei, ()) if j in run.new_items)
    got = Placement(frozenset(inside), contains, tuple(follow), frozenset(run.new_items.values()), {})
    run.placing = (state, got)
    return got


# what a candidate for a place of a pair keeps (``placed_test``): nothing; the outer places' own items (they
# keep their names: "Kassel , Germany"); or items each outer place could become (both renamed: "Groton ,
# United States"), which a place prefers, the second where none of its draws does the third
NOT_PLACED, PLACED_IN_OWN, PLACED = 0, 1, 2


def placed(run: Run, ei: int, draws: Draws, cand: str) -> bool:
    """Whether candidate ``cand`` for place ``ei`` keeps the document's places inside each other, by the
    index (``rename.places``): inside the item each settled outer place names now; containing the item
    each settled inner place names now; and, for an outer place still to come, inside an item it could
    become, so it can follow. A place the index cannot place does not keep them (a preference only)."""
    return placed_test(run, ei, draws)(cand) == PLACED


def placed_test(run: Run, ei: int, draws: Draws) -> Callable[[str], int]:
    """What candidates keep of the places of pairs for the run as it stands (``NOT_PLACED``,
    ``PLACED_IN_OWN``, ``PLACED``), as one test to put to every candidate of a window: ``placed`` when it
    gives ``PLACED``; ``PLACED_IN_OWN`` when it lies inside the own item of an outer place still to come that
    could become none of its containers, and where the others could ("Kassel , Germany" for "Solingen ,
    Germany" where every country a German city lies in is a name dev writes)."""
    where, containers, empty = placement(run, ei), draws.containers, frozenset()
    inside, contains, follow = where.inside, where.contains, where.follow
    within = [containers.get(item, empty) for item in contains]  # the containers of its renamed inner places
    own_items = {o: run.info.qids[o] for o in follow}

    def test(cand: str) -> int:
        held = containers.get(cand, empty)
        if not inside <= held or any(cand not in c for c in within):
            return NOT_PLACED
        got = PLACED
        for o in follow:
            ok = where.could[o] if o in where.could else where.could.setdefault(o, {})
            if any(ok[c] if c in ok else ok.setdefault(c, _may_become(run, o, draws, c, where.became))
                   for c in held):
                continue
            if own_items[o] not in held:
                return NOT_PLACED
            got = PLACED_IN_OWN  # the outer place can keep its names ("Malmö , Sweden" for "Kiruna , Sweden")
        return got

    return test


def containing(run: Run, ei: int, draws: Draws) -> tuple[list[str], bool]:
    """The items outer place ``ei`` could become that contain every settled inner place's item now (in a
    seeded order), and whether its own item does (``rename.places``)."""
    items = [run.new_items[j] for j in run.info.places.inners.get(ei, ()) if j in run.new_items]
    if not items:
        return [], False
    common = frozenset.intersection(*(draws.containers.get(item, frozenset()) for item in items))
    cands = sorted((c for c in common if _may_become(run, ei, draws, c)),
                   key=lambda c: (stable_hash_hex(run.seed, run.title, ei, c), c))
    return cands, run.info.qids[ei] in common


def settle_built_on(run: Run) -> None:
    """Settle the entities built on other names (``settle_builder``), then make sure no name the renamed
    document keeps holds a renamed entity's old name: where one does (a kept name that follows no rule of
    ``built_on``: an entity kept by the overlap policy, "Square Enix" beside "Square"; a given name, "Paul"
    in "Paul Desmarais Jr."), the renamed entity keeps its names too (``built_on``), with the entities that
    share its new names (``revert``), and the builders are settled again."""
    info = run.info
    while True:
        for ei in info.builders:
            settle_builder(run, ei)
        held = held_names(run)
        if not held:
            return
        for ei in sorted(held):
            revert(run, ei)
        for ei in info.builders:  # settled again from what is left
            _unsettle(run, ei)


def held_names(run: Run) -> set[int]:
    """The renamed entities (not NUM or TIME) an old name of which a name of another entity, as the run
    writes it now, holds as a shorter run of whole tokens."""
    info = run.info
    changed = {ei: [tuple(info.tokens[ei][nm]) for nm, nn in mapping.items() if tuple(info.tokens[ei][nm]) != nn.tokens]
               for ei, mapping in run.plan.items() if info.coarse[ei] not in RENAMERS}
    changed = {ei: olds for ei, olds in changed.items() if olds}
    if not changed:
        return set()
    out: set[int] = set()
    for a, names in enumerate(info.names):
        if info.coarse[a] in RENAMERS:
            continue
        plan = run.plan.get(a, {})
        final = [plan[nm].tokens if nm in plan else tuple(info.tokens[a][nm]) for nm in names]
        for b, olds in changed.items():
            if b != a and b not in out and any(holds(x, y) for x in final for y in olds):
                out.add(b)
    return out


def _unsettle(run: Run, ei: int) -> None:
    """Forget what entity ``ei`` became (its row, names and item), so it is settled again or anew."""
    run.rows = [r for r in run.rows if r.entity != ei]
    for table in (run.plan, run.new_items, run.new_tokens):
        table.pop(ei, None)


def revert(run: Run, ei: int) -> None:
    """Entity ``ei`` keeps its names (``built_on``), and so do the entities that took its names or its new
    item: the "the X" around it or inside it (``overlap``), the entities of its item that took the item it
    became (``same_item``)."""
    info = run.info
    group = {ei}
    todo = [ei]
    while todo:
        e = todo.pop()
        # (and a place and its adjectives: "American" keeps its name with "United States")
        near = [x for x in (info.leaders.get(e), info.followers.get(e), info.adjective_of.get(e)) if x is not None]
        near += info.adjectives.get(e, ())
        if e in run.new_items:
            item = run.new_items[e]
            near += [x for x in run.new_items if run.new_items[x] == item and x != e and (
                info.same_item.get(x) == e or info.same_item.get(e) == x
                or (x in info.same_item and info.same_item.get(x) == info.same_item.get(e)))]
        for x in near:
            if x not in group:
                group.add(x)
                todo.append(x)
    for e in sorted(group):
        if e in info.builders:
            run.pinned.add(e)
        _unsettle(run, e)
        reason = (KeptReason.BUILT_ON if e == ei or e in info.builders else KeptReason.OVERLAP
                  if e in info.followers or e in info.leaders else KeptReason.REFERENT
                  if e in info.adjective_of or e in info.adjectives else KeptReason.SAME_ITEM)
        keep(run, e, reason)


def settle_builder(run: Run, ei: int) -> None:
    """Entity ``ei``, a name of which holds another entity's name (``rename.built_on``): each such run
    takes its leader's new name ("USS Lyndon B. Johnson" -> "USS Comte de Boulainvilliers"), its other
    names stay; when no run changes, it keeps its names, for the reason it would have had anyway
    (``unlinked``, ...) or ``built_on``."""
    info = run.info
    _unsettle(run, ei)  # settled anew after a leader was reverted
    mapping: dict[str, NewName] = {}
    leaders: set[int] = set()
    for nm, runs in info.built_on[ei].items() if ei not in run.pinned else ():
        got = derive_built_on(nm, info.tokens[ei][nm], runs, run.plan, person=info.coarse[ei] == "PER")
        if got is not None:
            mapping[nm], used = got
            leaders.update(used)
    ft = info.fine_type(ei)
    if not mapping:
        reason = (KeptReason.UNLINKED if info.qids[ei] is None else KeptReason.NO_TYPE if ft is None
                  else KeptReason.GENERIC_TYPE if is_catch_all(ft) else KeptReason.BUILT_ON)
        return keep(run, ei, reason)
    if pairs := _moved_years(run):  # its own years move as the document's dates did
        mapping = {nm: _with_years(nn, info.tokens[ei][nm], pairs) for nm, nn in mapping.items()}
    run.plan[ei] = mapping
    run.new_tokens[ei] = {nm: list(nn.tokens) for nm, nn in mapping.items()}
    run.taken.update(k for nn in mapping.values() for k in clash_keys(nn.name))
    run.rows.append(Row(ei, info.coarse[ei], "derived", None, info.qids[ei], ft, None, info.names[ei],
                        [mapping[nm].name if nm in mapping else nm for nm in info.names[ei]],
                        written=tuple(mapping[nm].name for nm in info.names[ei] if nm in mapping),
                        built_on=tuple(sorted(leaders))))


def _moved_years(run: Run) -> list[tuple[int, int]]:
    """(old, new) of every year the run's renamed TIME entities write (``year_map.year_pairs``)."""
    info = run.info
    return [p for e, new in sorted(run.new_tokens.items()) if info.coarse[e] == "TIME"
            for nm, toks in sorted(new.items()) for p in year_pairs(info.tokens[e][nm], toks)]


def _with_years(nn: NewName, own: Sequence[str], pairs: Sequence[tuple[int, int]]) -> NewName:
    """A derived name whose own year tokens (those of the builder's name ``own``, not of a leader's new name)
    move as the document's years did: "2009–2010 Iranian election protests" beside "February 2011" renamed
    "January 1992" reads "1990–1991 Syrian election protests", not "2009–2010 Syrian ..."."""
    mine = set(own)
    moved = [m if t in mine else t for t, m in zip(nn.tokens, move_years(nn.tokens, pairs), strict=True)]
    if moved == list(nn.tokens):
        return nn
    name = nn.name
    for old, new in zip(nn.tokens, moved, strict=True):
        if old != new:
            name = re.sub(rf"(?<![0-9]){re.escape(old)}(?![0-9])", new, name, count=1)
    return NewName(name, tuple(moved))


def settle_unannotated(run: Run) -> None:
    """The renamed names left outside every mention take their new names (``rename.unannotated``); each
    entity's row lists where."""
    info = run.info
    spans = unannotated_spans(info.unannotated, info.coarse, run.plan)
    if not spans:
        return
    where: dict[int, list[str]] = {}
    for u, nn in spans:
        run.outside.append((u.sent_id, u.start, u.end, u.name, info.coarse[u.entity], nn))
        where.setdefault(u.entity, []).append(f"{u.sent_id}:{u.start}-{u.end}")
    for row in run.rows:
        if row.entity in where:
            row.unannotated = tuple(where[row.entity])


def has_capital(name: str) -> bool:
    """Whether a name has a capital letter anywhere: "iTunes", "the United States" do, "flamenco" does not."""
    return any(ch.isupper() for ch in name)


def written_lower(name: str) -> bool:
    """Whether a name is written in lower case, as a common noun is: "cute culture", "salsa", "76ers"; not
    "iTunes", nor "一了百了", which has no case at all."""
    return any(ch.islower() for ch in name) and not has_capital(name)


def settle_follower(run: Run, f: int, lead: int) -> None:
    """Entity ``f``, "the X" around its leader's "X" (``DocInfo.followers``): "the" and the leader's new
    name ("the United States Census Bureau" -> "the Bureau of Labor Statistics"), or kept with the
    leader (``overlap``: renamed alone, either would cut the other's tokens)."""
    info = run.info
    row = next((r for r in run.rows if r.entity == lead), None)
    plan = run.plan.get(lead)
    if row is None or row.kind == "kept" or plan is None:
        return keep(run, f, KeptReason.OVERLAP)
    by_key = {nested_key(nm): plan.get(nm) for nm in info.names[lead]}
    mapping: dict[str, NewName] = {}
    for nm in info.names[f]:
        article, rest = nm.split(maxsplit=1)
        nn = by_key.get(nested_key(rest))
        if nn is not None:  # a name the leader's plan leaves as it is stays as it is here too
            mapping[nm] = NewName(f"{article} {nn.name}", (article, *nn.tokens))
    run.plan[f] = mapping
    if lead in run.new_items:
        run.new_items[f] = run.new_items[lead]
    if lead in run.new_tokens:
        run.new_tokens[f] = {nm: list(nn.tokens) for nm, nn in mapping.items()}
    run.rows.append(Row(f, info.coarse[f], row.kind, None, info.qids[f], row.fine_type, row.new_qid, info.names[f],
                        [mapping[nm].name if nm in mapping else nm for nm in info.names[f]],
                        drawn_by=row.drawn_by, written=tuple(nn.name for nn in mapping.values()),
                        value_rule=info.numbers.rule(f)))


def keep(run: Run, ei: int, reason: KeptReason, person: PersonGender = UNKNOWN) -> None:
    info = run.info
    q = info.qids[ei]
    ft = info.fine_type(ei)
    run.rows.append(Row(ei, info.coarse[ei], "kept", reason, q, ft, None, info.names[ei], info.names[ei],
                        catch_all=(ft,) if reason is KeptReason.GENERIC_TYPE and ft is not None else (),
                        gender=person.gender, gender_from=person.source, value_rule=info.numbers.rule(ei)))


def _rule_plan(name_tokens: dict[str, list[str]], new: dict[str, list[str]]) -> dict[str, NewName]:
    return {nm: NewName(respell(nm, name_tokens[nm], t), tuple(t)) for nm, t in new.items() if t != name_tokens[nm]}


def settle_other(run: Run, ei: int, excluded: frozenset[tuple[str, ...]] = frozenset()) -> None:
    """An entity without a slot: overlap, NUM by rule, or kept as unlinked / without a type.

    A NUM entity goes by its role in the document's number plan (``coherence``): a figure the text checks
    by :func:`settle_checked`, a tied count by :func:`settle_tied`, and a value free to change is drawn
    here; its first ``NOVEL_TRIES`` attempts wait for a value none of the ``excluded`` (training) documents
    writes as a name ("seven" and "12" are everywhere, "73" is not), the first value that fits otherwise."""
    info = run.info
    coarse = info.coarse[ei]
    if ei in info.overlap:
        return keep(run, ei, KeptReason.OVERLAP)
    renamer = RENAMERS.get(coarse)
    if renamer is None:
        if info.qids[ei] is None:
            return keep(run, ei, KeptReason.UNLINKED)
        return keep(run, ei, KeptReason.GENERIC_TYPE if is_catch_all(info.fine_type(ei)) else KeptReason.NO_TYPE)
    rule = info.numbers.rule(ei)
    if rule is ValueRule.TIED_COUNT:
        return settle_tied(run, ei, excluded)
    if rule is not None and rule is not ValueRule.DRAWN and rule is not ValueRule.DATE:
        return settle_checked(run, ei)
    old = info.tokens[ei]
    extra = {"counting": info.counts_a_noun(ei)} if coarse == "NUM" else {}
    any_rule = False
    first_fit: tuple[dict[str, list[str]], list[tuple[str, ...]]] | None = None
    for attempt in range(NUMTIME_ATTEMPTS):
        new = renamer(old, run.seed, info.title, ei, attempt, **extra)
        if new is None:
            break
        any_rule = True
        if new == old:  # a number that cannot change ("one" counting a noun): no valid value
            continue
        keys = [name_key(t) for nm, t in new.items() if t != old[nm]]
        if len(set(keys)) != len(keys) or any(k in run.taken or info.occurs(k) for k in keys):
            continue
        if not all(ranges_in_order(old[nm], t) for nm, t in new.items()):
            continue  # "7 - 7.5 mm" never reads "9 - 3.5 mm"
        pairs = info.number_pairs.get(ei, ())
        if pairs:
            now, later = _tokens_now(run, {ei: new}), _pending(run, ei)
            if any(info.number_clash(p, now, later) for p in pairs):
                continue  # "one to five years" must not read "nine to nine years" nor "nine to three years"
        if excluded and attempt < NOVEL_TRIES and any(k in excluded for k in keys):
            first_fit = first_fit or (new, keys)
            continue  # a value the training documents write: a few more draws may find a novel one
        return _rename_by_rule(run, ei, new, keys)
    if first_fit is not None:
        return _rename_by_rule(run, ei, *first_fit)
    return keep(run, ei, KeptReason.NO_VALID_VALUE if any_rule else KeptReason.NO_RULE)


def _rename_by_rule(run: Run, ei: int, new: dict[str, list[str]], keys: Sequence[tuple[str, ...]]) -> None:
    """Write a NUM or TIME entity's new tokens into the run (its plan, its row; ``keys`` taken)."""
    info = run.info
    old = info.tokens[ei]
    plan = _rule_plan(old, new)
    run.plan[ei] = plan
    run.new_tokens[ei] = new
    run.taken.update(keys)
    names = [plan[nm].name if nm in plan else nm for nm in info.names[ei]]
    coarse = info.coarse[ei]
    run.rows.append(Row(ei, coarse, coarse.lower(), None, None, None, None, info.names[ei], names,
                        value_rule=info.numbers.rule(ei)))


def _names_now(run: Run) -> NamesOf:
    """(entity, renamed?) -> its names' tokens in the source, or as the run writes them now."""
    info = run.info

    def names_of(ei: int, renamed: bool) -> Mapping[str, Sequence[str]]:
        return run.new_tokens.get(ei, info.tokens[ei]) if renamed else info.tokens[ei]
    return names_of


def settle_checked(run: Run, ei: int) -> None:
    """A NUM or TIME figure the text checks (``coherence``): a fixed form and a listed count keep their value;
    an age or an interval takes the value its renamed dates give, which is its own unless a cyclic month or
    day shift moved one date past the other's day of the year."""
    info = run.info
    rule = info.numbers.rule(ei)
    if rule is ValueRule.FIXED_FORM:
        return keep(run, ei, KeptReason.FIXED_FORM)
    new = derive(info.numbers, ei, info.tokens[ei], _names_now(run)) if rule in (ValueRule.AGE, ValueRule.INTERVAL) \
        else None
    keys = [name_key(t) for nm, t in new.items() if t != info.tokens[ei][nm]] if new is not None else []
    if new is None or not keys:
        return keep(run, ei, KeptReason.CHECKED)
    # the value the dates give, even where the document writes it elsewhere ("aged 4" beside "4 January"):
    # the text must agree with itself first (settle_times makes this rare: it prefers shifts that change no figure)
    return _rename_by_rule(run, ei, new, keys)


def settle_tied(run: Run, ei: int, excluded: frozenset[tuple[str, ...]] = frozenset()) -> None:
    """A count tied to other counts of the same noun (``coherence``: "contained five ministers ... reduced to
    four ministers"). The first of its group settles the group: one offset (``coherence.tied_offset``) for
    all, the first attempt whose values stay two or more, clash with nothing and keep the number pairs,
    preferring (for ``NOVEL_TRIES`` attempts) values no ``excluded`` document writes; every member is
    kept (``no_valid_value``) when none does."""
    info = run.info
    if ei not in run.tied:
        group = [e for e in info.numbers.ties[ei] if e not in info.overlap]
        values = [v for e in group if (v := leading_number(next(iter(info.tokens[e].values())))) is not None]
        chosen: dict[int, dict[str, list[str]]] | None = None
        first_fit: tuple[dict[int, dict[str, list[str]]], list[tuple[str, ...]]] | None = None
        keys: list[tuple[str, ...]] = []
        for attempt in range(NUMTIME_ATTEMPTS if values else 0):
            k = tied_offset(values, run.seed, info.title, group[0], attempt)
            moved = {e: with_value(info.tokens[e], k, least=2) for e in group}
            if any(v is None or not same_magnitude(info.tokens[e], v) for e, v in moved.items()):
                continue  # "five" stays a single word under ten, "671" a number of three digits
            new = {e: v for e, v in moved.items() if v is not None}
            keys = [name_key(t) for e in group for nm, t in new[e].items() if t != info.tokens[e][nm]]
            if len(set(keys)) != len(keys) or any(nk in run.taken or info.occurs(nk) for nk in keys):
                continue  # as every new name: none the document has, none given twice
            now, pending = _tokens_now(run, new), _pending(run, members=frozenset(new))
            pairs = {p for e in group for p in info.number_pairs.get(e, ())}
            if any(info.number_clash(p, now, pending) for p in sorted(pairs)):
                continue
            if excluded and attempt < NOVEL_TRIES and any(nk in excluded for nk in keys):
                first_fit = first_fit or (new, keys)
                continue
            chosen = new
            break
        if chosen is None and first_fit is not None:
            chosen, keys = first_fit
        run.taken.update(keys if chosen is not None else ())
        for e in group:
            run.tied[e] = chosen.get(e) if chosen is not None else None
            if chosen is not None:
                run.new_tokens[e] = chosen[e]  # what the text now says, for the number pairs of later entities
    new = run.tied.get(ei)
    if new is None or new == info.tokens[ei]:
        run.new_tokens.pop(ei, None)
        return keep(run, ei, KeptReason.NO_VALID_VALUE)
    plan = _rule_plan(info.tokens[ei], new)
    run.plan[ei] = plan
    names = [plan[nm].name if nm in plan else nm for nm in info.names[ei]]
    run.rows.append(Row(ei, "NUM", "num", None, None, None, None, info.names[ei], names,
                        value_rule=ValueRule.TIED_COUNT))


def _tokens_now(run: Run, trying: Mapping[int, dict[str, list[str]] | None]) -> Callable[[int, str], list[str]]:
    """(entity, name) -> the name's tokens as the run writes them now: ``trying``'s new tokens for
    the entities being tried (None: unchanged), then those settled, else the old ones."""
    info = run.info

    def tokens(ei: int, name: str) -> list[str]:
        new = trying[ei] if ei in trying else run.new_tokens.get(ei)
        return new[name] if new is not None and name in new else info.tokens[ei][name]
    return tokens


def _pending(run: Run, trying: int | None = None, members: frozenset[int] = frozenset()) -> Callable[[int], bool]:
    """Whether an entity is a NUM entity the run draws later than now (not ``trying`` nor one of the
    ``members`` of a tied group being tried, not yet in the rows or decided with its group, not kept for an
    overlap, no figure the text checks, which keeps its value), which checks its number pairs itself then."""
    info = run.info
    settled = {r.entity for r in run.rows}

    def pending(ei: int) -> bool:
        return (info.coarse[ei] == "NUM" and ei != trying and ei not in members and ei not in settled
                and ei not in info.overlap and ei not in run.tied
                and info.numbers.rule(ei) in (ValueRule.DRAWN, ValueRule.TIED_COUNT))
    return pending


def settle_times(run: Run, excluded: frozenset[tuple[str, ...]] = frozenset()) -> None:
    """Rename every TIME entity of the run with one document-level map of its years (rule 1 of the module
    docstring; ``year_map``: one shift, whose gaps between written years stretch where an age or interval
    follows them), then settle the TIME figures that follow the renamed dates (ages, intervals, fixed forms:
    :func:`settle_checked`). Among the attempts that clash with nothing and swap no dates, the first that
    leaves every derived figure a whole value the text can write (:func:`figure_score`) is used, waiting
    ``NOVEL_TRIES`` attempts for one that gives each figure a stretch spans a new value none of the training
    documents writes; ``excluded``: the training documents' names, whose years the shift avoids
    (``DocInfo.seen_shifts``). The last ``UNIFORM_TRIES`` attempts move the years by one shift, and the very
    last keeps months and days (``numtime.document_shift``'s ``calendar``): born 1 January, died 1 December of
    the next year, "aged 1" survives no cyclic month shift."""
    info = run.info
    todo = info.times
    if todo:
        seen = info.seen_shifts(excluded)
        best: tuple[tuple[int, int, int, int], dict[int, dict[str, list[str]] | None], set[int]] | None = None
        for attempt in range(NUMTIME_ATTEMPTS):
            offsets = info.year_plan.offsets(run.seed, info.title, attempt) \
                if attempt < NUMTIME_ATTEMPTS - UNIFORM_TRIES else ()
            lowest, highest = shift_range(info.floors, info.bounds, offsets) if offsets else info.shift_range
            # the first half of the attempts draw among the year shifts that leave the fewest names seen in
            # training; should those all clash, the second half among all
            seen_now = functools.partial(seen, offsets=offsets) if seen is not None and offsets else seen
            renamed = rename_times(todo, run.seed, info.title, attempt, years=info.time_years,
                                   span_ends=info.span_ends, lowest=lowest, highest=highest,
                                   seen=seen_now if attempt < NUMTIME_ATTEMPTS // 2 else None, offsets=offsets,
                                   span_starts=info.span_starts,
                                   # the last attempt keeps months and days: an age no cyclic month shift keeps
                                   calendar=attempt < NUMTIME_ATTEMPTS - 1)
            failed = time_failures(run, renamed)
            broken, missed = figure_score(info, renamed, failed, excluded, stretched=bool(offsets))
            score = (len(failed), swapped_dates(info, renamed, failed), broken, missed)
            if best is None or score < best[0]:
                best = (score, renamed, failed)
            if best[0][:3] == (0, 0, 0) and (best[0][3] == 0 or attempt + 1 >= NOVEL_TRIES):
                break
        assert best is not None
        _, renamed, failed = best
        if info.numbers.anchors:  # an interval in days or weeks the shift left not whole: its later date follows it
            _follow_intervals(run, renamed, failed)
        for ei in todo:
            new = renamed[ei]
            if new is None:  # no rule, or a century or period the document's years date, which stays with them
                keep(run, ei, KeptReason.CHECKED if info.time_years[0] and eras_only(todo[ei]) else KeptReason.NO_RULE)
            elif ei in failed:
                keep(run, ei, KeptReason.NO_VALID_VALUE)
            else:
                _rename_by_rule(run, ei, new, [name_key(p.tokens) for p in _rule_plan(todo[ei], new).values()])
    for ei, c in enumerate(info.coarse):
        if c == "TIME" and ei not in info.overlap and ei not in info.followers and info.numbers.settled_with_times(ei):
            settle_checked(run, ei)


def _follow_intervals(run: Run, renamed: dict[int, dict[str, list[str]] | None], failed: set[int]) -> None:
    """Rewrite the later date of each interval in days or weeks that ``renamed`` leaves without a whole span
    (``coherence.following_end``), where the new date is no name the document or the run has."""
    info = run.info

    def names_of(ei: int, new: bool) -> Mapping[str, Sequence[str]]:
        got = renamed.get(ei) if new and ei not in failed else None
        return got if got is not None else info.tokens[ei]
    for ei in sorted(info.numbers.anchors):
        follow = following_end(info.numbers, ei, info.tokens[ei], names_of)
        if follow is None or follow[0] not in info.times or follow[0] in failed or renamed.get(follow[0]) is None:
            continue
        end, names = follow
        keys = [name_key(t) for t in names.values()]
        if not any(k in run.taken or info.occurs(k) for k in keys):
            renamed[end] = names


def figure_score(info: DocInfo, renamed: Mapping[int, dict[str, list[str]] | None], failed: set[int],
                 excluded: frozenset[tuple[str, ...]] = frozenset(), stretched: bool = False) -> tuple[int, int]:
    """How an attempt of ``settle_times`` leaves the figures that follow the document's dates, as (broken,
    missed). Broken: the ages and intervals (``coherence``) it leaves without one whole value ("one week later"
    between two dates a cyclic day shift put ten days apart, unless its later date can follow it:
    ``coherence.following_end``; two pairs of dates a figure agrees with moved apart unequally), with a value
    its written form cannot hold ("twenty years" by one more) or past a life ("aged 112"), and the dates
    written after their weekday it moves to another weekday ("on Friday 20 February 1979", a Tuesday).
    Missed, where the years' gaps ``stretched``: the figures between stretched years that keep their value,
    and those whose new value a training document (``excluded``) or the document itself writes as a name
    ("aged 4" beside "4 January"). An attempt with none broken is preferred, then one with none missed."""
    numbers = info.numbers
    if not numbers.pairs and not numbers.anchors and not numbers.weekdays:
        return 0, 0

    def names_of(ei: int, new: bool) -> Mapping[str, Sequence[str]]:
        got = renamed.get(ei) if new and ei not in failed else None
        return got if got is not None else info.tokens[ei]
    broken = 0  # a weekday written before a date ("on Friday 1 August 2014") the renamed date falls off
    for ei, day in sorted(numbers.weekdays.items()):
        value = info.date(ei, {nm: list(t) for nm, t in names_of(ei, True).items()})
        broken += value is not None and weekday_of(value) != day
    missed = 0
    for ei in sorted(numbers.pairs.keys() | numbers.anchors.keys()):
        if ei in info.overlap or ei in info.followers:
            continue
        old = info.tokens[ei]
        moved = derived_change(numbers, ei, old, names_of)
        if moved is None:
            broken += following_end(numbers, ei, old, names_of) is None
            continue
        if not moved:
            missed += stretched and ei in numbers.pairs
            continue
        new = derive(numbers, ei, old, names_of)
        value = count_value(old)
        if new is None or (numbers.pairs[ei][0].age and value is not None and value + moved > HUMAN_SPAN):
            broken += 1
        elif any(k in excluded or info.occurs(k) for k in (name_key(t) for nm, t in new.items() if t != old[nm])):
            missed += 1  # a value the training documents write, or one the document writes elsewhere ("aged 4")
    return broken, missed


def swapped_dates(info: DocInfo, renamed: dict[int, dict[str, list[str]] | None], failed: set[int]) -> int:
    """How many pairs of the document's month-level dates (``DocInfo.month_dates``) the renaming puts
    in the other order; an entity that failed or was not renamed keeps its dates."""
    old: list[DateValue] = []
    new: list[DateValue] = []
    for ei, nm, before in info.month_dates:
        names = renamed.get(ei)
        after = date_value(names[nm]) if names is not None and ei not in failed and nm in names else before
        if after is not None:
            old.append(before)
            new.append(after)
    return sum(date_order(old[i], old[j]) != date_order(new[i], new[j])
               for i in range(len(old)) for j in range(i + 1, len(old)))


def time_failures(run: Run, renamed: dict[int, dict[str, list[str]] | None]) -> set[int]:
    """TIME entities whose new names clash; then, keeping those, entities that reverse a pair."""
    info = run.info
    # new name -> (old name, entity): two names (of one entity or two) may share a new value only
    # when they shared the old one (the same date written twice), which the shared shift keeps equal
    owner: dict[tuple[str, ...], tuple[tuple[str, ...], int]] = {}
    failed: set[int] = set()
    for ei, new in renamed.items():
        if new is None:
            continue
        pairs = [(name_key(info.tokens[ei][nm]), name_key(t)) for nm, t in new.items() if t != info.tokens[ei][nm]]
        if any(k in run.taken or info.occurs(k) for _, k in pairs):
            failed.add(ei)
        for old_key, k in pairs:
            first = owner.setdefault(k, (old_key, ei))
            if first[0] != old_key:
                failed.update((ei, first[1]))

    def value(e: int, year_of: DateValue | None = None) -> DateValue | None:
        new = renamed.get(e)
        return info.date(e, new if new is not None and e not in failed else None, year_of)

    def renamed_now(e: int) -> bool:
        return renamed.get(e) is not None and e not in failed

    def in_order(a: int, b: int) -> bool:  # a start without a year takes its end's ("April 16 to November 16 , 2012")
        old_end, new_end = info.date(b), value(b)
        return order_kept(info.date(a, year_of=old_end), old_end, value(a, new_end), new_end)

    while True:  # a kept entity keeps its old date, which its partner's new date must respect
        more = {b if b in renamed and b not in failed else a
                for a, b in info.order_pairs if not in_order(a, b)}
        # two numbers a few tokens apart stay different (and a range in order), against a NUM
        # neighbour's old value, which it keeps until settle_other checks it against these
        if info.number_pairs:  # most documents have none: no closures to build
            tokens = _tokens_now(run, {e: new for e, new in renamed.items() if renamed_now(e)})
            pending = _pending(run)
            more |= {p[2] if renamed_now(p[2]) else p[0]
                     for e in sorted(renamed) if renamed_now(e) for p in info.number_pairs.get(e, ())
                     if (renamed_now(p[0]) or renamed_now(p[2])) and info.number_clash(p, tokens, pending)}
        # a span's year and its short end ("1980 – 81") are renamed together or both kept
        more |= {e for end, start in info.span_ends.items() if renamed_now(end) != renamed_now(start)
                 for e in (end, start) if renamed_now(e)}
        more -= failed
        if not more:
            return failed
        failed |= more


def _accept(run: Run, ei: int, draws: Draws, cand: str, mapping: dict[str, NewName], keys: list[tuple[str, ...]],
            written: frozenset[str], adjectival: Sequence[str], person: PersonGender) -> None:
    """Rename entity ``ei`` of ``run`` to candidate ``cand`` (names ``mapping``, clash keys ``keys``)."""
    info, q = run.info, run.info.qids[ei]
    slot = draws.slots[run.slots[ei]]
    types = draws.auditor.types
    own_types, cand_types = types.get(q, set()), types.get(cand, frozenset())
    originals = info.names[ei]
    if info.coarse[ei] in ("LOC", "ORG"):  # "as part of the United Kingdom" never reads "as part of Mongol Empire"
        mapping = {nm: NewName(text, (nm.split()[0], *nn.tokens)) if (text := keep_the(nm, nn.name, info.coarse[ei]))
                   else nn for nm, nn in mapping.items()}
    run.plan[ei] = mapping
    run.taken.update(keys)
    run.new_items[ei] = cand
    run.rows.append(Row(ei, info.coarse[ei], "linked", None, q, slot.fine_type, cand,
                        originals, [mapping[nm].name for nm in originals],
                        tuple(adjectival), p31_jaccard(own_types, cand_types),
                        drawn_by=(slot.fine_type, *sorted((own_types & cand_types) - {slot.fine_type})),
                        catch_all=tuple(sorted(c for c in own_types if is_catch_all(c))),
                        head_noun=next((h for nm in originals if (h := shared_head(nm, mapping[nm].name))), None),
                        adjectival=tuple(mapping[nm].name for nm in adjectival),
                        written=tuple(mapping[nm].name for nm in originals if nm in written),
                        second_draw=run.window >= MAX_WINDOWS,
                        gender=person.gender, gender_from=person.source,
                        new_gender=pronoun_class(draws.genders.get(cand)) if person.source else None))


class EntityFacts(NamedTuple):
    """What every candidate of a linked entity's slot is checked against (``entity_facts``)."""

    required: list[tuple[str, str]]  # the audit checks a candidate must pass
    own: tuple[Demonym, ...]  # the P1549 rows of the entity's item
    own_types: set[str] | frozenset[str]  # the P31 classes of the entity's item
    originals: list[str]  # the entity's distinct names
    tokens: dict[str, list[str]]  # each name's tokens as the document writes it
    near: dict[str, frozenset[str]]  # the words beside each name's mentions (``DocInfo.near_words``)
    heads: frozenset[str]  # the names written "the X" as a noun phrase of their own
    adjectival: list[str]  # the names that take adjectival forms
    need_forms: int  # adjectival forms a candidate needs
    person: PersonGender  # a person's gender and its source (UNKNOWN otherwise)
    want_head: str | None  # a head noun a new name should share
    spelled: dict[str, str]  # names that spell another, and that other
    names_now: list[str]  # the names less those spellings
    shorts: dict[str, ShortName]  # the short names the second draw writes from their full names
    paired: list[str]  # the names paired with a candidate's names
    written_by_rule: frozenset[str]  # names whose new names no item gives
    common: bool  # a common noun, written wholly in lower case
    regnal: bool | None  # a person with a monarch's name (None: not a person)
    kinds: Kinds = ()  # the kinds nouns beside its mentions ask of a new item (``rename.kinds``)
    roles: frozenset[tuple[str, str]] = frozenset()  # its (relation, role) pairs (``rename.plausible``), when asked
    titled: frozenset[str] = frozenset()  # a person's one-word names written after a title ("General Lee")
    plurals: frozenset[str] = frozenset()  # demonyms that are their own plural, used so ("Many Japanese")


def entity_facts(info: DocInfo, ei: int, slot: Slot, second: bool, draws: Draws) -> EntityFacts:
    """The facts of entity ``ei`` of ``info`` that its every candidate is checked against. They depend on the
    document and the index, never on the seed, so ``settle_linked`` works them out once per entity and draw
    (first or second) and reuses them for each seed and each window."""
    q = info.qids[ei]
    assert q is not None
    key = (info.order, ei)
    if key not in draws.required:
        required = draws.auditor.required(q, draws.auditor.entity_checks(info.doc, ei))
        if (f := info.leaders.get(ei)) is not None and (fq := info.qids[f]) is not None:
            # the entity that follows this one takes the same item: its checks are this draw's too
            required = sorted(set(required) | set(draws.auditor.required(fq, draws.auditor.entity_checks(info.doc, f))))
        draws.required[key] = required
    required = draws.required[key]
    own = draws.demonyms.get(q, ())
    types = draws.auditor.types
    own_types = types.get(q, set())
    originals, tokens, near, heads = info.names[ei], info.tokens[ei], info.near_words[ei], info.the_heads[ei]
    # adjectival names take adjectival forms only ("Barbadian" never "Hungarians" nor "Vili people")
    adjectival = adjectival_names(originals, own, draws.known if info.coarse[ei] != "PER" else frozenset(),
                                  info.written_adjectives[ei], plurals=info.coarse[ei] in PEOPLE_TYPES)
    # the singular adjectival names need as many adjectival forms; plural ones ("Germans", "Many Japanese")
    # plural forms
    plurals = info.plural_uses[ei]
    need_forms = sum(not looks_plural(nm) and nm not in plurals for nm in adjectival)
    # a person keeps its gender: the document's, else its item's P21, else its pronouns' (``rename.gender``)
    person = (person_gender(info.genders[ei].gender if ei in info.genders else None, draws.genders.get(q),
                            info.context.get(ei), originals)
              if info.coarse[ei] == "PER" else UNKNOWN)
    # a name whose head noun is a kind word of the index that its fine type does not say ("Profile Records",
    # a record label) prefers, among its first HEAD_WINDOWS windows, a new name with the same head ("Warp
    # Records", not "Guinness Book of Records"); where the type says it ("United States", a sovereign state)
    # the head is part of the name, and preferring it would give every "United States" the one "State of Qatar"
    want_head = (next((h for nm in originals if (h := name_head(nm)) is not None and h in draws.kind_words
                       and h != draws.class_kinds.get(slot.fine_type)), None)
                 if info.coarse[ei] in HEAD_TYPES else None)
    # the second draw: the short names are left out of the pairing and written from their full names' new ones
    spelled = spellings(originals, adjectival)  # the names that spell another ("U.S." of "US") take its new name
    if modifiers := modifier_spellings(originals, adjectival):  # "the U.S. Representative" as "American" is
        spelled = {**spelled, **modifiers}
        adjectival = [nm for nm in adjectival if nm not in modifiers]
        need_forms = sum(not looks_plural(nm) and nm not in plurals for nm in adjectival)
    names_now = [nm for nm in originals if nm not in spelled] if spelled else originals
    shorts = short_names(names_now, info.coarse[ei], adjectival) if second else {}
    paired = [nm for nm in names_now if nm not in shorts] if shorts else names_now
    # a person's peerage beside a name of its own is written from the new full name ("1st Viscount Monroe")
    peerages = frozenset(peerage_names(paired)) if info.coarse[ei] == "PER" else frozenset()
    if peerages:
        paired = [nm for nm in paired if nm not in peerages]
    written_by_rule = frozenset(spelled) | frozenset(shorts) | peerages  # old names whose new names no item gives
    # a thing written in lower case is named by a common noun ("intelligent design", "flamenco", "due east"):
    # it takes one too ("salsa" -> "zarzuela"), never a proper name ("March of the Volunteers", "due Samarqand
    # Region"); with none among the candidates it is kept; and a thing with a proper name takes no common noun
    # ("Standing in the Dark" never "cute culture", "Georgia" never "southern")
    common = info.coarse[ei] != "PER" and all(written_lower(nm) for nm in originals)
    # no one but a person named as a monarch takes a monarch's name ("directed by Frederick I"), and such a
    # person prefers one among all its draws ("Charles IV of Spain" -> "Frederick II of Spain"; ``rename.regnal``)
    regnal = (any_regnal(originals) or ei in info.sovereigns) if info.coarse[ei] == "PER" else None
    # a person's one-word names written after a title that goes with a surname ("General Lee"): surnames
    titled = titled_names(info.doc["sents"], info.doc["vertexSet"][ei]) if info.coarse[ei] == "PER" else frozenset()
    # "the 1987 science fiction movie The Hidden": a new name of a film (``rename.kinds``)
    kinds = (entity_kinds(info.kind_nouns[ei], info.coarse[ei], draws.classes_up(q), draws.nouns,
                          adjectival=bool(adjectival)) if draws.nouns is not None else ())
    return EntityFacts(required, own, own_types, originals, tokens, near, heads, adjectival, need_forms,
                       person, want_head, spelled, names_now, shorts, paired, written_by_rule, common, regnal, kinds,
                       entity_roles(info.doc.get("labels") or [], ei) if draws.plausible != "off" else frozenset(),
                       titled, plurals)


def settle_linked(run: Run, ei: int, draws: Draws) -> Request | None:
    """A linked entity: the first fitting candidate of its windows, or the window still missing."""
    info = run.info
    # the first slot's windows are 0..MAX_WINDOWS-1 of run.window, the second slot's (if any) the next ones
    first_si = run.slots[ei]
    second = run.window >= MAX_WINDOWS
    si = run.second[ei] if second else first_si
    w0 = MAX_WINDOWS if second else 0
    slot = draws.slots[si]
    total = draws.total(slot)
    facts = draws.facts.get((info.order, ei, second))
    if facts is None:
        facts = draws.facts[(info.order, ei, second)] = entity_facts(info, ei, slot, second, draws)
    own_types, adjectival, need_forms, person = facts.own_types, facts.adjectival, facts.need_forms, facts.person
    common, regnal = facts.common, facts.regnal
    if ei in info.not_persons:  # a place or an organisation annotated PER: no person's name reads right
        keep(run, ei, KeptReason.NOT_A_PERSON, person)
        return None
    if ei in info.text_languages and (adjectival or LANGUAGE in draws.classes_up(info.qids[ei] or "")):
        keep(run, ei, KeptReason.TEXT_LANGUAGE, person)  # "( Italian : Società Dante Alighieri )"
        return None
    placing = draws.places and ei in info.places.placed  # a place of a pair: it searches every window to stay inside
    if (place := info.adjective_of.get(ei)) is not None:  # an adjective of a place (``rename.adjective_of``)
        if ei in run.carried:  # the place drew for both: the forms its new item gave
            take_forms(run, ei, place)
            return None
        if place not in run.slots or (_settled(run, place) and place not in run.new_items):
            keep(run, ei, KeptReason.REFERENT, person)  # "American" stays with "United States"
            return None
    # a place with adjectives still to settle draws for them too: it prefers a candidate with their forms
    adj = tuple(a for a in info.adjectives.get(ei, ()) if a in run.slots and not _settled(run, a))
    joined = with_adjectives(info, ei, facts, adj, second, draws) if adj else None
    types = draws.auditor.types
    if (lead := info.same_item.get(ei)) is not None and ei not in run.tried_same:
        run.tried_same.add(ei)
        # an item the document names twice, as two entities ("United States" and "the United States" of
        # one article, linked to one item): the item the first became, if it fits this one too, so the
        # renamed text names one country where the original did; kept when the first was kept, for
        # the same reason ("Battle of Kashii" kept, its "battle of Kashii" never "Battle of Sattelberg")
        if lead in run.new_items:
            # the names the entities of this item took before it (the first and the ones that followed it)
            allowed = frozenset(k for e in run.plan if e == lead or info.same_item.get(e) == lead
                                for nn in run.plan[e].values() for k in clash_keys(nn.name))
            if (fit := _fit(run, ei, draws, facts, run.new_items[lead], allowed, lead)) is not None:
                _accept(run, ei, draws, run.new_items[lead], *fit[:3], adjectival, person)
                return None
        else:  # settled before this one (a lower index), and not renamed: kept
            keep(run, ei, KeptReason.SAME_ITEM, person)
            return None
    if draws.places and ei not in run.tried_places and ei in info.places.inners:
        run.tried_places.add(ei)
        # an outer place whose inner places are settled: an item that contains where they went, before any
        # window ("Solingen , Germany" -> "Groton , United States"); its own item containing them and none
        # other fitting, it keeps its names ("Düsseldorf , Germany")
        cands, own = containing(run, ei, draws)
        for cand in cands:
            fit = (_fit(run, ei, draws, joined, cand) if joined is not None else None) or _fit(run, ei, draws, facts, cand)
            if fit is not None:
                _accept_joined(run, ei, draws, cand, *fit[:3], adjectival, person, adj)
                return None
        if own:
            keep(run, ei, KeptReason.PLACE, person)
            return None
    while run.window - w0 < MAX_WINDOWS and window_bounds(run.window - w0)[0] < total:
        window = draws.windows.get((si, run.window - w0))
        if window is None:
            return (si, run.window - w0)
        if need_forms:  # too few adjectival forms: pair_item_names would say NO_DEMONYM (dropped before the sort)
            need, counts = need_forms, draws.form_counts  # the memo read inline: every candidate passes here
            window = [c for c in window if (counts[c] if c in counts else draws.form_count(c)) >= need]
        if common:  # no lower-case name to give: passed over before the sort and the pairing, which cost more
            window = [c for c in window if draws.has_lower_name(c)]
        if regnal and ei in run.fallback:  # a first fit is held, which only a monarch's name would displace
            window = [c for c in window if draws.has_regnal_name(c)]
        # a held first fit gives way only to a place that keeps the places inside each other: the others are
        # passed over before the costlier checks (the run does not change while the entity reads its windows)
        in_place = placed_test(run, ei, draws) if placing else None
        # a held first fit inside an outer place's own item gives way only to one it could become
        first_fit = run.fallback.get(ei) if in_place is not None else None
        need = PLACED if first_fit is not None and in_place(first_fit[0]) == PLACED_IN_OWN else PLACED_IN_OWN
        if in_place is not None and ei in run.fallback:
            window = [c for c in window if in_place(c) >= need]
        for cand in by_p31_overlap(window, own_types, types):  # most shared P31 first (a stable sort)
            if regnal and ei in run.fallback and not draws.has_regnal_name(cand):
                continue  # the first fit was found earlier in this window (checked before pairing)
            if in_place is not None and ei in run.fallback and in_place(cand) < need:
                continue  # likewise, once a first fit of this window is held
            if joined is not None:  # a fit with forms for the adjectives first; one without is held only
                fit = _fit(run, ei, draws, joined, cand)
                if fit is None or not fit[3]:
                    held = run.fallback.get(ei)
                    if fit is not None and (held is None or not _joins(held[1], adj, info)):
                        run.fallback[ei] = (cand, *fit[:3])  # a first fit with the forms displaces one without
                    elif held is None and (plain := _fit(run, ei, draws, facts, cand)) is not None:
                        run.fallback[ei] = (cand, *plain[:3])  # asked only while nothing is held
                    continue
            else:
                fit = _fit(run, ei, draws, facts, cand)
            if fit is None:
                continue
            mapping, keys, written, preferred = fit
            if not preferred:
                if in_place is not None and need == PLACED_IN_OWN and in_place(cand) == PLACED_IN_OWN:
                    run.fallback[ei] = (cand, mapping, keys, written)  # displaces a first fit placed nowhere
                    need = PLACED
                else:
                    run.fallback.setdefault(ei, (cand, mapping, keys, written))
                continue
            run.fallback.pop(ei, None)  # a first fit kept aside for this entity is not needed any more
            _accept_joined(run, ei, draws, cand, mapping, keys, written, adjectival, person, adj)
            return None
        run.window += 1
        # the head is looked for among the first draws only, so seeds keep drawing different names; a
        # monarch's name in every window, since few of the drawn persons are monarchs
        if ei in run.fallback and run.window - w0 >= HEAD_WINDOWS and not regnal and not placing and joined is None:
            break
    if ei in run.fallback and ei in info.sovereigns and not any_regnal(
            nn.name for nn in run.fallback[ei][1].values()):
        del run.fallback[ei]  # "Emperor Xuanzong" takes a monarch's name or none: never "Emperor Lino S. Cayetano"
        keep(run, ei, KeptReason.NO_CANDIDATE, person)
        return None
    if ei in run.fallback:  # no candidate shares the head noun: the first that fitted
        _accept_joined(run, ei, draws, *run.fallback.pop(ei), adjectival, person, adj)
        return None
    # an entity with demonym names whose drawn candidates (some) had no demonym: kept for want of one
    # (the first slot's draws decide, as they do for an entity without a second slot)
    drawn = [c for w in range(MAX_WINDOWS if second else run.window) for c in draws.windows.get((first_si, w), ())]
    lacking = bool(drawn and adjectival) and not any(
        draws.window_has_forms((first_si, w)) for w in range(MAX_WINDOWS if second else run.window))
    # a person some of whose drawn candidates (in any window) had another gender: kept for want of one
    other_gender = not lacking and (ei in run.read_other or any(
        not fits(person, draws.genders.get(c), draws.knows_genders) for c in drawn))
    reason = (KeptReason.NO_DEMONYM if lacking else KeptReason.NO_GENDER if other_gender
              else KeptReason.KIND_NOUN if ei in run.kind_missed else KeptReason.NO_CANDIDATE)
    if reason is KeptReason.NO_CANDIDATE and not second and ei in run.second:
        # every item with enough names failed, not for want of a demonym or a gender, which fewer names would
        # not give: read the items with fewer, whose short names the entity writes itself
        run.window = MAX_WINDOWS
        return settle_linked(run, ei, draws)
    keep(run, ei, reason, person)
    return None


def _fit(run: Run, ei: int, draws: Draws, facts: EntityFacts, cand: str,
         allowed: frozenset[tuple[str, ...]] = frozenset(), lead: int | None = None) -> tuple[
             dict[str, NewName], list[tuple[str, ...]], frozenset[str], bool] | None:
    """Whether candidate ``cand`` may rename entity ``ei`` of ``run``: None when a check fails, else its names,
    their clash keys, the old names whose new names a rule wrote, and whether it is a preferred fit (one that
    shares the wanted head noun, reads as more than a bare name and gives a monarch's name where one is
    wanted) rather than a first fit to fall back on. ``allowed`` are clash keys another entity of the document
    has taken that this one may take too; ``lead`` is the earlier entity of its item whose new item ``cand``
    is (``DocInfo.same_item``), whose full names give a person's surnames as its own would ("Thorborg"
    beside "Kerstin Thorborg" becomes "Smith" of "Anna Smith")."""
    info = run.info
    taken, occurs = run.taken, info.occurs
    places_of = info.places.placed
    (required, own, own_types, originals, tokens, near, heads, adjectival, need_forms, person, want_head,
     spelled, names_now, shorts, paired, written_by_rule, common, regnal, kinds, roles, titled, plurals) = facts
    types, anc = draws.auditor.types, draws.auditor.anc
    names = draws.names.get(cand)
    if names is None:
        return None
    if not fits(person, draws.genders.get(cand), draws.knows_genders):
        return None  # "her eldest son Barbara Stanwyck"
    if kinds and not all(of_kind(draws.classes_up(cand), k) for _, k in kinds):
        run.kind_missed.add(ei)
        return None  # "the 1987 science fiction movie Shortland Street", a television soap
    if roles and draws.plausible == "filter" and not plausible(roles, draws.roles.get(cand, frozenset())):
        return None
    if shorts and not may_follow(shorts, (names.label, *names.aliases)):
        return None  # no name of it could give the short names ("Lake Baikal" for "Yukon" of "Yukon River")
    adjectives = draws.adjective_named.get(cand, frozenset()) if info.coarse[ei] != "PER" else frozenset()
    kinds = adjectival_kinds(types.get(cand, ()), anc) if adjectival or adjectives else frozenset()
    mapping = pair_item_names(paired, own, names.label, names.aliases, draws.demonyms.get(cand, ()), tokens,
                              adjectival=adjectival, kinds=kinds, adjectives=adjectives, plurals=plurals)
    if not isinstance(mapping, dict):  # None (too few names) or NO_DEMONYM
        return None
    if shorts and (mapping := follow(shorts, mapping, info.coarse[ei])) is None:
        return None  # "Lake Baikal" gives no short name for "Yukon" of "Yukon River"
    # a common noun takes only common nouns, a proper name none: "cute culture" never "Steam" nor "1984",
    # "Standing in the Dark" never "cute culture"
    if info.coarse[ei] != "PER" and any(written_lower(nn.name) != common for nn in mapping.values()):
        return None
    if draws.common_words and any(new_name_reads_common(nm, nn.name, draws.common_words, info.coarse[ei])
                                  for nm, nn in mapping.items() if nm not in adjectival):
        return None  # "the Marvel comic book" never "the Rare comic book", "Zamfara State" never "Delta Amacuro states"
    if any(bare_compass(nn.name) and not bare_compass(nm) for nm, nn in mapping.items()):
        return None  # "Saxony" never "Eastern" ("a tramway in Eastern , Ghana")
    if (numbers := info.verb_numbers[ei]) and any(breaks_number(nm, nn.name, numbers.get(nm)) for nm, nn in mapping.items()):
        return None  # "Tasmania is an island" never "Faroe Islands is an island"
    if regnal is False and any_regnal(nn.name for nn in mapping.values()):
        return None  # "Walt Disney" never "Ptolemaic Queen Cleopatra VII"
    if any(same_by_form(nm, nn.name) for nn in mapping.values() for nm in originals):
        return None  # "United Nations" never "UN": the corpus KB may hold a thing's short name as an item
    if regnal is not None and any(opens_lower(nn.name) for nn in mapping.values()) and not any(
            opens_lower(nm) for nm in originals):
        return None  # "Bahiyyih Nakhjavani" never "née Alexander"
    written = written_by_rule
    paired_names = mapping
    if info.coarse[ei] == "PER":  # "Gannibal" of "Abram Petrovich Gannibal" -> "LaMarr" of "Phil LaMarr"
        if lead is None:
            mapping = surnames_follow(names_now, mapping)
        else:  # the earlier entity's full names and their new names count as this one's
            both = surnames_follow([*info.names[lead], *names_now], {**run.plan[lead], **mapping})
            mapping = {nm: both[nm] for nm in mapping}
        # a full name stays one, a surname after a title a surname, a peerage a peerage ("1st Viscount Monroe")
        formed = keep_forms(names_now, mapping, titled, names.label, run.plan.get(lead) if lead is not None else None)
        if formed is None:
            return None  # "Its founding dean was Billy", "Confederate general Matthew"
        mapping, wrote = formed
        if surnamed := frozenset(nm for nm, nn in mapping.items() if nn != paired_names.get(nm)) | wrote:
            written = written | surnamed
    if spelled:  # after the surname rule, so "Drossinis’" reads as "Drossinis" does
        mapping = {**mapping, **{nm: spell_like(nm, of, mapping[of]) for nm, of in spelled.items()}}
    # the names a reader reads a gender from: the full names paired (a surname after a title is written from
    # one: "Smith" of "Anna Smith"), and the names as written but those a rule wrote (surnames)
    if person.gender is not None and reads_against(person, [
            *(nn.name for nn in paired_names.values() if len(nn.tokens) > 1),
            *(nn.name for nm, nn in mapping.items() if nm not in written and nm not in titled
              and not any(o != nm and o.split()[-1] == nm for o in originals))]):
        run.read_other.add(ei)
        return None  # "Kyle Richards ... her": P21 female, but a reader takes the name for a man's
    # the written name, tokenisation-proof, with and without a leading "the"
    keys = [k for nn in mapping.values() for k in clash_keys(nn.name)]
    if any((k in taken and k not in allowed) or occurs(k) for k in keys):
        return None  # another entity's new name, or a name the document has (the same item's own excepted)
    if near and any(name_ends(nn.tokens) & near[nm] for nm, nn in mapping.items() if nm in near):
        return None  # "the province of Chubut Province": the name doubles a word beside a mention
    if heads and any(bare_country(nn.name) or reads_bare(nn.name, info.coarse[ei]) for nm, nn in mapping.items()
                     if nm in heads):
        return None  # "in the US from" never reads "in the Kuwait from", "The Marine Band has" never "The Filter has"
    if heads and any(len(nn.tokens) == 1 for nm, nn in mapping.items() if nm in heads) and \
            LANGUAGE in draws.classes_up(cand):
        return None  # "in the Muscogian Creek Language ." never "in the Catalan .": a language's one word goes bare
    if draws.eval_names and any(f in draws.eval_names for nn in mapping.values() for f in folded_forms(nn.name)):
        return None  # a benchmark item has this name: training twins must not use it
    if draws.excluded and any(k in draws.excluded for k in keys):
        return None  # a model trained on the excluded documents has seen this name
    failed = draws.auditor.first_failure(cand, required)
    if failed is not None:
        draws.auditor.reject(failed[0])
        return None
    if (want_head is not None and not any(name_head(nn.name) == want_head for nn in mapping.values())) or (
            regnal and not any_regnal(nn.name for nn in mapping.values())) or (
            roles and draws.plausible == "prefer" and not plausible(roles, draws.roles.get(cand, frozenset()))) or (
            heads and any(nn.name in draws.bare for nm, nn in mapping.items() if nm in heads)) or (
            draws.places and ei in places_of and not placed(run, ei, draws, cand)) or (
            ei in info.led_runs and not _builders_follow(info, ei, mapping)):
        # the first fit, should no candidate of the first windows share the head noun or give a monarch's
        # name for one, or (``--plausible prefer``) have played one of the entity's roles, or (for a mention
        # written "the X" as a noun phrase) be a name the documents write without "the": "by the City of
        # Baltimore to the east" reads "by the Graz to the east" only where no candidate of those windows
        # reads right after "the"; nor give a name that a name built on this one can take ("Jim Crow
        # discriminatory laws" takes no "Secretariat of the Lok Sabha", and would keep both names)
        return mapping, keys, written, False
    return mapping, keys, written, True


def _builders_follow(info: DocInfo, ei: int, mapping: Mapping[str, NewName]) -> bool:
    """Whether every name built on entity ``ei``'s names (``DocInfo.led_runs``) can take its new names."""
    return all(derive_built_on(nm, info.tokens[b][nm], [r], {ei: mapping}, person=info.coarse[b] == "PER")
               is not None for b, nm, r in info.led_runs[ei] if r.name in mapping)


def with_adjectives(info: DocInfo, ei: int, facts: EntityFacts, adj: tuple[int, ...], second: bool,
                    draws: Draws) -> EntityFacts | None:
    """The facts of place ``ei`` with the names of its adjectives ``adj`` paired too, as adjectival names
    (``rename.adjective_of``): a candidate that fits them gives every one of them an adjectival form; a name
    two of them share (a MISC "Dutch" and a LOC "Dutch") is paired once. None when the place has one of their
    names itself."""
    key = (info.order, ei, second, adj)
    if key in draws.joined:
        return draws.joined[key]
    names = list(dict.fromkeys(nm for a in adj for nm in info.names[a]))
    got = None
    if not set(names) & set(facts.originals):
        plurals = facts.plurals.union(*(info.plural_uses[a] for a in adj))
        got = facts._replace(
            originals=[*facts.originals, *names], paired=[*facts.paired, *names],
            tokens={**facts.tokens, **{nm: info.tokens[a][nm] for a in adj for nm in info.names[a]}},
            near={**facts.near, **{nm: w for a in adj for nm, w in info.near_words[a].items()}},
            adjectival=[*facts.adjectival, *names], plurals=plurals,
            need_forms=facts.need_forms + sum(not looks_plural(nm) and nm not in plurals for nm in names))
    draws.joined[key] = got
    return got


def _joins(mapping: Mapping[str, NewName], adj: Sequence[int], info: DocInfo) -> bool:
    """Whether a place's fit ``mapping`` gives its adjectives ``adj`` their forms too."""
    return bool(adj) and all(nm in mapping for a in adj for nm in info.names[a])


def _accept_joined(run: Run, ei: int, draws: Draws, cand: str, mapping: dict[str, NewName], keys: list[tuple[str, ...]],
                   written: frozenset[str], adjectival: Sequence[str], person: PersonGender, adj: Sequence[int]) -> None:
    """``_accept`` for a place whose fit may give its adjectives ``adj`` their forms: those are carried to
    them (``Run.carried``), written when the run reaches them (``take_forms``)."""
    if _joins(mapping, adj, run.info):
        for a in adj:
            run.carried[a] = {nm: mapping[nm] for nm in run.info.names[a]}
        own = set(run.info.names[ei])
        mapping = {nm: nn for nm, nn in mapping.items() if nm in own}
    _accept(run, ei, draws, cand, mapping, keys, written, adjectival, person)


def take_forms(run: Run, ei: int, place: int) -> None:
    """Adjective ``ei`` takes the adjectival forms its place's draw gave it (``derived``, the place in
    ``built_on``): "American" of "United States" -> "Qatari" of "State of Qatar"."""
    info = run.info
    mapping = run.carried.pop(ei)
    run.plan[ei] = mapping
    run.new_tokens[ei] = {nm: list(nn.tokens) for nm, nn in mapping.items()}
    new = [mapping[nm].name for nm in info.names[ei]]
    run.rows.append(Row(ei, info.coarse[ei], "derived", None, info.qids[ei], info.fine_type(ei), None, info.names[ei],
                        new, adjectival=tuple(new), built_on=(place,)))


# ---------------------------------------------------------------------------- the driver (queries the index)
class Renamer:
    """Settles the runs of chunk after chunk of documents against one index.

    Per chunk: the first window of every slot in one query, then rounds in which every unfinished
    run advances and the windows they lack are fetched together. The auditor (its constraint
    memo and per-relation counts) lives across chunks; candidate windows and names live for one.
    """

    def __init__(self, con: Any, auditor: Auditor, pool: str, *, cache_dir: Any = None,
                 fingerprint: str | None = None, excluded: frozenset[tuple[str, ...]] = frozenset(),
                 stored_tokens: bool = False, popularity: str | None = None, bare: frozenset[str] = frozenset(),
                 common_words: frozenset[str] = frozenset()) -> None:
        self.con = con
        self.popularity = popularity  # draw only from this popularity bin of each class (``generate --popularity``)
        self.auditor = auditor
        self.pool = pool
        self.cache_dir = cache_dir
        self.fingerprint = fingerprint
        self.excluded = excluded  # names no new name may be (``novelty.excluded_names``)
        self.bare = bare  # names written without "the" (``articles.written_bare``), never a "the X" head's new name
        self.common_words = common_words  # words written in lower case: no new name reads as one (``common_words``)
        self.cache_used: str | None = None  # how the first chunk got the candidate numbering
        self.has_demonyms = knows_demonyms(con)  # False: no P1549 rows to fetch for entities or candidates
        self.has_genders = knows_genders(con)  # False: no P21 rows, so no candidate's gender is known
        # True: the index's name_tokens table holds tokenize's tokens of every name that needs spaCy
        # (same tokenizer version), so drawn names are tokenised from it and spaCy is never loaded
        self.stored_tokens = stored_tokens
        self.class_kinds = class_kinds(con)  # class -> the kind word its label names
        self.nouns = NounClasses(con, self.class_kinds)  # the classes of the kind nouns beside mentions

    def rename(self, infos: Sequence[DocInfo], seeds: Sequence[int], twins: bool, bar: Any = None,
               lap: Callable[[str], None] | None = None) -> list[Run]:
        """The settled runs of ``infos`` (document order, then seed).

        ``bar`` is a tqdm bar (or None); ``lap(stage)`` is called after the candidate tables
        ("candidate_tables (built|read|memory)", as the first chunk got them) and after the draws
        ("draw_and_rename"), for the step's timings.
        """
        own: dict[str, tuple[Demonym, ...]] = {}
        known: frozenset[str] = frozenset()
        if self.has_demonyms:  # the entities' own items' demonyms, and the demonyms among their names
            own = dict(fetch_demonyms(self.con, {q for i in infos for q in i.qids if q is not None}))
            # (and the singulars of plural names: "Americans" is a people where "American" is a demonym)
            names = {nm for i in infos for ei, c in enumerate(i.coarse) if c in ("ORG", "LOC", "MISC")
                     for nm in i.names[ei]}
            known = known_demonyms(self.con, names | {s for nm in names if (s := singular_of(nm)) is not None})

        def adjectival(info: DocInfo, ei: int) -> Sequence[str]:
            q = info.qids[ei]
            return adjectival_names(info.names[ei], own.get(q, ()) if q is not None else (),
                                    known if info.coarse[ei] != "PER" else frozenset(),
                                    info.written_adjectives[ei], plurals=info.coarse[ei] in PEOPLE_TYPES)

        for info in infos if self.has_demonyms else ():
            info.set_adjectives(own)  # "American" beside "United States" (``rename.adjective_of``)
        runs, slots = plan_runs(infos, seeds, self.pool, twins, adjectival if self.has_demonyms else None)
        source = CandidateSource(self.con, slots, cache_dir=self.cache_dir, fingerprint=self.fingerprint,
                                 popularity=self.popularity)
        self.cache_used = self.cache_used or source.cache_used
        draws = Draws(slots, source.total, self.auditor, excluded=self.excluded, knows_genders=self.has_genders,
                      class_kinds=self.class_kinds, nouns=self.nouns, plausible=PLAUSIBLE, bare=self.bare,
                      common_words=self.common_words, places=self.popularity is None)
        self.nouns.prepare(kn for i in infos for found in i.kind_nouns for kn in found)
        if self.has_genders:
            draws.genders.update(fetch_genders(self.con, {s.qid for s in slots}))  # the entities' own items
        if self.has_demonyms:
            draws.demonyms.update({q: own[q] for q in {s.qid for s in slots} if q in own})
            draws.known = known
        self.auditor.prepare(sorted({q for i in infos for q in i.qids if q is not None}))
        if draws.places:  # where the places of the documents lie, and those places, as candidates of outer places
            placed = sorted({q for i in infos for ei in i.places.placed if (q := i.qids[ei]) is not None})
            draws.containers.update(fetch_containers(self.con, placed))
            draws.asked_places.update(placed)
            self._prepare(draws, sorted({c for q in placed for c in draws.containers.get(q, ())}))
        if lap is not None:
            lap(f"candidate_tables ({self.cache_used})")
        self._fetch(source, draws, [(si, 0) for run in runs for si in run.slots.values()])
        active = runs
        while active:
            requests: list[Request] = []
            still: list[Run] = []
            for run in active:
                req = advance(run, draws)
                if req is None:
                    if bar is not None:
                        bar.update(1)
                else:
                    requests.append(req)
                    still.append(run)
            if requests:
                self._fetch(source, draws, requests)
            active = still
        if lap is not None:
            lap("draw_and_rename")
        for run in runs:  # one row per entity: the places' waiting and the builders must never settle one twice
            if len(run.rows) != len({r.entity for r in run.rows}):
                raise RuntimeError(f"{run.title}: an entity was settled twice; this is a bug of envbench's "
                                   "renaming engine, please report it with this document")
        return runs

    def _fetch(self, source: CandidateSource, draws: Draws, requests: list[Request]) -> None:
        # a slot that needs a second window is likely a hard one: fetch all its remaining windows
        # at once, so a document costs at most one extra round per hard entity
        wanted = [(si, v) for si, w in requests for v in ([w] if w == 0 else range(w, MAX_WINDOWS))]
        got = source.windows(wanted)
        drawn = {q for lst in got.values() for q in lst}
        new_qids = sorted(drawn - draws.names.keys())
        if draws.places:  # the places the candidates lie in are candidates of the outer places that follow them
            asked = sorted(drawn - draws.asked_places)
            draws.containers.update(fetch_containers(self.con, asked))
            draws.asked_places.update(asked)
            new_qids = sorted({*new_qids, *(c for q in asked for c in draws.containers.get(q, ()))}
                              - draws.names.keys())
        self._prepare(draws, new_qids)
        draws.windows.update(got)

    def _prepare(self, draws: Draws, new_qids: list[str]) -> None:
        """Fetch what the checks read of items not fetched before: names, roles, genders, demonyms, audit rows."""
        new_qids = [q for q in new_qids if q not in draws.names]
        if not new_qids:
            return
        if self.stored_tokens:  # the drawn names that are not plain are tokenised from the index's rows
            fetched, stored = item_names_and_tokens(self.con, new_qids)
            remember_tokens(stored)
        else:
            fetched = item_names(self.con, new_qids)
        draws.names.update(fetched)
        if draws.plausible != "off":
            draws.roles.update(item_roles(self.con, new_qids))
        if self.has_genders:
            draws.genders.update(fetch_genders(self.con, fetched))
        if self.has_demonyms:
            draws.demonyms.update(fetch_demonyms(self.con, fetched))
            names = {n for v in fetched.values() for n in (v.label, *v.aliases)}
            known = known_demonyms(self.con, names | {n.rsplit(None, 1)[-1] for n in names if " " in n.strip()})
            for q, v in fetched.items():
                if known and (hit := frozenset(fold(n) for n in (v.label, *v.aliases) if reads_adjectival(n, known))):
                    draws.adjective_named[q] = hit
        if self.pool == "train":  # every form a candidate may be written in: names, demonyms, adjectival labels
            draws.eval_names |= names_in_pool(self.con, candidate_forms(fetched, draws.demonyms), "eval")
        self.auditor.prepare(new_qids)


def progress_bar(total: int, enabled: bool) -> Any:
    from etl.progress import bar

    return bar(total=total, desc="generate", unit="doc", enabled=enabled)


def substitution_table(runs: Sequence[Run]) -> Any:
    """The runs' rows (entity order within a run) as a pyarrow table of substitutions.parquet's schema."""
    from operator import attrgetter

    import pyarrow as pa

    # Built a column at a time (a run's values repeated over its rows, each row field read by one
    # C-level map), not by appending twelve values per row: this runs over every row of the output.
    rows: list[Row] = []
    cols: dict[str, list[Any]] = {"title": [], "source_title": [], "seed": []}
    for run in runs:
        ordered = sorted(run.rows, key=attrgetter("entity"))
        rows += ordered
        cols["title"] += [run.title] * len(ordered)
        cols["source_title"] += [run.info.title] * len(ordered)
        cols["seed"] += [run.seed] * len(ordered)
    for name, attr in (("entity", "entity"), ("coarse_type", "coarse"), ("kind", "kind"), ("reason", "reason"),
                       ("qid", "qid"), ("fine_type", "fine_type"), ("new_qid", "new_qid"),
                       ("old_names", "old_names"), ("new_names", "new_names"), ("drawn_by", "drawn_by"),
                       ("catch_all", "catch_all"), ("head_noun", "head_noun"), ("adjectival", "adjectival"),
                       ("written", "written"),
                       ("gender", "gender"), ("gender_from", "gender_from"), ("new_gender", "new_gender"),
                       ("value_rule", "value_rule"), ("built_on", "built_on"), ("unannotated", "unannotated")):
        cols[name] = list(map(attrgetter(attr), rows))
    cols["reason"] = [r.value if r is not None else None for r in cols["reason"]]
    cols["value_rule"] = [r.value if r is not None else None for r in cols["value_rule"]]
    assert list(cols) == [name for name, _ in SUBSTITUTION_COLUMNS]  # every column, in the file's order
    return pa.table(cols, schema=substitution_schema())


__all__ = [
    "NUMTIME_ATTEMPTS", "DocInfo", "Draws", "Renamer", "Row", "Run", "advance", "keep", "plan_runs",
    "progress_bar", "respell", "settle_checked", "settle_linked", "settle_other", "settle_tied", "settle_times",
    "substitution_table", "time_failures",
]
