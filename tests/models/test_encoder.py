"""Long documents: ATLOP's two-window scheme, against a transcription of the reference rule on random tensors."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytestmark = pytest.mark.train

torch = pytest.importorskip("torch")

from models.config import TrainConfig  # noqa: E402
from models.encoder import encode, window_plan  # noqa: E402

W = 16  # the encoder window in these tests (512 in real runs)
CLS, SEP = 1, 2


class StubEncoder(torch.nn.Module):
    """One attention layer over random embeddings: h = E[id] + P[position], attention A = the masked softmax
    of h M h^T per head, output h + mean_heads(A) h. Its outputs at a row's real positions depend on the
    window's content but not on its padding."""

    def __init__(self, vocab: int = 50, hidden: int = 8, heads: int = 2) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(7)
        self.emb = torch.randn(vocab, hidden, generator=g)
        self.pos = torch.randn(W, hidden, generator=g)
        self.mix = torch.randn(heads, hidden, hidden, generator=g)

    def forward(self, input_ids=None, attention_mask=None, inputs_embeds=None, output_attentions=True):
        x = inputs_embeds if inputs_embeds is not None else self.emb[input_ids]
        assert x.shape[1] <= W, "a window longer than the encoder's"
        h = x + self.pos[: x.shape[1]]
        logits = torch.einsum("bih,nhk,bjk->bnij", h, self.mix, h)
        logits = logits.masked_fill(attention_mask[:, None, None, :] == 0, float("-inf"))
        att = torch.softmax(logits, -1)
        return SimpleNamespace(last_hidden_state=h + att.mean(1) @ h, attentions=[att])


def reference_long(model, ids: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The reference rule (ATLOP long_seq.py), transcribed: a row of l > W pieces is encoded as window 1 =
    its first W - 1 pieces + [SEP] and window 2 = [CLS] + its last W - 1 pieces. The document keeps window 1's
    outputs but its [SEP] (positions 0..W-2) and window 2's but its [CLS] (positions l-W+1..l-1): hidden states
    summed and divided by (count + 1e-10), attention blocks summed and each row divided by (its sum + 1e-10).
    A row that fits is encoded alone (its first W positions)."""
    n, c = ids.shape
    hid, att = [], []
    for i in range(n):
        l_i = int(mask[i].sum())
        if l_i <= W:
            out = model(input_ids=ids[i : i + 1, :W], attention_mask=mask[i : i + 1, :W])
            h = torch.zeros(c, out.last_hidden_state.shape[-1])
            a = torch.zeros(out.attentions[-1].shape[1], c, c)
            h[:W] = out.last_hidden_state[0]
            a[:, :W, :W] = out.attentions[-1][0]
            hid.append(h)
            att.append(a)
            continue
        w1 = torch.cat([ids[i, : W - 1], torch.tensor([SEP])])
        w2 = torch.cat([torch.tensor([CLS]), ids[i, l_i - W + 1 : l_i]])
        out = model(input_ids=torch.stack([w1, w2]), attention_mask=torch.ones(2, W, dtype=torch.long))
        h_w, a_w = out.last_hidden_state, out.attentions[-1]
        h, cnt = torch.zeros(c, h_w.shape[-1]), torch.zeros(c)
        a = torch.zeros(a_w.shape[1], c, c)
        h[: W - 1] += h_w[0, : W - 1]
        cnt[: W - 1] += 1
        a[:, : W - 1, : W - 1] += a_w[0, :, : W - 1, : W - 1]
        lo = l_i - W + 1
        h[lo:l_i] += h_w[1, 1:]
        cnt[lo:l_i] += 1
        a[:, lo:l_i, lo:l_i] += a_w[1, :, 1:, 1:]
        hid.append(h / (cnt + 1e-10).unsqueeze(-1))
        att.append(a / (a.sum(-1, keepdim=True) + 1e-10))
    return torch.stack(hid), torch.stack(att)


def _batch(lengths: list[int], seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    c = max(lengths)
    ids, mask = torch.zeros(len(lengths), c, dtype=torch.long), torch.zeros(len(lengths), c, dtype=torch.long)
    for i, n in enumerate(lengths):
        ids[i, :n] = torch.randint(3, 50, (n,), generator=g)
        ids[i, 0], ids[i, n - 1] = CLS, SEP
        mask[i, :n] = 1
    return ids, mask


# 12 fits; 17 and 25 overlap; 30 = 2 (W - 1) is covered exactly; 33 leaves pieces 15-17 to neither window
LENGTHS = [12, 17, 25, 30, 33]


def test_two_windows_equal_the_reference_rule_on_random_tensors() -> None:
    model = StubEncoder()
    for seed in range(3):
        ids, mask = _batch(LENGTHS, seed)
        hidden, att = encode(model, ids, mask, window=W)  # the default scheme
        ref_h, ref_a = reference_long(model, ids, mask)
        for i, n in enumerate(LENGTHS):
            assert torch.allclose(hidden[i, :n], ref_h[i, :n], atol=1e-5), (seed, n)
            assert torch.allclose(att[i, :, :n, :n], ref_a[i, :, :n, :n], atol=1e-5), (seed, n)
        gap = hidden[LENGTHS.index(33), W - 1 : 33 - W + 1]
        assert gap.shape[0] == 3 and (gap == 0).all()  # as the reference: pieces between the windows are not encoded


def test_the_overlap_scheme_fails_that_comparison() -> None:
    """The test above can fail: the overlapping windows (this project before issue 32) average [CLS]/[SEP]."""
    model = StubEncoder()
    ids, mask = _batch(LENGTHS)
    hidden, att = encode(model, ids, mask, window=W, scheme="overlap")
    ref_h, ref_a = reference_long(model, ids, mask)
    n = LENGTHS[1]
    assert not torch.allclose(hidden[1, :n], ref_h[1, :n], atol=1e-3)
    assert not torch.allclose(att[1, :, :n, :n], ref_a[1, :, :n, :n], atol=1e-3)


def test_window_plan_and_the_default() -> None:
    assert window_plan(12, W) == [(list(range(12)), [True] * 12)]
    (p1, k1), (p2, k2) = window_plan(20, W)
    assert p1 == [*range(15), 19] and k1 == [True] * 15 + [False]
    assert p2 == [0, *range(5, 20)] and k2 == [False] + [True] * 15
    assert TrainConfig().long_docs == "two_windows"
    with pytest.raises(ValueError, match="long_docs='three'"):
        window_plan(20, W, "three")


def test_embeddings_give_what_ids_give() -> None:
    """``understand`` encodes word embeddings: the same windows, the same outputs."""
    model = StubEncoder()
    ids, mask = _batch(LENGTHS)
    by_ids = encode(model, ids, mask, window=W)
    by_embeds = encode(model, None, mask, window=W, inputs_embeds=model.emb[ids])
    for x, y in zip(by_ids, by_embeds):
        assert torch.allclose(x, y, atol=1e-6)
