"""WikidataIndex over a small hand-made index and the real samples."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from etl.io import InputError
from tests.conftest import shared_path
from tests.wikidata_index.test_ingest import _dump_bytes, _item, _sample_entities, _write
from wikidata_index import WikidataIndex
from wikidata_index.ingest import ingest_dump

B = 900000  # hand-made ids far from the real samples' ids


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("ix")
    ents = [
        _item(B + 1, [B + 10], label="Mediaș", aliases=["Medias", "Mediasch"]),
        _item(B + 2, [B + 10, B + 11], label="MEDIAS"),
        _item(B + 3, [B + 11], label="Other", aliases=["Mediaș"]),
        _item(B + 10, [], [B + 11], label="town"),
        _item(B + 11, [], [B + 12], label="settlement"),
        _item(B + 12, [], [B + 10], label="place"),  # a cycle 10 -> 11 -> 12 -> 10
        _item(B + 13, [], [B + 14], label="x"),
    ]
    ents[1]["claims"]["P31"][1]["rank"] = "deprecated"
    ents[6]["claims"]["P279"][0]["rank"] = "deprecated"
    ents.append({"type": "property", "id": "P900017", "datatype": "wikibase-item",
                 "labels": {"en": {"language": "en", "value": "country"}}, "claims": {"P2302": [
                     {"rank": "normal", "mainsnak": {"snaktype": "value", "property": "P2302", "datavalue": {
                         "type": "wikibase-entityid", "value": {"entity-type": "item", "id": "Q21510865"}}},
                      "qualifiers": {"P2308": [{"snaktype": "value", "property": "P2308", "datavalue": {
                          "type": "wikibase-entityid", "value": {"entity-type": "item", "id": "Q6256"}}}]}}]}})
    ents += _sample_entities()
    ingest_dump(_write(tmp / "d.json", _dump_bytes(ents)), tmp / "index", workers=1, progress=False)
    return tmp / "index"


def test_lookups(index: Path) -> None:
    with WikidataIndex(index) as ix:
        assert ix.entity("Q900001")["label"] == "Mediaș"
        assert ix.entity("Q999") is None
        assert ix.names("Q900001") == ["Mediaș", "Medias", "Mediasch"]
        assert ix.names("Q900001", lang="de") == []
        assert ix.types("Q900002") == ["Q900010"]  # deprecated Q11 ignored
        assert ix.superclasses("Q900010") == ["Q900010", "Q900011", "Q900012"]  # cycle terminates
        assert ix.superclasses("Q900013") == []
        assert ix.constraints("P900017") == [{"constraint_type": "Q21510865", "class": "Q6256", "relation": None}]
        assert ix.popularity("Q900010") == ix.entity("Q900010")["popularity"] > 0
        assert set(ix.tables()) >= {"entities", "names", "types"}
        assert ix.con.execute("SELECT count(*) FROM edges").fetchone()[0] > 0


def test_find_exact_then_folded_by_popularity(index: Path) -> None:
    with WikidataIndex(index) as ix:
        pops = {q: ix.popularity(q) for q in ("Q900001", "Q900002", "Q900003")}
        exact = sorted(["Q900001", "Q900003"], key=lambda q: (-pops[q], q))
        assert ix.find("Mediaș") == exact + ["Q900002"]
        assert ix.find("medias") == sorted(["Q900001", "Q900002", "Q900003"], key=lambda q: (-pops[q], q))
        assert ix.find("Douglas Adams") == ["Q42"]
        assert ix.find("nothing like this") == []


def test_real_sample_facts(index: Path) -> None:
    doc = orjson.loads(shared_path("wikidata-samples", "syvb-wikidata", "Q45.json").read_bytes())["entities"]["Q45"]
    with WikidataIndex(index) as ix:
        e = ix.entity("Q45")
        assert e["label"] == "Portugal" and e["sitelinks"] == len(doc["sitelinks"]) and e["enwiki"] == "Portugal"
        aliases = sorted({a["value"] for a in doc["aliases"]["en"]} - {"Portugal"})
        assert ix.names("Q45") == ["Portugal"] + aliases


def test_missing_index_and_table(tmp_path: Path, index: Path) -> None:
    with pytest.raises(InputError) as exc:
        WikidataIndex(tmp_path / "none")
    assert str(exc.value) == f"no index at {tmp_path / 'none'}; run `envbench ingest-dump DUMP --out {tmp_path / 'none'}` first"
    partial = tmp_path / "partial"
    shutil.copytree(index, partial)
    shutil.rmtree(partial / "subclasses")
    with WikidataIndex(partial) as ix:
        assert ix.names("Q900001")[0] == "Mediaș"
        with pytest.raises(InputError) as exc:
            ix.superclasses("Q900001")
    assert str(exc.value) == (f"index at {partial} has no table 'subclasses'; "
                              f"rerun `envbench ingest-dump DUMP --out {partial} --force`")


def test_materialize_gives_the_same_answers(index: Path) -> None:
    with WikidataIndex(index) as views, WikidataIndex(index) as mem:
        mem.materialize()
        mem.materialize("names")  # again: idempotent
        for q in ("Q900001", "Q900002", "Q42", "Q45"):
            assert mem.entity(q) == views.entity(q) and mem.names(q) == views.names(q)
            assert mem.superclasses(q) == views.superclasses(q)
        assert mem.find("medias") == views.find("medias")
