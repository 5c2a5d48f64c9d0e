"""The kind a noun beside a mention asks of a new name: which classes a noun names, and whether an item fits.

"the 1987 science fiction movie The Hidden" says The Hidden is a film, so its new name must be a film's:
"… movie Shortland Street" (a television soap) reads wrong. The nouns come from ``core.kind_nouns``
(before, after and around the mention: "the ITS tanker", "an embedded SQL Server Compact database", "in
Westchester County , New York", "was a German civil administration"). This module says what they ask:

* **The classes of a noun** (:class:`NounClasses`): the class the kind-word table names for it
  (``context_cues`` of ``envbench/data/fine_classes.json``, Wikidata's QIDs: "movie" -> film, "soap
  opera" -> television series, "state" -> federated state), and every class of the index whose label's
  kind word it is (``fine_types.class_kinds``: "film", "state of the United States" -> state, "city of
  Germany" -> city; on an offline KB also the classes kb-from-corpus made for a noun, "cruiser (head
  noun)"). A word no class names has the class learned for it from the index's names
  (:meth:`NounClasses.learn`): the class most items whose label ends in the word share ("administration"
  -> government agency, from "Farm Security Administration"). Words one kind to a reader stand for each
  other (``KIND_GROUPS``: "town" and "city"; a county's "state" and a province or a country). The classes
  are kept only where they may carry the entity's coarse type (``fine_types.fits_coarse``: "singer" of "an
  American singer" asks nothing of the place "American"; "the state Democratic Party" no state of a party).
* **An item fits a noun** (:func:`fits`) when one of its P31 classes, or a P279 ancestor of one, is a class
  of the noun: a "city of Germany" fits "city", a "sovereign state" fits "state", a "song" no "movie".
* **What an entity asks** (:func:`entity_kinds`): for each noun beside one of its mentions (a definition's
  head is its last word that names classes: "civil administration" -> administration), the noun's classes,
  when its own item fits the noun, or when the noun stands where it plainly says the mention's kind
  (``core.kind_nouns.STRONG``: before the mention, before "of", in a definition, a county's state; after
  the name of a work or product in a phrase an article opens, "the ITS tanker"). Elsewhere a noun after the
  mention asks only where the item fits it, since a name also modifies a noun of another kind ("Lumia
  devices", "the London district of Lambeth", "the Piedmont region", "the Swedish lake"); and a noun no class
  of the coarse type has asks nothing ("the Beatles album" asks no band to be an album). A noun no class of the index names asks nothing, and a negated definition ("was
  not science") asks nothing.

``generate`` passes over a candidate that misses one of them (``engine._fit``); an entity no drawn
candidate can serve that way is kept (``kind_noun``) rather than named as another kind of thing: the
corpus KB had merged New York the city and the state, and "in Westchester County , New York" read "in
County Laois , Ho Chi Minh".
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from typing import Any

from envbench.core.heads import singular
from envbench.core.kind_nouns import STRONG, KindNoun
from envbench.core.types import CATCH_ALL_CLASSES
from envbench.rename.fine_types import ancestors, class_sizes, fits_coarse, qid_number, register_rows

LEARNED_MIN = 2  # items whose names end in a word needed to learn the word's class
LEARNED_SHARE = 0.6  # of which this share must have the class
Kinds = tuple[tuple[str, frozenset[str]], ...]  # (noun, its classes) an entity's new item must fit, each
# words a reader takes for one kind: "the town of Alcoy" may be a city, and "in Westchester County , New York"
# names a state, a province or a country alike (the county's ``container``)
KIND_GROUPS = (frozenset({"city", "town", "village", "hamlet", "municipality", "commune", "settlement", "township",
                          "borough", "metropolis"}),
               frozenset({"state", "province", "region", "voivodeship", "canton", "prefecture", "governorate",
                          "territory", "subdivision", "country", "nation", "kingdom", "republic"}),
               frozenset({"club", "team"}))


@functools.lru_cache(maxsize=1)
def cue_classes() -> dict[str, str]:
    """The kind-word table (``context_cues`` of fine_classes.json), its words made singular: "movies" ->
    film, "soap opera" -> television series."""
    raw = json.loads(resources.files("envbench").joinpath("data/fine_classes.json").read_text("utf-8"))
    out: dict[str, str] = {}
    for word, qid in raw["context_cues"].items():
        out.setdefault(" ".join(singular(w) for w in word.split()), qid)
    return out


class NounClasses:
    """The classes each kind noun names in one index (the module docstring), with their P279 closures."""

    def __init__(self, con: Any, class_kinds: Mapping[str, str]) -> None:
        self.con = con
        self.by_word: dict[str, set[str]] = {}
        for word, qid in cue_classes().items():
            self.by_word.setdefault(word, set()).add(qid)
        for qid, word in class_kinds.items():
            self.by_word.setdefault(word, set()).add(qid)
        self.anc: dict[str, frozenset[str]] = {}
        self._fitting: dict[tuple[str, str], frozenset[str]] = {}
        self._learned: set[str] = set()  # the words whose learned class has been looked for

    def prepare(self, found: Iterable[KindNoun]) -> None:
        """Load the classes learned for the words of ``found`` that no class names, and the P279 closures of
        the classes they all name (batched; before :meth:`classes`)."""
        words = {w for kn in found for i, w in enumerate(kn.words) for w in (w, " ".join(kn.words[i - 1:i + 1]))}
        words |= {w for g in KIND_GROUPS if words & g for w in g}
        self.learn(sorted(w for w in words if " " not in w and w not in self.by_word and w not in self._learned))
        need = {c for w in words for c in self.by_word.get(w, ())} - self.anc.keys()
        if need:
            got = ancestors(self.con, need)
            self.anc.update(got)
            self.anc.update({c: frozenset({c}) for c in need - got.keys()})

    def learn(self, words: Sequence[str]) -> None:
        """The class learned for each of ``words`` from the index's names: the one P31 class (no catch-all) that
        at least ``LEARNED_MIN`` items whose English label (of two words or more) ends in the word (made
        singular) have, and at least ``LEARNED_SHARE`` of those items ("administration" -> government agency,
        from "Farm Security Administration" and "Food and Drug Administration")."""
        self._learned.update(words)
        if not words:
            return
        import duckdb

        forms = sorted({f for w in words for f in (w, w + "s", w + "es", w[:-1] + "ies")})
        register_rows(self.con, "_kn_words", ((f,) for f in forms), {"w": "VARCHAR"})
        try:
            rows = self.con.execute(
                """WITH named AS (SELECT id, lower(regexp_extract(label, '([A-Za-z]+)$', 1)) AS w FROM entities
                                  WHERE label LIKE '% %')
                   SELECT n.w, count(DISTINCT n.id), list(DISTINCT t.class ORDER BY t.class)
                   FROM named n JOIN types t ON t.id = n.id
                   WHERE t.rank IS DISTINCT FROM 'deprecated' AND n.w IN (SELECT w FROM _kn_words)
                   GROUP BY n.w, n.id ORDER BY 1""").fetchall()
        except duckdb.CatalogException:  # a bare connection (no index tables)
            return
        votes: dict[str, Counter[str]] = {}  # word -> class -> items named so that have it
        items: Counter[str] = Counter()  # word -> items named so
        for w, _, classes in rows:
            w = singular(w)
            items[w] += 1
            votes.setdefault(w, Counter()).update(c for c in classes if c not in CATCH_ALL_CLASSES)
        sizes = class_sizes(self.con, {c for v in votes.values() for c in v})
        for w in words:
            if not votes.get(w):
                continue
            # the most items; of classes as common, the smaller (the more specific: database management system
            # before software)
            top, k = min(votes[w].items(), key=lambda kv: (-kv[1], sizes.get(kv[0], 0), qid_number(kv[0])))
            if k >= LEARNED_MIN and k >= LEARNED_SHARE * items[w]:
                self.by_word.setdefault(w, set()).add(top)

    def names(self, word: str) -> bool:
        return word in self.by_word

    def classes(self, word: str, coarse: str) -> frozenset[str]:
        """The classes of ``word`` that may carry the coarse type (empty for a word no class names)."""
        key = (word, coarse)
        got = self._fitting.get(key)
        if got is None:
            group = next((g for g in KIND_GROUPS if word in g), None)
            if group is not None and group is not KIND_GROUPS[2] and coarse != "LOC":  # "the state Democratic Party" is no state
                self._fitting[key] = frozenset()
                return frozenset()
            words = group or (word,)
            got = self._fitting[key] = frozenset(
                c for w in words for c in self.by_word.get(w, ()) if fits_coarse(coarse, [c], self.anc))
        return got


def head_word(kn: KindNoun, nouns: NounClasses) -> str | None:
    """The word of a kind noun that names classes: its last word, or its last two as one kind ("soap opera");
    None when they name none ("a large city square off" names no kind: "city" only modifies it)."""
    words = kn.words
    if len(words) > 1 and nouns.names(pair := f"{words[-2]} {words[-1]}"):
        return pair
    return words[-1] if words and nouns.names(words[-1]) else None


def item_classes(types: Iterable[str], anc: Mapping[str, frozenset[str]]) -> frozenset[str]:
    """An item's P31 classes with all their P279 ancestors."""
    out: set[str] = set()
    for c in types:
        out |= anc.get(c, frozenset({c}))
    return frozenset(out)


