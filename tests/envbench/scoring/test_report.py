"""envbench.scoring.report: the analyses on hand-made documents, a tiny index and the real Re-DocRED test set."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from envbench.core.errors import DataError
from envbench.formats.predictions import check_predictions
from envbench.scoring.report import (
    consistency_rate,
    linear_slope,
    make_report,
    popularity,
    quartiles,
    slice_scores,
)
from envbench.scoring.report.markdown import POOLED_NOTE
from tests.conftest import shared_path
from tests.envbench.scoring.test_evaluate import TRAIN, renamed, sub_row, write, write_subs
from tests.envbench.scoring.test_metrics import tiny_doc


def checked(docs: list[dict], preds: list[dict]):
    return check_predictions(preds, {d["title"]: len(d["vertexSet"]) for d in docs})


def p(title: str, h: int, t: int, r: str) -> dict:
    return {"title": title, "h_idx": h, "t_idx": t, "r": r}


def tiny_index(path: Path, popularity: dict[str, int]) -> Path:
    """An index directory in the layout of wikidata_index/schema.py with only the entities table
    (published with its manifest, as an index must be)."""
    from wikidata_index.ingest import write_tables

    rows = [{"id": q, "type": "item", "label": q, "description": None, "sitelinks": 0, "enwiki": None,
             "popularity": n} for q, n in sorted(popularity.items())]
    return write_tables(path, {"entities": rows})


def test_slice_scores_and_slope_by_hand() -> None:
    doc = tiny_doc()
    preds = [p("Tiny", 0, 1, "P19"), p("Tiny", 2, 1, "P17"), p("Other", 0, 1, "P19")]
    sl = slice_scores([doc], checked([doc], preds), lambda t, h, tt, r: ("all", r))
    assert sl["all"] == {"precision": 0.5, "recall": 1 / 3, "f1": 0.4, "n_pred": 2, "n_correct": 1, "n_gold": 3}
    assert sl["P17"]["n_pred"] == 1 and sl["P17"]["n_gold"] == 1 and sl["P17"]["f1"] == 0.0
    assert sl["P19"]["f1"] == 1.0
    assert linear_slope([1, 2, 3], [1, 3, 5], [1, 1, 1]) == pytest.approx(2.0)
    assert linear_slope([1, 2, 3], [1, 3, 100], [1, 1, 0]) == pytest.approx(2.0)  # weight 0 ignores a point
    assert linear_slope([1, 1], [1, 2], [1, 1]) is None
    assert quartiles([1, 2, 3, 4, 5]) == [2.0, 3.0, 4.0] and quartiles([]) is None and quartiles([7]) == [7.0] * 3


def test_consistency_rate_per_relation_by_hand() -> None:
    src = tiny_doc()
    twins = [renamed(src, 1, {"Ann": "Bea"}), renamed(src, 2, {"Ann": "Cid"})]
    orig_preds = [p("Tiny", 0, 1, "P19"), p("Tiny", 1, 2, "P17"), p("Tiny", 0, 2, "P17")]  # 2 correct, 1 wrong
    env_preds = [p("Tiny-1", 0, 1, "P19"), p("Tiny-1", 0, 2, "P27"),  # P27 was not correct on the original
                 p("Tiny-2", 1, 2, "P17")]
    c = consistency_rate([src], checked([src], orig_preds), twins, checked(twins, env_preds))
    assert c["overall"] == {"original_correct": 4, "still_correct": 2, "rate": 0.5}
    assert c["per_relation"]["P19"] == {"name": "place of birth", "original_correct": 2, "still_correct": 1,
                                        "rate": 0.5}
    assert c["per_relation"]["P17"]["still_correct"] == 1 and "P27" not in c["per_relation"]
    assert c["n_twins_without_original"] == 0
    lonely = [renamed(tiny_doc() | {"title": "Gone"}, 1, {})]
    c2 = consistency_rate([src], checked([src], orig_preds), lonely, checked(lonely, []))
    assert c2["n_twins_without_original"] == 1 and c2["overall"]["rate"] is None


def test_popularity_from_tiny_parquet_index(tmp_path: Path) -> None:
    ix = tiny_index(tmp_path / "ix", {"Q1": 50, "Q2": 3, "Q9": 0})
    assert popularity(ix, ["Q2", "Q1", "Q1", "Q404"]) == {"Q1": 50, "Q2": 3}
    assert popularity(ix, []) == {}


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    src = tiny_doc()
    env_dir = tmp_path / "env"
    env_dir.mkdir()
    twins = [renamed(src, 1, {"Ann": "Bea", "Annie": "Beatrice"}), renamed(src, 2, {"Ann": "Cid", "Annie": "Cidney"})]
    write_subs(env_dir / "substitutions.parquet", [
        sub_row("Tiny-1", "Tiny", 1, 0, ["Ann", "Annie"], ["Bea", "Beatrice"], qid="Q1", new_qid="Q2"),
        sub_row("Tiny-1", "Tiny", 1, 1, ["Paris"], ["Paris"], coarse="LOC", kind="kept"),
        sub_row("Tiny-1", "Tiny", 1, 2, ["France"], ["France"], coarse="LOC", kind="kept"),
        sub_row("Tiny-2", "Tiny", 2, 0, ["Ann", "Annie"], ["Cid", "Cidney"], qid="Q1", new_qid="Q3"),
        sub_row("Tiny-2", "Tiny", 2, 1, ["Paris"], ["Paris"], coarse="LOC", kind="kept"),
        sub_row("Tiny-2", "Tiny", 2, 2, ["France"], ["France"], coarse="LOC", kind="kept"),
    ])
    return {
        "og": write(tmp_path / "orig.json", [src]),
        "op": write(tmp_path / "op.json", [p("Tiny", 0, 1, "P19"), p("Tiny", 1, 2, "P17")]),
        "eg": write(env_dir / "test_env.json", twins),
        "ep": write(tmp_path / "ep.json", [p("Tiny-1", 0, 1, "P19"), p("Tiny-1", 2, 1, "P17"),
                                           p("Tiny-2", 0, 1, "P19"), p("Tiny-2", 1, 2, "P17")]),
        "train": write(tmp_path / "train.json", TRAIN),
        "index": tiny_index(tmp_path / "ix", {"Q1": 40, "Q2": 2, "Q3": 8}),
        "env_dir": env_dir,
    }


def test_report_tables_by_hand(world: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "rep"
    r = make_report(world["og"], world["op"], world["eg"], world["ep"], out=out, index=world["index"],
                    train=[world["train"]])
    rep = json.loads((out / "report.json").read_bytes())
    t2 = rep["table2_precision_recall"]
    # original: 2 of 2 correct, 3 gold -> P 1, R 2/3, F1 0.8; env seeds: F1 0.4 and 0.8
    assert t2["f1"]["original"] == pytest.approx(0.8)
    assert t2["f1"]["env_mean"] == pytest.approx(0.6) and t2["f1"]["change"] == pytest.approx(-0.2)
    assert t2["f1"]["relative_change"] == pytest.approx(-0.25)
    assert t2["precision"]["env_mean"] == pytest.approx(0.75)
    # Ign F1 original: (Ann, Paris, P19) in train -> ign P (2-1)/(2-1) = 1 -> 0.8; name-independent on Env:
    # seed 1 ign P 0 -> 0; seed 2 -> 0.8; mean 0.4
    assert t2["ign_f1"]["original"] == pytest.approx(0.8)
    assert t2["name_independent_ign_f1"]["env_mean"] == pytest.approx(0.4)
    t3 = rep["table3_intra_inter"]
    assert t3["intra_f1"]["original"] == pytest.approx(1.0) and t3["intra_f1"]["env_mean"] == pytest.approx(1.0)
    assert t3["inter_f1"]["original"] == pytest.approx(2 / 3)  # P 1/1, R 1/2
    f4 = rep["figure4_f1_by_entities"]
    assert f4["buckets"][0]["bucket"] == "1-10" and f4["buckets"][0]["original_f1"] == pytest.approx(0.8)
    assert f4["slope_original"] is None  # one populated bucket
    pt = rep["per_type_f1"]
    assert pt["PER"]["original_f1"] == pytest.approx(2 / 3)  # two PER facts, one predicted: P 1, R 1/2
    assert pt["LOC"]["original_f1"] == pytest.approx(0.8)  # all three facts touch a LOC
    t4 = rep["table4_popularity"]["per_type"]["PER"]
    assert t4["renamed"] == 2 and t4["original_median"] == 40 and t4["new_median"] == 5
    assert t4["new_quartiles"] == [3.5, 5.0, 6.5] and t4["missing_in_index"] == 0
    # Q2 (popularity 2) falls in Q1, Q3 (8) in Q4; each seed predicted one of entity 0's two facts
    assert t4["env_f1_by_new_popularity_quartile"] == {"Q1": pytest.approx(2 / 3), "Q2": None, "Q3": None,
                                                       "Q4": pytest.approx(2 / 3)}
    t5 = rep["table5_names_in_train"]
    assert t5["original"]["PER"] == {"mentions": 2, "in_train": 1, "share": 0.5}
    assert t5["env"]["PER"]["share"] == 0.0 and t5["env"]["LOC"]["share"] == 0.5
    t1 = rep["table1_substitution_rates"]
    assert t1["source"] == "substitutions.parquet"
    assert t1["substitution_rate"] == {"PER": 1.0, "LOC": 0.0, "total": 2 / 6}
    assert t1["kept_reasons"] == {"unlinked": 4}
    assert rep["consistency"]["overall"] == {"original_correct": 4, "still_correct": 3, "rate": 0.75}
    md = (out / "report.md").read_text()
    assert "| F1 | 80.00 | 60.00 ± 28.28 | -20.00 | -25.0% |" in md
    assert "| P19 | place of birth | 2 | 2 | 100.00 |" in md
    assert [f.name for f in r.files] == ["report.json", "report.md", "f1_by_entities.png", "type_drop.png"]
    assert (out / "f1_by_entities.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_is_byte_identical_on_rerun(world: dict[str, Path], tmp_path: Path) -> None:
    outs = []
    for name in ("a", "b"):
        make_report(world["og"], world["op"], world["eg"], world["ep"], out=tmp_path / name)
        outs.append({f: (tmp_path / name / f).read_bytes()
                     for f in ("report.md", "f1_by_entities.png", "type_drop.png")})
    assert outs[0] == outs[1]


def test_report_uses_stats_json_and_notes_skipped_parts(world: dict[str, Path], tmp_path: Path) -> None:
    stats = {"documents": 1, "seeds": 2, "substitution_rate": {"PER": 0.9, "ORG": 0.8, "LOC": 0.7, "MISC": 0.5,
                                                                "NUM": 1.0, "TIME": 1.0, "total": 0.8},
             "kept_reasons": {"unlinked": 3}}
    write(world["env_dir"] / "stats.json", stats)
    r = make_report(world["og"], world["op"], world["eg"], world["ep"], out=tmp_path / "rep")
    assert r.report["table1_substitution_rates"]["substitution_rate"]["PER"] == 0.9
    assert r.report["table4_popularity"] is None and r.report["table5_names_in_train"] is None
    assert "Table 4 (popularity) skipped: pass --index DIR (from `envbench ingest-dump`)" in r.notes
    assert any(n.startswith("Ign F1 equals F1: no training documents were given") for n in r.notes)


@pytest.mark.parametrize(("change", "problem"), [
    ({"substitution_rate": {"PER": "abc"}}, "substitution_rate.PER is 'abc', not a share from 0 to 1"),
    ({"substitution_rate": {"PER": [1]}}, "substitution_rate.PER is [1], not a share from 0 to 1"),
    ({"substitution_rate": {"PER": -5}}, "substitution_rate.PER is -5, not a share from 0 to 1"),
    ({"substitution_rate": {"<b>X|Y</b>": 0.5}}, "substitution_rate has the key '<b>X|Y</b>', not a DocRED type or 'total'"),
    ({"kept_reasons": {"a|b": 1}}, "kept_reasons is not an object of reasons and counts"),
    ({"gender": {"persons": "x"}}, "gender is not an object of counts"),
])
def test_a_hand_edited_stats_json_is_one_line(world: dict[str, Path], tmp_path: Path, change: dict, problem: str) -> None:
    # a hostile-input probe: these ended in tracebacks, or in "-500.00" and a broken table in report.md
    stats = {"substitution_rate": {"PER": 0.9, "total": 0.8}, "kept_reasons": {"no_candidate": 3}, **change}
    path = tmp_path / "stats.json"
    write(path, stats)
    with pytest.raises(DataError) as err:
        make_report(world["og"], world["op"], world["eg"], world["ep"], out=tmp_path / "rep", stats=path)
    assert str(err.value) == f"{path}: {problem}; pass the stats.json `envbench generate` wrote, unedited"
    assert not (tmp_path / "rep").exists()


def test_report_popularity_through_real_ingest(world: dict[str, Path], tmp_path: Path) -> None:
    """Popularity read from an index built by the real ingest of a real (mock) Wikidata dump."""
    ingest = pytest.importorskip("wikidata_index.ingest")
    from wikidata_index.index import WikidataIndex

    dump = shared_path("wikidata-samples", "wikidata-toolkit", "mock-dump-for-long-testing.json")
    ix_dir = tmp_path / "real_ix"
    ingest.ingest_dump(str(dump), str(ix_dir), progress=False, workers=1)
    with WikidataIndex(ix_dir) as ix:
        top = ix.con.execute("SELECT id FROM entities WHERE type = 'item' ORDER BY popularity DESC, id LIMIT 3"
                             ).fetchall()
        expected = {q: ix.popularity(q) for (q,) in top}
    assert popularity(ix_dir, list(expected)) == expected


def test_report_on_real_test_subset(tmp_path: Path) -> None:
    """30 real documents x 2 unrenamed twins; the Env twin of a perfect model is perfectly consistent."""
    test = json.loads(shared_path("re-docred", "test_revised.json").read_bytes())[:30]
    preds = [p(d["title"], lab["h"], lab["t"], lab["r"]) for d in test for lab in d["labels"]]
    env = [copy.deepcopy(d) | {"title": f"{d['title']}-{k}"} for d in test for k in (1, 2)]
    # twin 2 loses every P131 fact
    env_preds = [x | {"title": f"{x['title']}-{k}"} for x in preds for k in (1, 2) if k == 1 or x["r"] != "P131"]
    r = make_report(write(tmp_path / "o.json", test), write(tmp_path / "op.json", preds),
                    write(tmp_path / "e.json", env), write(tmp_path / "ep.json", env_preds), out=tmp_path / "rep")
    rep = r.report
    assert rep["table2_precision_recall"]["f1"]["original"] == 1.0
    assert rep["env"]["seeds"]["1"]["f1"] == 1.0 and rep["env"]["worst_seed"]["seed"] == 2
    c = rep["consistency"]
    assert c["per_relation"]["P131"]["rate"] == 0.5
    assert all(row["rate"] == 1.0 for r_, row in c["per_relation"].items() if r_ != "P131")
    n = len(preds)
    n131 = sum(x["r"] == "P131" for x in preds)
    assert c["overall"] == {"original_correct": 2 * n, "still_correct": 2 * n - n131, "rate": (2 * n - n131) / (2 * n)}
    assert sum(b["n_docs_original"] for b in rep["figure4_f1_by_entities"]["buckets"]) == 30
    assert rep["figure4_f1_by_entities"]["slope_original"] == pytest.approx(0.0, abs=1e-12)
    for row in rep["per_type_f1"].values():
        assert row["original_f1"] in (None, 1.0)


def test_real_pipeline_outputs_feed_evaluate_and_report(tmp_path: Path) -> None:
    """make-sample -> ingest-dump -> generate, then evaluate and report on what they wrote."""
    sample_world = pytest.importorskip("envbench.worlds.sample")
    generate = pytest.importorskip("envbench.rename.generate")
    ingest = pytest.importorskip("wikidata_index.ingest")
    from envbench.scoring.evaluate import evaluate

    sample = sample_world.make_sample(tmp_path / "sample")
    ingest.ingest_dump(sample.dump, tmp_path / "index", progress=False, workers=1)
    docs = tmp_path / "sample" / "docs"
    generate.generate(docs / "test.json", tmp_path / "index", tmp_path / "env", links=sample.links, seeds=2,
                      progress=False, allow_training_names=True)
    env_gold = tmp_path / "env" / "test_env.json"
    orig = json.loads((docs / "test.json").read_bytes())
    env = json.loads(env_gold.read_bytes())
    op = write(tmp_path / "op.json", [p(d["title"], lab["h"], lab["t"], lab["r"]) for d in orig for lab in d["labels"]])
    ep = write(tmp_path / "ep.json", [p(d["title"], lab["h"], lab["t"], lab["r"])
                                      for d in env for i, lab in enumerate(d["labels"]) if i % 4])
    r = evaluate(env_gold, ep, train=[docs / "train.json"])
    assert r.warnings == []  # every renamed mention maps back through substitutions.parquet
    assert "name_independent_ign_f1" in r.scores and list(r.scores["env"]["seeds"]) == ["1", "2"]
    assert r.scores["precision"] == 1.0
    rep = make_report(docs / "test.json", op, env_gold, ep, out=tmp_path / "rep", index=tmp_path / "index",
                      train=[docs / "train.json"]).report
    assert rep["table1_substitution_rates"]["source"].endswith("stats.json")
    t4 = rep["table4_popularity"]["per_type"]
    assert t4 and all(row["missing_in_index"] == 0 for row in t4.values())
    assert rep["consistency"]["overall"]["rate"] == pytest.approx(
        rep["consistency"]["overall"]["still_correct"] / rep["consistency"]["overall"]["original_correct"])
    assert rep["table2_precision_recall"]["f1"]["original"] == 1.0


def test_report_shows_pooled_beside_the_mean_over_seeds(world: dict[str, Path], tmp_path: Path) -> None:
    r = make_report(world["og"], world["op"], world["eg"], world["ep"], out=tmp_path / "rep", train=[world["train"]])
    t2 = r.report["table2_precision_recall"]
    # pooled over both copies: 4 submitted, 3 correct, 6 gold -> P 3/4, R 1/2, F1 0.6 (= the mean here by chance)
    assert t2["f1"]["env_pooled"] == pytest.approx(0.6) and t2["recall"]["env_pooled"] == pytest.approx(0.5)
    # name-independent Ign: pooled (3 - 2) / (4 - 2) = 1/2 with R 1/2 -> 0.5, the mean over seeds is 0.4
    assert t2["name_independent_ign_f1"]["env_pooled"] == pytest.approx(0.5)
    assert t2["name_independent_ign_f1"]["env_mean"] == pytest.approx(0.4)
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "| seed | Precision | Recall | F1 | Ign F1 | Ign F1 (name-indep.) |" in md
    assert "| 1 | 50.00 | 33.33 | 40.00 | 40.00 | 0.00 |" in md
    assert "| mean ± std | 75.00 ± 35.36 | 50.00 ± 23.57 | 60.00 ± 28.28 | 60.00 ± 28.28 | 40.00 ± 56.57 |" in md
    assert "| pooled | 75.00 | 50.00 | 60.00 | 60.00 | 50.00 |" in md
    assert "Pooled: all copies scored as one file, as the Env-DocRE/EVRT reference code prints it." in md
    assert r.summary().splitlines()[3].split() == ["F1", "80.00", "60.00", "±", "28.28", "60.00", "-20.00"]


def test_report_notes_have_codes_and_one_wording_with_evaluate(world: dict[str, Path], tmp_path: Path) -> None:
    from envbench.core.notes import NoteCode
    from envbench.scoring.evaluate import evaluate

    r = make_report(world["og"], world["op"], world["eg"], world["ep"], out=tmp_path / "rep")
    assert [n.code for n in r.messages] == [NoteCode.NO_TRAIN, NoteCode.NAME_INDEPENDENT_NEEDS_TRAIN,
                                            NoteCode.TABLE5_NEEDS_TRAIN, NoteCode.TABLE1_FROM_SUBSTITUTIONS,
                                            NoteCode.TABLE4_NEEDS_INDEX]
    e = evaluate(world["eg"], world["ep"])
    assert e.notes == r.notes[:2]  # the same statement in the same words
    assert r.report["notes"] == r.notes and r.report["warnings"] == r.warnings == []


def test_report_refuses_an_env_file_of_another_benchmark_but_warns_on_a_few_strays(
        world: dict[str, Path], tmp_path: Path) -> None:
    from envbench.core.errors import DataError

    other = write(tmp_path / "other.json", [tiny_doc() | {"title": "Elsewhere"}])
    with pytest.raises(DataError, match=r"2 of its 2 documents are renamed copies of no document in"):
        make_report(other, world["op"], world["eg"], world["ep"], out=tmp_path / "rep")
    assert not (tmp_path / "rep").exists()
    src = tiny_doc()
    env = [renamed(src, k, {}) for k in (1, 2)] + [renamed(src | {"title": "Stray"}, 1, {})]
    env[-1]["title"] = "Stray-1"
    env += [renamed(src | {"title": "Stray"}, 2, {})]
    env[-1]["title"] = "Stray-2"
    env += [renamed(src | {"title": "Tiny3"}, k, {}) for k in (1, 2)]
    two = write(tmp_path / "orig2.json", [src, src | {"title": "Tiny3"}])
    envf = write(tmp_path / "env.json", env)
    r = make_report(two, world["op"], envf, world["ep"], out=tmp_path / "rep2")
    op, ep = world["op"], world["ep"]
    assert r.warnings == [
        # nobody predicted for the added documents: said, as evaluate says it
        f"gold documents without any prediction in {op}: 1 of 2 (e.g. 'Tiny3'); each is scored with all its gold "
        f"facts missed; if {op} is for a subset, predict every document of {two} (or score the subset with "
        "`envbench evaluate --only-predicted`)",
        f"gold documents without any prediction in {ep}: 4 of 6 (e.g. 'Stray-1', 'Stray-2', 'Tiny3-1', ...); each "
        f"is scored with all its gold facts missed; if {ep} is for a subset, predict every document of {envf} (or "
        "score the subset with `envbench evaluate --only-predicted`)",
        f"2 Env documents have no original document in {two}; they are left out of the consistency rate"]


def test_report_over_an_env_file_of_part_of_the_documents_scores_the_same_originals(
        world: dict[str, Path], tmp_path: Path) -> None:
    """issue 29: an Env file built from 10 of 20 documents was compared with all 20 originals, silently."""
    src = tiny_doc()
    extra = src | {"title": "Tiny3"}
    two = write(tmp_path / "orig2.json", [src, extra])
    pred = write(tmp_path / "pred2.json", [p(d["title"], lab["h"], lab["t"], lab["r"])
                                           for d in (src, extra) for lab in d["labels"]])
    r = make_report(two, pred, world["eg"], world["ep"], out=tmp_path / "rep")
    assert r.warnings[0] == (
        f"{two}: 1 of its 2 documents have no renamed copy in {world['eg']} (e.g. 'Tiny3'); the original side is "
        f"scored on the 1 documents that {world['eg']} covers, so that both sides score the same documents")
    own = write(tmp_path / "pred1.json", [p(src["title"], lab["h"], lab["t"], lab["r"]) for lab in src["labels"]])
    alone = make_report(write(tmp_path / "orig1.json", [src]), own, world["eg"], world["ep"], out=tmp_path / "rep1")
    assert r.report["original"] == alone.report["original"] and r.report["original"]["f1"] == 1.0


def test_a_one_seed_env_file_reports_its_mean_and_no_spread(world: dict[str, Path], tmp_path: Path) -> None:
    env_dir = tmp_path / "env1"
    env_dir.mkdir()
    twin = json.loads(world["eg"].read_bytes())[0]  # seed 1 only
    write_subs(env_dir / "substitutions.parquet", [
        sub_row("Tiny-1", "Tiny", 1, 0, ["Ann", "Annie"], ["Bea", "Beatrice"], qid="Q1", new_qid="Q2")])
    eg = write(env_dir / "test_env.json", [twin])
    ep = write(tmp_path / "ep1.json", [p("Tiny-1", 0, 1, "P19"), p("Tiny-1", 2, 1, "P17")])
    r = make_report(world["og"], world["op"], eg, ep, out=tmp_path / "rep", train=[world["train"]])
    md = (tmp_path / "rep" / "report.md").read_text()
    # seed 1: 1 of 2 correct, 3 gold -> P 0.5, R 1/3, F1 0.4; one seed has no spread, so no "± 0.00"
    assert "| | original | Env (one seed) | change (points) | relative |" in md
    assert "| F1 | 80.00 | 40.00 | -40.00 | -50.0% |" in md
    assert "| mean | 50.00 | 33.33 | 40.00 | 40.00 | 0.00 |" in md
    assert "±" not in md.replace(POOLED_NOTE, "")
    assert r.summary().splitlines()[0].split()[:4] == ["original", "env", "(one", "seed)"]
    assert r.summary().splitlines()[3].split() == ["F1", "80.00", "40.00", "40.00", "-40.00"]
    # report.json holds no spread for one seed either: null, not 0.0
    rep = json.loads((tmp_path / "rep" / "report.json").read_bytes())
    assert rep["table2_precision_recall"]["f1"]["env_std"] is None
    assert rep["table3_intra_inter"]["intra_f1"]["env_std"] is None
    assert rep["env"]["std"] == {k: None for k in rep["env"]["mean"]}


def test_report_warns_when_renamed_names_are_more_familiar_than_the_originals(tmp_path: Path) -> None:
    """Renamed mentions that carry --train names more often than the originals: the benchmark was built
    without the training documents; said once, with the share of each, and not said the other way round."""
    from envbench.core.notes import NoteCode

    src = tiny_doc()  # Ann/Annie, Paris, France; TRAIN names Ann and Paris
    train = write(tmp_path / "train.json", TRAIN)
    og = write(tmp_path / "test.json", [src])
    op = write(tmp_path / "op.json", [p("Tiny", 0, 1, "P19")])
    familiar = [renamed(src, k, {"Annie": "Ann", "France": "Paris"}) for k in (1, 2)]  # 4 of 4 PER/LOC names
    novel = [renamed(src, k, {"Ann": "Bea", "Annie": "Bea", "Paris": "Lyon"}) for k in (1, 2)]  # 0 of 4
    for name, env_docs in (("familiar", familiar), ("novel", novel)):
        eg = write(tmp_path / f"{name}_env.json", env_docs)
        ep = write(tmp_path / f"{name}_pred.json", [p(d["title"], 0, 1, "P19") for d in env_docs])
        r = make_report(og, op, eg, ep, out=tmp_path / name, train=[train])
        warned = [n.text for n in r.messages if n.code is NoteCode.RENAMED_NAMES_MORE_FAMILIAR]
        if name == "novel":
            assert warned == []
            md = (tmp_path / name / "report.md").read_text()
            # per type, the gold facts behind each F1 (2 PER facts on the original, 4 over the two copies)
            assert "| type | gold facts (original) | gold facts (Env, all seeds) | original F1 |" in md
            assert "| PER | 2 | 4 |" in md and "| LOC | 3 | 6 |" in md
            continue
        assert warned == [f"100.0% of the renamed PER/ORG/LOC/MISC mentions of {eg} carry a name of the --train "
                          "documents, more than the 50.0% of the original mentions: renaming made the names more "
                          "familiar to the model, the opposite of what the benchmark measures; regenerate it with "
                          "`envbench generate ... --exclude-names-from` those training files"]
        assert warned[0] in r.report["warnings"]


def test_the_report_states_the_fall_with_its_interval(tmp_path: Path) -> None:
    """Issue 60: a claim comes with its interval. Three documents, each found whole on the original; the twins
    of two of them are found whole, those of the third not at all: the fall is 1/3 of the facts on the whole
    data, and a sample falls from 0 (the third never drawn) to 1 (only it drawn)."""
    docs = [tiny_doc() | {"title": t} for t in ("A", "B", "C")]
    preds = [p(d["title"], lab["h"], lab["t"], lab["r"]) for d in docs for lab in d["labels"]]
    env = [renamed(d, k, {"Ann": "Bea"}) for d in docs for k in (1, 2)]
    env_preds = [x | {"title": f"{x['title']}-{k}"} for x in preds for k in (1, 2) if x["title"] != "C"]
    r = make_report(write(tmp_path / "o.json", docs), write(tmp_path / "op.json", preds),
                    write(tmp_path / "e.json", env), write(tmp_path / "ep.json", env_preds), out=tmp_path / "rep")
    boot = r.report["bootstrap"]
    assert (boot["documents"], boot["env_copies"], boot["samples"]) == (3, 2, 2000)
    fall = boot["fall_f1"]
    assert fall["estimate"] == pytest.approx(1 - 0.8) and fall["low"] == 0.0 and fall["high"] == 1.0
    assert boot["test_f1"] == {"estimate": 1.0, "low": 1.0, "high": 1.0, "level": 0.95}
    md = (tmp_path / "rep" / "report.md").read_text()
    assert ("F1 fall (original minus Env mean): 20.00 points, 95% CI [0.00, 100.00] (bootstrap over the 3 original "
            "documents, each with its 2 renamed copies; 2000 samples, `envbench compare`'s).") in md
