"""File-level end-to-end scoring: Env twins matched on their own positions, the fall, the consistency rate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envbench.core.errors import DataError
from envbench.scoring.evaluate_end_to_end import evaluate_end_to_end, score_files


def mention(name: str, sid: int, a: int, b: int, typ: str) -> dict:
    return {"name": name, "sent_id": sid, "pos": [a, b], "type": typ}


def source() -> dict:
    # "Ann met Bob in Rome ." : Ann (0, 0, 1), Bob (0, 2, 3), Rome (0, 4, 5)
    return {"title": "S", "sents": [["Ann", "met", "Bob", "in", "Rome", "."]],
            "vertexSet": [[mention("Ann", 0, 0, 1, "PER")], [mention("Bob", 0, 2, 3, "PER")],
                          [mention("Rome", 0, 4, 5, "LOC")]],
            "labels": [{"h": 0, "t": 2, "r": "P551", "evidence": [0]}, {"h": 1, "t": 2, "r": "P551", "evidence": [0]}]}


def twin(seed: int) -> dict:
    # the renaming gives Ann a two-token name, so every later mention moves one token right:
    # "Mary Jane met Bob in Rome ." : Mary Jane (0, 0, 2), Bob (0, 3, 4), Rome (0, 5, 6)
    return {"title": f"S-{seed}", "sents": [["Mary", "Jane", "met", "Bob", "in", "Rome", "."]],
            "vertexSet": [[mention("Mary Jane", 0, 0, 2, "PER")], [mention("Bob", 0, 3, 4, "PER")],
                          [mention("Rome", 0, 5, 6, "LOC")]],
            "labels": source()["labels"]}


def e2e_row(title: str, spans: list[list[int]], relations: list[tuple[int, int, str]]) -> dict:
    types = ["PER", "PER", "LOC"]
    return {"title": title, "entities": [{"mentions": [s], "type": t} for s, t in zip(spans, types)],
            "relations": [{"h": h, "t": t, "r": r} for h, t, r in relations]}


def write(path: Path, obj: object) -> Path:
    path.write_text(json.dumps(obj))
    return path


SOURCE_SPANS = [[0, 0, 1], [0, 2, 3], [0, 4, 5]]
TWIN_SPANS = [[0, 0, 2], [0, 3, 4], [0, 5, 6]]
BOTH = [(0, 2, "P551"), (1, 2, "P551")]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    return {"gold": write(tmp_path / "test.json", [source()]),
            "pred": write(tmp_path / "pred.json", [e2e_row("S", SOURCE_SPANS, BOTH)]),
            "env_gold": write(tmp_path / "test_env.json", [twin(1), twin(2)])}


def test_twin_spans_are_matched_against_the_twins_own_positions(files: dict[str, Path], tmp_path: Path) -> None:
    # seed 1 predicted on the twin's positions: perfect; seed 2 on the source's positions, all of which
    # are valid spans of the twin's sentence, but none of which is a twin mention
    env_pred = write(tmp_path / "env_pred.json", [e2e_row("S-1", TWIN_SPANS, BOTH), e2e_row("S-2", SOURCE_SPANS, BOTH)])
    s = score_files(files["gold"], files["pred"], env_gold=files["env_gold"], env_pred=env_pred).scores
    assert s["scores"]["mention_f1"] == 1.0 and s["scores"]["relation_strict_f1"] == 1.0
    seeds = s["env"]["seeds"]
    assert seeds["1"]["mention_f1"] == 1.0 and seeds["1"]["relation_strict_f1"] == 1.0
    assert seeds["2"]["mention_f1"] == 0.0 and seeds["2"]["relation_relaxed_f1"] == 0.0
    assert s["env"]["mean"]["relation_strict_f1"] == pytest.approx(0.5)
    assert s["env"]["fall"]["relation_strict_f1"] == pytest.approx(0.5)
    assert s["env"]["relative_fall"]["relation_strict_f1"] == pytest.approx(0.5)
    # pooled over both copies: 3 of 6 mentions found, 3 predicted right of 6 predicted
    assert s["env"]["pooled"]["mention_f1"] == pytest.approx(0.5)
    # of 2 relations right on the source, both stay right on twin 1 and none on twin 2: 2 of 4
    assert s["env"]["consistency"] == {"original_relations": 2, "original_correct": 4, "still_correct": 2,
                                       "rate": 0.5, "n_twins_without_original": 0}
    table = score_files(files["gold"], files["pred"], env_gold=files["env_gold"], env_pred=env_pred).table()
    assert ("consistency: 50.00% (2 of 4 twin copies of the 2 relations right (strict) on the original documents "
            "are still right on the twin)") in table
    lines = table.splitlines()
    assert lines[0].split() == ["F1", "original", "Env", "all", "Env", "mean", "±", "std", "seed", "1", "seed", "2",
                                "fall"]
    # relation strict: original 100, pooled 50 (2 of 4), mean 50 ± 70.71 (seeds 100 and 0), fall 50
    assert lines[8].split() == ["Relation", "strict", "100.00", "50.00", "50.00", "±", "70.71", "100.00", "0.00",
                                "50.00"]
    assert s["env"]["worst_seed"] == {"seed": 2, "relation_strict_f1": 0.0}


def test_a_source_span_outside_the_twins_sentence_is_an_error(files: dict[str, Path], tmp_path: Path) -> None:
    # (0, 6, 7) is "." on the twin (7 tokens) but outside the source's 6-token sentence
    bad = write(tmp_path / "bad.json", [e2e_row("S", [[0, 6, 7], [0, 2, 3], [0, 4, 5]], [])])
    with pytest.raises(DataError) as exc:
        score_files(files["gold"], bad)
    assert str(exc.value) == (f"{bad}: document 'S' (row 0): entities[0].mentions[0] [0, 6, 7] is outside sentence 0 "
                              "(6 tokens: 0 <= start < end <= 6); or pass --skip-invalid to skip such rows")


def test_consistency_counts_only_relations_right_on_the_original(files: dict[str, Path], tmp_path: Path) -> None:
    pred = write(tmp_path / "p1.json", [e2e_row("S", SOURCE_SPANS, [(0, 2, "P551")])])  # 1 of 2 right
    env_pred = write(tmp_path / "e1.json", [e2e_row("S-1", TWIN_SPANS, BOTH), e2e_row("S-2", TWIN_SPANS, [])])
    s = score_files(files["gold"], pred, env_gold=files["env_gold"], env_pred=env_pred).scores
    # twin 1 also finds (1, 2), which the original missed: it does not count; twin 2 finds nothing
    assert s["env"]["consistency"]["original_correct"] == 2 and s["env"]["consistency"]["still_correct"] == 1


def test_env_gold_needs_env_pred_and_seed_titles(files: dict[str, Path]) -> None:
    with pytest.raises(DataError) as exc:
        score_files(files["gold"], files["pred"], env_gold=files["env_gold"])
    assert str(exc.value) == "--env-gold needs --env-pred: the Env copies are scored from their own gold file and predictions"
    with pytest.raises(DataError) as exc:
        score_files(files["gold"], files["pred"], env_gold=files["gold"], env_pred=files["pred"])
    assert str(exc.value) == (f"{files['gold']}: --env-gold needs a seed suffix -k on every title (for example "
                              "'Loud Tour-1'), but 'S' has none; pass as --env-gold the Env file `envbench generate` "
                              "wrote, whole")
    uneven = write(files["gold"].parent / "uneven.json", [twin(1), twin(2), twin(1) | {"title": "T-2"}])
    with pytest.raises(DataError) as exc:
        score_files(files["gold"], files["pred"], env_gold=uneven, env_pred=files["pred"])
    assert str(exc.value) == (f"{uneven}: --env-gold needs the same seeds for every source document, but 'T' has "
                              "seed -2 where 'S' has -1, -2; pass as --env-gold the Env file `envbench generate` wrote, "
                              "whole")


def test_out_writes_scores_and_manifest(files: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "scores.json"
    res = evaluate_end_to_end(files["gold"], files["pred"], out=out)
    scores = json.loads(out.read_text())["scores"]
    # every entity is a singleton: B3 and CEAF-e are perfect, MUC has no link to count and is 0, as 0/0 is
    assert (scores["b3_f1"], scores["ceafe_f1"], scores["muc_f1"]) == (1.0, 1.0, 0.0)
    assert scores["coref_f1"] == pytest.approx(2 / 3)
    assert (tmp_path / "scores.json.manifest.json").is_file() and res.out == out


def test_an_env_gold_alone_is_scored_per_seed(files: dict[str, Path], tmp_path: Path) -> None:
    env_pred = write(tmp_path / "env_pred.json", [e2e_row("S-1", TWIN_SPANS, BOTH)])
    res = score_files(files["env_gold"], env_pred)
    assert res.scores["seeds"]["mean"]["mention_f1"] == pytest.approx(0.5)
    assert res.warnings == [f"1 of the 2 documents of the gold file have no row in {env_pred}; they count as "
                            "predicting nothing"]
    assert res.table().splitlines()[0].split() == ["F1", "all", "mean", "±", "std", "seed", "1", "seed", "2"]


def test_one_env_seed_prints_its_mean_without_a_spread(files: dict[str, Path], tmp_path: Path) -> None:
    """One renaming seed has no spread: the table prints its mean alone, never "± 0.00"."""
    one = write(tmp_path / "one_env.json", [twin(1)])
    env_pred = write(tmp_path / "env_pred.json", [e2e_row("S-1", TWIN_SPANS, BOTH)])
    table = score_files(files["gold"], files["pred"], env_gold=one, env_pred=env_pred).table()
    lines = table.splitlines()
    assert lines[0].split() == ["F1", "original", "Env", "all", "Env", "mean", "seed", "1", "fall"]
    assert "±" not in table
    assert lines[1].split()[:3] == ["Mention", "100.00", "100.00"]
    # and --out holds no spread for it: null, not 0.0
    s = score_files(files["gold"], files["pred"], env_gold=one, env_pred=env_pred).scores
    assert s["env"]["std"] == {k: None for k in s["env"]["mean"]}
    assert evaluate_end_to_end(one, env_pred).scores["seeds"]["std"]["relation_strict_f1"] is None


def as_jerex(doc: dict) -> dict:
    """A gold document written as JEREX writes a row of predictions.json today (lavis-nlp/jerex at HEAD,
    ``JointEvaluator.store_predictions``): its tokens, every mention once as {start, end} over the whole
    document, one entity per cluster listing its mentions' indices, with its type, and the relations over the
    entities as {head, tail, type}. Written here from that function's output, not copied."""
    starts = [sum(len(s) for s in doc["sents"][:k]) for k in range(len(doc["sents"]))]
    mentions: list[tuple[int, int]] = []
    for ent in doc["vertexSet"]:
        for m in ent:
            span = (starts[m["sent_id"]] + m["pos"][0], starts[m["sent_id"]] + m["pos"][1])
            if span not in mentions:
                mentions.append(span)
    entities = []
    for ent in doc["vertexSet"]:
        spans = {(starts[m["sent_id"]] + m["pos"][0], starts[m["sent_id"]] + m["pos"][1]) for m in ent}
        entities.append({"mentions": [mentions.index(s) for s in sorted(spans)], "type": ent[0]["type"]})
    return {"tokens": [tok for sent in doc["sents"] for tok in sent],
            "mentions": [{"start": a, "end": b} for a, b in mentions],
            "entities": entities,
            "relations": [{"head": lab["h"], "tail": lab["t"], "type": lab["r"]} for lab in doc["labels"]]}


