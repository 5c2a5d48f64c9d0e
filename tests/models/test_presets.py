"""The paper's presets: values from the reference scripts, and each one trains and predicts on a tiny encoder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from models.config import TrainConfig, preset_names
from tests.conftest import bench_script
from tests.models.conftest import tiny_docs

pytestmark = pytest.mark.train
REPO = Path(__file__).resolve().parents[2]

# What each reference script sets, field by field (zjunlp/DocuNet scripts/run_docred.sh's roberta branch and
# train_balanceloss.py; tonytan48/KD-DocRE scripts/batch_roberta.sh, train.py and model.py; THU-BPM/Env-DocRE
# scripts/run_docred_bert.sh). The EVRT weights of the Re-DocRED RoBERTa-large rows are the paper's (0.2).
REFERENCE = {
    "redocred-docunet-roberta-large": {
        "model": "docunet", "encoder": "roberta-large", "markers": "plain", "loss": "mcce", "max_labels": 4,
        "lr_encoder": 3e-5, "lr_classifier": 1e-4, "lr_grid": 4e-4, "batch_size": 2, "grad_accum": 2,
        "epochs": 30.0, "seed": 111, "grid_channels": 3, "unet_width": 256, "unet_out": 256, "warmup_ratio": 0.06,
        "max_grad_norm": 1.0, "adam_eps": 1e-6, "max_length": 1024},
    "redocred-kd-docre-roberta-large": {
        "model": "kd-docre", "encoder": "roberta-large", "loss": "afl", "max_labels": 4, "lr_encoder": 3e-5,
        "lr_classifier": 1e-4, "lr_grid": 3e-5, "batch_size": 4, "grad_accum": 1, "epochs": 30.0, "seed": 9900,
        "emb_size": 1024, "axial_layers": 6, "axial_heads": 8, "warmup_ratio": 0.06, "max_grad_norm": 1.0,
        "adam_eps": 1e-6, "max_length": 1024},
    "docred-bert-base": {
        "model": "atlop", "encoder": "bert-base-cased", "loss": "ncrl", "shift": 0.05, "max_labels": 4,
        "lr_encoder": 5e-5, "lr_classifier": 1e-4, "batch_size": 4, "grad_accum": 1, "epochs": 8.0, "seed": 42,
        "warmup_ratio": 0.06, "max_grad_norm": 1.0, "adam_eps": 1e-6},
}
EVRT_WEIGHTS = {"redocred-docunet-roberta-large": 0.2, "redocred-kd-docre-roberta-large": 0.2, "docred-bert-base": 1.0}


@pytest.mark.parametrize("base", sorted(REFERENCE))
def test_the_new_presets_are_the_reference_scripts(base: str) -> None:
    vanilla, evrt = TrainConfig.from_file(f"{base}-vanilla"), TrainConfig.from_file(f"{base}-evrt")
    for cfg in (vanilla, evrt):
        assert {k: getattr(cfg, k) for k in REFERENCE[base]} == REFERENCE[base]
    assert not vanilla.evrt and evrt.evrt and evrt.alpha == evrt.beta == EVRT_WEIGHTS[base]
    assert (evrt.rcr_repr, evrt.rcr_reduction, evrt.pcr_form) == ("bl", "mean", "soft_bce")
    # the two files differ in the EVRT fields only
    differ = {k for k, v in vanilla.to_dict().items() if evrt.to_dict()[k] != v}
    assert differ <= {"evrt", "alpha", "beta"}


def test_table7_has_a_preset_for_every_model_encoder_and_variant() -> None:
    names = set(preset_names())
    for model in ("", "docunet-", "kd-docre-"):
        for encoder in ("bert-base", "roberta-large"):
            for variant in ("vanilla", "evrt"):
                assert f"redocred-{model}{encoder}-{variant}" in names


@pytest.fixture(scope="module")
def smoke():
    return bench_script("gpu_smoke")


@pytest.fixture(scope="module")
def tiny_setup(smoke, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    root = tmp_path_factory.mktemp("presets")
    docs, twins = root / "docs.json", root / "twins.json"
    docs.write_text(json.dumps(tiny_docs(4)))
    twins.write_text(json.dumps(tiny_docs(4, rename=True)))  # the same titles, other names
    words = tiny_docs(4) + tiny_docs(4, rename=True)
    return {"docs": docs, "twins": twins, "root": root, "bert": smoke.tiny_bert(root / "bert", words),
            "roberta": smoke.tiny_roberta(root / "roberta")}


def test_the_smoke_covers_every_paper_preset(smoke) -> None:
    assert set(smoke.paper_presets()) == {p for p in preset_names() if not p.startswith("cpu-")}
    assert len(smoke.paper_presets()) == 14


@pytest.mark.slow
@pytest.mark.parametrize("preset", [p for p in preset_names() if not p.startswith("cpu-")])
def test_every_paper_preset_trains_and_predicts_on_a_tiny_encoder(smoke, tiny_setup: dict[str, Path],
                                                                   preset: str) -> None:
    """The preset as it is (model, loss, markers, EVRT terms, optimizer groups, accumulation), its widths cut to
    a tiny encoder's, two steps on CPU, then predict with the run it wrote."""
    encoder = tiny_setup["roberta" if "roberta" in preset else "bert"]
    row = smoke.smoke_preset(preset, encoder, tiny_setup["docs"], tiny_setup["twins"], tiny_setup["root"], 2, "cpu",
                             tiny=True)
    assert row["ok"], row.get("error")
    run = tiny_setup["root"] / preset
    cfg = json.loads((run / "config.json").read_text())
    preset_cfg = TrainConfig.from_file(preset)
    # what the smoke changed is the width, the length of the run and where it runs; the rest is the preset's
    for field in ("model", "loss", "markers", "evrt", "alpha", "beta", "batch_size", "grad_accum", "lr_encoder",
                  "lr_classifier", "lr_grid", "max_labels", "shift", "seed"):
        assert cfg[field] == getattr(preset_cfg, field), field
    log = (run / "train.log").read_text().splitlines()
    assert len(log) == 2 and all(("clp" in ln) == preset_cfg.evrt for ln in log)
    assert row["predictions"] >= 0 and (run / "pred.json").is_file()


