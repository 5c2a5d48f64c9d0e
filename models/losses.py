"""Classification losses (ATLOP, NCRL), top-k decoding and the two EVRT consistency terms.

Every function takes logits of shape [pairs, 97] where class 0 is the threshold / "Na" class
and labels as a multi-hot float tensor of the same shape (class 0 set when a pair has no
relation). All losses are averaged over pairs.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

_BIG = 1e30


def atlop_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Adaptive thresholding: rank each positive class above TH, and TH above every negative."""
    logits = logits.float()
    th = torch.zeros_like(labels)
    th[:, 0] = 1.0
    pos = labels.clone()
    pos[:, 0] = 0.0
    pos_or_th = pos + th
    neg_or_th = 1.0 - pos
    loss_pos = -(F.log_softmax(logits - (1 - pos_or_th) * _BIG, dim=-1) * pos).sum(1)
    loss_th = -(F.log_softmax(logits - (1 - neg_or_th) * _BIG, dim=-1) * th).sum(1)
    return (loss_pos + loss_th).mean()


def _shifted_bce(x: torch.Tensor, y: torch.Tensor, shift: float, eps: float = 1e-8) -> torch.Tensor:
    """Binary cross-entropy of sigmoid(x) against y, with ASL's probability shift on the negative side.

    The negative probability 1 - sigmoid(x) is raised by ``shift`` (capped at 1), so negatives that
    are already below the threshold by a margin stop contributing: easy negatives are many here.
    """
    p = torch.sigmoid(x)
    p_neg = (1 - p + shift).clamp(max=1) if shift > 0 else 1 - p
    return -(y * torch.log(p.clamp(min=eps)) + (1 - y) * torch.log(p_neg.clamp(min=eps)))


def ncrl_loss(logits: torch.Tensor, labels: torch.Tensor, shift: float = 0.04) -> torch.Tensor:
    """NCRL (Zhou & Lee, IJCAI 2022) as the EVRT reference code uses it.

    Relation margins m_r = f_r - f_0 are trained with shifted BCE against the relation labels;
    the none class is regularised through its own margin f_0 - mean_r f_r against "no relation".
    Summed over classes, averaged over pairs.
    """
    logits = logits.float()
    rel_margin = logits[:, 1:] - logits[:, :1]
    loss = _shifted_bce(rel_margin, labels[:, 1:], shift).sum()
    na_margin = logits[:, 0] - logits[:, 1:].mean(-1)
    loss = loss + _shifted_bce(na_margin, labels[:, 0], shift).sum()
    return loss / max(labels.shape[0], 1)


def classification_loss(kind: str, logits: torch.Tensor, labels: torch.Tensor, shift: float = 0.04) -> torch.Tensor:
    if kind == "atlop":
        return atlop_loss(logits, labels)
    if kind == "mcce":  # DocuNet's and KD-DocRE's losses live with their models
        from models.docunet import mcce_loss

        return mcce_loss(logits, labels)
    if kind == "afl":
        from models.kd_docre import adaptive_focal_loss

        return adaptive_focal_loss(logits, labels)
    return ncrl_loss(logits, labels, shift)


def decode(logits: torch.Tensor, max_labels: int = 4) -> torch.Tensor:
    """Multi-hot predictions: classes scoring above TH, at most the top ``max_labels``; Na when none."""
    th = logits[:, :1]
    mask = logits > th
    if max_labels > 0:
        k = min(max_labels, logits.shape[1])
        kth = torch.topk(logits, k, dim=1).values[:, -1:]
        mask = mask & (logits >= kth)
    out = mask.float()
    out[:, 0] = (out[:, 1:].sum(1) == 0).float()
    return out


def relation_probs(logits: torch.Tensor) -> torch.Tensor:
    """P_r = sigmoid(f_r - f_0) for r = 1..96: the probability that r beats the threshold."""
    return torch.sigmoid(_margins(logits))


def rcr_loss(repr_a: torch.Tensor, repr_b: torch.Tensor, reduction: str = "mean") -> torch.Tensor:
    """L_rcr between the pair representations of original and twin.

    Which representation is the caller's choice (``rcr_repr``): the reference code compares ``bl``,
    the grouped bilinear input (emb x block dims: 49,152 for BERT-base), so only what the classifier
    sees must be name-invariant; ``[z_h; z_t]`` (2 x emb dims) asks that of every dimension of both
    sides, and at the same alpha pulled about 9-17 times harder (issue 14).

    ``"mean"``: mean squared difference over pairs AND dimensions, the scale of the reference code
    (``nn.MSELoss``), for which its alpha was chosen. ``"sum"``: the squared L2 distance per pair,
    averaged over pairs; it is ``dim`` times larger, and with alpha = 0.1 on ``[z_h; z_t]`` it
    squeezed the pair representations together and kept a CPU run on the all-"Na" plateau.
    """
    sq = (repr_a.float() - repr_b.float()) ** 2
    if reduction == "mean":
        return sq.mean()
    if reduction == "sum":
        return sq.sum(-1).mean()
    raise ValueError(f"rcr reduction {reduction!r}; use 'mean' or 'sum'")


