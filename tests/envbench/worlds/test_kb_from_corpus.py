"""kb-from-corpus: items, types and links from DocRED-format documents."""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envbench.core.errors import DataError
from envbench.formats.docred import distinct_names, entity_type, read_docs
from envbench.worlds import wikidata_json as wj
from envbench.worlds.fine_typing import load_fine_classes
from envbench.worlds.gazetteers import load_gazetteer
from envbench.worlds.kb_from_corpus import (
    KB_QID_RANGE,
    LEXICON_SIGNAL,
    Cluster,
    cluster_corpus,
    cluster_name,
    corpus_evidence,
    kb_from_corpus,
    lexicon_clusters,
)
from envbench.worlds.wikidata_json import iter_dump
from tests.conftest import shared_path
from wikidata_index.names import fold
from wikidata_index.schema import RELATION_INSTANCE_OF, VALUE_TYPE_CONSTRAINT


def _m(name: str, sid: int, s: int, e: int, t: str) -> dict:
    return {"name": name, "pos": [s, e], "sent_id": sid, "type": t}


def _docs() -> list[dict]:
    d1 = {
        "title": "Ana Lind",
        "sents": [["Ana", "Lind", "of", "the", "Blue", "Tides", "was", "born", "in", "Paris", ",", "France", "."],
                  ["Lind", "signed", "with", "Vox", "Records", "in", "1990", "."],
                  ["The", "Blue", "Tides", "recorded", "Sea", ",", "and", "Paris", "loved", "it", "."]],
        "vertexSet": [
            [_m("Ana Lind", 0, 0, 2, "PER"), _m("Lind", 1, 0, 1, "PER")],
            [_m("Blue Tides", 0, 4, 6, "ORG"), _m("Blue Tides", 2, 1, 3, "ORG")],
            [_m("Paris", 0, 9, 10, "LOC")],
            [_m("France", 0, 11, 12, "LOC")],
            [_m("Vox Records", 1, 3, 5, "ORG")],
            [_m("1990", 1, 6, 7, "TIME")],
            [_m("Sea", 2, 4, 5, "MISC")],
            [_m("Paris", 2, 7, 8, "LOC")],  # a second "Paris" entity in the same document (Re-DocRED splits)
        ],
        "labels": [
            {"r": "P19", "h": 0, "t": 2, "evidence": [0]},
            {"r": "P17", "h": 2, "t": 3, "evidence": [0]},
            {"r": "P264", "h": 0, "t": 4, "evidence": [1]},
            {"r": "P569", "h": 0, "t": 5, "evidence": [1]},
            {"r": "P175", "h": 6, "t": 1, "evidence": [2]},
            {"r": "P463", "h": 0, "t": 1, "evidence": [0]},
        ],
    }
    d2 = {
        "title": "Paris",
        "sents": [["Paris", "is", "the", "capital", "of", "France", "."], ["PARIS", "hosted", "Ana", "Lind", "."]],
        "vertexSet": [
            [_m("Paris", 0, 0, 1, "LOC"), _m("PARIS", 1, 0, 1, "LOC")],
            [_m("France", 0, 5, 6, "LOC")],
            [_m("Ana Lind", 1, 2, 4, "PER")],
        ],
        "labels": [{"r": "P1376", "h": 0, "t": 1, "evidence": [0]}],
    }
    return [d1, d2]


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[Path, object]:
    p = tmp_path / "docs.json"
    p.write_text(json.dumps(_docs()))
    res = kb_from_corpus([p], tmp_path / "kb.json.gz", tmp_path / "links.json", min_class_items=1)
    return tmp_path, res


def _items(path: Path) -> dict[str, dict]:
    return {e["id"]: e for e in iter_dump(path)
            if e["type"] == "item" and KB_QID_RANGE[0] <= int(e["id"][1:]) <= KB_QID_RANGE[1]}


def _p31(e: dict) -> str:
    return e["claims"]["P31"][0]["mainsnak"]["datavalue"]["value"]["id"]


def test_clusters_merge_across_documents_by_folded_name_and_type(tiny) -> None:
    tmp, res = tiny
    links = json.loads((tmp / "links.json").read_text())
    a, b = links["Ana Lind"], links["Paris"]
    assert a[0] == b[2]  # Ana Lind in both documents
    assert a[2] == b[0]  # "Paris" and "Paris"/"PARIS" fold together
    assert a[3] == b[1]
    assert a[7] == a[2]  # a second entity of one name and type in one document is the same item
    assert a[5] is None  # TIME has no item
    items = _items(tmp / "kb.json.gz")
    assert len(items) == res.items == 6
    ana = items[a[0]]
    assert ana["labels"]["en"]["value"] == "Ana Lind"  # most frequent name (2 of 3 mentions)
    assert [x["value"] for x in ana["aliases"]["en"]] == ["Lind"]
    paris = items[a[2]]
    assert paris["labels"]["en"]["value"] == "Paris" and [x["value"] for x in paris["aliases"]["en"]] == ["PARIS"]
    assert all(KB_QID_RANGE[0] <= int(q[1:]) <= KB_QID_RANGE[1] for q in items)
    # Gold item-valued triples become claims.
    assert ana["claims"]["P19"][0]["mainsnak"]["datavalue"]["value"]["id"] == a[2]


def test_fine_types_come_from_relation_roles(tiny, tmp_path: Path) -> None:
    tmp, _ = tiny
    res = kb_from_corpus([tmp / "docs.json"], tmp_path / "kb.json.gz", tmp_path / "links.json", signals=("relations",),
                         min_class_items=1)
    links = json.loads((tmp_path / "links.json").read_text())["Ana Lind"]
    items = _items(tmp_path / "kb.json.gz")
    assert _p31(items[links[0]]) == "Q5"  # head of P569 / P19 -> human
    assert _p31(items[links[1]]) == "Q215380"  # ORG tail of P175 -> musical group
    assert _p31(items[links[2]]) == "Q515"  # tail of P19, head of P1376 -> city
    assert _p31(items[links[3]]) == "Q6256"  # tail of P17 -> country
    assert _p31(items[links[4]]) == "Q18127"  # tail of P264 -> record label
    assert _p31(items[links[6]]) == "Q2188189"  # MISC head of P175 -> musical work
    assert links[7] == links[2]  # the second "Paris" entity of the document is Paris's item
    assert res.finer_related == 1.0 and res.alias_histogram == {"0": 4, "1": 2, "2": 0, "3": 0, "4+": 0}
    assert "musical group (Q215380)" in res.summary()
    assert res.decided_by == {"relations": 6}


