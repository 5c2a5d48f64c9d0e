"""Synthetic names: the word lists and ``make_names``, one label and candidate aliases per class."""

from __future__ import annotations

from typing import Any

from envbench.worlds.sample.rng import Rng

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


def alias_budget(rng: Rng) -> int:
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
