"""A person's gender as its own document shows it, and as Wikidata's P21 states it.

DocRED does not annotate pronouns, so renaming a man "Barbara Stanwyck" keeps every label, yet the
renamed text reads "her eldest son Barbara Stanwyck": a contradiction the original lacks. The
renaming therefore reads each PER entity's *document gender* and keeps it (``rename/engine.py``),
and kb-from-corpus writes it as P21 (``worlds/kb_from_corpus.py``). Both jobs read this one rule.

**The rule** (:func:`document_genders`). For each PER entity of a document, *male* and *female*
counts are summed from five kinds of evidence; tokens inside any entity's mention and tokens inside
double quotes never count (a quoted "she" is someone speaking, "She Loves You" a song), but for quoted
speech that names the person (rule 1):

1. *Pronouns* (he, him, his, himself against she, her, hers, herself), read for the person a
   sentence is about. A sentence that names one person speaks of it after its first mention there;
   the person is then *carried*: the sentences that follow and name nobody speak of it, and so do
   the pronouns of a later sentence before its first person's mention ("Betley was born in Plock .
   Later he was a student of Tadeusz Pruszkowski"). A sentence naming several people gives the first
   one named the pronouns up to the next name, and the others none ("Harrison recorded it at his
   studio with Ray Cooper as his co-producer": one "his" for Harrison, none for Ray Cooper; a list of
   names gives its first name at most what comes before the second), and carries the one whose
   mention opens it, if one does (its subject), else the person carried so far if it names it too.
   A sentence whose sole person comes after a pronoun ("He also played Mateo") stays the carried
   person's: Mateo gets nothing. A sentence gives a person the gender of its first pronoun only:
   once it has said "she" of Manon, its "him" is someone else ("Manon sent earrings with which she
   bought him out"; a "he" there would be "herself"). Quoted speech that names one person speaks of it
   after its mention there, the quote's first pronoun only ("ANC caucus leader KK Khumalo said : "
   Motlanthe will be the president , he will be ... "": Khumalo, named first, would otherwise take
   the sentence, and Motlanthe nothing).
2. *A gendered noun right before a mention* (:data:`GENDERED_NOUNS`: son/daughter, husband/wife,
   actor/actress, king/queen, brother/sister, ...), or before a comma before it, as in "her eldest
   son Edward VII", "actress Mary Pickford", "his wife , Jane".
3. *An honorific that opens the mention itself* (Mr., Mrs., Ms., Sir, Lady, King, Queen, Prince,
   ...): "Queen Victoria", "Mr. Lawrence".
4. *A predicate noun*: after a mention (and a parenthesis right after it), "is", "was" or "became",
   or a comma, then at most :data:`NOUN_REACH` words (articles, adjectives, other entities' mentions)
   before a gendered noun, stopping at punctuation, a preposition, a pronoun or a relative word:
   "Jane Smith ( born 1950 ) is an American actress", "Edward , son of Victoria", "Anne was the
   first woman to"; not "Tom was survived by his wife". An affiliation that is another entity's
   mention may come between the name and its comma, and a place's "'s" among the words ("Uma Bharti
   of the Bharatiya Janata Party , Madhya Pradesh 's only woman chief minister"); so may "his" or "her"
   right before the noun, which is then the other party's and no pronoun of the person ("Yuhuan was
   still his daughter - in - law", "Achille Longo , his uncle"), unless a person's mention follows the
   noun, whose apposition it is ("Philip V , his wife , Elisabeth Farnese").

5. *One person named twice*: a PER entity named by one word only ("Thorborg") and the one other PER
   entity whose longer name ends in that word ("Kerstin Thorborg") are one person Re-DocRED split in
   two, or family. When exactly one of them is decided, the other adds that one's evidence to its own
   ("Thorborg 's upper register was so secure that she sang ... Venus": undecided, as the roles are
   persons too); when both are ("Lisa Quenu" and her husband "Quenu"), or a third entity shares the word
   ("Tom Ford", "Ann Ford", "Ford"), nothing is shared.

The counts give the gender (:func:`decide`): male when there is male evidence and at least
:data:`MARGIN` times as much as female evidence, female likewise, else unknown (none, or a conflict).
The counts stay beside the decision, so callers can report them.

Examples (tokens as DocRED writes them):

* "Anna Ricci is an Italian actress . She starred in Rome ." -> Anna Ricci: female (2: actress, She).
* "Tom met Ann . He left ." -> Tom: male (the subject carried); "In May , Tom met Ann . He left ." -> neither.
* "Tom said " she is kind " ." -> Tom: unknown (the "she" is quoted).
* "In his youth , Tom sailed ." -> Tom: unknown ("his" comes before the name).
* "It stars Tom , Ann and Bo . She ..." -> nobody: a list of names that no one opens.

**First names.** Most persons are named in lists or beside others, where no pronoun can be given to
them, yet their first name often tells a reader their gender. :func:`first_name_genders` learns it from
the corpus itself: a first name (:func:`first_name`: the first word of a name of two words or more that
is not an initial, a title or an honorific) carried by decided persons of at least
:data:`FIRST_NAME_VOTES` documents of one gender, and :data:`MARGIN` times as many as of the other,
tells that gender. :func:`name_gender` gives a person the gender its names' first names tell, when each
tells the same. No lexicon is used, so the judge of ``bench/gender.py flips`` (a first-name lexicon)
stays held out. Examples: "John Smith" and "John Ford" decided male in two documents, "John Doe"
undecided -> "John Doe" male; "Carol I" and "Carol II", male in one article -> "Carol" tells nothing;
"Jean" male once and female once -> no gender; "A. R. Kardar", "General Grant" and "Tempah" -> no
first name.

**P21.** Wikidata states a person's sex or gender as P21 items. :func:`item_gender` picks an item's
value (the single distinct value of the best rank, else none) and :func:`pronoun_class` maps the
values English pronouns follow (male, female, trans man, trans woman) to "male" / "female".
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Any

MALE = "male"
FEMALE = "female"
GENDERS = (MALE, FEMALE)

P21 = "P21"  # sex or gender
P21_MALE = "Q6581097"
P21_FEMALE = "Q6581072"
# the P21 values whose English pronouns are he / she; any other value (non-binary, intersex, ...) has none
PRONOUN_CLASS: dict[str, str] = {P21_MALE: MALE, "Q2449503": MALE, P21_FEMALE: FEMALE, "Q1052281": FEMALE}
P21_OF = {MALE: P21_MALE, FEMALE: P21_FEMALE}  # the value kb-from-corpus writes for a document gender

MARGIN = 3  # the winning side needs at least this many times the other side's evidence
NOUN_REACH = 4  # words between "is" / "," and the predicate noun
FIRST_NAME_VOTES = 2  # documents of decided persons a first name needs to tell a gender (one may be misread)

PRONOUNS: dict[str, str] = {**dict.fromkeys(("he", "him", "his", "himself"), MALE),
                            **dict.fromkeys(("she", "her", "hers", "herself"), FEMALE)}
_PAIRS = (("son", "daughter"), ("husband", "wife"), ("actor", "actress"), ("king", "queen"),
          ("brother", "sister"), ("father", "mother"), ("prince", "princess"), ("duke", "duchess"),
          ("emperor", "empress"), ("lord", "lady"), ("boy", "girl"), ("man", "woman"), ("uncle", "aunt"),
          ("nephew", "niece"), ("grandson", "granddaughter"), ("grandfather", "grandmother"),
          ("widower", "widow"), ("businessman", "businesswoman"), ("sportsman", "sportswoman"),
          ("chairman", "chairwoman"), ("congressman", "congresswoman"), ("heir", "heiress"),
          ("baron", "baroness"), ("stepson", "stepdaughter"), ("boyfriend", "girlfriend"),
          ("monk", "nun"), ("abbot", "abbess"), ("count", "countess"), ("marquess", "marchioness"),
          ("tsar", "tsarina"), ("sultan", "sultana"), ("fiancé", "fiancée"), ("sir", "dame"),
          ("mr.", "mrs."), ("mr", "mrs"), ("monsieur", "madame"), ("signor", "signora"), ("señor", "señora"),
          ("waiter", "waitress"), ("host", "hostess"), ("godfather", "godmother"), ("stepfather", "stepmother"),
          ("grandnephew", "grandniece"), ("schoolboy", "schoolgirl"), ("horseman", "horsewoman"),
          ("spokesman", "spokeswoman"), ("councilman", "councilwoman"), ("frontman", "frontwoman"))
GENDERED_NOUNS: dict[str, str] = {
    **{m: MALE for m, _ in _PAIRS}, **{f: FEMALE for _, f in _PAIRS},
    "ms.": FEMALE, "ms": FEMALE, "miss": FEMALE, "mme.": FEMALE, "mlle.": FEMALE,
}
# titles that open a person's own name ("Queen Victoria", "Mr. Lawrence"); "count", "host", "man" do not
HONORIFICS = frozenset({"mr.", "mr", "mrs.", "mrs", "ms.", "ms", "miss", "sir", "dame", "lady", "lord", "king",
                        "queen", "prince", "princess", "duke", "duchess", "emperor", "empress", "baron",
                        "baroness", "countess", "tsar", "tsarina", "sultan", "monsieur", "madame", "mme.",
                        "señor", "señora", "signor", "signora"})
# words that open a name without being a given name ("General Grant", "Saint Paul", "Pope Pius XII")
TITLE_WORDS = frozenset({"saint", "st.", "st", "san", "santa", "general", "president", "pope", "dr.", "dr", "doctor",
                         "professor", "prof.", "colonel", "captain", "major", "lieutenant", "admiral", "sergeant",
                         "senator", "governor", "bishop", "archbishop", "cardinal", "father", "brother", "sister",
                         "mother", "judge", "justice", "sheikh", "emir", "imam", "rabbi", "reverend", "rev.",
                         "chief", "the", "de", "von", "van", "al", "el", "le", "la", "di", "da"})
_COPULAS = frozenset({"is", "was", "became"})
_ARTICLES = frozenset({"the", "a", "an"})
# words that end the predicate's noun phrase before its noun ("was survived by his wife", "one of")
_STOPS = frozenset({"of", "by", "to", "in", "on", "at", "for", "from", "with", "as", "and", "or", "but", "who",
                    "whom", "whose", "which", "that", "when", "where", "while", "after", "before", "not",
                    "married", "has", "had", "have", "also"}) | frozenset(PRONOUNS)
_QUOTES = frozenset({'"', "``", "''", "“", "”"})

Doc = Mapping[str, Any]


@dataclass(frozen=True)
class GenderEvidence:
    """What a person's document says of its gender: male and female counts, and the decision."""

    male: int = 0
    female: int = 0

    @property
    def gender(self) -> str | None:
        return decide(self.male, self.female)

    def __add__(self, other: GenderEvidence) -> GenderEvidence:
        return GenderEvidence(self.male + other.male, self.female + other.female)