def as_first_jerex(doc: dict) -> dict:
    """The same row in the layout JEREX wrote from April to June 2021: [start, end] mentions, clusters, and
    entities naming their cluster."""
    row = as_jerex(doc)
    return {"mentions": [[m["start"], m["end"]] for m in row["mentions"]],
            "clusters": [e["mentions"] for e in row["entities"]],
            "entities": [{"cluster": i, "type": e["type"]} for i, e in enumerate(row["entities"])],
            "relations": row["relations"]}


F1_KEYS = ("mention_f1", "cluster_f1", "entity_f1", "b3_f1", "ceafe_f1", "relation_strict_f1", "relation_relaxed_f1")


@pytest.mark.parametrize("layout", [as_jerex, as_first_jerex])
def test_gold_written_as_jerex_output_scores_perfect(tmp_path: Path, layout) -> None:
    two = [twin(1), {**twin(2), "sents": [["Hi", "."], *twin(2)["sents"]],
                     "vertexSet": [[{**m, "sent_id": 1} for m in e] for e in twin(2)["vertexSet"]]}]
    gold = write(tmp_path / "env.json", two)
    pred = write(tmp_path / "predictions.json", [layout(d) for d in two])
    res = score_files(gold, pred)
    assert res.scores["format"] == "jerex"
    for key in F1_KEYS:
        assert res.scores["scores"][key] == 1.0, key


