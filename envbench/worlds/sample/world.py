"""The sample world itself: its items, their names and claims (``build_world``).

Relation claims are consistent with the type table's constraints (envbench/data/relation_types.json),
so gold triples in the documents agree with the dump. The build runs in sections (places,
organisations, people, music, screen and print), in this order, all drawing from one seeded
generator: reordering them, or any draw inside them, changes every later item.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from envbench.worlds.sample.names import alias_budget, make_names
from envbench.worlds.sample.rng import Rng
from envbench.worlds.type_table import load_type_table

SAMPLE_QID_BASE = 900_000_000

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


class _WorldBuilder:
    """The state of one build: the world so far, the labels taken and the last QID handed out."""

    def __init__(self, seed: int, entities: int) -> None:
        self.seed = seed
        self.rng = Rng(seed, "world")
        self.sizes = class_sizes(entities)
        self.world = World()
        self.used_labels: set[str] = set()
        self.last_qid = SAMPLE_QID_BASE

    def new(self, cls: str, ctx: dict[str, Any] | None = None) -> Item:
        """A new item of class ``cls``: a label not taken yet (50 tries), aliases, other-language labels."""
        r = Rng(self.seed, "names", cls, len(self.world.cls(cls)))
        for attempt in range(50):
            label, cands, extra = make_names(cls, r, ctx or {})
            if label not in self.used_labels or attempt == 49:
                break
        self.used_labels.add(label)
        self.last_qid += 1
        it = Item(f"Q{self.last_qid}", cls, label, demonym=extra.get("demonym"), female=extra.get("female", False))
        k = alias_budget(r)
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
        self.world.add(it)
        return it

    def date(self, lo: int, hi: int, precision: int = 11) -> tuple[int, int, int, int]:
        y = self.rng.between(lo, hi)
        m = self.rng.between(1, 12) if precision >= 10 else 0
        d = self.rng.between(1, 28) if precision >= 11 else 0
        return y, m, d, precision


def build_world(seed: int, entities: int) -> World:
    """Items, names and claims; relation claims are consistent with the type table's constraints."""
    wb = _WorldBuilder(seed, entities)
    _places(wb)
    _organisations(wb)
    _people(wb)
    _music(wb)
    _screen_and_print(wb)
    _wikipedia_titles(wb.world)
    return wb.world


def _cities_by_country(world: World) -> dict[str, list[str]]:
    cities_of: dict[str, list[str]] = {}
    for c in world.cls("city"):
        cities_of.setdefault(world.obj(c, "P17") or "", []).append(c)
    return cities_of


def _humans_by_role(world: World) -> dict[str, list[str]]:
    by_role: dict[str, list[str]] = {}
    for h in world.cls("human"):
        by_role.setdefault(world.roles[h], []).append(h)
    return by_role


def _places(wb: _WorldBuilder) -> None:
    """Languages, countries, provinces, cities, rivers and mountains."""
    world, rng = wb.world, wb.rng
    for _ in range(wb.sizes["language"]):
        wb.new("language")
    for i in range(wb.sizes["country"]):
        c = wb.new("country")
        if i % 2 == 0:  # a second, preferred-rank type, as many countries have on Wikidata
            c.extra_types.append(("Q3624078", "preferred", "value"))
        world.link(c.qid, "P37", world.cls("language")[i % len(world.cls("language"))])
        if rng.chance(0.5):
            world.set_quantity(c.qid, "P1198", f"{rng.between(20, 150) / 10:.1f}")
    countries = world.cls("country")
    for i in range(wb.sizes["province"]):
        p = wb.new("province")
        k = countries[i % len(countries)]
        world.link(p.qid, "P17", k)
        world.link(p.qid, "P131", k)
        world.link(k, "P150", p.qid)
    provinces = world.cls("province")
    for i in range(wb.sizes["city"]):
        c = wb.new("city")
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
    cities_of = _cities_by_country(world)
    for i in range(wb.sizes["river"]):
        r = wb.new("river")
        k = countries[i % len(countries)]
        world.link(r.qid, "P17", k)
        world.link(r.qid, "P205", k)
        for c in cities_of.get(k, [])[:2]:
            if not world.obj(c, "P206"):
                world.link(c, "P206", r.qid)
    for i in range(wb.sizes["mountain"]):
        m = wb.new("mountain")
        p = provinces[(i * 7) % len(provinces)]
        world.link(m.qid, "P17", world.obj(p, "P17") or countries[0])
        world.link(m.qid, "P131", p)