def decide(male: int, female: int) -> str | None:
    """"male", "female" or None (no evidence, or neither side has ``MARGIN`` times the other's)."""
    if male > 0 and male >= MARGIN * female:
        return MALE
    if female > 0 and female >= MARGIN * male:
        return FEMALE
    return None


def _entity_type(ent: Sequence[Mapping[str, Any]]) -> str:
    return str(ent[0].get("type", "")) if ent else ""


def _outside(sents: Sequence[Sequence[str]], doc: Doc) -> list[bytearray]:
    """Per sentence, 1 for each token that no mention covers and no double quote encloses."""
    free = [bytearray(b"\x01" * len(s)) for s in sents]
    for ent in doc["vertexSet"]:
        for m in ent:
            a, b = m["pos"]
            free[m["sent_id"]][a:b] = bytes(b - a)
    for si, sent in enumerate(sents):
        for q0, q1 in _quoted_spans(sent):
            free[si][q0:q1 + 1] = bytes(len(free[si][q0:q1 + 1]))
    return free


def document_genders(doc: Doc) -> dict[int, GenderEvidence]:
    """Each PER entity's evidence under the rule of the module docstring (every PER entity is a key)."""
    sents: Sequence[Sequence[str]] = doc["sents"]
    ents: Sequence[Sequence[Mapping[str, Any]]] = doc["vertexSet"]
    persons = [ei for ei, ent in enumerate(ents) if _entity_type(ent) == "PER"]
    counts = {ei: [0, 0] for ei in persons}
    if not persons:
        return {}
    free = _outside(sents, doc)
    person_spans: list[list[tuple[int, int]]] = [[] for _ in sents]  # PER mention spans per sentence
    first_end: list[dict[int, int]] = [{} for _ in sents]  # sentence -> person -> end of its first mention
    first_start = [len(s) for s in sents]  # where the sentence's first person mention starts
    starts_of: list[dict[int, int]] = [{} for _ in sents]  # sentence -> person -> start of its first mention
    opener: list[int | None] = [None] * len(sents)  # the person whose mention opens the sentence
    for ei in persons:
        for m in ents[ei]:
            si, (a, b) = m["sent_id"], m["pos"]
            person_spans[si].append((a, b))
            first_end[si][ei] = min(first_end[si].get(ei, b), b)
            first_start[si] = min(first_start[si], a)
            starts_of[si][ei] = min(starts_of[si].get(ei, a), a)
            if a == 0:
                opener[si] = ei

    # 0. "Yuhuan was still his daughter - in - law": the "his" is the other party's, no pronoun of hers
    for ei in persons:
        for m in ents[ei]:
            si = m["sent_id"]
            if (own := _predicate(sents[si], free[si], m["pos"][1], person_spans[si])[1]) is not None:
                free[si][own] = 0

    def add(ei: int, gender: str | None) -> None:
        if gender in GENDERS:
            counts[ei][gender == FEMALE] += 1

    said: dict[int, str] = {}  # person -> the gender of its first pronoun in the sentence being read

    def add_pronoun(ei: int, token: str) -> None:
        # once a sentence has given a person "she", its "him" is someone else ("she bought him out")
        if (gender := PRONOUNS.get(token.casefold())) is not None and said.setdefault(ei, gender) == gender:
            add(ei, gender)

    # 1. pronouns: a sentence about one person speaks of it after its mention; the pronouns of a
    # sentence before its first person's mention, and of a sentence naming nobody, speak of the person
    # carried from the sentences before (``current``)
    current: int | None = None
    for si, sent in enumerate(sents):
        here, ok = first_end[si], free[si]
        said.clear()
        lead = first_start[si] if here else len(sent)
        if current is not None:
            for j in range(lead):
                if ok[j]:
                    add_pronoun(current, sent[j])
        if not here:
            continue
        if len(here) > 1:
            # several people: the first one named speaks for itself until the next one is named
            # ("Harrison recorded it at his studio with Ray Cooper as his co-producer": Harrison's
            # "his" only), and the one opening the sentence, if one does, is carried as its subject
            first = min(here, key=lambda e: (starts_of[si][e], e))
            nxt = min((a for e, a in starts_of[si].items() if e != first), default=len(sent))
            for j in range(here[first], nxt):
                if ok[j]:
                    add_pronoun(first, sent[j])
            # a sentence no one opens goes on about the person carried, if it names it too ("Jade is a
            # character . Debuting as a swap of Kitana , Jade made her debut . She has since ...")
            current = opener[si] if opener[si] is not None else current if current in here else None
            continue
        (ei,) = here
        if ei != current and any(ok[j] and sent[j].casefold() in PRONOUNS for j in range(lead)):
            continue  # "He also played Mateo": the sentence is the carried person's (or nobody's)
        current = ei
        for j in range(here[ei], len(sent)):
            if ok[j]:
                add_pronoun(ei, sent[j])
    # 1b. quoted speech that names one person speaks of it after its mention there ("Khumalo said : "
    # Motlanthe will be the president , he will be ... "": the "he" is Motlanthe)
    for si, sent in enumerate(sents):
        spans = _quoted_spans(sent)
        if not spans:
            continue
        mentions = [(ei, m["pos"]) for ei, ent in enumerate(ents) for m in ent if m["sent_id"] == si]
        for q0, q1 in spans:
            named = {ei for ei, (a, _) in mentions if q0 < a < q1 and ei in counts}
            if len(named) != 1 or q1 == len(sent):  # a quote left open: where the speech ends is unclear
                continue
            (ei,) = named
            said.clear()
            start = min(b for e, (a, b) in mentions if e == ei and q0 < a < q1)
            for j in range(start, q1):
                if not any(a <= j < b for _, (a, b) in mentions):  # a title's "She" is no pronoun
                    add_pronoun(ei, sent[j])
    # 2-4. nouns beside each mention
    for ei in persons:
        for m in ents[ei]:
            si, (a, b) = m["sent_id"], m["pos"]
            sent, ok = sents[si], free[si]
            add(ei, _noun_before(sent, ok, a))
            if sent[a].casefold() in HONORIFICS:
                add(ei, GENDERED_NOUNS[sent[a].casefold()])
            add(ei, _predicate_noun(sent, ok, b, person_spans[si]))
    evidence = {ei: GenderEvidence(*counts[ei]) for ei in persons}
    return _one_person_named_twice(ents, evidence)


