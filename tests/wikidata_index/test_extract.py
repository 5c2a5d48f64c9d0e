"""Extraction against the real samples (counted independently from the JSON) and hand-made cases."""

from __future__ import annotations

import orjson
import pytest

from tests.conftest import shared_path
from wikidata_index.extract import EntityParser, Malformed, Rows, Skipped, entity_id_of, extract_entity
from wikidata_index.names import fold

CURRENT = [
    ("syvb-wikidata", "Q42.json"),
    ("syvb-wikidata", "Q45.json"),
    ("wikibase-sdk", "Q2112.json"),
    ("wikibase-sdk", "Q4132785.json"),
    ("dahlia-wikidata", "Q1299.json"),
    ("entitybase-backend", "P17.json"),
    ("wikidata-toolkit", "wbgetentities-Douglas-Adams.json"),
    ("wikidata-toolkit", "wbgetentites-Oliver-Kahn.json"),
    ("wikidata-toolkit", "wbgetentities-Q1.json"),
    ("wikidata-toolkit", "JsonDeserializer-item.json"),
    ("wikidata-toolkit", "JsonDeserializer-property.json"),
]


def _load_entities(*parts: str) -> list[dict]:
    doc = orjson.loads(shared_path("wikidata-samples", *parts).read_bytes())
    return list(doc["entities"].values()) if "entities" in doc else [doc]


def _expected(ent: dict) -> dict:
    """What the tables should hold, computed straight from the JSON."""
    en_label = ent.get("labels", {}).get("en", {}).get("value")
    aliases = [a["value"] for a in ent.get("aliases", {}).get("en", [])]
    names = ([en_label] if en_label else []) + [a for a in dict.fromkeys(aliases) if a != en_label]
    p31 = []
    edges = 0
    for pid, statements in ent.get("claims", {}).items():
        for st in statements:
            snak = st["mainsnak"]
            if snak["snaktype"] != "value" or snak["datavalue"]["type"] != "wikibase-entityid":
                continue
            val = snak["datavalue"]["value"]
            vid = val.get("id") or ("Q" + str(val["numeric-id"]) if val["entity-type"] == "item" else None)
            if not vid or not vid.startswith("Q"):
                continue
            if pid == "P31":
                p31.append((vid, st["rank"]))
            if st["rank"] != "deprecated":
                edges += 1
    demonyms = sorted((st["mainsnak"]["datavalue"]["value"]["text"], st["rank"])
                      for st in ent.get("claims", {}).get("P1549", [])
                      if st["rank"] != "deprecated" and st["mainsnak"]["snaktype"] == "value"
                      and st["mainsnak"]["datavalue"]["value"]["language"] == "en")
    return {"names": names, "p31": sorted(p31), "edges": edges,
            "sitelinks": len(ent.get("sitelinks", {})), "label": en_label, "demonyms": demonyms}


@pytest.mark.parametrize("use_simdjson", [True, False], ids=["simdjson", "orjson"])
@pytest.mark.parametrize("parts", CURRENT, ids=[p[1] for p in CURRENT])
def test_real_samples_match_the_json(parts: tuple[str, str], use_simdjson: bool) -> None:
    for ent in _load_entities(*parts):
        exp = _expected(ent)
        parser = EntityParser(use_simdjson=use_simdjson)
        rows, stats = Rows(), {}
        assert extract_entity(parser.parse(orjson.dumps(ent)), ["en"], rows, stats) == ent["type"]
        e = rows.columns["entities"]
        assert e["id"] == [ent["id"]] and e["label"] == [exp["label"]]
        assert e["sitelinks"] == [exp["sitelinks"]]
        n = rows.columns["names"]
        assert n["name"] == exp["names"]
        assert n["is_label"] == [True] * bool(exp["label"]) + [False] * (len(exp["names"]) - bool(exp["label"]))
        assert n["folded"] == [fold(x) for x in exp["names"]]
        t = rows.columns["types"]
        assert sorted(zip(t["class"], t["rank"])) == exp["p31"]
        assert rows.count("edges") == exp["edges"]
        d = rows.columns["demonyms"]
        assert sorted(zip(d["text"], d["rank"])) == exp["demonyms"]
        assert d["folded"] == [fold(x) for x in d["text"]]


def test_known_facts_of_douglas_adams() -> None:
    (ent,) = _load_entities("syvb-wikidata", "Q42.json")
    rows = Rows()
    extract_entity(EntityParser().parse(orjson.dumps(ent)), ["en", "de"], rows, {})
    assert rows.columns["types"]["class"] == ["Q5"]
    assert rows.columns["entities"]["enwiki"] == ["Douglas Adams"]
    assert ("de", "Douglas Adams") in zip(rows.columns["names"]["lang"], rows.columns["names"]["name"])


