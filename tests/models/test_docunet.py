"""DocuNet: its loss and decoding, the masked U-Net, its pair representation, training, EVRT, > 42 entities."""

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
from models.docunet import DocuNet, DoubleConv, MaskedBatchNorm2d, UNet, mcce_loss  # noqa: E402
from models.encoder import load_encoder, load_tokenizer  # noqa: E402
from models.grid import gather_pairs, grouped_bilinear, pair_rows  # noqa: E402
from models.losses import classification_loss, decode, rcr_loss  # noqa: E402
from tests.models.test_atlop import _train  # noqa: E402  (the tiny-model training loop)


def _model(encoder_dir: Path) -> DocuNet:
    torch.manual_seed(0)
    return DocuNet(load_encoder(str(encoder_dir)), emb_size=32, block_size=8, width=8, unet_out=16)


# ---------------------------------------------------------------------------------- loss and decoding
def test_mcce_matches_its_formula() -> None:
    logits = torch.tensor([[0.0, 2.0, -1.0, 0.5], [0.0, -0.3, 0.2, -2.0], [1.0, 2.0, 0.0, 1.5]])
    labels = torch.tensor([[0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 1.0]])
    e = math.exp
    by_hand = [
        math.log(1 + e(-1.0) + e(0.5)) + math.log(1 + e(-2.0)),  # relation 1 gold: the others below 0, it above
        math.log(1 + e(-0.3) + e(0.2) + e(-2.0)),  # no relation: only the negative side
        math.log(1 + e(0.0 - 1.0)) + math.log(1 + e(-(2.0 - 1.0)) + e(-(1.5 - 1.0))),  # margins to a nonzero class 0
    ]
    assert mcce_loss(logits, labels).item() == pytest.approx(sum(by_hand) / 3, rel=1e-6)
    assert classification_loss("mcce", logits, labels).item() == pytest.approx(sum(by_hand) / 3, rel=1e-6)
    better = torch.tensor([[0.0, 5.0, -4.0, -3.0]])
    assert mcce_loss(better, labels[:1]) < mcce_loss(logits[:1], labels[:1])


def test_decoding_is_above_zero_and_at_most_three() -> None:
    logits = torch.tensor([[0.0, 3.0, 2.0, 1.0, 0.5, -1.0], [0.0, -0.1, -2.0, -3.0, -0.5, -1.0]])
    assert decode(logits, max_labels=3).tolist() == [[0, 1, 1, 1, 0, 0], [1, 0, 0, 0, 0, 0]]


def test_config_knows_the_model_and_checks_its_fields() -> None:
    TrainConfig(model="docunet", loss="mcce", max_labels=3).validate()
    with pytest.raises(EnvbenchError, match="model='unet'; use 'atlop' or 'docunet' or 'kd-docre'"):
        TrainConfig(model="unet").validate()
    with pytest.raises(EnvbenchError, match="unet_width 7 must be even and at least 2"):
        TrainConfig(model="docunet", unet_width=7).validate()
    assert TrainConfig().model == "atlop"  # old runs' config.json (no `model`) load as ATLOP
    with pytest.raises(EnvbenchError, match="even unet_width >= 2"):
        DocuNet(no_encoder(8), emb_size=8, block_size=4, width=3)


# ---------------------------------------------------------------------------------- masking
def test_masked_batchnorm_is_batchnorm_on_a_full_grid() -> None:
    torch.manual_seed(0)
    x = torch.randn(2, 4, 6, 6) * 3 + 1
    ours, ref = MaskedBatchNorm2d(4), torch.nn.BatchNorm2d(4)
    assert torch.allclose(ours(x, torch.ones(2, 1, 6, 6)), ref(x), atol=1e-5)
    assert torch.allclose(ours.running_mean, ref.running_mean, atol=1e-6)
    assert torch.allclose(ours.running_var, ref.running_var, atol=1e-5)
    # on a padded grid it equals BatchNorm over the real cells alone
    mask = torch.zeros(2, 1, 6, 6)
    mask[0, :, :4, :4] = 1
    mask[1, :, :6, :6] = 1
    real = torch.cat([x[0, :, :4, :4].reshape(4, -1), x[1].reshape(4, -1)], dim=1)
    y = MaskedBatchNorm2d(4)(x, mask)
    expected = (real - real.mean(1, keepdim=True)) / torch.sqrt(real.var(1, unbiased=False, keepdim=True) + 1e-5)
    assert torch.allclose(torch.cat([y[0, :, :4, :4].reshape(4, -1), y[1].reshape(4, -1)], dim=1), expected, atol=1e-5)
    assert (y[0, :, 4:, :] == 0).all() and (y[0, :, :, 4:] == 0).all()


