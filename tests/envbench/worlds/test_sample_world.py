"""The sample world: determinism, real formats, and what the renaming pipeline needs from it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from envbench.core.errors import EnvbenchError
from envbench.core.relations import RELATIONS
from envbench.core.text import tokenize
from envbench.formats.docred import distinct_names, entity_type, read_docs
from envbench.worlds.sample import FINE_CLASSES, SAMPLE_QID_BASE, make_sample
from envbench.worlds.wikidata_json import iter_dump
from wikidata_index.schema import SUBJECT_TYPE_CONSTRAINT, VALUE_TYPE_CONSTRAINT

FILES = ("wikidata-sample.json.gz", "docs/train.json", "docs/dev.json", "docs/test.json", "links.json",
         "docs/test.linked-docred.json")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sample")
    make_sample(out)
    return out


@pytest.fixture(scope="module")
def dump(world: Path) -> dict[str, dict]:
    return {e["id"]: e for e in iter_dump(world / "wikidata-sample.json.gz")}


@pytest.fixture(scope="module")
def docs(world: Path) -> dict[str, list[dict]]:
    return {s: read_docs(world / "docs" / f"{s}.json").docs for s in ("train", "dev", "test")}


def _items(dump: dict[str, dict]) -> list[dict]:
    return [e for e in dump.values() if e["type"] == "item" and int(e["id"][1:]) > SAMPLE_QID_BASE]


def _p31(e: dict) -> list[str]:
    return [s["mainsnak"]["datavalue"]["value"]["id"] for s in e["claims"].get("P31", [])
            if s["rank"] != "deprecated" and s["mainsnak"]["snaktype"] == "value"]


def _edges(e: dict, prop: str) -> list[str]:
    return [s["mainsnak"]["datavalue"]["value"]["id"] for s in e["claims"].get(prop, [])
            if s["rank"] != "deprecated" and s["mainsnak"]["snaktype"] == "value"
            and s["mainsnak"]["datavalue"]["type"] == "wikibase-entityid"]


def test_same_seed_same_bytes_and_other_seed_differs(world: Path, tmp_path: Path) -> None:
    make_sample(tmp_path / "again")
    for f in FILES:
        assert (tmp_path / "again" / f).read_bytes() == (world / f).read_bytes(), f
    make_sample(tmp_path / "other", seed=1)
    assert (tmp_path / "other" / "docs/test.json").read_bytes() != (world / "docs/test.json").read_bytes()


def test_sample_dump_ingests_with_zero_errors(world: Path, tmp_path: Path) -> None:
    from wikidata_index.index import WikidataIndex
    from wikidata_index.ingest import ingest_dump

    res = ingest_dump(world / "wikidata-sample.json.gz", tmp_path / "index", workers=1, progress=False, max_errors=0)
    assert res.errors == []
    assert res.stats.get("malformed", 0) == 0
    with WikidataIndex(tmp_path / "index") as ix:
        counts = dict(ix.con.sql("select type, count(*) from entities group by 1").fetchall())
        assert counts["item"] >= 1200 and counts["property"] == 99
        q = ix.con.sql("select id from types where class = 'Q5' order by id limit 1").fetchall()[0][0]
        assert ix.types(q) == ["Q5"]
        assert "Q486972" in ix.superclasses("Q515")  # city -> human settlement
        kinds = {r["constraint_type"] for r in ix.constraints("P175")}
        assert kinds == {SUBJECT_TYPE_CONSTRAINT, VALUE_TYPE_CONSTRAINT}
        deprecated = ix.con.sql("select id from types where rank = 'deprecated' order by id").fetchall()
        assert deprecated and all(ix.types(d) == ["Q5"] for (d,) in deprecated)  # deprecated Q515 ignored
        assert ix.con.sql("select count(*) from edges where property = 'P17'").fetchall()[0][0] > 100


def test_every_document_passes_the_validator_without_warnings(world: Path) -> None:
    for split in ("train", "dev", "test"):
        ds = read_docs(world / "docs" / f"{split}.json")
        assert ds.skipped == [] and ds.warnings == [], split
        assert len(ds.docs) >= 20


def test_documents_look_like_docred(docs: dict[str, list[dict]]) -> None:
    all_docs = [d for ds in docs.values() for d in ds]
    n = len(all_docs)
    assert 6 <= sum(len(d["sents"]) for d in all_docs) / n <= 10
    assert 13 <= sum(len(d["vertexSet"]) for d in all_docs) / n <= 22
    assert 10 <= sum(len(d["labels"]) for d in all_docs) / n <= 35
    types = Counter(entity_type(e) for d in all_docs for e in d["vertexSet"])
    assert set(types) == {"PER", "ORG", "LOC", "MISC", "TIME", "NUM"}
    intra = inter = 0
    for d in all_docs:
        for lab in d["labels"]:
            assert lab["evidence"], lab
            hs = {m["sent_id"] for m in d["vertexSet"][lab["h"]]}
            ts = {m["sent_id"] for m in d["vertexSet"][lab["t"]]}
            if hs & ts:
                intra += 1
            else:
                inter += 1
    assert intra > 100 and inter > 100
    times = {m["name"] for d in all_docs for e in d["vertexSet"] for m in e if m["type"] == "TIME"}
    assert any(t.count(" ") == 2 for t in times) and any(t.startswith("the ") for t in times)
    assert any(t.isdigit() for t in times) and any(t.split()[0] in ("March", "June", "May", "July") for t in times)
    nums = {m["name"] for d in all_docs for e in d["vertexSet"] for m in e if m["type"] == "NUM"}
    assert any("," in x for x in nums) and any(x.isalpha() for x in nums) and any("." in x for x in nums)


def test_tricky_documents_are_present_in_the_test_split(docs: dict[str, list[dict]]) -> None:
    test = docs["test"]
    shared = nested = adjacent = punct = many_names = 0
    for d in test:
        names = Counter(n for e in d["vertexSet"] for n in distinct_names(e))
        firsts = [e[0]["name"] for e in d["vertexSet"]]
        shared += any(firsts.count(n) > 1 for n in names)
        spans = [(m["sent_id"], *m["pos"]) for e in d["vertexSet"] for m in e]
        for s1, a1, b1 in spans:
            for s2, a2, b2 in spans:
                if s1 == s2 and (a1, b1) != (a2, b2):
                    nested += a1 <= a2 and b2 <= b1
                    adjacent += b1 == a2
        punct += any(any(not t.isalnum() for t in tokenize(n)) for n in names)
        many_names += any(len(distinct_names(e)) >= 3 for e in d["vertexSet"])
    assert shared and nested and adjacent and punct, (shared, nested, adjacent, punct)
    all_multi = [len(distinct_names(e)) for ds in docs.values() for d in ds for e in d["vertexSet"]]
    assert sum(k >= 2 for k in all_multi) >= 50 and max(all_multi) >= 3


def test_links_cover_every_entity_and_gold_agrees_with_the_dump(world: Path, docs: dict[str, list[dict]],
                                                                dump: dict[str, dict]) -> None:
    links = json.loads((world / "links.json").read_text())
    checked = 0
    for ds in docs.values():
        for d in ds:
            row = links[d["title"]]
            assert len(row) == len(d["vertexSet"])
            for e, q in zip(d["vertexSet"], row):
                if entity_type(e) in ("NUM", "TIME"):
                    assert q is None
                elif q is not None:
                    assert q in dump
            for lab in d["labels"]:
                h, t = row[lab["h"]], row[lab["t"]]
                assert h is not None, lab
                if t is not None:
                    assert t in _edges(dump[h], lab["r"]), (d["title"], lab)
                else:  # a TIME or NUM value: the subject has a claim of that property
                    assert lab["r"] in dump[h]["claims"], (d["title"], lab)
                checked += 1
    assert checked > 1500


def _closure(dump: dict[str, dict], cls: str) -> set[str]:
    out, todo = set(), [cls]
    while todo:
        c = todo.pop()
        if c in out or c not in dump:
            continue
        out.add(c)
        todo.extend(_edges(dump[c], "P279"))
    return out


def test_gold_triples_respect_the_type_constraints(docs: dict[str, list[dict]], world: Path, dump: dict[str, dict]) -> None:
    links = json.loads((world / "links.json").read_text())
    cons: dict[tuple[str, str], set[str]] = {}
    for pid in RELATIONS:
        for st in dump[pid]["claims"].get("P2302", []):
            kind = st["mainsnak"]["datavalue"]["value"]["id"]
            classes = {q["datavalue"]["value"]["id"] for q in st["qualifiers"]["P2308"]}
            cons[(pid, kind)] = classes
    for ds in docs.values():
        for d in ds:
            row = links[d["title"]]
            for lab in d["labels"]:
                for end, kind in (("h", SUBJECT_TYPE_CONSTRAINT), ("t", VALUE_TYPE_CONSTRAINT)):
                    q = row[lab[end]]
                    allowed = cons.get((lab["r"], kind))
                    if q is None or not allowed:
                        continue
                    types = set().union(*(_closure(dump, c) for c in _p31(dump[q])))
                    assert types & allowed, (d["title"], lab, end, _p31(dump[q]))


def test_items_give_the_renaming_pipeline_enough_material(dump: dict[str, dict], world: Path,
                                                          docs: dict[str, list[dict]]) -> None:
    from envbench.rename.candidates import pool_of

    items = _items(dump)
    by_class: dict[str, list[dict]] = {}
    for e in items:
        by_class.setdefault(_p31(e)[0], []).append(e)
    assert set(by_class) == {q for q, _, _ in FINE_CLASSES.values()}
    for cls, members in by_class.items():
        assert len(members) >= 40, cls
        assert max(len(e["aliases"].get("en", [])) for e in members) <= 5
    # Every linked entity of every document has same-class candidates with enough names in both pools.
    links = json.loads((world / "links.json").read_text())
    n_names = {e["id"]: 1 + len(e["aliases"].get("en", [])) for e in items}
    for ds in docs.values():
        for d in ds:
            for ent, q in zip(d["vertexSet"], links[d["title"]]):
                if q is None:
                    continue
                need = len(distinct_names(ent))
                for pool in ("eval", "train"):
                    ok = [e for e in by_class[_p31(dump[q])[0]] if pool_of(e["id"]) == pool and n_names[e["id"]] >= need]
                    assert len(ok) >= 5, (d["title"], ent[0]["name"], pool)
    assert any(len(e["aliases"].get("en", [])) >= 3 for e in items)
    assert sum("de" in e["labels"] for e in items) > 100
    assert sum("enwiki" in e["sitelinks"] for e in items) > len(items) // 2
    snaks = Counter(s["mainsnak"]["snaktype"] for e in dump.values() for lst in e["claims"].values() for s in lst)
    ranks = Counter(s["rank"] for e in dump.values() for lst in e["claims"].values() for s in lst)
    assert snaks["novalue"] and snaks["somevalue"] and ranks["deprecated"]
    somevalue_p31 = [e for e in items if any(s["mainsnak"]["snaktype"] == "somevalue" for s in e["claims"]["P31"])]
    assert somevalue_p31
    times = [s["mainsnak"]["datavalue"]["value"] for e in items for p in ("P569", "P577") for s in e["claims"].get(p, [])]
    assert {t["precision"] for t in times} >= {9, 11}
    titles = [e["sitelinks"]["enwiki"]["title"] for e in items if "enwiki" in e["sitelinks"]]
    assert len(titles) == len(set(titles))  # one page per title, as on Wikipedia


def test_lean_dump_streams_names_p31_and_the_humans_p21_only(tmp_path: Path) -> None:
    res = make_sample(tmp_path, entities=3000, lean=True)
    assert res.items == 3000
    ents = list(iter_dump(res.dump))
    items = [e for e in ents if e["type"] == "item" and int(e["id"][1:]) > SAMPLE_QID_BASE]
    assert len(items) == 3000
    filler = items[-100:]
    # names and P31 only, and P21 on the filler humans (so persons draw among their own gender)
    human = "Q5"

    def p31(e: dict) -> str:
        return e["claims"]["P31"][0]["mainsnak"]["datavalue"]["value"]["id"]

    assert all(set(e["claims"]) == ({"P31", "P21"} if p31(e) == human else {"P31"}) and e["labels"]["en"]["value"]
               for e in filler)
    assert any(p31(e) == human for e in filler)
    assert len({e["id"] for e in items}) == 3000
    assert res.docs["test"] == 20  # the documented world is the default one


def test_small_worlds_and_bad_sizes(tmp_path: Path) -> None:
    res = make_sample(tmp_path / "small", entities=200, docs=10)
    assert sum(res.docs.values()) == 10
    with pytest.raises(EnvbenchError, match="--entities 10 is too small"):
        make_sample(tmp_path / "x", entities=10)


def test_lean_output_does_not_depend_on_worker_count(tmp_path: Path) -> None:
    from envbench.worlds import wikidata_json as wj
    from envbench.worlds.sample.dump import write_lean

    runs = {"one": (1, 1000), "two": (2, 1000), "big-block": (1, 20_000)}
    for name, (workers, block) in runs.items():
        with wj.DumpWriter(tmp_path / name / "lean.json.gz", compresslevel=1) as w:
            write_lean(w, 0, SAMPLE_QID_BASE, 3_500, workers=workers, block=block)  # 4 blocks: the pool path
    assert (tmp_path / "one" / "lean.json.gz").read_bytes() == (tmp_path / "two" / "lean.json.gz").read_bytes()
    ents = list(iter_dump(tmp_path / "one" / "lean.json.gz"))
    assert ents == list(iter_dump(tmp_path / "big-block" / "lean.json.gz"))
    assert len(ents) == 3_500 and ents[-1]["id"] == f"Q{SAMPLE_QID_BASE + 3_499}"


def test_fewest_documents_still_fill_every_split(tmp_path: Path) -> None:
    # regression: --docs 3 (the documented minimum, "one per split") left test empty
    for n in (3, 4):
        res = make_sample(tmp_path / str(n), entities=60, docs=n)
        assert all(res.docs[s] >= 1 for s in ("train", "dev", "test")), res.docs
        assert sum(res.docs.values()) == n


# sha256 of the default world's files (seed 0); a deliberate change to the world updates these (and
# tests/envbench/data/sample_env.sha256). Last changed by the humans' P21 (the dump only).
PINNED = {
    "wikidata-sample.json.gz": "47ab561dd6b8ee40d108d3ad51f9c5d86b64046fd8fe59c34a70c5f4ca53c0b3",
    "docs/train.json": "a9ec1bdda39dfc1c775c52ace35830080f372ca52419108b973fd45e9e94d733",
    "docs/dev.json": "82c3ccd24cb21a9dc6e9f253d7cdd0561f1e6c81540f7c90295ddd87ef62787f",
    "docs/test.json": "427dbf07b613bfaf61b311311a723ed27a2b3d54d269180a479ffc1b8042647e",
    "links.json": "dc5692e8f2cfa2ef857af7548b974cd247485c79c50a8ff9d9a15deef73f5808",
    "docs/test.linked-docred.json": "554f22a99b5802399f06ed49e6b9ac5616ff152cd031b35a01941695b033e13c",
}


def test_default_world_bytes_are_pinned(world: Path) -> None:
    import hashlib

    assert {f: hashlib.sha256((world / f).read_bytes()).hexdigest() for f in PINNED} == PINNED


def test_ctrl_c_during_a_lean_world_leaves_no_worker_tracebacks_and_no_output(tmp_path: Path) -> None:
    # the pool's workers printed "Process ForkPoolWorker-N: ... KeyboardInterrupt" after the command ended
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "w"
    child = subprocess.Popen([sys.executable, "-c", "import sys; from envbench.cli import main; sys.exit(main())",
                              "make-sample", "--out", str(out), "--entities", "2000000", "--lean"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    time.sleep(2.5)  # past imports, into the workers' blocks
    os.killpg(child.pid, signal.SIGINT)  # as Ctrl-C in a terminal: to every process of the group
    _, err = child.communicate(timeout=60)
    assert child.returncode != 0
    assert "ForkPoolWorker" not in err and "Traceback" not in err, err
    assert not out.exists()
