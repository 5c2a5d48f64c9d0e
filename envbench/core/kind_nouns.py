"""The kind nouns beside a mention: the words of its sentence that say what kind of thing it names.

A reader takes an entity's kind from the noun phrase around its mention as much as from its name:
"the 1987 science fiction movie The Hidden" is a film, "an embedded SQL Server Compact database" a
database, "in Westchester County , New York" a state, "The Reichskommissariat of Belgium and Northern
France was a German civil administration" an administration. A renamed mention keeps those words, so
its new name must be of that kind too ("the 1987 science fiction movie Shortland Street", a television
soap, reads wrong). The rule (:func:`kind_nouns`), on the tokens of each mention's sentence, case-folded,
outside every mention of the document:

``before``
    the word right before the mention, with the word before it where that is one too (a kind of two words:
    "soap opera"): "movie" of "the 1987 science fiction movie The Hidden", "river" of "the river Olt",
    "album" of "the album Thriller";
``of``
    a place's kind word (``PLACE_OF``) before "of" right before the mention, after "the": "city" of "the
    city of Doisa", "island" of "the island of South Georgia"; never "the capital of France" or "the
    president of X", which name something else than the mention, nor "a suburb of Los Angeles", a part of it;
``after``
    the word right after the mention, when it ends its noun phrase (the sentence's end, a mention, a
    token that starts with no letter or a word of ``PHRASE_END`` follow) and an article or a possessive
    opens that phrase, adjectives aside: "tanker" of "the ITS tanker to deliver", "database" of "an
    embedded SQL Server Compact database to store", "program" of "the company 's Tough Enough program ,";
``modifier``
    the same word without such an opening ("Punjab province", "Lumia devices", "Led Zeppelin songs"): the
    weakest place, where a name often modifies a noun of another kind (so does "the Beatles album", whose
    noun a caller takes for no kind of a band);
``definition``
    the words of a predicate noun phrase after "is", "was", "are", "were" or "became" (a "not" allowed),
    or of an apposition after a comma, from the article to the end of the phrase, for a mention that opens
    its sentence (its subject): "a German civil administration" of "The Reichskommissariat of Belgium and
    Northern France was a German civil administration ( Zivilverwaltung )"; a bracket after the mention is
    skipped ("Intelligent design ( ID ) is a pseudoscientific argument"), and so is a word joined to the next
    by a hyphen ("single" of "a cyberpunk single - player game"); the phrase's head is its last word
    (:attr:`KindNoun.words` keeps them all, in order). An apposition after a mention
    that itself follows a comma is left out ("Venice , California , a neighborhood of Los Angeles" defines
    Venice);
``predicate``
    the same after a mention inside its sentence, where the phrase more often says what another thing is
    ("set during the Spanish Civil War , a novel"; "found that intelligent design was not science");
``container``
    a place written right after a county and a comma is the county's state: "New York" of "in
    Westchester County , New York" (``COUNTY_WORDS``).

A word is a candidate only when it is written in lower case, is made of letters, is not a function word or
preposition (``FUNCTION_WORDS``: "near", "like", "former"), no participle (a word in "-ing" or "-ed" but
``NOT_PARTICIPLES``: "including", "certified"; "building", "king") and not one of the words too vague to name
a kind (``VAGUE``: "part", "member", "one"). It is made singular (``core.heads.singular``). Which of these words name a kind, and which
classes each names, is the caller's to say: kb-from-corpus votes with them for a cluster's class
(``worlds.fine_typing``), and ``generate`` requires a new name to fit them (``rename.kinds``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from envbench.core.heads import singular
from envbench.core.mentions import mention_mask

PATTERNS = ("before", "of", "after", "modifier", "definition", "predicate", "container")
STRONG = frozenset({"before", "of", "after", "definition", "container"})  # the patterns whose noun is the mention's own kind
BE = frozenset({"is", "was", "are", "were", "became", "becomes", "remains", "remained"})
ARTICLES = frozenset({"a", "an", "the", "one"})
DETERMINERS = ARTICLES | {"'s", "’s", "his", "her", "its", "their", "our", "this", "that", "these", "those", "each",
                          "every"}
# words before "of" that name the kind of the place after it ("the city of Doisa"); "the capital of France",
# "the coast of X" or "the king of X" name another thing
PLACE_OF = frozenset({"city", "town", "village", "hamlet", "municipality", "commune", "borough", "county", "district",
                      "province", "state", "region", "island", "islands", "kingdom", "republic", "empire", "duchy",
                      "principality", "prefecture", "parish", "township", "suburb", "neighborhood", "neighbourhood",
                      "port", "settlement", "governorate", "voivodeship", "canton", "emirate", "sultanate"})
# the last word of a county's name that makes the place after it and a comma its state ("Cook County , Illinois")
COUNTY_WORDS = frozenset({"county", "parish", "borough"})
# words that end the phrase a kind noun is looked for in (beside punctuation and mentions)
PHRASE_END = frozenset({
    "of", "in", "from", "by", "that", "which", "who", "whose", "located", "based", "for", "and", "on", "with", "at",
    "to", "released", "written", "directed", "founded", "formed", "established", "produced", "developed",
    "published", "where", "near", "between", "situated", "named", "called", "known", "as", "or", "but", "composed",
    "recorded", "created", "designed", "built", "owned", "operated", "run", "is", "was", "are", "were", "has", "had",
    "have", "will", "would", "can", "could", "since", "until", "after", "before", "during", "when", "while", "than",
    "into", "about", "under", "over", "through", "within", "along", "across", "against", "toward", "towards",
    "including", "such", "also", "consisting", "containing", "serving", "used", "set", "starring", "featuring"})
FUNCTION_WORDS = frozenset("""a an the of in on at to for from by with and or but as is was are were be been being it
its his her their our my your this that these those which who whom whose what when where while after before
during since until than then also not no he she they we you i has had have do did does s 's n't into over under
between about against through up down out more most other such only both each all any some can could would will
may might must shall should very well much many few same own so just even still yet there here how why near
around like include includes included called named former formerly certified via outside inside across along below
above beyond among amongst toward towards per despite unlike versus upon throughout beside besides behind onto off
within without whereas although though because unless""".split())
# participles ("joining", "defeated") are no nouns, but these words that end like them are
NOT_PARTICIPLES = frozenset({"building", "painting", "recording", "setting", "wedding", "meeting", "crossing",
                             "landing", "king", "ring", "wing", "spring", "string", "thing", "ceiling", "clearing",
                             "shed", "seed", "reed", "creed", "breed", "speed", "bed", "red", "steed", "tweed"})
# nouns too vague to tell a kind by themselves ("a member of", "one part of", "the first one"; "series" of
# television, of games and of books alike)
VAGUE = frozenset({"one", "part", "member", "kind", "type", "form", "name", "thing", "version", "way", "number",
                   "lot", "set", "piece", "side", "end", "time", "year", "day", "example", "home", "group", "series",
                   "collection", "list", "variety", "range", "pair", "couple", "unit", "body", "entity", "object",
                   "place", "area", "site", "location", "point", "center", "centre", "top", "bottom", "start",
                   "feature", "project", "north", "south", "east", "west", "northern", "southern", "eastern", "western",
                   "central", "northeast", "northwest", "southeast", "southwest", "upper", "lower"})
MAX_PHRASE = 8  # words of a definition read at most
HYPHENS = frozenset({"-", "–", "—"})


@dataclass(frozen=True)
class KindNoun:
    """Words beside one mention of an entity that may say its kind."""

    pattern: str  # one of ``PATTERNS``
    words: tuple[str, ...]  # the candidate words, singular, in text order (the last one is the noun but in
    # a ``definition``, whose head is its last word that names a kind)
    sent_id: int
    start: int  # the mention's token span in its sentence
    end: int
    negated: bool = False  # a definition with "not" ("intelligent design was not science"): no kind to vote for


def word(token: str) -> str | None:
    """A token as a candidate kind word: lower-case letters, no function word and no vague noun, made
    singular; else None. "Movie" (capitalised: a name's word) and "1987" are none."""
    if not token.isalpha() or not token.islower() or len(token) < 3 or token in FUNCTION_WORDS:
        return None
    if token.endswith(("ing", "ed")) and token not in NOT_PARTICIPLES:
        return None
    w = singular(token)
    return None if w in VAGUE else w


def _ends_phrase(sent: Sequence[str], covered: bytearray, j: int) -> bool:
    """Whether the noun phrase ends before token ``j``."""
    if j >= len(sent) or covered[j]:
        return True
    tok = sent[j]
    return not tok[:1].isalnum() or tok.casefold() in PHRASE_END


def _definition(sent: Sequence[str], covered: bytearray, b: int, apposition: bool = True) -> tuple[tuple[str, ...], bool]:
    """The words of a predicate noun phrase after a mention that ends at ``b`` (see the module docstring), and
    whether a "not" negates it; with ``apposition`` False, not of an apposition (the mention follows a comma)."""
    negated = False
    j = b
    if j < len(sent) and sent[j] in ("(", "-LRB-"):  # "Intelligent design ( ID ) is a pseudoscientific argument"
        close = next((k for k in range(j + 1, min(len(sent), j + 12)) if sent[k] in (")", "-RRB-")), None)
        if close is not None:
            j = close + 1
    if j < len(sent) and sent[j].casefold() in BE:
        j += 1
        if j < len(sent) and sent[j].casefold() == "not":
            j, negated = j + 1, True
        if j < len(sent) and sent[j].casefold() in ARTICLES:
            j += 1
        elif j < len(sent) and (j + 1 >= len(sent) or not sent[j + 1][:1].isalnum()):
            pass  # a bare noun ending the clause: "intelligent design was not science ,"
        else:
            return (), False
    elif apposition and j + 1 < len(sent) and sent[j] == "," and sent[j + 1].casefold() in ARTICLES:
        j += 2
    else:
        return (), False
    words: list[str] = []
    while j < len(sent) and len(words) < MAX_PHRASE:
        tok = sent[j]
        if covered[j]:  # a name inside the phrase ("a German civil administration", "a Universal Pictures film")
            j += 1
            continue
        if not tok[:1].isalnum() or tok.casefold() in PHRASE_END:
            break
        if j + 1 < len(sent) and sent[j + 1] in HYPHENS:  # "a cyberpunk single - player game": a modifier
            j += 2
            continue
        if (w := word(tok)) is not None:
            words.append(w)
        j += 1
    return tuple(words), negated


def kind_nouns(doc: Mapping[str, Any], ei: int, covered: Sequence[bytearray] | None = None) -> list[KindNoun]:
    """The kind nouns beside every mention of entity ``ei`` of a DocRED-format document (the module docstring's
    rule), in mention order. ``covered`` (per sentence, 1 where a mention's token stands) may be passed when
    the caller asks for many entities of one document."""
    covered = covered if covered is not None else mention_mask(doc)
    out: list[KindNoun] = []
    for m in doc["vertexSet"][ei]:
        sid = m["sent_id"]
        sent, cov = doc["sents"][sid], covered[sid]
        a, b = m["pos"]

        def add(pattern: str, words: tuple[str, ...], negated: bool = False, sid: int = sid, a: int = a,
                b: int = b) -> None:
            if words:
                out.append(KindNoun(pattern, words, sid, a, b, negated))

        if a > 0 and not cov[a - 1] and (w := word(sent[a - 1])) is not None:
            # with the word before it, for a kind of two words ("the soap opera Shortland Street")
            w2 = word(sent[a - 2]) if a > 1 and not cov[a - 2] else None
            add("before", (w2, w) if w2 is not None else (w,))
        if a > 2 and sent[a - 1] == "of" and not cov[a - 2] and sent[a - 2] in PLACE_OF \
                and sent[a - 3].casefold() == "the":  # "a suburb of Los Angeles" is part of it
            add("of", (singular(sent[a - 2]),))
        if b < len(sent) and not cov[b] and (w := word(sent[b])) is not None and _ends_phrase(sent, cov, b + 1):
            # "the ITS tanker", "an embedded SQL Server Compact database", "the company 's Tough Enough program":
            # an article opens the phrase whose head the noun is; without one ("Punjab province", "Lumia devices",
            # "Led Zeppelin songs") the name may as well modify a noun of another kind
            k = a - 1
            while k >= 0 and not cov[k] and sent[k].isalpha() and sent[k].islower() \
                    and sent[k] not in FUNCTION_WORDS and sent[k] not in DETERMINERS:
                k -= 1  # adjectives between the article and the name ("an embedded")
            opened = k >= 0 and not cov[k] and sent[k].casefold() in DETERMINERS
            add("after" if opened else "modifier", (w,))
        after_comma = a > 0 and sent[a - 1] == ","
        # the subject of its sentence ("The Reichskommissariat ... was a German civil administration") is what
        # its definition defines; elsewhere the phrase may define another thing ("set in the Spanish Civil War ,
        # a novel")
        subject = a == 0 or (a == 1 and sent[0].casefold() == "the")
        add("definition" if subject else "predicate", *_definition(sent, cov, b, apposition=not after_comma))
        if after_comma and a > 1 and cov[a - 2] and sent[a - 2].casefold() in COUNTY_WORDS and _ends_phrase(sent, cov, b):
            add("container", ("state",))
    return out


def document_kind_nouns(doc: Mapping[str, Any]) -> list[list[KindNoun]]:
    """:func:`kind_nouns` of every entity of a document, in vertexSet order."""
    covered = mention_mask(doc)
    return [kind_nouns(doc, ei, covered) for ei in range(len(doc["vertexSet"]))]


__all__ = ["PATTERNS", "STRONG", "KindNoun", "document_kind_nouns", "kind_nouns", "word"]