def test_re_docred_dev_written_as_jerex_head_output_scores_100(tmp_path: Path) -> None:
    """Issue 60 §4: a predictions.json written exactly as JEREX HEAD writes it had been refused ("row 0: has
    no string title"); the gold of Re-DocRED dev, so written, scores 100 on every metric but MUC's, which
    counts links and is 100 where any entity has two mentions."""
    from tests.conftest import shared_path

    src = shared_path("re-docred", "dev_revised.json")
    docs = json.loads(src.read_text())
    pred = write(tmp_path / "predictions.json", [as_jerex(d) for d in docs])
    res = score_files(src, pred)
    assert res.scores["format"] == "jerex" and res.scores["skipped"] == []
    s = res.scores["scores"]
    assert all(s[k] == 1.0 for k in (*F1_KEYS, "muc_f1", "coref_f1")), {k: s[k] for k in s if k.endswith("_f1")}
    assert s["n_docs"] == s["n_pred_docs"] == len(docs) == 500 and s["n_relation_gold"] > 13_000
    table = res.table().splitlines()
    assert [line.split()[-1] for line in table[1:10]] == ["100.00"] * 9


def test_re_docred_dev_gold_as_predictions_scores_perfect() -> None:
    from envbench.formats.end_to_end import check_end_to_end
    from envbench.scoring.end_to_end import score_documents
    from tests.conftest import shared_path

    docs = json.loads(shared_path("re-docred", "dev_revised.json").read_text())
    rows = [{"title": d["title"],
             "entities": [{"mentions": [[m["sent_id"], *m["pos"]] for m in e], "type": e[0]["type"]}
                          for e in d["vertexSet"]],
             "relations": [{"h": lab["h"], "t": lab["t"], "r": lab["r"]} for lab in d["labels"]]} for d in docs]
    s = score_documents(docs, check_end_to_end(rows, docs).docs)
    assert all(s[k] == 1.0 for k in s if k.endswith("_f1")), {k: s[k] for k in s if k.endswith("_f1")}
    assert s["n_mention_gold"] > 13_000 and s["n_muc_r_den"] > 3_000  # real clusters with links
    # the same rows with every mention's end one token shorter (where it can be) are no longer perfect
    for r in rows:
        for e in r["entities"]:
            e["mentions"] = [[sid, a, b - 1 if b - 1 > a else b] for sid, a, b in e["mentions"]]
    # (a cut span may become a span of another entity: such rows are refused, here skipped)
    checked = check_end_to_end(rows, docs, skip_invalid=True)
    assert 0 < len(checked.skipped) < 20 and all("is also a mention of" in s.problem for s in checked.skipped)
    cut = score_documents(docs, checked.docs)
    assert cut["mention_f1"] < 0.9 and cut["relation_strict_f1"] < 0.9