def fits(classes: frozenset[str], kind: frozenset[str]) -> bool:
    """Whether an item whose classes and ancestors are ``classes`` is of a noun's kind (its ``classes``)."""
    return not classes.isdisjoint(kind)


def entity_kinds(found: Sequence[KindNoun], coarse: str, own: frozenset[str], nouns: NounClasses,
                 strong: bool = True, adjectival: bool = False) -> Kinds:
    """What the nouns ``found`` beside an entity's mentions ask of its new item (the module docstring), given
    its own item's classes and ancestors ``own``; ``strong=False`` asks only what the item itself fits. The
    noun after a name written as an adjective (``adjectival``: "the Fascist period", "the Dutch chart") is
    another thing's."""
    held: dict[str, frozenset[str]] = {}  # the nouns its own item is of
    plain: dict[str, frozenset[str]] = {}  # the nouns that plainly say the mention's kind, the item of it or not
    for kn in found:
        if kn.negated or coarse == "PER" or (adjectival and kn.pattern in ("after", "modifier")):
            continue
        word = head_word(kn, nouns)
        if word is None:
            continue
        kind = nouns.classes(word, coarse)
        if not kind:
            continue
        if fits(own, kind):
            held[word] = kind
        elif strong and kn.pattern in STRONG and (kn.pattern != "after" or coarse == "MISC"):
            plain[word] = kind
    # where the item is of one of the kinds its nouns say, those are asked: "Isle of Palms ... a city ... a barrier
    # island", an island, stays an island; where it is of none, the plain ones are ("the album Somewhere in
    # England", which the corpus KB typed a film)
    return tuple(sorted((held or plain).items()))


__all__ = ["Kinds", "NounClasses", "cue_classes", "entity_kinds", "fits", "head_word", "item_classes"]
