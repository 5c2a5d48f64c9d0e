"""Fine types for every entity cluster of a corpus, from measured signals (used by ``kb-from-corpus``).

A cluster (one KB item: the entities of the corpus that share a coarse type and a canonical name) gets one
class, written as its P31. The signals, each a vote of some weight for a class:

``adjectival``
    Every distinct name of the cluster is an adjectival form in the lexicon (``gazetteers``: "American",
    "Austrians", "Catholic", "Nazi"). Decisive: the cluster gets the adjectival class of that kind
    (``adjectival_classes`` in ``envbench/data/fine_classes.json``: a KB-made subclass of country, region,
    ethnic group, religion, ...), so ``generate`` only ever swaps it with another adjectival form. A MISC
    cluster whose name is also a language ("English", "Finnish") is the language instead. A cluster with a
    noun name besides ("Japanese | Japan") is typed from its noun names.
``name``
    The name's own kind word: the whole name where it names its kind alone ("Atlantic" is an ocean,
    "Mediterranean" a sea), a phrase it contains ("World War", "High School", "Statistical Area"), first
    words with "of" ("University of X", "Battle of X", "Strait of X"), a kind word right before "of"
    ("Journal of the American Medical Association", "Library of Congress", "Supreme Court of Estonia": the
    last word names the complement; not ``HEADS_NOT_BEFORE_OF``, "State of Israel"), its last word ("X River", "X County",
    "X Records", "X F.C."), a first kind word ("Lake X", "River X", "Lough X", "Mount X"; a last kind word
    wins over it: "River and Rowing Museum", "Mount Pleasant Township"), or one of the few kind words that
    tell the kind anywhere (``KIND_ANYWHERE``: "X University of Technology"). A numbered edition of
    "Awards" is the year's ceremony ("28th Guldbagge Awards", "2003 Grammy Awards"), not the award.
    Weight 5 (3 for names other than the label). A MISC name whose kind is a place's, an event's or a
    dynasty's while its relations vote for a kind of work is a title (:meth:`FineTyper.titled_work`: "The
    Secret of Monkey Island" is a video game), and its name votes nothing.
``gazetteer``
    LOC names found in the gazetteers (countries, historical countries, continents, subdivisions with their
    ISO type, cities of more than 15,000 people, US counties); MISC names that are languages. The most
    likely reading wins: country > continent > historical country > US state (and other first-level
    "State"s, Canadian provinces) > city of 100,000 > city > other first-level subdivision or region >
    lower subdivision > county. Weight 3 for it, 1 for the other readings.
``definition``
    A mention followed (past a parenthesis right after it: "X ( born ... ) is a ...") by "is a ..."/"was an
    ..."/", a ..." and a kind noun before the phrase ends ("X is an
    American rock band formed in ..." -> band). Weight 4 per mention, at most 2 counted. A ", a ..." after a
    mention that itself follows a comma is not counted: in "Venice , California , a neighborhood" and in
    lists ("Kitchen Confidential , South Park , The Sarah Silverman Program") it defines another name.
``context``
    A kind noun just before a mention ("the album X", "the village of X", "the soap opera X"); a MISC mention
    in quotes votes for song (weight 1). Weight 2 per mention, at most 2 counted; before a work's (MISC)
    mention the word says its kind as plainly as a definition and weighs as one (4): "the album Somewhere in
    England" outvotes the film its producer and release date vote for, "the soap opera Shortland Street" the
    film its cast votes for.
``relations``
    The roles the cluster plays in gold relations through the type table: each (relation, head/tail)
    votes for the first class of its list that fits the coarse type; generic votes (administrative
    territorial entity, organization, creative work, ...) count only when nothing specific is there, and
    the specific class needs most of the specific votes, so one noisy "country" tail cannot type
    "Los Angeles", which is the tail of place-of-birth many times. Weight 1 per vote, at most 3.

``learned``
    For ORG and MISC clusters the other signals leave at a generic class (or none): a naive Bayes model over the words
    around the mentions, the relation roles and the name's last word, trained on the clusters of the same
    coarse type that the name, gazetteer, definition and context signals typed in the same corpus
    (self-training; no outside data). Its class is taken when its posterior is at least
    ``LEARNED_MIN_POSTERIOR``.

``head``
    Last, for the clusters every other signal left at a catch-all class (``core.types.CATCH_ALL_CLASSES``:
    organization, geographic location, entity, which ``generate`` keeps as ``generic_type``): the head noun
    of the label (``core.heads.name_head``: "Supreme Court of Ohio" -> court, "B.C. Ferries" -> ferry) is a
    type signal of its own. When at least ``HEAD_LEARNED_MIN`` clusters of the coarse type whose label has
    that head were typed by another signal, and ``HEAD_LEARNED_SHARE`` of them agree on a class, the
    cluster takes that class (a class learned from names that share the head: "Cloughton Parish Council"
    -> the class of the other "... Council"s). Otherwise, when at least ``HEAD_MIN_ITEMS`` such clusters
    share the head, they get a KB-made class of that head noun ("council (head noun)",
    :meth:`FineTyper.head_class`, a subclass of the catch-all), so each is swapped only with a name of the
    same head. A one-word name ("Huskies"), or a head too rare, stays at the catch-all, and its entity is
    kept rather than renamed across kinds.

``kind``
    Last, for the clusters still at a catch-all class: a kind noun that plainly says the cluster's kind in
    some document (``core.kind_nouns.STRONG``: "The Reichskommissariat of Belgium and Northern France was a
    German civil administration", "the cruiser Aurora"; after a name only a work's, "the ITS tanker") and is
    a kind word at all (the kind-word table's, a class's, or the head noun of some name of the corpus; not
    "popular", "greater") gives the class learned for it, as the ``head`` signal learns a head's: the class
    that at least ``HEAD_LEARNED_MIN`` clusters typed otherwise share, and ``HEAD_LEARNED_SHARE`` of those
    with that noun beside a mention or as their name's head ("administration" -> government agency, from
    "Farm Security Administration"); else, when ``HEAD_MIN_ITEMS`` such clusters share the noun, the KB-made
    class of that noun ("cruiser (head noun)").

A gazetteer city is a city of its country: a KB-made class "city of France" (``city_class_qid``, a subclass of
city), as Wikidata types a French town "commune of France" and an American one "city of the United States",
so that Chicago is swapped with Louisville, not with Tobolsk.

A class that ends up with fewer than ``MIN_CLASS_ITEMS`` items in the corpus hands them to its superclass
(an item alone in its class would have no candidate); a "city of" class needs ``CITY_OF_MIN_ITEMS``.

A class's score is its votes plus half the votes of its superclasses (a vote for country supports
sovereign state); the best score wins, ties going to the deeper class, then the smaller QID. A cluster
with no vote gets the coarse type's class (geographic location, organization, entity, person).
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from envbench.core.heads import name_head, singular
from envbench.core.kind_nouns import STRONG as KIND_STRONG
from envbench.core.kind_nouns import KindNoun
from envbench.core.seeding import stable_hash_hex
from envbench.core.types import CATCH_ALL_CLASSES
from envbench.worlds.gazetteers import Gazetteer, Place, load_gazetteer, name_key
from envbench.worlds.type_table import TypeTable, load_type_table
from wikidata_index.names import fold

# nouns of a collection, which before "of" say what the thing gathers, not what it is ("a group of schools",
# "a chain of boulevards", "a family of languages")
COLLECTIVE_NOUNS = frozenset({"group", "series", "chain", "network", "collection", "family", "set", "pair", "couple",
                              "number", "cluster"})
# kind words that before "of" name something else than their class: "State of Israel" (a sovereign state, not a
# federated one), "League of Nations", "Legion of Christ", "North Division of the Chinese Basketball Association",
# "Organization of Military Museums of Canada" (no intergovernmental body)
HEADS_NOT_BEFORE_OF = frozenset({"state", "league", "legion", "division", "organization", "organisation", "union"})
SIGNALS = ("adjectival", "name", "gazetteer", "definition", "context", "relations", "learned", "head", "kind")
WEIGHTS = {"name": 5.0, "name_alias": 3.0, "gazetteer": 3.0, "gazetteer_other": 1.0, "definition": 4.0,
           "context": 2.0, "quote": 1.0, "relations": 1.0}
MAX_COUNTED = {"definition": 2, "context": 2, "relations": 3}
BE = frozenset({"is", "was", "are", "were", "'s"})
DETERMINERS = frozenset({"a", "an", "the", "one"})
# words that end the phrase a kind noun is looked for in
PHRASE_END = frozenset({"of", "in", "from", "by", "that", "which", "who", "whose", ",", ".", ";", ":", "located",
                        "based", "for", "and", "on", "with", "at", "to", "released", "written", "directed",
                        "founded", "formed", "established", "produced", "developed", "published", "(", ")",
                        "where", "near", "between", "situated", "named", "called", "known", "as", "or", "but",
                        "composed", "recorded", "created", "designed", "built", "owned", "operated", "run"})
QUOTES_OPEN = frozenset({'"', "“", "‘", "'", "``"})
QUOTES_CLOSE = frozenset({'"', "”", "’", "'", "''"})
SONG = "Q7366"
# roles of a thing that stands somewhere (located in an administrative entity, at a location, on a landform):
# no song ("Stand in the Schoolhouse Door", in Tuscaloosa, and "The Wedding Dance", in the Detroit Institute
# of Arts, had been typed songs by their quotes and the learned signal)
LOCATED_ROLES = frozenset({("P131", "subject"), ("P276", "subject"), ("P706", "subject")})


def stands_somewhere(ev: Evidence) -> bool:
    """Whether a cluster's gold triples locate it (``LOCATED_ROLES``)."""
    return any(r in LOCATED_ROLES for r in ev.roles)
