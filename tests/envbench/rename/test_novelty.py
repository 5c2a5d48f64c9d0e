"""Names seen in other documents: the --exclude-names-from set, the engine's check, stats' names_seen."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envbench.core.errors import EnvbenchError
from envbench.rename.audit import Auditor
from envbench.rename.candidates import ItemNames
from envbench.rename.engine import DocInfo, Draws, Row, Run, plan_runs, settle_linked
from envbench.rename.novelty import excluded_names, keys_of, mention_keys, seen
from envbench.rename.stats import StatsTally
from envbench.rename.substitute import name_key, text_key
from tests.envbench.index_fixture import mention


def _training_doc() -> dict[str, Any]:
    """What a model trained on: "Maria Lopez" and "Pâris" (an accent), and a tokeniser-split "Can't"."""
    return {
        "title": "Training",
        "sents": [["MARIA", "LOPEZ", "sang", "Ca", "n't", "Stop", "in", "Pâris", "."]],
        "vertexSet": [[mention("MARIA LOPEZ", 0, [0, 2], "PER")], [mention("Can't Stop", 0, [3, 6], "MISC")],
                      [mention("Pâris", 0, [7, 8], "LOC")]],
        "labels": [],
    }


def _doc() -> dict[str, Any]:
    return {
        "title": "Anna",
        "sents": [["Anna", "Vance", "lives", "in", "Rome", "."], ["Vance", "sings", "."]],
        "vertexSet": [[mention("Anna Vance", 0, [0, 2], "PER"), mention("Vance", 1, [0, 1], "PER")],
                      [mention("Rome", 0, [4, 5], "LOC")]],
        "labels": [],
    }


def test_a_mention_has_the_key_of_its_span_and_of_its_written_name() -> None:
    doc = _training_doc()
    split, written = name_key(["Ca", "n't", "Stop"]), text_key("Can't Stop")
    assert split != written  # the tokeniser split a word: the two keys differ, and both are held
    assert keys_of(doc, doc["vertexSet"][1][0]) == (split, written)
    assert mention_keys([doc]) == {("maria", "lopez"), split, written, ("paris",)}
    names = frozenset(mention_keys([doc]))
    # case and accents fold away; a longer name holding a seen one is another name
    assert text_key("Maria López") in names and text_key("PARIS") in names and text_key("Can't Stop") in names
    assert text_key("Maria Lopez Vance") not in names and text_key("Stop") not in names
    assert seen((("x",), ("paris",)), names) and not seen((("x",), ("y",)), names)


def test_excluded_names_reads_every_file(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps([_training_doc()]))
    b.write_text(json.dumps([_doc()]))
    assert excluded_names([a, b]) == frozenset(mention_keys([_training_doc(), _doc()]))
    assert ("rome",) in excluded_names([a, b]) and ("rome",) not in excluded_names([a])


def test_an_empty_or_invalid_excluded_file_is_an_error_naming_it(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    with pytest.raises(EnvbenchError) as exc:
        excluded_names([empty])
    assert str(exc.value) == (f"{empty}: holds no documents; give a DocRED-format file with at least one "
                              "document")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"title": "x"}))
    with pytest.raises(EnvbenchError) as exc:
        excluded_names([bad])
    assert str(exc.value) == (f"{bad}: expected a JSON list of documents, got an object; pass a DocRED-format file "
                              "such as dev_revised.json")


def _run_and_draws(names: dict[str, ItemNames], excluded: frozenset[tuple[str, ...]]) -> tuple[Run, Draws]:
    info = DocInfo(0, _doc(), ["Q1", None], {("Q1", "PER"): "Q5"})
    runs, slots = plan_runs([info], [1], "eval", twins=False)
    draws = Draws(slots, lambda slot: 10, Auditor(con=None, constraints={}), {(0, 0): list(names)}, names,
                  excluded=excluded)
    return runs[0], draws


def test_a_candidate_with_a_seen_name_is_passed_over() -> None:
    # "Maria Lopez" pairs with "Anna Vance" and its alias "Lopez" with "Vance"; "maria lopez" was seen
    # (women's names: "Anna" reads as a woman's, ``rename.gender``)
    names = {"Q8": ItemNames("Maria Lopez", ("Lopez",)), "Q9": ItemNames("Rosa Ash", ("Ash",))}
    run, draws = _run_and_draws(names, frozenset(mention_keys([_training_doc()])))
    assert settle_linked(run, 0, draws) is None
    assert [(r.new_qid, r.new_names) for r in run.rows] == [("Q9", ["Rosa Ash", "Ash"])]
    # one seen name is enough: here only the alias "Paris" was seen
    names = {"Q8": ItemNames("Rosa Pâris", ("Pâris",)), "Q9": ItemNames("Eve Moor", ("Moor",))}
    run, draws = _run_and_draws(names, frozenset(mention_keys([_training_doc()])))
    settle_linked(run, 0, draws)
    assert [r.new_qid for r in run.rows] == ["Q9"]
    # without the set, the first candidate is taken
    run, draws = _run_and_draws(names, frozenset())
    settle_linked(run, 0, draws)
    assert [r.new_qid for r in run.rows] == ["Q8"]


def test_names_seen_counts_mentions_not_names() -> None:
    source = _doc()
    info = DocInfo(0, source, ["Q1", "Q2"], {("Q1", "PER"): "Q5", ("Q2", "LOC"): "Q515"})
    # entity 0 became "Maria Lopez" / "Lopez" (two mentions, one seen), entity 1 was kept
    output = json.loads(json.dumps(source))
    output["sents"] = [["Maria", "Lopez", "lives", "in", "Rome", "."], ["Lopez", "sings", "."]]
    output["vertexSet"][0] = [mention("Maria Lopez", 0, [0, 2], "PER"), mention("Lopez", 1, [0, 1], "PER")]
    run = Run(info, 1, "Anna-1", {})
    run.rows = [Row(0, "PER", "linked", None, "Q1", "Q5", "Q8", ["Anna Vance", "Anna"], ["Maria Lopez", "Lopez"])]
    training = frozenset(mention_keys([_training_doc()]))
    tally = StatsTally(1, excluded=training, source_names=frozenset(mention_keys([source])),
                       excluded_files=["train.json"])
    tally.add_run(run, output)
    tally.add_source(info)
    seen_ = tally.names_seen()
    assert seen_["exclude_names_from"] == ["train.json"]
    assert seen_["renamed"] == {"mentions": 2, "in_excluded": 1, "in_excluded_share": 0.5, "in_source": 0,
                                "in_source_share": 0.0}
    # the source's three PER/LOC mentions: none is a training name
    assert seen_["source"] == {"mentions": 3, "in_excluded": 0, "in_excluded_share": 0.0}
    assert seen_["by_type"]["LOC"]["renamed"]["mentions"] == 0
    assert seen_["by_type"]["LOC"]["source"] == {"mentions": 1, "in_excluded": 0, "in_excluded_share": 0.0}
    # without --exclude-names-from the excluded columns are unknown, not zero
    tally = StatsTally(1, source_names=frozenset(mention_keys([output])))
    tally.add_run(run, output)
    assert tally.names_seen()["renamed"] == {"mentions": 2, "in_excluded": None, "in_excluded_share": None,
                                             "in_source": 2, "in_source_share": 1.0}


@pytest.mark.slow
def test_real_re_docred_test_is_novel_to_a_dev_trained_model(tmp_path: Path) -> None:
    """The issue's measurement (one seed): KB from Re-DocRED dev + test, Env test excluding dev's names."""
    from envbench.formats.docred import read_docs
    from envbench.rename.generate import generate
    from envbench.worlds.kb_from_corpus import kb_from_corpus
    from tests.conftest import shared_path
    from wikidata_index.ingest import ingest_dump

    dev, test = shared_path("re-docred", "dev_revised.json"), shared_path("re-docred", "test_revised.json")
    kb_from_corpus([dev, test], tmp_path / "kb.json.gz", tmp_path / "links.json")
    ingest_dump(tmp_path / "kb.json.gz", tmp_path / "index", progress=False)
    res = generate(test, tmp_path / "index", tmp_path / "env", links=tmp_path / "links.json", seeds=1,
                   progress=False, exclude_names_from=[dev])
    # issue 20 asked >= 0.90; since issue 31 catch-all entities are kept (generic_type): 0.845 with five
    # seeds (the lock), issue 31 asks >= 0.85; renamed or kept as catch-alls, 0.95
    # (since issue 57 a NUM or TIME figure the text checks, or a fixed form, keeps its value: counted with the
    # renamed, so every other entity is held to the rate it had; and since issue 58's places, so is an outer
    # place that keeps its name because its renamed inner place stays inside it, "Wuppertal , Germany"; and an
    # adjective, or its place, that keeps its name with the other, "an American writer ... in the United States";
    # and a language naming the words after its colon, "( Italian : Società Dante Alighieri )"; and a continent,
    # every one of which dev names, so a continent has no name a dev-trained model has not seen)
    import pyarrow.parquet as pq

    from envbench.worlds.fine_typing import CONTINENT

    total = res.stats["renamed"]["total"]
    kept = res.stats["kept_reasons"]
    checked = kept.get("checked", 0) + kept.get("fixed_form", 0) + kept.get("place", 0) + kept.get("referent", 0)
    checked += kept.get("text_language", 0)
    rows = pq.read_table(tmp_path / "env" / "substitutions.parquet").to_pylist()
    continents = sum(r["fine_type"] == CONTINENT and r["reason"] == "no_candidate" for r in rows)
    assert 0 < continents < 0.01 * total["entities"]
    checked += continents
    assert (total["renamed"] + checked) / total["entities"] >= 0.84 and res.stats["audit"]["preserved"]
    assert (total["renamed"] + checked + kept["generic_type"]) / total["entities"] > 0.945
    names = res.stats["names_seen"]
    # > 9000 renamed mentions before issue 31's catch-all rule kept some entities; 8,094 since; 7,450 since
    # issue 58, whose names built on other names are derived from them, not drawn (their mentions are no
    # drawn names, which this counts)
    assert names["renamed"]["in_excluded"] == 0 and names["renamed"]["mentions"] > 7000
    assert 0.2 < names["source"]["in_excluded_share"] < 0.3  # the original test mentions (26.2%)
    # read back from the written benchmark, not from the tally
    linked = {(r["title"], r["entity"]) for r in rows
              if r["kind"] == "linked" and r["coarse_type"] in ("PER", "ORG", "LOC", "MISC")}
    dev_names = excluded_names([dev])
    keys = [keys_of(doc, m) for doc in read_docs(tmp_path / "env" / "test_revised_env.json").docs
            for ei, entity in enumerate(doc["vertexSet"]) if (doc["title"], ei) in linked for m in entity]
    assert len(keys) == names["renamed"]["mentions"] and not any(seen(k, dev_names) for k in keys)


def test_a_training_name_with_an_article_makes_the_bare_name_seen_too() -> None:
    doc = {"title": "T", "sents": [["The", "Beatles", "played", "."]],
           "vertexSet": [[mention("The Beatles", 0, [0, 2], "ORG")]], "labels": []}
    keys = mention_keys([doc])
    assert ("the", "beatles") in keys and ("beatles",) in keys
    assert ("the",) not in keys  # only a leading article is dropped, and never the whole name