def _one_person_named_twice(ents: Sequence[Sequence[Mapping[str, Any]]],
                            evidence: dict[int, GenderEvidence]) -> dict[int, GenderEvidence]:
    """Rule 5: a PER entity named by one word only ("Thorborg") and the one other PER entity whose
    longer name ends in that word ("Kerstin Thorborg") are one person Re-DocRED split in two, or
    family; when exactly one of the two is decided, the other adds its evidence to its own."""
    words = {ei: {str(m["name"]).casefold() for m in ents[ei]} for ei in evidence}
    out = dict(evidence)
    for ei, names in words.items():
        if any(len(n.split()) != 1 for n in names):
            continue
        longer = [oj for oj, other in words.items()
                  if oj != ei and any(len(n.split()) > 1 and n.split()[-1] in names for n in other)]
        if len(longer) != 1:
            continue  # "Tom Ford", "Ann Ford" and "Ford": whose is it?
        (oj,) = longer
        a, b = evidence[ei], evidence[oj]
        if a.gender is None and b.gender is not None:
            out[ei] = a + b
        elif b.gender is None and a.gender is not None:
            out[oj] = b + a
    return out


def context_genders(doc: Doc, evidence: Mapping[int, GenderEvidence] | None = None) -> dict[int, str]:
    """The gender of every pronoun near each PER entity, where they all have one (the *context
    gender*): pronouns outside mentions and double quotes, in the sentences that mention the entity and
    the sentence after each, when none of the entity's own evidence (``evidence``, by default
    :func:`document_genders`) is of the other gender ("she fell for much older man , Dom": the "she"
    is hers, "man" is his). It is not the person's gender (the pronouns may be someone else's:
    "She starred opposite Cecchetto"), but a new name of that gender contradicts none of them, where one
    of the other may ("Aguilera revealed that Furler is one of her favorite people to work with and that
    she is very inspiring": Furler must not become "Derek Shepherd"). Entities with no pronoun near
    them, or pronouns of both genders, are not keys. Example: "Tom met Ann . He left ." -> Tom: male,
    Ann: male; "Tom met Ann . She smiled at him ." -> neither."""
    sents: Sequence[Sequence[str]] = doc["sents"]
    evidence = document_genders(doc) if evidence is None else evidence
    free = _outside(sents, doc)
    told: list[set[str]] = []  # the genders of each sentence's pronouns
    for si, sent in enumerate(sents):
        told.append({g for j, tok in enumerate(sent) if free[si][j] and (g := PRONOUNS.get(tok.casefold()))})
    out: dict[int, str] = {}
    for ei, ent in enumerate(doc["vertexSet"]):
        if _entity_type(ent) != "PER":
            continue
        near = {s for m in ent for s in (m["sent_id"], m["sent_id"] + 1) if s < len(sents)}
        genders = set().union(*(told[s] for s in near))
        if len(genders) == 1:
            (g,) = genders
            own = evidence.get(ei, GenderEvidence())
            if (own.female if g == MALE else own.male) == 0:
                out[ei] = g
    return out