LANGUAGE = "Q34770"
TV_SERIES = "Q5398426"
TV_EPISODE = "Q21191270"
# the classes of screen works the relations of films and series alike vote for (director, cast, producer):
# a work that a network broadcast is a series or one of its episodes instead (``broadcast_votes``)
SCREEN_WORKS = frozenset({"Q11424", "Q2431196", "Q24856"})  # film, audiovisual work, film series
VIDEO_GAME = "Q7889"
SOFTWARE = "Q7397"
MAX_CONTEXTS = 40  # mentions kept per cluster (the first seen): enough to vote, bounded for frequent names
LEARNED_MIN_POSTERIOR = 0.9
HEAD_MIN_ITEMS = 3  # catch-all clusters sharing a head noun that get a class of it (each has 2+ candidates)
HEAD_LEARNED_MIN = 2  # typed clusters with a head noun needed to learn the head's class
HEAD_LEARNED_SHARE = 0.6  # of which this share must agree on the class
HEAD_CLASS_BASE = 2000000200000  # KB-made head-noun classes: Q2000000200000 + a hash of (coarse, head)
MIN_CLASS_ITEMS = 3  # a class with fewer items in the KB gives them to its superclass
LEARNED_MIN_EXAMPLES = 3  # a class with fewer training clusters is not predicted
LEARNED_FROM = frozenset({"name", "gazetteer", "definition", "context"})  # signals whose clusters train it
# coarse types the learned signal may type: on the 360 annotated dev entities its LOC guesses were all wrong
# (0 of 13: small places, camps and buildings called "city"), its ORG and MISC ones right 7 times in 11
LEARNED_COARSE = frozenset({"ORG", "MISC"})
# kind words that name the kind wherever they stand in a name ("X University of Technology", "X Hospital
# Center"); other last words ("times", "park", "state") name it only at the end
KIND_ANYWHERE = frozenset({"university", "college", "school", "academy", "institute", "hospital", "museum",
                           "ministry", "cathedral", "monastery", "abbey", "airport", "stadium", "orchestra"})
STOP = frozenset("""a an the of in on at to for from by with and or but as is was are were be been being it its
its his her their our my your this that these those which who whom whose what when where while after before
during since until than then also not no he she they we you i one two three first second new has had have
do did does s 's n't -lrb- -rrb- into over under between about against through up down out more most other
such only both each all any some can could would will may might must shall should""".split())


@dataclass(frozen=True)
class MentionContext:
    """The tokens around one mention, lower-cased: up to 3 before, up to 12 after, within its sentence."""

    before: tuple[str, ...]
    after: tuple[str, ...]
    # which of ``after`` were written with a capital: a plural kind noun that is the end of another name
    # ("between Aspen and Twin Lakes") is no noun two names share ("between the Salt and Gila rivers")
    capitals: tuple[bool, ...] = ()
    # the kind nouns beside the mention (``core.kind_nouns``: "the ITS tanker", "in Westchester County , New York")
    kinds: tuple[KindNoun, ...] = ()
    # up to 12 tokens after a parenthesis that follows the mention, lower-cased (empty without one): the
    # definition of a first sentence comes after it ("The Wedding Dance ( sometimes known as The Dance
    # Village ) is a 1566 oil - on - panel painting", "Janakpur ( ) is a thana")
    after_parens: tuple[str, ...] = ()

    @staticmethod
    def of(sentence: Sequence[str], start: int, end: int, kinds: Sequence[KindNoun] = ()) -> MentionContext:
        return MentionContext(tuple(t.lower() for t in sentence[max(0, start - 3):start]),
                              tuple(t.lower() for t in sentence[end:end + 12]),
                              tuple(t[:1].isupper() for t in sentence[end:end + 12]), tuple(kinds),
                              tuple(t.lower() for t in sentence[close + 1:close + 13])
                              if (close := parenthesis_end(sentence, end)) is not None else ())


PARENS_MAX = 40  # tokens a parenthesis after a name may hold and still be skipped for its definition


