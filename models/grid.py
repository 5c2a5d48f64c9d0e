"""The entity-pair grid shared by DocuNet and KD-DocRE: cells in, padded cells masked, pairs out;
and ATLOP's grouped bilinear input, which both build their pair features from.

A document with E entities fills the top-left E x E block of a batch grid of N x N cells, where N
is the batch's largest E (rounded up to a multiple, for the U-Net's two poolings). Cell (h, t) is the
ordered pair (h, t); the diagonal (h, h) is a cell too, as in both official codes, but never a pair
that is classified. Cells outside a document's block are padding: they hold zeros and are masked,
so nothing a model computes for a real cell reads them. Both official codes use a fixed N of 42 and
crash on a document with more entities; here N follows the batch, so a larger document only costs
more (the grid grows with N^2; DocuNet's convolutions with N^2, KD-DocRE's axial attention with N^3).

Pair order: the model's features arrive as each document's E^2 cells in row-major order
(:func:`full_pairs`), documents one after another; the pairs to classify are ``hts``, the order of
``models.data`` (every ordered pair h != t), and :func:`pair_rows` maps them into those rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F


def full_pairs(n: int) -> list[tuple[int, int]]:
    """Every cell (h, t) of an n x n grid, diagonal included, row by row."""
    return [(h, t) for h in range(n) for t in range(n)]


def grid_size(counts: Sequence[int], multiple: int = 1) -> int:
    """The batch grid's side: the largest entity count, rounded up to ``multiple`` (at least one cell)."""
    n = max([1, *counts])
    return -(-n // multiple) * multiple


def pair_rows(hts: Sequence[Sequence[tuple[int, int]]], counts: Sequence[int], device: torch.device | str = "cpu"
              ) -> torch.Tensor:
    """Row of each pair of ``hts`` (all documents, in order) among the concatenated full-grid cells."""
    rows, offset = [], 0
    for doc_hts, n in zip(hts, counts):
        rows.extend(offset + h * n + t for h, t in doc_hts)
        offset += n * n
    return torch.tensor(rows, dtype=torch.long, device=device)


def scatter_cells(values: torch.Tensor, counts: Sequence[int], size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Batch grid [B, size, size, D] from the concatenated cells of each document ([sum E^2, D]), and its mask.

    The mask [B, size, size] (float, 1 = a real cell) is 1 on each document's E x E block.
    """
    grids, masks, offset = [], [], 0
    for n in counts:
        cells = values[offset : offset + n * n].view(n, n, -1)
        grids.append(F.pad(cells, (0, 0, 0, size - n, 0, size - n)))
        mask = values.new_zeros((size, size))
        mask[:n, :n] = 1.0
        masks.append(mask)
        offset += n * n
    return torch.stack(grids), torch.stack(masks)


def gather_pairs(grid: torch.Tensor, hts: Sequence[Sequence[tuple[int, int]]]) -> torch.Tensor:
    """The cells of ``hts`` from a batch grid [B, N, N, D]: [pairs, D], documents and pairs in order."""
    b, n = grid.shape[0], grid.shape[1]
    idx = [i * n * n + h * n + t for i in range(b) for h, t in hts[i]]
    return grid.reshape(b * n * n, -1)[torch.tensor(idx, dtype=torch.long, device=grid.device)]


def grouped_bilinear(zh: torch.Tensor, zt: torch.Tensor, block_size: int) -> torch.Tensor:
    """ATLOP's grouped bilinear input: per group g of ``block_size`` dims, the outer product z_h[g] (x) z_t[g].

    [pairs, emb] x [pairs, emb] -> [pairs, emb x block_size]; a linear map of it is the grouped bilinear.
    """
    groups = zh.shape[-1] // block_size
    b1 = zh.view(-1, groups, block_size)
    b2 = zt.view(-1, groups, block_size)
    return (b1.unsqueeze(3) * b2.unsqueeze(2)).reshape(-1, groups * block_size * block_size)


class GridModel:
    """The shared front of the grid models (DocuNet, KD-DocRE): encode, pool every cell of each
    document's entity grid with ATLOP's localized context pooling, then the model's own ``head``."""

    long_docs = "two_windows"  # models.encoder.window_plan's scheme; build_model sets cfg.long_docs

    def forward(
        self, input_ids: Any, attention_mask: Any, entity_pos: list[Any], hts: list[Any], **_: Any
    ) -> dict[str, Any]:
        from models.encoder import encode

        seq, att = encode(self.encoder, input_ids, attention_mask, window=self.window,  # type: ignore[attr-defined]
                          scheme=self.long_docs)
        counts = [len(e) for e in entity_pos]
        hs, ts, rs = self.pooled(seq.float(), att.float(), entity_pos,  # type: ignore[attr-defined]
                                 [full_pairs(n) for n in counts])
        return self.head(hs, ts, rs, counts, hts)  # type: ignore[attr-defined]
