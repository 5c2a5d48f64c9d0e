"""`envbench train` / `envbench predict` end to end on a tiny random BERT."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from envbench.core.errors import EnvbenchError
from models.config import TrainConfig
from tests.models.conftest import TINY, tiny_docs
from tests.models.conftest import invoke as _invoke

pytestmark = pytest.mark.train


def test_config_overrides_parse_by_type() -> None:
    cfg = TrainConfig().with_overrides(["alpha=0.5", "evrt=true", "batch_size=2", "loss=atlop"])
    assert (cfg.alpha, cfg.evrt, cfg.batch_size, cfg.loss) == (0.5, True, 2, "atlop")
    assert TrainConfig().rcr_reduction == "mean"  # the reference code's MSE scale, which alpha = 0.1 fits
    with pytest.raises(EnvbenchError, match="rcr_reduction='max'; use 'mean' or 'sum'"):
        TrainConfig(rcr_reduction="max").validate()
    with pytest.raises(EnvbenchError, match="rcr_repr='z'; use 'bl' or 'zhzt'"):
        TrainConfig(rcr_repr="z").validate()
    with pytest.raises(EnvbenchError, match="pcr_form='kl'; use 'soft_bce' or 'sym_kl'"):
        TrainConfig(pcr_form="kl").validate()


def test_defaults_are_the_reference_codes() -> None:
    cfg = TrainConfig()
    assert cfg.seed == 42  # the reference scripts' --seed 42
    assert cfg.emb_size == 0  # = the encoder's hidden size
    assert (cfg.rcr_repr, cfg.rcr_reduction, cfg.pcr_form) == ("bl", "mean", "soft_bce")


PAPER = {  # issue 14: the EVRT paper's Re-DocRED values
    "redocred-bert-base": {"lr_encoder": 5e-5, "grad_accum": 1, "alpha": 0.1, "beta": 0.1, "encoder": "bert-base-cased"},
    "redocred-roberta-large": {"lr_encoder": 3e-5, "grad_accum": 2, "alpha": 0.2, "beta": 0.2, "encoder": "roberta-large"},
}
PAPER_SHARED = {"lr_classifier": 1e-4, "batch_size": 4, "epochs": 8.0, "shift": 0.04, "max_labels": 4,
                "warmup_ratio": 0.06, "seed": 42, "loss": "ncrl", "emb_size": 0, "block_size": 64}


def test_every_shipped_preset_loads_and_comments_every_field() -> None:
    from models.config import PRESETS_DIR, preset_names

    names = preset_names()
    assert set(names) >= {f"{base}-{v}" for base in ("cpu-minilm", *PAPER) for v in ("vanilla", "evrt")}
    for name in names:
        text = (PRESETS_DIR / f"{name}.toml").read_text()
        fields = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
        assert fields and all(" # " in ln and ln.split(" # ", 1)[1].strip() for ln in fields), name
        r = _invoke(["train", "--show-config", "--config", name])
        assert r.exit_code == 0, r.output
        cfg = TrainConfig.from_dict(json.loads(r.output))
        dataclasses.replace(cfg, twins="t.json" if cfg.evrt else "").validate()
        if name.endswith(("-evrt", "-vanilla")):
            assert cfg.evrt == name.endswith("-evrt"), name
        assert len(fields) == len({ln.split("=", 1)[0].strip() for ln in fields})  # no field set twice
        base = name.rsplit("-", 1)[0]
        if base in PAPER:
            want = {**PAPER_SHARED, **PAPER[base]}
            if not cfg.evrt:
                want = {k: v for k, v in want.items() if k not in ("alpha", "beta")}
            assert {k: getattr(cfg, k) for k in want} == want, name
    # by path too, and options still win over the file
    r = _invoke(["train", "--show-config", "--config", str(PRESETS_DIR / "redocred-roberta-large-evrt.toml"),
                 "--seed", "7", "--set", "alpha=0.3"])
    cfg = json.loads(r.output)
    assert (cfg["seed"], cfg["alpha"], cfg["lr_encoder"], cfg["grad_accum"]) == (7, 0.3, 3e-5, 2)


def test_config_file_errors_are_one_line(tmp_path: Path) -> None:
    from models.config import PRESETS_DIR, preset_names

    r = _invoke(["train", "--show-config", "--config", "no-such-preset"])
    assert r.exit_code == 1
    assert r.output == (f"Error: --config no-such-preset: no such file and no preset of that name; presets: "
                        f"{', '.join(preset_names())} (in {PRESETS_DIR})\n")
    bad = tmp_path / "c.toml"
    bad.write_text("[loss]\nkind = 'ncrl'\n")
    r = _invoke(["train", "--show-config", "--config", str(bad)])
    assert r.output == f"Error: {bad}: [loss] is a table; a config file is flat `field = value` lines\n"
    bad.write_text("epochs = 'eight'  # wrong type\n")
    r = _invoke(["train", "--show-config", "--config", str(bad)])
    assert r.output == f"Error: {bad}: epochs = 'eight': expected a float value\n"
    bad.write_text("epochs = 3\nlearning_rate = 1e-5\n")
    r = _invoke(["train", "--show-config", "--config", str(bad)])
    assert r.output.startswith(f"Error: {bad}: unknown config field(s) learning_rate; known: ")
    bad.write_text("epochs = \n")
    r = _invoke(["train", "--show-config", "--config", str(bad)])
    assert r.exit_code == 1 and r.output.startswith(f"Error: {bad}: not a valid TOML config file (")
    bad.write_text("epochs = 3  # an int is a valid float\n")
    assert json.loads(_invoke(["train", "--show-config", "--config", str(bad)]).output)["epochs"] == 3.0


def test_show_config_and_bad_set() -> None:
    r = _invoke(["train", "--show-config", "--epochs", "3", "--set", "beta=0.2"])
    assert r.exit_code == 0
    cfg = json.loads(r.output)
    assert cfg["epochs"] == 3.0 and cfg["beta"] == 0.2 and cfg["lr_encoder"] == 5e-5
    r = _invoke(["train", "--show-config", "--set", "nope=1"])
    assert r.exit_code == 1
    assert r.output.startswith("Error: --set nope: no such config field; fields: ")
    r = _invoke(["train", "--show-config", "--set", "batch_size=two"])
    assert r.output == "Error: --set batch_size=two: expected a int value\n"


def test_bad_config_file_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "cfg.json"
    bad.write_text("{oops")
    r = _invoke(["train", "--show-config", "--config", str(bad)])
    assert r.exit_code == 1
    assert r.output.startswith(f"Error: {bad}: not a valid config file (")
    bad.write_text("[1]")
    r = _invoke(["train", "--show-config", "--config", str(bad)])
    assert r.output == (f"Error: --config {bad}: expected a JSON object of config fields, found a JSON list; pass a "
                        "config.json saved beside a checkpoint, or a .toml of `field = value` lines\n")


def test_clear_errors(files: dict[str, Path], tmp_path: Path) -> None:
    r = _invoke(["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--encoder", str(tmp_path / "none")])
    assert r.exit_code == 1
    assert r.output.startswith(f"Error: no encoder at {tmp_path / 'none'} (no config.json there); pass --encoder DIR")
    r = _invoke(["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--evrt"])
    assert r.exit_code == 1
    assert r.output.startswith("Error: EVRT needs the renamed twins of the training documents; make them with `envbench generate")
    r = _invoke(["predict", "--run", str(tmp_path / "norun"), "--docs", str(files["dev"]), "--out", str(tmp_path / "p.json")])
    assert r.output == f"Error: no run at {tmp_path / 'norun'}; train one with `envbench train ... --out {tmp_path / 'norun'}`\n"


def test_twins_missing_titles_is_an_error(files: dict[str, Path], tiny_encoder: Path, tmp_path: Path) -> None:
    files["twins"].write_text(json.dumps(tiny_docs(3, rename=True)))
    r = _invoke(["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--twins", str(files["twins"]),
                 "--evrt", "--encoder", str(tiny_encoder), "--out", str(tmp_path / "run"), *TINY])
    assert r.exit_code == 1
    assert r.output.endswith(f"Error: {files['twins']}: 1 of 4 training titles have no twin (first: 'Doc 3'); make the "
                             "twins from the same training file with `envbench generate TRAIN --index DIR --pool train "
                             "--seeds 1 --twins --out OUT`\n")


def test_train_evrt_resume_and_predict(files: dict[str, Path], tiny_encoder: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    base = ["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--twins", str(files["twins"]),
            "--evrt", "--encoder", str(tiny_encoder), "--out", str(run), "--epochs", "2", *TINY]
    # an "interrupted" run: stops after 3 of 4 steps (mid-epoch 2) with a resumable last/ checkpoint
    r = _invoke([*base, "--set", "max_steps=3", "--set", "save_every=1"])
    assert r.exit_code == 0, r.output
    assert (run / "checkpoints" / "epoch-1" / "model.pt").is_file()
    assert json.loads((run / "checkpoints" / "epoch-1" / "config.json").read_text())["evrt"] is True
    state_cfg = json.loads((run / "last" / "config.json").read_text())
    assert state_cfg["max_steps"] == 3
    lines = (run / "train.log").read_text().splitlines()
    assert [ln.split()[1] for ln in lines] == ["1/3", "2/3", "3/3"]
    assert all(" clo " in ln and " clp " in ln and " rcr " in ln and " pcr " in ln for ln in lines)
    # rerunning continues from step 3 instead of starting over
    r = _invoke(base)
    assert r.exit_code == 0, r.output
    result = json.loads((run / "result.json").read_text())
    assert result["resumed_from_step"] == 3 and result["steps"] == 4 and result["epochs_done"] == 2.0
    lines = (run / "train.log").read_text().splitlines()
    assert lines[-1].startswith("step 4/4 epoch 2.000 ")
    assert (run / "best" / "model.pt").is_file() and (run / "best" / "config.json").is_file()
    evals = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    assert [e["epoch"] for e in evals] == [1.0, 1.5, 2.0]
    # predictions in the official format, scored by envbench.scoring.metrics
    pred = tmp_path / "pred.json"
    r = _invoke(["predict", "--run", str(run), "--docs", str(files["dev"]), "--out", str(pred)])
    assert r.exit_code == 0, r.output
    assert r.output.startswith("wrote ")
    preds = json.loads(pred.read_text())
    assert isinstance(preds, list)
    for p in preds:
        assert set(p) == {"title", "h_idx", "t_idx", "r"}
        assert p["title"] in {"Doc 0", "Doc 1"} and p["h_idx"] != p["t_idx"] and p["r"].startswith("P")
    from envbench.scoring.metrics import score

    s = score(tiny_docs(2), preds, tiny_docs(4))
    assert 0.0 <= s["f1"] <= 1.0
    # the manifest beside says which documents were predicted for, so evaluate counts none as unpredicted
    from envbench.formats.predictions import read_covers
    from envbench.scoring.evaluate import coverage

    covers = read_covers(pred)
    assert covers is not None and covers.matches and covers.titles == ["Doc 0", "Doc 1"]
    assert coverage(tiny_docs(2), preds, covers).missing == []
    # the same call again finds OUT up to date; --force, other settings or other documents predict again
    again = ["predict", "--run", str(run), "--docs", str(files["dev"]), "--out", str(pred)]
    r = _invoke(again)
    assert r.exit_code == 0, r.output
    assert r.output == f"up to date: {pred} (same documents, checkpoint best and settings); --force predicts again\n"
    for extra in (["--force"], ["--max-docs", "1"]):
        r = _invoke([*again, *extra])
        assert r.exit_code == 0 and r.output.startswith("wrote "), r.output
    assert [p["title"] for p in json.loads(pred.read_text())] == ["Doc 0"] * len(json.loads(pred.read_text()))


def test_train_vanilla_is_deterministic(files: dict[str, Path], tiny_encoder: Path, tmp_path: Path) -> None:
    outs = []
    for name in ("a", "b"):
        run = tmp_path / name
        r = _invoke(["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--encoder", str(tiny_encoder),
                     "--out", str(run), "--epochs", "1", "--loss", "atlop", *TINY, "--set", "eval_every_epoch=false"])
        assert r.exit_code == 0, r.output
        outs.append([ln.rsplit(" ", 1)[0] for ln in (run / "train.log").read_text().splitlines()])  # drop timing
    assert outs[0] == outs[1] and len(outs[0]) == 2


def test_damaged_checkpoints_and_changed_settings_are_one_line_errors(files: dict[str, Path], tiny_encoder: Path,
                                                                      tmp_path: Path) -> None:
    run = tmp_path / "run"
    base = ["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--encoder", str(tiny_encoder),
            "--out", str(run), "--epochs", "1", "--loss", "atlop", *TINY, "--set", "emb_size=0"]
    r = _invoke(base)
    assert r.exit_code == 0, r.output
    assert json.loads((run / "best" / "config.json").read_text())["emb_size"] == 32  # 0 = the encoder's hidden size
    # resuming with other settings would mix two runs
    r = _invoke([*base, "--set", "lr_encoder=2e-3", "--seed", "7"])
    assert r.exit_code == 1
    assert r.output == (f"Error: {run}/last was written by a run with other settings (lr_encoder 0.001 -> 0.002; "
                        "seed 42 -> 7); rerun with those settings to continue it, or start over with --set "
                        "resume=false or another --out\n")
    # issue 17 #6: `head -c 100000 run/best/model.pt` gave a 40-line PytorchStreamReader traceback
    weights = run / "best" / "model.pt"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    pred = tmp_path / "pred.json"
    r = _invoke(["predict", "--run", str(run), "--docs", str(files["dev"]), "--out", str(pred)])
    assert r.exit_code == 1 and not pred.exists()
    assert r.output.count("\n") == 1
    assert r.output.startswith(f"Error: {weights}: damaged checkpoint ({weights.stat().st_size:,} bytes; torch: ")
    assert r.output.endswith("); it was cut short or overwritten: copy it again from where it was trained, or pass "
                             "another --checkpoint (epoch-1, last)\n")
    state = run / "last" / "state.pt"
    state.write_bytes(state.read_bytes()[:1000])
    r = _invoke(base)
    last_line = r.output.splitlines()[-1]  # after the encoder's loading bar on stderr
    assert r.exit_code == 1 and last_line.startswith(f"Error: {state}: damaged checkpoint (1,000 bytes; torch: ")
    assert last_line.endswith(f"); it was cut short: delete {run / 'last'} or pass --set resume=false to start over")
    # weights of another shape
    other = tmp_path / "other.pt"
    import torch

    torch.save({"bilinear.weight": torch.zeros(2, 2)}, other)
    r = _invoke([*base, "--set", "resume=false", "--set", f"init_from={other}"])
    assert r.exit_code == 1
    assert r.output.splitlines()[-1].startswith(f"Error: {other}: weights do not fit this model (")


def _dataset(folder: Path, split: str, docs: list[dict]) -> Path:
    """Documents as a Parquet split of a dataset folder, as `envbench export` writes one."""
    from envbench.formats import hf

    (folder / hf.DATA_DIR).mkdir(parents=True, exist_ok=True)
    hf.write_split([hf.to_row(d, source_title=d["title"], seed=0) for d in docs],
                   folder / hf.DATA_DIR / hf.shard_name(split))
    return folder


def test_train_and_predict_read_an_exported_folder_as_its_json(files: dict[str, Path], tiny_encoder: Path,
                                                               tmp_path: Path) -> None:
    train_ds = _dataset(tmp_path / "train-ds", "train", tiny_docs(4))
    dev_ds = _dataset(tmp_path / "dev-ds", "dev", tiny_docs(2))
    runs = {}
    for name, (train, dev) in {"json": (files["train"], files["dev"]), "folder": (train_ds, dev_ds)}.items():
        runs[name] = tmp_path / name
        r = _invoke(["train", "--train", str(train), "--dev", str(dev), "--encoder", str(tiny_encoder),
                     "--out", str(runs[name]), "--epochs", "1", "--loss", "atlop", *TINY])
        assert r.exit_code == 0, r.output
    logs = [[ln.rsplit(" ", 1)[0] for ln in (runs[n] / "train.log").read_text().splitlines()] for n in runs]
    assert logs[0] == logs[1]  # the same training, step for step
    preds = {}
    for name, docs in (("json", files["dev"]), ("folder", dev_ds), ("parquet", dev_ds / "data" / "dev-00000-of-00001.parquet")):
        out = tmp_path / f"pred-{name}.json"
        r = _invoke(["predict", "--run", str(runs["json"]), "--docs", str(docs), "--out", str(out)])
        assert r.exit_code == 0, r.output
        preds[name] = json.loads(out.read_text())
    assert preds["folder"] == preds["json"] == preds["parquet"]


def test_a_folder_that_is_not_a_dataset_fails_before_training(files: dict[str, Path], tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    cfg = TrainConfig(train=str(tmp_path / "notes"), dev=str(files["dev"]))
    with pytest.raises(EnvbenchError) as e:
        cfg.check_files()
    assert str(e.value) == (f"--train {tmp_path / 'notes'}: a folder but not a dataset folder from `envbench export` "
                            "(no data/*.parquet); pass a DocRED JSON file, a folder that `envbench export` wrote, or "
                            "one of its data/*.parquet files")
    TrainConfig(train=str(_dataset(tmp_path / "ds", "train", tiny_docs(2))), dev=str(files["dev"])).check_files()
    r = _invoke(["predict", "--run", str(tmp_path / "run"), "--docs", str(tmp_path / "notes"), "--out",
                 str(tmp_path / "p.json")])
    assert r.exit_code == 1 and r.output == "Error: " + str(e.value).replace("--train", "--docs", 1) + "\n"


class _RunsCode:
    """Unpickling this runs a shell command: what a crafted checkpoint would do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.marker}",))