def gold_rows(docs: list[dict]) -> list[dict]:
    return [{"title": d["title"],
             "entities": [{"mentions": [[m["sent_id"], *m["pos"]] for m in e], "type": e[0]["type"]}
                          for e in d["vertexSet"]],
             "relations": [{"h": lab["h"], "t": lab["t"], "r": lab["r"]} for lab in d.get("labels", [])]}
            for d in docs]


def test_generated_twins_are_scored_on_their_moved_positions(tmp_path: Path) -> None:
    from envbench.formats.docred import read_docs
    from envbench.rename.generate import generate
    from tests.envbench.index_fixture import sample_world

    w = sample_world()
    generate(w.test, w.index, tmp_path / "env", links=w.links, seeds=2, progress=False, allow_training_names=True)
    src = {d["title"]: d for d in read_docs(w.test).docs}
    env = json.loads((tmp_path / "env" / "test_env.json").read_text())

    def spans(d: dict) -> list[list[tuple[int, int, int]]]:
        return [[(m["sent_id"], *m["pos"]) for m in e] for e in d["vertexSet"]]

    moved = [d for d in env if spans(d) != spans(src[d["title"].rsplit("-", 1)[0]])]
    assert moved, "the sample world's renaming moves no mention: this test would prove nothing"
    gold = write(tmp_path / "moved.json", moved)
    own = score_files(gold, write(tmp_path / "own.json", gold_rows(moved))).scores["scores"]
    assert own["mention_f1"] == 1.0 and own["relation_strict_f1"] == 1.0
    # the source documents' spans, given as predictions for the twins, miss the moved mentions
    with_source = [{**d, "vertexSet": src[d["title"].rsplit("-", 1)[0]]["vertexSet"]}
                   for d in moved]
    rows = gold_rows(with_source)
    res = score_files(gold, write(tmp_path / "src.json", rows), skip_invalid=True).scores
    assert res["scores"]["mention_f1"] < 1.0 and res["scores"]["entity_f1"] < 1.0


