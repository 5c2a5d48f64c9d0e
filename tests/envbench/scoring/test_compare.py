"""envbench.scoring.compare: paired bootstrap intervals whose values are known in advance (issue 60)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envbench.core.errors import DataError, EnvbenchError
from envbench.scoring.bootstrap import resample_weights
from envbench.scoring.compare import SystemFiles, compare, draws, read_benchmark, run_counts, system_intervals
from envbench.scoring.metrics import score
from tests.envbench.cli.invoke import run


def _doc(title: str, facts: int = 2) -> dict[str, Any]:
    """A document of ``facts + 1`` entities in one sentence, and ``facts`` gold facts 0 -> i (P17)."""
    n = facts + 1
    return {"title": title, "sents": [[f"w{i}" for i in range(n)] + ["."]],
            "vertexSet": [[{"name": f"E{i}", "sent_id": 0, "pos": [i, i + 1], "type": "LOC"}] for i in range(n)],
            "labels": [{"h": 0, "t": i, "r": "P17", "evidence": [0]} for i in range(1, n)]}


def _facts(title: str, which: range) -> list[dict[str, Any]]:
    return [{"title": title, "h_idx": 0, "t_idx": i, "r": "P17"} for i in which]


class World:
    """``n`` test documents of 2 facts each, K = 3 Env copies of each, written to ``root``."""

    def __init__(self, root: Path, n: int = 12, copies: int = 3) -> None:
        self.root = root
        self.titles = [f"D{i}" for i in range(n)]
        self.copies = copies
        self.test = self._write("test.json", [_doc(t) for t in self.titles])
        self.env = self._write("env.json", [_doc(f"{t}-{k}") for t in self.titles for k in range(1, copies + 1)])

    def _write(self, name: str, data: Any) -> Path:
        path = self.root / name
        path.write_text(json.dumps(data))
        return path

    def preds(self, name: str, test_found: dict[str, int], env_found: dict[str, int]) -> tuple[Path, Path]:
        """Prediction files finding the first ``found[title]`` facts of each document (on each Env copy)."""
        test = [p for t in self.titles for p in _facts(t, range(1, 1 + test_found[t]))]
        env = [p for t in self.titles for k in range(1, self.copies + 1)
               for p in _facts(f"{t}-{k}", range(1, 1 + env_found[t]))]
        return self._write(f"{name}-test.json", test), self._write(f"{name}-env.json", env)


def _system(name: str, files: list[tuple[Path, Path]]) -> SystemFiles:
    return SystemFiles(name, [str(t) for t, _ in files], [str(e) for _, e in files])


def test_identical_systems_have_an_interval_of_exactly_zero(tmp_path: Path) -> None:
    w = World(tmp_path)
    found = {t: i % 3 for i, t in enumerate(w.titles)}
    one = w.preds("a", found, {t: v // 2 for t, v in found.items()})
    two = w.preds("b", {t: 2 - v for t, v in found.items()}, found)
    res = compare(_system("A", [one, two]), _system("B", [one, two]), gold=w.test, env_gold=w.env, samples=200)
    for m in ("test_f1", "env_f1", "fall_f1"):
        iv = res.differences[m]
        assert (iv.estimate, iv.low, iv.high) == (0.0, 0.0, 0.0), m
        assert iv.words() == "no measurable difference (95% CI [+0.00, +0.00])"
    assert res.paired_runs and res.runs == (2, 2)


def test_a_system_better_on_every_document_lies_above_zero(tmp_path: Path) -> None:
    w = World(tmp_path)
    half = {t: 1 for t in w.titles}  # one of the two facts of every document
    full = {t: 2 for t in w.titles}
    a = w.preds("a", half, {t: 0 for t in w.titles})
    b = w.preds("b", full, half)
    res = compare(_system("vanilla", [a]), _system("evrt", [b]), gold=w.test, env_gold=w.env, samples=300)
    # every sample: A has P 1, R 1/2, F1 2/3 on test and 0 on Env; B has 1 and 2/3 (the intervals are points):
    # B is above by 1/3 on test and 2/3 on Env, and falls 1/3 where A falls 2/3, recovering half of it
    t, e, f = (res.differences[m] for m in ("test_f1", "env_f1", "fall_f1"))
    assert t.estimate == pytest.approx(1 / 3) and t.low == pytest.approx(1 / 3) and t.low > 0
    assert e.low == pytest.approx(2 / 3) and f.high == pytest.approx(-1 / 3)
    assert t.words(positive="evrt above vanilla") == "evrt above vanilla (95% CI [+33.33, +33.33])"
    assert res.recovered is not None and (res.recovered.low, res.recovered.high) == (pytest.approx(0.5),) * 2
    # documents that differ: B better on each, by different margins, so the interval has a width
    uneven = w.preds("c", {t: (1 if i % 2 else 0) for i, t in enumerate(w.titles)}, {t: 0 for t in w.titles})
    res = compare(_system("A", [uneven]), _system("B", [b]), gold=w.test, env_gold=w.env, samples=300)
    assert 0 < res.differences["test_f1"].low < res.differences["test_f1"].estimate < res.differences["test_f1"].high


def test_a_hand_worked_interval(tmp_path: Path) -> None:
    """Two documents of one fact each. A finds the fact of d2 only, B both. A sample draws (d1, d1) with
    probability 1/4 (A: F1 0, B: 1), (d2, d2) with 1/4 (both 1) and a mixed pair with 1/2 (A: P 1, R 1/2,
    F1 2/3; B: 1). So the difference is 1 in a quarter of the samples and 0 in a quarter, and the 95% interval
    is [0, 1]; the whole-data difference is 1/3."""
    gold = tmp_path / "g.json"
    gold.write_text(json.dumps([_doc("d1", 1), _doc("d2", 1)]))
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(_facts("d2", range(1, 2))))
    b.write_text(json.dumps(_facts("d1", range(1, 2)) + _facts("d2", range(1, 2))))
    res = compare(SystemFiles("A", [str(a)]), SystemFiles("B", [str(b)]), gold=gold, samples=1000)
    iv = res.differences["test_f1"]
    assert (iv.estimate, iv.low, iv.high) == (pytest.approx(1 / 3), 0.0, 1.0)
    assert list(res.differences) == ["test_f1"]  # no Env file: test F1 only


def test_whole_data_figures_are_evaluates(tmp_path: Path) -> None:
    w = World(tmp_path)
    test, env = w.preds("a", {t: i % 3 for i, t in enumerate(w.titles)}, {t: (i + 1) % 3 for i, t in enumerate(w.titles)})
    bench = read_benchmark(w.test, w.env)
    ivs = system_intervals(bench, [run_counts(bench, test, env)], samples=50)
    gold_test, gold_env = json.loads(w.test.read_text()), json.loads(w.env.read_text())
    preds_env = json.loads(env.read_text())
    want_test = score(gold_test, json.loads(test.read_text()))["f1"]
    per_copy = [score([d for d in gold_env if d["title"].endswith(f"-{k}")],
                      [p for p in preds_env if p["title"].endswith(f"-{k}")])["f1"] for k in (1, 2, 3)]
    assert ivs["test_f1"].estimate == want_test
    assert ivs["env_f1"].estimate == pytest.approx(sum(per_copy) / 3, abs=1e-15)
    assert ivs["fall_f1"].estimate == pytest.approx(want_test - sum(per_copy) / 3, abs=1e-15)
    assert ivs["test_f1"].low <= want_test <= ivs["test_f1"].high


def test_draws_are_seeded_by_stable_keys(tmp_path: Path) -> None:
    w = World(tmp_path)
    a = w.preds("a", {t: i % 3 for i, t in enumerate(w.titles)}, {t: 0 for t in w.titles})
    b = w.preds("b", {t: (i + 1) % 3 for i, t in enumerate(w.titles)}, {t: 1 for t in w.titles})
    args = (_system("A", [a]), _system("B", [b]))
    first = compare(*args, gold=w.test, env_gold=w.env, samples=400).as_dict()
    assert compare(*args, gold=w.test, env_gold=w.env, samples=400).as_dict() == first
    # the resamples are keyed by the seed (seed 0: report --env's), the runs' also by the titles
    bench = read_benchmark(w.test, w.env)
    zero, one = draws(bench, 50, 0, 3), draws(bench, 50, 1, 3)
    assert (zero[0] == resample_weights(12, 50)).all() and not (zero[0] == one[0]).all()
    assert zero[1].shape == (50, 3) and (zero[1].sum(axis=1) == 3).all() and not (zero[1] == one[1]).all()
    assert draws(bench, 50, 0, 1)[1] is None


def test_runs_are_paired_by_position_or_drawn_apart(tmp_path: Path) -> None:
    w = World(tmp_path)
    runs = [w.preds(f"r{i}", {t: (i + j) % 3 for j, t in enumerate(w.titles)}, {t: i % 2 for t in w.titles})
            for i in range(3)]
    paired = compare(_system("A", runs), _system("B", runs), gold=w.test, env_gold=w.env, samples=100)
    apart = compare(_system("A", runs), _system("B", runs), gold=w.test, env_gold=w.env, samples=100, paired_runs=False)
    assert paired.differences["test_f1"].high == 0.0 and apart.differences["test_f1"].high > 0
    assert apart.design() == ("paired bootstrap over 12 documents, each with its 3 Env copies; 3 and 3 runs, "
                              "drawn apart; 100 samples, seed 0")
    with pytest.raises(EnvbenchError, match=r"^runs can be paired only when both systems have as many \(3 and 2"):
        compare(_system("A", runs), _system("B", runs[:2]), gold=w.test, env_gold=w.env, paired_runs=True)


def test_inputs_that_are_not_one_benchmark_are_refused(tmp_path: Path) -> None:
    w = World(tmp_path, n=2)
    a = w.preds("a", {t: 1 for t in w.titles}, {t: 1 for t in w.titles})
    stray = tmp_path / "stray.json"
    stray.write_text(json.dumps(_facts("Elsewhere", range(1, 2))))
    with pytest.raises(DataError, match=r"stray.json: has predictions for 1 title\(s\) that the gold file lacks "
                                        r"\(first: 'Elsewhere'\); the bootstrap draws gold documents"):
        compare(SystemFiles("A", [str(stray)]), _system("B", [a]), gold=w.test)
    short = tmp_path / "short.json"
    short.write_text(json.dumps([_doc("D0-1"), _doc("D0-2"), _doc("D1-1")]))
    with pytest.raises(DataError, match=r"short.json: 'D1' has the copies \[1\] where 'D0' has \[1, 2\]"):
        read_benchmark(w.test, short)
    with pytest.raises(EnvbenchError, match=r"^A: 1 test prediction file\(s\) and 0 Env one\(s\)"):
        compare(SystemFiles("A", [str(a[0])]), _system("B", [a]), gold=w.test, env_gold=w.env)
    with pytest.raises(EnvbenchError, match=r"^both systems are named 'A'"):
        compare(_system("A", [a]), _system("A", [a]), gold=w.test, env_gold=w.env)


def test_the_command_prints_and_writes_the_comparison(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    w = World(tmp_path, n=6, copies=2)
    a = w.preds("a", {t: 1 for t in w.titles}, {t: 0 for t in w.titles})
    b = w.preds("b", {t: 2 for t in w.titles}, {t: 1 for t in w.titles})
    code, out = run("compare", "--gold", w.test, "--env-gold", w.env, "--a-test", a[0], "--a-env", a[1],
                    "--b-test", b[0], "--b-env", b[1], "--name-a", "vanilla", "--name-b", "evrt", "--samples", "100",
                    "--out", "cmp.json")
    assert code == 0, out
    assert out.splitlines() == [
        "paired bootstrap over 6 documents, each with its 2 Env copies; one run each; 100 samples, seed 0",
        "             vanilla       evrt     evrt - vanilla   interval",
        "test F1        66.67     100.00             +33.33   evrt above vanilla (95% CI [+33.33, +33.33])",
        "Env F1          0.00      66.67             +66.67   evrt above vanilla (95% CI [+66.67, +66.67])",
        "F1 fall        66.67      33.33             -33.33   evrt below vanilla (95% CI [-33.33, -33.33])",
        "evrt recovers 0.500 of vanilla's F1 fall (95% CI [0.500, 0.500])"]
    got = json.loads((tmp_path / "cmp.json").read_text())
    assert got["difference_b_minus_a"]["test_f1"]["low"] == pytest.approx(1 / 3)
    assert got["systems"]["evrt"]["test_f1"]["per_run"] == [1.0]
    code, out = run("compare", "--gold", w.test, "--a-test", a[0], "--b-test", b[0], "--samples", "0")
    assert (code, out) == (1, "Error: --samples must be at least 1 (got 0); 2000 is usual\n")


def test_the_example_runs_when_pasted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.envbench.cli.invoke import run_examples

    monkeypatch.chdir(tmp_path)
    runs = tmp_path / "runs" / "evrt"
    (runs / "data").mkdir(parents=True)
    w = World(runs / "data", n=4, copies=5)
    w.test.rename(runs / "data" / "test.json")
    w.env.rename(runs / "data" / "env.json")
    for name, found in (("vanilla-s42", 1), ("evrt-s42", 2)):
        (runs / name).mkdir()
        test, env = w.preds(name, {t: found for t in w.titles}, {t: found - 1 for t in w.titles})
        test.rename(runs / name / "pred-test.json")
        env.rename(runs / name / "pred-env.json")
    assert run_examples("compare")
