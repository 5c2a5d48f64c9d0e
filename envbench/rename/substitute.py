"""Alias-wise substitution: rewrite a document's mentions and recompute every position.

Pairing rule (:func:`pair_names`): the entity's distinct mention names and the new item's English
names (label + aliases) are both ordered longest first (tokens, then characters; an original name
counts the tokens of its first mention in the document, without whitespace tokens). The original
names are paired, in that order, with an order-keeping selection of the new names that always
includes the label and, among those, has the smallest total length difference (tokens first, then
characters; ties go to the earlier names), where a name written in Latin letters pairs only with one
written in Latin letters (a corpus-made KB has "陶君薇" among the names of Tao Junwei, which must not
replace an English text's "Yuhuan"; the other way, "椎崎二郎" may become "John McWilliams"). So one
name always becomes the label, a full name and a surname ("Ramey Idriss", "Idriss") become a full
name and a short alias ("Barack Obama", "Obama"), and a longer variant stays the longer one
("Distant Wolf (Deluxe Edition)" -> "Island of Orka (Deluxe Edition)"); a name that leaves a bracket or a
quote open ("American Football League ( AFL", a corpus mention cut short) is none. Every mention of one
original name takes the same new name. A person's surname then follows its full name (:func:`surnames_follow`):
"Abram Petrovich Gannibal", "Gannibal" -> "Phil LaMarr", "LaMarr", though the corpus KB's item has the
alias "Nikita Khrushchev" and no "LaMarr".

Overlap policy (:func:`overlapping_entities`): when a mention of one entity overlaps a mention of
another entity (nested, crossing or identical spans in one sentence), neither entity is renamed;
both are kept with reason ``"overlap"``. Renaming one of them would cut the other's tokens, so
keeping both is the only rule that leaves every mention's tokens equal to its name. The exception is
one name split in two, "the X" around "X" (:func:`nested_spellings`): the inner entity is renamed and the
outer one follows it, and :func:`apply_plan` replaces only the inner span.

Positions: in each changed sentence the tokens are rebuilt and every mention's ``pos`` (of every
entity, renamed or not), Re-DocRED's ``global_pos`` and any ``keywords`` spans in labels (as in
DocRED-HWE) are moved by the length change of the replaced spans before them. The number of
sentences, the entities and their order, the labels and the evidence stay as they were.

Articles: an indefinite article right before a renamed mention (and outside every mention) agrees
with the new name, "a British soldier" -> "an Italian soldier" (``articles.agree``); one token
changes, the token count does not. So does a possessive's apostrophe right after one: "critics praising
Nas ' lyricism" renamed "Caputto" reads "Caputto 's lyricism" (``articles.possessive``).

Capitals: a new name that starts a sentence (only punctuation before it) whose old first word was
capitalised takes a capital first letter (:func:`capitalised`): "Michá was active" renamed "de
Glendonwyn" reads "De Glendonwyn was active". That mention's name is written so; the others keep it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import orjson

from envbench.core.text import latin_script, tokenize
from envbench.formats.docred import Doc, distinct_names
from envbench.rename.articles import agree, possessive, the_before
from wikidata_index.names import fold


@dataclass(frozen=True)
class NewName:
    """What one original mention name becomes."""

    name: str  # the new mention name (written form)
    tokens: tuple[str, ...]  # its tokens in the document


# entity index -> {original mention name -> new name}; names left out keep their mentions as they are
Plan = Mapping[int, Mapping[str, NewName]]


_fold = functools.lru_cache(maxsize=1 << 18)(fold)


_WORD = re.compile(r"[^\W_]+")


@functools.lru_cache(maxsize=1 << 18)
def text_key(text: str) -> tuple[str, ...]:
    """Comparison key of a written name: the runs of letters and digits of its folded text.

    The key ignores punctuation and how the name was tokenised, so a name clashes with the document
    however either side was split: "Mr. Lawrence", the tokens "Mr" "." "Lawrence" and the tokens
    "Mr." "Lawrence" all give ("mr", "lawrence"); "Nintendo 3DS" gives ("nintendo", "3ds") whether
    the document wrote "3DS" or "3" "DS" was its tokenisation; "PARIS" and "Paris" collide.
    """
    return tuple(_WORD.findall(_fold(text)))


def clash_keys(text: str) -> tuple[tuple[str, ...], ...]:
    """The keys a new name is checked under: its :func:`text_key`, and that key without a leading
    "the" when it has one, since "The Beatles" is the same name as the "Beatles" of a document
    (which wrote "the Beatles" with a lower-case article outside the mention, or none).
    Example: clash_keys("The Beatles") == (("the", "beatles"), ("beatles",)); clash_keys("Rome") == (("rome",),).
    """
    return with_article_dropped(text_key(text))


def with_article_dropped(key: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """A key, and the key without its leading "the" when it has one and more (see :func:`clash_keys`)."""
    return (key, key[1:]) if len(key) > 1 and key[0] == "the" else (key,)


def name_key(tokens: Sequence[str]) -> tuple[str, ...]:
    """The key (:func:`text_key`) of a tokenised name: each token's runs, in order."""
    if len(tokens) == 1:  # most mentions and every token of a sentence: no joining to do
        return text_key(tokens[0])
    return _joined_key(tuple(tokens))