def test_checkpoints_load_weights_only(files: dict[str, Path], tiny_encoder: Path, tmp_path: Path) -> None:
    """Issue 29: `predict --checkpoint last` read last/state.pt with weights_only=False, so a crafted file ran code."""
    import torch

    run = tmp_path / "run"
    r = _invoke(["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--encoder", str(tiny_encoder),
                 "--out", str(run), "--epochs", "1", "--loss", "atlop", *TINY])
    assert r.exit_code == 0, r.output
    state, weights = run / "last" / "state.pt", run / "best" / "model.pt"
    torch.load(state, weights_only=True)  # the real training state needs no allow-listed type
    pred = tmp_path / "pred.json"
    predict = ["predict", "--run", str(run), "--docs", str(files["dev"]), "--out", str(pred)]
    r = _invoke([*predict, "--checkpoint", "last"])
    assert r.exit_code == 0 and r.output.startswith("wrote "), r.output
    marker = tmp_path / "ran"
    refused = ("refused: the file pickles posix.system, which no checkpoint holds (loading it could run code); a "
               "checkpoint holds only tensors and plain values; use a checkpoint written by `envbench train`\n")
    good_state, good_weights = state.read_bytes(), weights.read_bytes()
    torch.save({"model": _RunsCode(marker)}, state)
    r = _invoke([*predict, "--checkpoint", "last", "--force"])
    assert r.exit_code == 1 and r.output == f"Error: {state}: {refused}"
    torch.save(_RunsCode(marker), weights)
    r = _invoke([*predict, "--force"])
    assert r.exit_code == 1 and r.output == f"Error: {weights}: {refused}"
    # resuming and init_from read weights-only too
    r = _invoke(["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--encoder", str(tiny_encoder),
                 "--out", str(run), "--epochs", "1", "--loss", "atlop", *TINY])
    assert r.exit_code == 1 and r.output.splitlines()[-1] == f"Error: {state}: {refused.rstrip()}"
    r = _invoke(["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--encoder", str(tiny_encoder),
                 "--out", str(tmp_path / "warm"), "--epochs", "1", "--loss", "atlop", *TINY, "--set", f"init_from={weights}"])
    assert r.exit_code == 1 and r.output.splitlines()[-1] == f"Error: {weights}: {refused.rstrip()}"
    assert not marker.exists()
    # a file that holds no state dict: one line, not a TypeError traceback
    state.write_bytes(good_state)
    for content, kind in ((torch.zeros(3), "Tensor"), ([1, 2], "list"), ({"w": 1.0}, "dict")):
        torch.save(content, weights)
        r = _invoke([*predict, "--force"])
        assert r.exit_code == 1
        assert r.output == (f"Error: {weights}: not a state dict (it holds a {kind}, not parameter names mapped to "
                            "tensors); use a model.pt written by `envbench train`\n")
    weights.write_bytes(good_weights)
    torch.save({"model": [1, 2]}, state)
    r = _invoke([*predict, "--checkpoint", "last", "--force"])
    assert r.exit_code == 1 and r.output == (f"Error: {state}: not a state dict ('model' holds a list, not parameter "
                                             "names mapped to tensors); use a model.pt written by `envbench train`\n")
    torch.save(torch.zeros(3), state)
    r = _invoke([*predict, "--checkpoint", "last", "--force"])
    assert r.exit_code == 1 and r.output == (f"Error: {state}: not a training state (it holds a Tensor); it must be "
                                             "the state.pt `envbench train` writes in RUN/last/\n")