def _organisations(wb: _WorldBuilder) -> None:
    """Leagues, universities, clubs, companies, record labels, parties and awards."""
    world, rng = wb.world, wb.rng
    countries, cities = world.cls("country"), world.cls("city")
    for i in range(wb.sizes["league"]):
        lg = wb.new("league")
        world.link(lg.qid, "P17", countries[i % len(countries)])
    leagues_of: dict[str, list[str]] = {}
    for lg in world.cls("league"):
        leagues_of.setdefault(world.obj(lg, "P17") or "", []).append(lg)
    for i in range(wb.sizes["university"]):
        city = cities[(i * 3) % len(cities)]
        u = wb.new("university", {"city_label": world.items[city].label})
        world.link(u.qid, "P131", city)
        world.link(u.qid, "P17", world.obj(city, "P17") or countries[0])
        world.set_time(u.qid, "P571", *wb.date(1200, 1970, 9))
    for i in range(wb.sizes["club"]):
        city = cities[(i * 5 + 1) % len(cities)]
        cl = wb.new("club", {"city_label": world.items[city].label})
        k = world.obj(city, "P17") or countries[0]
        world.link(cl.qid, "P17", k)
        world.link(cl.qid, "P131", city)
        if leagues_of.get(k):
            world.link(cl.qid, "P118", rng.choice(leagues_of[k]))
        world.set_time(cl.qid, "P571", *wb.date(1870, 1990, 9))
    for i in range(wb.sizes["company"]):
        city = cities[(i * 11 + 2) % len(cities)]
        co = wb.new("company")
        world.link(co.qid, "P17", world.obj(city, "P17") or countries[0])
        world.link(co.qid, "P159", city)
        world.set_time(co.qid, "P571", *wb.date(1850, 2005, rng.choice((9, 10, 11))))
    companies = world.cls("company")
    for i in range(wb.sizes["label"]):
        city = cities[(i * 13 + 3) % len(cities)]
        lb = wb.new("label")
        world.link(lb.qid, "P17", world.obj(city, "P17") or countries[0])
        world.link(lb.qid, "P159", city)
        world.set_time(lb.qid, "P571", *wb.date(1920, 2005, 9))
        if rng.chance(0.3):
            parent = rng.choice(companies)
            world.link(lb.qid, "P749", parent)
            world.link(parent, "P355", lb.qid)
    for i in range(wb.sizes["party"]):
        k = countries[i % len(countries)]
        pt = wb.new("party")
        world.link(pt.qid, "P17", k)
        world.link(pt.qid, "P159", world.obj(k, "P36") or cities[0])
        world.set_time(pt.qid, "P571", *wb.date(1850, 2010, 9))
    for i in range(wb.sizes["award"]):
        aw = wb.new("award")
        world.link(aw.qid, "P17", countries[i % len(countries)])


def _people(wb: _WorldBuilder) -> None:
    """Humans with roles, birth and death, education, families; party chairs and company founders."""
    world, rng = wb.world, wb.rng
    countries, cities, companies = world.cls("country"), world.cls("city"), world.cls("company")
    cities_of = _cities_by_country(world)
    roles = ("musician", "musician", "musician", "actor", "writer", "director", "politician",
             "footballer", "business", "actor")
    univ = world.cls("university")
    awards = world.cls("award")
    parties_of: dict[str, list[str]] = {}
    for pt in world.cls("party"):
        parties_of.setdefault(world.obj(pt, "P17") or "", []).append(pt)
    clubs = world.cls("club")
    for i in range(wb.sizes["human"]):
        h = wb.new("human")
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
        y, m, d, _ = wb.date(1920, 1995)
        world.set_time(h.qid, "P569", y, m, d, 11)
        if y < 1950 and rng.chance(0.5):
            world.set_time(h.qid, "P570", *wb.date(max(y + 30, 1970), 2020))
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
    by_role = _humans_by_role(world)
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