@functools.lru_cache(maxsize=1 << 18)
def _joined_key(tokens: tuple[str, ...]) -> tuple[str, ...]:
    # chain/map rather than a generator: each new name's tokens miss this cache once (the counting
    # of names seen in stats.py reads every renamed mention's key), and the loop runs in C
    return tuple(chain.from_iterable(map(text_key, tokens)))


_PAIRS = (("(", ")"), ("[", "]"), ("“", "”"))  # what a name opens and must close (straight quotes: an even count)


def balanced(text: str) -> bool:
    """Whether a name closes every bracket and quote it opens: "Eduardo " Lalo " Palacios" and "Athanase (
    Tasso ) Livieratos" do; "American Football League ( AFL", "Note 8)" and "ASEAN Plus Three(ASEAN+3",
    corpus mentions cut mid-bracket, do not (written into a sentence, they leave a bracket open)."""
    return text.count('"') % 2 == 0 and all(text.count(a) == text.count(b) for a, b in _PAIRS)


@functools.lru_cache(maxsize=1 << 18)
def new_name(text: str) -> NewName | None:
    """A new name from an index name: whitespace collapsed, tokenised as DocRED does; None for a name that
    is empty or leaves a bracket or quote open (:func:`balanced`)."""
    clean = " ".join(text.split())
    toks = tuple(tokenize(clean))
    if not toks or not balanced(clean):
        return None
    return NewName(clean, toks)


@functools.lru_cache(maxsize=1 << 16)
def _length(name: str) -> tuple[int, int]:
    return (len(tokenize(name)), len(name))


def pair_names(originals: Sequence[str], label: str, aliases: Sequence[str],
               tokens: Mapping[str, Sequence[str]] | None = None) -> dict[str, NewName] | None:
    """Map each original name to a distinct name of the new item (see the module docstring).

    ``tokens`` gives each original name's tokens in the document (``mention_tokens``), which its
    length is measured in; a name it lacks is tokenised. Aliases that tokenise to the same key as an
    earlier name (label first) are dropped first. Returns None when the item has too few usable names.
    """
    first = new_name(label)
    if first is None:
        return None
    if len(originals) == 1:  # most entities: the one name becomes the label, if written in its script
        return {originals[0]: first} if latin_script(first.name) or not latin_script(originals[0]) else None
    seen = {name_key(first.tokens)}
    pool: list[tuple[NewName, bool]] = [(first, True)]
    for a in sorted(set(aliases)):
        nn = new_name(a)
        if nn is None or name_key(nn.tokens) in seen:
            continue
        seen.add(name_key(nn.tokens))
        pool.append((nn, False))
    n = len(originals)
    if n > len(pool):
        return None
    # longest first; the label before an alias of the same length, then by text
    pool.sort(key=lambda x: (-len(x[0].tokens), -len(x[0].name), not x[1], x[0].name))
    # an original is as long as the document wrote it ("Drossinis’" is one token there, two for spaCy);
    # whitespace tokens (DocRED keeps a no-break space as one) are no word
    lengths = [(sum(1 for t in tokens[nm] if not t.isspace()), len(nm)) if tokens is not None and nm in tokens
               else _length(nm) for nm in originals]
    origs = sorted(range(n), key=lambda i: (-lengths[i][0], -lengths[i][1], i))
    olen = [lengths[i] for i in origs]
    plen = [(len(nn.tokens), len(nn.name)) for nn, _ in pool]
    oscript = [latin_script(originals[i]) for i in origs]
    pscript = [latin_script(nn.name) for nn, _ in pool]
    label_at = next(j for j, (_, is_label) in enumerate(pool) if is_label)
    k = len(pool)

    # best[(i, j, u)]: the cheapest (cost, picks) for originals i.. using pool names j.., where u
    # says whether the label is already used; filled from the end so long alias lists cannot
    # exhaust the recursion limit
    Best = tuple[int, tuple[int, ...]] | None
    best: dict[tuple[int, int, bool], Best] = {}
    for i in range(n, -1, -1):
        for j in range(k, -1, -1):
            for used in (False, True):
                if i == n:
                    best[(i, j, used)] = (0, ()) if used else None
                    continue
                if k - j < n - i:
                    best[(i, j, used)] = None
                    continue
                options = []
                rest = best[(i + 1, j + 1, used or j == label_at)]
                if rest is not None and (pscript[j] or not oscript[i]):
                    cost = abs(olen[i][0] - plen[j][0]) * 1000 + abs(olen[i][1] - plen[j][1])
                    options.append((cost + rest[0], (j, *rest[1])))
                if j != label_at or used:  # the label may not be skipped
                    skip = best[(i, j + 1, used)]
                    if skip is not None:
                        options.append(skip)
                best[(i, j, used)] = min(options) if options else None
    found = best[(0, 0, False)]
    if found is None:
        return None
    return {originals[origs[i]]: pool[j][0] for i, j in enumerate(found[1])}


