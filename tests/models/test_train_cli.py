"""`envbench train` / `envbench predict` end to end on a tiny random BERT."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from envbench.cli import cli
from envbench.core.errors import EnvbenchError
from models.config import TrainConfig
from tests.models.conftest import tiny_docs

pytestmark = pytest.mark.train

TINY = ["--set", "emb_size=32", "--set", "block_size=8", "--set", "batch_size=2", "--set", "progress=false",
        "--set", "lr_encoder=1e-3", "--set", "lr_classifier=1e-3", "--set", "dtype=fp32"]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {"train": tmp_path / "train.json", "twins": tmp_path / "twins.json", "dev": tmp_path / "dev.json"}
    paths["train"].write_text(json.dumps(tiny_docs(4)))
    paths["twins"].write_text(json.dumps(tiny_docs(4, rename=True)))
    paths["dev"].write_text(json.dumps(tiny_docs(2)))
    return paths


def _invoke(args: list[str]):
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def test_config_overrides_parse_by_type() -> None:
    cfg = TrainConfig().with_overrides(["alpha=0.5", "evrt=true", "batch_size=2", "loss=atlop"])
    assert (cfg.alpha, cfg.evrt, cfg.batch_size, cfg.loss) == (0.5, True, 2, "atlop")
    assert TrainConfig().rcr_reduction == "mean"  # the reference code's MSE scale, which alpha = 0.1 fits
    with pytest.raises(EnvbenchError, match="rcr_reduction='max'; use 'mean' or 'sum'"):
        TrainConfig(rcr_reduction="max").validate()


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
    assert r.output == f"Error: --config {bad}: expected a JSON object of config fields, e.g. a saved config.json\n"


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


def test_train_vanilla_is_deterministic(files: dict[str, Path], tiny_encoder: Path, tmp_path: Path) -> None:
    outs = []
    for name in ("a", "b"):
        run = tmp_path / name
        r = _invoke(["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--encoder", str(tiny_encoder),
                     "--out", str(run), "--epochs", "1", "--loss", "atlop", *TINY, "--set", "eval_every_epoch=false"])
        assert r.exit_code == 0, r.output
        outs.append([ln.rsplit(" ", 1)[0] for ln in (run / "train.log").read_text().splitlines()])  # drop timing
    assert outs[0] == outs[1] and len(outs[0]) == 2