def _quoted_spans(sent: Sequence[str]) -> list[tuple[int, int]]:
    """(opening quote, closing quote) positions of the sentence's double-quoted spans; a quote left open
    runs to the sentence's end (the end's position stands for its closing quote)."""
    marks = [j for j, tok in enumerate(sent) if tok in _QUOTES]
    if len(marks) % 2:
        marks.append(len(sent))
    return list(zip(marks[0::2], marks[1::2]))


def _noun_before(sent: Sequence[str], ok: bytearray, a: int) -> str | None:
    """The gender of a gendered noun right before position ``a``, or before a comma there."""
    j = a - 1
    if j >= 1 and ok[j] and sent[j] == ",":
        j -= 1
    if j >= 0 and ok[j]:
        return GENDERED_NOUNS.get(sent[j].casefold())
    return None


def _predicate_noun(sent: Sequence[str], ok: bytearray, b: int, persons: Sequence[tuple[int, int]]) -> str | None:
    """Rule 4: the gender of the noun that "is ...", "was ...", "became ..." or ", ..." gives the mention
    ending at ``b``; None when the phrase ends before a gendered noun."""
    return _predicate(sent, ok, b, persons)[0]


def _predicate(sent: Sequence[str], ok: bytearray, b: int,
               persons: Sequence[tuple[int, int]]) -> tuple[str | None, int | None]:
    """:func:`_predicate_noun`'s gender, and where a possessive pronoun right before the noun stands
    ("Anne was his wife": the noun is hers, the "his" another's), else None."""
    j = b
    if j < len(sent) and sent[j][:1] == "(":  # "Jane Smith ( born 1950 ) is ...", "Tymiński (; born"
        depth = 0
        while j < len(sent):
            depth += sent[j].count("(") - sent[j].count(")")
            j += 1
            if depth <= 0:
                break
    # an affiliation between the name and its apposition: "Uma Bharti of the Bharatiya Janata Party , ..."
    if j < len(sent) and ok[j] and sent[j].casefold() in ("of", "from") and j + 1 < len(sent):
        k = j + 1 + (sent[j + 1].casefold() == "the")
        if k < len(sent) and not ok[k] and not any(a <= k < e for a, e in persons):
            while k < len(sent) and not ok[k] and not any(a <= k < e for a, e in persons):
                k += 1  # past the other entity's mention
            j = k if k < len(sent) and sent[k] == "," else j
    if j >= len(sent) or not ok[j] or sent[j].casefold() not in _COPULAS | {","}:
        return None, None
    words = 0
    for k in range(j + 1, min(len(sent), j + 2 + 2 * NOUN_REACH)):
        if any(a <= k < e for a, e in persons):
            return None, None  # another person (or this one again) before any noun
        tok = sent[k].casefold()
        if not ok[k]:
            continue  # another entity's mention ("an American actress"): read past it
        if tok in GENDERED_NOUNS:
            return GENDERED_NOUNS[tok], None
        if tok in ("his", "her") and k + 1 < len(sent) and ok[k + 1] and sent[k + 1].casefold() in GENDERED_NOUNS:
            # ... unless a person follows, whose apposition it is ("Philip V , his wife , Elisabeth Farnese")
            after = k + 2 + (k + 2 < len(sent) and sent[k + 2] == ",")
            if any(a <= after < e for a, e in persons):
                return None, None
            return GENDERED_NOUNS[sent[k + 1].casefold()], k
        if tok == "'s" and k > j + 1 and not ok[k - 1]:
            continue  # "... , Madhya Pradesh 's only woman chief minister": a place's, not a person's
        if not tok.isalpha() or tok in _STOPS or words >= NOUN_REACH:
            return None, None
        words += tok not in _ARTICLES
    return None, None


