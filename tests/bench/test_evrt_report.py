"""bench/evrt.py report: intervals from `envbench compare`, claims within them, one code version, publishing."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import bench_script

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def evrt():
    return bench_script("evrt")


def _doc(title: str) -> dict[str, Any]:
    """Three entities in one sentence, two gold facts (0 -> 1, 0 -> 2)."""
    return {"title": title, "sents": [["a", "b", "c", "."]],
            "vertexSet": [[{"name": n, "sent_id": 0, "pos": [i, i + 1], "type": "LOC"}] for i, n in enumerate("ABC")],
            "labels": [{"h": 0, "t": t, "r": "P17", "evidence": [0]} for t in (1, 2)]}


def _preds(titles: list[str], facts: int) -> list[dict[str, Any]]:
    return [{"title": t, "h_idx": 0, "t_idx": i, "r": "P17"} for t in titles for i in range(1, 1 + facts)]


def _experiment(root: Path, found: dict[str, tuple[int, int]], seeds: tuple[str, ...] = ("42", "43")) -> Path:
    """An experiment folder as the recipe leaves it before `report`: the data, the name check, the runs
    (``found[variant]``: facts found per document on test and on each Env copy) and their step manifests."""
    out = root / "exp"
    titles = [f"D{i}" for i in range(8)]
    (out / "data").mkdir(parents=True)
    (out / "env").mkdir()
    (out / "steps").mkdir()
    (out / "data" / "train.json").write_text(json.dumps([_doc("T")]))
    (out / "data" / "test.json").write_text(json.dumps([_doc(t) for t in titles]))
    env_titles = [f"{t}-{k}" for t in titles for k in (1, 2)]
    (out / "data" / "env.json").write_text(json.dumps([_doc(t) for t in env_titles]))
    (out / "env" / "overlap.json").write_text(json.dumps({"ok": True, "rows": [
        {"key": "twins_in_test", "left": "new names of the twins", "right": "test mention names", "shared": 0,
         "of": 9, "mentions": 0, "examples": []}]}))
    code = {"fingerprint": "f" * 64, "commit": "c" * 40, "dirty": False}
    for variant, (on_test, on_env) in found.items():
        for seed in seeds:
            run = out / f"{variant}-s{seed}"
            run.mkdir()
            (run / "pred-test.json").write_text(json.dumps(_preds(titles, on_test)))
            (run / "pred-env.json").write_text(json.dumps(_preds(env_titles, on_env)))
            (run / "config.json").write_text(json.dumps({"seed": int(seed)}))
            (run / "train.log").write_text("step 1 epoch 0 loss 1.0 2.0s\nstep 2 epoch 0 loss 0.9 2.0s\n")
            for step in (f"train-{variant}-{seed}", *(f"predict-{variant}-{seed}-{k}" for k in ("test", "env"))):
                (out / "steps" / f"{step}.json").write_text(json.dumps({"step": step, "inputs": {}, "code": code}))
    return out


def _report(evrt, out: Path, *extra: str, seeds: tuple[str, ...] = ("42", "43")) -> dict[str, Any]:
    evrt.main(["report", "--out", str(out), "--seeds", *seeds, "--samples", "200", *extra])
    return json.loads((out / "results.json").read_text())


def test_identical_arms_report_no_measurable_cost(evrt, tmp_path: Path, capsys) -> None:
    out = _experiment(tmp_path, {"vanilla": (1, 0), "evrt": (1, 0)})
    res = _report(evrt, out, "--publish", str(tmp_path / "pub"))
    cmp = res["comparison"]
    assert cmp["seeds"] == ["42", "43"] and cmp["paired_runs"] is True and cmp["documents"] == 8
    assert cmp["difference_b_minus_a"]["test_f1"] == {"estimate": 0.0, "low": 0.0, "high": 0.0, "level": 0.95}
    assert res["claims"][:2] == [
        "No measurable cost on test F1: EVRT minus vanilla +0.00 (95% CI [+0.00, +0.00]).",
        "Target (cost at most 1.5): met, the interval allows at most 0.00."]
    assert "No measurable change in the F1 fall: +0.00 (95% CI [+0.00, +0.00])." in res["claims"]
    md = (out / "results.md").read_text()
    assert "- No measurable cost on test F1: EVRT minus vanilla +0.00 (95% CI [+0.00, +0.00])." in md
    assert "Every run at one code version: commit " + "c" * 40 in md
    assert f"python bench/evrt.py run split kb index env-test twins overlap test-sets --var out={out} " \
           "--var test_docs=8\n" in md
    assert f"envbench compare --gold {out}/data/test.json --env-gold {out}/data/env.json \\" in md
    assert "    --a-test $RESULTS/predictions/vanilla-s42/pred-test.json.gz \\" in md
    # published: the predictions compressed with fixed bytes, the results, the name check
    pub = tmp_path / "pub"
    gz = pub / "predictions" / "evrt-s43" / "pred-env.json.gz"
    assert json.loads(gzip.decompress(gz.read_bytes())) == json.loads((out / "evrt-s43" / "pred-env.json").read_text())
    assert gz.read_bytes()[4:8] == b"\0\0\0\0"  # no timestamp in the gzip header
    first = gz.read_bytes()
    _report(evrt, out, "--publish", str(pub))
    assert gz.read_bytes() == first and (pub / "results.md").read_text() == md
    assert json.loads((pub / "overlap.json").read_text())["ok"] is True


def test_a_better_arm_is_said_to_be_better_and_single_seeds_have_no_spread(evrt, tmp_path: Path) -> None:
    out = _experiment(tmp_path, {"vanilla": (1, 0), "evrt": (2, 1)}, seeds=("42",))
    res = _report(evrt, out, seeds=("42",))
    assert res["claims"][0] == "EVRT gains 33.33 F1 on test (95% CI [+33.33, +33.33])."
    assert res["claims"][2] == "EVRT raises Env F1 by 66.67 (95% CI [+66.67, +66.67])."
    assert res["claims"][3] == "The F1 fall shrinks by 33.33 points (95% CI [+33.33, +33.33])."
    assert res["over_training_seeds"]["evrt"]["test_f1"]["sd"] is None  # one seed: no spread, never 0.0
    assert "| **evrt** | mean (one seed) | 100.0 |" in (out / "results.md").read_text()


def test_claims_never_say_met_on_an_interval_that_spans_the_target(evrt) -> None:
    def cmp(low: float, high: float) -> dict:
        iv = {"estimate": (low + high) / 2, "low": low, "high": high, "level": 0.95}
        return {"difference_b_minus_a": {"test_f1": iv}}

    # the earlier five seeds: EVRT minus vanilla -0.19, interval [-9.7, +10.1]
    spans = evrt.claims(cmp(-0.097, 0.101), None)
    assert spans == ["No measurable cost on test F1: EVRT minus vanilla +0.20 (95% CI [-9.70, +10.10]).",
                     "Target (cost at most 1.5): not shown, the interval allows a cost up to 9.70."]
    costs = evrt.claims(cmp(-0.04, -0.02), 2.16)
    assert costs == ["EVRT costs 3.00 F1 on test (95% CI [+2.00, +4.00] of the cost).",
                     "Target (cost at most 1.5): missed, the interval's least cost is 2.00.",
                     "An EVRT step takes 2.16 vanilla steps (median step times, mean over runs; no interval); "
                     "target (at most 2.0): missed."]


def test_runs_of_two_code_versions_or_overlapping_pools_are_refused(evrt, tmp_path: Path) -> None:
    out = _experiment(tmp_path, {"vanilla": (1, 0), "evrt": (1, 0)})
    man = out / "steps" / "train-evrt-43.json"
    man.write_text(json.dumps({"step": "train-evrt-43", "inputs": {}, "code": {"fingerprint": "e" * 64}}))
    with pytest.raises(SystemExit, match=r"^error: the runs were made with 2 versions of the code: train-vanilla-42 "
                                         r"with ffffffffffff, train-evrt-43 with eeeeeeeeeeee; rerun the older ones"):
        _report(evrt, out)
    man.write_text(json.dumps({"step": "train-evrt-43", "inputs": {str(out / "data" / "train.json"): {"sha256": "0"}},
                               "code": {"fingerprint": "f" * 64}}))
    with pytest.raises(SystemExit, match=r"^error: step train-evrt-43 was run on another version of .*train.json than"):
        _report(evrt, out)
    man.unlink()
    (out / "env" / "overlap.json").write_text(json.dumps({"ok": False, "rows": []}))
    with pytest.raises(SystemExit, match=r"overlap.json: the name pools of twins, Env test and training overlap"):
        _report(evrt, out)
