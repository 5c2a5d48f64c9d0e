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
    pcr_soft_bce,
    pcr_sym_kl,
    rcr_grouped_bilinear,
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


def _grouped_bl(zhzt: torch.Tensor, block: int) -> torch.Tensor:
    """bl as ATLOP builds it: per group, the outer product of the z_h and z_t blocks, flattened."""
    emb = zhzt.shape[1] // 2
    b1, b2 = zhzt[:, :emb].view(len(zhzt), -1, block), zhzt[:, emb:].view(len(zhzt), -1, block)
    return (b1.unsqueeze(3) * b2.unsqueeze(2)).reshape(len(zhzt), emb * block)


def test_rcr_on_bl_from_zhzt_equals_the_mse_of_bl_in_value_and_gradient() -> None:
    torch.manual_seed(0)
    za = torch.tanh(torch.randn(5, 2 * 24)).requires_grad_(True)  # emb 24, block 4: 6 groups
    zb = (za.detach() + 0.1 * torch.randn(5, 48)).requires_grad_(True)
    for reduction in ("mean", "sum"):
        direct = rcr_loss(_grouped_bl(za, 4), _grouped_bl(zb, 4), reduction)
        closed = rcr_grouped_bilinear(za, zb, 4, reduction)
        assert closed.item() == pytest.approx(direct.item(), rel=1e-6)
        g_direct = torch.autograd.grad(direct, [za, zb])
        g_closed = torch.autograd.grad(closed, [za, zb])
        for x, y in zip(g_closed, g_direct):
            assert torch.allclose(x, y, rtol=1e-5, atol=1e-6 * y.abs().max().item())
    # one pair, one group of two by hand: bl = [a1 b1, a1 b2, a2 b1, a2 b2]
    a, b = torch.tensor([[1.0, 2.0, 3.0, -1.0]]), torch.tensor([[0.0, 1.0, 1.0, 1.0]])
    bl_a, bl_b = [3.0, -1.0, 6.0, -2.0], [0.0, 0.0, 1.0, 1.0]
    expected = sum((x - y) ** 2 for x, y in zip(bl_a, bl_b)) / 4
    assert rcr_grouped_bilinear(a, b, 2).item() == pytest.approx(expected)
    assert rcr_grouped_bilinear(a, a, 2).item() == pytest.approx(0.0, abs=1e-12)


LA = torch.tensor([[0.5, 1.0, -2.0], [0.0, 0.3, 0.1]])
LB = torch.tensor([[0.0, 0.0, 1.0], [1.0, 2.0, -1.0]])


def _bernoulli_pairs() -> list[tuple[float, float]]:
    """(P, Q) = (sigmoid(b), sigmoid(c)) for every pair and relation of LA, LB, by hand."""
    return [(_sigmoid(ra[r] - ra[0]), _sigmoid(rb[r] - rb[0]))
            for ra, rb in zip(LA.tolist(), LB.tolist()) for r in (1, 2)]


def test_pcr_sym_kl_is_the_papers_symmetric_kl_summed_over_relations_averaged_over_pairs() -> None:
    expected = 0.0
    for p, q in _bernoulli_pairs():
        kl_pq = p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))
        kl_qp = q * math.log(q / p) + (1 - q) * math.log((1 - q) / (1 - p))
        expected += kl_pq + kl_qp
    expected /= 2  # two pairs
    assert pcr_sym_kl(LA, LB).item() == pytest.approx(expected, rel=1e-5)
    assert pcr_loss("sym_kl", LA, LB).item() == pytest.approx(expected, rel=1e-5)
    assert pcr_sym_kl(LA, LB).item() == pytest.approx(pcr_sym_kl(LB, LA).item(), rel=1e-6)
    assert pcr_sym_kl(LA, LA).item() == pytest.approx(0.0, abs=1e-6)


def test_pcr_soft_bce_is_the_reference_codes_half_sum_of_two_soft_bces() -> None:
    # 1/2 [BCE(c; P) + BCE(b; Q)], BCE(x; t) = -[t log sigmoid(x) + (1 - t) log(1 - sigmoid(x))]
    expected, kl_part, entropy_part = 0.0, 0.0, 0.0
    for p, q in _bernoulli_pairs():
        bce_c_p = -(p * math.log(q) + (1 - p) * math.log(1 - q))
        bce_b_q = -(q * math.log(p) + (1 - q) * math.log(1 - p))
        expected += (bce_c_p + bce_b_q) / 2
        kl_part += (p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))
                    + q * math.log(q / p) + (1 - q) * math.log((1 - q) / (1 - p)))
        entropy_part += -(p * math.log(p) + (1 - p) * math.log(1 - p)) - (q * math.log(q) + (1 - q) * math.log(1 - q))
    expected /= 2
    assert pcr_soft_bce(LA, LB).item() == pytest.approx(expected, rel=1e-5)
    assert pcr_loss("soft_bce", LA, LB).item() == pytest.approx(expected, rel=1e-5)
    # = 1/2 symKL + 1/2 [H(P) + H(Q)] (issue 14): half the paper's term plus an entropy term
    assert expected == pytest.approx((kl_part / 2 + entropy_part / 2) / 2, rel=1e-9)
    assert pcr_soft_bce(LA, LB).item() == pytest.approx(pcr_sym_kl(LA, LB).item() / 2 + entropy_part / 4, rel=1e-5)
    # unlike the KL, it is not 0 for identical documents: the entropy stays
    assert pcr_soft_bce(LA, LA).item() > 0.1
    with pytest.raises(ValueError, match="pcr form 'kl'"):
        pcr_loss("kl", LA, LB)


def test_pcr_soft_bce_targets_carry_gradient() -> None:
    # one pair, one relation, Na logit 0: b = f_a, c = f_b. By hand, with P = sigmoid(b), Q = sigmoid(c):
    # d/db 1/2 [BCE(c; P) + BCE(b; Q)] = 1/2 [(P - Q) - P (1 - P) c]. Detached targets would give 1/2 (P - Q).
    b, c = 0.7, -1.3
    la = torch.tensor([[0.0, b]], requires_grad=True)
    lb = torch.tensor([[0.0, c]], requires_grad=True)
    pcr_soft_bce(la, lb).backward()
    p, q = _sigmoid(b), _sigmoid(c)
    assert la.grad[0, 1].item() == pytest.approx(0.5 * ((p - q) - p * (1 - p) * c), rel=1e-5)
    assert lb.grad[0, 1].item() == pytest.approx(0.5 * ((q - p) - q * (1 - q) * b), rel=1e-5)
    assert abs(la.grad[0, 1].item() - 0.5 * (p - q)) > 0.05


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
