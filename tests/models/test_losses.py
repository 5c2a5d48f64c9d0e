"""Losses against their formulas on fixed tensors."""

from __future__ import annotations

import math

import pytest

pytestmark = pytest.mark.train

torch = pytest.importorskip("torch")

from models.losses import (  # noqa: E402
    atlop_loss,
    decode,
    ncrl_loss,
    pcr_loss,
    rcr_loss,
    relation_probs,
)


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def test_rcr_is_mean_squared_l2_over_pairs() -> None:
    a = torch.tensor([[1.0, 2.0, 0.0], [0.0, 0.0, 1.0]])
    b = torch.tensor([[0.0, 2.0, 2.0], [0.0, -1.0, 1.0]])
    # pair 0: 1 + 0 + 4 = 5; pair 1: 0 + 1 + 0 = 1; mean 3
    assert rcr_loss(a, b, "sum").item() == pytest.approx(3.0)
    assert rcr_loss(a, a, "sum").item() == 0.0


def test_rcr_default_is_mse_over_pairs_and_dims() -> None:
    # Regression: the per-pair sum made L_rcr dim x larger than the reference code's MSE, so
    # alpha = 0.1 dominated training (rcr ~24 vs clo ~4.7 at step 1) and the CPU EVRT run collapsed.
    a = torch.tensor([[1.0, 2.0, 0.0], [0.0, 0.0, 1.0]])
    b = torch.tensor([[0.0, 2.0, 2.0], [0.0, -1.0, 1.0]])
    assert rcr_loss(a, b).item() == pytest.approx(6.0 / 6)
    assert rcr_loss(a, b).item() == pytest.approx(torch.nn.functional.mse_loss(a, b).item())
    wide_a, wide_b = torch.zeros(4, 1536), torch.full((4, 1536), 0.5)
    assert rcr_loss(wide_a, wide_b).item() == pytest.approx(0.25)
    assert rcr_loss(wide_a, wide_b, "sum").item() == pytest.approx(0.25 * 1536)
    with pytest.raises(ValueError, match="rcr reduction"):
        rcr_loss(a, b, "max")


def test_pcr_is_symmetric_bernoulli_kl_summed_over_relations_averaged_over_pairs() -> None:
    la = torch.tensor([[0.5, 1.0, -2.0], [0.0, 0.3, 0.1]])
    lb = torch.tensor([[0.0, 0.0, 1.0], [1.0, 2.0, -1.0]])
    expected = 0.0
    for row_a, row_b in zip(la.tolist(), lb.tolist()):
        for r in (1, 2):
            p, q = _sigmoid(row_a[r] - row_a[0]), _sigmoid(row_b[r] - row_b[0])
            kl_pq = p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))
            kl_qp = q * math.log(q / p) + (1 - q) * math.log((1 - q) / (1 - p))
            expected += kl_pq + kl_qp
    expected /= 2
    assert pcr_loss(la, lb).item() == pytest.approx(expected, rel=1e-5)
    assert pcr_loss(la, lb).item() == pytest.approx(pcr_loss(lb, la).item(), rel=1e-6)
    assert pcr_loss(la, la).item() == pytest.approx(0.0, abs=1e-6)


def test_relation_probs_are_sigmoid_of_margin_to_threshold() -> None:
    logits = torch.tensor([[1.0, 3.0, 1.0, -1.0]])
    assert relation_probs(logits).tolist()[0] == pytest.approx([_sigmoid(2.0), 0.5, _sigmoid(-2.0)])


def test_ncrl_matches_its_formula() -> None:
    shift = 0.04
    logits = torch.tensor([[0.2, 1.5, -0.3, 0.0], [1.0, 0.5, 2.0, -1.0]])
    labels = torch.tensor([[0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]])

    def bce(x: float, y: float) -> float:
        p = _sigmoid(x)
        return -(y * math.log(p) + (1 - y) * math.log(min(1.0, 1 - p + shift)))

    total = 0.0
    for row, lab in zip(logits.tolist(), labels.tolist()):
        total += sum(bce(row[r] - row[0], lab[r]) for r in range(1, 4))
        total += bce(row[0] - sum(row[1:]) / 3, lab[0])
    assert ncrl_loss(logits, labels, shift).item() == pytest.approx(total / 2, rel=1e-5)


def test_ncrl_shift_zeroes_easy_negatives() -> None:
    # every relation far below the threshold and the pair labelled Na: only the (tiny) positive side remains
    logits = torch.tensor([[3.0, -3.0, -3.0]])
    labels = torch.tensor([[1.0, 0.0, 0.0]])
    na_term = -math.log(_sigmoid(6.0))
    assert ncrl_loss(logits, labels, 0.04).item() == pytest.approx(na_term, rel=1e-4)
    assert ncrl_loss(logits, labels, 0.0).item() == pytest.approx(na_term - 2 * math.log(1 - _sigmoid(-6.0)), rel=1e-4)


def test_atlop_loss_formula_and_direction() -> None:
    logits = torch.tensor([[0.0, 2.0, -1.0]])
    labels = torch.tensor([[0.0, 1.0, 0.0]])
    # positives + TH: softmax over {0, 2} picks class 1; TH + negatives: softmax over {0, -1} picks TH
    l1 = -math.log(math.exp(2) / (math.exp(2) + 1))
    l2 = -math.log(1 / (1 + math.exp(-1)))
    assert atlop_loss(logits, labels).item() == pytest.approx(l1 + l2, rel=1e-5)
    better = torch.tensor([[0.0, 4.0, -3.0]])
    assert atlop_loss(better, labels).item() < atlop_loss(logits, labels).item()
    assert labels[0, 0].item() == 0.0  # inputs untouched


def test_decode_top_k_above_threshold() -> None:
    logits = torch.tensor([[0.0, 5.0, 4.0, 3.0, 2.0, 1.0, -1.0], [9.0, 1.0, 2.0, 0.0, 0.0, 0.0, 0.0]])
    out = decode(logits, max_labels=4)
    assert out[0].tolist() == [0, 1, 1, 1, 1, 0, 0]  # five above TH, the best four kept
    assert out[1].tolist() == [1, 0, 0, 0, 0, 0, 0]
    assert decode(logits, max_labels=-1)[0].tolist() == [0, 1, 1, 1, 1, 1, 0]
    # as in ATLOP, the top-k runs over all classes, TH included: here only two relations beat TH
    assert decode(torch.tensor([[3.0, 5.0, 4.0, 1.0, 0.5]]), max_labels=4)[0].tolist() == [0, 1, 1, 0, 0]