# --- hostile input (sweep of train, predict) ---------------------------------------------------------

@pytest.mark.parametrize(("args", "message"), [
    (["--epochs", "0"], "epochs=0: train for more than 0 epochs (fractions allowed, e.g. --epochs 0.5)"),
    (["--epochs", "-1"], "epochs=-1: train for more than 0 epochs (fractions allowed, e.g. --epochs 0.5)"),
    (["--epochs", "nan"], "epochs=nan: must be a finite number; e.g. --set epochs=8.0"),  # was a ValueError traceback
    (["--epochs", "inf"], "epochs=inf: must be a finite number; e.g. --set epochs=8.0"),  # was an OverflowError
    (["--set", "lr_encoder=nan"], "lr_encoder=nan: must be a finite number; e.g. --set lr_encoder=5e-05"),
    (["--set", "log_every=0"], "log_every=0: log every 1 or more steps; e.g. --set log_every=1"),  # ZeroDivisionError
    (["--set", "threads=-1"], "threads=-1: must be 0 or more; e.g. --set threads=0"),  # a torch RuntimeError
    (["--set", "max_train_docs=-1"], "max_train_docs=-1: must be 0 or more; e.g. --set max_train_docs=0"),  # dropped one
    (["--set", "warmup_ratio=5"], "warmup_ratio=5.0: a fraction of all steps, from 0 to 1; e.g. --set warmup_ratio=0.06"),
    (["--set", "max_length=3"], "max_length=3 is too small; use 0 (no cut) or at least 8 wordpieces, e.g. --set "
                                "max_length=1024"),
    (["--set", "num_class=5"], "num_class=5: DocRED has 96 relations plus the threshold class; use --set num_class=97"),
    (["--out", ""], "--out is empty; give the run folder, e.g. --out runs/atlop"),  # was the current folder
    # past 64 bits config.json could not be written (a TypeError after the run folder was made), and --set
    # threads=100000 exhausted the memory
    (["--set", f"threads={2**64}"], f"threads={2**64}: out of range (a 64-bit integer, which config.json records); "
                                    "e.g. --set threads=0"),
    (["--set", "threads=513"], "threads=513: at most 512 torch threads; e.g. --set threads=0 (torch's default)"),
    (["--set", f"batch_size={2**64}"], f"batch_size={2**64}: out of range (a 64-bit integer, which config.json "
                                       "records); e.g. --set batch_size=4"),
    (["--set", f"max_train_docs={2**64}"], f"max_train_docs={2**64}: out of range (a 64-bit integer, which "
                                           "config.json records); e.g. --set max_train_docs=0"),
    (["--set", f"seed={-(2**63) - 1}"], f"seed={-(2**63) - 1}: out of range (a 64-bit integer, which config.json "
                                        "records); e.g. --set seed=42"),
])
def test_numbers_out_of_range_are_one_line_errors(files: dict[str, Path], tmp_path: Path, args: list[str],
                                                   message: str) -> None:
    r = _invoke(["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--out", str(tmp_path / "run"),
                 *args])
    assert (r.exit_code, r.output) == (1, f"Error: {message}\n")
    assert not (tmp_path / "run").exists()