def _music(wb: _WorldBuilder) -> None:
    """Bands, influences, albums and songs."""
    world, rng = wb.world, wb.rng
    countries, cities, labels = world.cls("country"), world.cls("city"), world.cls("label")
    cities_of = _cities_by_country(world)
    humans, by_role = world.cls("human"), _humans_by_role(world)
    musicians = by_role.get("musician", humans)
    mi = 0
    for b in range(wb.sizes["band"]):
        band = wb.new("band")
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
    for a in range(wb.sizes["album"]):
        perf = performers[a % len(performers)]
        al = wb.new("album")
        world.link(al.qid, "P175", perf)
        lbl = world.obj(perf, "P264") or labels[a % len(labels)]
        if not world.obj(perf, "P264"):
            world.link(perf, "P264", lbl)
        world.link(al.qid, "P264", lbl)
        prev = albums_of.get(perf, [])
        y0 = world.times[(prev[-1], "P577")][0] + rng.between(1, 4) if prev else rng.between(1965, 2012)
        world.set_time(al.qid, "P577", *(min(y0, 2023), *wb.date(0, 0)[1:3], rng.choice((9, 10, 11, 11))))
        if prev:
            world.link(al.qid, "P155", prev[-1])
            world.link(prev[-1], "P156", al.qid)
        albums_of.setdefault(perf, []).append(al.qid)
    albums = world.cls("album")
    for s in range(wb.sizes["song"]):
        al = albums[s % len(albums)]
        title_track = s % 7 == 3
        if title_track:
            song = wb.new("song")
            wb.used_labels.discard(song.label)
            song.label = world.items[al].label  # the title track shares the album's name
            song.aliases = [a for a in song.aliases if a != song.label][:1]
        else:
            song = wb.new("song")
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


def _screen_and_print(wb: _WorldBuilder) -> None:
    """Films, novels and TV series."""
    world, rng = wb.world, wb.rng
    countries, companies, awards = world.cls("country"), world.cls("company"), world.cls("award")
    humans, by_role = world.cls("human"), _humans_by_role(world)
    directors = by_role.get("director", humans)
    actors = by_role.get("actor", humans)
    writers_ = by_role.get("writer", humans)
    langs = world.cls("language")
    for f in range(wb.sizes["film"]):
        fm = wb.new("film")
        d_ = directors[f % len(directors)]
        world.link(fm.qid, "P57", d_)
        world.link(fm.qid, "P58", rng.choice([d_, *writers_[:5]]) if f % 3 else d_)
        for a in rng.sample(actors, 3):
            world.link(fm.qid, "P161", a)
        k = world.obj(d_, "P27") or countries[0]
        world.link(fm.qid, "P495", k)
        world.link(fm.qid, "P364", world.obj(k, "P37") or langs[0])
        world.link(fm.qid, "P272", companies[f % len(companies)])
        world.set_time(fm.qid, "P577", *wb.date(1950, 2022, rng.choice((9, 11, 11))))
        if rng.chance(0.2):
            world.link(fm.qid, "P166", rng.choice(awards))
        if not world.obj(d_, "P800"):
            world.link(d_, "P800", fm.qid)
    novels_of: dict[str, list[str]] = {}
    for n in range(wb.sizes["novel"]):
        nv = wb.new("novel")
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
    for t in range(wb.sizes["tvseries"]):
        tv = wb.new("tvseries")
        for a in rng.sample(actors, 2):
            world.link(tv.qid, "P161", a)
        k = countries[(t * 7) % len(countries)]
        world.link(tv.qid, "P495", k)
        world.link(tv.qid, "P364", world.obj(k, "P37") or langs[0])
        world.set_time(tv.qid, "P577", *wb.date(1970, 2022, 11))


def _wikipedia_titles(world: World) -> None:
    """Roughly a third of the items have no English Wikipedia page (fewer sitelinks, lower popularity).
    Titles are unique per site, as on Wikipedia: homonyms get a disambiguating class in brackets."""
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