def test_all_signals_refine_and_vote(tiny) -> None:
    tmp, res = tiny
    links = json.loads((tmp / "links.json").read_text())["Ana Lind"]
    items = _items(tmp / "kb.json.gz")
    assert _p31(items[links[3]]) == "Q3624078"  # "France": the gazetteer's sovereign state, a subclass of country
    assert _p31(items[links[4]]) == "Q18127"  # "Vox Records": the name's kind word and the relation agree
    assert _p31(items[links[2]]) == "Q515"  # "Paris": gazetteer and relations agree on city
    assert res.decided_by["gazetteer"] == 1 and "typed by:" in res.summary()


def _untold_docs() -> list[dict]:
    """Entities typed by their names, the gazetteers, definitions and nearby kind nouns: no relation at all."""
    sents = [
        ["Moon", "Harbor", "is", "an", "American", "rock", "band", "formed", "in", "Lyon", "."],
        ["They", "signed", "with", "Vox", "Records", "and", "toured", "Poland", "and", "Europe", "."],
        ["Their", "album", "Cold", "Summer", "was", "recorded", "near", "the", "Danube", "River", "."],
        ["Polish", "critics", "at", "Uppsala", "University", "praised", "the", "Battle", "of", "Tours", "."],
        ["The", "Catholic", "press", "met", "Americans", "in", "the", "village", "of", "Orbel", "."],
    ]
    ents = [("Moon Harbor", 0, 0, 2, "ORG"), ("American", 0, 4, 5, "LOC"), ("Lyon", 0, 9, 10, "LOC"),
            ("Vox Records", 1, 3, 5, "ORG"), ("Poland", 1, 7, 8, "LOC"), ("Europe", 1, 9, 10, "LOC"),
            ("Cold Summer", 2, 2, 4, "MISC"), ("Danube River", 2, 8, 10, "LOC"), ("Polish", 3, 0, 1, "LOC"),
            ("Uppsala University", 3, 3, 5, "ORG"), ("Battle of Tours", 3, 7, 10, "MISC"),
            ("Catholic", 4, 1, 2, "ORG"), ("Americans", 4, 4, 5, "LOC"), ("Orbel", 4, 9, 10, "LOC")]
    return [{"title": "Moon Harbor", "sents": sents, "labels": [],
             "vertexSet": [[_m(n, si, a, b, t)] for n, si, a, b, t in ents]}]


# what each entity of _untold_docs() must become: class, and P1549 values of its item
UNTOLD = {
    "Moon Harbor": ("Q215380", []), "American": ("Q2000000000001", ["American"]), "Lyon": ("Q515", []),
    "Vox Records": ("Q18127", []), "Poland": ("Q3624078", ["Polish"]), "Europe": ("Q5107", ["European"]),
    "Cold Summer": ("Q482994", []), "Danube River": ("Q4022", []), "Polish": ("Q2000000000001", ["Polish"]),
    "Uppsala University": ("Q3918", []), "Battle of Tours": ("Q178561", []),
    "Catholic": ("Q2000000000006", ["Catholic"]), "Americans": ("Q2000000000002", ["Americans"]),
    "Orbel": ("Q532", []),
}


def test_entities_without_any_relation_get_their_kind(tmp_path: Path) -> None:
    p = tmp_path / "docs.json"
    p.write_text(json.dumps(_untold_docs()))
    res = kb_from_corpus([p], tmp_path / "kb.json.gz", tmp_path / "links.json", min_class_items=1)
    links = json.loads((tmp_path / "links.json").read_text())["Moon Harbor"]
    items = _items(tmp_path / "kb.json.gz")
    got = {}
    for ent, q in zip(_untold_docs()[0]["vertexSet"], links):
        e = items[q]
        demonyms = [s["mainsnak"]["datavalue"]["value"]["text"] for s in e["claims"].get("P1549", [])]
        got[ent[0]["name"]] = (_p31(e), demonyms)
    assert got == UNTOLD
    # the corpus's items with demonyms, and the lexicon's items for the adjectival classes the corpus uses
    lexicon = [e for q, e in items.items() if q not in links and not q.startswith("P") and "P31" in e["claims"]
               and _p31(e) in load_fine_classes().adjectival_by_kind.values()]
    assert res.lexicon_items == len(lexicon) > 0
    assert res.demonym_items == sum(1 for _, d in UNTOLD.values() if d) + res.lexicon_items
    # with the relation signal alone (the old way) every one of them falls back to its coarse class
    kb_from_corpus([p], tmp_path / "r" / "kb.json.gz", tmp_path / "r" / "links.json", signals=("relations",),
                   min_class_items=1)
    fallback = {_p31(e) for e in _items(tmp_path / "r" / "kb.json.gz").values()}
    assert fallback == {"Q43229", "Q2221906", "Q35120"}


