"""The ATLOP model (Zhou et al., AAAI 2021) over any BERT-family encoder.

Entity embedding: logsumexp over the embeddings of its mentions' start markers. Localized
context: the last-layer attention of head and tail (mean over mentions), multiplied, averaged
over heads, normalised, applied to the token embeddings. Head/tail extractors (tanh of a linear
map of [entity; context]) feed a grouped bilinear classifier. The module returns logits and the
pair representation [z_h; z_t] that EVRT's L_rcr compares; losses live in ``models.losses``.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from models.encoder import encode


class ATLOP(nn.Module):
    def __init__(
        self, encoder: nn.Module, *, emb_size: int = 768, block_size: int = 64, num_class: int = 97, window: int = 512
    ) -> None:
        super().__init__()
        self.encoder = encoder
        hidden = encoder.config.hidden_size
        self.emb_size, self.block_size, self.num_class, self.window = emb_size, block_size, num_class, window
        self.head_extractor = nn.Linear(2 * hidden, emb_size)
        self.tail_extractor = nn.Linear(2 * hidden, emb_size)
        self.bilinear = nn.Linear(emb_size * block_size, num_class)

    def pooled(
        self, seq: torch.Tensor, att: torch.Tensor, entity_pos: list[list[list[int]]], hts: list[list[tuple[int, int]]]
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Head, tail and localized-context embeddings for every pair of the batch, in order."""
        hs, ts, rs = [], [], []
        for i, ents in enumerate(entity_pos):
            embs, atts = [], []
            for pos in ents:
                idx = torch.tensor(pos, device=seq.device)
                e = seq[i, idx]  # [mentions, H]
                a = att[i, :, idx]  # [heads, mentions, L]
                embs.append(torch.logsumexp(e, dim=0) if len(pos) > 1 else e[0])
                atts.append(a.mean(1))
            emb = torch.stack(embs)  # [E, H]
            ent_att = torch.stack(atts)  # [E, heads, L]
            pairs = torch.tensor(hts[i], device=seq.device, dtype=torch.long)
            h_att, t_att = ent_att[pairs[:, 0]], ent_att[pairs[:, 1]]
            ht_att = (h_att * t_att).mean(1)
            ht_att = ht_att / (ht_att.sum(1, keepdim=True) + 1e-5)
            hs.append(emb[pairs[:, 0]])
            ts.append(emb[pairs[:, 1]])
            rs.append(ht_att @ seq[i])
        return torch.cat(hs), torch.cat(ts), torch.cat(rs)

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, entity_pos: list[Any], hts: list[Any], **_: Any
    ) -> dict[str, torch.Tensor]:
        seq, att = encode(self.encoder, input_ids, attention_mask, window=self.window)
        seq, att = seq.float(), att.float()
        hs, ts, rs = self.pooled(seq, att, entity_pos, hts)
        zh = torch.tanh(self.head_extractor(torch.cat([hs, rs], dim=1)))
        zt = torch.tanh(self.tail_extractor(torch.cat([ts, rs], dim=1)))
        groups = self.emb_size // self.block_size
        b1 = zh.view(-1, groups, self.block_size)
        b2 = zt.view(-1, groups, self.block_size)
        bl = (b1.unsqueeze(3) * b2.unsqueeze(2)).reshape(-1, self.emb_size * self.block_size)
        logits = self.bilinear(bl)
        return {"logits": logits.float(), "pair_repr": torch.cat([zh, zt], dim=1).float()}