def test_predicted_entities_sharing_a_mention_are_refused_and_scores_stay_in_0_1(tmp_path: Path) -> None:
    """Issue 56: entities that share mentions made B³ recall 2.67 (the table printed B³ 100.29) and MUC recall
    -5.51. The row is refused, naming the document and the mention; skipped, it predicts nothing."""
    gold = write(tmp_path / "test.json", [source()])
    # every entity holds all three mentions, as the hostile case had it
    every = {"title": "S", "entities": [{"mentions": SOURCE_SPANS, "type": t} for t in ("PER", "PER", "LOC")],
             "relations": []}
    every["entities"][1]["mentions"] = SOURCE_SPANS[:2]
    pred = write(tmp_path / "pred.json", [every])
    with pytest.raises(DataError) as exc:
        score_files(gold, pred)
    assert str(exc.value) == (
        f"{pred}: document 'S' (row 0): entities[1].mentions[0] [0, 0, 1] is also a mention of entities[0], whose "
        "mentions differ; a mention belongs to one entity (MUC and B³ score a partition of the mentions): merge the "
        "two entities, or keep the mention in one; or pass --skip-invalid to skip such rows")
    res = score_files(gold, pred, skip_invalid=True)
    assert res.scores["scores"]["b3_recall"] == 0.0 and len(res.scores["skipped"]) == 1


def test_a_gold_mention_in_two_entities_counts_once_with_a_warning(tmp_path: Path) -> None:
    # DocRED-HWE's dev has one such document ('TMF (UK & Ireland)'): scored, never outside [0, 1]
    doc = source()
    doc["vertexSet"][1] = [mention("Bob", 0, 2, 3, "PER"), mention("Ann", 0, 0, 1, "PER")]
    gold = write(tmp_path / "test.json", [doc])
    row = {"title": "S", "entities": [{"mentions": [[0, 0, 1], [0, 2, 3]], "type": "PER"},
                                      {"mentions": [[0, 4, 5]], "type": "LOC"}], "relations": []}
    res = score_files(gold, write(tmp_path / "pred.json", [row]))
    assert res.warnings == [f"1 gold document of {gold} puts a mention in two entities whose mentions differ (the "
                            "first: 'S': mention [0, 0, 1] in vertexSet[0] and vertexSet[1]); MUC, B³ and CEAF-e "
                            "count such a mention in the first of them only"]
    s = res.scores["scores"]
    # the gold partition is {Ann}, {Bob}, {Rome}: the predicted {Ann, Bob} links what the key does not
    assert (s["muc_recall"], s["muc_precision"]) == (0.0, 0.0)
    assert s["b3_recall"] == 1.0 and s["b3_precision"] == pytest.approx((2 * 0.5 + 1) / 3)
    assert all(0 <= v <= 1 for k, v in s.items() if k.endswith(("_f1", "_precision", "_recall")))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.lists(st.sampled_from(SOURCE_SPANS + TWIN_SPANS[1:]), min_size=1, max_size=4),
                          st.sampled_from(["PER", "LOC"])), max_size=5))
def test_whatever_rows_are_read_every_fraction_is_in_0_1(entities: list) -> None:
    from envbench.formats.end_to_end import check_end_to_end
    from envbench.scoring.end_to_end import score_documents

    gold = source()
    gold["sents"][0] = gold["sents"][0] + ["x"]  # room for the spans of the twin
    row = {"title": "S", "entities": [{"mentions": m, "type": t} for m, t in entities], "relations": []}
    checked = check_end_to_end([row], [gold], skip_invalid=True)
    s = score_documents([gold], checked.docs)
    assert all(0 <= v <= 1 for k, v in s.items() if k.endswith(("_f1", "_precision", "_recall"))), s