def test_property_constraints_of_p17() -> None:
    (ent,) = _load_entities("entitybase-backend", "P17.json")
    rows = Rows()
    extract_entity(EntityParser().parse(orjson.dumps(ent)), ["en"], rows, {})
    c = rows.columns["property_constraints"]
    triples = set(zip(c["constraint_type"], c["class"], c["relation"]))
    # independently: P2302 = Q21503250 (subject type) statements with their P2308 classes
    want = set()
    for st in ent["claims"]["P2302"]:
        if st["rank"] == "deprecated" or st["mainsnak"]["snaktype"] != "value":
            continue
        ctype = st["mainsnak"]["datavalue"]["value"]["id"]
        q = st.get("qualifiers", {})
        rel = next((s["datavalue"]["value"]["id"] for s in q.get("P2309", []) if s["snaktype"] == "value"), None)
        classes = [s["datavalue"]["value"]["id"] for s in q.get("P2308", []) if s["snaktype"] == "value"]
        want |= {(ctype, cls, rel) for cls in classes or [None]}
    assert triples == want
    assert len(triples) > 10
    assert rows.columns["properties"]["datatype"] == ["wikibase-item"]


def test_dump_array_entities_without_id_field() -> None:
    lines = shared_path("wikidata-samples", "wikidata-toolkit", "mock-dump-for-testing.json").read_bytes().splitlines()
    rows, stats, kinds = Rows(), {}, []
    for line in lines[1:-1]:
        try:
            kinds.append(extract_entity(EntityParser().parse(line.rstrip(b",")), ["de"], rows, stats))
        except Skipped as s:
            kinds.append("skipped:" + s.reason)
    assert kinds == ["item", "item", "property", "skipped:lexeme"]
    # P31 values are given only as numeric-id there
    assert rows.columns["types"]["class"] == ["Q1454986", "Q331769", "Q9415"]
    assert rows.columns["names"]["name"][:5] == ["Universum", "Weltall", "All", "Kosmos", "Weltraum"]


@pytest.mark.parametrize("name", ["JsonDeserializer-lexeme.json", "JsonDeserializer-mediainfo.json"])
def test_lexeme_and_mediainfo_are_skipped(name: str) -> None:
    raw = shared_path("wikidata-samples", "wikidata-toolkit", name).read_bytes()
    with pytest.raises(Skipped) as exc:
        extract_entity(EntityParser().parse(raw), ["en"], Rows(), {})
    assert exc.value.reason in ("lexeme", "mediainfo")


@pytest.mark.parametrize("name", ["Chicago.json", "Tours.json", "Haaften.json", "P625.json", "Wernigerode.json"])
def test_legacy_2014_is_rejected_with_reason(name: str) -> None:
    raw = shared_path("wikidata-samples", "wikidata-toolkit-legacy-2014", name).read_bytes()
    with pytest.raises(Malformed, match="legacy 2014") as exc:
        extract_entity(EntityParser().parse(raw), ["en"], Rows(), {})
    assert exc.value.reason == "legacy_format"


def _snak(pid: str, snaktype: str = "value", qid: str | None = "Q5", numeric_only: bool = False) -> dict:
    snak: dict = {"snaktype": snaktype, "property": pid, "datatype": "wikibase-item"}
    if snaktype == "value":
        val = {"entity-type": "item", "numeric-id": int(qid[1:])}
        if not numeric_only:
            val["id"] = qid
        snak["datavalue"] = {"type": "wikibase-entityid", "value": val}
    return snak


def _run(ent: dict, use_simdjson: bool = True) -> tuple[Rows, dict]:
    rows, stats = Rows(), {}
    extract_entity(EntityParser(use_simdjson).parse(orjson.dumps(ent)), ["en"], rows, stats)
    return rows, stats


@pytest.mark.parametrize("use_simdjson", [True, False])
def test_novalue_somevalue_and_deprecated(use_simdjson: bool) -> None:
    ent = {"type": "item", "id": "Q7", "labels": {}, "claims": {
        "P31": [
            {"mainsnak": _snak("P31", "novalue"), "rank": "normal"},
            {"mainsnak": _snak("P31", "somevalue"), "rank": "normal"},
            {"mainsnak": _snak("P31", qid="Q5"), "rank": "deprecated"},
            {"mainsnak": _snak("P31", qid="Q215627", numeric_only=True), "rank": "preferred"},
        ],
        "P279": [{"mainsnak": _snak("P279", qid="Q35120"), "rank": "normal"}],
        "P18": [{"mainsnak": {"snaktype": "value", "property": "P18",
                              "datavalue": {"type": "string", "value": "x.jpg"}}, "rank": "normal"}],
    }}
    rows, stats = _run(ent, use_simdjson)
    assert list(zip(rows.columns["types"]["class"], rows.columns["types"]["rank"])) == [
        ("Q5", "deprecated"), ("Q215627", "preferred")]
    assert rows.columns["subclasses"]["superclass"] == ["Q35120"]
    # deprecated P31 is not an edge
    assert list(zip(rows.columns["edges"]["property"], rows.columns["edges"]["object"])) == [
        ("P31", "Q215627"), ("P279", "Q35120")]
    assert stats == {"snaks_novalue": 1, "snaks_somevalue": 1}
    assert rows.columns["entities"]["label"] == [None] and rows.count("names") == 0


