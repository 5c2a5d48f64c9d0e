"""A place's adjective names what the place became (``envbench.rename.adjective_of``): "an American writer ...
in the United States" never reads "a Nepalese writer ... in the State of Qatar"; the pairing, and end to end
through ``generate`` over a hand-made index where the adjective and the place are two items, as the offline
KB makes them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from envbench.rename.adjective_of import adjectives_by_place, adjectives_of
from envbench.rename.generate import generate
from tests.envbench.index_fixture import Builder, mention
from tests.envbench.index_fixture import eval_qids as _eval_qids
from wikidata_index.index import Demonym
from wikidata_index.names import fold

COUNTRY, DEMONYM_CLASS, ISLAND_COUNTRY, ENCLAVE = "Q6256", "Q2000000000001", "Q112099", "Q171441"
COUNTRIES = ("Avaria", "Borduria", "Carpania", "Drovnia", "Elbonia", "Florin", "Genovia", "Hesperia", "Ivalice",
             "Jelonia", "Kalvaria", "Lubovia")


def _dem(text: str) -> Demonym:
    return Demonym(text, "normal", None, fold(text))


def test_an_entity_named_by_a_place_items_demonyms_is_its_adjective() -> None:
    own = {"Qus": (_dem("American"),), "Qam": (_dem("American"),), "Qfr": (_dem("French"),)}
    names = [["United States", "US"], ["American"], ["Americans"], ["Kurt"], ["France"], ["French", "France"]]
    coarse = ["LOC", "MISC", "LOC", "PER", "LOC", "LOC"]
    qids = ["Qus", "Qam", "Qpeople", "Qkurt", "Qfr", "Qfr2"]
    got = adjectives_of(names, coarse, qids, own)
    # "American" and "Americans" (its regular plural) follow "United States"; "France" has no adjective: the
    # last entity has a noun name of its own
    assert got == {1: 0, 2: 0}
    assert adjectives_by_place(got) == {0: (1, 2)}
    # the adjective's own item has the demonym too ("American" is its label): it is no place, having no noun
    assert 1 not in got.values()
    assert adjectives_of(names, coarse, qids, own, skip={0}) == {}  # a pair another rule settles
    # two places whose items both give "American": neither is the adjective's place
    two = adjectives_of([["United States"], ["America"], ["American"]], ["LOC"] * 3, ["Qus", "Qus2", "Qam"],
                        {"Qus": (_dem("American"),), "Qus2": (_dem("American"),)})
    assert two == {}
    # a person's name is never a demonym, nor the place of one
    assert adjectives_of([["American"], ["United States"]], ["PER", "LOC"], ["Qp", "Qus"], own) == {}


def _world() -> tuple[Builder, dict[str, str]]:
    """Countries, each with a demonym, and the KB-made demonym items ("Avarian"), as ``kb-from-corpus`` makes them."""
    b = Builder().item(COUNTRY, "country").item(DEMONYM_CLASS, "demonym of a country")
    ids: dict[str, str] = {}
    countries, demonyms = _eval_qids("Q81", len(COUNTRIES)), _eval_qids("Q82", len(COUNTRIES))
    for k, name in enumerate(COUNTRIES):
        adj = f"{name[:-1]}an"
        b.item(countries[k], name, p31=(COUNTRY,)).item(demonyms[k], adj, p31=(DEMONYM_CLASS,))
        for q in (countries[k], demonyms[k]):
            b.rows["demonyms"].append({"id": q, "lang": "en", "text": adj, "rank": "normal", "form": None,
                                       "folded": fold(adj)})
        ids[name], ids[adj] = countries[k], demonyms[k]
    # an island country, the one item of its class: it keeps its name (``no_candidate``)
    b.item(ISLAND_COUNTRY, "island country").item("Q8300", "Zembla", p31=(ISLAND_COUNTRY,))
    b.item("Q8301", "Zemblan", p31=(DEMONYM_CLASS,))
    for q in ("Q8300", "Q8301"):
        b.rows["demonyms"].append({"id": q, "lang": "en", "text": "Zemblan", "rank": "normal", "form": None,
                                   "folded": fold("Zemblan")})
    ids["Zembla"], ids["Zemblan"] = "Q8300", "Q8301"
    # enclaves: only the first has a demonym, so no other one can give its adjective a form
    b.item(ENCLAVE, "enclave")
    for k, q in enumerate(_eval_qids("Q83", 6)):
        b.item(q, f"Enclave {k}" if k else "Ostrava", p31=(ENCLAVE,))
        ids[f"Enclave {k}" if k else "Ostrava"] = q
    b.item("Q8399", "Ostravan", p31=(DEMONYM_CLASS,))
    for q in (ids["Ostrava"], "Q8399"):
        b.rows["demonyms"].append({"id": q, "lang": "en", "text": "Ostravan", "rank": "normal", "form": None,
                                   "folded": fold("Ostravan")})
    ids["Ostravan"] = "Q8399"
    return b, ids


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    b, ids = _world()
    return b.write(tmp_path_factory.mktemp("adjectives") / "index"), ids


def _doc(sents: list[str], ents: list[tuple[str, str]]) -> dict[str, Any]:
    toks = [s.split() for s in sents]
    vertex = [[mention(name, si, [i, i + 1], coarse) for si, t in enumerate(toks) for i in range(len(t)) if t[i] == name]
              for name, coarse in ents]
    return {"title": "Kurt", "sents": toks, "vertexSet": vertex, "labels": []}


def _generate(tmp_path: Path, index: Path, doc: dict[str, Any], links: list[str | None]) -> list[dict]:
    docs, link_file = tmp_path / "docs.json", tmp_path / "links.json"
    docs.write_text(json.dumps([doc]))
    link_file.write_text(json.dumps({doc["title"]: links}))
    generate(docs, index, tmp_path / "out", links=link_file, seeds=8, progress=False, force=True,
             allow_training_names=True)  # a unit test of the rule: no trained model to keep names from
    return pl.read_parquet(tmp_path / "out" / "substitutions.parquet").to_dicts()


@pytest.mark.parametrize("adjective_first", [True, False])
def test_the_adjective_names_what_its_place_became(world: tuple[Path, dict[str, str]], tmp_path: Path,
                                                    adjective_first: bool) -> None:
    # "Kurt is an Avarian writer . He lived in Avaria .": the renamed writer is of the country he lived in, in
    # every seed, whichever of the two the document names first (the adjective waits for its place)
    index, ids = world
    sents = ["Kurt is an Avarian writer .", "He lived in Avaria ."]
    ents = [("Avarian", "MISC"), ("Avaria", "LOC")]
    if not adjective_first:
        sents, ents = sents[::-1], ents[::-1]
    doc = _doc(sents, ents)
    rows = _generate(tmp_path, index, doc, [ids[n] for n, _ in ents])
    assert len(rows) == 8 * 2
    adj, place = (0, 1) if adjective_first else (1, 0)
    by_seed: dict[int, dict[int, dict]] = {}
    for r in rows:
        by_seed.setdefault(r["seed"], {})[r["entity"]] = r
    for got in by_seed.values():
        country = got[place]["new_names"][0]
        assert got[place]["kind"] == "linked" and country != "Avaria"
        assert got[adj]["kind"] == "derived" and got[adj]["built_on"] == [place]
        assert got[adj]["new_names"] == [f"{country[:-1]}an"]  # "Borduria" -> "Bordurian"
    assert len({got[place]["new_names"][0] for got in by_seed.values()}) > 2  # the seeds still draw apart


def test_an_adjective_keeps_its_name_with_its_kept_place(world: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    # the place finds no item to become: "a Zemblan writer ... in Zembla" stays as it is, never "a Bordurian
    # writer ... in Zembla"; an adjective with no place in its document draws, as every entity does
    index, ids = world
    doc = _doc(["Kurt is a Zemblan writer .", "He lived in Zembla ."], [("Zemblan", "MISC"), ("Zembla", "LOC")])
    rows = _generate(tmp_path, index, doc, [ids["Zemblan"], ids["Zembla"]])
    assert {(r["entity"], r["kind"], r["reason"]) for r in rows} == {(0, "kept", "referent"), (1, "kept", "no_candidate")}
    alone = _generate(tmp_path, index, _doc(["Kurt is a Zemblan writer ."], [("Zemblan", "MISC")]), [ids["Zemblan"]])
    assert {r["kind"] for r in alone} == {"linked"}


def test_the_rule_only_prefers_a_place_whose_forms_no_candidate_gives_still_draws(
        world: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    # no other enclave has a demonym: the place takes its first fit, and the adjective draws its own, as
    # before the rule (never kept for it)
    index, ids = world
    doc = _doc(["Kurt is an Ostravan writer .", "He lived in Ostrava ."], [("Ostravan", "MISC"), ("Ostrava", "LOC")])
    rows = _generate(tmp_path, index, doc, [ids["Ostravan"], ids["Ostrava"]])
    assert {(r["entity"], r["kind"]) for r in rows} == {(0, "linked"), (1, "linked")}
    assert all(r["new_names"][0].startswith("Enclave") for r in rows if r["entity"] == 1)