def test_a_device_that_is_none_or_missing_is_one_line(files: dict[str, Path], tiny_encoder: Path,
                                                      tmp_path: Path) -> None:
    import torch

    from models.checkpoints import resolve_device

    base = ["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--encoder", str(tiny_encoder),
            "--out", str(tmp_path / "run"), *TINY]
    r = _invoke([*base, "--set", "device=bogus"])  # was torch's RuntimeError traceback
    assert (r.exit_code, r.output) == (1, "Error: device=bogus: not a device; use auto, cpu, cuda or cuda:N\n")
    with pytest.raises(EnvbenchError, match=r"^--device cuda:x: not a device; use auto, cpu, cuda or cuda:N$"):
        resolve_device("cuda:x")
    if not torch.cuda.is_available():  # was "AssertionError: Torch not compiled with CUDA enabled"
        r = _invoke([*base, "--set", "device=cuda"])
        assert (r.exit_code, r.output) == (1, "Error: device=cuda: this machine has no CUDA GPU (or torch was built "
                                              "without CUDA); use auto or cpu\n")
    else:
        n = torch.cuda.device_count()
        with pytest.raises(EnvbenchError, match=rf"^--device cuda:{n}: this machine has {n} CUDA GPU"):
            resolve_device(f"cuda:{n}")
    r = _invoke([*base, "--set", "window=4096"])  # over the encoder's 512 positions: an IndexError on a long document
    assert (r.exit_code, r.output) == (1, f"Error: window=4096 is more than the 512 positions of the encoder at "
                                          f"{tiny_encoder}; use --set window=512 or less\n")
    assert not (tmp_path / "run").exists()


def test_train_never_overwrites_a_folder_it_did_not_write(files: dict[str, Path], tiny_encoder: Path,
                                                          tmp_path: Path) -> None:
    """`--out` set to the encoder folder replaced its config.json with the run's; a project's config.json too."""
    before = (tiny_encoder / "config.json").read_bytes()
    r = _invoke(["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--encoder", str(tiny_encoder),
                 "--out", str(tiny_encoder), *TINY])
    assert (r.exit_code, r.output) == (1, f"Error: --out {tiny_encoder}: holds config.json, which `envbench train` did "
                                          "not write (its config.json is not a training config) and would overwrite; "
                                          "choose a new or empty --out folder\n")
    assert (tiny_encoder / "config.json").read_bytes() == before
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.log").write_text("mine\n")
    r = _invoke(["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--encoder", str(tiny_encoder),
                 "--out", str(project), *TINY])
    assert r.exit_code == 1 and r.output.startswith(f"Error: --out {project}: holds train.log, which ")
    assert sorted(p.name for p in project.iterdir()) == ["train.log"]
    empty = files["dev"].with_name("empty.json")
    empty.write_text("[]")
    r = _invoke(["train", "--train", str(files["train"]), "--dev", str(empty), "--encoder", str(tiny_encoder),
                 "--out", str(tmp_path / "run"), *TINY])  # trained, and reported dev F1 0 after every epoch
    assert r.exit_code == 1
    assert r.output.splitlines()[-1] == (f"Error: {empty}: no dev documents; pass --dev FILE with at least one "
                                         "document (scored after each epoch to pick best/)")
    assert not (tmp_path / "run").exists()