@pytest.mark.slow
def test_the_gpu_smoke_runs_on_cpu_with_torchrun(smoke, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """`make gpu-smoke` end to end on CPU: tiny encoders built, twins made, a preset, predict, torchrun x 2 (gloo)."""
    docs = tmp_path / "docs.json"
    docs.write_text(json.dumps(tiny_docs(6)))
    rc = smoke.main(["--docs", str(docs), "--n-docs", "4", "--steps", "2", "--device", "cpu", "--out",
                     str(tmp_path / "smoke"), "--presets", "redocred-docunet-bert-base-evrt,redocred-kd-docre-roberta-large-vanilla"])
    out = capsys.readouterr().out
    assert rc == 0, out
    report = json.loads((tmp_path / "smoke" / "smoke.json").read_text())
    assert report["failed"] == [] and report["tiny"] == {"bert": True, "roberta": True}
    assert [r["preset"] for r in report["presets"]] == ["redocred-docunet-bert-base-evrt",
                                                        "redocred-kd-docre-roberta-large-vanilla"]
    assert all(r["ok"] and r["passes_per_second"] > 0 for r in report["presets"])
    assert report["torchrun"]["ok"] and report["torchrun"]["processes"] == 2 and report["torchrun"]["device"] == "cpu"
    assert out.splitlines()[-1].startswith("2 of 2 presets passed, torchrun passed in ")
    # a failing preset is reported and sets the exit status
    rc = smoke.main(["--docs", str(docs), "--n-docs", "4", "--steps", "2", "--device", "cpu", "--no-torchrun",
                     "--out", str(tmp_path / "bad"), "--presets", "redocred-bert-base-vanilla",
                     "--bert", str(tmp_path / "no-such-encoder")])
    assert rc == 1
    assert json.loads((tmp_path / "bad" / "smoke.json").read_text())["failed"] == ["redocred-bert-base-vanilla"]
