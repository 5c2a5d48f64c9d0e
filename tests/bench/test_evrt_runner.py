"""bench/evrt.py's experiment runner: steps from a file, skipped by their manifests, cleaned when stale."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def evrt():
    spec = importlib.util.spec_from_file_location("bench_evrt", REPO / "bench" / "evrt.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_evrt"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


WRITE = "import sys, pathlib; pathlib.Path(sys.argv[2]).parent.mkdir(parents=True, exist_ok=True); " \
        "pathlib.Path(sys.argv[2]).write_text(pathlib.Path(sys.argv[1]).read_text() + sys.argv[3])"


def _experiment(tmp: Path) -> Path:
    (tmp / "src.txt").write_text("source ")
    path = tmp / "exp.toml"
    path.write_text(f'''
[vars]
out = "{tmp}/out"
state = "{{out}}/steps"
seeds = ["1", "2"]

[[steps]]
name = "prep"
help = "copy the source"
cmd = ["{{python}}", "-c", "{WRITE}", "{tmp}/src.txt", "{{out}}/prep.txt", "prepared"]
inputs = ["{tmp}/src.txt"]
outputs = ["{{out}}/prep.txt"]

[[steps]]
name = "train"
help = "seed {{seed}}"
matrix = {{ seed = "{{seeds}}" }}
cmd = ["{{python}}", "-c", "{WRITE}", "{{out}}/prep.txt", "{{out}}/run-{{seed}}/model.txt", " seed {{seed}}"]
inputs = ["{{out}}/prep.txt"]
outputs = ["{{out}}/run-{{seed}}/model.txt"]
clean = ["{{out}}/run-{{seed}}"]

[[steps]]
name = "report"
cmd = ["{{python}}", "-c", "import sys; open(sys.argv[1], 'w').write(' '.join(sys.argv[2:]))", "{{out}}/report.txt",
       "{{seeds}}"]
inputs = ["{{out}}/run-*/model.txt"]
outputs = ["{{out}}/report.txt"]
''')
    return path


def _run(evrt, path: Path, *extra: str) -> None:
    evrt.main(["run", "--file", str(path), *extra])


def test_steps_run_in_order_then_are_skipped_by_their_manifests(evrt, tmp_path: Path, capsys) -> None:
    path = _experiment(tmp_path)
    env, steps = evrt.load_experiment(path)
    assert [s.name for s in steps] == ["prep", "train-1", "train-2", "report"]
    assert steps[1].help == "seed 1" and steps[3].cmd[-2:] == ["1", "2"]  # "{seeds}" as a whole item: every seed
    _run(evrt, path)
    out = tmp_path / "out"
    assert (out / "run-2" / "model.txt").read_text() == "source prepared seed 2"
    assert (out / "report.txt").read_text() == "1 2"
    manifest = json.loads((out / "steps" / "report.json").read_text())
    assert sorted(manifest["inputs"]) == [str(out / "run-1/model.txt"), str(out / "run-2/model.txt")]
    assert manifest["cmd"][0] == "{python}"  # another interpreter path is not another command
    assert all(len(fp["sha256"]) == 64 for fp in [*manifest["inputs"].values(), *manifest["outputs"].values()])
    assert (out / "steps" / "train-1.log").read_text().startswith("$ ")
    capsys.readouterr()
    _run(evrt, path)
    assert capsys.readouterr().out.splitlines() == [f"skip {s.name} (up to date)" for s in steps]


def test_a_changed_input_reruns_what_depends_on_it_and_cleans_stale_runs(evrt, tmp_path: Path, capsys) -> None:
    path = _experiment(tmp_path)
    _run(evrt, path)
    out = tmp_path / "out"
    (out / "run-1" / "leftover.txt").write_text("from the old run")
    (tmp_path / "src.txt").write_text("changed ")
    env, steps = evrt.load_experiment(path)
    assert evrt.status(env, steps[0])[:2] == (False, f"input changed: {tmp_path}/src.txt")
    assert evrt.status(env, steps[1])[:2] == (True, "up to date")  # its input is not rewritten yet
    capsys.readouterr()
    _run(evrt, path)
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split()[1] for ln in lines if ln.startswith("run ")] == ["prep", "train-1", "train-2", "report"]
    assert f"  clean {out}/run-1 (input changed: {out}/prep.txt)" in lines
    assert not (out / "run-1" / "leftover.txt").exists()
    assert (out / "run-1" / "model.txt").read_text() == "changed prepared seed 1"


def test_vars_can_be_overridden_and_steps_selected(evrt, tmp_path: Path) -> None:
    path = _experiment(tmp_path)
    env, steps = evrt.load_experiment(path, ["seeds=7,8,9", f"out={tmp_path}/other"])
    assert env["state"] == f"{tmp_path}/other/steps"
    assert [s.name for s in evrt.select(steps, ["train"])] == ["train-7", "train-8", "train-9"]
    assert [s.name for s in evrt.select(steps, ["train-8", "prep"])] == ["prep", "train-8"]
    with pytest.raises(evrt.ExperimentError, match="no step 'nope'; steps: prep, train, report"):
        evrt.select(steps, ["nope"])
    with pytest.raises(evrt.ExperimentError, match=r"--var x=1: expected NAME=VALUE with NAME one of out, state, seeds"):
        evrt.load_experiment(path, ["x=1"])


def test_failures_name_the_step_and_its_log(evrt, tmp_path: Path) -> None:
    path = _experiment(tmp_path)
    with pytest.raises(SystemExit, match=r"error: step train-1: input .*/out/prep.txt does not exist; run the step"):
        _run(evrt, path, "train-1")
    path.write_text(path.read_text().replace('"prepared"]', '"prepared"]\n', 1).replace(
        f'"{tmp_path}/src.txt", "{{out}}/prep.txt"', f'"{tmp_path}/missing.txt", "{{out}}/prep.txt"'))
    with pytest.raises(SystemExit, match=rf"error: step prep failed \(exit 1\) after \d+s; see {tmp_path}/out/steps/prep.log"):
        _run(evrt, path, "prep")
    assert not (tmp_path / "out" / "steps" / "prep.json").exists()


def test_the_shipped_experiment_chains_its_steps(evrt) -> None:
    """Every input of bench/evrt.toml is shared data, a checked-in preset, or an output of an earlier step."""
    env, steps = evrt.load_experiment()
    assert [s.name for s in steps if s.base == "train-evrt"] == [f"train-evrt-{s}" for s in range(42, 47)]
    written: list[str] = []
    for step in steps:
        for pattern in step.inputs:
            if pattern.startswith(env["shared"]):
                continue
            if pattern.startswith("models/presets/"):
                assert (REPO / pattern).is_file(), pattern
                continue
            ok = any(Path(w).match(pattern) or w == pattern for w in written) if "*" in pattern else pattern in written
            assert ok, f"{step.name}: {pattern} is made by no earlier step"
        written += step.outputs


def test_the_report_prints_a_spread_only_over_more_than_one_training_seed(evrt) -> None:
    def run(f1: float) -> dict:
        return {"test": {"f1": f1, "ign_f1": f1 - 1}, "env": {"f1": {"mean": f1 - 10, "sd": 0.5}},
                "env_pooled": {"f1": f1 - 10}, "fall_f1": 10.0, "step_seconds": 2.0}

    def results(f1s: list[float]) -> dict:
        runs = {str(42 + i): run(f) for i, f in enumerate(f1s)}
        agg = {"test_f1": evrt._spread(f1s), "test_ign_f1": evrt._spread([f - 1 for f in f1s]),
               "env_f1": evrt._spread([f - 10 for f in f1s]), "env_pooled_f1": evrt._spread([f - 10 for f in f1s]),
               "fall_f1": evrt._spread([10.0] * len(f1s)), "step_seconds": evrt._spread([2.0] * len(f1s))}
        return {"runs": {"vanilla": runs}, "over_training_seeds": {"vanilla": agg}}

    one = evrt.report_markdown(results([38.0]))
    assert "| **vanilla** | mean (one seed) | 38.0 | 37.0 | 28.0 | 28.0 | 10.0 | 2.0 |" in one
    assert "| vanilla | 42 | 38.0 | 37.0 | 28.0 ± 0.5 |" in one  # a run's Env spread is over renaming seeds
    two = evrt.report_markdown(results([38.0, 40.0]))
    assert "| **vanilla** | mean ± sd | 39.0 ± 1.41 | 38.0 ± 1.41 | 29.0 ± 1.41 | 29.0 ± 1.41 | 10.0 ± 0.0 |" in two