def test_demonyms_are_official_monolingual_text_statements_and_ingest(tmp_path: Path) -> None:
    from wikidata_index.ingest import ingest_dump

    p = tmp_path / "docs.json"
    p.write_text(json.dumps(_untold_docs()))
    kb_from_corpus([p], tmp_path / "kb.json.gz", tmp_path / "links.json", min_class_items=1)
    kb = {e["id"]: e for e in iter_dump(tmp_path / "kb.json.gz")}
    poland = kb[json.loads((tmp_path / "links.json").read_text())["Moon Harbor"][4]]
    (st,) = poland["claims"]["P1549"]
    assert st["mainsnak"] == {"snaktype": "value", "property": "P1549",
                              "datavalue": {"value": {"text": "Polish", "language": "en"}, "type": "monolingualtext"},
                              "datatype": "monolingualtext"}
    assert st["type"] == "statement" and st["rank"] == "normal" and st["id"].startswith(poland["id"] + "$")
    assert kb["P1549"]["datatype"] == "monolingualtext" and kb["P1549"]["type"] == "property"
    demonym_class = kb["Q2000000000001"]  # the KB-made class, under country
    assert demonym_class["labels"]["en"]["value"] == "demonym of a country"
    assert demonym_class["claims"]["P279"][0]["mainsnak"]["datavalue"]["value"]["id"] == "Q6256"
    res = ingest_dump(tmp_path / "kb.json.gz", tmp_path / "index", workers=1, progress=False, max_errors=0)
    assert res.errors == []


def test_sample_world_without_relations_keeps_most_types(tmp_path: Path) -> None:
    """The sample world flatters relation typing (every entity there plays a telling role): drop every
    relation and the other signals must still find the sample's own classes for most entities."""
    from envbench.worlds.fine_typing import head_of
    from envbench.worlds.sample import make_sample

    make_sample(tmp_path / "s")
    docs = read_docs(tmp_path / "s" / "docs" / "test.json").docs
    truth = json.loads((tmp_path / "s" / "links.json").read_text())
    dump = {e["id"]: e for e in iter_dump(tmp_path / "s" / "wikidata-sample.json.gz")}
    bare = [{**d, "labels": []} for d in docs]
    (tmp_path / "bare.json").write_text(json.dumps(bare))
    shares = {}
    (tmp_path / "told.json").write_text(json.dumps(docs))
    for name, signals, src in (("all", None, "bare"), ("relations", ("relations",), "bare"), ("told", None, "told"), ("told_relations", ("relations",), "told")):
        out = tmp_path / name
        kwargs = {} if signals is None else {"signals": signals}
        kb_from_corpus([tmp_path / f"{src}.json"], out / "kb.json.gz", out / "links.json", **kwargs)
        links = json.loads((out / "links.json").read_text())
        items = _items(out / "kb.json.gz")
        ok = n = 0
        for d in docs:
            for ei, ent in enumerate(d["vertexSet"]):
                q_true = truth[d["title"]][ei]
                if entity_type(ent) not in ("LOC", "ORG", "MISC") or q_true is None:
                    continue
                real = {head_of(s["mainsnak"]["datavalue"]["value"]["id"]) for s in dump[q_true]["claims"]["P31"]
                        if s["mainsnak"]["snaktype"] == "value"}
                n += 1
                ok += head_of(_p31(items[links[d["title"]][ei]])) in real
        shares[name] = ok / n
    assert shares["relations"] == 0.0  # no relation: nothing but the coarse fallback
    assert shares["all"] >= 0.45, shares  # names, definitions and kind nouns alone (its demonyms are made up)
    assert shares["told"] >= 0.8 and shares["told"] > shares["told_relations"] + 0.05, shares  # relations back


def test_output_is_deterministic_and_ingests(tiny, tmp_path: Path) -> None:
    from wikidata_index.index import WikidataIndex
    from wikidata_index.ingest import ingest_dump

    tmp, _ = tiny
    again = tmp_path / "again"
    kb_from_corpus([tmp / "docs.json"], again / "kb.json.gz", again / "links.json", min_class_items=1)
    assert (again / "kb.json.gz").read_bytes() == (tmp / "kb.json.gz").read_bytes()
    assert (again / "links.json").read_bytes() == (tmp / "links.json").read_bytes()
    res = ingest_dump(tmp / "kb.json.gz", tmp / "index", workers=1, progress=False, max_errors=0)
    assert res.errors == []
    with WikidataIndex(tmp / "index") as ix:
        q = json.loads((tmp / "links.json").read_text())["Ana Lind"][2]
        assert ix.types(q) == ["Q515"] and "Q486972" in ix.superclasses("Q515")
        assert ix.names(q) == ["Paris", "PARIS"]


def test_index_constraints_take_precedence(tiny, tmp_path: Path) -> None:
    from wikidata_index.ingest import ingest_dump

    tmp, _ = tiny
    # A "real" index whose P17 value-type constraint names a class the table does not know
    # (constituent country, a subclass of country there).
    dump = tmp_path / "real.json"
    with wj.DumpWriter(dump) as w:
        w.write(wj.property_entity("P17", label="country", datatype="wikibase-item", claims={"P2302": [
            wj.type_constraint("P17", VALUE_TYPE_CONSTRAINT, ["Q1763527"], RELATION_INSTANCE_OF, "v")]}))
        w.write(wj.item("Q1763527", labels={"en": "constituent country"},
                        claims={"P279": [wj.item_statement("Q1763527", "P279", "Q6256")]}))
        w.write(wj.item("Q6256", labels={"en": "country"}))
    ingest_dump(dump, tmp_path / "index", workers=1, progress=False)
    res = kb_from_corpus([tmp / "docs.json"], tmp_path / "kb.json.gz", tmp_path / "links.json", index=tmp_path / "index",
                         min_class_items=1)
    links = json.loads((tmp_path / "links.json").read_text())["Ana Lind"]
    kb = {e["id"]: e for e in iter_dump(tmp_path / "kb.json.gz")}
    assert _p31(kb[links[3]]) == "Q1763527"
    assert _p31(kb[links[4]]) == "Q18127"  # relations the index does not constrain still use the table
    new_class = kb["Q1763527"]  # written as a class, under its index superclass, so ingest sees the chain
    assert new_class["labels"]["en"]["value"] == "constituent country"
    assert new_class["claims"]["P279"][0]["mainsnak"]["datavalue"]["value"]["id"] == "Q6256"
    p17 = kb["P17"]["claims"]["P2302"]
    assert [q["datavalue"]["value"]["id"] for q in p17[0]["qualifiers"]["P2308"]] == ["Q1763527"]
    assert "constituent country (Q1763527)" in res.summary() and "index at" in res.summary()
    # the index tables read are inputs of the step: another index is not "up to date"
    inputs = json.loads((tmp_path / "kb.json.gz.manifest.json").read_text())["inputs"]
    assert [i["name"] for i in inputs] == ["docs.json", *["part-00000.parquet"] * 3]
    assert kb_from_corpus([tmp / "docs.json"], tmp_path / "kb.json.gz", tmp_path / "links.json",
                          index=tmp_path / "index", min_class_items=1).up_to_date
    assert not kb_from_corpus([tmp / "docs.json"], tmp_path / "kb.json.gz", tmp_path / "links.json",
                              min_class_items=1).up_to_date