def _spans_overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def overlapping_entities(doc: Doc) -> set[int]:
    """Entities with a mention that overlaps a mention of a different entity."""
    by_sent: dict[int, list[tuple[int, int, int]]] = {}
    for ei, entity in enumerate(doc["vertexSet"]):
        for m in entity:
            by_sent.setdefault(m["sent_id"], []).append((m["pos"][0], m["pos"][1], ei))
    out: set[int] = set()
    for spans in by_sent.values():
        spans.sort()
        for i, (_s, e, ei) in enumerate(spans):
            for s2, _e2, ej in spans[i + 1:]:
                if s2 >= e:
                    break
                if ei != ej:
                    out.update((ei, ej))
    return out


def nested_key(name: str) -> str:
    """A name's letters and digits run together, a leading "the" left out: "The Lightning Seeds" and
    "Lightning Seeds", "U.S." and "US" have one key (``nested_spellings``, ``short_names.spellings``)."""
    key = text_key(name)
    return "".join(key[1:] if len(key) > 1 and key[0] == "the" else key)


def nested_spellings(doc: Doc, overlap: set[int]) -> dict[int, int]:
    """Pairs of entities Re-DocRED split that are one name, one mention "the X" and the other the "X"
    inside it ("the United States Census Bureau" / "United States Census Bureau", "the 16th century" /
    "16th century"): {outer entity: inner entity}. The inner one is renamed and the outer one follows it
    (its "the" and the inner's new name), so the pair is left out of the overlap policy. A pair counts when
    every overlap of either entity is such a nesting with the other, every name of the outer one is "the"
    and a spelling of a name of the inner one, both have the same coarse type, not MISC (a title's "The"
    is part of it), and neither overlaps its own mentions."""
    ents = doc["vertexSet"]
    sents = doc["sents"]
    by_sent: dict[int, list[tuple[int, int, int]]] = {}
    for ei in overlap:
        for m in ents[ei]:
            by_sent.setdefault(m["sent_id"], []).append((m["pos"][0], m["pos"][1], ei))
    partner: dict[int, set[int]] = {}
    bad: set[int] = set(self_overlapping_entities(doc))
    nested: dict[tuple[int, int], bool] = {}  # (outer, inner) -> every overlap so far is "the" + inner
    for sid, spans in by_sent.items():
        spans.sort()
        for i, (a, b, ei) in enumerate(spans):
            for a2, b2, ej in spans[i + 1:]:
                if a2 >= b:
                    break
                if ei == ej:
                    continue
                partner.setdefault(ei, set()).add(ej)
                partner.setdefault(ej, set()).add(ei)
                ok = a2 == a + 1 and b2 == b and sents[sid][a].casefold() == "the"
                nested[(ei, ej)] = nested.get((ei, ej), True) and ok
                if not ok:
                    bad.update((ei, ej))
    out: dict[int, int] = {}
    for (outer, inner), ok in sorted(nested.items()):
        if not ok or outer in bad or inner in bad or partner[outer] != {inner} or partner[inner] != {outer}:
            continue
        if str(ents[outer][0].get("type")) != str(ents[inner][0].get("type")) or ents[outer][0].get("type") == "MISC":
            continue  # a title's "The" is part of it: "The Fox Family" never reads "The Ong Bak 3"
        inner_keys = {nested_key(m["name"]) for m in ents[inner]}
        if all(m["name"].split(maxsplit=1)[0].casefold() == "the" and len(m["name"].split()) > 1
               and nested_key(m["name"]) in inner_keys for m in ents[outer]):
            out[outer] = inner
    return out