def item_gender(rows: Iterable[tuple[str, str]]) -> str | None:
    """An item's P21 value from its (value, rank) rows: the one distinct value of the best rank
    (preferred, else normal; deprecated rows never count), else None (none, or several)."""
    best: dict[str, set[str]] = {}
    for value, rank in rows:
        if rank != "deprecated":
            best.setdefault(rank, set()).add(value)
    values = best.get("preferred") or best.get("normal") or set()
    return next(iter(values)) if len(values) == 1 else None


def first_name(name: str) -> str | None:
    """The first word of a name of two words or more, lower-cased, when it can be a given name: not an
    initial ("A. R. Kardar"), a title or honorific ("General Grant", "Queen Victoria"), nor a word
    with digits or other marks; None otherwise ("Tempah": one word is a surname as often as not)."""
    words = name.split()
    if len(words) < 2:
        return None
    w = words[0]
    low = w.lower()
    if (len(w) < 2 or not w[0].isupper() or not all(c.isalpha() or c in "-'" for c in w) or w.isupper()
            or low in HONORIFICS or low in TITLE_WORDS):
        return None
    return low


def first_name_genders(persons: Iterable[tuple[Iterable[str], str | None, Iterable[str]]],
                       votes: int = FIRST_NAME_VOTES) -> dict[str, str]:
    """First name -> gender, learned from ``persons`` (each its names, its decided gender or None, and
    the documents it is read from). A first name's votes are the *documents* of the decided persons
    that carry it, per gender, so that Carol I and Carol II of one article count once; it tells the
    gender with at least ``votes`` documents and :data:`MARGIN` times the other gender's."""
    tally: dict[str, tuple[set[str], set[str]]] = {}
    for names, gender, docs in persons:
        if gender not in GENDERS:
            continue
        for fn in {f for n in names if (f := first_name(n)) is not None}:
            tally.setdefault(fn, (set(), set()))[gender == FEMALE].update(docs)
    out: dict[str, str] = {}
    for fn, (m, f) in sorted(tally.items()):
        g = decide(len(m), len(f))
        if g is not None and max(len(m), len(f)) >= votes:
            out[fn] = g
    return out


