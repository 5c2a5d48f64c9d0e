"""KD-DocRE (Tan et al., Findings of ACL 2022), the annotated-data stage, over any BERT-family encoder.

The EVRT paper trains on annotated data only, so this is KD-DocRE's first stage: axial attention
over the pair grid with the adaptive focal loss. Knowledge distillation from distantly supervised
data (its second stage) needs data that is not here and is not built.

1. **Pair features.** ATLOP's entity embeddings and localized context (the same ``pooled`` function)
   for every cell (h, t) of a document's E x E grid, diagonal included as in the official code;
   z_h = tanh(W_h [e_h; c_ht]), z_t = tanh(W_t [e_t; c_ht]); their grouped bilinear input (block 64)
   projected (no bias) to ``width`` (the encoder's hidden size officially).
2. **Axial attention.** ``layers`` layers (6 officially), each: every cell attends along its row
   (same head h) and along its column (same tail t) with ``heads`` heads (8), the two summed and added
   to the input, then a linear map and LayerNorm, as the official layer (no activation, dropout 0).
   The stack's output is added to its input (the official residual) and a linear classifier scores
   the 97 classes (class 0 = the adaptive threshold TH).
3. **Loss.** :func:`adaptive_focal_loss`, in the form the official code computes.

Masking: the grid is sized per batch (``models.grid``), padded cells hold zeros, are never attended
to (the official code attends to them: it pads every document to 42 entities and masks nothing) and
come out as zeros, so a document's logits do not depend on the padding. A cell with no real cell
to attend to (none exists for a real cell) would get a zero update rather than NaN.

L_rcr (EVRT): ``bl`` is the classifier's input for each pair, the axial-attention feature
[pairs, width], which already mixes in the pair's row and column; ``zhzt`` is [z_h; z_t], before
the grid. (The key is named ``bl`` in every model: "what the classifier sees".)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from envbench.core.errors import EnvbenchError
from models.atlop import ATLOP, resolve_emb_size
from models.grid import (
    GridModel,
    gather_pairs,
    grid_size,
    grouped_bilinear,
    pair_rows,
    scatter_cells,
)

_BIG = 1e30


def adaptive_focal_loss(logits: torch.Tensor, labels: torch.Tensor, gamma: float = 1.0) -> torch.Tensor:
    """KD-DocRE's adaptive focal loss as its official code computes it, averaged over pairs.

    Each gold relation r is ranked against the threshold class alone, weighted by (1 + (1 - P_r)^gamma)
    with P_r = sigmoid(f_r - f_TH): -(1 + (1 - P_r)^gamma) log P_r (the weight is not detached). Then
    ATLOP's second term ranks TH above every negative class: -log softmax over {TH} + negatives, at TH.
    The paper prints the weight without the "1 +" (pure focal); the code's form is the one used here.
    """
    logits = logits.float()
    pos = labels[:, 1:]
    log_p = F.logsigmoid(logits[:, 1:] - logits[:, :1])
    weight = 1 + (1 - log_p.exp()) ** gamma
    loss_pos = -(weight * log_p * pos).sum(1)
    th_or_neg = torch.cat([torch.ones_like(pos[:, :1]), 1 - pos], dim=1)
    loss_th = -F.log_softmax(logits - (1 - th_or_neg) * _BIG, dim=-1)[:, 0]
    return (loss_pos + loss_th).mean()


class AxialAttention(nn.Module):
    """Multi-head self-attention within each sequence of [S, N, D], keys limited by ``key_mask`` [S, N]."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(width, width, bias=False)
        self.kv = nn.Linear(width, 2 * width, bias=False)
        self.out = nn.Linear(width, width)

    def forward(self, x: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
        s, n, d = x.shape
        h = self.heads
        q = self.q(x).view(s, n, h, d // h).transpose(1, 2)  # [S, heads, N, d/heads]
        k, v = self.kv(x).view(s, n, 2, h, d // h).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-1, -2)) * (d // h) ** -0.5
        keys = key_mask[:, None, None, :]
        weights = scores.masked_fill(~keys, torch.finfo(scores.dtype).min).softmax(-1) * keys
        return self.out((weights @ v).transpose(1, 2).reshape(s, n, d))


class AxialLayer(nn.Module):
    """x <- LayerNorm(W (x + row attention(x) + column attention(x))), zero on padded cells."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.row = AxialAttention(width, heads)
        self.col = AxialAttention(width, heads)
        self.ffn = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, n, _, d = x.shape
        keys = mask > 0
        row = self.row(x.reshape(b * n, n, d), keys.reshape(b * n, n)).view(b, n, n, d)
        col = self.col(x.transpose(1, 2).reshape(b * n, n, d), keys.transpose(1, 2).reshape(b * n, n))
        x = x + row + col.view(b, n, n, d).transpose(1, 2)
        return self.norm(self.ffn(x)) * mask.unsqueeze(-1)


class AxialTransformer(nn.Module):
    def __init__(self, width: int, layers: int, heads: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList([AxialLayer(width, heads) for _ in range(layers)])

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """x [B, N, N, width] with zeros on padding, mask [B, N, N]."""
        for layer in self.layers:
            x = layer(x, mask)
        return x


class KDDocRE(GridModel, nn.Module):
    pooled = ATLOP.pooled  # ATLOP's entity embeddings and localized context pooling, the same function

    def __init__(
        self, encoder: nn.Module, *, emb_size: int = 0, block_size: int = 64, num_class: int = 97, window: int = 512,
        layers: int = 6, heads: int = 8, width: int = 0,
    ) -> None:
        super().__init__()
        self.encoder = encoder
        hidden = encoder.config.hidden_size
        emb_size = resolve_emb_size(emb_size, hidden, block_size)
        width = width or hidden  # the official code projects to the encoder's hidden size
        if layers < 0 or heads < 1 or width % heads:
            raise EnvbenchError(f"KD-DocRE needs axial_layers >= 0 and an axial width ({width}) divisible by "
                                f"axial_heads ({heads}); set axial_width (0 = the encoder's hidden size) or axial_heads")
        self.emb_size, self.block_size, self.num_class, self.window = emb_size, block_size, num_class, window
        self.head_extractor = nn.Linear(2 * hidden, emb_size)
        self.tail_extractor = nn.Linear(2 * hidden, emb_size)
        self.projection = nn.Linear(emb_size * block_size, width, bias=False)
        self.grid_net = AxialTransformer(width, layers, heads)  # lr_grid's parameters (models.train)
        self.classifier = nn.Linear(width, num_class)

    @classmethod
    def from_config(cls, encoder: nn.Module, cfg: Any) -> KDDocRE:
        return cls(encoder, emb_size=cfg.emb_size, block_size=cfg.block_size, num_class=cfg.num_class,
                   window=cfg.window, layers=cfg.axial_layers, heads=cfg.axial_heads, width=cfg.axial_width)

    def head(self, hs: torch.Tensor, ts: torch.Tensor, rs: torch.Tensor, counts: Sequence[int],
             hts: Sequence[Sequence[tuple[int, int]]]) -> dict[str, torch.Tensor]:
        """Everything after the encoder. ``hs``/``ts``/``rs``: head, tail and context of every grid cell
        (each document's E^2 cells row by row, ``models.grid.full_pairs``); ``hts``: the pairs to score."""
        zh = torch.tanh(self.head_extractor(torch.cat([hs, rs], dim=1)))
        zt = torch.tanh(self.tail_extractor(torch.cat([ts, rs], dim=1)))
        cells = self.projection(grouped_bilinear(zh, zt, self.block_size))
        grid, mask = scatter_cells(cells, counts, grid_size(counts))
        feature = gather_pairs(self.grid_net(grid, mask) + grid, hts)
        rows = pair_rows(hts, counts, hs.device)
        logits = self.classifier(feature)
        return {"logits": logits.float(), "bl": feature, "zhzt": torch.cat([zh[rows], zt[rows]], dim=1)}
