"""DocuNet (Zhang et al., IJCAI 2021) over any BERT-family encoder, as its official code computes it.

1. **Entity grid.** For every cell (h, t) of a document's E x E grid (diagonal included), ATLOP's
   localized context (the same ``pooled`` function) is projected to ``channels`` channels (3
   officially). The grid is sized per batch (``models.grid``): no cap at 42 entities.
2. **U-shaped segmentation.** Two conv3x3-BN-ReLU per stage, two 2x2 max-poolings, two bilinear
   upsamplings with skip connections; channels in -> w -> 2w -> 2w -> w -> w/2, then a 1x1 conv to
   ``unet_out`` (w = 256 and unet_out = 256 officially: 3 -> 256 -> 512 -> 512 -> 256 -> 128 -> 256).
3. **Classifier.** z_h = tanh(W_h [e_h; u_ht]), z_t = tanh(W_t [e_t; u_ht]) with u_ht the U-Net output
   at (h, t) and e the entity embeddings; a grouped bilinear (block 64) scores the 96 relations.
4. **Loss and decoding.** Multilabel categorical cross-entropy against a fixed threshold of 0
   (:func:`mcce_loss`); relations scoring above 0, at most 3 per pair (``max_labels = 3`` in the presets).

Padded cells are masked rather than filled (the official code copies the last entity's attention
into them): every convolution and pooling zeroes them in its input, every BatchNorm takes its
statistics from real cells only, and upsampling averages over real low-resolution cells only. So a
document's output does not depend on the padding: not on its contents, nor on how much of it the
batch adds. The price is one departure: the official upsampling uses ``align_corners=True``, whose
sample positions depend on the grid's size; here ``align_corners=False``, whose do not.

Class 0 of the logits is the threshold: DocuNet's is the constant 0, so the model returns 0 there
and the bilinear scores only the 96 relations. Decoding (``models.losses.decode``: above class 0) and
EVRT's L_pcr (on margins f_r - f_0 = f_r) then read DocuNet's own decision rule. The official code
also learns a 97th "Na" score, trained as one more label by the cross-entropy; it never decides a
relation, but where it is above 0 it takes one of the 3 decoding slots. It is left out.

L_rcr (EVRT): ``bl`` is the classifier's input for each pair, the grouped bilinear input
[pairs, emb x block] built from z_h and z_t (as ATLOP's); ``zhzt`` is [z_h; z_t].
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


def mcce_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Multilabel categorical cross-entropy (Su, 2020) against the threshold class, averaged over pairs.

    With margins m_r = f_r - f_0 (for DocuNet f_0 = 0, so m_r = f_r) and the gold relations P of a pair:
    log(1 + sum_{r not in P} exp(m_r)) + log(1 + sum_{r in P} exp(-m_r)). Every relation is pushed to
    its side of the threshold at once; a pair with no relation has only the first term.
    """
    logits = logits.float()
    margins = logits[:, 1:] - logits[:, :1]
    gold = labels[:, 1:] > 0
    zero = margins.new_zeros((margins.shape[0], 1))
    neg = torch.logsumexp(torch.cat([zero, margins.masked_fill(gold, float("-inf"))], dim=1), dim=1)
    pos = torch.logsumexp(torch.cat([zero, (-margins).masked_fill(~gold, float("-inf"))], dim=1), dim=1)
    return (neg + pos).mean()


class MaskedBatchNorm2d(nn.BatchNorm2d):
    """BatchNorm over the real cells only; padded cells come out as 0.

    Training: mean and variance over the real cells of the batch (plain BatchNorm would count the
    padding, so a document's output would change with the batch's largest document); the running
    statistics are updated as BatchNorm does (unbiased variance, ``momentum``). Eval: the running
    statistics. Computed in float32 under autocast, as BatchNorm is.
    """

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        x = x.float()
        if self.training:
            n = mask.sum() * 1.0
            mean = (x * mask).sum((0, 2, 3)) / n.clamp(min=1)
            var = (((x - mean[None, :, None, None]) * mask) ** 2).sum((0, 2, 3)) / n.clamp(min=1)
            with torch.no_grad():
                self.running_mean.lerp_(mean.detach(), self.momentum)
                self.running_var.lerp_(var.detach() * n / (n - 1).clamp(min=1), self.momentum)
                self.num_batches_tracked += 1
        else:
            mean, var = self.running_mean, self.running_var
        y = (x - mean[None, :, None, None]) * torch.rsqrt(var[None, :, None, None] + self.eps)
        return (y * self.weight[None, :, None, None] + self.bias[None, :, None, None]) * mask


class DoubleConv(nn.Module):
    """conv3x3 -> BN -> ReLU, twice; reads only the real cells of its input, zero outside the mask."""

    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1, bias=False)  # BN's shift makes a bias redundant
        self.bn1 = MaskedBatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = MaskedBatchNorm2d(cout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn1(self.conv1(x * mask), mask))
        return torch.relu(self.bn2(self.conv2(x), mask))