# How a first name reads (:func:`first_name_lean`, :func:`lexicon_genders`), from the name-gender data of
# nomquamgender 0.1.4 (Van Buskirk, Clauset and Larremore 2023, "An open-source cultural consensus approach
# to name-based gender classification"; MIT): for each name, the share of women among its carriers in 36
# sources from many countries, bundled as ``envbench/data/first_names.tsv.gz`` (:func:`build_first_names`).
# A name is read only when the sources count at least this many carriers ("lorde", 23, is not).
LEXICON_MIN_COUNT = 30
# A first name tells a person's gender when at least this share of its carriers have it (kb-from-corpus's
# reading of last resort): "mario" (0.004 women) male, "hélène" (0.991) female; "andrea" (0.83 women: an
# Italian Andrea is a man) and "jean" (0.477) none.
LEXICON_TELLS = 0.95

LEXICON_FILE = "data/first_names.tsv.gz"
LEXICON_HEADER = ("# name\tp_female\tcount. Built by envbench.core.gender.build_first_names from nomquamgender "
                  "{version} (MIT; Van Buskirk, Clauset and Larremore 2023): the names counted at least "
                  "{min_count} times, folded to ASCII as the package writes them.\n")


@functools.cache
def first_name_lexicon() -> Mapping[str, tuple[float, int]]:
    """First name (lower case, no accents: :func:`lexicon_key`) -> (share of women among its carriers,
    carriers counted), read from the bundled table (see :data:`LEXICON_MIN_COUNT`)."""
    import gzip

    raw = gzip.decompress(resources.files("envbench").joinpath(LEXICON_FILE).read_bytes()).decode("utf-8")
    out: dict[str, tuple[float, int]] = {}
    for line in raw.splitlines():
        if line.startswith("#"):
            continue
        name, p_female, count = line.split("\t")
        out[name] = (float(p_female), int(count))
    return MappingProxyType(out)  # read-only: every caller shares the one cached table


