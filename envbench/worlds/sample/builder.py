"""Building one document: mentions placed in template sentences, then the gold labels from the world."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from envbench.core.relations import RELATIONS
from envbench.core.text import tokenize
from envbench.worlds.sample.names import MONTHS, NUMBER_WORDS
from envbench.worlds.sample.rng import Rng
from envbench.worlds.sample.world import COARSE_OF_CLASS, FINE_CLASSES, World


@dataclass
class Ref:
    """A mention to place in a sentence: entity key, surface name, DocRED type."""

    key: tuple[str, ...]
    name: str
    type: str


class DocBuilder:
    def __init__(self, world: World, title: str, rng: Rng, variant: int = 0) -> None:
        self.world = world
        self.variant = variant  # how many documents of this kind came before
        self.title = title
        self.rng = rng
        self.sents: list[list[str]] = []
        self.keys: list[tuple[str, ...]] = []
        self.mentions: list[list[dict[str, Any]]] = []
        self.links: list[str | None] = []
        self.time_facts: list[tuple[str, str, tuple[str, ...]]] = []
        self.num_facts: list[tuple[str, str, tuple[str, ...]]] = []

    # -- references
    def e(self, qid: str, name: str | None = None, *, first: bool = False, split: str = "") -> Ref:
        """An item mention: its label the first time, later often an alias."""
        it = self.world.items[qid]
        key = ("Q", qid, split)
        if name is None:
            if first or key not in self.keys or not it.aliases:
                name = it.label
            else:
                usable = [a for a in it.aliases if a != it.demonym]
                name = self.rng.choice(usable) if usable and self.rng.chance(0.6) else it.label
        return Ref(key, name, COARSE_OF_CLASS[FINE_CLASSES[it.cls][0]])

    def dem(self, qid: str, *, split: bool = False) -> Ref:
        """A country named by its demonym ("the Vordian singer"), typed LOC as DocRED does."""
        it = self.world.items[qid]
        return Ref(("Q", qid, "dem" if split else ""), it.demonym or it.label, "LOC")

    def time(self, qid: str, prop: str, style: str = "day") -> Ref:
        y, m, d, p = self.world.times[(qid, prop)]
        name = render_time(y, m, d, min(p, {"day": 11, "month": 10, "year": 9, "decade": 8}[style]))
        key = ("TIME", name)
        self.time_facts.append((qid, prop, key))
        return Ref(key, name, "TIME")

    def plain_time(self, text: str) -> Ref:
        return Ref(("TIME", text), text, "TIME")

    def num(self, text: str) -> Ref:
        return Ref(("NUM", text), text, "NUM")

    def num_fact(self, qid: str, prop: str) -> Ref:
        text = self.world.quantities[(qid, prop)].lstrip("+") + "%"
        key = ("NUM", text)
        self.num_facts.append((qid, prop, key))
        return Ref(key, text, "NUM")

    def other(self, name: str, type_: str) -> Ref:
        """An entity with no item (Linked-DocRED's #DocRED-n#)."""
        return Ref(("X", name), name, type_)

    # -- text
    def say(self, fmt: str, *refs: Ref | str) -> None:
        """Add a sentence; ``{}`` placeholders take the refs in order (plain strings are text)."""
        parts = fmt.split("{}")
        if len(parts) != len(refs) + 1:
            raise ValueError(f"template {fmt!r} needs {len(parts) - 1} refs, got {len(refs)}")
        tokens: list[str] = []
        sid = len(self.sents)
        for i, text in enumerate(parts):
            tokens.extend(tokenize(text))
            if i == len(refs):
                break
            ref = refs[i]
            if isinstance(ref, str):
                tokens.extend(tokenize(ref))
                continue
            toks = tokenize(ref.name)
            start = len(tokens)
            tokens.extend(toks)
            self._mention(ref, sid, start, start + len(toks))
        self.sents.append(tokens)

    def nested(self, outer: Ref, inner: Ref, sid: int, start: int) -> None:
        """Record ``inner`` as a mention nested in ``outer`` (already placed at ``start``)."""
        otoks = tokenize(outer.name)
        itoks = tokenize(inner.name)
        for off in range(len(otoks) - len(itoks) + 1):
            if otoks[off : off + len(itoks)] == itoks:
                self._mention(inner, sid, start + off, start + off + len(itoks))
                return

    def _mention(self, ref: Ref, sid: int, s: int, e: int) -> None:
        if ref.key not in self.keys:
            self.keys.append(ref.key)
            self.mentions.append([])
            self.links.append(ref.key[1] if ref.key[0] == "Q" else None)
        idx = self.keys.index(ref.key)
        self.mentions[idx].append({"name": ref.name, "pos": [s, e], "sent_id": sid, "type": ref.type})

    def find(self, ref: Ref) -> tuple[int, int] | None:
        """(sentence, start) of the last mention of ``ref``."""
        if ref.key not in self.keys:
            return None
        m = self.mentions[self.keys.index(ref.key)][-1]
        return m["sent_id"], m["pos"][0]

    # -- output
    def has(self, qid: str) -> bool:
        return ("Q", qid, "") in self.keys

    def build(self) -> tuple[dict[str, Any], list[str | None]]:
        sent_sets = [sorted({m["sent_id"] for m in ms}) for ms in self.mentions]
        labels: list[dict[str, Any]] = []
        seen: set[tuple[int, int, str]] = set()

        def add(h: int, t: int, r: str) -> None:
            if h == t or (h, t, r) in seen or r not in RELATIONS:
                return
            seen.add((h, t, r))
            common = sorted(set(sent_sets[h]) & set(sent_sets[t]))
            ev = [common[0]] if common else sorted({sent_sets[h][0], sent_sets[t][0]})
            labels.append({"r": r, "h": h, "t": t, "evidence": ev})

        item_idx = [(i, k[1]) for i, k in enumerate(self.keys) if k[0] == "Q"]
        for h, hq in item_idx:
            for t, tq in item_idx:
                if h == t:
                    continue
                for p in self.world.props_of.get(hq, ()):
                    if tq in self.world.edges.get((hq, p), []):
                        add(h, t, p)
        for qid, prop, key in self.time_facts + self.num_facts:
            for i, k in enumerate(self.keys):
                if k[0] == "Q" and k[1] == qid:
                    add(i, self.keys.index(key), prop)
        labels.sort(key=lambda lab: (lab["h"], lab["t"], int(lab["r"][1:])))
        doc = {"title": self.title, "sents": self.sents, "vertexSet": self.mentions, "labels": labels}
        return doc, self.links


def render_time(y: int, m: int, d: int, precision: int) -> str:
    if precision >= 11 and m and d:
        return f"{d} {MONTHS[m - 1]} {y}"
    if precision >= 10 and m:
        return f"{MONTHS[m - 1]} {y}"
    if precision == 8:
        return f"the {y // 10 * 10}s"
    return str(y)


def render_number(rng: Rng, lo: int, hi: int) -> str:
    """Numbers as documents write them: separators, decimals with a scale word, or number words."""
    n = rng.between(lo, hi)
    style = rng.below(4)
    if style == 0:
        return f"{n:,}"
    if style == 1 and n >= 1_000_000:
        return f"{n / 1_000_000:.1f} million"
    if style == 2 and 2 <= n <= 12:
        return NUMBER_WORDS[n - 2]
    return str(n)


def pronoun(world: World, qid: str) -> str:
    return "She" if world.items[qid].female else "He"


def at(ref: Ref) -> str:
    """The preposition before a date: "on 13 March 1963", "in March 1963", "in 1963"."""
    return "on" if ref.name[:1].isdigit() and " " in ref.name else "in"