def test_duplicate_titles_across_files_are_an_error(tiny, tmp_path: Path) -> None:
    tmp, _ = tiny
    copy = tmp_path / "copy.json"
    copy.write_bytes((tmp / "docs.json").read_bytes())
    with pytest.raises(DataError, match=f"document 'Ana Lind' is also in {tmp / 'docs.json'}"):
        kb_from_corpus([tmp / "docs.json", copy], tmp_path / "kb.json.gz", tmp_path / "l.json")


def test_bad_paths_are_refused_before_anything_is_written(tiny, tmp_path: Path) -> None:
    tmp, _ = tiny
    docs = tmp / "docs.json"
    tmp_path = tmp_path / "new"  # nothing may be created there
    cases = [
        ([docs, docs], tmp_path / "kb.json.gz", tmp_path / "l.json", f"{docs} is given twice; pass each DocRED file once"),
        ([docs], tmp_path / "kb.json.gz", tmp_path / "kb.json.gz",
         f"--out and --links are the same file ({tmp_path / 'kb.json.gz'}); give the dump and the links different "
         "names, e.g. --out kb.json.gz --links links.json"),
        ([docs], tmp_path / "kb.json.gz", docs,
         f"--links {docs} is also an input document file; choose another output path, or the documents would be "
         "overwritten"),
        ([docs], tmp_path / "kb.json.zst", tmp_path / "l.json",
         f"--out {tmp_path / 'kb.json.zst'}: the dump is written as .json or .json.gz; give one of those names, "
         "e.g. --out kb.json.gz"),
        ([docs], tmp_path / "kb.json.gz", tmp_path / "l.json.gz",
         f"--links {tmp_path / 'l.json.gz'}: the links are written as plain JSON; give a .json name, e.g. "
         "--links links.json"),
    ]
    before = docs.read_bytes()
    for paths, out, links, message in cases:
        with pytest.raises(DataError) as exc:
            kb_from_corpus(paths, out, links)
        assert str(exc.value) == message
    assert docs.read_bytes() == before
    assert not tmp_path.exists()


def test_an_empty_corpus_is_an_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    with pytest.raises(DataError) as exc:
        kb_from_corpus([empty], tmp_path / "out" / "kb.json.gz", tmp_path / "out" / "l.json")
    assert str(exc.value) == (f"no documents in {empty}; pass DocRED-format files with documents, "
                              "e.g. dev_revised.json")
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_real_re_docred(tmp_path: Path) -> None:
    paths = [shared_path("re-docred", "dev_revised.json"), shared_path("re-docred", "test_revised.json")]
    res = kb_from_corpus(paths, tmp_path / "kb.json.gz", tmp_path / "links.json")
    links = json.loads((tmp_path / "links.json").read_text())
    items = _items(tmp_path / "kb.json.gz")
    assert len(items) == res.items
    names: dict[str, set[str]] = {}
    n_entities = 0
    for p in paths:
        for d in read_docs(p).docs:
            row = links[d["title"]]
            assert len(row) == len(d["vertexSet"])
            for e, q in zip(d["vertexSet"], row):
                if entity_type(e) in ("NUM", "TIME"):
                    assert q is None
                    continue
                n_entities += 1
                names.setdefault(q, set()).update(distinct_names(e))
                # clusters merge on the folded name without a leading "the" (cluster_name)
                assert cluster_name(items[q]["labels"]["en"]["value"]) in {cluster_name(n) for n in distinct_names(e)} \
                    or len(names[q]) > len(distinct_names(e))
    # one item per cluster, every cluster linked; besides them, the lexicon's adjectival items no document names
    lexicon = {q: e for q, e in items.items() if q not in names}
    assert n_entities == res.entities and len(lexicon) == res.lexicon_items > 100
    corpus_names = {cluster_name(n) for ns in names.values() for n in ns}
    adjectival_classes = set(load_fine_classes().adjectival_by_kind.values())
    for q, e in lexicon.items():
        own = [e["labels"]["en"]["value"], *(a["value"] for a in e["aliases"].get("en", []))]
        assert _p31(e) in adjectival_classes and not any(cluster_name(n) in corpus_names for n in own), q
        assert sorted(s["mainsnak"]["datavalue"]["value"]["text"] for s in e["claims"]["P1549"]) == sorted(own)
    for q, ns in names.items():  # label + aliases are exactly the cluster's distinct mention names
        e = items[q]
        assert {e["labels"]["en"]["value"], *(a["value"] for a in e["aliases"].get("en", []))} == ns
    hist = Counter(min(len(ns) - 1, 4) for ns in names.values())
    assert res.alias_histogram == {"0": hist[0], "1": hist[1], "2": hist[2], "3": hist[3], "4+": hist[4]}
    assert res.finer_related > 0.7, res.summary()
    assert 8000 < res.items < res.entities


NAMES = ("Paris", "PARIS", "Lyon", "Ana Lind", "Lind", "Vox Records", "Vox")
TYPES = ("PER", "ORG", "LOC", "MISC", "TIME")


