"""The ATLOP model (Zhou et al., AAAI 2021) over any BERT-family encoder.

Entity embedding: logsumexp over the embeddings of its mentions' start markers. Localized
context: the last-layer attention of head and tail (mean over mentions), multiplied, averaged
over heads, normalised, applied to the token embeddings. Head/tail extractors (tanh of a linear
map of [entity; context]) feed a grouped bilinear classifier. The module returns the logits and
the two pair representations EVRT's L_rcr can compare: ``bl``, the classifier's input (the
reference code's choice), and ``zhzt`` = [z_h; z_t]. Losses live in ``models.losses``.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from envbench.core.errors import EnvbenchError
from models.encoder import encode


def resolve_emb_size(emb_size: int, hidden: int, block_size: int) -> int:
    """The extractors' width: ``emb_size``, or the encoder's hidden size when 0 (as the reference
    code sizes them); it must split into blocks of ``block_size`` for the grouped bilinear."""
    emb_size = emb_size or hidden
    if emb_size % block_size:
        raise EnvbenchError(f"emb_size {emb_size} must be a multiple of block_size {block_size}; "
                            "set emb_size (0 = the encoder's hidden size) or block_size")
    return emb_size


class ATLOP(nn.Module):
    # "bl" is the grouped outer product of the two halves of "zhzt" (block_size wide groups), so the
    # trainer computes L_rcr on bl from zhzt (models.losses.rcr_grouped_bilinear), without bl's difference
    bl_is_grouped_outer_product = True
    long_docs = "two_windows"  # models.encoder.window_plan's scheme; build_model sets cfg.long_docs

    def __init__(
        self, encoder: nn.Module, *, emb_size: int = 0, block_size: int = 64, num_class: int = 97, window: int = 512
    ) -> None:
        super().__init__()
        self.encoder = encoder
        hidden = encoder.config.hidden_size
        emb_size = resolve_emb_size(emb_size, hidden, block_size)
        self.emb_size, self.block_size, self.num_class, self.window = emb_size, block_size, num_class, window
        self.head_extractor = nn.Linear(2 * hidden, emb_size)
        self.tail_extractor = nn.Linear(2 * hidden, emb_size)
        self.bilinear = nn.Linear(emb_size * block_size, num_class)

    def pooled(
        self, seq: torch.Tensor, att: torch.Tensor, entity_pos: list[list[list[int]]], hts: list[list[tuple[int, int]]]
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Head, tail and localized-context embeddings for every pair of the batch, in order.

        Each document's mention rows are gathered once and then split per entity. Indexing the
        batch's [B, heads, L, L] map once per entity, as before, gave the same values, but the
        backward pass of every such index allocated a batch-sized map: a cost quadratic in the
        batch, which made an EVRT step (twice the documents) cost about 3.5 vanilla steps on CPU.
        """
        hs, ts, rs = [], [], []
        for seq_i, att_i, ents, ht in zip(seq.unbind(0), att.unbind(0), entity_pos, hts):
            sizes = [len(pos) for pos in ents]
            index = torch.tensor([p for pos in ents for p in pos], device=seq.device)
            e_all = seq_i.index_select(0, index)  # [mentions, H]
            a_all = att_i.index_select(1, index)  # [heads, mentions, L]
            emb = torch.stack([torch.logsumexp(e, dim=0) if len(e) > 1 else e[0] for e in e_all.split(sizes)])  # [E, H]
            ent_att = torch.stack([a.mean(1) for a in a_all.split(sizes, dim=1)])  # [E, heads, L]
            pairs = torch.tensor(ht, device=seq.device, dtype=torch.long)
            h_att, t_att = ent_att[pairs[:, 0]], ent_att[pairs[:, 1]]
            ht_att = (h_att * t_att).mean(1)
            ht_att = ht_att / (ht_att.sum(1, keepdim=True) + 1e-5)
            hs.append(emb[pairs[:, 0]])
            ts.append(emb[pairs[:, 1]])
            rs.append(ht_att @ seq_i)
        return torch.cat(hs), torch.cat(ts), torch.cat(rs)

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, entity_pos: list[Any], hts: list[Any], **_: Any
    ) -> dict[str, torch.Tensor]:
        seq, att = encode(self.encoder, input_ids, attention_mask, window=self.window, scheme=self.long_docs)
        seq, att = seq.float(), att.float()
        hs, ts, rs = self.pooled(seq, att, entity_pos, hts)
        zh = torch.tanh(self.head_extractor(torch.cat([hs, rs], dim=1)))
        zt = torch.tanh(self.tail_extractor(torch.cat([ts, rs], dim=1)))
        groups = self.emb_size // self.block_size
        b1 = zh.view(-1, groups, self.block_size)
        b2 = zt.view(-1, groups, self.block_size)
        bl = (b1.unsqueeze(3) * b2.unsqueeze(2)).reshape(-1, self.emb_size * self.block_size)
        logits = self.bilinear(bl)
        return {"logits": logits.float(), "bl": bl, "zhzt": torch.cat([zh, zt], dim=1)}  # rcr_loss casts to fp32
