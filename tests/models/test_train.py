"""The training loop (`models/train.py`): checkpoints of earlier versions, numbers that go non-finite."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.models.conftest import TINY, invoke

pytestmark = pytest.mark.train

DATA = Path(__file__).with_name("data")

# The frozen recipe of data/run-before-62, run in that folder at aa5e01e (the loop before issue 62 split it into
# named parts) with `--set max_steps=2`: encoder/ is conftest's make_tiny_encoder(tiny_docs(8), hidden=16, layers=1,
# heads=2, max_positions=64), train.json tiny_docs(4), dev.json tiny_docs(2); the run stopped after 2 of its 4 steps
# (the end of epoch 1), with best/ and a resumable last/. Paths are relative, so a copy resumes anywhere.
BEFORE_62 = ["train", "--train", "train.json", "--dev", "dev.json", "--encoder", "encoder", "--out", "run", "--epochs",
             "2", "--set", "emb_size=16", "--set", "block_size=4", "--set", "window=64", "--set", "batch_size=2",
             "--set", "progress=false", "--set", "lr_encoder=1e-3", "--set", "lr_classifier=1e-3", "--set",
             "dtype=fp32", "--set", "keep_epoch_checkpoints=false"]


def test_a_run_written_before_the_loop_was_split_still_predicts_and_resumes(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    root = tmp_path / "before-62"
    shutil.copytree(DATA / "run-before-62", root)
    monkeypatch.chdir(root)
    r = invoke(["predict", "--run", "run", "--docs", "dev.json", "--out", "pred.json"])
    assert r.exit_code == 0 and r.output.startswith("wrote "), r.output
    r = invoke(BEFORE_62)
    assert r.exit_code == 0, r.output
    # issue 60: the log said "encoded as overlapping windows" under the two-window default
    assert "0 longer than 64 wordpieces, encoded in two windows; 0 cut at 1024" in r.output
    result = json.loads((root / "run" / "result.json").read_text())
    assert (result["resumed_from_step"], result["steps"], result["epochs_done"]) == (2, 4, 2.0)
    lines = (root / "run" / "train.log").read_text().splitlines()
    assert [ln.split()[1] for ln in lines] == ["1/2", "2/2", "3/4", "4/4"]
    # the losses of steps 3 and 4 as the loop before the split resumed this very checkpoint: its model, AdamW
    # moments, schedule and RNG states are all read back as they were written
    losses = [float(ln.split(" clo ")[1].split()[0]) for ln in lines[2:]]
    assert losses == pytest.approx([50.2161, 51.2448], abs=2e-3)
    assert [json.loads(x)["epoch"] for x in (root / "run" / "metrics.jsonl").read_text().splitlines()] == [1.0, 2.0]


@pytest.mark.parametrize(("setting", "step", "what"), [
    # NaN from the first forward pass after a step of 1e308: the loss is checked before the next step
    (["--set", "lr_encoder=1e308", "--set", "max_steps=2"], 2, "the loss is nan (clo nan)"),
    # a run whose only step makes the weights infinite: nothing to stop at but the save
    (["--set", "lr_encoder=1e308", "--set", "lr_classifier=1e308", "--set", "max_steps=1"], 1,
     "43 of 45 weight tensors hold NaN or inf after the optimizer step (first: "
     "encoder.embeddings.word_embeddings.weight)"),
])
def test_a_loss_or_weights_that_are_not_finite_stop_the_run_and_nothing_is_saved(
        files: dict[str, Path], tiny_encoder: Path, tmp_path: Path, setting: list[str], step: int, what: str) -> None:
    """Issue 56: `--set lr_encoder=1e308` trained to `loss nan grad_norm nan`, exit 0, and best/model.pt held 43 of
    45 non-finite tensors."""
    run = tmp_path / "run"
    r = invoke(["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--encoder", str(tiny_encoder),
                "--out", str(run), "--epochs", "2", *TINY, *setting])
    assert (r.exit_code, r.output.splitlines()[-1]) == (1, f"Error: step {step}: {what}; training stopped, no "
                                                           "checkpoint holds this step's weights; likely "
                                                           "lr_encoder=1e+308; e.g. --set lr_encoder=5e-05 (the "
                                                           "default)")
    assert not run.exists()  # no best/, no last/: the run stopped before its first checkpoint and removed its files


def test_a_loss_that_turns_nan_after_a_checkpoint_keeps_the_finite_ones(files: dict[str, Path], tiny_encoder: Path,
                                                                        tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    import models.losses

    run = tmp_path / "run"
    args = ["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--encoder", str(tiny_encoder),
            "--out", str(run), "--epochs", "2", *TINY]
    real, calls = models.losses.classification_loss, []

    def nan_in_epoch_2(*a, **kw):  # a loss that goes NaN in step 3, after epoch 1's checkpoints
        calls.append(1)
        loss = real(*a, **kw)
        return loss * float("nan") if len(calls) == 3 else loss

    monkeypatch.setattr(models.losses, "classification_loss", nan_in_epoch_2)
    r = invoke(args)
    assert r.exit_code == 1
    assert r.output.splitlines()[-1] == ("Error: step 3: the loss is nan (clo nan); training stopped, no checkpoint "
                                         "holds this step's weights; likely the learning rates (lr_encoder=0.001, "
                                         "lr_classifier=0.001); lower them")
    for saved in (run / "best" / "model.pt", run / "checkpoints" / "epoch-1" / "model.pt"):
        assert all(torch.isfinite(t).all() for t in torch.load(saved, weights_only=True).values())
    state = torch.load(run / "last" / "state.pt", weights_only=True)
    assert state["step"] == 2 and all(torch.isfinite(t).all() for t in state["model"].values())
    assert [ln.split()[1] for ln in (run / "train.log").read_text().splitlines()] == ["1/4", "2/4"]


def test_the_log_names_the_long_document_scheme(files: dict[str, Path], tiny_encoder: Path, tmp_path: Path) -> None:
    r = invoke(["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--encoder", str(tiny_encoder),
                "--out", str(tmp_path / "run"), "--epochs", "1", *TINY, "--set", "window=16", "--set",
                "long_docs=overlap", "--set", "max_steps=1"])
    assert r.exit_code == 0, r.output
    assert "train: 4 docs (4 longer than 16 wordpieces, encoded in overlapping windows; 0 cut at 1024)" in r.output


def test_a_gradient_that_is_not_finite_stops_the_run_before_the_weights_change(
        files: dict[str, Path], tiny_encoder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import models.losses

    real = models.losses.classification_loss

    def nan_gradient(kind, logits, *a, **kw):  # a finite loss (+ 0) whose gradient is 0 * inf: NaN
        return real(kind, logits, *a, **kw) + (logits * 0).abs().sqrt().sum()

    monkeypatch.setattr(models.losses, "classification_loss", nan_gradient)
    run = tmp_path / "run"
    r = invoke(["train", "--train", str(files["train"]), "--dev", str(files["dev"]), "--encoder", str(tiny_encoder),
                "--out", str(run), "--epochs", "1", *TINY, "--set", "lr_classifier=0.5"])
    assert (r.exit_code, r.output.splitlines()[-1]) == (1, "Error: step 1: the gradient norm is nan; training stopped, "
                                                           "no checkpoint holds this step's weights; likely "
                                                           "lr_classifier=0.5; e.g. --set lr_classifier=0.0001 (the "
                                                           "default)")
    assert not run.exists()