def self_overlapping_entities(doc: Doc) -> set[int]:
    """Entities two of whose own mentions overlap, unless they are the same span with the same
    name (annotation noise; such an entity is kept with reason "overlap" too)."""
    out: set[int] = set()
    for ei, entity in enumerate(doc["vertexSet"]):
        spans = sorted({(m["sent_id"], m["pos"][0], m["pos"][1], m["name"]) for m in entity})
        for (sa, _a0, a1, _an), (sb, b0, _b1, _bn) in zip(spans, spans[1:]):
            if sa == sb and b0 < a1:
                out.add(ei)
    return out


def _moved(repl: Sequence[tuple[int, int, int]], i: int, as_end: bool) -> int:
    """Where old token boundary ``i`` of a sentence lands once the sentence's replacements ``repl``
    (sorted, non-overlapping (start, end, new length)) are made.

    A boundary inside a replaced span maps to the start of its replacement when used as a start and
    to its end when used as an end, so a span covering a replacement keeps covering it. A sentence
    has a few replacements, so walking them costs less than a table of every boundary would.
    """
    shift = 0  # length change of the replacements before i
    for s, e, n in repl:
        if i >= e:  # past the span (or at its end)
            shift += n - (e - s)
        elif i > s:  # inside it
            return s + shift + (n if as_end else 0)
        else:
            break
    return i + shift


PARTICLES = frozenset({"da", "de", "di", "del", "della", "der", "den", "van", "von", "du", "dos", "das", "le", "la",
                        "ter", "ten", "bin", "ibn", "al"})
_NOT_A_SURNAME = frozenset({"jr", "jr.", "sr", "sr.", "i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x"})


def opens_lower(name: str) -> bool:
    """Whether a person's name opens with a lower-case word that is no name particle: "née Alexander" and "sire
    de Clery et de Boulainviller" (corpus persons made from such mentions) do; "da Vinci", "van Gogh",
    "d'Holbach" and "Joh Keun-shik" do not. ``generate`` gives such a name only to a person written so."""
    first = name.split(maxsplit=1)[0] if name.strip() else ""
    return first[:1].islower() and first not in PARTICLES and not first.startswith(("d'", "d’"))


def surnames_follow(originals: Sequence[str], mapping: Mapping[str, NewName]) -> dict[str, NewName]:
    """A person's one-word name that ends one of its longer names (a surname, "Gannibal" of "Abram
    Petrovich Gannibal") takes the last word of that name's new name ("Phil LaMarr" -> "LaMarr"; with
    its particle, "Leonardo da Vinci" -> "da Vinci"), where the pairing gave it another of the new
    item's names ("Nikita Khrushchev", "née Alexander"). Left as paired when the one word ends several
    longer names that became different ones, when the new last word is no name ("Abdullah I", "Jr.")
    or when another name of the entity already became it."""
    out = dict(mapping)
    for short in originals:
        if len(short.split()) != 1 or short not in out:
            continue
        longer = {out[o] for o in originals if o != short and o in out and len(o.split()) > 1
                  and o.split()[-1] == short}
        if len(longer) != 1:
            continue
        (full,) = longer
        last = full.tokens[-1] if full.tokens else ""
        if len(full.tokens) < 2 or not last.isalpha() or not last[:1].isupper() or last.casefold() in _NOT_A_SURNAME:
            continue
        # a surname with its particle: "Leonardo da Vinci" -> "da Vinci", "Jefferson Madeira da Silva" -> "da Silva"
        words = (full.tokens[-2], last) if len(full.tokens) >= 3 and full.tokens[-2] in PARTICLES else (last,)
        surname = " ".join(words)
        if out[short].name == surname or any(nn.name == surname for o, nn in out.items() if o != short):
            continue
        out[short] = NewName(surname, words)
    return out


def opens_sentence(sent: Sequence[str], start: int) -> bool:
    """Whether the token at ``start`` is the sentence's first word: only punctuation before it
    (opening quotes, brackets), as in '" Something to Believe In " is a song'."""
    for i in range(start):  # most sentences open with a word: the first token settles it
        tok = sent[i]
        if tok.isalnum() or any(ch.isalnum() for ch in tok):
            return False
    return True