def lexicon_key(first: str) -> str:
    """A first name as the lexicon writes it, without accents: "hélène" -> "helene", "josé" -> "jose"."""
    return "".join(c for c in unicodedata.normalize("NFKD", first.casefold()) if not unicodedata.combining(c))


def first_name_lean(first: str) -> str | None:
    """The gender most carriers of a first name have ("tinie", 0.951 women, female; "gul", 0.732, female;
    "jan", 0.235, male), else None (unknown to the lexicon, or half and half): ``first_name_share``'s
    majority."""
    share = first_name_share(first, FEMALE)
    if share is None or share == 0.5:
        return None
    return FEMALE if share > 0.5 else MALE


def first_name_share(first: str, gender: str) -> float | None:
    """The share of a first name's carriers that have ``gender`` ("male" or "female") in the lexicon
    (``first_name_lexicon``): "kim" 0.665 female, 0.335 male; None for a name it does not count. Looked up
    as written, then without accents."""
    lexicon = first_name_lexicon()
    hit = lexicon.get(first.casefold()) or lexicon.get(lexicon_key(first))
    if hit is None:
        return None
    return hit[0] if gender == FEMALE else 1.0 - hit[0]


@functools.cache
def lexicon_genders() -> Mapping[str, str]:
    """First name -> "male" / "female" where the lexicon tells it (:data:`LEXICON_TELLS`): kb-from-corpus's
    reading of last resort, for a person that neither its documents nor the corpus's first names gender.
    Examples: "mario" male, "helene" female; "andrea", "jean", "kim" none."""
    return MappingProxyType({name: FEMALE if p >= LEXICON_TELLS else MALE
                             for name, (p, _) in first_name_lexicon().items()
                             if p >= LEXICON_TELLS or p <= 1 - LEXICON_TELLS})


# A person named by one word only ("Helen", "Manon") is read by it when the lexicon counts at least this many
# carriers of the word (so it is a given name people have, not a rare one that is mostly a surname) and it
# tells a gender (:data:`LEXICON_TELLS`); kb-from-corpus also passes over a word that ends a longer person's
# name in the corpus, a surname there ("Clinton" of "Bill Clinton").
ONE_WORD_MIN_COUNT = 10_000