def _mono(text: object, lang: object = "en", rank: object = "normal", **extra: object) -> dict:
    return {"mainsnak": {"snaktype": "value", "property": "P1549", "datatype": "monolingualtext",
                         "datavalue": {"type": "monolingualtext", "value": {"text": text, "language": lang}}},
            "rank": rank, **extra}


@pytest.mark.parametrize("use_simdjson", [True, False], ids=["simdjson", "orjson"])
@pytest.mark.parametrize("languages", [["en"], ["de", "fr"]], ids=["en", "de+fr"])
def test_real_demonyms_of_portugal(use_simdjson: bool, languages: list[str]) -> None:
    """Q45 (2021) states 30 P1549 demonyms in 18 languages; the only sample entity that has any."""
    (ent,) = _load_entities("syvb-wikidata", "Q45.json")
    rows = Rows()
    extract_entity(EntityParser(use_simdjson).parse(orjson.dumps(ent)), languages, rows, {})
    d = rows.columns["demonyms"]
    got = sorted(zip(d["lang"], d["text"], d["form"]))
    if languages == ["en"]:
        assert got == [("en", "Portuguese", None)]
    else:  # English always, and the requested languages: French has masculine and feminine forms
        assert got == [("en", "Portuguese", None), ("fr", "Portugais", "Q47088290"),
                       ("fr", "Portugaise", "Q47088293")]
    assert set(d["rank"]) == {"normal"} and set(d["id"]) == {"Q45"}


@pytest.mark.parametrize("use_simdjson", [True, False], ids=["simdjson", "orjson"])
def test_demonym_rules(use_simdjson: bool) -> None:
    form = {"P518": [{"snaktype": "novalue", "property": "P518"}, _snak("P518", qid="Q1775415"),
                     _snak("P518", qid="Q499327")]}
    ent = {"type": "item", "id": "Q30", "labels": {}, "claims": {
        "P1549": [
            _mono("American"), _mono("Yankee", rank="deprecated"), _mono("Amerikaner", "de"),
            _mono("US-American", rank="preferred"), _mono(""), _mono(5), _mono("X", None),
            _mono("américaine", "fr", qualifiers=form),
            {"mainsnak": {"snaktype": "novalue", "property": "P1549", "datatype": "monolingualtext"},
             "rank": "normal"},
            {"mainsnak": {"snaktype": "value", "property": "P1549", "datatype": "monolingualtext",
                          "datavalue": {"type": "string", "value": "American"}}, "rank": "normal"},
        ],
        # monolingual text of another property is no demonym
        "P1705": [dict(_mono("United States"), mainsnak=dict(_mono("x")["mainsnak"], property="P1705"))],
    }}
    rows, stats = Rows(), {}
    extract_entity(EntityParser(use_simdjson).parse(orjson.dumps(ent)), ["fr"], rows, stats)
    d = rows.columns["demonyms"]
    assert list(zip(d["lang"], d["text"], d["rank"], d["form"], d["folded"])) == [
        ("en", "American", "normal", None, "american"), ("en", "US-American", "preferred", None, "us-american"),
        ("fr", "américaine", "normal", "Q1775415", "americaine")]
    assert stats == {"snaks_novalue": 1}  # the P518 qualifier's; the demonym's own novalue is not counted
    # a rank that is not a string is a malformed record, as for every statement the index reads
    ent["claims"]["P1549"].append(_mono("Bad", rank=5))
    with pytest.raises(Malformed, match="rank"):
        extract_entity(EntityParser(use_simdjson).parse(orjson.dumps(ent)), ["fr"], Rows(), {})


def test_no_labels_no_claims_and_php_empty_arrays() -> None:
    rows, _ = _run({"type": "item", "id": "Q9"})
    assert rows.columns["entities"]["label"] == [None] and rows.count("edges") == 0
    rows, _ = _run({"type": "item", "id": "Q9", "labels": [], "aliases": [], "claims": [], "sitelinks": []})
    assert rows.columns["entities"]["sitelinks"] == [0]