@st.composite
def corpora(draw: st.DrawFn) -> list[dict]:
    docs = []
    for di in range(draw(st.integers(1, 3))):
        sents: list[list[str]] = []
        vertex_set = []
        for _ in range(draw(st.integers(1, 4))):
            etype = draw(st.sampled_from(TYPES))
            mentions = []
            for name in draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3)):
                sents.append(name.split())
                mentions.append(_m(name, len(sents) - 1, 0, len(name.split()), etype))
            vertex_set.append(mentions)
        n = len(vertex_set)
        labels = [{"r": r, "h": h, "t": t, "evidence": []}
                  for h, t, r in draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                                         st.sampled_from(("P17", "P175", "P569", "P361"))), max_size=4))]
        docs.append({"title": f"doc {di}", "sents": sents, "vertexSet": vertex_set, "labels": labels})
    return docs


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpora())
def test_kb_invariants_on_random_corpora(docs: list[dict]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "docs.json"
        p.write_text(json.dumps(docs))
        res = kb_from_corpus([p], Path(tmp) / "kb.json.gz", Path(tmp) / "links.json")
        links = json.loads((Path(tmp) / "links.json").read_text())
        items = _items(Path(tmp) / "kb.json.gz")
    names: dict[str, set[str]] = {}
    primary: dict[tuple[str, str], str] = {}  # key -> its item, in every document
    for d in docs:
        row = links[d["title"]]
        here: dict[tuple[str, str], str] = {}  # (coarse, folded name) -> the item of this document's entity
        for e, q in zip(d["vertexSet"], row):
            if entity_type(e) == "TIME":
                assert q is None
                continue
            assert q in items
            names.setdefault(q, set()).update(distinct_names(e))
            counts = Counter(m["name"] for m in e)
            canon = min(distinct_names(e), key=lambda n: (-counts[n], distinct_names(e).index(n)))
            key = (entity_type(e), fold(canon))
            shared = [here[k] for n in distinct_names(e) if (k := (entity_type(e), fold(n))) in here]
            if shared:  # a name an earlier entity of the document has: that entity's item
                assert q == shared[0]
            else:  # merged across documents by folded name and coarse type
                assert primary.setdefault(key, q) == q
            for n in distinct_names(e):
                here.setdefault((entity_type(e), fold(n)), q)
    assert len(set(primary.values())) == len(primary)  # one item per key
    assert set(names) == set(items) and res.items == len(items)
    for q, ns in names.items():
        assert {items[q]["labels"]["en"]["value"], *(a["value"] for a in items[q]["aliases"].get("en", []))} == ns


def test_dump_writer_leaves_nothing_when_the_block_fails(tmp_path):
    with pytest.raises(ValueError), wj.DumpWriter(tmp_path / "kb.json.gz") as w:
        w.write({"id": "Q1"})
        raise ValueError("stop")
    assert list(tmp_path.iterdir()) == []
    with wj.DumpWriter(tmp_path / "kb.json") as w:
        w.write({"id": "Q1"})
    assert [p.name for p in tmp_path.iterdir()] == ["kb.json"]
    assert list(wj.iter_dump(tmp_path / "kb.json")) == [{"id": "Q1"}]


def test_the_dump_and_links_are_one_step_with_a_manifest_beside_the_dump(tiny, tmp_path: Path) -> None:
    tmp, _ = tiny
    docs = tmp / "docs.json"
    out, links = tmp_path / "kb" / "kb.json.gz", tmp_path / "links" / "l.json"
    first = kb_from_corpus([docs], out, links)
    manifest = json.loads((tmp_path / "kb" / "kb.json.gz.manifest.json").read_text())
    assert manifest["step"] == "kb-from-corpus" and [i["name"] for i in manifest["inputs"]] == ["docs.json"]
    assert sorted(o["name"] for o in manifest["outputs"]) == ["../links/l.json", "kb.json.gz"]
    assert manifest["report"]["items"] == first.items == 6
    again = kb_from_corpus([docs], out, links)
    assert again.up_to_date and again.items == 6 and again.summary() == (
        f"{out} and {links} are up to date (same documents, index and options); nothing to do. "
        "Pass --force to build them again.")
    assert not kb_from_corpus([docs], out, links, force=True).up_to_date
    links.write_text("{}")  # a changed output is rebuilt
    assert not kb_from_corpus([docs], out, links).up_to_date
    assert json.loads(links.read_text()) == json.loads((tmp / "links.json").read_text())


def test_skipped_documents_are_reported(tmp_path: Path) -> None:
    docs = _docs()
    docs[1]["labels"][0]["r"] = "P0"
    p = tmp_path / "docs.json"
    p.write_text(json.dumps(docs))
    res = kb_from_corpus([p], tmp_path / "kb.json.gz", tmp_path / "links.json", skip_invalid=True)
    assert res.documents == 1
    assert res.notes == [f"skipped 1 invalid document of {p}; the first: document 1 'Paris': label 0: relation 'P0' "
                         "is not one of the 96 DocRED relations; use a DocRED property id such as P17"]
    assert res.summary().endswith("\n" + res.notes[0])


def test_cluster_name_drops_a_leading_article() -> None:
    assert cluster_name("The  Beatles") == cluster_name("beatles") == "beatles"
    assert cluster_name("the United States") == cluster_name("United States") == "united states"
    assert cluster_name("The") == "the"  # a name that is only the article stays itself
    assert cluster_name("Theodor Herzl") == "theodor herzl"


def test_untyped_keep_writes_no_p31_and_coarse_writes_the_fallback(tmp_path: Path) -> None:
    doc = {"title": "T", "sents": [["Zorblax", "met", "Quuxco", "."]],
           "vertexSet": [[{"name": "Zorblax", "sent_id": 0, "pos": [0, 1], "type": "PER"}],
                         [{"name": "Quuxco", "sent_id": 0, "pos": [2, 3], "type": "ORG"}]],
           "labels": []}
    src = tmp_path / "d.json"
    src.write_text(json.dumps([doc]))
    kept = kb_from_corpus([src], tmp_path / "k.json.gz", tmp_path / "k.links.json", min_class_items=1, untyped="keep")
    coarse = kb_from_corpus([src], tmp_path / "c.json.gz", tmp_path / "c.links.json", min_class_items=1)
    links = json.loads((tmp_path / "k.links.json").read_text())["T"]
    k_items, c_items = _items(tmp_path / "k.json.gz"), _items(tmp_path / "c.json.gz")
    assert "P31" in k_items[links[0]]["claims"]  # a person is always typed
    assert "P31" not in k_items[links[1]]["claims"] and kept.untyped_items == 1
    assert c_items[links[1]]["claims"]["P31"][0]["mainsnak"]["datavalue"]["value"]["id"] == "Q43229"
    assert coarse.untyped_items == 0
    with pytest.raises(DataError, match="untyped='drop' is not a policy; choose one of keep, coarse"):
        kb_from_corpus([src], tmp_path / "x.json.gz", tmp_path / "x.links.json", untyped="drop")


def _kb_with_p21(tmp_path: Path, docs: list[dict]) -> tuple[Any, dict, Any]:
    """kb-from-corpus over ``docs``: its result, its links, and the P21 values of an item."""
    p = tmp_path / "docs.json"
    p.write_text(json.dumps(docs))
    res = kb_from_corpus([p], tmp_path / "kb.json.gz", tmp_path / "links.json", min_class_items=1)
    items = _items(tmp_path / "kb.json.gz")

    def p21(qid: str) -> list[str]:
        return [s["mainsnak"]["datavalue"]["value"]["id"] for s in items[qid]["claims"].get("P21", [])]

    return res, json.loads((tmp_path / "links.json").read_text()), p21


def test_persons_whose_documents_show_their_gender_get_p21_and_ingest(tmp_path: Path) -> None:
    from envbench.core.gender import P21_FEMALE, P21_MALE
    from wikidata_index.index import WikidataIndex
    from wikidata_index.ingest import ingest_dump

    docs = [
        {"title": "Mara Vek", "labels": [],
         "sents": [["Mara", "Vek", "is", "an", "actress", "."], ["She", "lives", "in", "Oslo", "."]],
         "vertexSet": [[_m("Mara Vek", 0, 0, 2, "PER")], [_m("Oslo", 1, 3, 4, "LOC")]]},
        {"title": "Tom Aro", "labels": [],
         "sents": [["Tom", "Aro", "met", "Mara", "Vek", "."], ["Tom", "Aro", "said", "he", "would", "stay", "."]],
         "vertexSet": [[_m("Tom Aro", 0, 0, 2, "PER"), _m("Tom Aro", 1, 0, 2, "PER")], [_m("Mara Vek", 0, 3, 5, "PER")]]},
        {"title": "Ode", "labels": [], "sents": [["Ode", "was", "sung", "by", "Lu", "Pim", "."]],
         "vertexSet": [[_m("Ode", 0, 0, 1, "MISC")], [_m("Lu Pim", 0, 4, 6, "PER")]]},
    ]
    res, links, p21 = _kb_with_p21(tmp_path, docs)

    assert p21(links["Mara Vek"][0]) == [P21_FEMALE]  # her two documents sum: actress, She
    assert links["Tom Aro"][1] == links["Mara Vek"][0]
    assert p21(links["Tom Aro"][0]) == [P21_MALE]
    assert p21(links["Ode"][1]) == []  # no pronoun, no gendered word: no P21
    assert res.gendered_items == {"female (documents)": 1, "male (documents)": 1}
    ingest_dump(tmp_path / "kb.json.gz", tmp_path / "index", workers=1, progress=False, max_errors=0)
    with WikidataIndex(tmp_path / "index") as ix:
        assert sorted(ix.con.execute("SELECT gender, rank FROM genders").fetchall()) == \
            [(P21_FEMALE, "normal"), (P21_MALE, "normal")]


def _singer(title: str, name: str, pronoun: str) -> dict:
    """A one-person document: "NAME sang . PRONOUN left ."."""
    words = name.split()
    return {"title": title, "labels": [], "sents": [[*words, "sang", "."], [pronoun, "left", "."]],
            "vertexSet": [[_m(name, 0, 0, len(words), "PER")]]}


def test_a_person_its_documents_leave_unknown_takes_the_gender_its_first_name_has_in_other_documents(
        tmp_path: Path) -> None:
    from envbench.core.gender import P21_MALE

    docs = [_singer("a", "Juro Tam", "He"), _singer("b", "Juro Vell", "He"), _singer("c", "Juro Pak", "It"),
            _singer("d", "Qirra Tam", "She"), _singer("e", "Qirra Moor", "It")]
    res, links, p21 = _kb_with_p21(tmp_path, docs)

    assert p21(links["c"][0]) == [P21_MALE]  # two decided Juros said "he"
    assert p21(links["e"][0]) == []  # one decided Qirra is not enough (FIRST_NAME_VOTES = 2), nor in the lexicon
    assert res.gendered_items == {"female (documents)": 1, "male (documents)": 2, "male (first name)": 1}


def test_a_first_name_neither_the_documents_nor_the_corpus_gender_takes_its_lexicon_gender(tmp_path: Path) -> None:
    """The first-name lexicon reads the first names the corpus cannot ("Mario", "Ingrid"), not those it
    splits ("Jean", 0.48 women; "Andrea", 0.83: an Italian Andrea is a man), and the corpus's own reading
    wins where both have one ("Carol", 0.92 women in the lexicon)."""
    from envbench.core.gender import P21_FEMALE, P21_MALE

    docs = [_singer("a", "Mario Vell", "It"), _singer("b", "Ingrid Lund", "It"), _singer("c", "Jean Moor", "It"),
            _singer("d", "Carol Tam", "He"), _singer("e", "Carol Pak", "He"), _singer("f", "Carol Rue", "It"),
            _singer("g", "Andrea Lund", "It")]
    res, links, p21 = _kb_with_p21(tmp_path, docs)

    assert p21(links["a"][0]) == [P21_MALE]
    assert p21(links["b"][0]) == [P21_FEMALE]
    assert p21(links["c"][0]) == [] and p21(links["g"][0]) == []
    assert p21(links["f"][0]) == [P21_MALE]  # two decided Carols of this corpus said "he" (Carol I of Romania)
    assert res.gendered_items == {"male (documents)": 2, "male (first name)": 1, "male (lexicon first name)": 1,
                                  "female (lexicon first name)": 1}


def test_a_person_named_by_one_word_takes_the_gender_the_lexicon_gives_it_unless_it_is_a_surname_here(
        tmp_path: Path) -> None:
    """"Helen" alone is a woman; "Clinton" alone is not read, since "Bill Clinton" ends in it."""
    from envbench.core.gender import P21_FEMALE

    docs = [_singer("a", "Helen", "It"), _singer("b", "Clinton", "It"), _singer("c", "Bill Clinton", "It")]
    res, links, p21 = _kb_with_p21(tmp_path, docs)

    assert p21(links["a"][0]) == [P21_FEMALE]
    assert p21(links["b"][0]) == []
    assert res.gendered_items == {"female (lexicon one-word name)": 1, "male (lexicon first name)": 1}


def test_an_entity_written_as_the_place_and_its_adjective_is_the_places_item(tmp_path: Path) -> None:
    # Re-DocRED test's every "German | Germany" entity (more "German" than "Germany") was an adjectival item,
    # with the one other such item that is no dev name ("Paraguayan | Paraguay") for all of them to draw
    sents = [["The", "German", "team", "beat", "German", "rivals", "in", "Germany", "."]]
    mixed = {"title": "Mixed", "sents": sents, "labels": [],
             "vertexSet": [[_m("German", 0, 1, 2, "LOC"), _m("German", 0, 4, 5, "LOC"), _m("Germany", 0, 7, 8, "LOC")]]}
    place = {"title": "Place", "sents": [["Germany", "is", "big", "."]], "labels": [],
             "vertexSet": [[_m("Germany", 0, 0, 1, "LOC")]]}
    adjective = {"title": "Adjective", "sents": [["A", "German", "poet", "."]], "labels": [],
                 "vertexSet": [[_m("German", 0, 1, 2, "LOC")]]}
    p = tmp_path / "docs.json"
    p.write_text(json.dumps([mixed, place, adjective]))
    kb_from_corpus([p], tmp_path / "kb.json.gz", tmp_path / "links.json", min_class_items=1)
    links = json.loads((tmp_path / "links.json").read_text())
    assert links["Mixed"][0] == links["Place"][0] != links["Adjective"][0]
    items = _items(tmp_path / "kb.json.gz")
    germany = items[links["Mixed"][0]]
    assert _p31(germany) == "Q3624078"  # a sovereign state, with "German" as its P1549
    assert "German" in [c["mainsnak"]["datavalue"]["value"]["text"] for c in germany["claims"]["P1549"]]
    assert _p31(items[links["Adjective"][0]]) == "Q2000000000001"  # the adjectival class, as before


def test_gold_located_in_triples_say_which_clusters_an_entity_is_in(tmp_path: Path) -> None:
    # the level pass of the typing reads them: "Paris" (d1's first) is located in "France"
    docs = _docs()
    docs[0]["labels"].append({"r": "P131", "h": 2, "t": 3, "evidence": [0]})
    docs[0]["labels"].append({"r": "P131", "h": 7, "t": 7, "evidence": [2]})  # an entity in itself counts not
    p = tmp_path / "docs.json"
    p.write_text(json.dumps(docs))
    corpus = cluster_corpus([read_docs(p)])
    ordered, evidences = corpus_evidence(corpus)
    assert ordered == sorted(corpus.clusters, key=lambda c: c.key) and len(evidences) == len(ordered)
    row = corpus.slots["Ana Lind"]
    paris, france = ordered.index(row[2]), ordered.index(row[3])
    assert evidences[paris].located_in == (france,)
    assert sum(1 for ev in evidences if ev.located_in) == 1
    # and the members gold P463 gives a cluster: Ana Lind of the Blue Tides
    assert evidences[ordered.index(row[1])].members == (ordered.index(row[0]),)
    assert sum(1 for ev in evidences if ev.members) == 1


def test_the_lexicon_fills_the_adjectival_classes_with_what_no_document_names() -> None:
    gz = load_gazetteer()
    fine = load_fine_classes()
    christian = Cluster(("ORG", "christian"), "ORG", Counter({"Christian": 2}), {"Christian": 0})
    judaism = Cluster(("MISC", "judaism"), "MISC", Counter({"Judaism": 1}), {"Judaism": 1})
    kinds = {k: fine.adjectival_by_kind[k] for k in ("religion", "party")}
    made = lexicon_clusters([christian, judaism], gz.adjectival, kinds)
    by_label = {cl.label(): cl for cl in made}
    # a form the corpus names ("Christian") or a referent it names ("Judaism": "Jewish", "Judaic") makes no item
    assert "Christian" not in by_label and "Jewish" not in by_label and "Judaic" not in by_label
    # the other referents do, named by their forms, which are also their P1549 values; "Roman Catholic"
    # is the second form of the Catholic Church's item, not an item of its own
    assert by_label["Catholic"].names() == ["Catholic", "Roman Catholic"] == by_label["Catholic"].demonyms
    assert "Roman Catholic" not in by_label
    assert by_label["Lutheran"].fine == fine.adjectival_by_kind["religion"] == "Q2000000000006"
    assert by_label["Whig"].fine == "Q2000000000009" and by_label["Democratic"].names() == ["Democratic", "Democrat"]
    assert all(not cl.members and cl.signal == LEXICON_SIGNAL and cl.key[0] == "lexicon" for cl in made)
    assert {cl.fine for cl in made} == set(kinds.values())  # only the kinds asked for
    assert [cl.key for cl in made] == sorted(cl.key for cl in made)  # a fixed order, whatever the lexicon's
    assert lexicon_clusters([christian], gz.adjectival, {}) == []


def test_a_party_written_as_its_adjective_is_swapped_only_with_another(tmp_path: Path) -> None:
    sents = [["Jon", "Lund", "was", "elected", "as", "a", "Republican", "to", "the", "Congress", "."],
             ["He", "was", "a", "Catholic", "."]]
    doc = {"title": "Jon Lund", "sents": sents, "labels": [],
           "vertexSet": [[_m("Jon Lund", 0, 0, 2, "PER")], [_m("Republican", 0, 6, 7, "ORG")],
                         [_m("Congress", 0, 9, 10, "ORG")], [_m("Catholic", 1, 3, 4, "ORG")]]}
    p = tmp_path / "docs.json"
    p.write_text(json.dumps([doc]))
    res = kb_from_corpus([p], tmp_path / "kb.json.gz", tmp_path / "links.json", min_class_items=1)
    items = _items(tmp_path / "kb.json.gz")
    links = json.loads((tmp_path / "links.json").read_text())["Jon Lund"]
    assert _p31(items[links[1]]) == "Q2000000000009" and _p31(items[links[3]]) == "Q2000000000006"
    lexicon = {e["labels"]["en"]["value"]: _p31(e) for q, e in items.items() if q not in links and "P31" in e["claims"]}
    assert lexicon["Whig"] == "Q2000000000009" and lexicon["Lutheran"] == "Q2000000000006"
    assert "Republican" not in lexicon and "Catholic" not in lexicon
    assert set(lexicon.values()) == {"Q2000000000009", "Q2000000000006"}  # no class no entity has
    assert res.lexicon_items == len(lexicon) and "adjectival forms of the lexicon" in res.summary()


def _league_docs() -> list[dict]:
    """Three teams in the NBA, two clubs in the Premier League, one team in a league of no named sport."""
    docs = []
    for title, team, league in (("A", "Boston Celtics", "NBA"), ("B", "New York Knicks", "National Basketball Association"),
                                ("C", "Toronto Huskies", "NBA"), ("D", "Burnley", "Premier League"),
                                ("E", "Fulham", "Premier League"), ("F", "Salem Volcanoes", "Northwest League")):
        sents = [[*team.split(), "play", "in", "the", *league.split(), "."]]
        n, k = len(team.split()), len(league.split())
        docs.append({"title": title, "sents": sents, "labels": [{"h": 0, "t": 1, "r": "P118", "evidence": [0]}],
                     "vertexSet": [[_m(team, 0, 0, n, "ORG")], [_m(league, 0, n + 3, n + 3 + k, "ORG")]]})
    return docs


@pytest.mark.parametrize("min_items, basketball", [(1, "Q13393265"), (4, "Q12973014")])
def test_a_team_takes_the_sport_its_league_names(tmp_path: Path, min_items: int, basketball: str) -> None:
    p = tmp_path / "docs.json"
    p.write_text(json.dumps(_league_docs()))
    kb_from_corpus([p], tmp_path / "kb.json.gz", tmp_path / "links.json", min_class_items=min_items)
    items = _items(tmp_path / "kb.json.gz")
    links = json.loads((tmp_path / "links.json").read_text())
    team = {t: _p31(items[row[0]]) for t, row in links.items()}
    # basketball teams, or sports teams when the basketball class has fewer items than a class needs
    assert team["A"] == team["B"] == team["C"] == basketball
    assert team["D"] == team["E"] == team["F"] != basketball  # no sport named: what the relations say


def test_league_sports_reads_the_sport_a_league_name_names() -> None:
    from envbench.worlds.fine_typing import league_sports

    assert league_sports("National Basketball Association") == league_sports("NBA") == {"Q13393265"}
    assert league_sports("Major League Baseball") == {"Q13027888"}
    assert league_sports("National Football League") == {"Q17156793"}
    assert league_sports("National Hockey League") == {"Q4498974"}
    assert league_sports("The Football League") == league_sports("Premier League") == set()


def test_the_gazetteer_places_a_city_in_its_one_country(tmp_path: Path) -> None:
    # "The largest ... iron ore mine in the world is located in Kiruna , Norrbotten County , Lapland" had read
    # "in Płock , Bailey County , Lapland" (salt fresh1208b): the corpus placed neither city, so generate could
    # not keep the new one in its country. The gazetteer's country of each city is now a P17 claim
    sents = [["Kiruna", "and", "Płock", "and", "Norwich", "lie", "in", "Sweden", ",", "Poland", "and", "England", "."],
             ["Singapore", "is", "a", "city", "."]]
    doc = {"title": "Towns", "sents": sents, "labels": [],
           "vertexSet": [[_m("Kiruna", 0, 0, 1, "LOC")], [_m("Płock", 0, 2, 3, "LOC")], [_m("Norwich", 0, 4, 5, "LOC")],
                         [_m("Sweden", 0, 7, 8, "LOC")], [_m("Poland", 0, 9, 10, "LOC")],
                         [_m("England", 0, 11, 12, "LOC")], [_m("Singapore", 1, 0, 1, "LOC")]]}
    p = tmp_path / "docs.json"
    p.write_text(json.dumps([doc]))
    kb_from_corpus([p], tmp_path / "kb.json.gz", tmp_path / "links.json", min_class_items=1)
    items = _items(tmp_path / "kb.json.gz")
    links = json.loads((tmp_path / "links.json").read_text())["Towns"]

    def countries(e: int) -> set[str]:
        return {c["mainsnak"]["datavalue"]["value"]["id"] for c in items[links[e]]["claims"].get("P17", [])}

    assert countries(0) == {links[3]} and countries(1) == {links[4]}  # Kiruna in Sweden, Płock in Poland
    assert countries(2) == set()  # Norwich: a city of England and one of Connecticut
    assert countries(3) == countries(4) == set()  # a country lies in no country
    assert countries(6) == set()  # Singapore, a city and a country, lies in nothing of the corpus