def one_word_gender(names: Iterable[str], surnames: frozenset[str] = frozenset()) -> str | None:
    """The gender the lexicon tells for a person whose every name is one word (:data:`ONE_WORD_MIN_COUNT`),
    all of them the same; else None. ``surnames``: lower-cased words that end a longer person's name, never
    read. Examples: ["Helen"] female, ["Manon"] female, ["Alan", "Victor"] male; ["Jean"] (0.48) None,
    ["Tempah"] (not counted) None, ["Clinton"] with surnames {"clinton"} None, ["Helen", "Troy"] None."""
    lexicon = first_name_lexicon()
    told: set[str] = set()
    for name in names:
        words = name.split()
        if len(words) != 1 or words[0].casefold() in surnames:
            return None
        hit = lexicon.get(lexicon_key(words[0]))
        if hit is None or hit[1] < ONE_WORD_MIN_COUNT or LEXICON_TELLS > hit[0] > 1 - LEXICON_TELLS:
            return None
        told.add(FEMALE if hit[0] >= LEXICON_TELLS else MALE)
    return told.pop() if len(told) == 1 else None


def with_lexicon(learned: Mapping[str, str]) -> dict[str, str]:
    """The first-name table of last resort: the lexicon's readings (:func:`lexicon_genders`) under the
    corpus's own (``learned``, :func:`first_name_genders`), which win where both read a name."""
    return {**lexicon_genders(), **learned}


def build_first_names() -> bytes:
    """``first_names.tsv.gz`` from nomquamgender's name data (deterministic bytes; needs the dev extra).
    The package's data file is read where it is installed, without importing the package (which needs pandas)."""
    import gzip
    import io
    import json
    from importlib.metadata import distribution
    from pathlib import Path

    dist = distribution("nomquamgender")
    data = json.loads(Path(str(dist.locate_file("nomquamgender/name_data.json"))).read_text("utf-8"))
    rows = sorted((name, float(v[2]), int(v[1])) for name, v in data.items()
                  if int(v[1]) >= LEXICON_MIN_COUNT and name[:1].isalpha() and name.isascii()
                  and all(c.isalpha() or c in "-'" for c in name) and name == name.lower())
    text = LEXICON_HEADER.format(version=dist.version, min_count=LEXICON_MIN_COUNT)
    text += "".join(f"{n}\t{p:.3f}\t{c}\n" for n, p, c in rows)
    buf = io.BytesIO()
    with gzip.GzipFile(filename="first_names.tsv", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as fh:
        fh.write(text.encode("utf-8"))
    return buf.getvalue()


def name_gender(names: Iterable[str], learned: Mapping[str, str]) -> str | None:
    """The gender the first names of ``names`` tell through ``learned`` (:func:`first_name_genders`),
    when each of them tells one and all the same; else None (Re-DocRED merges "Anne Phélypeaux" and
    "Paul Phélypeaux" into one entity: "paul" alone must not make it male)."""
    firsts = {f for n in names if (f := first_name(n)) is not None}
    # the corpus's own spelling first, then the lexicon's ("josé" learned, else "jose")
    told = {learned[f] if f in learned else learned.get(lexicon_key(f)) for f in firsts}
    return told.pop() if len(told) == 1 and None not in told else None


def pronoun_class(p21: str | None) -> str | None:
    """"male" / "female" for a P21 value English pronouns follow, else None."""
    return PRONOUN_CLASS.get(p21) if p21 is not None else None


__all__ = ["FEMALE", "LEXICON_MIN_COUNT", "LEXICON_TELLS", "ONE_WORD_MIN_COUNT", "GENDERED_NOUNS", "GENDERS", "HONORIFICS", "MALE",
           "MARGIN", "NOUN_REACH", "P21", "P21_FEMALE", "P21_MALE", "P21_OF", "PRONOUNS", "PRONOUN_CLASS",
           "FIRST_NAME_VOTES", "TITLE_WORDS", "GenderEvidence", "build_first_names", "context_genders",
           "decide", "document_genders",
           "first_name", "first_name_genders", "first_name_lean", "first_name_lexicon", "item_gender", "lexicon_genders",
           "lexicon_key", "name_gender", "one_word_gender", "pronoun_class", "with_lexicon"]