def _grid(n_real: list[int], size: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(len(n_real), 3, size, size, generator=g)
    mask = torch.zeros(len(n_real), 1, size, size)
    for i, n in enumerate(n_real):
        mask[i, :, :n, :n] = 1
    return x * mask, mask


@pytest.mark.parametrize("training", [True, False])
def test_unet_output_does_not_change_when_padded_cells_hold_noise(training: bool) -> None:
    torch.manual_seed(0)
    unet = UNet(3, 8, 16)
    x, mask = _grid([5, 8], 8)
    unet.train()
    for _ in range(2):  # non-trivial running statistics for the eval case
        unet(x, mask)
    unet.train(training)
    noise = torch.randn(x.shape) * 10 * (1 - mask)
    with torch.no_grad():
        clean = unet(x, mask)
        # noise in the padded cells of the input and of every conv block's output, not only at the input
        hooks = [m.register_forward_hook(lambda _, inp, out: out + torch.randn(out.shape) * 10 * (1 - inp[1]))
                 for m in unet.modules() if isinstance(m, DoubleConv)]
        noisy = unet(x + noise, mask)
        for h in hooks:
            h.remove()
    assert clean.shape == (2, 16, 8, 8)
    assert torch.allclose(clean, noisy, atol=1e-5)
    assert (clean * (1 - mask)).abs().max() == 0  # padded cells come out as 0
    assert (clean[0, :, :5, :5].abs().sum() > 0) and (clean[1].abs().sum() > 0)


@pytest.mark.parametrize("training", [True, False])
def test_unet_output_does_not_depend_on_the_amount_of_padding(training: bool) -> None:
    # a 5-entity document alone (grid 8) and beside a 12-entity one (grid 12): the same output for it
    torch.manual_seed(0)
    unet = UNet(3, 8, 16).train(training)
    x8, m8 = _grid([5], 8)
    x12, m12 = torch.zeros(1, 3, 12, 12), torch.zeros(1, 1, 12, 12)
    x12[..., :8, :8], m12[..., :8, :8] = x8, m8
    with torch.no_grad():
        a, b = unet(x8, m8), unet(x12, m12)
    assert torch.allclose(a[..., :5, :5], b[..., :5, :5], atol=1e-5)


# ---------------------------------------------------------------------------------- pair representation (L_rcr)
def test_pair_representation_is_the_bilinear_input_of_z_h_and_z_t() -> None:
    """L_rcr compares ``bl``: the grouped bilinear input built from z_h = tanh(W_h [e_h; u_ht]) and z_t."""
    torch.manual_seed(0)
    model = DocuNet(no_encoder(8), emb_size=8, block_size=4, width=4, unet_out=6).eval()
    counts = [3, 2]
    hs, ts, rs, hts = fixed_head_inputs(counts, 8)
    with torch.no_grad():
        out = model.head(hs, ts, rs, counts, hts)
        u = gather_pairs(model.grid_net(rs, counts), hts)  # the U-Net output at each pair
        rows = pair_rows(hts, counts)
        zh = torch.tanh(model.head_extractor(torch.cat([hs[rows], u], dim=1)))
        zt = torch.tanh(model.tail_extractor(torch.cat([ts[rows], u], dim=1)))
    pairs = 3 * 2 + 2 * 1
    assert out["zhzt"].shape == (pairs, 16) and torch.allclose(out["zhzt"], torch.cat([zh, zt], dim=1))
    groups = [(zh[:, g * 4 : (g + 1) * 4, None] * zt[:, None, g * 4 : (g + 1) * 4]).reshape(pairs, 16) for g in (0, 1)]
    assert torch.allclose(out["bl"], torch.cat(groups, dim=1), atol=1e-6)
    assert torch.allclose(out["bl"], grouped_bilinear(zh, zt, 4), atol=1e-6)
    assert (out["logits"][:, 0] == 0).all()  # the fixed threshold
    assert torch.allclose(out["logits"][:, 1:], model.bilinear(out["bl"]), atol=1e-6)  # what the classifier sees
    # a twin: the same contexts, other entity vectors (renamed entities); L_rcr is the MSE of the two bl
    model.train()
    hs2, ts2, _, _ = fixed_head_inputs(counts, 8, seed=1)
    a, b = model.head(hs, ts, rs, counts, hts)["bl"], model.head(hs2, ts2, rs, counts, hts)["bl"]
    loss = rcr_loss(a, b)
    assert loss.item() == pytest.approx(((a - b) ** 2).mean().item(), rel=1e-6) and loss.item() > 0
    loss.backward()
    assert model.head_extractor.weight.grad.abs().sum() > 0 and model.grid_net.proj.weight.grad.abs().sum() > 0
    assert rcr_loss(a, a).item() == 0.0


# ---------------------------------------------------------------------------------- on a tiny BERT
def test_loss_falls_on_the_sample_world(tmp_path: Path) -> None:
    enc_dir, feats = sample_world_features(tmp_path)
    # the cross-entropy starts near log(97) with all 96 relations at the threshold and falls slowly at first
    losses = _train(_model(enc_dir).train(), feats, mcce_loss, steps=20, batches=2)
    assert losses[-1] < 0.7 * losses[0] and losses[-2] < 0.7 * losses[1]


def test_more_entities_than_the_official_cap_train_and_predict(tmp_path: Path) -> None:
    from models.predict import infer

    crowd, small = many_entities_doc(CAP + 3), tiny_docs(1)[0]
    enc_dir = make_tiny_encoder(tmp_path / "enc", [crowd, small])
    feats, _ = build_features([crowd, small], load_tokenizer(str(enc_dir)))
    assert len(feats[0].entity_pos) == 45 and feats[0].labels[feats[0].hts.index((44, 0))]  # a label past the cap
    model = _model(enc_dir).train()
    losses = _train(model, feats, mcce_loss, steps=2, batches=1)
    assert all(math.isfinite(x) for x in losses)
    preds = infer(model, feats, batch_size=2, max_labels=3)
    assert all(p["title"] in {"Crowd", "Doc 0"} and p["h_idx"] != p["t_idx"] for p in preds)
    # the small document's logits are the same alone and beside the 45-entity one (grid 8 vs 48)
    model.eval()
    with torch.no_grad():
        both = collate(feats)
        alone = collate(feats[1:])
        out_both = model(both["input_ids"], both["attention_mask"], both["entity_pos"], both["hts"])["logits"]
        out_alone = model(alone["input_ids"], alone["attention_mask"], alone["entity_pos"], alone["hts"])["logits"]
    assert out_both.shape[0] == 45 * 44 + 6
    assert torch.allclose(out_both[45 * 44 :], out_alone, atol=1e-4)


def test_evrt_trains_with_twins_and_predicts(tmp_path: Path, tiny_encoder: Path) -> None:
    from click.testing import CliRunner

    from envbench.cli import cli

    for name, docs in (("train", tiny_docs(4)), ("twins", tiny_docs(4, rename=True)), ("dev", tiny_docs(2))):
        (tmp_path / f"{name}.json").write_text(json.dumps(docs))
    run = tmp_path / "run"
    args = ["train", "--model", "docunet", "--loss", "mcce", "--train", str(tmp_path / "train.json"),
            "--dev", str(tmp_path / "dev.json"), "--twins", str(tmp_path / "twins.json"), "--evrt",
            "--encoder", str(tiny_encoder), "--out", str(run), "--epochs", "2",
            "--set", "emb_size=32", "--set", "block_size=8", "--set", "batch_size=2", "--set", "progress=false",
            "--set", "lr_encoder=1e-3", "--set", "lr_classifier=1e-3", "--set", "lr_grid=2e-3", "--set", "dtype=fp32",
            "--set", "unet_width=8", "--set", "unet_out=16", "--set", "max_labels=3"]
    r = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    lines = (run / "train.log").read_text().splitlines()
    assert len(lines) == 4 and all(all(f" {k} " in ln for k in ("clo", "clp", "rcr", "pcr")) for ln in lines)
    parts = [dict(zip(ln.split()[4::2], ln.split()[5::2])) for ln in lines]
    assert all(math.isfinite(float(p[k])) for p in parts for k in ("clo", "clp", "rcr", "pcr"))
    assert float(parts[0]["rcr"]) > 0
    assert float(parts[-1]["loss"]) < float(parts[0]["loss"])
    assert json.loads((run / "best" / "config.json").read_text())["model"] == "docunet"
    groups = torch.load(run / "last" / "state.pt", weights_only=False)["optimizer"]["param_groups"]
    assert [g["initial_lr"] for g in groups] == [1e-3, 1e-3, 2e-3]  # encoder, classifier, grid (U-Net)
    pred = tmp_path / "pred.json"
    r = CliRunner().invoke(cli, ["predict", "--run", str(run), "--docs", str(tmp_path / "dev.json"), "--out", str(pred)])
    assert r.exit_code == 0, r.output
    assert all(set(p) == {"title", "h_idx", "t_idx", "r"} for p in json.loads(pred.read_text()))