def test_a_finished_run_is_up_to_date_and_changed_data_is_not_resumed(files: dict[str, Path], tiny_encoder: Path,
                                                                       tmp_path: Path) -> None:
    run = tmp_path / "run"
    base = ["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--encoder", str(tiny_encoder),
            "--out", str(run), "--epochs", "2", "--loss", "atlop", *TINY]
    r = _invoke(base)
    assert r.exit_code == 0, r.output
    log = (run / "train.log").read_text()
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["epoch-1", "epoch-2"]
    # the same command again: it said "resuming ... trained 2 steps" and rewrote result.json
    result = (run / "result.json").read_bytes()
    r = _invoke(base)
    assert r.exit_code == 0, r.output
    assert r.stdout == (f"up to date: {run} finished its 4 steps (2 epochs) with these settings and files; nothing "
                        "trained (--set resume=false trains it again from scratch)\n")
    assert (run / "result.json").read_bytes() == result and (run / "train.log").read_text() == log
    # a kill between the last save and result.json: the up-to-date rerun writes the summary it lacks
    (run / "result.json").unlink()
    r = _invoke(base)
    assert r.exit_code == 0 and r.stdout.startswith("up to date: ")
    assert json.loads((run / "result.json").read_text())["steps"] == json.loads(result)["steps"]
    # a checkpoint folder of the run is no run folder: its config.json would go with other weights
    r = _invoke(["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--encoder", str(tiny_encoder),
                 "--out", str(run / "best"), "--epochs", "2", "--loss", "atlop", *TINY])
    assert (r.exit_code, r.output.splitlines()[-1]) == (1, f"Error: --out {run / 'best'}: holds model.pt, a checkpoint "
                                                           "of a run; give the run folder itself (or a new one) as "
                                                           "--out, never one of its checkpoints")
    # other training documents under the same name: the run went on from the old state, one run's steps after
    # another's ("step 2/2" then "step 3/3"), and its checkpoints mixed the two
    files["train"].write_text(json.dumps(tiny_docs(5)))
    r = _invoke(base)
    assert r.exit_code == 1
    assert r.output.splitlines()[-1] == (f"Error: {run}/last was trained on other data (--train {files['train']} "
                                         "changed since); rerun with the files it was trained on to continue it, or "
                                         "start over with --set resume=false or another --out")
    # starting over there leaves nothing of the old run: its log lines, metrics and epoch-2 checkpoint go
    r = _invoke([*base, "--epochs", "1", "--set", "resume=false"])
    assert r.exit_code == 0, r.output
    assert [ln.split()[1] for ln in (run / "train.log").read_text().splitlines()] == ["1/3", "2/3", "3/3"]
    assert len((run / "metrics.jsonl").read_text().splitlines()) == 1
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["epoch-1"]


def test_predict_refuses_numbers_and_checkpoints_out_of_range(files: dict[str, Path], tmp_path: Path) -> None:
    run = tmp_path / "run"
    for folder in ("best", "checkpoints/epoch-1"):  # checkpoint names are checked before anything loads
        (run / folder).mkdir(parents=True)
        (run / folder / "model.pt").write_bytes(b"")
    base = ["predict", "--run", str(run), "--docs", str(files["dev"]), "--out", str(tmp_path / "p.json")]
    # a negative batch size predicted nothing, a negative --max-docs dropped the last document, --threads -1 was a
    # torch traceback
    for option, limit in (("--batch-size", 2**63 - 1), ("--max-docs", 2**63 - 1), ("--threads", 512)):
        r = _invoke([*base, option, "-1"])
        assert (r.exit_code, r.output) == (2, f"Error: Invalid value for '{option}': -1 is not in the range "
                                              f"0<=x<={limit}.\n")
        # past 64 bits the predictions were written, then the manifest failed (a stray .publishing file stayed);
        # --threads 100000 exhausted the memory
        for value in (limit + 1, 2**64 + 1):
            r = _invoke([*base, option, str(value)])
            assert (r.exit_code, r.output) == (2, f"Error: Invalid value for '{option}': {value} is not in the range "
                                                  f"0<=x<={limit}.\n")
    r = _invoke([*base, "--checkpoint", "../best"])  # read a checkpoint outside the run's folders
    assert (r.exit_code, r.output) == (1, f"Error: --checkpoint '../best': not a checkpoint name; pass best, last or "
                                          f"epoch-N (run {run} has: best, epoch-1)\n")
    r = _invoke([*base, "--checkpoint", "epoch-7"])  # "available:" named checkpoints/epoch-1, not what to pass
    assert (r.exit_code, r.output) == (1, f"Error: run {run} has no checkpoint 'epoch-7' (looked in "
                                          f"{run / 'checkpoints' / 'epoch-7'}); available: best, epoch-1; pass "
                                          "--checkpoint best, last or epoch-N\n")
    r = _invoke([*base, "--device", "bogus"])
    assert (r.exit_code, r.output) == (1, "Error: --device bogus: not a device; use auto, cpu, cuda or cuda:N\n")
    for option, message in (("--out", "--out is empty; give the predictions file, e.g. --out runs/atlop/test.json"),
                            ("--docs", "--docs is empty; give a DocRED-format JSON file, e.g. --docs test_revised.json"),
                            ("--run", "--run is empty; give the run folder `envbench train --out` wrote, e.g. "
                                      "--run runs/atlop")):
        args = list(base)
        args[args.index(option) + 1] = ""  # was the current folder
        r = _invoke(args)
        assert (r.exit_code, r.output) == (1, f"Error: {message}\n")
    assert not (tmp_path / "p.json").exists()


def test_a_checkpoint_folder_never_mixes_two_saves(tmp_path: Path) -> None:
    # best/ had its model.pt replaced first and its metrics.json after: a kill between them left the new
    # weights beside the old epoch's scores
    import torch

    from models.train import save_weights

    folder = tmp_path / "best"
    save_weights(torch.nn.Linear(2, 2), TrainConfig(), {"f1": 0.1}, folder)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}

    class Interrupted(TrainConfig):
        def to_dict(self):  # fails after the weights were written
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        save_weights(torch.nn.Linear(2, 2), Interrupted(), {"f1": 0.9}, folder)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # the old save, whole; no temporary file
    save_weights(torch.nn.Linear(2, 2), TrainConfig(), {"f1": 0.9}, folder)
    assert json.loads((folder / "metrics.json").read_text()) == {"f1": 0.9}
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "metrics.json", "model.pt"]


