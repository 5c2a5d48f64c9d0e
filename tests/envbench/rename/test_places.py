"""Places the gold triples put one inside the other stay so (``envbench.rename.places``): "born in Solingen ,
Germany" never reads "born in Groton , Azerbaijan"; over a hand-made index, and end to end through ``generate``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from envbench.rename.generate import generate
from envbench.rename.places import containment
from tests.envbench.index_fixture import Builder, mention
from tests.envbench.index_fixture import eval_qids as _eval_qids

CITY, COUNTRY, CITY_OF_GERMANY = "Q515", "Q6256", "Q2000000100082"
CITIES = ("Aberton", "Belford", "Cresby", "Dunmere", "Elstow", "Farnley", "Garsby", "Holmwick")
COUNTRIES = ("Avaria", "Borduria", "Carpania", "Drovnia", "Elbonia", "Florin", "Genovia", "Hesperia",
             "Ivalice", "Jelonia", "Kalvaria", "Lubovia")


def _world() -> tuple[Builder, dict[str, str]]:
    """Countries with two cities each (every city's P17 its country), and German cities of their own national
    class, as the offline KB types them ("city of Germany"): a German city drawn is one of Germany."""
    b = Builder()
    b.item(CITY, "city").item(COUNTRY, "country").item(CITY_OF_GERMANY, "city of Germany")
    ids: dict[str, str] = {}
    countries = _eval_qids("Q71", len(COUNTRIES) + 1)
    cities = _eval_qids("Q72", 2 * len(COUNTRIES) + 1)
    for k, name in enumerate(COUNTRIES):
        b.item(countries[k], name, p31=(COUNTRY,))
        ids[name] = countries[k]
        for j in range(2):
            q = cities[2 * k + j]
            b.item(q, f"{name[:3]}{CITIES[(k + j) % len(CITIES)].lower()}", p31=(CITY,)).edge(q, "P17", countries[k])
    germany = ids["Germany"] = countries[-1]
    b.item(germany, "Germany", p31=(COUNTRY,))
    ids["Solingen"] = cities[-1]
    b.item(cities[-1], "Solingen", p31=(CITY,)).edge(cities[-1], "P17", germany)
    for k, name in enumerate(("Düsseldorf", "Wuppertal", "Remscheid")):
        q = ids[name] = f"Q73{k}"
        b.item(q, name, p31=(CITY_OF_GERMANY,)).edge(q, "P17", germany)
    return b, ids


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    b, ids = _world()
    return b.write(tmp_path_factory.mktemp("places") / "index"), ids


def _doc(title: str, sents: list[str], ents: list[tuple[str, str]], labels: list[tuple[int, str, int]]) -> dict[str, Any]:
    toks = [s.split() for s in sents]
    vertex = []
    for name, coarse in ents:
        ms = name.split()
        vertex.append([mention(name, si, [i, i + len(ms)], coarse) for si, t in enumerate(toks)
                       for i in range(len(t)) if t[i:i + len(ms)] == ms])
    return {"title": title, "sents": toks, "vertexSet": vertex,
            "labels": [{"h": h, "r": r, "t": t, "evidence": [0]} for h, r, t in labels]}


def _generate(tmp_path: Path, index: Path, doc: dict[str, Any], links: list[str | None], seeds: int = 8) -> list[dict]:
    docs, link_file = tmp_path / "docs.json", tmp_path / "links.json"
    docs.write_text(json.dumps([doc]))
    link_file.write_text(json.dumps({doc["title"]: links}))
    generate(docs, index, tmp_path / "out", links=link_file, seeds=seeds, progress=False, force=True,
             allow_training_names=True)  # a unit test of the place rule: no trained model to keep names from
    return pl.read_parquet(tmp_path / "out" / "substitutions.parquet").to_dicts()


def _items(rows: list[dict]) -> dict[str, dict[int, str]]:
    """title -> entity -> the item it names after renaming (its new item, else its own)."""
    out: dict[str, dict[int, str]] = {}
    for r in rows:
        out.setdefault(r["title"], {})[r["entity"]] = r["new_qid"] or r["qid"]
    return out


def _country_of(world: tuple[Path, dict[str, str]]) -> dict[str, str]:
    b, _ = _world()
    return {e["subject"]: e["object"] for e in b.rows["edges"] if e["property"] == "P17"}


def test_containment_reads_the_gold_place_triples() -> None:
    doc = _doc("T", ["He was born in Solingen , Germany , and worked for Acme ."],
               [("Solingen", "LOC"), ("Germany", "LOC"), ("Acme", "ORG")],
               [(0, "P17", 1), (0, "P131", 1), (2, "P17", 1), (1, "P27", 0)])
    got = containment(doc, ["LOC", "LOC", "ORG"])
    assert got.outers == {0: (1,)} and got.inners == {1: (0,)}  # Acme is no place a reader maps
    both = _doc("T", ["A , B ."], [("A", "LOC"), ("B", "LOC")], [(0, "P131", 1), (1, "P131", 0)])
    assert containment(both, ["LOC", "LOC"]).outers == {}  # stated both ways: neither order could hold


@pytest.mark.parametrize("country_first", [False, True])
def test_the_country_follows_the_city(world: tuple[Path, dict[str, str]], tmp_path: Path, country_first: bool) -> None:
    # "born in Solingen , Germany": the renamed city lies in the renamed country in every seed, whichever of
    # the two the document lists first (the outer place waits for its inner one)
    index, ids = world
    ents = [("Solingen", "LOC"), ("Germany", "LOC")]
    if country_first:
        doc = _doc("Kurt", ["Germany was his home .", "He was born in Solingen , Germany ."],
                   [("Germany", "LOC"), ("Solingen", "LOC")], [(1, "P17", 0)])
        links = [ids["Germany"], ids["Solingen"]]
        city, country = 1, 0
    else:
        doc = _doc("Kurt", ["He was born in Solingen , Germany ."], ents, [(0, "P17", 1)])
        links = [ids["Solingen"], ids["Germany"]]
        city, country = 0, 1
    rows = _generate(tmp_path, index, doc, links)
    assert len(rows) == len({(r["title"], r["entity"]) for r in rows}) == 8 * 2  # one row per entity and seed
    country_of = _country_of(world)
    items = _items(rows)
    assert all(v[city] != ids["Solingen"] and v[country] != ids["Germany"] for v in items.values())
    assert all(country_of[v[city]] == v[country] for v in items.values())
    assert len({v[country] for v in items.values()}) > 2  # the seeds still draw different places


def test_a_country_whose_city_stays_in_it_keeps_its_name(world: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    # the offline KB's national classes: a "city of Germany" is drawn among German cities, so "Düsseldorf ,
    # Germany" becomes "Wuppertal , Germany", never "Wuppertal , Borduria"
    index, ids = world
    doc = _doc("Kurt", ["He was born in Düsseldorf , Germany ."], [("Düsseldorf", "LOC"), ("Germany", "LOC")],
               [(0, "P17", 1)])
    rows = _generate(tmp_path, index, doc, [ids["Düsseldorf"], ids["Germany"]], seeds=4)
    city = [r for r in rows if r["entity"] == 0]
    country = [r for r in rows if r["entity"] == 1]
    assert all(r["new_names"][0] in ("Wuppertal", "Remscheid") for r in city)
    assert {(r["kind"], r["reason"]) for r in country} == {("kept", "place")}
    text = {s for d in json.loads((tmp_path / "out" / "docs_env.json").read_text()) for s in
            (" ".join(t) for t in d["sents"])}
    assert {t.split(" born in ")[1] for t in text} <= {"Wuppertal , Germany .", "Remscheid , Germany ."}


def test_without_gold_triples_places_draw_alone(world: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    # the rule reads the gold triples only: with none, the two places draw independently, as the paper's do
    index, ids = world
    doc = _doc("Kurt", ["He was born in Solingen , Germany ."], [("Solingen", "LOC"), ("Germany", "LOC")], [])
    items = _items(_generate(tmp_path, index, doc, [ids["Solingen"], ids["Germany"]]))
    country_of = _country_of(world)
    assert any(country_of[v[0]] != v[1] for v in items.values())


STATE, TOWN, COUNTY = "Q107390", "Q3957", "Q28575"


def test_a_town_follows_its_state_up_the_chain(tmp_path: Path) -> None:
    # Wikidata places a town in its county and the county in its state: "Groton , Connecticut" is a pair of
    # the first and the third, and the renamed town lies (two steps up) in the renamed state in every seed
    b = Builder().item(STATE, "federated state").item(TOWN, "town").item(COUNTY, "county")
    states = _eval_qids("Q74", 7)
    towns = _eval_qids("Q75", 7)
    counties = _eval_qids("Q76", 7)
    names = ("Connecticut", "Ardenia", "Belmark", "Corvale", "Dunholt", "Erravia", "Fenwold")
    for k, name in enumerate(names):
        b.item(states[k], name, p31=(STATE,)).item(counties[k], f"{name[:4]} County", p31=(COUNTY,))
        b.item(towns[k], "Groton" if k == 0 else f"{name[:3]}ford", p31=(TOWN,))
        b.edge(towns[k], "P131", counties[k]).edge(counties[k], "P131", states[k])
    index = b.write(tmp_path / "index")
    doc = _doc("Kurt", ["He was born in Groton , Connecticut ."], [("Groton", "LOC"), ("Connecticut", "LOC")],
               [(0, "P131", 1)])
    items = _items(_generate(tmp_path, index, doc, [towns[0], states[0]]))
    state_of = {towns[k]: states[k] for k in range(len(names))}
    assert all(v[0] != towns[0] and state_of[v[0]] == v[1] for v in items.values())


def test_a_city_stays_in_a_country_that_cannot_become_another(tmp_path: Path) -> None:
    # "He has taught at High Point University in Alcoy , Oman" (salt fresh1208b, offline lock): the city was drawn
    # in a country the outer place could not become, and the country drawn alone. The city now prefers a
    # place inside the country's own item, which then keeps its names: "in Kassel , Germany"
    hist = "Q3024240"  # historical country: a class the outer country never draws from
    b = Builder().item(CITY, "city").item(COUNTRY, "country").item(hist, "historical country")
    old = _eval_qids("Q77", 9)
    cities = _eval_qids("Q78", 10)
    germany, solingen, kassel = old[-1], cities[-2], cities[-1]
    b.item(germany, "Germany", p31=(COUNTRY,))
    for k, name in enumerate(("Prussia", "Saxony", "Bavaria", "Hanover", "Hesse", "Baden", "Holstein", "Lippe")):
        b.item(old[k], name, p31=(hist,)).item(cities[k], f"{name[:3]}burg", p31=(CITY,)).edge(cities[k], "P17", old[k])
    b.item(solingen, "Solingen", p31=(CITY,)).edge(solingen, "P17", germany)
    b.item(kassel, "Kassel", p31=(CITY,)).edge(kassel, "P17", germany)
    b.item("Q790", "Ruritania", p31=(COUNTRY,))  # a country Germany could become, which no city lies in
    index = b.write(tmp_path / "index")
    doc = _doc("Kurt", ["He was born in Solingen , Germany ."], [("Solingen", "LOC"), ("Germany", "LOC")],
               [(0, "P17", 1)])
    rows = _generate(tmp_path, index, doc, [solingen, germany], seeds=6)
    assert {r["new_names"][0] for r in rows if r["entity"] == 0} == {"Kassel"}
    assert {(r["kind"], r["reason"]) for r in rows if r["entity"] == 1} == {("kept", "place")}


def test_a_city_prefers_a_country_the_outer_place_can_become_to_its_own(tmp_path: Path) -> None:
    # the outer place keeping its names is the second choice: where a drawn city lies in a country the outer
    # place can become, both are renamed ("Solingen , Germany" -> "Rurton , Ruritania"), and "Kassel ,
    # Germany" is taken only where no draw does so
    b = Builder().item(CITY, "city").item(COUNTRY, "country")
    countries = _eval_qids("Q79", 3)
    cities = _eval_qids("Q80", 3)
    germany, ruritania = countries[0], countries[1]
    solingen, kassel, rurton = cities
    b.item(germany, "Germany", p31=(COUNTRY,)).item(ruritania, "Ruritania", p31=(COUNTRY,))
    b.item(solingen, "Solingen", p31=(CITY,)).edge(solingen, "P17", germany)
    b.item(kassel, "Kassel", p31=(CITY,)).edge(kassel, "P17", germany)
    b.item(rurton, "Rurton", p31=(CITY,)).edge(rurton, "P17", ruritania)
    index = b.write(tmp_path / "index")
    doc = _doc("Kurt", ["He was born in Solingen , Germany ."], [("Solingen", "LOC"), ("Germany", "LOC")],
               [(0, "P17", 1)])
    items = _items(_generate(tmp_path, index, doc, [solingen, germany], seeds=6))
    assert all(v == {0: rurton, 1: ruritania} for v in items.values())
