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
    logits = logits.float()
    return torch.sigmoid(logits[:, 1:] - logits[:, :1])


def rcr_loss(repr_a: torch.Tensor, repr_b: torch.Tensor, reduction: str = "mean") -> torch.Tensor:
    """L_rcr between the pair representations of original and twin.

    ``"mean"``: mean squared difference over pairs AND dimensions, the scale of the EVRT reference
    code (``nn.MSELoss``), for which its alpha = 0.1 was chosen. ``"sum"``: the squared L2 distance
    per pair, averaged over pairs; it is ``dim`` times larger (1,536 for MiniLM's [z_h; z_t]), and with
    alpha = 0.1 it squeezed the pair representations together and kept a CPU run on the all-"Na"
    plateau (README, "Why the EVRT runs predicted nothing").
    """
    sq = (repr_a.float() - repr_b.float()) ** 2
    if reduction == "mean":
        return sq.mean()
    if reduction == "sum":
        return sq.sum(-1).mean()
    raise ValueError(f"rcr reduction {reduction!r}; use 'mean' or 'sum'")


def pcr_loss(logits_a: torch.Tensor, logits_b: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """L_pcr: KL(P||Q) + KL(Q||P) between the Bernoulli [P_r, 1 - P_r] of the two documents.

    Summed over the 96 relations, averaged over pairs.
    """
    p = relation_probs(logits_a).clamp(eps, 1 - eps)
    q = relation_probs(logits_b).clamp(eps, 1 - eps)
    log_p, log_q = torch.log(p), torch.log(q)
    log_p1, log_q1 = torch.log1p(-p), torch.log1p(-q)
    kl_pq = p * (log_p - log_q) + (1 - p) * (log_p1 - log_q1)
    kl_qp = q * (log_q - log_p) + (1 - q) * (log_q1 - log_p1)
    return (kl_pq + kl_qp).sum(-1).mean()