def test_a_seed_past_64_bits_is_refused_before_anything_is_written(files: dict[str, Path], tmp_path: Path) -> None:
    r = _invoke(["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--out", str(tmp_path / "run"),
                 "--seed", str(2**63)])  # was a TypeError from config.json's writer, in a run folder left behind
    assert (r.exit_code, r.output) == (2, f"Error: Invalid value for '--seed': {2**63} is not in the range "
                                          "-9223372036854775808<=x<=9223372036854775807.\n")
    assert not (tmp_path / "run").exists()


def _with_entities(doc: dict, n: int, title: str) -> dict:
    """``doc`` cut to its first ``n`` entities (and no labels): a document without an entity pair when n < 2."""
    return {**doc, "title": title, "vertexSet": doc["vertexSet"][:n], "labels": []}


def test_documents_without_an_entity_pair_are_skipped_in_training_and_get_no_prediction(
        files: dict[str, Path], tiny_encoder: Path, tmp_path: Path) -> None:
    """A document of one entity (or none) crashed train and predict in ATLOP's pooling (IndexError)."""
    docs = tiny_docs(4)
    lone = [_with_entities(docs[0], 1, "Lone"), _with_entities(docs[1], 0, "Empty")]
    files["train"].write_text(json.dumps([*lone, *docs]))
    def train(out: Path) -> list[str]:
        return ["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--encoder", str(tiny_encoder),
                "--out", str(out), "--epochs", "1", "--loss", "atlop", *TINY]

    run = tmp_path / "run"
    r = _invoke(train(run))
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[1] == ("skipped 2 of the 6 training documents: fewer than two entities, so no "
                                        "entity pair to learn from (features.json counts them)")
    assert json.loads((run / "features.json").read_text())["train"]["without_pairs"] == 2
    assert len((run / "train.log").read_text().splitlines()) == 2  # the 4 documents with pairs, 2 a batch
    # predict: no prediction for them, and they still count among the documents covered
    docs_file = tmp_path / "docs.json"
    docs_file.write_text(json.dumps([*lone, *tiny_docs(2)]))
    pred = tmp_path / "pred.json"
    r = _invoke(["predict", "--run", str(run), "--docs", str(docs_file), "--out", str(pred)])
    assert r.exit_code == 0, r.output
    assert r.output.startswith(f"wrote {len(json.loads(pred.read_text()))} predictions for 4 documents to {pred} ")
    assert {p["title"] for p in json.loads(pred.read_text())} <= {"Doc 0", "Doc 1"}
    from envbench.formats.predictions import read_covers

    assert read_covers(pred).titles == ["Lone", "Empty", "Doc 0", "Doc 1"]
    # with no entity pair at all there is nothing to train on, or to pick best/ by: refused, nothing written
    files["train"].write_text(json.dumps(lone))
    r = _invoke(train(tmp_path / "none"))
    assert (r.exit_code, r.output.splitlines()[-1]) == (1, f"Error: {files['train']}: no training document has an "
                                                           "entity pair (all 2 have fewer than two entities), so there "
                                                           "is nothing to train on; pass --train FILE with documents "
                                                           "of two or more entities")
    files["train"].write_text(json.dumps(tiny_docs(4)))
    files["dev"].write_text(json.dumps(lone))
    r = _invoke(train(tmp_path / "none"))
    assert (r.exit_code, r.output.splitlines()[-1]) == (1, f"Error: {files['dev']}: no dev document has an entity "
                                                           "pair (all 2 have fewer than two entities), so every epoch "
                                                           "would score 0; pass --dev FILE with documents of two or "
                                                           "more entities (scored after each epoch to pick best/)")
    assert not (tmp_path / "none").exists()


