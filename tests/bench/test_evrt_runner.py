"""bench/evrt.py's experiment runner: steps from a file, skipped by their manifests, cleaned when stale."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import bench_script

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def evrt():
    return bench_script("evrt")


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
    # the code the step ran: report refuses runs of two versions (issue 60: a mean over two commits)
    assert len(manifest["code"]["fingerprint"]) == 64 and set(manifest["code"]) == {"fingerprint", "commit", "dirty"}
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
    assert [s.name for s in steps if s.base == "train-evrt"] == [f"train-evrt-{s}" for s in range(42, 52)]
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


def test_groups_and_shards_split_the_steps_among_jobs(evrt, tmp_path: Path) -> None:
    path = _experiment(tmp_path)
    path.write_text(path.read_text().replace('name = "train"\n', 'name = "train"\ngroup = "gpu"\n'))
    env, steps = evrt.load_experiment(path, ["seeds=1,2,3,4,5"])
    assert [s.name for s in evrt.select(steps, ["gpu"])] == [f"train-{i}" for i in range(1, 6)]
    # two jobs, one per GPU: every step once, none twice
    jobs = [[s.name for s in evrt.select(steps, ["gpu"], f"{k}/2")] for k in range(2)]
    assert jobs == [["train-1", "train-3", "train-5"], ["train-2", "train-4"]]
    assert [s.name for s in evrt.select(steps, [], "2/3")] == ["train-2", "train-5"]
    for bad in ("2/2", "1", "a/b", "-1/2"):
        with pytest.raises(evrt.ExperimentError, match=rf"--shard {bad}: expected K/N with 0 <= K < N"):
            evrt.select(steps, [], bad)
    _run(evrt, path, "prep")
    _run(evrt, path, "--shard", "1/2", "--var", "seeds=1,2,3", "gpu")
    assert sorted(p.name for p in (tmp_path / "out").glob("run-*")) == ["run-2"]


def test_an_input_no_step_writes_says_to_pass_it(evrt, tmp_path: Path) -> None:
    path = _experiment(tmp_path)
    path.write_text(path.read_text().replace(f'inputs = ["{tmp_path}/src.txt"]', 'inputs = ["{out}/given.txt"]'))
    with pytest.raises(SystemExit, match=r"error: step prep: input .*/out/given.txt does not exist and no step writes "
                                         r"it; pass it with --var \(see the file's \[vars\]\)"):
        _run(evrt, path, "prep")


def test_table7_chains_its_steps_from_the_train_file_and_the_shared_data(evrt) -> None:
    """bench/table7.toml: 60 training runs (3 models x 2 encoders x 2 variants x 5 seeds) on the presets, each
    predicted and scored on test and Env test; every input is the train file, shared data, a checked-in preset
    or an output of an earlier step."""
    env, steps = evrt.load_experiment(REPO / "bench" / "table7.toml")
    train = [s for s in steps if s.group == "train"]
    assert len(train) == 60 and len({s.name for s in train}) == 60
    assert len([s for s in steps if s.base == "predict"]) == len([s for s in steps if s.base == "evaluate"]) == 120
    assert [s.name for s in steps if s.group == "data"][0] == "data-train"
    for s in train:  # one job per GPU: no torchrun, and the preset named by the step's model, encoder and variant
        assert "torch.distributed.run" not in s.cmd and s.cmd[s.cmd.index("--config") + 1] in s.inputs
        assert ("--twins" in s.cmd) == s.base.endswith("-evrt")
    written: list[str] = []
    for step in steps:
        for pattern in step.inputs:
            if pattern == env["train"] or pattern.startswith(env["shared"]):
                continue
            if pattern.startswith("models/presets/"):
                assert (REPO / pattern).is_file(), pattern
                continue
            assert pattern in written, f"{step.name}: {pattern} is made by no earlier step"
        written += step.outputs
    # the twins never take a name of dev, test or Env test, nor the Env test one of the training file; the
    # overlap check comes before any EVRT run
    twins = next(s for s in steps if s.name == "data-twins").cmd
    excluded = [twins[i + 1] for i, a in enumerate(twins) if a == "--exclude-names-from"]
    assert [Path(e).name for e in excluded] == ["dev_revised.json", "test_revised.json", "test_revised_env.json"]
    env_test = next(s for s in steps if s.name == "data-env").cmd
    assert env_test[env_test.index("--exclude-names-from") + 1].endswith("data/train.json")
    overlap = next(s for s in steps if s.name == "data-overlap")
    assert overlap.cmd[3] == "name-overlap"
    assert all(overlap.outputs[0] in s.inputs for s in train if s.base.endswith("-evrt"))


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


def test_the_shipped_twins_avoid_the_scored_documents_and_the_overlap_check_guards_training(evrt) -> None:
    """Issue 60: the twins are held off the test file and its Env version, and the name check runs before any
    training, on the whole test and Env test files, and its result is an input of the report."""
    env, steps = evrt.load_experiment()
    by = {s.name: s for s in steps}
    names = [s.name for s in steps]
    twins, overlap = by["twins"], by["overlap"]
    excluded = [twins.cmd[i + 1] for i, a in enumerate(twins.cmd) if a == "--exclude-names-from"]
    assert excluded == [f"{env['shared']}/test_revised.json", f"{env['out']}/env/test/test_revised_env.json"]
    assert names.index("env-test") < names.index("twins") < names.index("overlap") < names.index("train-vanilla-42")
    assert overlap.outputs == [f"{env['out']}/env/overlap.json"] and overlap.outputs[0] in by["report"].inputs
    assert len(env["seeds"]) >= 10  # the paired sd of the cost (7.98 over five seeds) asks for ten or more


def _sample_shared(tmp_path: Path) -> Path:
    """The sample world's train and test documents in the places of Re-DocRED dev and test."""
    from tests.envbench.index_fixture import sample_world

    w = sample_world()
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "dev_revised.json").write_bytes(w.train.read_bytes())
    (shared / "test_revised.json").write_bytes(w.test.read_bytes())
    return shared


