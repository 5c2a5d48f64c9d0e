"""The kind a noun beside a mention asks of a new name (``envbench.rename.kinds``), on the sentences issue 58
quotes, over a hand-made index, and end to end through ``generate``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from envbench.core.kind_nouns import kind_nouns
from envbench.rename.fine_types import ancestors, class_kinds
from envbench.rename.generate import generate
from envbench.rename.kinds import NounClasses, entity_kinds, fits, item_classes
from tests.envbench.index_fixture import Builder, connect, mention

FILM, TV_SERIES, WORK = "Q11424", "Q5398426", "Q17537576"
CITY, SETTLEMENT, FEDERATED_STATE, US_STATE, ADMIN = "Q515", "Q486972", "Q107390", "Q35657", "Q56061"
SOFTWARE, DBMS, LAUNCH_VEHICLE, TANKER = "Q7397", "Q176165", "Q697175", "Q14970"
AGENCY, ORGANIZATION, MILITARY_UNIT, LEAGUE = "Q327333", "Q43229", "Q176799", "Q623109"


def _world() -> Builder:
    b = Builder()
    for q, label in ((FILM, "film"), (TV_SERIES, "television series"), (WORK, "creative work"), (CITY, "city"),
                     (SETTLEMENT, "human settlement"), (FEDERATED_STATE, "federated state"),
                     (US_STATE, "state of the United States"), (ADMIN, "administrative territorial entity"),
                     (SOFTWARE, "software"), (DBMS, "database management system"), (LAUNCH_VEHICLE, "launch vehicle"),
                     (TANKER, "tanker"), (AGENCY, "government agency"), (ORGANIZATION, "organization"),
                     (MILITARY_UNIT, "military unit"), (LEAGUE, "sports league")):
        b.item(q, label)
    b.subclass(FILM, WORK).subclass(TV_SERIES, WORK).subclass(CITY, SETTLEMENT).subclass(US_STATE, FEDERATED_STATE)
    b.subclass(FEDERATED_STATE, ADMIN).subclass(DBMS, SOFTWARE).subclass(AGENCY, ORGANIZATION)
    b.subclass(MILITARY_UNIT, ORGANIZATION).subclass(LEAGUE, ORGANIZATION)
    # the Wikidata-like side: items typed more than once, a work only the relations typed "creative work"
    b.item("Q500", "The Hidden", p31=(WORK,))
    b.item("Q501", "Shortland Street", p31=(WORK, TV_SERIES))
    b.item("Q502", "Blade Runner", p31=(WORK, FILM))
    for k in range(2):  # two of each class, so every class has a kind word (``class_kinds``)
        b.item(f"Q51{k}", f"Film {k}", p31=(FILM,)).item(f"Q52{k}", f"Series {k}", p31=(TV_SERIES,))
        b.item(f"Q53{k}", f"Tanker {k}", p31=(TANKER,)).item(f"Q54{k}", f"Vehicle {k}", p31=(LAUNCH_VEHICLE,))
    b.item("Q600", "New York", "New York City", p31=(CITY,))
    b.item("Q601", "Ho Chi Minh", "Ho Chi Minh City", p31=(CITY,))
    b.item("Q602", "Ohio", "State of Ohio", p31=(US_STATE,))
    b.item("Q603", "Westchester County", p31=(ADMIN,))
    b.item("Q700", "ITS", p31=(SOFTWARE,))  # the corpus KB had typed the launch vehicle software
    b.item("Q701", "NeXTSTEP", p31=(SOFTWARE,))
    b.item("Q702", "SQL Server Compact", p31=(SOFTWARE,))
    b.item("Q703", "Oracle Database", p31=(DBMS, SOFTWARE)).item("Q704", "IBM Db2 Database", p31=(DBMS, SOFTWARE))
    b.item("Q800", "Reichskommissariat of Belgium and Northern France", p31=(MILITARY_UNIT,))
    b.item("Q801", "American Football Conference", p31=(MILITARY_UNIT, LEAGUE))
    b.item("Q802", "Farm Security Administration", p31=(AGENCY,))
    b.item("Q803", "Food and Drug Administration", p31=(AGENCY,))
    return b


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _world().write(tmp_path_factory.mktemp("kinds") / "index")


def _doc(title: str, sentence: str, *mentions: tuple[str, str]) -> dict[str, Any]:
    toks = sentence.split()
    ents = []
    for name, coarse in mentions:
        ms = name.split()
        i = next(i for i in range(len(toks)) if toks[i:i + len(ms)] == ms)
        ents.append([mention(name, 0, [i, i + len(ms)], coarse)])
    return {"title": title, "sents": [toks], "vertexSet": ents, "labels": []}


HIDDEN = _doc("Joseph Whipp", "He appeared in the 1987 science fiction movie The Hidden .", ("The Hidden", "MISC"))
NEW_YORK = _doc("Starin's Glen Island", "It was a summer resort in Westchester County , New York , developed by a magnate .",
                ("New York", "LOC"), ("Westchester County", "LOC"))
ITS = _doc("ITS launch vehicle", "It had two versions , the spaceship and the ITS tanker to deliver propellants .",
           ("ITS", "MISC"))
SQL = _doc("Microsoft Sync Framework", "Sync Services includes an embedded SQL Server Compact database to store "
           "metadata .", ("SQL Server Compact", "MISC"), ("Sync Services", "MISC"))
REICH = _doc("Reichskommissariat", "The Reichskommissariat of Belgium and Northern France was a German civil "
             "administration ( Zivilverwaltung ) .", ("Reichskommissariat of Belgium and Northern France", "ORG"),
             ("German", "LOC"))


def _asks(con: Any, doc: dict[str, Any], own: str, coarse: str) -> tuple[NounClasses, Any, dict[str, frozenset[str]]]:
    nouns = NounClasses(con, class_kinds(con))
    found = kind_nouns(doc, 0)
    nouns.prepare(found)
    types: dict[str, set[str]] = {}
    for q, c in con.execute("SELECT id, class FROM types").fetchall():
        types.setdefault(q, set()).add(c)
    anc = ancestors(con, {c for cs in types.values() for c in cs})
    up = {q: item_classes(cs, anc) for q, cs in types.items()}
    return nouns, entity_kinds(found, coarse, up[own], nouns), up


@pytest.mark.parametrize(("doc", "own", "coarse", "wrong", "right"), [
    # "the 1987 science fiction movie Shortland Street" (a television soap); a film fits
    (HIDDEN, "Q500", "MISC", "Q501", "Q502"),
    # "in County Laois , Ho Chi Minh": the county's state is no city; Ohio is a state
    (NEW_YORK, "Q600", "LOC", "Q601", "Q602"),
    # "the NeXTSTEP tanker": a tanker fits
    (ITS, "Q700", "MISC", "Q701", "Q530"),
    # "an embedded NeXTSTEP database": the class learned for "database" from the index's names ("Oracle
    # Database", "IBM Db2 Database") is database management system
    (SQL, "Q702", "MISC", "Q701", "Q703"),
    # "The American Football Conference was a Burmese civil administration": "administration" is a government
    # agency, learned from "Farm Security Administration" and "Food and Drug Administration"
    (REICH, "Q800", "ORG", "Q801", "Q802"),
])
def test_a_new_item_must_be_of_the_kind_the_noun_says(index: Path, doc: dict[str, Any], own: str, coarse: str,
                                                     wrong: str, right: str) -> None:
    _, asked, up = _asks(connect(index), doc, own, coarse)
    assert asked, "the noun asks a kind"
    assert not all(fits(up[wrong], kind) for _, kind in asked)
    assert all(fits(up[right], kind) for _, kind in asked)


def test_what_asks_nothing(index: Path) -> None:
    con = connect(index)
    # a negated definition: "found that intelligent design was not science"
    doc = _doc("Intelligent design", "The judge found that intelligent design was not science , and more .",
               ("intelligent design", "MISC"))
    assert _asks(con, doc, "Q500", "MISC")[1] == ()
    # a noun after a name without an article may be another thing's ("Led Zeppelin songs")
    doc = _doc("T", "It was like other epic Hidden films .", ("Hidden", "MISC"))
    assert _asks(con, doc, "Q500", "MISC")[1] == ()
    # a place's word asks nothing of an organisation: "the state Democratic Party" is no state
    doc = _doc("T", "He led the state Farm Security Administration .", ("Farm Security Administration", "ORG"))
    assert _asks(con, doc, "Q802", "ORG")[1] == ()
    # a word no class names and no name teaches: "the Hidden gizmo"
    doc = _doc("T", "It was the Hidden gizmo .", ("Hidden", "MISC"))
    assert _asks(con, doc, "Q500", "MISC")[1] == ()


def test_a_town_may_be_a_city_to_a_reader(index: Path) -> None:
    doc = _doc("T", "It lies in the town of New York .", ("New York", "LOC"))
    _, asked, up = _asks(connect(index), doc, "Q600", "LOC")
    assert asked and all(fits(up["Q601"], k) for _, k in asked) and not all(fits(up["Q602"], k) for _, k in asked)


def _generate(tmp_path: Path, index: Path, doc: dict[str, Any], links: list[str | None], seeds: int = 6) -> list[dict]:
    docs, link_file = tmp_path / "docs.json", tmp_path / "links.json"
    docs.write_text(json.dumps([doc]))
    link_file.write_text(json.dumps({doc["title"]: links}))
    generate(docs, index, tmp_path / "out", links=link_file, seeds=seeds, progress=False, force=True,
             allow_training_names=True)  # a unit test of the kind rule, no trained model to keep names from
    return pl.read_parquet(tmp_path / "out" / "substitutions.parquet").filter(pl.col("entity") == 0).to_dicts()


def test_generate_draws_a_film_for_the_movie(index: Path, tmp_path: Path) -> None:
    # The Hidden's only class is "creative work", which Shortland Street and Blade Runner have too: the draw
    # may give either, and "the 1987 science fiction movie" takes the film only
    rows = _generate(tmp_path, index, HIDDEN, ["Q500"])
    assert {r["new_names"][0] for r in rows} == {"Blade Runner"}


def test_generate_keeps_a_county_state_no_candidate_can_be(index: Path, tmp_path: Path) -> None:
    # New York is typed a city, and every candidate is a city: "in Westchester County , Ho Chi Minh" reads
    # wrong, so New York is kept, and says why
    rows = _generate(tmp_path, index, NEW_YORK, ["Q600", "Q603"])
    assert {(r["kind"], r["reason"]) for r in rows} == {("kept", "kind_noun")}