def test_a_train_that_stops_before_its_first_checkpoint_leaves_no_run_behind(
        files: dict[str, Path], tiny_encoder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crash in the first step left config.json, encoder/, features.json and an empty train.log: a folder that
    looked like a run and had no checkpoint."""
    import models.losses

    def crash(*args, **kwargs):
        raise RuntimeError("boom")

    run = tmp_path / "run"
    base = ["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--encoder", str(tiny_encoder),
            "--out", str(run), "--epochs", "2", "--loss", "atlop", *TINY]
    with monkeypatch.context() as m:
        m.setattr(models.losses, "classification_loss", crash)
        with pytest.raises(RuntimeError, match="boom"):
            _invoke(base)
        assert not run.exists()  # this run made the folder: it goes with what it wrote
        run.mkdir()
        with pytest.raises(RuntimeError, match="boom"):
            _invoke(base)
        assert run.is_dir() and not any(run.iterdir())  # the user's empty folder stays, as empty as it was
    # one that stops after a checkpoint keeps it: last/ resumes
    r = _invoke([*base, "--set", "max_steps=2"])
    assert r.exit_code == 0, r.output
    with monkeypatch.context() as m:
        m.setattr(models.losses, "classification_loss", crash)
        with pytest.raises(RuntimeError, match="boom"):
            _invoke(base)
    assert (run / "last" / "state.pt").is_file() and (run / "config.json").is_file()
    assert (run / "train.log").read_text().count("\n") == 2
    r = _invoke(base)
    assert r.exit_code == 0, r.output
    assert json.loads((run / "result.json").read_text())["resumed_from_step"] == 2


def test_out_in_a_folder_of_the_documents_is_refused(files: dict[str, Path], tiny_encoder: Path,
                                                     tmp_path: Path) -> None:
    """`--out` the folder of --train wrote best/, checkpoints/ and the logs among the documents."""
    data = tmp_path / "data"
    data.mkdir()
    train, dev = data / "train.json", data / "dev.json"
    train.write_text(json.dumps(tiny_docs(4)))
    dev.write_text(json.dumps(tiny_docs(2)))
    base = ["train", "--train", str(train), "--dev", str(dev), "--encoder", str(tiny_encoder), "--epochs", "1", *TINY]
    r = _invoke([*base, "--out", str(data)])
    assert (r.exit_code, r.output) == (1, f"Error: --out {data}: the folder of --train {train}, which this step "
                                          "reads; choose another --out (a run writes config.json, encoder/, best/, "
                                          "last/, checkpoints/ and logs there)\n")
    assert sorted(p.name for p in data.iterdir()) == ["dev.json", "train.json"]
    dev_ds = _dataset(tmp_path / "dev-ds", "dev", tiny_docs(2))
    r = _invoke(["train", "--train", str(files["train"]), "--dev", str(dev_ds), "--encoder", str(tiny_encoder),
                 "--out", str(dev_ds / "runs" / "a"), *TINY])
    assert (r.exit_code, r.output) == (1, f"Error: --out {dev_ds / 'runs' / 'a'}: inside {dev_ds}, the dataset folder "
                                          f"of --dev {dev_ds}, which this step reads; choose an --out outside it\n")
    assert not (dev_ds / "runs").exists()
    # a run folder below the documents' folder is the usual place (`--train train.json --out runs/a`)
    r = _invoke([*base, "--out", str(data / "runs" / "a")])
    assert r.exit_code == 0, r.output


def test_epochs_that_train_less_than_one_batch_are_refused(files: dict[str, Path], tiny_encoder: Path,
                                                           tmp_path: Path) -> None:
    """`--epochs 1e-9` trained a whole batch and said "1 steps (1.0 epochs)"."""
    run = tmp_path / "run"
    base = ["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--encoder", str(tiny_encoder),
            "--out", str(run), "--loss", "atlop", *TINY]
    r = _invoke([*base, "--epochs", "1e-9"])
    assert (r.exit_code, r.output.splitlines()[-1]) == (1, "Error: epochs=1e-09 trains less than one batch (4 training "
                                                           "documents in batches of 2: 2 an epoch); use --epochs 0.5 "
                                                           "or more")
    assert not run.exists()
    files["train"].write_text(json.dumps(tiny_docs(6)))  # 3 batches an epoch
    r = _invoke([*base, "--epochs", "0.5"])  # rounded up to whole batches: the summary says what was trained
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("trained 2 steps (0.667 epochs) in ")


def test_messages_name_what_is_wrong_with_a_checkpoint_or_run_folder(files: dict[str, Path], tiny_encoder: Path,
                                                                    tmp_path: Path) -> None:
    def train(out: Path) -> list[str]:
        return ["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--encoder", str(tiny_encoder),
                "--out", str(out), "--epochs", "1", "--loss", "atlop", *TINY]

    run = tmp_path / "run"
    base = train(run)
    r = _invoke(base)
    assert r.exit_code == 0, r.output
    # a text file in place of model.pt: a KeyError traceback, or "refused: the file pickles an object"
    weights = run / "best" / "model.pt"
    pred = tmp_path / "pred.json"
    for text in (b"hello\n", b"hello world"):
        weights.write_bytes(text)
        r = _invoke(["predict", "--run", str(run), "--docs", str(files["dev"]), "--out", str(pred)])
        assert (r.exit_code, r.output) == (1, f"Error: {weights}: not a checkpoint ({len(text)} bytes, neither the zip "
                                              "archive torch.save writes nor a pickle of tensors); it was cut short or "
                                              "overwritten: copy it again from where it was trained, or pass another "
                                              "--checkpoint (epoch-1, last)\n")
    # a last/config.json cut short: "fix or re-download the file", for a file the run itself writes
    config = run / "last" / "config.json"
    config.write_bytes(config.read_bytes()[:30])
    r = _invoke(base)
    assert r.exit_code == 1
    assert r.output.startswith(f"Error: {config}: not a valid checkpoint config (")
    assert r.output.endswith(f"); it was cut short or overwritten: pass --set resume=false to start over (or delete "
                             f"{run / 'last'})\n")
    config.write_text("[1]")  # was an AttributeError
    r = _invoke(base)
    assert (r.exit_code, r.output) == (1, f"Error: {config}: not a checkpoint config (a JSON list, not an object); it "
                                          "was cut short or overwritten: pass --set resume=false to start over (or "
                                          f"delete {run / 'last'})\n")
    # best/ a link to somebody's folder, no config.json: "(its config.json is not a training config)"
    other, foreign = tmp_path / "other", tmp_path / "foreign"
    other.mkdir()
    foreign.mkdir()
    (other / "best").symlink_to(foreign)
    r = _invoke(train(other))
    assert (r.exit_code, r.output) == (1, f"Error: --out {other}: holds best, which `envbench train` did not write (no "
                                          "config.json of a run is there, which `envbench train` writes first) and "
                                          "would overwrite; choose a new or empty --out folder\n")


def test_predict_refuses_documents_that_were_all_skipped_as_invalid(files: dict[str, Path], tmp_path: Path) -> None:
    """`predict --skip-invalid` over invalid documents only said "wrote 0 predictions for 0 documents"."""
    run = tmp_path / "run"
    (run / "best").mkdir(parents=True)
    (run / "best" / "model.pt").write_bytes(b"")  # never loaded: the documents are read first
    bad = tiny_docs(2)
    for doc in bad:
        doc["vertexSet"][0][0]["sent_id"] = 99
    docs = tmp_path / "bad.json"
    docs.write_text(json.dumps(bad))
    pred = tmp_path / "pred.json"
    r = _invoke(["predict", "--run", str(run), "--docs", str(docs), "--out", str(pred), "--skip-invalid"])
    assert (r.exit_code, r.output) == (1, f"Error: {docs}: all 2 documents are invalid and were skipped; run without "
                                          "--skip-invalid to see the first problem\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json", "dev.json", "run", "train.json", "twins.json"]


# --- issue 56: hostile input to train, predict and understand ---

def _listing(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b"" for p in sorted(folder.rglob("*"))}


def test_train_writes_only_into_a_new_empty_or_own_run_folder(files: dict[str, Path], tiny_encoder: Path,
                                                              tmp_path: Path) -> None:
    """`--out r --set out=/etc --set max_steps=2` wrote a whole run into /etc: --set silently won over --out, and a
    folder of unrelated files counted as a run folder as long as none of its names collided."""
    etc = tmp_path / "etc"
    (etc / "ssh").mkdir(parents=True)
    for name in ("passwd", "hosts", "fstab", "ssh/sshd_config"):
        (etc / name).write_text(f"{name}\n")
    before = _listing(etc)
    base = ["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--encoder", str(tiny_encoder),
            "--epochs", "1", *TINY, "--set", "max_steps=2"]
    r = _invoke([*base, "--out", str(tmp_path / "r"), "--set", f"out={etc}"])
    assert (r.exit_code, r.output) == (1, f"Error: --out {tmp_path / 'r'} and --set out={etc} disagree; give out "
                                          "once\n")
    refused = (f"Error: --out {etc}: holds fstab, hosts, passwd and 1 more, which `envbench train` did not write; it "
               "writes only into a new folder, an empty one or a run folder of its own (its config.json a training "
               "config); choose a new or empty --out folder\n")
    for where in (["--out", str(etc)], ["--set", f"out={etc}"], ["--out", str(etc), "--set", f"out={etc}/."]):
        r = _invoke([*base, *where])
        assert (r.exit_code, r.output) == (1, refused)
    assert _listing(etc) == before and not (tmp_path / "r").exists()
    # options and --set of other fields: the same rule; the same value twice is no conflict
    r = _invoke([*base, "--out", str(tmp_path / "r"), "--epochs", "2", "--set", "epochs=3"])
    assert (r.exit_code, r.output) == (1, "Error: --epochs 2.0 and --set epochs=3 disagree; give epochs once\n")
    r = _invoke(["train", "--show-config", "--no-evrt", "--set", "evrt=true"])
    assert (r.exit_code, r.output) == (1, "Error: --no-evrt and --set evrt=true disagree; give evrt once\n")
    r = _invoke(["train", "--show-config", "--out", "runs/a", "--set", "out=./runs/a"])
    assert r.exit_code == 0 and json.loads(r.output)["out"] == "./runs/a"
    # an empty folder, and a run folder of train's own (rerun: up to date), are where it writes
    empty = tmp_path / "empty"
    empty.mkdir()
    r = _invoke([*base, "--out", str(empty)])
    assert r.exit_code == 0, r.output
    r = _invoke([*base, "--out", str(empty)])
    assert r.exit_code == 0 and r.stdout.startswith(f"up to date: {empty} finished its 2 steps"), r.output


@pytest.mark.parametrize(("setting", "message"), [
    ("lr_encoder=-1", "lr_encoder=-1.0: must be 0 or more; e.g. --set lr_encoder=5e-05"),
    ("epochs=nan", "epochs=nan: must be a finite number; e.g. --set epochs=8.0"),
    ("batch_size=0", "batch_size=0: must be at least 1; e.g. --set batch_size=4"),
    ("dtype=fp8", "dtype='fp8'; use 'auto' or 'bf16' or 'fp32'"),
    # AdamW divides by sqrt(v) + eps: where a gradient is 0, eps 0 gave NaN weights, saved as best/
    ("adam_eps=0", "adam_eps=0: must be more than 0 (AdamW divides by the root of its second moment plus adam_eps, "
                   "which is 0 where a gradient is 0); e.g. --set adam_eps=1e-06"),
])
def test_show_config_prints_only_a_config_that_trains(files: dict[str, Path], tmp_path: Path, setting: str,
                                                      message: str) -> None:
    """`--show-config` printed lr_encoder=-1, epochs=nan, batch_size=0 and dtype=fp8 as the resolved config, exit 0."""
    r = _invoke(["train", "--show-config", "--set", setting])
    assert (r.exit_code, r.output) == (1, f"Error: {message}\n")
    r = _invoke(["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--out", str(tmp_path / "run"),
                 "--set", setting])
    assert (r.exit_code, r.output) == (1, f"Error: {message}\n")
    assert not (tmp_path / "run").exists()


def test_an_encoder_that_is_a_run_or_no_model_is_named(files: dict[str, Path], tiny_encoder: Path,
                                                       tmp_path: Path) -> None:
    """`--encoder RUN` (it holds encoder/ and a config.json) gave a transformers traceback, then "module 'torch' has
    no attribute 'fp32'"; a config.json of {} another traceback."""
    run = tmp_path / "run"
    base = ["train", "--train", str(files["train"]), "--dev", str(files["dev"]), *TINY, "--epochs", "1"]
    r = _invoke([*base, "--encoder", str(tiny_encoder), "--out", str(run)])
    assert r.exit_code == 0, r.output
    fix = (f"pass the encoder that run was trained from (--encoder {tiny_encoder}), and --set "
           f"init_from={run / 'best' / 'model.pt'} to start from its trained weights")
    r = _invoke([*base, "--encoder", str(run), "--out", str(tmp_path / "again")])
    assert (r.exit_code, r.output) == (1, f"Error: --encoder {run}: a run folder of `envbench train` (its config.json "
                                          f"is a training config), not an encoder; {fix}\n")
    r = _invoke([*base, "--encoder", str(run / "encoder"), "--out", str(tmp_path / "again")])
    assert (r.exit_code, r.output) == (1, f"Error: --encoder {run / 'encoder'}: the encoder/ folder of the run {run} "
                                          f"(tokenizer and config, no weights); {fix}\n")
    empty = tmp_path / "enc"
    empty.mkdir()
    (empty / "config.json").write_text("{}")
    r = _invoke([*base, "--encoder", str(empty), "--out", str(tmp_path / "again")])
    assert (r.exit_code, r.output) == (1, f"Error: --encoder {empty}: its config.json is not a Hugging Face model "
                                          "config (no model_type and hidden_size); pass --encoder DIR with a local "
                                          "Hugging Face model folder (config.json, weights, tokenizer files), e.g. "
                                          "bert-base-cased saved with save_pretrained\n")
    shutil.copy(tiny_encoder / "config.json", empty / "config.json")  # a model config, and no weights beside it
    r = _invoke([*base, "--encoder", str(empty), "--out", str(tmp_path / "again")])
    assert (r.exit_code, r.output) == (1, f"Error: --encoder {empty}: no weights there (model.safetensors or "
                                          "pytorch_model.bin); pass --encoder DIR with a local Hugging Face model "
                                          "folder (config.json, weights, tokenizer files), e.g. bert-base-cased saved "
                                          "with save_pretrained\n")
    assert not (tmp_path / "again").exists()


@pytest.mark.parametrize(("text", "message"), [
    ("[1, 2]", "expected a JSON object of config fields, found a JSON list"),  # was a TypeError (sequence item 0)
    ('"agile"', "expected a JSON object of config fields, found a JSON string"),  # was "unknown fields , a, g, i"
    (None, "model='nosuch'; use 'atlop' or 'docunet' or 'kd-docre'"),  # predicted without a word
])
def test_predict_reads_a_run_config_as_train_does(files: dict[str, Path], tiny_encoder: Path, tmp_path: Path,
                                                  text: str | None, message: str) -> None:
    run = tmp_path / "run"
    r = _invoke(["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--encoder", str(tiny_encoder),
                 "--out", str(run), "--epochs", "1", *TINY])
    assert r.exit_code == 0, r.output
    config = run / "best" / "config.json"
    config.write_text(text or json.dumps({**json.loads(config.read_text()), "model": "nosuch"}))
    pred = tmp_path / "pred.json"
    r = _invoke(["predict", "--run", str(run), "--docs", str(files["dev"]), "--out", str(pred)])
    assert (r.exit_code, r.output) == (1, f"Error: {config}: {message}; it must be the config.json `envbench train` "
                                          "saved beside the checkpoint; copy the run again\n")
    assert not pred.exists()
    r = _invoke(["train", "--show-config", "--config", str(config)])  # train --config reads it with the same reader
    # (and checks the values once options and --set are applied: `--model atlop` would mend this one)
    assert (r.exit_code, r.output.split("; pass ")[0]) == (1, f"Error: --config {config}: {message}" if text
                                                           else f"Error: {message}\n")