@pytest.mark.slow
def test_the_recipe_stops_when_the_name_pools_overlap(evrt, tmp_path: Path, capsys) -> None:
    """The shipped steps from the knowledge base to the name check, on the sample world: they pass; the same
    recipe with twins held off the training file instead of the scored ones stops at the check."""
    shared = _sample_shared(tmp_path)
    steps = ["kb", "index", "env-test", "twins", "overlap"]
    evrt.main(["run", *steps, "--var", f"shared={shared}", "--var", f"out={tmp_path}/ok"])
    assert json.loads((tmp_path / "ok" / "env" / "overlap.json").read_text())["ok"] is True
    shipped = (REPO / "bench" / "evrt.toml").read_text()
    leaky = shipped.replace('"--exclude-names-from", "{shared}/test_revised.json",\n', "").replace(
        '"--exclude-names-from", "{out}/env/test/test_revised_env.json"',
        '"--exclude-names-from", "{shared}/dev_revised.json"')
    assert leaky.count("--exclude-names-from") == shipped.count("--exclude-names-from") - 1
    path = tmp_path / "leaky.toml"
    path.write_text(leaky)
    with pytest.raises(SystemExit, match=rf"error: step overlap failed \(exit 1\) after \d+s; see "
                                         rf"{tmp_path}/leaky/steps/overlap.log"):
        evrt.main(["run", *steps, "--file", str(path), "--var", f"shared={shared}", "--var", f"out={tmp_path}/leaky"])
    log = (tmp_path / "leaky" / "steps" / "overlap.log").read_text()
    assert "Error: the name pools overlap: " in log and "new names of the twins are test mention names" in log
    assert not (tmp_path / "leaky" / "steps" / "overlap.json").exists()  # no manifest: it reruns next time
