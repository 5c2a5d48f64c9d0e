"""envbench.scoring.evaluate: file-level scoring, Env per-seed breakdown and the name-independent Ign F1."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from envbench.core.errors import DataError
from envbench.core.notes import Level, NoteCode
from envbench.formats.substitutions import read_substitutions
from envbench.scoring.evaluate import env_seeds, evaluate, original_names, split_seed
from envbench.scoring.metrics import SCORE_KEYS, score
from tests.conftest import shared_path
from tests.envbench.scoring.test_metrics import mention, tiny_doc

SUB_SCHEMA = pa.schema([
    ("title", pa.string()), ("source_title", pa.string()), ("seed", pa.int32()), ("entity", pa.int32()),
    ("coarse_type", pa.string()), ("kind", pa.string()), ("reason", pa.string()), ("qid", pa.string()),
    ("fine_type", pa.string()), ("new_qid", pa.string()), ("old_names", pa.list_(pa.string())),
    ("new_names", pa.list_(pa.string())),
])


def sub_row(title: str, source: str, seed: int, entity: int, old: list[str], new: list[str], *,
            coarse: str = "PER", kind: str = "linked", qid: str | None = None, new_qid: str | None = None) -> dict:
    return {"title": title, "source_title": source, "seed": seed, "entity": entity, "coarse_type": coarse,
            "kind": kind, "reason": None if kind != "kept" else "unlinked", "qid": qid, "fine_type": None,
            "new_qid": new_qid, "old_names": old, "new_names": new}


def write_subs(path: Path, rows: list[dict]) -> Path:
    pq.write_table(pa.Table.from_pylist(rows, schema=SUB_SCHEMA), path)
    return path


def renamed(doc: dict, seed: int, names: dict[str, str]) -> dict:
    out = copy.deepcopy(doc)
    out["title"] = f"{doc['title']}-{seed}"
    for ent in out["vertexSet"]:
        for m in ent:
            m["name"] = names.get(m["name"], m["name"])
    return out


def write(path: Path, obj: object) -> Path:
    path.write_text(json.dumps(obj))
    return path


TRAIN = [{"title": "T", "sents": [["Ann", "Paris"]],
          "vertexSet": [[mention("Ann", 0, (0, 1))], [mention("Paris", 0, (1, 2), "LOC")]],
          "labels": [{"h": 0, "t": 1, "r": "P19", "evidence": [0]}]}]


@pytest.fixture
def tiny_env(tmp_path: Path) -> dict[str, Path]:
    """One source document, two seeds; entity 0 (Ann/Annie) renamed differently in each."""
    src = tiny_doc()
    s1 = renamed(src, 1, {"Ann": "Bea", "Annie": "Beatrice"})
    s2 = renamed(src, 2, {"Ann": "Cid", "Annie": "Cidney"})
    env_dir = tmp_path / "env"
    env_dir.mkdir()
    write_subs(env_dir / "substitutions.parquet", [
        sub_row("Tiny-1", "Tiny", 1, 0, ["Ann", "Annie"], ["Bea", "Beatrice"]),
        sub_row("Tiny-1", "Tiny", 1, 1, ["Paris"], ["Paris"], coarse="LOC", kind="kept"),
        sub_row("Tiny-2", "Tiny", 2, 0, ["Ann", "Annie"], ["Cid", "Cidney"]),
    ])
    preds = [
        {"title": "Tiny-1", "h_idx": 0, "t_idx": 1, "r": "P19"},  # correct, (Ann, Paris, P19) in train
        {"title": "Tiny-1", "h_idx": 2, "t_idx": 1, "r": "P17"},  # wrong
        {"title": "Tiny-2", "h_idx": 0, "t_idx": 1, "r": "P19"},  # correct, in train by original names
        {"title": "Tiny-2", "h_idx": 1, "t_idx": 2, "r": "P17"},  # correct
    ]
    return {
        "gold": write(env_dir / "test_env.json", [s1, s2]),
        "pred": write(tmp_path / "pred.json", preds),
        "train": write(tmp_path / "train.json", TRAIN),
        "subs": env_dir / "substitutions.parquet",
    }


def test_split_seed_and_env_detection() -> None:
    assert split_seed("Loud Tour-3") == ("Loud Tour", 3)
    assert split_seed("Apollo-11-2") == ("Apollo-11", 2)
    assert split_seed("Loud Tour") is None and split_seed("X-0") is None and split_seed("X-01") is None
    # a title is matched whole: a newline inside it, or after its suffix, is part of it
    assert split_seed("line1\nline2-1") == ("line1\nline2", 1) and split_seed("X-1\n") is None
    docs = lambda *ts: [{"title": t} for t in ts]  # noqa: E731
    assert env_seeds(docs("A-1", "A-2", "B-1", "B-2")) == [1, 2]
    assert env_seeds(docs("A-1", "B-2")) is None  # seeds differ per source: titles merely end in digits
    assert env_seeds(docs("A-1", "B")) is None
    assert env_seeds(docs()) is None
    # detection needs every source once per seed 1..K; a declared Env file (--env) any one set of seeds
    assert env_seeds(docs("Su-27")) is None and env_seeds(docs("Su-27"), consecutive=False) == [27]
    assert env_seeds(docs("A-1", "A-3", "B-1", "B-3")) is None
    assert env_seeds(docs("A-1", "A-3", "B-1", "B-3"), consecutive=False) == [1, 3]
    assert env_seeds(docs("A-1", "A-2", "B-1")) is None and env_seeds(docs("A-1", "A-2", "B-1"), consecutive=False) is None
    assert env_seeds(docs("X-1")) == [1]  # --seeds 1 writes exactly this


def test_original_names_map_back_pairwise(tiny_env: dict[str, Path]) -> None:
    gold = json.loads(tiny_env["gold"].read_text())
    subs = read_substitutions(tiny_env["subs"])
    assert subs["Tiny-1"][0] == {"Bea": "Ann", "Beatrice": "Annie"}
    names, cover = original_names(gold, subs)
    assert names["Tiny-1"] == [["Ann", "Annie"], ["Paris"], ["France"]]
    assert names["Tiny-2"][0] == ["Ann", "Annie"]
    assert cover == {"titles": 2, "unmapped": 0}
    # a mention that opens a sentence carries its new name with a capital ("de Glendonwyn" -> "De Glendonwyn"),
    # and one that renaming wrote "the" into carries it: both map back; a stranger's name does not
    doc = {"title": "T-1", "vertexSet": [[{"name": "De Glendonwyn"}, {"name": "de Glendonwyn"}],
                                         [{"name": "the Bahamas"}], [{"name": "Oslo"}]]}
    names, cover = original_names([doc], {"T-1": {0: {"de Glendonwyn": "Michá"}, 1: {"Bahamas": "Kuwait"},
                                                  2: {"Rome": "Paris"}}})
    assert names["T-1"] == [["Michá", "Michá"], ["Kuwait"], ["Oslo"]] and cover == {"titles": 1, "unmapped": 1}


def test_tiny_env_per_seed_mean_std_worst_and_name_independent_ign(tiny_env: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "scores.json"
    r = evaluate(tiny_env["gold"], tiny_env["pred"], train=[tiny_env["train"]], out=out)
    s = json.loads(out.read_bytes())
    assert s == json.loads(json.dumps(r.scores))
    # pooled: 4 submitted, 3 correct, 6 gold
    assert s["precision"] == pytest.approx(0.75) and s["recall"] == pytest.approx(0.5) and s["f1"] == pytest.approx(0.6)
    # the renamed names never occur in training, so the official Ign F1 equals F1 ...
    assert s["ign_f1"] == pytest.approx(0.6) and s["n_correct_in_train"] == 0
    # ... but on original names two correct facts are (Ann, Paris, P19): ign P = 1/2, R = 1/2
    assert s["name_independent_ign_f1"] == pytest.approx(0.5)
    env = s["env"]
    seed1, seed2 = env["seeds"]["1"], env["seeds"]["2"]
    assert seed1["f1"] == pytest.approx(0.4) and seed2["f1"] == pytest.approx(0.8)
    assert seed1["name_independent_ign_f1"] == pytest.approx(0.0)  # (1 - 1) / (2 - 1)
    assert seed2["name_independent_ign_f1"] == pytest.approx(0.8)  # (2 - 1) / (2 - 1) = 1, R 2/3
    assert env["mean"]["f1"] == pytest.approx(0.6)
    assert env["std"]["f1"] == pytest.approx(math.sqrt(0.08))  # sample std of 0.4 and 0.8
    assert env["mean"]["name_independent_ign_f1"] == pytest.approx(0.4)
    assert env["worst_seed"]["seed"] == 1 and env["worst_seed"]["f1"] == pytest.approx(0.4)
    assert env["substitutions"] == str(tiny_env["subs"])
    for k in SCORE_KEYS:
        assert 0.0 <= s[k] <= 1.0
    assert r.warnings == []
    assert any("name-independent Ign F1 maps renamed mentions back" in n for n in r.notes)
    table = r.table()
    assert "mean ± std" in table and "seed 2" in table and "worst seed: 1 (F1 40.00)" in table
    assert "Ign F1 (name-indep.)" in table and "60.00 ± 28.28" in table


def test_a_single_seed_prints_no_spread(tiny_env: dict[str, Path], tmp_path: Path) -> None:
    # regression (issue 33): one seed printed "mean ± std 0.00 ± 0.00", a spread never measured
    gold = json.loads(tiny_env["gold"].read_text())[:1]
    preds = [p for p in json.loads(tiny_env["pred"].read_text()) if p["title"] == "Tiny-1"]
    r = evaluate(write(tmp_path / "g.json", gold), write(tmp_path / "p.json", preds), env=True)
    assert list(r.scores["env"]["seeds"]) == ["1"]
    table = r.table()
    assert "±" not in table
    header, f1 = table.splitlines()[0].split(), next(x for x in table.splitlines() if x.startswith("F1 "))
    assert header == ["all", "mean", "seed", "1"] and f1.split() == ["F1", "40.00", "40.00", "40.00"]


def test_a_single_seed_has_no_std_in_scores_json(tiny_env: dict[str, Path], tmp_path: Path) -> None:
    # one seed has no spread: scores.json said "std": 0.0 for every score, a spread never measured
    gold = json.loads(tiny_env["gold"].read_text())[:1]
    preds = [p for p in json.loads(tiny_env["pred"].read_text()) if p["title"] == "Tiny-1"]
    out = tmp_path / "scores.json"
    r = evaluate(write(tmp_path / "g.json", gold), write(tmp_path / "p.json", preds), env=True, out=out)
    env = json.loads(out.read_bytes())["env"]
    assert env["std"] == {k: None for k in env["mean"]} and len(env["std"]) == len(SCORE_KEYS)
    assert env["mean"]["f1"] == pytest.approx(0.4) and r.scores["env"]["std"]["f1"] is None
    assert "±" not in r.table()


def test_env_without_train_or_substitutions_says_why(tiny_env: dict[str, Path], tmp_path: Path) -> None:
    r = evaluate(tiny_env["gold"], tiny_env["pred"])
    assert "name_independent_ign_f1" not in r.scores
    assert [n.code for n in r.messages] == [NoteCode.NO_TRAIN, NoteCode.NAME_INDEPENDENT_NEEDS_TRAIN]
    assert r.scores["notes"] == r.notes and r.scores["warnings"] == r.warnings == []
    assert r.notes[0].startswith("Ign F1 equals F1: no training documents were given (--train)")
    assert "no name-independent Ign F1: it needs training documents (--train)" in r.notes
    elsewhere = write(tmp_path / "env_copy.json", json.loads(tiny_env["gold"].read_text()))
    r2 = evaluate(elsewhere, tiny_env["pred"], train=[tiny_env["train"]])
    assert (f"no name-independent Ign F1: no substitutions.parquet beside {elsewhere}; "
            "pass --substitutions FILE from `envbench generate`") in r2.notes
    r3 = evaluate(elsewhere, tiny_env["pred"], train=[tiny_env["train"]], substitutions=tiny_env["subs"])
    assert r3.scores["name_independent_ign_f1"] == pytest.approx(0.5)


def test_substitutions_for_other_titles_is_an_error(tiny_env: dict[str, Path], tmp_path: Path) -> None:
    other = write_subs(tmp_path / "other.parquet", [sub_row("Else-1", "Else", 1, 0, ["A"], ["B"])])
    with pytest.raises(DataError) as err:
        evaluate(tiny_env["gold"], tiny_env["pred"], train=[tiny_env["train"]], substitutions=other)
    assert str(err.value) == (f"{other} covers none of the titles in {tiny_env['gold']}; pass the "
                              "substitutions.parquet written together with this Env gold file")


def test_unmapped_mentions_and_partial_cover_warn(tiny_env: dict[str, Path], tmp_path: Path) -> None:
    sub = write_subs(tmp_path / "partial.parquet", [sub_row("Tiny-1", "Tiny", 1, 0, ["Ann"], ["Bea"])])
    r = evaluate(tiny_env["gold"], tiny_env["pred"], train=[tiny_env["train"]], substitutions=sub)
    assert r.warnings == [
        f"{sub} covers 1 of 2 gold documents; the others keep their names for the name-independent Ign F1",
        f"1 mentions of renamed entities carry none of the entity's new names in {sub}; they keep their "
        "names (is it the file for this gold?)",
    ]


def test_forcing_env_on_plain_titles_is_an_error(tmp_path: Path) -> None:
    gold = write(tmp_path / "g.json", [tiny_doc()])
    pred = write(tmp_path / "p.json", [])
    fix = "pass the Env file `envbench generate` wrote, whole, or leave out --env to score it as a plain benchmark"
    with pytest.raises(DataError) as e:
        evaluate(gold, pred, env=True)
    assert str(e.value) == (f"{gold}: --env needs a seed suffix -k on every title (for example 'Loud Tour-1'), but "
                            f"'Tiny' has none; {fix}")
    assert "env" not in evaluate(gold, pred).scores
    # the document at fault is named: a title without a suffix, or a source whose seeds are not the others'
    cases = {
        ("A-1", "A-2", "B-1", "B-2", "C"): "a seed suffix -k on every title (for example 'Loud Tour-1'), but 'C' has none",
        ("A-1", "A-2", "B-1", "C-1", "C-2"): "the same seeds for every source document, but 'B' has seed -1 where 2 "
                                             "other source documents have -1, -2 (e.g. 'A', 'C')",
        ("A-1", "A-2", "B-1", "B-3"): "the same seeds for every source document, but 'B' has seeds -1, -3 where 'A' "
                                      "has -1, -2",
        ("A-1", "B-2"): "the same seeds for every source document, but 'B' has seed -2 where 'A' has -1",
        # as many sources one way as the other: the first source's seeds are the others'
        ("A-1", "A-2", "B-1", "B-2", "C-1", "D-1"): "the same seeds for every source document, but 'C' has seed -1 "
                                                     "where 2 other source documents have -1, -2 (e.g. 'A', 'B')",
    }
    for names, why in cases.items():
        g = write(tmp_path / "g2.json", [{**tiny_doc(), "title": t} for t in names])
        with pytest.raises(DataError) as e:
            evaluate(g, pred, env=True)
        assert str(e.value) == f"{g}: --env needs {why}; {fix}"


def test_unknown_titles_warn_with_count_and_examples(tmp_path: Path) -> None:
    gold = write(tmp_path / "g.json", [tiny_doc()])
    pred = write(tmp_path / "p.json", [{"title": "Tiny", "h_idx": 0, "t_idx": 1, "r": "P19"},
                                       {"title": "Zed", "h_idx": 0, "t_idx": 1, "r": "P19"},
                                       {"title": "Abc", "h_idx": 0, "t_idx": 1, "r": "P19"}])
    r = evaluate(gold, pred)
    assert r.warnings == [f"2 predictions name 2 titles that are not in {gold} (e.g. 'Abc', 'Zed'); they count "
                          "against precision, as in the official scorer; check that --pred was made for this --gold"]
    assert [n.code for n in r.messages if n.level is Level.WARNING] == [NoteCode.UNKNOWN_TITLES]
    assert r.scores["precision"] == pytest.approx(1 / 3)


def test_predictions_on_titles_of_no_seed_lower_the_pooled_score_only_and_say_so(tiny_env: dict[str, Path],
                                                                                  tmp_path: Path) -> None:
    """Each seed's copy is scored with the predictions whose title carries that seed, the pooled score with
    all: a title of no seed of the file ('Tiny', 'Tiny-9') lowered 'all' and no seed, and the warning said
    only "they count against precision", so 'all' and 'mean' differed without a word."""
    strays = [{"title": t, "h_idx": 0, "t_idx": 1, "r": "P19"} for t in ("Tiny", "Tiny-9", "Other-1")]
    pred = write(tmp_path / "p.json", json.loads(tiny_env["pred"].read_text()) + strays)
    base, r = evaluate(tiny_env["gold"], tiny_env["pred"]).scores, evaluate(tiny_env["gold"], pred)
    seeds = r.scores["env"]["seeds"]
    assert r.scores["n_pred"] == base["n_pred"] + 3  # pooled: every stray counts against precision
    assert seeds["1"]["n_pred"] == base["env"]["seeds"]["1"]["n_pred"] + 1  # 'Other-1' carries seed 1
    assert seeds["2"]["n_pred"] == base["env"]["seeds"]["2"]["n_pred"]
    assert r.scores["env"]["n_preds_without_seed"] == 2 and base["env"]["n_preds_without_seed"] == 0
    gold = tiny_env["gold"]
    assert r.warnings[:2] == [
        f"3 predictions name 3 titles that are not in {gold} (e.g. 'Other-1', 'Tiny', 'Tiny-9'); they count against "
        "precision, as in the official scorer; check that --pred was made for this --gold",
        f"2 of them name a title with no seed of {gold} (seeds -1, -2; e.g. 'Tiny', 'Tiny-9'): they count against "
        "the pooled precision ('all') but against no seed's, so the mean over seeds leaves them out",
    ]
    assert [n.code for n in r.messages][:2] == [NoteCode.UNKNOWN_TITLES, NoteCode.ENV_PREDS_WITHOUT_SEED]
    assert evaluate(tiny_env["gold"], pred, env=False).warnings[0].startswith("3 predictions name 3 titles")
    assert not any("no seed" in w for w in evaluate(tiny_env["gold"], pred, env=False).warnings)


def test_prediction_file_must_be_a_list(tmp_path: Path) -> None:
    gold = write(tmp_path / "g.json", [tiny_doc()])
    pred = write(tmp_path / "p.json", {"title": "Tiny"})
    with pytest.raises(DataError) as err:
        evaluate(gold, pred)
    assert str(err.value).startswith(f"{pred}: expected a JSON list of predictions, got an object")


def test_real_test_set_replicated_as_env(tmp_path: Path) -> None:
    """Re-DocRED test x 3 unrenamed copies, gold-derived predictions with noise: every seed equals the original."""
    test = json.loads(shared_path("re-docred", "test_revised.json").read_bytes())[:120]
    dev = json.loads(shared_path("re-docred", "dev_revised.json").read_bytes())
    preds = [{"title": d["title"], "h_idx": lab["h"], "t_idx": lab["t"], "r": lab["r"]}
             for d in test for i, lab in enumerate(d["labels"]) if i % 3]
    preds += [{"title": d["title"], "h_idx": 0, "t_idx": 1, "r": "P17"} for d in test]
    env = [copy.deepcopy(d) | {"title": f"{d['title']}-{k}"} for d in test for k in (1, 2, 3)]
    env_preds = [p | {"title": f"{p['title']}-{k}"} for p in preds for k in (1, 2, 3)]
    orig = score(test, preds, dev)
    r = evaluate(write(tmp_path / "env.json", env), write(tmp_path / "ep.json", env_preds),
                 train=[write(tmp_path / "train.json", dev)])
    for k in SCORE_KEYS:
        assert r.scores[k] == pytest.approx(orig[k])
        assert r.scores["env"]["mean"][k] == pytest.approx(orig[k])
        assert r.scores["env"]["std"][k] == pytest.approx(0.0, abs=1e-12)
    assert r.scores["n_gold"] == 3 * orig["n_gold"]


# --------------------------------------------------------------------------- which gold documents are scored
def titled(title: str) -> dict:
    doc = tiny_doc()
    doc["title"] = title
    return doc


def write_covers(pred: Path, titles: list[str], failed: list[str]) -> Path:
    """The manifest `envbench icl parse` writes beside its predictions (only the parts evaluate reads)."""
    from etl.io import sha256_file

    manifest = pred.with_name(pred.name + ".manifest.json")
    write(manifest, {"step": "icl-parse", "outputs": [{"name": pred.name, "sha256": sha256_file(pred)}],
                     "covers": {"titles": titles, "failed_titles": failed}})
    return manifest


def test_gold_without_predictions_warns_and_only_predicted_scores_the_rest(tmp_path: Path) -> None:
    gold = write(tmp_path / "g.json", [titled("A"), titled("B"), titled("C"), titled("D"), titled("E")])
    pred = write(tmp_path / "p.json", [{"title": "A", "h_idx": 0, "t_idx": 1, "r": "P19"},
                                       {"title": "C", "h_idx": 1, "t_idx": 2, "r": "P17"}])
    r = evaluate(gold, pred)
    assert r.warnings == [f"gold documents without any prediction in {pred}: 3 of 5 (e.g. 'B', 'D', 'E'); each is "
                          "scored with all its gold facts missed, which lowers recall; if the predictions are for a "
                          "subset, pass --only-predicted to score only the predicted documents"]
    assert [n.code for n in r.messages if n.level is Level.WARNING] == [NoteCode.GOLD_WITHOUT_PREDICTIONS]
    assert (r.scores["n_docs"], r.scores["n_gold"], r.scores["recall"]) == (5, 15, pytest.approx(2 / 15))
    assert r.scores["coverage"] == {"gold_documents": 5, "with_predictions": 2, "covered_without_predictions": 0,
                                    "without_prediction": 3, "covers": None, "only_predicted": False,
                                    "scored_documents": 5}
    sub = evaluate(gold, pred, only_predicted=True)
    assert sub.warnings == []
    assert (f"--only-predicted: scored 2 of 5 gold documents, those with at least one prediction; no manifest from "
            f"`envbench icl parse` beside {pred} says which documents were asked, so a document answered with "
            "nothing is left out too (recall reads high by as much)") in sub.notes
    assert (sub.scores["n_docs"], sub.scores["n_gold"], sub.scores["recall"]) == (2, 6, pytest.approx(2 / 6))
    assert sub.scores["precision"] == r.scores["precision"] == 1.0
    assert sub.scores["coverage"]["scored_documents"] == 2 and sub.scores["coverage"]["only_predicted"]
    # the same subset written out as its own gold file scores the same
    alone = write(tmp_path / "ac.json", [titled("A"), titled("C")])
    assert {k: sub.scores[k] for k in SCORE_KEYS} == {k: evaluate(alone, pred).scores[k] for k in SCORE_KEYS}


def test_a_covered_document_without_predictions_still_counts(tmp_path: Path) -> None:
    gold = write(tmp_path / "g.json", [titled("A"), titled("B"), titled("C")])
    pred = write(tmp_path / "p.json", [{"title": "A", "h_idx": 0, "t_idx": 1, "r": "P19"}])
    manifest = write_covers(pred, ["A", "B"], ["B"])  # B was asked, and its request failed
    r = evaluate(gold, pred)
    # only C was never asked about: B is covered, and scored with its facts missed
    assert r.warnings == [f"gold documents without any prediction in {pred}: 1 of 3 (e.g. 'C'); each is scored "
                          "with all its gold facts missed, which lowers recall; if the predictions are for a "
                          "subset, pass --only-predicted to score only the predicted documents"]
    sub = evaluate(gold, pred, only_predicted=True, out=tmp_path / "scores.json")
    assert sub.warnings == []
    assert (f"--only-predicted: scored 2 of 3 gold documents, those {manifest} says the predictions cover (1 of "
            "them without predictions, their gold facts counted as missed) and those with a prediction") in sub.notes
    assert (sub.scores["n_docs"], sub.scores["n_gold"], sub.scores["recall"]) == (2, 6, pytest.approx(1 / 6))
    assert sub.scores["coverage"]["covers"] == str(manifest)
    written = json.loads((tmp_path / "scores.json.manifest.json").read_text())
    assert written["parameters"]["only_predicted"] is True
    assert manifest.name in [i["name"] for i in written["inputs"]]  # the covers decide what was scored
    # a prediction file replaced after `icl parse` no longer matches its manifest: the list is not trusted
    write(pred, [{"title": "A", "h_idx": 0, "t_idx": 1, "r": "P19"}, {"title": "A", "h_idx": 0, "t_idx": 2, "r": "P27"}])
    stale = evaluate(gold, pred, only_predicted=True)
    assert stale.warnings == [f"{manifest} does not describe {pred} (the file's sha256 differs from the one it "
                              "records), so the documents it lists as covered are not used; rerun `envbench icl "
                              "parse` to write both again"]
    assert stale.scores["n_docs"] == 1 and stale.scores["coverage"]["covers"] is None


def test_only_predicted_on_an_env_file_keeps_per_seed_scores_when_the_subset_is_even(tmp_path: Path) -> None:
    docs = [titled(t) for t in ("X-1", "X-2", "Y-1", "Y-2")]
    gold = write(tmp_path / "env.json", docs)

    def pred_for(*titles: str) -> Path:
        return write(tmp_path / "p.json", [{"title": t, "h_idx": 0, "t_idx": 1, "r": "P19"} for t in titles])

    even = evaluate(gold, pred_for("X-1", "Y-1"), only_predicted=True)
    assert list(even.scores["env"]["seeds"]) == ["1"] and even.scores["n_docs"] == 2
    uneven = evaluate(gold, pred_for("X-1", "X-2", "Y-1"), only_predicted=True)
    assert "env" not in uneven.scores and uneven.scores["n_docs"] == 3
    assert [n.code for n in uneven.messages if n.code is NoteCode.ENV_SUBSET_UNEVEN] == [NoteCode.ENV_SUBSET_UNEVEN]
    # without --only-predicted the whole Env file is scored, its twins counted one by one
    full = evaluate(gold, pred_for("X-1", "X-2", "Y-1"))
    assert list(full.scores["env"]["seeds"]) == ["1", "2"]
    assert full.warnings[0].startswith(f"gold documents without any prediction in {tmp_path / 'p.json'}: 1 of 4 "
                                       "(e.g. 'Y-2')")


def test_only_predicted_with_no_prediction_is_an_error(tmp_path: Path) -> None:
    gold = write(tmp_path / "g.json", [titled("A")])
    pred = write(tmp_path / "p.json", [{"title": "Nope", "h_idx": 0, "t_idx": 1, "r": "P19"}])
    with pytest.raises(DataError) as err:
        evaluate(gold, pred, only_predicted=True)
    assert str(err.value) == (f"--only-predicted: the only document of {gold} has no prediction in {pred}; "
                              "check that --pred was made for this --gold")
    gold2 = write(tmp_path / "g2.json", [titled("A"), titled("B")])
    with pytest.raises(DataError, match=r"^--only-predicted: none of the 2 documents of .*g2\.json has a prediction "
                                        r"in .*p\.json; check that --pred was made for this --gold$"):
        evaluate(gold2, pred, only_predicted=True)
