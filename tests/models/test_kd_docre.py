"""KD-DocRE: the adaptive focal loss, masked axial attention, its pair representation, training, EVRT, > 42 entities."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from envbench.core.errors import EnvbenchError
from models.config import TrainConfig
from tests.models.conftest import make_tiny_encoder, tiny_docs
from tests.models.grid_helpers import (
    CAP,
    fixed_head_inputs,
    many_entities_doc,
    no_encoder,
    sample_world_features,
)

pytestmark = pytest.mark.train

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from models.data import build_features, collate  # noqa: E402
from models.encoder import load_encoder, load_tokenizer  # noqa: E402
from models.grid import gather_pairs, grid_size, grouped_bilinear, pair_rows, scatter_cells  # noqa: E402
from models.kd_docre import AxialLayer, AxialTransformer, KDDocRE, adaptive_focal_loss  # noqa: E402
from models.losses import classification_loss, rcr_loss  # noqa: E402
from tests.models.test_atlop import _train  # noqa: E402  (the tiny-model training loop)


def _model(encoder_dir: Path) -> KDDocRE:
    torch.manual_seed(0)
    return KDDocRE(load_encoder(str(encoder_dir)), emb_size=32, block_size=8, layers=2, heads=2)


def _sig(x: float) -> float:
    return 1 / (1 + math.exp(-x))


# ---------------------------------------------------------------------------------- the loss
def test_adaptive_focal_loss_is_the_official_codes_form() -> None:
    logits = torch.tensor([[0.5, 2.0, -1.0, 0.3], [1.0, 0.2, -0.5, 1.5], [0.0, 1.0, -1.0, 0.2]])
    labels = torch.tensor([[0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 1.0, 0.0]])
    e = math.exp

    def pos(margin: float, gamma: float) -> float:  # -(1 + (1 - P)^gamma) log P, P = sigmoid(f_r - f_TH)
        p = _sig(margin)
        return -(1 + (1 - p) ** gamma) * math.log(p)

    def expected(gamma: float) -> float:
        rows = [
            pos(1.5, gamma) - math.log(e(0.5) / (e(0.5) + e(-1.0) + e(0.3))),  # TH above both negatives
            -math.log(e(1.0) / (e(1.0) + e(0.2) + e(-0.5) + e(1.5))),  # no relation: only TH vs negatives
            pos(1.0, gamma) + pos(-1.0, gamma) - math.log(1 / (1 + e(0.2))),  # two gold relations, one negative
        ]
        return sum(rows) / 3

    assert adaptive_focal_loss(logits, labels).item() == pytest.approx(expected(1.0), rel=1e-6)
    assert classification_loss("afl", logits, labels).item() == pytest.approx(expected(1.0), rel=1e-6)
    assert adaptive_focal_loss(logits, labels, gamma=2.0).item() == pytest.approx(expected(2.0), rel=1e-6)
    # the "1 +" of the code: a confident gold relation keeps weight ~1 (the paper's printed form would give ~0)
    sure = torch.tensor([[0.0, 8.0]])
    assert adaptive_focal_loss(sure, torch.tensor([[0.0, 1.0]])).item() == pytest.approx(
        -math.log(_sig(8.0)) * (2 - _sig(8.0)) - math.log(1.0), rel=1e-4)


def test_config_checks_the_axial_fields() -> None:
    TrainConfig(model="kd-docre", loss="afl").validate()
    with pytest.raises(EnvbenchError, match="axial_width 10 must be at least 0, and axial_width a multiple of axial_heads 8"):
        TrainConfig(model="kd-docre", axial_width=10).validate()
    with pytest.raises(EnvbenchError, match=r"axial width \(12\) divisible by axial_heads \(8\)"):
        KDDocRE(no_encoder(12), emb_size=12, block_size=4)


# ---------------------------------------------------------------------------------- masking and axes
def _grid(n_real: list[int], size: int, width: int = 8, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    mask = torch.zeros(len(n_real), size, size)
    for i, n in enumerate(n_real):
        mask[i, :n, :n] = 1
    return torch.randn(len(n_real), size, size, width, generator=g) * mask[..., None], mask


def test_axial_attention_ignores_padded_cells() -> None:
    torch.manual_seed(0)
    net = AxialTransformer(8, layers=2, heads=2).eval()
    x, mask = _grid([4, 6], 6)
    with torch.no_grad():
        clean = net(x, mask)
        # noise in the padded cells of the input and of every layer's output
        hooks = [m.register_forward_hook(lambda _, inp, out: out + torch.randn(out.shape) * 10 * (1 - inp[1][..., None]))
                 for m in net.modules() if isinstance(m, AxialLayer)]
        noisy = net(x + torch.randn(x.shape) * 10 * (1 - mask[..., None]), mask)
        for h in hooks:
            h.remove()
    real = mask[..., None]
    assert torch.allclose(clean * real, noisy * real, atol=1e-5)  # the last hook leaves noise in the padding itself
    assert (clean * (1 - real)).abs().max() == 0
    # and the same 4-entity document in a grid of 4 and of 7
    x4, m4 = _grid([4], 4)
    x7, m7 = torch.zeros(1, 7, 7, 8), torch.zeros(1, 7, 7)
    x7[:, :4, :4], m7[:, :4, :4] = x4, m4
    with torch.no_grad():
        assert torch.allclose(net(x4, m4), net(x7, m7)[:, :4, :4], atol=1e-5)


def test_each_cell_attends_along_its_row_and_its_column() -> None:
    torch.manual_seed(0)
    layer = AxialLayer(8, heads=2).eval()
    x, mask = _grid([5], 5)
    y = x.clone()
    y[0, 1, 2] += 1.0  # change the pair (1, 2)
    with torch.no_grad():
        changed = (layer(x, mask) - layer(y, mask)).abs().sum(-1)[0] > 1e-6
    expected = torch.zeros(5, 5, dtype=torch.bool)
    expected[1, :] = True  # the same head
    expected[:, 2] = True  # the same tail
    assert torch.equal(changed, expected)


# ---------------------------------------------------------------------------------- pair representation (L_rcr)
def test_pair_representation_is_the_axial_feature_the_classifier_reads() -> None:
    """L_rcr compares ``bl``: the pair's feature after axial attention (+ residual), the classifier's input."""
    torch.manual_seed(0)
    model = KDDocRE(no_encoder(8), emb_size=8, block_size=4, layers=1, heads=2).eval()
    counts = [3, 2]
    hs, ts, rs, hts = fixed_head_inputs(counts, 8)
    with torch.no_grad():
        out = model.head(hs, ts, rs, counts, hts)
        zh = torch.tanh(model.head_extractor(torch.cat([hs, rs], dim=1)))  # every cell, diagonal included
        zt = torch.tanh(model.tail_extractor(torch.cat([ts, rs], dim=1)))
        grid, mask = scatter_cells(model.projection(grouped_bilinear(zh, zt, 4)), counts, grid_size(counts))
        feature = gather_pairs(model.grid_net(grid, mask) + grid, hts)
    rows = pair_rows(hts, counts)
    assert out["bl"].shape == (8, 8) and torch.allclose(out["bl"], feature, atol=1e-6)
    assert torch.allclose(out["logits"], model.classifier(out["bl"]), atol=1e-6)  # what the classifier sees
    assert torch.allclose(out["zhzt"], torch.cat([zh[rows], zt[rows]], dim=1))
    # a twin with other entity vectors: L_rcr is the MSE of the two features, and trains the axial layers too
    model.train()
    hs2, ts2, _, _ = fixed_head_inputs(counts, 8, seed=1)
    a, b = model.head(hs, ts, rs, counts, hts)["bl"], model.head(hs2, ts2, rs, counts, hts)["bl"]
    loss = rcr_loss(a, b)
    assert loss.item() == pytest.approx(((a - b) ** 2).mean().item(), rel=1e-6) and loss.item() > 0
    loss.backward()
    assert model.projection.weight.grad.abs().sum() > 0 and model.grid_net.layers[0].row.q.weight.grad.abs().sum() > 0


# ---------------------------------------------------------------------------------- on a tiny BERT
def test_loss_falls_on_the_sample_world(tmp_path: Path) -> None:
    enc_dir, feats = sample_world_features(tmp_path)
    losses = _train(_model(enc_dir).train(), feats, adaptive_focal_loss, steps=8, batches=2)
    assert losses[-1] < 0.7 * losses[0] and losses[-2] < 0.7 * losses[1]


def test_more_entities_than_the_official_cap_train_and_predict(tmp_path: Path) -> None:
    from models.predict import infer

    crowd, small = many_entities_doc(CAP + 3), tiny_docs(1)[0]
    enc_dir = make_tiny_encoder(tmp_path / "enc", [crowd, small])
    feats, _ = build_features([crowd, small], load_tokenizer(str(enc_dir)))
    model = _model(enc_dir).train()
    losses = _train(model, feats, adaptive_focal_loss, steps=2, batches=1)
    assert all(math.isfinite(x) for x in losses)
    preds = infer(model, feats, batch_size=2)
    assert all(p["title"] in {"Crowd", "Doc 0"} and p["h_idx"] != p["t_idx"] for p in preds)
    model.eval()
    with torch.no_grad():
        both, alone = collate(feats), collate(feats[1:])
        out_both = model(both["input_ids"], both["attention_mask"], both["entity_pos"], both["hts"])["logits"]
        out_alone = model(alone["input_ids"], alone["attention_mask"], alone["entity_pos"], alone["hts"])["logits"]
    assert out_both.shape[0] == 45 * 44 + 6
    assert torch.allclose(out_both[45 * 44 :], out_alone, atol=1e-4)  # grid 3 alone, 45 beside the crowd


def test_evrt_trains_with_twins_and_predicts(tmp_path: Path, tiny_encoder: Path) -> None:
    from click.testing import CliRunner

    from envbench.cli import cli

    for name, docs in (("train", tiny_docs(4)), ("twins", tiny_docs(4, rename=True)), ("dev", tiny_docs(2))):
        (tmp_path / f"{name}.json").write_text(json.dumps(docs))
    run = tmp_path / "run"
    args = ["train", "--model", "kd-docre", "--loss", "afl", "--train", str(tmp_path / "train.json"),
            "--dev", str(tmp_path / "dev.json"), "--twins", str(tmp_path / "twins.json"), "--evrt",
            "--encoder", str(tiny_encoder), "--out", str(run), "--epochs", "2",
            "--set", "emb_size=32", "--set", "block_size=8", "--set", "batch_size=2", "--set", "progress=false",
            "--set", "lr_encoder=1e-3", "--set", "lr_classifier=1e-3", "--set", "dtype=fp32",
            "--set", "axial_layers=2", "--set", "axial_heads=2"]
    r = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    lines = (run / "train.log").read_text().splitlines()
    assert len(lines) == 4 and all(all(f" {k} " in ln for k in ("clo", "clp", "rcr", "pcr")) for ln in lines)
    parts = [dict(zip(ln.split()[4::2], ln.split()[5::2])) for ln in lines]
    assert all(math.isfinite(float(p[k])) for p in parts for k in ("clo", "clp", "rcr", "pcr"))
    assert float(parts[0]["rcr"]) > 0
    assert float(parts[-1]["loss"]) < float(parts[0]["loss"])
    assert json.loads((run / "best" / "config.json").read_text())["model"] == "kd-docre"
    groups = torch.load(run / "last" / "state.pt", weights_only=True)["optimizer"]["param_groups"]
    assert [g["initial_lr"] for g in groups] == [1e-3, 1e-3, 1e-3]  # lr_grid 0 = lr_classifier
    pred = tmp_path / "pred.json"
    r = CliRunner().invoke(cli, ["predict", "--run", str(run), "--docs", str(tmp_path / "dev.json"), "--out", str(pred)])
    assert r.exit_code == 0, r.output
    assert all(set(p) == {"title", "h_idx", "t_idx", "r"} for p in json.loads(pred.read_text()))


@pytest.mark.parametrize("preset, encoder_rate, classifier_rate", [
    ("redocred-kd-docre-bert-base-vanilla", 3e-5, 1e-4), ("redocred-kd-docre-bert-base-evrt", 3e-5, 1e-4),
    ("cpu-minilm-kd-docre-vanilla", 1e-4, 5e-4), ("cpu-minilm-kd-docre-evrt", 1e-4, 5e-4),
])
def test_kd_docre_presets_train_the_axial_attention_at_the_encoder_rate(
        tiny_encoder: Path, preset: str, encoder_rate: float, classifier_rate: float) -> None:
    """As tonytan48/KD-DocRE: only parameters named extractor, bilinear, classifier or projection get
    --classifier_lr; the axial transformer trains with the encoder."""
    from models.checkpoints import build_model
    from models.train import optimizer_groups

    cfg = TrainConfig.from_file(preset).with_overrides(["emb_size=32", "block_size=8", "axial_heads=2"])
    model = build_model(cfg, str(tiny_encoder), weights=False)
    groups = {g["name"]: (g["lr"], sorted({n.split(".")[0] for n, _ in g["params"]})) for g in optimizer_groups(model, cfg)}
    assert groups == {"encoder": (encoder_rate, ["encoder"]),
                      "classifier": (classifier_rate, ["classifier", "head_extractor", "projection", "tail_extractor"]),
                      "grid": (encoder_rate, ["grid_net"])}
    axial = [n for n, _ in model.named_parameters() if n.startswith("grid_net.")]
    assert len(axial) == 12 * cfg.axial_layers  # per layer: q, kv, out (weight, bias) of rows and of columns, ffn, norm
    assert {n for n, _ in dict((g["name"], g) for g in optimizer_groups(model, cfg))["grid"]["params"]} == set(axial)
