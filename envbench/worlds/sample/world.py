"""A deterministic sample world: a Wikidata-format dump, DocRED-format documents about its items,
the gold linking, and the test documents in the Linked-DocRED format.

Everything downstream (ingest, linking, typing, candidates, renaming, scoring) runs on these files
through the same code paths as on real data. Item names are synthetic; classes and properties are
real Wikidata ids. Item ids start at ``SAMPLE_QID_BASE`` (Q900000001...), above the ids Wikidata has
handed out, so a sample item never collides with a real one.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import orjson

from envbench.core.errors import EnvbenchError
from envbench.core.relations import RELATIONS
from envbench.core.seeding import derive_seed
from envbench.core.text import tokenize
from envbench.formats.docred import validate_documents
from envbench.worlds import wikidata_json as wj
from envbench.worlds.type_table import load_type_table
from etl.io import write_json_atomic

T = TypeVar("T")

SAMPLE_QID_BASE = 900_000_000
DEFAULT_ENTITIES = 1200
DEFAULT_DOCS = 100
SPLIT_CYCLE = ("train", "dev", "train", "test", "train")  # 60/20/20
SMALL_SPLIT_CYCLE = ("train", "dev", "test", "train")  # under 5 documents: every split gets one

# key -> (class QID, DocRED coarse type, weight in the item budget)
FINE_CLASSES: dict[str, tuple[str, str, int]] = {
    "human": ("Q5", "PER", 4),
    "band": ("Q215380", "ORG", 1),
    "country": ("Q6256", "LOC", 1),
    "city": ("Q515", "LOC", 1),
    "province": ("Q10864048", "LOC", 1),
    "river": ("Q4022", "LOC", 1),
    "mountain": ("Q8502", "LOC", 1),
    "label": ("Q18127", "ORG", 1),
    "company": ("Q783794", "ORG", 1),
    "university": ("Q3918", "ORG", 1),
    "club": ("Q476028", "ORG", 1),
    "league": ("Q623109", "ORG", 1),
    "party": ("Q7278", "ORG", 1),
    "film": ("Q11424", "MISC", 1),
    "album": ("Q482994", "MISC", 1),
    "song": ("Q7366", "MISC", 1),
    "novel": ("Q8261", "MISC", 1),
    "award": ("Q618779", "MISC", 1),
    "language": ("Q34770", "MISC", 1),
    "tvseries": ("Q5398426", "MISC", 1),
}
COARSE_OF_CLASS = {q: c for q, c, _ in FINE_CLASSES.values()}

# ---------------------------------------------------------------------------------------------
# A small seeded generator (splitmix64): stable across Python versions, unlike random.Random's
# choice/shuffle algorithms.


class Rng:
    def __init__(self, *keys: object) -> None:
        self.state = derive_seed(*keys)

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        return self.next() % n

    def chance(self, p: float) -> bool:
        return self.next() / 2**64 < p

    def choice(self, seq: Sequence[T]) -> T:
        return seq[self.below(len(seq))]

    def sample(self, seq: Sequence[T], k: int) -> list[T]:
        pool = list(seq)
        out: list[T] = []
        for _ in range(min(k, len(pool))):
            out.append(pool.pop(self.below(len(pool))))
        return out

    def between(self, lo: int, hi: int) -> int:
        """An integer in [lo, hi]."""
        return lo + self.below(hi - lo + 1)


# ---------------------------------------------------------------------------------------------
# Names

GIVEN_M = ("John", "Peter", "Michael", "David", "Carlos", "Luca", "Ivan", "Tomas", "Ahmed", "Kenji",
           "Oliver", "Samuel", "Mateo", "Henrik", "Pablo", "Arjun", "Felix", "Victor", "Hugo", "Omar",
           "Jean-Paul", "Marco", "Stefan", "Daniel", "Rafael", "Anton", "Leo", "Nikolai", "Emil", "Andre")
GIVEN_F = ("Mary", "Anna", "Sofia", "Elena", "Maria", "Yuki", "Amira", "Laura", "Clara", "Ingrid",
           "Lucia", "Nadia", "Priya", "Chloe", "Emma", "Ines", "Marta", "Zofia", "Hana", "Olga",
           "Anne-Marie", "Julia", "Rosa", "Alice", "Vera", "Lena", "Irene", "Paula", "Mei", "Greta")
SYL = ("ka", "lo", "mi", "ra", "ven", "dor", "tal", "bri", "sen", "mar", "el", "an", "or", "ith", "ul",
       "bel", "cor", "dan", "fen", "gar", "hal", "jor", "kel", "lan", "mor", "nor", "pel", "ros", "sar",
       "tor", "val", "wen", "yar", "zel", "bra", "cas", "del", "fir", "gol", "hes", "kir", "lus", "nem",
       "os", "pra", "quin", "rud", "sil", "tam", "ver")
SURNAME_END = ("son", "ez", "ov", "ski", "berg", "ton", "er", "man", "ini", "ard", "", "", "")
ADJ = ("Blue", "Silent", "Golden", "Broken", "Wild", "Hidden", "Last", "Electric", "Midnight", "Crimson",
       "Quiet", "Burning", "Distant", "Hollow", "Iron", "Velvet", "Summer", "Winter", "Northern", "Paper",
       "Glass", "Lonely", "Bright", "Dark", "Sacred", "Secret", "Final", "Endless", "Little", "Frozen")
NOUN = ("Rain", "River", "Heart", "Road", "Garden", "Storm", "Light", "Shadow", "Mirror", "Dream",
        "Fire", "Harbor", "Sky", "Stone", "Kingdom", "Voice", "Song", "Echo", "Horizon", "Letter",
        "Tide", "Crown", "Orchard", "Engine", "Lantern", "Island", "Promise", "Signal", "Wolf", "Bridge")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")
NUMBER_WORDS = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def word(rng: Rng, lo: int = 2, hi: int = 3) -> str:
    return _cap("".join(rng.choice(SYL) for _ in range(rng.between(lo, hi))))


def _initials(name: str) -> str:
    return "".join(w[0] for w in name.replace("-", " ").split() if w[:1].isalpha() and w[0].isupper())


@dataclass
class Item:
    qid: str
    cls: str  # FINE_CLASSES key
    label: str
    aliases: list[str] = field(default_factory=list)
    other_labels: dict[str, str] = field(default_factory=dict)
    demonym: str | None = None
    female: bool = False
    # (property, kind, value, rank, snaktype); kind is "item", "time" or "quantity"
    claims: list[tuple[str, str, Any, str, str]] = field(default_factory=list)
    extra_types: list[tuple[str, str, str]] = field(default_factory=list)  # (class, rank, snaktype)

    @property
    def names(self) -> list[str]:
        return [self.label, *self.aliases]


def _alias_budget(rng: Rng) -> int:
    # 0-5 aliases, skewed low as on Wikidata.
    return (0, 0, 1, 1, 1, 2, 2, 3, 4, 5)[rng.below(10)]


def make_names(cls: str, rng: Rng, ctx: dict[str, Any]) -> tuple[str, list[str], dict[str, Any]]:
    """Label, candidate aliases (most natural first) and extras for one item of class ``cls``."""
    extra: dict[str, Any] = {}
    if cls == "human":
        female = rng.chance(0.45)
        given = rng.choice(GIVEN_F if female else GIVEN_M)
        sur = word(rng, 2, 2) + rng.choice(SURNAME_END)
        if rng.chance(0.08):
            sur = "O'" + sur
        label = f"{given} {sur}"
        middle = rng.choice(GIVEN_F if female else GIVEN_M).split("-")[0]
        cands = [sur, f"{given[0]}. {sur}", f"{given} {middle} {sur}", f"{given[:3]} {sur}",
                 f"{given} {word(rng, 2, 2)}"]  # surname, initial, full birth name, short form, former name
        extra["female"] = female
        return label, cands, extra
    w = word(rng)
    if cls == "country":
        base = w + rng.choice(("land", "ia", "stan", "ora", "ium", "ary"))
        dem = base.rstrip("aiy") + rng.choice(("ian", "ese", "ic"))
        extra["demonym"] = dem
        return base, [dem, f"Republic of {base}", _initials("Republic Of " + base) or base[:2].upper(), f"Kingdom of {base}"], extra
    if cls == "city":
        pre = rng.choice(("", "", "", "St. ", "Port ", "New "))
        label = pre + w + rng.choice(("ton", "ville", "burg", "ford", "port", "field", "haven", ""))
        return label, [f"{label} City", f"Old {w}", f"Greater {label}"], extra
    if cls == "province":
        return f"{w} Province", [w, f"{w} Region", f"Province of {w}"], extra
    if cls == "river":
        return f"{w} River", [f"River {w}", w], extra
    if cls == "mountain":
        return f"Mount {w}", [w, f"{w} Peak"], extra
    if cls == "label":
        if rng.chance(0.25):
            w2 = word(rng)
            return f"{w} & {w2} Records", [f"{w} & {w2}", f"{w[0]}&{w2[0]} Records"], extra
        return f"{w} Records", [w, f"{w} Music", f"{w} Recordings"], extra
    if cls == "company":
        suffix = rng.choice(("Industries", "Corporation", "Group", "Ltd.", "Inc.", "Holdings"))
        return f"{w} {suffix}", [w, f"{w} Corp.", f"{_initials(w + ' ' + suffix)}"], extra
    if cls == "university":
        city = ctx.get("city_label")
        if city and rng.chance(0.5):
            return f"University of {city}", [f"{city} University", f"U{city[0]}"], extra
        return f"{w} University", [f"{w} U", f"{w[0]}U", f"{w} College"], extra
    if cls == "club":
        city = ctx.get("city_label") or w
        form = rng.below(3)
        if form == 0:
            return f"{city} F.C.", [city, f"{city} Football Club"], extra
        if form == 1:
            return f"{city} United", [city, f"{city} Utd"], extra
        return f"Real {w}", [w, f"Real {w} C.F."], extra
    if cls == "league":
        return f"{w} Premier League", [f"{w} League", f"{w[0]}PL"], extra
    if cls == "party":
        adj = rng.choice(("Democratic", "Liberal", "Progressive", "National", "Green", "Labour"))
        label = f"{adj} Party of {w}"
        return label, [_initials(label.replace(" of ", " ")), f"{w} {adj}s"], extra
    if cls == "band":
        form = rng.below(3)
        if form == 0:
            adj, noun = rng.choice(ADJ), rng.choice(NOUN)
            return f"The {adj} {noun}s", [f"{adj} {noun}s", f"the {noun}s", f"T{adj[0]}{noun[0]}"], extra
        if form == 1:
            w2 = word(rng, 1, 2)
            return f"{w}/{w2}", [f"{w} and {w2}", w], extra
        noun = rng.choice(NOUN)
        return f"{w} {noun}", [w, f"{w} {noun} Band"], extra
    if cls in ("album", "song", "tvseries"):
        label = f"{rng.choice(ADJ)} {rng.choice(NOUN)}" if rng.chance(0.7) else f"{rng.choice(NOUN)} of {w}"
        return label, [f"{label} (Deluxe Edition)" if cls == "album" else f"{label} (Remix)", label.split()[-1]], extra
    if cls in ("film", "novel"):
        label = f"The {rng.choice(NOUN)} of {w}" if rng.chance(0.6) else f"{rng.choice(ADJ)} {rng.choice(NOUN)}"
        return label, [f"{label}: Part One", label.replace("The ", "")], extra
    if cls == "award":
        field_ = rng.choice(("Music", "Literature", "Film", "Science", "Journalism"))
        return f"{w} Prize for {field_}", [f"{w} Prize", f"{w} Award"], extra
    if cls == "language":
        return w + rng.choice(("ish", "ese", "i", "ic")), [f"{w} language"], extra
    raise ValueError(cls)


# ---------------------------------------------------------------------------------------------
# The world


@dataclass
class World:
    items: dict[str, Item] = field(default_factory=dict)
    by_class: dict[str, list[str]] = field(default_factory=dict)
    edges: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (subject, prop) -> objects
    times: dict[tuple[str, str], tuple[int, int, int, int]] = field(default_factory=dict)  # y, m, d, precision
    quantities: dict[tuple[str, str], str] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)  # human qid -> role
    props_of: dict[str, list[str]] = field(default_factory=dict)  # subject -> item-valued properties
    enwiki: dict[str, str] = field(default_factory=dict)  # qid -> English Wikipedia title (unique)

    def add(self, item: Item) -> None:
        self.items[item.qid] = item
        self.by_class.setdefault(item.cls, []).append(item.qid)

    def link(self, s: str, p: str, o: str, rank: str = "normal") -> None:
        if o in self.edges.get((s, p), []):
            return
        self.items[s].claims.append((p, "item", o, rank, "value"))
        if rank != "deprecated":
            if (s, p) not in self.edges:
                self.props_of.setdefault(s, []).append(p)
            self.edges.setdefault((s, p), []).append(o)

    def set_time(self, s: str, p: str, y: int, m: int = 0, d: int = 0, precision: int = 11) -> None:
        self.items[s].claims.append((p, "time", (y, m, d, precision), "normal", "value"))
        self.times[(s, p)] = (y, m, d, precision)

    def set_quantity(self, s: str, p: str, amount: str) -> None:
        self.items[s].claims.append((p, "quantity", amount, "normal", "value"))
        self.quantities[(s, p)] = amount

    def special(self, s: str, p: str, snaktype: str) -> None:
        self.items[s].claims.append((p, "item", None, "normal", snaktype))

    def objs(self, s: str, p: str) -> list[str]:
        return self.edges.get((s, p), [])

    def obj(self, s: str, p: str) -> str | None:
        o = self.edges.get((s, p))
        return o[0] if o else None

    def cls(self, key: str) -> list[str]:
        return self.by_class.get(key, [])


def class_sizes(entities: int) -> dict[str, int]:
    total_w = sum(w for _, _, w in FINE_CLASSES.values())
    return {k: max(6, entities * w // total_w) for k, (_, _, w) in FINE_CLASSES.items()}


def build_world(seed: int, entities: int) -> World:
    """Items, names and claims; relation claims are consistent with the type table's constraints."""
    rng = Rng(seed, "world")
    sizes = class_sizes(entities)
    world = World()
    used: set[str] = set()
    counter = [SAMPLE_QID_BASE]

    def new(cls: str, ctx: dict[str, Any] | None = None) -> Item:
        r = Rng(seed, "names", cls, len(world.cls(cls)))
        for attempt in range(50):
            label, cands, extra = make_names(cls, r, ctx or {})
            if label not in used or attempt == 49:
                break
        used.add(label)
        counter[0] += 1
        it = Item(f"Q{counter[0]}", cls, label, demonym=extra.get("demonym"), female=extra.get("female", False))
        k = _alias_budget(r)
        if extra.get("demonym"):
            k = max(k, 1)  # a demonym is how documents name a country's people ("the Vordian singer")
        seen = {label}
        for c in cands:
            if len(it.aliases) >= k:
                break
            if c and c not in seen:
                it.aliases.append(c)
                seen.add(c)
        if r.chance(0.3):
            it.other_labels["de"] = label
        if r.chance(0.15):
            it.other_labels["fr"] = label.replace("The ", "Les ") if label.startswith("The ") else label
        world.add(it)
        return it

    def date(lo: int, hi: int, precision: int = 11) -> tuple[int, int, int, int]:
        y = rng.between(lo, hi)
        m = rng.between(1, 12) if precision >= 10 else 0
        d = rng.between(1, 28) if precision >= 11 else 0
        return y, m, d, precision

    # Places
    for _ in range(sizes["language"]):
        new("language")
    for i in range(sizes["country"]):
        c = new("country")
        if i % 2 == 0:  # a second, preferred-rank type, as many countries have on Wikidata
            c.extra_types.append(("Q3624078", "preferred", "value"))
        world.link(c.qid, "P37", world.cls("language")[i % len(world.cls("language"))])
        if rng.chance(0.5):
            world.set_quantity(c.qid, "P1198", f"{rng.between(20, 150) / 10:.1f}")
    countries = world.cls("country")
    for i in range(sizes["province"]):
        p = new("province")
        k = countries[i % len(countries)]
        world.link(p.qid, "P17", k)
        world.link(p.qid, "P131", k)
        world.link(k, "P150", p.qid)
    provinces = world.cls("province")
    for i in range(sizes["city"]):
        c = new("city")
        if i % 4 == 1:  # a redundant superclass type next to the specific one
            c.extra_types.append(("Q486972", "normal", "value"))
        p = provinces[i % len(provinces)]
        k = world.obj(p, "P17")
        assert k is not None
        world.link(c.qid, "P17", k)
        world.link(c.qid, "P131", p)
        world.link(p, "P150", c.qid)
        if not world.obj(k, "P36"):
            world.link(k, "P36", c.qid)
            world.link(c.qid, "P1376", k)
    cities = world.cls("city")
    cities_of: dict[str, list[str]] = {}
    for c in cities:
        cities_of.setdefault(world.obj(c, "P17") or "", []).append(c)
    for i in range(sizes["river"]):
        r = new("river")
        k = countries[i % len(countries)]
        world.link(r.qid, "P17", k)
        world.link(r.qid, "P205", k)
        for c in cities_of.get(k, [])[:2]:
            if not world.obj(c, "P206"):
                world.link(c, "P206", r.qid)
    for i in range(sizes["mountain"]):
        m = new("mountain")
        p = provinces[(i * 7) % len(provinces)]
        world.link(m.qid, "P17", world.obj(p, "P17") or countries[0])
        world.link(m.qid, "P131", p)

    # Organisations
    for i in range(sizes["league"]):
        lg = new("league")
        world.link(lg.qid, "P17", countries[i % len(countries)])
    leagues_of: dict[str, list[str]] = {}
    for lg in world.cls("league"):
        leagues_of.setdefault(world.obj(lg, "P17") or "", []).append(lg)
    for i in range(sizes["university"]):
        city = cities[(i * 3) % len(cities)]
        u = new("university", {"city_label": world.items[city].label})
        world.link(u.qid, "P131", city)
        world.link(u.qid, "P17", world.obj(city, "P17") or countries[0])
        world.set_time(u.qid, "P571", *date(1200, 1970, 9))
    for i in range(sizes["club"]):
        city = cities[(i * 5 + 1) % len(cities)]
        cl = new("club", {"city_label": world.items[city].label})
        k = world.obj(city, "P17") or countries[0]
        world.link(cl.qid, "P17", k)
        world.link(cl.qid, "P131", city)
        if leagues_of.get(k):
            world.link(cl.qid, "P118", rng.choice(leagues_of[k]))
        world.set_time(cl.qid, "P571", *date(1870, 1990, 9))
    for i in range(sizes["company"]):
        city = cities[(i * 11 + 2) % len(cities)]
        co = new("company")
        world.link(co.qid, "P17", world.obj(city, "P17") or countries[0])
        world.link(co.qid, "P159", city)
        world.set_time(co.qid, "P571", *date(1850, 2005, rng.choice((9, 10, 11))))
    companies = world.cls("company")
    for i in range(sizes["label"]):
        city = cities[(i * 13 + 3) % len(cities)]
        lb = new("label")
        world.link(lb.qid, "P17", world.obj(city, "P17") or countries[0])
        world.link(lb.qid, "P159", city)
        world.set_time(lb.qid, "P571", *date(1920, 2005, 9))
        if rng.chance(0.3):
            parent = rng.choice(companies)
            world.link(lb.qid, "P749", parent)
            world.link(parent, "P355", lb.qid)
    labels = world.cls("label")
    for i in range(sizes["party"]):
        k = countries[i % len(countries)]
        pt = new("party")
        world.link(pt.qid, "P17", k)
        world.link(pt.qid, "P159", world.obj(k, "P36") or cities[0])
        world.set_time(pt.qid, "P571", *date(1850, 2010, 9))
    for i in range(sizes["award"]):
        aw = new("award")
        world.link(aw.qid, "P17", countries[i % len(countries)])

    # People
    roles = ("musician", "musician", "musician", "actor", "writer", "director", "politician",
             "footballer", "business", "actor")
    univ = world.cls("university")
    awards = world.cls("award")
    parties_of: dict[str, list[str]] = {}
    for pt in world.cls("party"):
        parties_of.setdefault(world.obj(pt, "P17") or "", []).append(pt)
    clubs = world.cls("club")
    for i in range(sizes["human"]):
        h = new("human")
        role = roles[i % len(roles)]
        world.roles[h.qid] = role
        k = countries[rng.below(len(countries))]
        birth = rng.choice(cities_of.get(k) or cities)
        if i % 97 == 13:
            world.special(h.qid, "P27", "novalue")  # stateless
        else:
            world.link(h.qid, "P27", k)
        if i % 89 == 7:
            world.special(h.qid, "P19", "somevalue")  # unknown place of birth
        else:
            world.link(h.qid, "P19", birth)
        y, m, d, _ = date(1920, 1995)
        world.set_time(h.qid, "P569", y, m, d, 11)
        if y < 1950 and rng.chance(0.5):
            world.set_time(h.qid, "P570", *date(max(y + 30, 1970), 2020))
            world.link(h.qid, "P20", rng.choice(cities))
        if rng.chance(0.5):
            world.link(h.qid, "P69", rng.choice(univ))
        lang = world.obj(k, "P37")
        if lang:
            world.link(h.qid, "P1412", lang)
        if rng.chance(0.2):
            world.link(h.qid, "P166", rng.choice(awards))
        if role == "politician" and parties_of.get(k):
            world.link(h.qid, "P102", rng.choice(parties_of[k]))
        if role == "footballer":
            world.link(h.qid, "P54", rng.choice(clubs))
        if role == "business":
            world.link(h.qid, "P108", rng.choice(companies))
        if i % 61 == 5:
            world.items[h.qid].extra_types.append(("Q515", "deprecated", "value"))  # a vandalised, deprecated type
        if i % 71 == 3:
            world.items[h.qid].extra_types.append(("", "normal", "somevalue"))
    humans = world.cls("human")
    by_role: dict[str, list[str]] = {}
    for h in humans:
        by_role.setdefault(world.roles[h], []).append(h)
    # Families: spouses, parents and siblings between neighbours in the list.
    for i in range(0, len(humans) - 2, 9):
        a, b, c = humans[i], humans[i + 1], humans[i + 2]
        world.link(a, "P26", b)
        world.link(b, "P26", a)
        world.link(a, "P40", c)
        world.link(c, "P25" if world.items[a].female else "P22", a)
    for i in range(4, len(humans) - 1, 23):
        a, b = humans[i], humans[i + 1]
        world.link(a, "P3373", b)
        world.link(b, "P3373", a)
    for pt in world.cls("party"):
        pol = by_role.get("politician") or humans
        world.link(pt, "P488", rng.choice(pol))
    for co in companies:
        world.link(co, "P112", rng.choice(by_role.get("business") or humans))

    # Music
    musicians = by_role.get("musician", humans)
    mi = 0
    for b in range(sizes["band"]):
        band = new("band")
        n_members = rng.between(2, 4)
        members = [musicians[(mi + j) % len(musicians)] for j in range(n_members)]
        mi += n_members
        k = world.obj(members[0], "P27") or countries[0]
        world.link(band.qid, "P495", k)
        world.link(band.qid, "P740", rng.choice(cities_of.get(k) or cities))
        world.link(band.qid, "P264", labels[b % len(labels)])
        prec = 8 if rng.chance(0.3) else 9
        y = rng.between(1960, 2010)
        world.set_time(band.qid, "P571", y // 10 * 10 if prec == 8 else y, 0, 0, prec)
        for m_ in members:
            world.link(band.qid, "P527", m_)
            world.link(m_, "P463", band.qid)
            if not world.obj(m_, "P264"):
                world.link(m_, "P264", labels[b % len(labels)])
    for n, m_ in enumerate(musicians):
        other = musicians[(n * 7 + 3) % len(musicians)]
        if n % 2 == 0 and other != m_:
            world.link(m_, "P737", other)
    performers = world.cls("band") + [m for m in musicians if not world.obj(m, "P463")]
    albums_of: dict[str, list[str]] = {}
    for a in range(sizes["album"]):
        perf = performers[a % len(performers)]
        al = new("album")
        world.link(al.qid, "P175", perf)
        lbl = world.obj(perf, "P264") or labels[a % len(labels)]
        if not world.obj(perf, "P264"):
            world.link(perf, "P264", lbl)
        world.link(al.qid, "P264", lbl)
        prev = albums_of.get(perf, [])
        y0 = world.times[(prev[-1], "P577")][0] + rng.between(1, 4) if prev else rng.between(1965, 2012)
        world.set_time(al.qid, "P577", *(min(y0, 2023), *date(0, 0)[1:3], rng.choice((9, 10, 11, 11))))
        if prev:
            world.link(al.qid, "P155", prev[-1])
            world.link(prev[-1], "P156", al.qid)
        albums_of.setdefault(perf, []).append(al.qid)
    albums = world.cls("album")
    for s in range(sizes["song"]):
        al = albums[s % len(albums)]
        title_track = s % 7 == 3
        if title_track:
            song = new("song")
            used.discard(song.label)
            song.label = world.items[al].label  # the title track shares the album's name
            song.aliases = [a for a in song.aliases if a != song.label][:1]
        else:
            song = new("song")
        perf = world.obj(al, "P175")
        assert perf is not None
        world.link(song.qid, "P175", perf)
        world.link(song.qid, "P361", al)
        world.link(al, "P527", song.qid)
        y, m, d, prec = world.times[(al, "P577")]
        world.set_time(song.qid, "P577", y, m, d, prec)
        writers = world.objs(perf, "P527") or [perf]
        if world.items[writers[0]].cls == "human":
            world.link(song.qid, "P86", rng.choice(writers))
            if rng.chance(0.5):
                world.link(song.qid, "P676", rng.choice(writers))

    # Screen and print
    directors = by_role.get("director", humans)
    actors = by_role.get("actor", humans)
    writers_ = by_role.get("writer", humans)
    langs = world.cls("language")
    for f in range(sizes["film"]):
        fm = new("film")
        d_ = directors[f % len(directors)]
        world.link(fm.qid, "P57", d_)
        world.link(fm.qid, "P58", rng.choice([d_, *writers_[:5]]) if f % 3 else d_)
        for a in rng.sample(actors, 3):
            world.link(fm.qid, "P161", a)
        k = world.obj(d_, "P27") or countries[0]
        world.link(fm.qid, "P495", k)
        world.link(fm.qid, "P364", world.obj(k, "P37") or langs[0])
        world.link(fm.qid, "P272", companies[f % len(companies)])
        world.set_time(fm.qid, "P577", *date(1950, 2022, rng.choice((9, 11, 11))))
        if rng.chance(0.2):
            world.link(fm.qid, "P166", rng.choice(awards))
        if not world.obj(d_, "P800"):
            world.link(d_, "P800", fm.qid)
    novels_of: dict[str, list[str]] = {}
    for n in range(sizes["novel"]):
        nv = new("novel")
        au = writers_[n % len(writers_)]
        world.link(nv.qid, "P50", au)
        world.link(nv.qid, "P123", companies[(n * 3) % len(companies)])
        k = world.obj(au, "P27") or countries[0]
        world.link(nv.qid, "P495", k)
        world.link(nv.qid, "P364", world.obj(k, "P37") or langs[0])
        prev = novels_of.get(au, [])
        y0 = world.times[(prev[-1], "P577")][0] + rng.between(1, 5) if prev else rng.between(1940, 2015)
        world.set_time(nv.qid, "P577", min(y0, 2023), 0, 0, 9)
        if prev:
            world.link(nv.qid, "P155", prev[-1])
            world.link(prev[-1], "P156", nv.qid)
        novels_of.setdefault(au, []).append(nv.qid)
        if not world.obj(au, "P800"):
            world.link(au, "P800", nv.qid)
    for t in range(sizes["tvseries"]):
        tv = new("tvseries")
        for a in rng.sample(actors, 2):
            world.link(tv.qid, "P161", a)
        k = countries[(t * 7) % len(countries)]
        world.link(tv.qid, "P495", k)
        world.link(tv.qid, "P364", world.obj(k, "P37") or langs[0])
        world.set_time(tv.qid, "P577", *date(1970, 2022, 11))
    # Roughly a third of the items have no English Wikipedia page (fewer sitelinks, lower popularity).
    # Titles are unique per site, as on Wikipedia: homonyms get a disambiguating class in brackets.
    table = load_type_table()
    titles: set[str] = set()
    for qid, it in world.items.items():
        if int(qid[1:]) % 3 == 0:
            continue
        title = it.label
        if title in titles:
            title = f"{it.label} ({table.classes[FINE_CLASSES[it.cls][0]].label})"
        n = 2
        base = title
        while title in titles:
            title = f"{base[:-1]} {n})"
            n += 1
        titles.add(title)
        world.enwiki[qid] = title
    return world


# ---------------------------------------------------------------------------------------------
# Dump


def _time_tuple(v: tuple[int, int, int, int]) -> dict[str, Any]:
    y, m, d, p = v
    return wj.time_value(y, m if p >= 10 else 0, d if p >= 11 else 0, p)


def item_entity(world: World, it: Item) -> wj.Entity:
    cls_q = FINE_CLASSES[it.cls][0]
    claims: dict[str, list[wj.Statement]] = {"P31": [wj.item_statement(it.qid, "P31", cls_q)]}
    for n, (c, rank, snaktype) in enumerate(it.extra_types):
        if snaktype == "value":
            claims["P31"].append(wj.item_statement(it.qid, "P31", c, rank=rank))
        else:
            claims["P31"].append(wj.statement(it.qid, "P31", None, "wikibase-item", snaktype=snaktype, key=f"special{n}"))
    for n, (p, kind, value, rank, snaktype) in enumerate(it.claims):
        lst = claims.setdefault(p, [])
        if snaktype != "value":
            lst.append(wj.statement(it.qid, p, None, "wikibase-item", snaktype=snaktype, key=f"special{n}"))
        elif kind == "item":
            lst.append(wj.item_statement(it.qid, p, value, rank=rank))
        elif kind == "time":
            lst.append(wj.statement(it.qid, p, _time_tuple(value), "time", key=n))
        else:
            lst.append(wj.statement(it.qid, p, wj.quantity_value(value), "quantity", key=n))
    labels = {"en": it.label, **it.other_labels}
    desc = {"en": f"sample {load_type_table().classes[cls_q].label}"}
    page = world.enwiki.get(it.qid)
    sitelinks = {"enwiki": page} if page else {}
    if page and "de" in it.other_labels:
        sitelinks["dewiki"] = it.other_labels["de"]
    return wj.item(it.qid, labels=labels, descriptions=desc, aliases={"en": it.aliases}, claims=claims, sitelinks=sitelinks)


LEAN_CHUNK = 1000  # filler items per seeded stream; output does not depend on anything else


def lean_entities(seed: int, start: int, count: int, first: int = 0) -> Iterator[wj.Entity]:
    """Filler items ``first`` .. ``count - 1`` (names and P31 only), one at a time (constant memory).

    Item n is Q(start + n) and depends only on (seed, n), so chunks can be made in any process.
    """
    keys = list(FINE_CLASSES)
    r = Rng(seed, "lean", first // LEAN_CHUNK)
    for n in range(first, count):
        if n % LEAN_CHUNK == 0 or n == first:  # one hash per chunk, not per item, keeps this fast
            r = Rng(seed, "lean", n // LEAN_CHUNK)
        cls = keys[n % len(keys)]
        label, cands, _ = make_names(cls, r, {})
        k = _alias_budget(r)
        aliases = [c for c in dict.fromkeys(cands) if c != label][:k]
        qid = f"Q{start + n}"
        guid = f"{r.next():016X}{r.next():016X}"
        yield {
            "type": "item",
            "id": qid,
            "labels": {"en": {"language": "en", "value": label}},
            "descriptions": {},
            "aliases": {"en": [{"language": "en", "value": a} for a in aliases]} if aliases else {},
            "claims": {"P31": [{
                "mainsnak": {"snaktype": "value", "property": "P31",
                             "datavalue": wj.entity_value(FINE_CLASSES[cls][0]), "datatype": "wikibase-item"},
                "type": "statement",
                "id": f"{qid}${guid[:8]}-{guid[8:12]}-{guid[12:16]}-{guid[16:20]}-{guid[20:32]}",
                "rank": "normal",
            }]},
            "sitelinks": {},
        }


def _lean_block(args: tuple[int, int, int, int]) -> bytes:
    """Dump lines for filler items [n0, n1), joined as the dump writes them."""
    seed, start, n0, n1 = args
    return b",\n".join(orjson.dumps(e) for e in lean_entities(seed, start, n1, first=n0))


def write_lean(writer: wj.DumpWriter, seed: int, start: int, count: int, workers: int | None = None,
               block: int = 20 * LEAN_CHUNK) -> None:
    """Stream ``count`` filler items into ``writer``, in blocks made by worker processes, in order.

    The items do not depend on ``workers`` or ``block`` (a multiple of ``LEAN_CHUNK``); the gzip
    bytes depend on ``block`` only, which is why the dump writer always uses the default.
    """
    if block % LEAN_CHUNK:
        raise ValueError(f"block must be a multiple of {LEAN_CHUNK}")
    tasks = [(seed, start, n0, min(n0 + block, count)) for n0 in range(0, count, block)]
    workers = workers or min(8, os.cpu_count() or 1)
    if workers <= 1 or len(tasks) <= 2:
        for t in tasks:
            writer.write_raw(_lean_block(t), t[3] - t[2])
        return
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(workers) as pool:
        # imap keeps order and holds only a few blocks in memory at a time.
        for t, data in zip(tasks, pool.imap(_lean_block, tasks, chunksize=1)):
            writer.write_raw(data, t[3] - t[2])


# ---------------------------------------------------------------------------------------------
# Documents


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


def _pronoun(world: World, qid: str) -> str:
    return "She" if world.items[qid].female else "He"


def at(ref: Ref) -> str:
    """The preposition before a date: "on 13 March 1963", "in March 1963", "in 1963"."""
    return "on" if ref.name[:1].isdigit() and " " in ref.name else "in"


def doc_musician(b: DocBuilder, h: str) -> None:
    w = b.world
    band = w.obj(h, "P463")
    k = w.obj(h, "P27")
    city = w.obj(h, "P19")
    he = _pronoun(w, h)
    split = b.variant % 3 == 0  # every third musician document annotates the demonym as its own entity
    if k:
        b.say("{} ( born {} ) is a {} singer , songwriter and guitarist .", b.e(h, first=True), b.time(h, "P569"),
              b.dem(k, split=split))
    else:
        b.say("{} ( born {} ) is a singer , songwriter and guitarist .", b.e(h, first=True), b.time(h, "P569"))
    if city:
        prov = w.obj(city, "P131")
        uni = w.obj(h, "P69")
        if prov and uni:
            b.say("Born in {} , {} , {} studied music at {} .", b.e(city, first=True), b.e(prov, first=True), b.e(h), b.e(uni, first=True))
        elif prov:
            b.say("Born in {} , {} , {} began performing in local clubs as a teenager .", b.e(city, first=True),
                  b.e(prov, first=True), b.e(h))
    if band:
        members = [m for m in w.objs(band, "P527") if m != h]
        b.say("In {} {} co-founded {} with {} .", b.time(band, "P571", "year"), b.e(h), b.e(band, first=True),
              b.e(members[0], first=True) if members else b.e(h))
        perf = band
    else:
        perf = h
        b.say("{} launched a solo career soon afterwards .", he)
    lbl = w.obj(perf, "P264")
    albums = [a for a in w.cls("album") if w.obj(a, "P175") == perf][:2]
    if lbl and albums:
        t = b.time(albums[0], "P577")
        b.say("{} signed with {} and released the album {} " + at(t) + " {} .", b.e(perf), b.e(lbl, first=True),
              b.e(albums[0], first=True), t)
        songs = w.objs(albums[0], "P527")
        if songs:
            b.say("{} sold more than {} copies and produced the single \" {} \" .", b.e(albums[0]),
                  b.num(render_number(b.rng, 50_000, 3_000_000)), b.e(songs[0], first=True))
    if len(albums) > 1:
        songs2 = w.objs(albums[1], "P527")
        if songs2:
            b.say("The follow-up , {} , appeared in {} and included \" {} \" .", b.e(albums[1], first=True),
                  b.time(albums[1], "P577", "year"), b.e(songs2[-1], first=True))
    infl = w.obj(h, "P737")
    if infl:
        b.say("{} has named {} as {} main influence .", b.e(h), b.e(infl, first=True), "her" if w.items[h].female else "his")
    aw = w.obj(h, "P166")
    if aw:
        b.say("{} received the {} in {} .", b.e(h), b.e(aw, first=True), b.plain_time(str(b.rng.between(1990, 2022))))
    sp = w.obj(h, "P26")
    if sp:
        b.say("{} has been married to {} since {} .", b.e(h), b.e(sp, first=True), b.plain_time(str(b.rng.between(1980, 2020))))
    if k:
        b.say("{} lives in {} , the capital of {} .", he, b.e(w.obj(k, "P36") or k), b.e(k))


def doc_band(b: DocBuilder, band: str) -> None:
    w = b.world
    k = w.obj(band, "P495")
    city = w.obj(band, "P740")
    members = w.objs(band, "P527")
    assert k and city
    t = b.time(band, "P571", "decade")
    b.say("{} are a {} rock band formed in {} in {} .", b.e(band, first=True), b.dem(k), b.e(city, first=True), t)
    names = [b.e(m, first=True) for m in members]
    if len(names) >= 3:
        b.say("The group consists of {} , {} and {} .", *names[:3])
    elif len(names) == 2:
        b.say("The group consists of {} and {} .", *names)
    lbl = w.obj(band, "P264")
    albums = [a for a in w.cls("album") if w.obj(a, "P175") == band][:2]
    if lbl:
        lcity = w.obj(lbl, "P159")
        if lcity:
            b.say("{} signed to {} , a label based in {} , {} .", b.e(band), b.e(lbl, first=True), b.e(lcity, first=True),
                  b.e(w.obj(lcity, "P17") or k, first=True))
    if albums:
        songs = w.objs(albums[0], "P527")
        t = b.time(albums[0], "P577")
        b.say("Their debut album {} was released " + at(t) + " {} and reached number {} in {} .", b.e(albums[0], first=True),
              t, b.num(str(b.rng.between(1, 40))), b.e(k))
        if songs:
            b.say("It spawned the single \" {} \" , written by {} .", b.e(songs[0], first=True),
                  b.e(w.obj(songs[0], "P86") or members[0]))
    if len(albums) > 1:
        b.say("{} 's second album , {} , followed in {} .", b.e(band), b.e(albums[1], first=True), b.time(albums[1], "P577", "month"))
    if b.rng.chance(0.7):
        tour = f"{b.rng.choice(ADJ)} {b.rng.choice(NOUN)} Tour"
        b.say("In {} the band embarked on the {} , playing {} concerts .", b.plain_time(str(b.rng.between(1990, 2022))),
              b.other(tour, "MISC"), b.num(render_number(b.rng, 12, 180)))
    if members:
        m = members[-1]
        bc = w.obj(m, "P19")
        if bc:
            t = b.time(m, "P569")
            b.say("{} was born in {} " + at(t) + " {} .", b.e(m), b.e(bc), t)
        uni = w.obj(m, "P69")
        if uni:
            b.say("{} studied at {} before joining {} .", _pronoun(w, m), b.e(uni, first=True), b.e(band))


def doc_album(b: DocBuilder, al: str) -> None:
    w = b.world
    perf = w.obj(al, "P175")
    assert perf
    lbl = w.obj(al, "P264")
    pit = w.items[perf]
    k = w.obj(perf, "P495") or w.obj(perf, "P27")
    what = "band" if pit.cls == "band" else "singer"
    t = b.time(al, "P577")
    if k and lbl:
        b.say("{} is an album by the {} " + what + " {} , released " + at(t) + " {} by {} .", b.e(al, first=True), b.dem(k),
              b.e(perf, first=True), t, b.e(lbl, first=True))
    else:
        b.say("{} is an album by {} , released " + at(t) + " {} .", b.e(al, first=True), b.e(perf, first=True), t)
    prev, nxt = w.obj(al, "P155"), w.obj(al, "P156")
    if prev and nxt:
        b.say("It was preceded by {} and followed by {} .", b.e(prev, first=True), b.e(nxt, first=True))
    elif prev:
        b.say("It follows {} , released in {} .", b.e(prev, first=True), b.time(prev, "P577", "year"))
    elif nxt:
        b.say("It was followed by {} .", b.e(nxt, first=True))
    songs = w.objs(al, "P527")
    for s in songs[:3]:
        writer = w.obj(s, "P86")
        if w.items[s].label == w.items[al].label:
            b.say("The title track , \" {} \" , was issued as a single .", b.e(s, first=True))
        elif writer:
            b.say("The song \" {} \" was written by {} .", b.e(s, first=True), b.e(writer, first=True))
        else:
            b.say("\" {} \" became a radio hit .", b.e(s, first=True))
    if k:
        b.say("{} sold {} copies in its first week in {} .", b.e(al), b.num(render_number(b.rng, 5_000, 2_500_000)), b.e(k, first=True))
    place = w.obj(perf, "P740") or w.obj(perf, "P19")
    if place:
        b.say("The record was made in {} over {} weeks in {} .", b.e(place, first=True), b.num(b.rng.choice(NUMBER_WORDS)),
              b.plain_time(f"{b.rng.choice(MONTHS)} {w.times[(al, 'P577')][0] - 1}"))
    members = w.objs(perf, "P527")
    if members:
        b.say("{} wrote most of the lyrics while {} arranged the strings .", b.e(members[0], first=True), b.e(members[-1], first=True))
    countries = w.cls("country")
    b.say("{} promoted {} with a tour of {} .", b.e(perf), b.e(al), b.e(countries[b.rng.below(len(countries))], first=True))


def doc_film(b: DocBuilder, fm: str) -> None:
    w = b.world
    d = w.obj(fm, "P57")
    sw = w.obj(fm, "P58")
    k = w.obj(fm, "P495")
    assert d and k
    if sw and sw != d:
        b.say("{} is a {} {} drama film directed by {} and written by {} .", b.e(fm, first=True), b.time(fm, "P577", "year"),
              b.dem(k), b.e(d, first=True), b.e(sw, first=True))
    else:
        b.say("{} is a {} {} drama film written and directed by {} .", b.e(fm, first=True), b.time(fm, "P577", "year"),
              b.dem(k), b.e(d, first=True))
    cast = w.objs(fm, "P161")
    if len(cast) >= 3:
        b.say("It stars {} , {} and {} .", *(b.e(c, first=True) for c in cast[:3]))
    co = w.obj(fm, "P272")
    if co:
        cc = w.obj(co, "P159")
        b.say("The film was produced by {} , a studio based in {} .", b.e(co, first=True), b.e(cc or k, first=True))
    cities = [c for c in w.cls("city") if w.obj(c, "P17") == k][:2]
    if len(cities) == 2:
        b.say("Principal photography took place in {} and {} in {} .", b.e(cities[0], first=True), b.e(cities[1], first=True),
              b.plain_time(f"{b.rng.choice(MONTHS)} {w.times[(fm, 'P577')][0] - 1}"))
    fest = f"{w.items[cities[0]].label if cities else 'Venice'} Film Festival"
    t = b.time(fm, "P577")
    b.say("{} premiered at the {} and opened in {} " + at(t) + " {} .", b.e(fm), b.other(fest, "MISC"), b.e(k, first=True), t)
    lang = w.obj(fm, "P364")
    if lang:
        b.say("Shot in {} , it grossed $ {} worldwide .", b.e(lang, first=True), b.num(render_number(b.rng, 1_000_000, 90_000_000)))
    aw = w.obj(fm, "P166")
    if aw:
        b.say("{} won the {} .", b.e(fm), b.e(aw, first=True))
    if cast:
        bc = w.obj(cast[0], "P19")
        if bc:
            b.say("{} , who was born in {} , prepared for the role for {} months .", b.e(cast[0]), b.e(bc, first=True),
                  b.num(b.rng.choice(NUMBER_WORDS)))
    b.say("{} later called {} the most personal of {} films .", b.e(d), b.e(fm), "her" if w.items[d].female else "his")


def doc_novel(b: DocBuilder, nv: str) -> None:
    w = b.world
    au = w.obj(nv, "P50")
    pub = w.obj(nv, "P123")
    k = w.obj(nv, "P495")
    assert au and k
    b.say("{} is a novel by the {} writer {} , first published in {} by {} .", b.e(nv, first=True), b.dem(k),
          b.e(au, first=True), b.time(nv, "P577", "year"), b.e(pub, first=True) if pub else "a small press")
    city = w.obj(au, "P19")
    if city:
        t = b.time(au, "P569")
        decade = (w.times[(au, "P569")][0] + 25) // 10 * 10
        b.say("{} was born in {} " + at(t) + " {} and began writing fiction in {} .", b.e(au), b.e(city, first=True), t,
              b.plain_time(f"the {decade}s"))
    prev, nxt = w.obj(nv, "P155"), w.obj(nv, "P156")
    if prev:
        b.say("The book is a sequel to {} ( {} ) .", b.e(prev, first=True), b.time(prev, "P577", "year"))
    if nxt:
        b.say("A sequel , {} , appeared in {} .", b.e(nxt, first=True), b.time(nxt, "P577", "year"))
    lang = w.obj(nv, "P364")
    if lang:
        b.say("Written in {} , it has been translated into {} languages and sold {} copies .", b.e(lang, first=True),
              b.num(b.rng.choice(NUMBER_WORDS)), b.num(render_number(b.rng, 20_000, 4_000_000)))
    if city:
        prov = w.obj(city, "P131")
        if prov:
            b.say("The story is set in {} , {} , during the {} .", b.e(city), b.e(prov, first=True),
                  b.other(f"{b.rng.choice(ADJ)} War", "MISC"))
    aw = w.obj(au, "P166")
    if aw:
        b.say("In {} , {} received the {} .", b.plain_time(str(b.rng.between(1980, 2022))), b.e(au), b.e(aw, first=True))
    uni = w.obj(au, "P69")
    if uni:
        b.say("{} taught creative writing at {} , {} .", b.e(au), b.e(uni, first=True), b.e(w.obj(uni, "P131") or k, first=True))
    sp = w.obj(au, "P26")
    if sp:
        b.say("{} is married to {} .", _pronoun(w, au), b.e(sp, first=True))


def doc_city(b: DocBuilder, city: str) -> None:
    w = b.world
    prov = w.obj(city, "P131")
    k = w.obj(city, "P17")
    assert prov and k
    river = w.obj(city, "P206")
    if river:
        b.say("{} is a city in {} , {} , on the banks of the {} .", b.e(city, first=True), b.e(prov, first=True),
              b.e(k, first=True), b.e(river, first=True))
    else:
        b.say("{} is a city in {} , {} .", b.e(city, first=True), b.e(prov, first=True), b.e(k, first=True))
    b.say("With a population of {} , it is the {} largest city in {} .", b.num(render_number(b.rng, 20_000, 2_000_000)),
          b.rng.choice(ORDINALS), b.e(prov))
    unis = sorted((u for u in w.cls("university") if w.obj(u, "P131") == city),
                  key=lambda u: w.items[city].label not in w.items[u].label)
    clubs = [c for c in w.cls("club") if w.obj(c, "P131") == city]
    if unis:
        uref = b.e(unis[0], first=True)
        b.say("The city is home to {} , founded in {} .", uref, b.time(unis[0], "P571", "year"))
        pos = b.find(uref)
        cref = b.e(city, w.items[city].label)
        if pos and cref.name in uref.name and uref.name != cref.name:
            b.nested(uref, cref, *pos)  # "University of X" contains the city's own mention
    if clubs:
        lg = w.obj(clubs[0], "P118")
        if lg:
            b.say("The football club {} plays in the {} .", b.e(clubs[0], first=True), b.e(lg, first=True))
        else:
            b.say("The football club {} was founded in {} .", b.e(clubs[0], first=True), b.time(clubs[0], "P571", "year"))
    cos = [c for c in w.cls("company") + w.cls("label") if w.obj(c, "P159") == city][:1]
    if cos:
        b.say("{} has its headquarters in {} .", b.e(cos[0], first=True), b.e(city))
    born = [h for h in w.cls("human") if w.obj(h, "P19") == city][:3]
    if len(born) >= 2:
        b.say("Notable people born in {} include " + " , ".join(["{}"] * (len(born) - 1)) + " and {} .", b.e(city),
              *(b.e(h, first=True) for h in born))
    mount = [m for m in w.cls("mountain") if w.obj(m, "P131") == prov][:1]
    if mount:
        b.say("{} , {} metres high , rises south of the city .", b.e(mount[0], first=True), b.num(render_number(b.rng, 900, 4800)))
    if (k, "P1198") in w.quantities:
        b.say("The unemployment rate of {} stood at {} in {} .", b.e(k), b.num_fact(k, "P1198"),
              b.plain_time(f"{b.rng.choice(MONTHS)} {b.rng.between(2005, 2022)}"))
    cap = w.obj(k, "P36")
    if cap and cap != city:
        b.say("{} 's capital , {} , lies {} kilometres to the north .", b.e(k), b.e(cap, first=True),
              b.num(render_number(b.rng, 30, 900)))
    else:
        b.say("{} is also the capital of {} .", b.e(city), b.e(k))



DOC_KINDS = (
    ("musician", doc_musician),
    ("band", doc_band),
    ("album", doc_album),
    ("film", doc_film),
    ("novel", doc_novel),
    ("city", doc_city),
)


def _topics(world: World, kind: str) -> list[str]:
    if kind == "musician":
        return [h for h in world.cls("human") if world.roles[h] == "musician" and world.obj(h, "P463")]
    # Topics that make tricky documents come first, so every split gets some.
    if kind == "city":
        born = {world.obj(h, "P19") for h in world.cls("human")}
        nested = {world.obj(u, "P131") for u in world.cls("university")
                  if world.items[world.obj(u, "P131") or ""].label in world.items[u].label}
        cities = [c for c in world.cls("city") if c in born]
        return sorted(cities, key=lambda c: c not in nested)
    if kind == "album":
        def has_title_track(a: str) -> bool:
            return any(world.items[s].label == world.items[a].label for s in world.objs(a, "P527"))
        return sorted(world.cls("album"), key=lambda a: not has_title_track(a))
    return world.cls(kind)


def build_docs(world: World, seed: int, n_docs: int) -> tuple[list[dict[str, Any]], dict[str, list[str | None]]]:
    topic_lists = {kind: _topics(world, kind) for kind, _ in DOC_KINDS}
    docs: list[dict[str, Any]] = []
    links: dict[str, list[str | None]] = {}
    cursor = dict.fromkeys(topic_lists, 0)
    i = 0
    stalls = 0
    while len(docs) < n_docs and stalls < len(DOC_KINDS):
        kind, fn = DOC_KINDS[i % len(DOC_KINDS)]
        i += 1
        lst = topic_lists[kind]
        if cursor[kind] >= len(lst):
            stalls += 1
            continue
        stalls = 0
        topic = lst[cursor[kind]]
        cursor[kind] += 1
        title = world.items[topic].label
        if title in links:
            continue
        b = DocBuilder(world, title, Rng(seed, "doc", topic), variant=cursor[kind] - 1)
        fn(b, topic)
        doc, lk = b.build()
        if len(doc["sents"]) < 4:
            continue
        docs.append(doc)
        links[title] = lk
    return docs, links


# ---------------------------------------------------------------------------------------------
# Entry point


@dataclass
class SampleResult:
    out: Path
    dump: Path
    items: int  # items written (world + lean filler)
    classes: int
    properties: int
    docs: dict[str, int]  # split -> documents
    links: Path
    linked_docred: Path
    seconds: float
    docs_requested: int = 0

    @property
    def n_docs(self) -> int:
        return sum(self.docs.values())

    def summary(self) -> str:
        docs = ", ".join(f"{k} {v}" for k, v in self.docs.items())
        if self.docs_requested > self.n_docs:
            docs += f" (only {self.n_docs} topics for {self.docs_requested} requested; raise --entities for more)"
        return (f"wrote {self.out}: {self.items} items, {self.classes} classes, {self.properties} properties "
                f"({self.dump.name}); documents {docs}; links {self.links.name}; "
                f"{self.linked_docred.relative_to(self.out)} in {self.seconds:.1f} s")


def make_sample(
    out: str | Path,
    *,
    seed: int = 0,
    entities: int | None = None,
    docs: int | None = None,
    lean: bool = False,
) -> SampleResult:
    """Write the sample world to ``out`` (see the module docstring); same seed, same bytes.

    ``entities`` is the number of items. Without ``lean`` all of them get names, claims and
    sitelinks. With ``lean`` the documented world is built at its default size and the remaining
    items are filler with names and P31 only, streamed to the dump (for scale benchmarks).
    """
    from envbench.formats.linked_docred import write_linked_docred

    t0 = time.perf_counter()
    n_items = DEFAULT_ENTITIES if entities is None else entities
    n_docs = DEFAULT_DOCS if docs is None else docs
    if n_items < 60:
        raise EnvbenchError(f"--entities {n_items} is too small; the sample world needs at least 60 items")
    if n_docs < 3:
        raise EnvbenchError(f"--docs {n_docs} is too small; give at least 3 (one per split)")
    world_size = min(n_items, DEFAULT_ENTITIES) if lean else n_items
    world = build_world(seed, world_size)
    out = Path(out)
    dump = out / "wikidata-sample.json.gz"
    table = load_type_table()
    n_classes = len(table.classes)
    with wj.DumpWriter(dump, compresslevel=1 if lean else 6) as w:
        n_props = 0
        for ent in wj.schema_entities():
            n_props += ent["type"] == "property"
            w.write(ent)
        for it in world.items.values():
            w.write(item_entity(world, it))
        filler = max(0, n_items - len(world.items)) if lean else 0
        start = SAMPLE_QID_BASE + len(world.items) + 1
        write_lean(w, seed, start, filler)
        total_items = len(world.items) + filler
    all_docs, links = build_docs(world, seed, n_docs)
    validate_documents(all_docs, "<sample world>")  # raises on a generator bug rather than writing bad data
    # Documents are dealt to splits 3:1:1 in build order, so each split gets every kind of document
    # and a larger --docs keeps the earlier documents where they were.
    # Fewer documents than one cycle would leave test (or dev) empty: then deal one to each split first.
    cycle = SPLIT_CYCLE if len(all_docs) >= len(SPLIT_CYCLE) else SMALL_SPLIT_CYCLE
    splits: dict[str, list[dict[str, Any]]] = {"train": [], "dev": [], "test": []}
    for i, doc in enumerate(all_docs):
        splits[cycle[i % len(cycle)]].append(doc)
    for name, part in splits.items():
        write_json_atomic(out / "docs" / f"{name}.json", part)
    write_json_atomic(out / "links.json", links)
    ld_path = out / "docs" / "test.linked-docred.json"
    write_linked_docred(ld_path, splits["test"], links, world_labels=world.enwiki)
    return SampleResult(
        out=out,
        dump=dump,
        items=total_items,
        classes=n_classes,
        properties=n_props,
        docs={k: len(v) for k, v in splits.items()},
        docs_requested=n_docs,
        links=out / "links.json",
        linked_docred=ld_path,
        seconds=time.perf_counter() - t0,
    )