def capitalised(old_first: str, tokens: tuple[str, ...], name: str) -> tuple[tuple[str, ...], str]:
    """A new name's tokens and text, its first letter capitalised where it starts a sentence whose old
    first word was capitalised: a particle surname ("de Glendonwyn was active" -> "De Glendonwyn"), a
    common noun, a name opened by "the". A token that already has a capital after its first letter
    ("eBay", "iPhone") is written as it is, and so is a new name at the start of a sentence whose old
    word was in lower case."""
    first = tokens[0]
    if (not old_first[:1].isupper() or not first[:1].islower() or any(ch.isupper() for ch in first[1:])
            or not name.startswith(first)):  # the last: text and tokens must stay one name
        return tokens, name
    up = first[:1].upper() + first[1:]
    return (up, *tokens[1:]), up + name[len(first):]


# a run of tokens outside every mention that takes a new name (``rename.unannotated``): sentence, start,
# end, the name it spells, that name's entity's coarse type, and the new name
Outside = tuple[int, int, int, str, str, NewName]


def apply_plan(doc: Doc, plan: Plan, title: str, outside: Sequence[Outside] = ()) -> Doc:
    """A renamed copy of ``doc`` titled ``title``; ``doc`` itself is not changed. ``outside`` are runs of
    tokens outside every mention that take a new name too (a renamed name Re-DocRED did not annotate
    there, ``rename.unannotated``): written as a mention of the name would be, no mention's name changes.

    Raises ValueError if a renamed entity overlaps another mention (callers keep such entities,
    see :func:`overlapping_entities`), or a run of ``outside`` overlaps a replaced span.
    """
    # A deep copy (orjson's round trip is much faster than copy.deepcopy), less the sentences, which
    # are copied list by list: their tokens are strings (``docred.validate_document``), which need no copy.
    out = orjson.loads(orjson.dumps({**doc, "sents": None}))
    out["sents"] = [list(sent) for sent in doc["sents"]]
    out["title"] = title
    sents: list[list[str]] = out["sents"]
    vertex_set = out["vertexSet"]
    # sentence -> {(start, end): new tokens}
    repl: dict[int, dict[tuple[int, int], tuple[str, ...]]] = {}

    def written(sid: int, span: tuple[int, int], old: str, coarse: str, nn: NewName) -> tuple[tuple[str, ...], str]:
        """The tokens and text a name takes at ``span`` of sentence ``sid``, entered into ``repl``."""
        tokens, name = nn.tokens, nn.name
        before = sents[sid][span[0] - 1] if span[0] > 0 else None
        after = sents[sid][span[1]] if span[1] < len(sents[sid]) else None
        if (article := the_before(before, old, nn.name, coarse, after)) is not None:
            tokens, name = (article, *tokens), f"{article} {name}"  # "held in the United Arab Emirates"
        elif tokens and opens_sentence(sents[sid], span[0]):
            tokens, name = capitalised(sents[sid][span[0]], tokens, name)  # "De Glendonwyn was"
        spans = repl.setdefault(sid, {})
        prev = spans.get(span)
        if prev is not None and prev != tokens:
            raise ValueError(f"{doc['title']!r}: two names for the span {span} in sentence {sid}")
        spans[span] = tokens
        return tokens, name

    for ei, mapping in plan.items():
        for m in vertex_set[ei]:
            nn = mapping.get(m["name"])
            if nn is None:  # a name the plan leaves as it is
                continue
            _, m["name"] = written(m["sent_id"], (m["pos"][0], m["pos"][1]), m["name"], str(m.get("type", "")), nn)
            # (the copy's mention takes its new name here; its pos is moved below)
    for sid, a, b, old_name, coarse, nn in outside:
        if any(_spans_overlap((a, b), span) for span in repl.get(sid, {})):
            raise ValueError(f"{doc['title']!r}: the run {(a, b)} of sentence {sid} overlaps a mention")
        written(sid, (a, b), old_name, coarse, nn)
    # sentence -> its replacements as sorted (start, end, new length), for _moved; and (sentence,
    # start, end) -> the new (start, end) of each replaced span, which is what _moved gives a mention
    # at that span, read without the walk (most mentions are renamed ones). Left out for a sentence
    # with an empty span: the tokens it inserts at a span's end would move that end.
    changes: dict[int, list[tuple[int, int, int]]] = {}
    placed: dict[tuple[int, int, int], tuple[int, int]] = {}
    # tokens inside a mention (of any entity) are its name: an article there is never changed. The
    # set is only read where an article would change, so it is made for the few documents with one.
    covered: set[tuple[int, int]] | None = None
    for sid, spans in repl.items():
        # "the" + a replaced span right after it, replaced by "the" + that span's new tokens (an entity that
        # follows the one nested in it, ``nested_spellings``): only the inner span is replaced, and the
        # outer mention's span, moved below, covers "the" and the new tokens
        for (a, b), toks in list(spans.items()):
            inner = spans.get((a + 1, b))
            if inner is not None and toks[1:] == inner and toks[:1] == (sents[sid][a],):
                del spans[(a, b)]
        ordered = sorted(spans.items())
        for (a, _), (b, _) in zip(ordered, ordered[1:]):
            if _spans_overlap(a, b):
                raise ValueError(f"{doc['title']!r}: replaced spans {a} and {b} overlap in sentence {sid}")
        old = sents[sid]
        starts = {a for (a, _), _ in ordered}
        for (_, e), toks in ordered:  # "Nas ' lyricism" -> "Caputto 's lyricism" (one token, outside mentions)
            if toks and e < len(old) and e not in starts and old[:e].count(old[e]) % 2 == 0 and (
                    mark := possessive(old[e], old[e - 1], toks[-1])) != old[e]:  # (an odd count: a closing quote)
                if covered is None:
                    covered = {(m["sent_id"], i) for entity in vertex_set for m in entity if m["sent_id"] in repl
                               for i in range(m["pos"][0], m["pos"][1])}
                if (sid, e) not in covered:
                    old = [*old[:e], mark, *old[e + 1:]]
        new: list[str] = []
        cursor = 0
        direct = all(s < e for (s, e), _ in ordered)
        for (s, e), toks in ordered:
            new.extend(old[cursor:s])
            if cursor < s and toks:  # "a British" -> "an Italian" (articles)
                article = agree(old[s - 1], old[s], toks[0])
                if article != old[s - 1]:
                    if covered is None:
                        covered = {(m["sent_id"], i) for entity in vertex_set for m in entity if m["sent_id"] in repl
                                   for i in range(m["pos"][0], m["pos"][1])}
                    if (sid, s - 1) not in covered:
                        new[-1] = article
            if direct:
                placed[(sid, s, e)] = (len(new), len(new) + len(toks))
            new.extend(toks)
            cursor = e
        new.extend(old[cursor:])
        changes[sid] = [(s, e, len(t)) for (s, e), t in ordered]
        sents[sid] = new
    if not changes:
        return out
    old_offsets, new_offsets = [0], [0]
    for sid, toks in enumerate(doc["sents"]):
        old_offsets.append(old_offsets[-1] + len(toks))
        new_offsets.append(new_offsets[-1] + len(sents[sid]))

    for entity in vertex_set:
        for m in entity:
            sid = m["sent_id"]
            start, end = m["pos"][0], m["pos"][1]
            change = changes.get(sid)
            new_start = start
            if change is not None:  # in an unchanged sentence the copy's own pos stays as it is
                span = placed.get((sid, start, end))
                if span is None:
                    span = (_moved(change, start, False), _moved(change, end, True))
                new_start = span[0]
                m["pos"] = list(span)
            global_pos = m.get("global_pos")
            if isinstance(global_pos, list):
                shift = new_offsets[sid] + new_start - (old_offsets[sid] + start)
                m["global_pos"] = [g + shift if isinstance(g, int) else g for g in global_pos]
    for lab in out.get("labels", []) or []:
        for kw in lab.get("keywords", []) or [] if isinstance(lab, dict) else []:
            if isinstance(kw, dict) and kw.get("sent_id") in changes and isinstance(kw.get("pos"), list) \
                    and len(kw["pos"]) == 2:
                change = changes[kw["sent_id"]]
                kw["pos"] = [_moved(change, kw["pos"][0], False), _moved(change, kw["pos"][1], True)]
    return out


def mention_tokens(doc: Doc, entity: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Each distinct mention name of an entity with the document tokens of its first mention."""
    out: dict[str, list[str]] = {}
    for m in entity:
        if m["name"] not in out:
            out[m["name"]] = list(doc["sents"][m["sent_id"]][m["pos"][0]: m["pos"][1]])
    return out


__all__ = [
    "NewName", "Outside", "PARTICLES", "Plan", "apply_plan", "clash_keys", "distinct_names", "mention_tokens", "name_key",
    "new_name", "overlapping_entities", "pair_names", "self_overlapping_entities", "text_key", "with_article_dropped",
]