def _down(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    # inputs are ReLU outputs (>= 0), so with padding zeroed the max over a window with some real
    # cells is the max over those cells
    return F.max_pool2d(x * mask, 2)


def _up(x: torch.Tensor, mask_low: torch.Tensor, mask_high: torch.Tensor) -> torch.Tensor:
    """Bilinear x2 upsampling that averages over real low-resolution cells only (weights renormalised).

    At a document's last row/column this gives what the edge clamp gives when the document fills
    the grid, so the result is the same however much padding follows.
    """
    num = F.interpolate(x * mask_low, scale_factor=2, mode="bilinear", align_corners=False)
    den = F.interpolate(mask_low, scale_factor=2, mode="bilinear", align_corners=False)
    return num / den.clamp(min=1e-6) * mask_high


class UNet(nn.Module):
    """DocuNet's U-shaped segmentation module over a masked grid [B, C, N, N] (N a multiple of 4)."""

    def __init__(self, cin: int, width: int, cout: int) -> None:
        super().__init__()
        self.inc = DoubleConv(cin, width)
        self.down1 = DoubleConv(width, 2 * width)
        self.down2 = DoubleConv(2 * width, 2 * width)
        self.up1 = DoubleConv(4 * width, width)  # [skip of down1; upsampled down2]
        self.up2 = DoubleConv(2 * width, width // 2)  # [skip of inc; upsampled up1]
        self.outc = nn.Conv2d(width // 2, cout, 1)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``mask`` [B, 1, N, N] is 1 on real cells; the output [B, cout, N, N] is 0 on the others."""
        m1 = mask
        m2 = F.max_pool2d(m1, 2)  # a low-resolution cell is real if any of its four cells is
        m3 = F.max_pool2d(m2, 2)
        x1 = self.inc(x, m1)
        x2 = self.down1(_down(x1, m1), m2)
        x3 = self.down2(_down(x2, m2), m3)
        u = self.up1(torch.cat([x2, _up(x3, m3, m2)], dim=1), m2)
        u = self.up2(torch.cat([x1, _up(u, m2, m1)], dim=1), m1)
        return self.outc(u) * m1


class GridSegmenter(nn.Module):
    """Cells' localized contexts -> channels -> U-Net -> a [B, N, N, unet_out] grid (N: the batch's, rounded to 4)."""

    def __init__(self, hidden: int, channels: int, width: int, unet_out: int) -> None:
        super().__init__()
        self.proj = nn.Linear(hidden, channels)
        self.unet = UNet(channels, width, unet_out)

    def forward(self, cells: torch.Tensor, counts: Sequence[int]) -> torch.Tensor:
        grid, mask = scatter_cells(self.proj(cells), counts, grid_size(counts, multiple=4))
        out = self.unet(grid.permute(0, 3, 1, 2), mask.unsqueeze(1))
        return out.permute(0, 2, 3, 1)


class DocuNet(GridModel, nn.Module):
    pooled = ATLOP.pooled  # ATLOP's entity embeddings and localized context pooling, the same function

    def __init__(
        self, encoder: nn.Module, *, emb_size: int = 0, block_size: int = 64, num_class: int = 97, window: int = 512,
        channels: int = 3, width: int = 256, unet_out: int = 256,
    ) -> None:
        super().__init__()
        self.encoder = encoder
        hidden = encoder.config.hidden_size
        emb_size = resolve_emb_size(emb_size, hidden, block_size)
        if channels < 1 or unet_out < 1 or width < 2 or width % 2:
            raise EnvbenchError(f"DocuNet needs grid_channels >= 1, unet_out >= 1 and an even unet_width >= 2 "
                                f"(got {channels}, {unet_out}, {width}); the official values are 3, 256 and 256")
        self.emb_size, self.block_size, self.num_class, self.window = emb_size, block_size, num_class, window
        self.grid_net = GridSegmenter(hidden, channels, width, unet_out)  # lr_grid's parameters (models.train)
        self.head_extractor = nn.Linear(hidden + unet_out, emb_size)
        self.tail_extractor = nn.Linear(hidden + unet_out, emb_size)
        self.bilinear = nn.Linear(emb_size * block_size, num_class - 1)  # class 0 is the fixed threshold 0

    @classmethod
    def from_config(cls, encoder: nn.Module, cfg: Any) -> DocuNet:
        return cls(encoder, emb_size=cfg.emb_size, block_size=cfg.block_size, num_class=cfg.num_class,
                   window=cfg.window, channels=cfg.grid_channels, width=cfg.unet_width, unet_out=cfg.unet_out)

    def head(self, hs: torch.Tensor, ts: torch.Tensor, rs: torch.Tensor, counts: Sequence[int],
             hts: Sequence[Sequence[tuple[int, int]]]) -> dict[str, torch.Tensor]:
        """Everything after the encoder. ``hs``/``ts``/``rs``: head, tail and context of every grid cell
        (each document's E^2 cells row by row, ``models.grid.full_pairs``); ``hts``: the pairs to score."""
        u = gather_pairs(self.grid_net(rs, counts), hts)
        rows = pair_rows(hts, counts, hs.device)
        zh = torch.tanh(self.head_extractor(torch.cat([hs[rows], u], dim=1)))
        zt = torch.tanh(self.tail_extractor(torch.cat([ts[rows], u], dim=1)))
        bl = grouped_bilinear(zh, zt, self.block_size)
        scores = self.bilinear(bl).float()
        logits = torch.cat([scores.new_zeros((scores.shape[0], 1)), scores], dim=1)
        return {"logits": logits, "bl": bl, "zhzt": torch.cat([zh, zt], dim=1)}