def parenthesis_end(sentence: Sequence[str], at: int) -> int | None:
    """The index of the ")" that closes a "(" at ``at`` (nested ones counted), within :data:`PARENS_MAX`
    tokens; None when ``at`` holds no "(" or it does not close there."""
    if at >= len(sentence) or sentence[at] != "(":
        return None
    depth = 0
    for i in range(at, min(len(sentence), at + PARENS_MAX + 2)):
        if sentence[i] == "(":
            depth += 1
        elif sentence[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return None


@dataclass
class Evidence:
    """What is known about one cluster."""

    coarse: str
    names: Sequence[str]  # distinct mention names, label first
    roles: Sequence[tuple[str, str]] = ()
    contexts: Sequence[MentionContext] = ()
    name_counts: Mapping[str, int] = field(default_factory=dict)  # mentions per name (all names once if empty)
    # the clusters (positions in the sequence given to ``FineTyper.type_all``) that gold P131 triples put it in
    located_in: Sequence[int] = ()
    # the clusters that gold P463 triples make members of it
    members: Sequence[int] = ()
    # the clusters that gold P118 (league) triples put it in
    leagues: Sequence[int] = ()


@dataclass(frozen=True)
class ClassInfo:
    qid: str
    label: str
    head: str  # the kind word types are compared by
    coarse: tuple[str, ...]
    parent: str | None
    adjectival_kind: str = ""  # for the KB-made adjectival classes


@dataclass(frozen=True)
class Typing:
    qid: str
    signal: str  # the signal with the largest share of the winning class's votes ("fallback" when none)
    adjectival: bool = False
    refers_to: str = ""  # what an adjectival cluster names ("United States" for "American")
    place: Place | None = None  # the gazetteer reading of a LOC cluster, when one was found
    scores: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Rule:
    words: tuple[str, ...]
    qid: str
    coarse: frozenset[str]


@dataclass(frozen=True)
class FineClasses:
    classes: Mapping[str, ClassInfo]  # every class known here: the type table's and fine_classes.json's
    extra: tuple[str, ...]  # the classes of fine_classes.json (not in the type table), in file order
    adjectival_by_kind: Mapping[str, str]
    last_word: Mapping[str, tuple[Rule, ...]]
    first_words: tuple[Rule, ...]
    contains: tuple[Rule, ...]
    whole: Mapping[str, tuple[Rule, ...]]  # a whole name (folded, no "the") -> its rules: "Atlantic" is an ocean
    cues: Mapping[str, str]
    relation_votes: Mapping[tuple[str, str], str | None]  # (relation, role) -> the class it votes for
    sources: tuple[str, ...]
    city_of: Mapping[str, str] = field(default_factory=dict)  # ISO 3166-1 alpha-2 -> its "city of X" class

    def ancestors(self, qid: str) -> list[str]:
        out: list[str] = []
        cur: str | None = qid
        while cur is not None and cur not in out:
            out.append(cur)
            info = self.classes.get(cur)
            cur = info.parent if info else None
        return out

    def fits(self, qid: str, coarse: str) -> bool:
        info = self.classes.get(qid)
        return info is not None and coarse in info.coarse

    def head(self, qid: str) -> str:
        info = self.classes.get(qid)
        return info.head if info else ""


CITY = "Q515"
# a "city of <country>" class with fewer items hands them to city: its entities would mostly find no candidate
# that passes the document's checks (on Re-DocRED test alone, 3 kept the substitution rate 0.3 points lower)
CITY_OF_MIN_ITEMS = 10
CITY_CLASS_BASE = 2000000100000  # KB-made "city of <country>" classes: Q2000000100000 + 26 * A + B for code AB


def city_class_qid(alpha_2: str) -> str:
    """The KB-made class "city of <country>" for an ISO 3166-1 alpha-2 code, numbered from the code itself
    (so the numbering never depends on the pycountry version): "AD" -> Q2000000100003, "FR" -> Q2000000100147."""
    a, b = (ord(ch) - ord("A") for ch in alpha_2.upper())
    return f"Q{CITY_CLASS_BASE + 26 * a + b}"


def is_city_class(qid: str) -> bool:
    """Whether ``qid`` is one of the KB-made "city of <country>" classes (:func:`city_class_qid`)."""
    digits = qid[1:]
    return digits.isdigit() and CITY_CLASS_BASE <= int(digits) < CITY_CLASS_BASE + 26 * 26


@functools.lru_cache(maxsize=1)
def load_fine_classes() -> FineClasses:
    raw: dict[str, Any] = json.loads(resources.files("envbench").joinpath("data/fine_classes.json").read_text("utf-8"))
    table = load_type_table()
    classes: dict[str, ClassInfo] = {}
    for q, info in table.classes.items():
        classes[q] = ClassInfo(q, info.label, raw["table_heads"][q], info.coarse_all, info.parent)
    extra = []
    for q, v in raw["classes"].items():
        classes[q] = ClassInfo(q, v["label"], v["head"], tuple(v["coarse"]), v["parent"])
        extra.append(q)
    adjectival_by_kind = {}
    for q, v in raw["adjectival_classes"].items():
        classes[q] = ClassInfo(q, v["label"], v["head"], tuple(v["coarse"]), v["parent"], v["kind"])
        adjectival_by_kind[v["kind"]] = q
        extra.append(q)

    city_of: dict[str, str] = {}
    import pycountry

    for c in sorted(pycountry.countries, key=lambda c: c.alpha_2):
        q = city_class_qid(c.alpha_2)
        classes[q] = ClassInfo(q, f"city of {c.name}", "city", ("LOC",), CITY)
        city_of[c.alpha_2] = q

    def rules(key: str) -> list[Rule]:
        return [Rule(tuple(r["words"]), r["class"], frozenset(r["coarse"])) for r in raw[key]]

    def by_word(key: str) -> dict[str, tuple[Rule, ...]]:  # each word of the rules -> the rules that have it
        out: dict[str, list[Rule]] = {}
        for r in rules(key):
            for w in r.words:
                out.setdefault(w, []).append(r)
        return {w: tuple(rs) for w, rs in out.items()}
    return FineClasses(
        classes=classes,
        extra=tuple(extra),
        adjectival_by_kind=adjectival_by_kind,
        last_word=by_word("name_last_word"),
        first_words=tuple(rules("name_first_words")),
        contains=tuple(rules("name_contains")),
        whole=by_word("name_whole"),
        cues=dict(raw["context_cues"]),
        relation_votes={tuple(k.split()): v for k, v in raw["relation_votes"].items()},  # type: ignore[misc]
        sources=tuple(raw["sources"]),
        city_of=city_of,
    )


# relation classes that say little about the kind (they only count when nothing specific does)
GENERIC = frozenset({"Q35120", "Q215627", "Q43229", "Q2221906", "Q56061", "Q1048835", "Q486972", "Q618123",
                     "Q17537576", "Q2188189", "Q4830453", "Q1656682", "Q2424752", "Q10864048", "Q15324",
                     "Q2431196", "Q47461344", "Q7725634"})


_NUMBERED = re.compile(r"(?:[IVX]+|\d+)")

# the roles only a settlement plays among places: place of birth or death, headquarters, where a group was
# formed (not residence: "civilian life at Mount Vernon", an estate)
SETTLEMENT_ROLES = frozenset({("P19", "value"), ("P20", "value"), ("P159", "value"), ("P740", "value")})
ADMIN_ENTITY = "Q56061"  # administrative territorial entity
COUNTRY = "Q6256"
INTERGOVERNMENTAL = "Q245065"  # intergovernmental organization
# a team's sport, from the name of the league it plays in (gold P118): the words a league's name has, or the
# league's short name ("National Basketball Association", "NBA"; "National Football League" is American
# football, while England's "Football League" is association football, which the relations already say)
SPORT_TEAMS: tuple[tuple[str, frozenset[str], frozenset[str]], ...] = (
    ("Q13393265", frozenset({"basketball"}), frozenset({"nba", "wnba", "aba"})),  # basketball team
    ("Q13027888", frozenset({"baseball"}), frozenset({"mlb"})),  # baseball team
    ("Q4498974", frozenset({"hockey"}), frozenset({"nhl", "khl", "ahl", "whl", "ohl"})),  # ice hockey team
    ("Q17156793", frozenset(), frozenset({"nfl", "national football league", "american football league"})),
)
TEAM_CLASSES = frozenset({"Q476028", "Q12973014", "Q847017"})  # association football club, sports team, club
SPORTS_TEAM = "Q12973014"


def league_sports(name: str) -> set[str]:
    """The team classes whose sport the league name ``name`` names (``SPORT_TEAMS``): "National Basketball
    Association" and "NBA" {basketball team}; "Major League Baseball" {baseball team}; "National Football
    League" {American football team}; "Premier League", "Northwest League" none."""
    words = set(_words(name))
    low = " ".join(name.casefold().split())
    return {q for q, sport_words, short in SPORT_TEAMS if words & sport_words or low in short}
# words that name a state of its own in a place's name ("Italian Social Republic", "Kingdom of Scotland")
POLITY_WORDS = frozenset({"republic", "kingdom", "empire", "state", "states", "confederation", "federation", "union",
                          "sultanate", "emirate", "principality", "duchy", "caliphate", "khanate", "colony",
                          "protectorate", "dominion", "commonwealth", "realm", "dynasty", "reich"})
# KB-made subclasses of it by the level of what an item is located in (``FineTyper.level_pass``)
PLACE_LEVEL_CLASSES = {1: "Q2000000000011", 2: "Q2000000000012", 3: "Q2000000000013"}
# the church as an organisation, a class made here (fine_classes.json) under religion: a church's name ("Church of
# England", "Romanian Orthodox Church") is swapped with a church's, not with a religion's ("the Shia Islam")
CHURCH_ORGANISATION = "Q2000000000018"
# the umbrella classes of places among them: any class that names the kind outvotes these
CREATIVE_WORK, GEOGRAPHIC_LOCATION, EVENT, DYNASTY = "Q17537576", "Q2221906", "Q1656682", "Q164950"
AWARD_CEREMONY = "Q4504495"
CONTINENT, REGION = "Q5107", "Q82794"  # continent; geographic region
SPORTS_LEAGUE, LEAGUE_ROLE = "Q623109", ("P118", "value")  # sports league; the value of "league" (P118)
# country, sovereign state; and historical country, which a place the gazetteer knows only as one takes instead
COUNTRY_CLASSES, HISTORICAL_COUNTRY = frozenset({"Q6256", "Q3624078"}), "Q3024240"
NUMBERED_EDITION = re.compile(r"\d+(st|nd|rd|th)|1[89]\d\d|20\d\d")  # "28th", "2003": a name's first word
PLACE_UMBRELLAS = frozenset({"Q1048835", "Q15324", "Q2221906", "Q486972", "Q56061", "Q618123"})


def names_two(name: str) -> bool:
    """Whether a name shares its words between two numbered things ("World War I and II", "Apollo 11 and
    12", "Parts 1 & 2"): the last conjunct is a bare number that continues the first one's."""
    words = name.split()
    for i, w in enumerate(words):
        if w in ("and", "&") and 1 < i == len(words) - 2:
            return bool(_NUMBERED.fullmatch(words[i - 1]) and _NUMBERED.fullmatch(words[-1]))
    return False


def names_a_class_of_ships(name: str) -> bool:
    """Whether a name is a class named after its first ship, written with a lower-case "class" ("Sims -
    class", "Farragut class"; not the film "A Touch of Class"): a kind the corpus has too few of to draw
    from, and whose mentions sit beside the wars its ships fought in."""
    words = name.split()
    return len(words) > 1 and (words[-1] == "class" or words[-1].endswith("-class")) and words[0][:1].isupper()


def untypeable(ev: Evidence) -> bool:
    """Whether every name of a cluster names two things (``names_two``) or a class of ships: no signal types
    it (the learned and head signals neither), so it is kept and never drawn."""
    return bool(ev.names) and (all(names_two(n) for n in ev.names) or any(names_a_class_of_ships(n) for n in ev.names))


COORDINATORS = frozenset({"and", "&", "or"})
# words between "and" and a plural kind noun that make it no name's ("Paris and other cities")
NOT_NAMES = frozenset({"other", "its", "their", "many", "several", "some", "all", "both", "nearby", "neighbouring",
                       "neighboring", "surrounding", "smaller", "larger", "major", "minor", "various", "two", "three"})


def _words(name: str) -> list[str]:
    return [w for w in fold(name).replace("-", " ").split() if w not in ("the", "'s", "’s")]


class FineTyper:
    """Types clusters from the signals in ``signals`` (all by default; fewer to measure one's share)."""

    def __init__(self, signals: Iterable[str] = SIGNALS, *, min_class_items: int = MIN_CLASS_ITEMS,
                 gazetteer: Gazetteer | None = None, table: TypeTable | None = None,
                 fine: FineClasses | None = None) -> None:
        self.signals = frozenset(signals)
        self.min_class_items = min_class_items
        unknown = self.signals - set(SIGNALS)
        if unknown:
            raise ValueError(f"unknown signals {sorted(unknown)}; choose from {', '.join(SIGNALS)}")
        self.gz = gazetteer or load_gazetteer()
        self.table = table or load_type_table()
        self.fine = fine or load_fine_classes()
        self.head_classes: dict[str, ClassInfo] = {}  # the KB-made head-noun classes of the last type_all

    def class_info(self, qid: str) -> ClassInfo | None:
        """A class known here: fine_classes.json's, the type table's, or a head-noun class of the last type_all."""
        return self.fine.classes.get(qid) or self.head_classes.get(qid)

    def head_class(self, coarse: str, head: str, taken: set[str]) -> str:
        """The KB-made class of a head noun for a coarse type (a QID from a hash of both, probed past ``taken``)."""
        n = int(stable_hash_hex("head-class", coarse, head)[:12], 16) % 10**6
        while f"Q{HEAD_CLASS_BASE + n}" in taken:
            n = (n + 1) % 10**6
        qid = f"Q{HEAD_CLASS_BASE + n}"
        taken.add(qid)
        parent = self.table.coarse_fallback.get(coarse, self.table.coarse_fallback["MISC"])
        self.head_classes[qid] = ClassInfo(qid, f"{head} (head noun)", head, (coarse,), parent)
        return qid

    def head_pass(self, evidences: Sequence[Evidence], typed: list[Typing]) -> list[Typing]:
        """The ``head`` signal of the module docstring, over the typings of a corpus."""
        heads = [name_head(ev.names[0]) if ev.names and ev.coarse != "PER" and not untypeable(ev) else None
                 for ev in evidences]
        learned: dict[tuple[str, str], Counter[str]] = {}
        for ev, t, h in zip(evidences, typed, heads):
            if h is not None and t.qid not in CATCH_ALL_CLASSES and not t.adjectival:
                learned.setdefault((ev.coarse, h), Counter())[t.qid] += 1
        out = list(typed)
        groups: dict[tuple[str, str], list[int]] = {}
        for i, (ev, t, h) in enumerate(zip(evidences, typed, heads)):
            if h is None or t.qid not in CATCH_ALL_CLASSES or t.adjectival:
                continue
            votes = learned.get((ev.coarse, h))
            if votes:
                top, k = min(votes.items(), key=lambda kv: (-kv[1], int(kv[0][1:])))
                if k >= HEAD_LEARNED_MIN and k >= HEAD_LEARNED_SHARE * sum(votes.values()):
                    out[i] = Typing(top, "head", place=t.place, scores=t.scores)
                    continue
            groups.setdefault((ev.coarse, h), []).append(i)
        self.head_classes = {}
        taken: set[str] = set()
        for key in sorted(groups):
            if len(groups[key]) >= HEAD_MIN_ITEMS:
                q = self.head_class(*key, taken)
                for i in groups[key]:
                    out[i] = Typing(q, "head", place=typed[i].place, scores=typed[i].scores)
        return out

    def kind_pass(self, evidences: Sequence[Evidence], typed: list[Typing]) -> list[Typing]:
        """The ``kind`` signal of the module docstring: a cluster left at a catch-all class takes the class learned
        for a kind noun that plainly says its kind in some document ("The Reichskommissariat of Belgium and
        Northern France was a German civil administration"; ``core.kind_nouns.STRONG``): the class that at least
        ``HEAD_LEARNED_MIN`` clusters typed otherwise share, and ``HEAD_LEARNED_SHARE`` of those with that noun
        (as their name's head noun or beside a mention: "Farm Security Administration" -> government agency),
        or, where ``HEAD_MIN_ITEMS`` such clusters share the noun and no class is learned, the KB-made class of
        that noun (:meth:`head_class`)."""
        def nouns(ev: Evidence) -> list[str]:
            out: list[str] = []
            for c in ev.contexts:
                for kn in c.kinds:
                    # (a noun after a name says the kind of a work or product, "the ITS tanker"; after another name it
                    # is often another thing's: "the Warsaw Metro station", "the Samyukta Vidhayak Dal government")
                    if kn.pattern in KIND_STRONG and (kn.pattern != "after" or ev.coarse == "MISC") \
                            and not kn.negated and kn.words[-1] not in out:
                        out.append(kn.words[-1])
            return out

        # a word counts as a kind where something names that kind: the kind-word table, a class, or the head noun
        # of some name of the corpus ("cruiser" beside "the cruiser Aurora", not "popular", "greater")
        known = set(self.fine.cues) | {info.head for info in self.fine.classes.values()} | {
            h for ev in evidences if ev.names and (h := name_head(ev.names[0])) is not None}
        found = [[w for w in nouns(ev) if w in known] if ev.coarse != "PER" and not untypeable(ev) else []
                 for ev in evidences]
        learned: dict[tuple[str, str], Counter[str]] = {}
        for ev, t, ws in zip(evidences, typed, found):
            if t.qid in CATCH_ALL_CLASSES or t.adjectival or ev.coarse == "PER":
                continue
            head = name_head(ev.names[0]) if ev.names else None
            for w in {*ws, *([head] if head else [])}:
                learned.setdefault((ev.coarse, w), Counter())[t.qid] += 1
        out = list(typed)
        groups: dict[tuple[str, str], list[int]] = {}
        for i, (ev, t, ws) in enumerate(zip(evidences, typed, found)):
            if not ws or t.qid not in CATCH_ALL_CLASSES or t.adjectival:
                continue
            for w in ws:
                votes = learned.get((ev.coarse, w))
                if votes:
                    top, k = min(votes.items(), key=lambda kv: (-kv[1], int(kv[0][1:])))
                    if k >= HEAD_LEARNED_MIN and k >= HEAD_LEARNED_SHARE * sum(votes.values()):
                        out[i] = Typing(top, "kind", place=t.place, scores=t.scores)
                        break
            else:
                groups.setdefault((ev.coarse, ws[0]), []).append(i)
        taken = set(self.head_classes)
        for key in sorted(groups):
            if len(groups[key]) >= HEAD_MIN_ITEMS:
                q = next((c for c, info in self.head_classes.items() if (info.coarse, info.head) == ((key[0],), key[1])),
                         None) or self.head_class(*key, taken)
                for i in groups[key]:
                    out[i] = Typing(q, "kind", place=typed[i].place, scores=typed[i].scores)
        return out

    # -- the signals ---------------------------------------------------------------------------------------

    def adjectival(self, ev: Evidence) -> Typing | None:
        if ev.coarse not in ("LOC", "ORG", "MISC") or not ev.names:
            return None
        forms = self.gz.adjectival_for(ev.names[0])
        if not forms:
            return None
        if ev.names[0].startswith("The ") and not ev.names[0].endswith("s"):
            return None  # a title such as "The Scotsman" (a newspaper), not the people or the adjective
        counts = ev.name_counts or {n: 1 for n in ev.names}
        adjectival = sum(c for n, c in counts.items() if self.gz.adjectival_for(n))
        if adjectival * 2 <= sum(counts.values()):  # mostly noun mentions ("Japan | Japanese"): the noun's type
            return None
        first = forms[0]
        if ev.coarse == "MISC" and any(p.kind == "language" for p in self.gz.places_for(ev.names[0])):
            return Typing(LANGUAGE, "adjectival")
        qid = self.fine.adjectival_by_kind[first.kind]
        return Typing(qid, "adjectival", adjectival=True, refers_to=first.refers_to)

    def noun_names(self, ev: Evidence) -> list[str]:
        """The names that are not adjectival forms (the typing of a mixed cluster uses these)."""
        nouns = [n for n in ev.names if not self.gz.adjectival_for(n)] if "adjectival" in self.signals else []
        return nouns or list(ev.names)

    def name_votes(self, names: Sequence[str], coarse: str) -> Counter[str]:
        votes: Counter[str] = Counter()
        for i, name in enumerate(names):
            q = self.name_rule(name, coarse)
            if q:
                votes[q] += WEIGHTS["name"] if i == 0 else WEIGHTS["name_alias"]
        return votes

    def name_rule(self, name: str, coarse: str) -> str | None:
        words = _words(name)
        if not words:
            return None
        text = " ".join(words)
        for r in self.fine.whole.get(text, ()):  # a name that is its kind's on its own: "the Atlantic"
            if coarse in r.coarse:
                return r.qid
        # a kind phrase inside the "of" complement names what the thing is of, not the thing: "Allies of
        # World War II", "Battle of the Caucasus of World War II" are no world wars
        lead = len(text.split(" of ")[0])
        for r in self.fine.contains:
            if coarse in r.coarse and any(-1 < f" {text} ".find(f" {w} ") <= lead for w in r.words):
                return r.qid
        # a first phrase with "of" ("University of", "Strait of") decides before the last word; a first word
        # alone ("Lake", "Mount", "River") only after it: "River and Rowing Museum" is a museum
        first = next((r.qid for r in self.fine.first_words
                      if coarse in r.coarse and any(text == w or text.startswith(w + " ") for w in r.words if " " in w)), None)
        if first is not None:
            return first
        if words[-1] == "awards" and len(words) > 2 and NUMBERED_EDITION.fullmatch(words[0]):
            # one year's ceremony, not the award: "28th Guldbagge Awards", "2003 Grammy Awards" ("nominated for
            # an Academy Award" read "nominated for a 28th Guldbagge Awards")
            return AWARD_CEREMONY
        if " of " in text and (head := text.split(" of ")[0].split()[-1]) != words[-1] and head not in HEADS_NOT_BEFORE_OF:
            # the word before "of" is the head of the name, its last word only the complement's: "Journal of
            # the American Medical Association" is a journal, "Bank of the West" a bank
            for r in self.fine.last_word.get(head, ()):
                if coarse in r.coarse:
                    return r.qid
        last = words[-1]
        *lead_words, tail = name.split()
        if coarse == "LOC" and tail.islower() and singular(last) != last and all(w[:1].isupper() for w in lead_words):
            # a proper name, then a kind noun in the plural and in lower case: a name cut from "Pitkin and Lake
            # counties", so "Lake counties" is a county, not the lake its first word says ("post - Reconstruction
            # Southern states" is a group of states, no name)
            last = singular(last)
        for r in self.fine.last_word.get(last, ()):
            if coarse in r.coarse and len(words) > 1:
                return r.qid
        numbered = any(ch.isdigit() for ch in text)  # "County Route 501" is a road, "County Durham" a county
        for r in self.fine.first_words:
            if coarse in r.coarse and not numbered and any(text.startswith(w + " ") for w in r.words):
                return r.qid
        for w in words[1:-1]:  # "Lappeenranta University of Technology", "Hospital" after a place name
            if w in KIND_ANYWHERE:
                for r in self.fine.last_word.get(w, ()):
                    if coarse in r.coarse:
                        return r.qid
        return None

    def place_class(self, p: Place, coarse: str) -> str | None:
        if coarse != "LOC":
            return LANGUAGE if coarse == "MISC" and p.kind == "language" else None
        if p.kind in ("country", "country alias"):
            return "Q3624078"  # sovereign state
        if p.kind == "historical country":
            return HISTORICAL_COUNTRY
        if p.kind == "continent":
            return CONTINENT
        if p.kind == "region":
            return REGION
        if p.kind in ("us state",):
            return "Q35657"
        if p.kind == "city":  # a city of its country, as Wikidata's "commune of France", "city of the United States"
            return self.fine.city_of.get(p.country, CITY)
        if p.kind == "us county":
            return "Q28575"
        if p.kind == "subdivision":
            return subdivision_class(p)
        return None

    @staticmethod
    def place_rank(p: Place) -> int:
        if p.kind in ("country", "country alias"):
            return 100
        if p.kind == "continent":
            return 95
        if p.kind == "historical country":
            return 90
        if p.kind == "us state" or (p.kind == "subdivision" and p.level == 1 and (
                p.subtype == "State" or (p.subtype == "Province" and p.country == "CA"))):
            return 86  # "Georgia", "Victoria", "Punjab", "Quebec": in English text the state more than the city
        if p.kind == "city":
            # a city above a subdivision of its name ("Tunis", "Coimbra", "L'Aquila"), larger ones first
            return 85 if p.population >= 100_000 else 78
        if p.kind == "region" or (p.kind == "subdivision" and p.level == 1):
            return 76
        if p.kind == "language":
            return 60
        if p.kind == "subdivision":
            return 50
        return 30

    def named_settlement(self, ev: Evidence, names: Sequence[str], by_signal: Mapping[str, Counter[str]],
                         place: Place | None) -> bool:
        """Whether a LOC name the name rule gives a kind ("Battle Creek": river, "Fort Worth": castle) is the
        whole name of a city the gazetteer lists (``place``) and the relations use the entity as a settlement
        (born, died, headquartered or formed there, ``SETTLEMENT_ROLES``): then the name is the city's."""
        if ev.coarse != "LOC" or place is None or place.kind != "city" or not by_signal.get("name") or not names:
            return False
        if name_key(place.name) != name_key(names[0]):  # the name the gazetteer read (``gazetteer_votes``)
            return False
        return any(role in SETTLEMENT_ROLES for role in ev.roles)

    def titled_work(self, ev: Evidence, by_signal: Mapping[str, Counter[str]]) -> bool:
        """Whether a MISC name the name rule gives the kind of a place, an event or a dynasty ("The Secret of
        Monkey Island": island, "Sanders of the River": river, "The Battle of Los Angeles": battle, "House of
        Angels": dynasty) is a work's title: the relations vote for a kind of work (album, film, video game;
        not the bare "creative work" a performer or a date votes for, which tours and laws have too)."""
        if ev.coarse != "MISC" or not by_signal.get("name") or not by_signal.get("relations"):
            return False
        named, related = next(iter(by_signal["name"])), next(iter(by_signal["relations"]))
        if CREATIVE_WORK not in self.fine.ancestors(related) or related in GENERIC:
            return False
        return bool({GEOGRAPHIC_LOCATION, EVENT, DYNASTY} & set(self.fine.ancestors(named)))

    def gazetteer_votes(self, names: Sequence[str], coarse: str) -> tuple[Counter[str], Place | None]:
        votes: Counter[str] = Counter()
        best: Place | None = None
        for name in names[:1] if coarse == "LOC" else names:
            places = [p for p in self.gz.places_for(name) if self.place_class(p, coarse)]
            if not places:
                continue
            ranked = sorted(places, key=lambda p: (-self.place_rank(p), -p.population, p.kind, p.country))
            best = best or ranked[0]
            top = self.place_class(ranked[0], coarse)
            assert top is not None
            votes[top] += WEIGHTS["gazetteer"]
            for other in {self.place_class(p, coarse) for p in ranked[1:]} - {top}:
                if other:
                    votes[other] += WEIGHTS["gazetteer_other"]
            break
        return votes, best

    def cue_class(self, word: str, coarse: str) -> str | None:
        q = self.fine.cues.get(word)
        if q and self.fine.fits(q, coarse):
            return q
        return None

    def shared_plural_cue(self, c: MentionContext) -> tuple[str, bool] | None:
        """The class of the plural kind noun two joined place names share, and whether it is written in lower
        case (then it counts as a definition): "between the Salt and Gila rivers" (both are rivers; the
        gazetteer had made Salt a city and its draw read "the Grytviken and Assiniboine rivers"), "in Calhoun
        and Matagorda counties", "Guangdong and Guangxi provinces"; "Tyrrell and Washington Counties" may be
        part of a name. For the first name, up to three words may stand between "and" and the noun, which is
        written in lower case there ("between Aspen and Twin Lakes" names a lake, not Aspen's kind); none may be
        a word like "other" or "its" ("Germany and its states" says nothing of Germany)."""
        a = c.after
        if c.before and c.before[-1] in COORDINATORS:  # the second name: the noun right after it
            q = self.cue_class(singular(a[0]), "LOC") if a and a[0] != singular(a[0]) else None
            return (q, c.capitals[:1] != (True,)) if q is not None else None
        if len(a) < 3 or a[0] not in COORDINATORS:
            return None
        for k in range(2, min(len(a), 5)):
            if a[k] != singular(a[k]) and (q := self.cue_class(singular(a[k]), "LOC")) is not None:
                named = k < len(c.capitals) and c.capitals[k]  # "Twin Lakes": a name's own last word
                # the words between are a name, written with capitals where the case is known ("the Middle
                # East and among Muslim nations" says nothing of the Middle East)
                lower = len(c.capitals) >= k and not all(c.capitals[1:k])
                return (q, True) if not named and not lower and all(
                    w.replace("-", "").isalpha() and w not in STOP and w not in NOT_NAMES for w in a[1:k]) else None
        return None

    def definition_votes(self, contexts: Sequence[MentionContext], coarse: str) -> Counter[str]:
        votes: Counter[str] = Counter()
        counted = 0
        for c in contexts:
            a = c.after_parens or c.after  # "X ( born ... ) is a ...": the definition after the parenthesis
            if len(a) >= 2 and a[0] in BE:
                rest = a[1:]
            elif len(a) >= 2 and a[0] == "," and a[1] in DETERMINERS and not (c.before and c.before[-1] == ","):
                # "Venice , California , a neighborhood of Los Angeles": after the second name of a
                # "place , region ," chain the apposition defines the first
                rest = a[1:]
            else:
                continue
            if not rest or rest[0] not in DETERMINERS:
                continue
            found = None
            for k, w in enumerate(rest[1:10], start=1):
                if w in PHRASE_END:
                    break
                if w in COLLECTIVE_NOUNS and k + 1 < len(rest) and rest[k + 1] == "of":
                    continue  # "the number one group of engineering and management graduate schools": no band
                # a two-word kind first: "the country 's largest religious group" is no musical group
                q = (self.cue_class(f"{rest[k - 1]} {w}", coarse) if k > 1 else None) or self.cue_class(w, coarse)
                if q:
                    found = q  # the last kind noun of the phrase is its head ("a rock band", "a village")
            if found:
                votes[found] += WEIGHTS["definition"]
                counted += 1
                if counted >= MAX_COUNTED["definition"]:
                    break
        return votes

    def context_votes(self, contexts: Sequence[MentionContext], coarse: str) -> Counter[str]:
        votes: Counter[str] = Counter()
        counted = 0
        for c in contexts:
            b = c.before
            q = None
            if b:
                # "the soap opera Shortland Street" is a television series, not an opera
                q = (self.cue_class(f"{b[-2]} {b[-1]}", coarse) if len(b) >= 2 else None) or self.cue_class(b[-1], coarse)
                if q is None and len(b) >= 2 and b[-1] == "of" and coarse == "LOC":
                    q = self.cue_class(b[-2], coarse)  # "the village of X", "the city of X"
            plain = q is not None and coarse == "MISC"  # "the album X": a work's kind, as plain as a definition
            if q is None and coarse == "LOC" and (shared := self.shared_plural_cue(c)) is not None:
                # a plural kind noun in lower case that two names share says what both are as plainly as a
                # definition does: "the Salt and Gila rivers" outvotes the gazetteer's small city of Salt, Spain
                q, plain = shared
            if q and counted < MAX_COUNTED["context"]:
                votes[q] += WEIGHTS["definition"] if plain else WEIGHTS["context"]
                counted += 1
            if coarse == "MISC" and b and b[-1] in QUOTES_OPEN and c.after and c.after[0] in QUOTES_CLOSE:
                votes[SONG] += WEIGHTS["quote"]
        if votes[SONG] > WEIGHTS["quote"]:
            votes[SONG] = WEIGHTS["quote"]  # quotes mark short works in general: one weak vote at most
        return votes

    def relation_votes(self, roles: Sequence[tuple[str, str]], coarse: str) -> Counter[str]:
        raw: Counter[str] = Counter()
        for pid, role in roles:
            if (pid, role) in self.fine.relation_votes:
                c = self.fine.relation_votes[(pid, role)]
                if c is not None and self.fine.fits(c, coarse):
                    raw[c] += 1
                continue
            for c in self.table.role_classes(pid, role):
                if self.table.fits(c, coarse):
                    raw[c] += 1
                    break
        if coarse == "MISC":
            raw = developed_votes(broadcast_votes(raw, roles), roles)
        specific = {c: n for c, n in raw.items() if c not in GENERIC}
        pool = specific or dict(raw)
        if not pool:
            return Counter()
        total = sum(pool.values())

        def down(c: str) -> int:  # votes that say "at least c": for c or a subclass of it
            return sum(n for d, n in pool.items() if c in self.fine.ancestors(d))

        best = max(pool, key=lambda c: (down(c) * 2 > total, down(c), len(self.fine.ancestors(c)), -int(c[1:])))
        if down(best) * 2 <= total and len(pool) > 1:
            # no class has a majority: the nearest common superclass of the votes
            common = set(self.fine.ancestors(next(iter(pool))))
            for c in pool:
                common &= set(self.fine.ancestors(c))
            if not common:
                return Counter()
            best = max(common, key=lambda c: len(self.fine.ancestors(c)))
        return Counter({best: min(down(best), MAX_COUNTED["relations"]) * WEIGHTS["relations"]})

    # -- the decision --------------------------------------------------------------------------------------

    def type_all(self, evidences: Sequence[Evidence]) -> list[Typing]:
        """Type every cluster of a corpus: each on its own, then the ``learned`` and ``head`` signals over
        the corpus, and last the level of the places only the relations typed (``level_pass``) and the
        organizations that countries are members of (``alliance_pass``)."""
        typed = self._type_all(evidences)
        self.head_classes = {}
        typed = self.head_pass(evidences, typed) if "head" in self.signals else typed
        typed = self.kind_pass(evidences, typed) if "kind" in self.signals else typed
        if "relations" in self.signals:
            typed = self.league_pass(evidences, self.alliance_pass(evidences, self.level_pass(evidences, typed)))
        return typed

    def league_pass(self, evidences: Sequence[Evidence], typed: list[Typing]) -> list[Typing]:
        """A club or team that plays in a league whose name names its sport (gold P118) is a team of that sport:
        the relations type every team that plays in a league an association football club, so the Los Angeles
        Lakers (NBA), the Pittsburgh Steelers (National Football League) and the Seattle Mariners (Major League
        Baseball) had been swapped with Birmingham City. A sport's class with fewer than ``min_class_items``
        items hands them to sports team."""
        sport: dict[int, str] = {}
        for i, (ev, t) in enumerate(zip(evidences, typed)):
            if ev.coarse != "ORG" or t.qid not in TEAM_CLASSES:
                continue
            found = {q for j in ev.leagues for n in evidences[j].names for q in league_sports(n)}
            if len(found) == 1:
                sport[i] = found.pop()
        sizes = Counter(sport.values())
        out = list(typed)
        for i, q in sport.items():
            q = q if sizes[q] >= self.min_class_items else SPORTS_TEAM
            out[i] = Typing(q, "relations", place=typed[i].place, scores=typed[i].scores)
        return out

    def alliance_pass(self, evidences: Sequence[Evidence], typed: list[Typing]) -> list[Typing]:
        """An organization whose members (gold P463) include a country is an intergovernmental organization,
        whatever else typed it: NATO had been a band to the learned signal ("various Crazy Town and the League
        of Nations peacekeeping missions"), the European and African Unions political parties by their head
        noun, the UN Security Council a company."""
        out = list(typed)
        for i, (ev, t) in enumerate(zip(evidences, typed)):
            if ev.coarse == "ORG" and t.qid != INTERGOVERNMENTAL and any(
                    self.place_level(typed[j].qid) == 1 and evidences[j].coarse == "LOC" for j in ev.members):
                out[i] = Typing(INTERGOVERNMENTAL, "relations", place=t.place, scores=t.scores)
        return out

    def place_level(self, qid: str) -> int:
        """The level of a place class (``PLACE_LEVEL_CLASSES``): 1 country, 2 first-level subdivision or region,
        3 county, district or settlement; 0 for a class that tells none ("administrative territorial entity")."""
        chain = self.fine.ancestors(qid)
        if qid in PLACE_LEVEL_CLASSES.values():
            return 0
        if "Q486972" in chain or qid in ("Q28575", "Q149621", "Q15284"):
            return 3
        if "Q10864048" in chain or "Q82794" in chain:
            return 2
        return 1 if "Q1048835" in chain else 0

    def level_pass(self, evidences: Sequence[Evidence], typed: list[Typing]) -> list[Typing]:
        """The places that only the relations typed, as "administrative territorial entity", take the level
        below the lowest place they are located in (gold P131): "New England" (in the United States) is one
        of a country, "Groton" (in Connecticut) one of a first-level subdivision, "Kungsgatan" (in Stockholm)
        one of a settlement. The umbrella class mixed the levels: "New England" had become "Kungsgatan",
        "Commonwealth of Virginia" "Schwende". So do the places the relations typed "country" that lie in a
        country, whose names name no state ("Lower Saxony", "North China": parts of a country, which had been
        drawn for "England" and "the Soviet Union"). A level with fewer than ``min_class_items`` items keeps
        the umbrella."""
        levels: dict[int, int] = {}
        for i, (ev, t) in enumerate(zip(evidences, typed)):
            if t.signal != "relations" or not ev.located_in:
                continue
            lowest = max((self.place_level(typed[j].qid) for j in ev.located_in), default=0)
            if t.qid == ADMIN_ENTITY and lowest:
                levels[i] = lowest
            elif t.qid == COUNTRY and lowest == 1 and not any(POLITY_WORDS.intersection(_words(n)) for n in ev.names):
                # a "country" that lies in a country is a part of it ("Lower Saxony", "New Mexico", "North China",
                # typed by a country role they play in some triple), unless its name says it was a state
                levels[i] = 1
        sizes = Counter(levels.values())
        out = list(typed)
        for i, lv in levels.items():
            if sizes[lv] >= self.min_class_items:
                out[i] = Typing(PLACE_LEVEL_CLASSES[lv], "relations", place=typed[i].place, scores=typed[i].scores)
        return out

    def _type_all(self, evidences: Sequence[Evidence]) -> list[Typing]:
        typed = [self.type(ev) for ev in evidences]
        if "learned" not in self.signals:
            return typed
        model = LearnedTypes.train(
            [(ev, t.qid) for ev, t in zip(evidences, typed) if t.signal in LEARNED_FROM and t.qid not in GENERIC
             and not self.fine.classes[t.qid].adjectival_kind])
        out = []
        for ev, t in zip(evidences, typed):
            if t.qid in GENERIC and not t.adjectival and ev.coarse in LEARNED_COARSE and not untypeable(ev):
                guess = model.predict(ev)
                if guess is not None and not (guess == SONG and stands_somewhere(ev)):
                    t = Typing(guess, "learned", place=t.place, scores=t.scores)
            out.append(t)
        return self.merge_small_classes(out)

    def merge_small_classes(self, typed: list[Typing]) -> list[Typing]:
        """Move the items of a class with fewer than ``min_class_items`` items to its superclass, repeatedly:
        an item alone in its class has no candidate and would never be renamed. Adjectival classes stay."""
        typed = list(typed)
        while True:
            sizes = Counter(t.qid for t in typed)
            small = {q for q, n in sizes.items()
                     if n < (max(self.min_class_items, CITY_OF_MIN_ITEMS) if is_city_class(q) else self.min_class_items)
                     and not self.fine.classes[q].adjectival_kind and self.fine.classes[q].parent is not None}
            if not small:
                return typed
            typed = [Typing(self.fine.classes[t.qid].parent or t.qid, t.signal, t.adjectival, t.refers_to, t.place,
                            t.scores) if t.qid in small else t for t in typed]

    def type(self, ev: Evidence) -> Typing:
        if untypeable(ev):
            # "World War I and II" names two wars: typed as either, it would be drawn for one
            return Typing(self.table.coarse_fallback.get(ev.coarse, self.table.coarse_fallback["MISC"]), "fallback")
        if "adjectival" in self.signals:
            t = self.adjectival(ev)
            if t is not None:
                return t
        names = self.noun_names(ev)
        contexts = ev.contexts
        by_signal: dict[str, Counter[str]] = {}
        place = None
        if "name" in self.signals:
            by_signal["name"] = self.name_votes(names, ev.coarse)
        if "gazetteer" in self.signals:
            by_signal["gazetteer"], place = self.gazetteer_votes(names, ev.coarse)
            if place is not None and place.kind == "city" and written_with_the(ev):
                # "a long reservoir of the Rio Grande": a name the text always writes after "the" is no town's,
                # whatever town the gazetteer has of it (the river had been the Brazilian city, and drew "Bern")
                by_signal["gazetteer"], place = Counter(), None
        if "definition" in self.signals:
            by_signal["definition"] = self.definition_votes(contexts, ev.coarse)
        if "context" in self.signals:
            by_signal["context"] = self.context_votes(contexts, ev.coarse)
        if "relations" in self.signals:
            by_signal["relations"] = self.relation_votes(ev.roles, ev.coarse)
        if self.titled_work(ev, by_signal):
            # the kind word is part of a title: "The Secret of Monkey Island" was an island, and a video game
            by_signal["name"] = Counter()
        if self.named_settlement(ev, names, by_signal, place):
            # "Battle Creek", "Fort Worth": the kind word is part of a city's name, and people are born, die and
            # have their seats there; as a creek it read "died ... in the Poplar River , Hawaii"
            by_signal["name"] = Counter()
        own: Counter[str] = Counter()
        for votes in by_signal.values():
            own.update(votes)
        own = Counter({c: v for c, v in own.items() if v > 0})
        if ev.coarse == "MISC" and SONG in own and stands_somewhere(ev):
            del own[SONG]  # a thing that stands somewhere is no song, whatever its quotes say
        if not own:
            return Typing(self.table.coarse_fallback.get(ev.coarse, self.table.coarse_fallback["MISC"]), "fallback",
                          place=place)
        score = {c: v + 0.5 * sum(own.get(a, 0.0) for a in self.fine.ancestors(c)[1:]) for c, v in own.items()}
        # an umbrella class of places ("administrative territorial entity", from the relations) yields to a
        # class that says the kind, though its votes still back its subclasses: "the island of South Georgia"
        # is an island. Not so the umbrellas of works, which a weak cue (quotes: a song) would then decide
        pick = [c for c in score if c not in GENERIC] if any(c in PLACE_UMBRELLAS for c in score) else []
        best = max(pick or score, key=lambda c: (score[c], len(self.fine.ancestors(c)), -int(c[1:])))
        if best in COUNTRY_CLASSES and place is not None and place.kind == "historical country":
            # a state that no longer exists, by the gazetteer, is one whatever its relations say: the P17 of
            # "the Soviet Union", "East Germany", "Rhodesia" voted "country", and they were drawn for "England"
            best = HISTORICAL_COUNTRY
        elif best == HISTORICAL_COUNTRY and place is not None and place.kind in ("country", "country alias"):
            # and a state that exists is no past one for a kind word of its name: "United Kingdom" ("kingdom"),
            # "Republic of Korea" had been drawn among "Kalinga" and "the Principality of Transylvania"
            best = self.place_class(place, ev.coarse) or best
        elif ev.coarse in ("ORG", "MISC") and sum(r == LEAGUE_ROLE for r in ev.roles) >= 2:
            # the league of two teams or more is a league, whatever its name's last word: "National Basketball
            # Association" had been an association by "Association", and drew "the first Dante Society game"
            best = SPORTS_LEAGUE
        elif best == CONTINENT and "gazetteer" in self.signals and names and not any(
                p.kind == "continent" for p in self.gz.places_for(names[0])):
            # the continents are few and the gazetteer holds them all: a place its relations put on one side of
            # "continent" (P30) without being one is a region ("the Antarctic", "Central Africa", "Latin America"
            # had been continents, and "in west Africa" read "in west Antarctic")
            best = REGION
        chain = set(self.fine.ancestors(best))
        share = {s: sum(v for c, v in votes.items() if c in chain) for s, votes in by_signal.items()}
        signal = max(share, key=lambda s: (share[s], -SIGNALS.index(s)))
        return Typing(best, signal, place=place if ev.coarse == "LOC" else None, scores=dict(score))


def written_with_the(ev: Evidence) -> bool:
    """Whether every mention of a cluster comes right after a lower-case "the" (``MentionContext.before``), and
    one of them ends its noun phrase there ("of the Rio Grande that"; not "the Durban side", where the town
    only modifies the noun after it, nor "the Durban - based side")."""
    return bool(ev.contexts) and all(c.before[-1:] == ("the",) for c in ev.contexts) and any(
        not c.after or (not c.after[0][:1].isalnum() and c.after[0] not in ("-", "–"))
        or c.after[0] in PHRASE_END for c in ev.contexts)


def broadcast_votes(raw: Counter[str], roles: Sequence[tuple[str, str]]) -> Counter[str]:
    """The relation votes of a work, with those for a film moved to a television series where a network broadcast
    it (P449 original broadcaster, as subject; films are released, series broadcast), or to an episode where it is
    also part of a series (P179) and has a director or screenwriter of its own (P57, P58). The votes of cast and
    crew say "film" first for series too: "Grey 's Anatomy", "The Good Wife" and "Queen of Housewives" were films
    and "How to Save a Life" (an episode) was one, which swapped series and films. Example: P161 cast member x3
    and P449 -> 4 votes for television series; with P179 and P57 as well -> 6 for television series episode."""
    kinds = {pid for pid, role in roles if role == "subject"}
    if "P449" not in kinds:
        return raw
    to = TV_EPISODE if "P179" in kinds and kinds & {"P57", "P58"} else TV_SERIES
    out = Counter({c: n for c, n in raw.items() if c not in SCREEN_WORKS and c != TV_SERIES})
    moved = sum(n for c, n in raw.items() if c in SCREEN_WORKS or c == TV_SERIES)
    if moved:
        out[to] += moved
    return out


def developed_votes(raw: Counter[str], roles: Sequence[tuple[str, str]]) -> Counter[str]:
    """The relation votes of a thing a developer made (P178 as subject), with those for a video game moved to
    software where nothing marks a game: no publisher (P123), no platform it runs on (P400) and no series it
    is part of (P179) as subject. A developer votes "video game" first, so "Microsoft Photos", "Windows
    Camera" and "Google Maps" were video games and swapped with "Halo 3". Example: P178 and P1056 (a
    company's product) -> software; P178 and P400 -> video game."""
    if VIDEO_GAME not in raw:
        return raw
    kinds = {pid for pid, role in roles if role == "subject"}
    if "P178" not in kinds or kinds & {"P123", "P400", "P179"}:
        return raw
    out = Counter({c: n for c, n in raw.items() if c != VIDEO_GAME})
    out[SOFTWARE] += raw[VIDEO_GAME]
    return out


def head_of(qid: str, fine: FineClasses | None = None) -> str:
    """The kind word of a class (its ``head`` in fine_classes.json), "" for classes unknown here."""
    return (fine or load_fine_classes()).head(qid)


__all__ = ["SIGNALS", "Evidence", "broadcast_votes", "developed_votes", "FineClasses", "FineTyper", "MentionContext", "Typing",
           "city_class_qid", "head_of",
           "is_city_class", "load_fine_classes", "names_a_class_of_ships", "names_two", "untypeable"]


def subdivision_class(p: Place) -> str | None:
    """The class of an ISO 3166-2 subdivision from its type (and country, where the class is national)."""
    t = p.subtype.lower()
    if t == "state":
        return {"US": "Q35657", "AU": "Q5852411"}.get(p.country, "Q107390")
    if t in ("land", "federal state", "regional state"):
        return "Q107390"
    if t in ("province", "autonomous province", "prefecture"):
        return "Q34876"
    if t in ("region", "autonomous region", "administrative region", "metropolitan region", "geographical region",
             "autonomous community"):
        return "Q82794"
    if t in ("county", "two-tier county", "metropolitan county"):
        return "Q28575"
    if t in ("district", "metropolitan district", "rayon", "london borough", "council area", "unitary authority"):
        return "Q149621"
    if t in ("municipality", "rural municipality", "urban municipality", "city municipality", "district municipality",
             "commune"):
        return "Q15284"
    if t in ("voivodship", "voivodeship"):
        return "Q150093"
    if t == "republic":
        return "Q41162" if p.country == "RU" else "Q10864048"
    if t == "country":
        return "Q6256"
    if t in ("city", "capital city", "metropolitan city", "city with county rights", "state city"):
        return "Q515"
    return "Q10864048"  # another first-level kind: first-level administrative country subdivision



def features(ev: Evidence) -> list[str]:
    """What the learned model sees of a cluster: context words, relation roles, the name's last word."""
    out: set[str] = set()
    for c in ev.contexts:
        for w in (*c.before, *c.after[:8]):
            if w.isalpha() and w not in STOP:
                out.add("w:" + w)
    for pid, role in ev.roles:
        out.add(f"r:{pid}:{role}")
    if ev.names:
        words = _words(ev.names[0])
        if words:
            out.add("n:" + words[-1])
    return sorted(out)


@dataclass(frozen=True)
class LearnedTypes:
    """Multinomial naive Bayes over the features of :func:`features`, one model per coarse type, add-one
    smoothing over the features seen in that coarse type's training clusters."""

    log_prior: Mapping[str, Mapping[str, float]]  # coarse -> class -> log P(class)
    log_like: Mapping[str, Mapping[str, Mapping[str, float]]]  # coarse -> class -> feature -> log P(f | class)
    log_unseen: Mapping[str, Mapping[str, float]]  # coarse -> class -> log P(f | class) of a feature it lacks
    vocabulary: Mapping[str, frozenset[str]]  # coarse -> features seen in training

    @staticmethod
    def train(examples: Sequence[tuple[Evidence, str]]) -> LearnedTypes:
        import math

        counts: dict[str, dict[str, Counter[str]]] = {}
        n: dict[str, Counter[str]] = {}
        for ev, q in examples:
            n.setdefault(ev.coarse, Counter())[q] += 1
            counts.setdefault(ev.coarse, {}).setdefault(q, Counter()).update(features(ev))
        log_prior: dict[str, dict[str, float]] = {}
        log_like: dict[str, dict[str, dict[str, float]]] = {}
        log_unseen: dict[str, dict[str, float]] = {}
        vocabulary: dict[str, frozenset[str]] = {}
        for coarse in sorted(n):
            kept = sorted(q for q, k in n[coarse].items() if k >= LEARNED_MIN_EXAMPLES)
            total = sum(n[coarse][q] for q in kept)
            vocab = frozenset(f for q in kept for f in counts[coarse][q])
            vocabulary[coarse] = vocab
            log_prior[coarse], log_like[coarse], log_unseen[coarse] = {}, {}, {}
            for q in kept:
                mass = sum(counts[coarse][q].values()) + len(vocab)
                log_prior[coarse][q] = math.log(n[coarse][q] / total)
                log_like[coarse][q] = {f: math.log((c + 1) / mass) for f, c in sorted(counts[coarse][q].items())}
                log_unseen[coarse][q] = math.log(1 / mass)
        return LearnedTypes(log_prior, log_like, log_unseen, vocabulary)

    def predict(self, ev: Evidence) -> str | None:
        """The most probable class when its posterior reaches ``LEARNED_MIN_POSTERIOR``, else None."""
        import math

        priors = self.log_prior.get(ev.coarse)
        if not priors:
            return None
        vocab = self.vocabulary[ev.coarse]
        feats = [f for f in features(ev) if f in vocab]
        if len(feats) < 2:
            return None
        scores = {}
        for q, lp in priors.items():
            like, unseen = self.log_like[ev.coarse][q], self.log_unseen[ev.coarse][q]
            scores[q] = lp + math.fsum(like.get(f, unseen) for f in feats)
        best = max(scores, key=lambda q: (scores[q], -int(q[1:])))
        top = scores[best]
        z = math.fsum(math.exp(v - top) for _, v in sorted(scores.items()))
        return best if 1 / z >= LEARNED_MIN_POSTERIOR else None