def test_mul_label_stands_in_for_english() -> None:
    rows, _ = _run({"type": "item", "id": "Q9", "labels": {"mul": {"language": "mul", "value": "Xy"}}})
    assert rows.columns["entities"]["label"] == ["Xy"]


def test_duplicate_alias_and_label_kept_once() -> None:
    ent = {"type": "item", "id": "Q3", "labels": {"en": {"language": "en", "value": "A"}},
           "aliases": {"en": [{"language": "en", "value": "A"}, {"language": "en", "value": "B"},
                              {"language": "en", "value": "B"}]}}
    rows, _ = _run(ent)
    assert rows.columns["names"]["name"] == ["A", "B"]


@pytest.mark.parametrize("record,reason", [
    ({"entity": "Q1", "redirect": "Q2"}, "redirect"),
    ({"id": "Q1", "type": "item", "redirect": "Q2"}, "redirect"),
    ({"id": "Q404", "missing": ""}, "missing"),
    ({"id": "L1", "type": "lexeme"}, "lexeme"),
])
def test_skipped_records(record: dict, reason: str) -> None:
    with pytest.raises(Skipped) as exc:
        _run(record)
    assert exc.value.reason == reason


@pytest.mark.parametrize("record,reason", [
    ({"type": "item"}, "no_id"),
    ({"id": "Q1"}, "no_type"),
    ({"id": "P1", "type": "item"}, "bad_id"),
    ({"id": "Q1", "type": "item", "claims": [1]}, "bad_claims"),
    ({"id": "Q1", "type": "item", "labels": {"en": {"language": "en", "value": {"x": 1}}}}, "bad_term"),
    ({"id": "Q1", "type": "item", "descriptions": {"en": {"language": "en", "value": 7}}}, "bad_term"),
])
def test_malformed_records(record: dict, reason: str) -> None:
    with pytest.raises(Malformed) as exc:
        _run(record)
    assert exc.value.reason == reason


def test_failed_record_adds_no_rows() -> None:
    rows = Rows()
    ent = {"type": "item", "id": "Q1", "labels": {"en": {"language": "en", "value": "A"}},
           "claims": {"P31": [{"mainsnak": {"snaktype": "bogus"}}]}}
    with pytest.raises(Malformed):
        extract_entity(EntityParser().parse(orjson.dumps(ent)), ["en"], rows, {})
    assert rows.count("entities") == 0 and rows.count("names") == 0


def test_entity_id_of_old_and_new_shapes() -> None:
    assert entity_id_of({"entity-type": "item", "numeric-id": 5}) == "Q5"
    assert entity_id_of({"entity-type": "property", "numeric-id": 17}) == "P17"
    assert entity_id_of({"id": "L1-F2", "entity-type": "form"}) == "L1-F2"
    assert entity_id_of({"entity-type": "form"}) is None


def test_subject_and_value_type_constraints() -> None:
    def constraint(ctype: str, classes: list[str], relation: str | None, rank: str = "normal") -> dict:
        quals = {"P2308": [_snak("P2308", qid=c) for c in classes] + [_snak("P2308", "somevalue")]}
        if relation:
            quals["P2309"] = [_snak("P2309", qid=relation)]
        return {"mainsnak": _snak("P2302", qid=ctype), "qualifiers": quals, "rank": rank}

    ent = {"type": "property", "id": "P27", "datatype": "wikibase-item",
           "labels": {"en": {"language": "en", "value": "country of citizenship"}},
           "claims": {"P2302": [constraint("Q21503250", ["Q5", "Q95074"], "Q21503252"),
                                constraint("Q21510865", ["Q6256"], "Q21503252"),
                                constraint("Q21510865", ["Q1"], None, rank="deprecated"),
                                constraint("Q19474404", [], None)]}}
    rows, _ = _run(ent)
    c = rows.columns["property_constraints"]
    assert list(zip(c["property"], c["constraint_type"], c["class"], c["relation"])) == [
        ("P27", "Q21503250", "Q5", "Q21503252"), ("P27", "Q21503250", "Q95074", "Q21503252"),
        ("P27", "Q21510865", "Q6256", "Q21503252"), ("P27", "Q19474404", None, None)]
    assert rows.columns["properties"]["label"] == ["country of citizenship"]


def test_fold_fast_path_equals_fold() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from wikidata_index.names import _fold_unicode

    @settings(max_examples=400, deadline=None)
    @given(st.text(alphabet=st.characters(max_codepoint=127)) | st.text())
    def check(s: str) -> None:
        assert fold(s) == _fold_unicode(s)

    check()
    assert fold("  AC/DC \x1f x\t") == _fold_unicode("  AC/DC \x1f x\t") == "ac/dc x"