def rcr_grouped_bilinear(zhzt_a: torch.Tensor, zhzt_b: torch.Tensor, block_size: int,
                         reduction: str = "mean") -> torch.Tensor:
    """:func:`rcr_loss` of ``bl``, the grouped bilinear input, computed from ``[z_h; z_t]`` without building bl.

    For each group g, bl holds the outer product of the blocks z_h[g] and z_t[g] (block x block
    numbers). With a, b the blocks of the original and c, d those of the twin,
    sum_ij (a_i b_j - c_i d_j)^2 = |a|^2 |b|^2 - 2 (a.c)(b.d) + |c|^2 |d|^2, so the squared distance
    of bl needs only per-group dot products: O(emb) per pair instead of O(emb x block), which kept
    an EVRT step about 10% dearer on CPU and costs GBs on a GPU (49,152 dims for BERT-base). The dot
    products are float64, because the three terms are large and their difference is small.
    """
    emb = zhzt_a.shape[1] // 2

    def blocks(z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z = z.double()
        return z[:, :emb].reshape(len(z), -1, block_size), z[:, emb:].reshape(len(z), -1, block_size)

    (a, b), (c, d) = blocks(zhzt_a), blocks(zhzt_b)

    def dot(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return (x * y).sum(-1)  # [pairs, groups]

    per_pair = (dot(a, a) * dot(b, b) - 2 * dot(a, c) * dot(b, d) + dot(c, c) * dot(d, d)).sum(-1)
    if reduction == "mean":
        return (per_pair.sum() / max(per_pair.numel() * emb * block_size, 1)).float()
    if reduction == "sum":
        return per_pair.mean().float()
    raise ValueError(f"rcr reduction {reduction!r}; use 'mean' or 'sum'")


def _margins(logits: torch.Tensor) -> torch.Tensor:
    """m_r = f_r - f_0 for r = 1..96: how far each relation's logit is above the threshold class."""
    logits = logits.float()
    return logits[:, 1:] - logits[:, :1]


def pcr_soft_bce(logits_a: torch.Tensor, logits_b: torch.Tensor) -> torch.Tensor:
    """L_pcr as the EVRT reference code computes it: 1/2 [BCE(c; sigmoid(b)) + BCE(b; sigmoid(c))].

    b and c are the margins of the two documents; BCE(x; t) is the binary cross-entropy of
    sigmoid(x) against the soft target t, and the targets are NOT detached, so each side is pulled
    towards the other through both terms. With P = sigmoid(b), Q = sigmoid(c) this equals
    1/2 [KL(P||Q) + KL(Q||P)] + 1/2 [H(P) + H(Q)]: half the paper's symmetric KL plus an entropy term
    that carries gradient (towards confident probabilities). Summed over relations, averaged over pairs.
    """
    b, c = _margins(logits_a), _margins(logits_b)
    term_1 = F.binary_cross_entropy_with_logits(c, torch.sigmoid(b), reduction="sum")
    term_2 = F.binary_cross_entropy_with_logits(b, torch.sigmoid(c), reduction="sum")
    return (term_1 + term_2) / 2 / max(b.shape[0], 1)


def pcr_sym_kl(logits_a: torch.Tensor, logits_b: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """L_pcr as the paper writes it: KL(P||Q) + KL(Q||P) between the Bernoulli [P_r, 1 - P_r] of the two documents.

    Summed over the 96 relations, averaged over pairs. Twice the reference code's KL part, and
    without its entropy term (see :func:`pcr_soft_bce`).
    """
    p = relation_probs(logits_a).clamp(eps, 1 - eps)
    q = relation_probs(logits_b).clamp(eps, 1 - eps)
    log_p, log_q = torch.log(p), torch.log(q)
    log_p1, log_q1 = torch.log1p(-p), torch.log1p(-q)
    kl_pq = p * (log_p - log_q) + (1 - p) * (log_p1 - log_q1)
    kl_qp = q * (log_q - log_p) + (1 - q) * (log_q1 - log_p1)
    return (kl_pq + kl_qp).sum(-1).mean()


def pcr_loss(form: str, logits_a: torch.Tensor, logits_b: torch.Tensor) -> torch.Tensor:
    """L_pcr in the configured form: ``"soft_bce"`` (reference code, the default) or ``"sym_kl"`` (paper)."""
    if form == "soft_bce":
        return pcr_soft_bce(logits_a, logits_b)
    if form == "sym_kl":
        return pcr_sym_kl(logits_a, logits_b)
    raise ValueError(f"pcr form {form!r}; use 'soft_bce' or 'sym_kl'")
