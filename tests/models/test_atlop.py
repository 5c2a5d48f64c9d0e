"""The ATLOP model on a tiny random BERT: features, windows, pooling, learning."""

from __future__ import annotations

from pathlib import Path

import pytest

from envbench.core.errors import DataError, EnvbenchError
from tests.models.conftest import make_tiny_encoder, tiny_docs

pytestmark = pytest.mark.train

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from models.atlop import ATLOP  # noqa: E402
from models.data import REL2CLASS, build_feature, build_features, collate, pair_twins  # noqa: E402
from models.encoder import encode, load_encoder, load_tokenizer, window_spans  # noqa: E402
from models.losses import ncrl_loss  # noqa: E402


def _model(encoder_dir: Path, window: int = 512) -> ATLOP:
    torch.manual_seed(0)
    return ATLOP(load_encoder(str(encoder_dir)), emb_size=32, block_size=8, window=window)


def _train(model: ATLOP, feats: list, loss_fn, steps: int, batches: int) -> list[float]:
    """AdamW at lr 1e-3 over ``batches`` batches of two features in turn; the loss of each step."""
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []
    for step in range(steps):
        b = collate(feats[(step % batches) * 2 : (step % batches) * 2 + 2])
        out = model(b["input_ids"], b["attention_mask"], b["entity_pos"], b["hts"])
        loss = loss_fn(out["logits"], b["labels"])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_window_spans_cover_the_body() -> None:
    assert window_spans(10, 512) == [(0, 10)]
    for n in (511, 600, 1020, 1500, 3000):
        spans = window_spans(n, 512)
        assert spans[0][0] == 0 and spans[-1][1] == n
        assert all(e - s == 510 for s, e in spans)
        assert all(b[0] <= a[1] for a, b in zip(spans, spans[1:]))  # overlapping or touching: nothing skipped
        assert len(spans) == (2 if n <= 1020 else -(-n // 510))


def test_features_mark_mentions_and_label_pairs(tiny_encoder: Path) -> None:
    tok = load_tokenizer(str(tiny_encoder))
    doc = tiny_docs(1)[0]
    f = build_feature(doc, tok)
    star = tok.convert_tokens_to_ids("*")
    assert f.input_ids[0] == tok.cls_token_id and f.input_ids[-1] == tok.sep_token_id
    for positions in f.entity_pos:
        assert all(f.input_ids[p] == star for p in positions)
    # "Anna Berg" (2 words) gets markers: [CLS] * anna berg * was born in * umea * .
    assert f.entity_pos[0][0] == 1 and f.entity_pos[1][0] == 8
    assert len(f.hts) == 6
    assert f.labels[f.hts.index((0, 1))] == [REL2CLASS["P19"]]
    assert f.labels[f.hts.index((1, 0))] == []
    batch = collate([f])
    assert batch["labels"].shape == (6, 97)
    assert batch["labels"][f.hts.index((1, 0)), 0] == 1.0


def test_long_documents_are_cut_only_past_max_length(tiny_encoder: Path) -> None:
    tok = load_tokenizer(str(tiny_encoder))
    doc = tiny_docs(1)[0]
    f = build_feature(doc, tok, max_length=12)
    assert f.cut and len(f.input_ids) == 12 and f.mentions_cut > 0
    assert all(p < 12 for ps in f.entity_pos for p in ps)
    _, stats = build_features([doc], tok, max_length=0, window=16)
    assert stats.over_window == 1 and stats.cut == 0


def test_twins_must_cover_every_title(tiny_encoder: Path) -> None:
    tok = load_tokenizer(str(tiny_encoder))
    orig, _ = build_features(tiny_docs(3), tok)
    twins, _ = build_features(tiny_docs(2, rename=True), tok)
    with pytest.raises(DataError, match=r"tw.json: 1 of 3 training titles have no twin \(first: 'Doc 2'\)"):
        pair_twins(orig, twins, "tw.json")
    twins3, _ = build_features(tiny_docs(3, rename=True), tok)
    assert [t.title for t in pair_twins(orig, twins3)] == ["Doc 0", "Doc 1", "Doc 2"]


def test_two_window_path_equals_one_window_on_a_short_doc(tiny_encoder: Path) -> None:
    tok = load_tokenizer(str(tiny_encoder))
    model = _model(tiny_encoder).eval()
    feats = [build_feature(d, tok) for d in tiny_docs(2)]
    b = collate(feats)
    with torch.no_grad():
        one = encode(model.encoder, b["input_ids"], b["attention_mask"])
        n = [len(f.input_ids) - 2 for f in feats]
        two = encode(model.encoder, b["input_ids"], b["attention_mask"], spans=[[(0, k), (0, k)] for k in n])
        for i, f in enumerate(feats):
            k = len(f.input_ids)
            assert torch.allclose(one[0][i, :k], two[0][i, :k], atol=1e-5)
            assert torch.allclose(one[1][i, :, :k, :k], two[1][i, :, :k, :k], atol=1e-5)
        pooled_one = model.pooled(one[0].float(), one[1].float(), b["entity_pos"], b["hts"])
        pooled_two = model.pooled(two[0], two[1], b["entity_pos"], b["hts"])
    for x, y in zip(pooled_one, pooled_two):
        assert torch.allclose(x, y, atol=1e-5)


def test_mentions_past_the_first_window_are_encoded_by_overlapping_windows(tmp_path: Path) -> None:
    docs = tiny_docs(1)
    enc_dir = make_tiny_encoder(tmp_path / "enc", docs)
    tok = load_tokenizer(str(enc_dir))
    model = _model(enc_dir, window=12).eval()
    f = build_feature(docs[0], tok)
    assert len(f.input_ids) > 12 and max(p for ps in f.entity_pos for p in ps) > 12
    b = collate([f])
    with torch.no_grad():
        seq, att = encode(model.encoder, b["input_ids"], b["attention_mask"], window=12, scheme="overlap")
        model.long_docs = "overlap"
        out = model(b["input_ids"], b["attention_mask"], b["entity_pos"], b["hts"])
    assert seq.shape[1] == len(f.input_ids)
    assert (seq.abs().sum(-1) > 0).all()  # every position, incl. those past the first window
    assert torch.allclose(att.sum(-1), torch.ones(att.shape[:-1]), atol=1e-4)
    assert torch.isfinite(out["logits"]).all() and out["logits"].shape == (len(f.hts), 97)


def test_tiny_model_loss_falls_on_the_sample_world(tmp_path: Path) -> None:
    from envbench.worlds.sample import make_sample

    make_sample(tmp_path / "sample", seed=0)
    from envbench.formats.docred import read_docs

    docs = read_docs(tmp_path / "sample" / "docs" / "train.json").docs[:4]
    assert all(len(d["labels"]) > 0 for d in docs)
    enc_dir = make_tiny_encoder(tmp_path / "enc", docs)
    tok = load_tokenizer(str(enc_dir))
    feats, _ = build_features(docs, tok)
    model = _model(enc_dir).train()
    losses = _train(model, feats, ncrl_loss, steps=8, batches=2)
    assert losses[-1] < 0.5 * losses[0] and losses[-2] < 0.5 * losses[1]


def test_tiny_model_learns_the_relations_of_tiny_docs(tiny_encoder: Path) -> None:
    """Not just a falling loss: after 60 steps the model predicts exactly the gold relations (ATLOP loss)."""
    from models.losses import atlop_loss, decode

    tok = load_tokenizer(str(tiny_encoder))
    feats, _ = build_features(tiny_docs(8), tok)
    torch.manual_seed(0)
    model = ATLOP(load_encoder(str(tiny_encoder)), emb_size=64, block_size=8)
    _train(model, feats, atlop_loss, steps=60, batches=4)
    model.eval()
    b = collate(feats)
    with torch.no_grad():
        pred = decode(model(b["input_ids"], b["attention_mask"], b["entity_pos"], b["hts"])["logits"])
    assert torch.equal(pred, b["labels"])


def test_pair_representations_bl_is_the_classifier_input(tiny_encoder: Path) -> None:
    tok = load_tokenizer(str(tiny_encoder))
    model = _model(tiny_encoder).eval()
    b = collate([build_feature(d, tok) for d in tiny_docs(2)])
    with torch.no_grad():
        out = model(b["input_ids"], b["attention_mask"], b["entity_pos"], b["hts"])
    pairs = b["labels"].shape[0]
    assert out["bl"].shape == (pairs, 32 * 8)  # emb_size x block_size, what L_rcr compares by default
    assert out["zhzt"].shape == (pairs, 2 * 32)
    assert torch.allclose(model.bilinear(out["bl"]), out["logits"], atol=1e-6)
    # the grouped outer product: group g of bl is z_h[g] (x) z_t[g]
    zh, zt = out["zhzt"][:, :32], out["zhzt"][:, 32:]
    assert torch.allclose(out["bl"][:, :64], (zh[:, :8, None] * zt[:, None, :8]).reshape(pairs, 64), atol=1e-6)


def test_emb_size_defaults_to_the_encoders_hidden_size(tiny_encoder: Path) -> None:
    model = ATLOP(load_encoder(str(tiny_encoder)), block_size=8)
    assert model.emb_size == 32 and model.head_extractor.out_features == 32
    assert model.bilinear.in_features == 32 * 8
    with pytest.raises(EnvbenchError, match="emb_size 32 must be a multiple of block_size 5"):
        ATLOP(load_encoder(str(tiny_encoder)), block_size=5)


def test_encoder_weights_load_as_float32_from_a_bf16_folder(tmp_path: Path) -> None:
    # transformers 5 keeps a checkpoint's dtype: a bf16 folder would train bf16 weights
    from transformers import AutoModel

    enc_dir = make_tiny_encoder(tmp_path / "enc", tiny_docs(2))
    AutoModel.from_pretrained(enc_dir).to(torch.bfloat16).save_pretrained(enc_dir)
    assert AutoModel.from_pretrained(enc_dir).embeddings.word_embeddings.weight.dtype == torch.bfloat16
    for weights in (True, False):
        params = list(load_encoder(str(enc_dir), weights=weights).parameters())
        assert {p.dtype for p in params} == {torch.float32}


def test_bert_word_by_word_equals_one_presplit_call(tiny_encoder: Path) -> None:
    from models.data import _marked_words, word_pieces

    tok = load_tokenizer(str(tiny_encoder))
    for doc in tiny_docs(4, rename=True):
        words, _ = _marked_words(doc, "*")
        presplit = tok(words, is_split_into_words=True, add_special_tokens=False)["input_ids"]
        assert [i for ids in word_pieces(tok, words) for i in ids] == presplit


def _tiny_roberta(folder: Path) -> Path:
    """A byte-level BPE tokenizer with no merges (every byte its own token) and a RoBERTa config."""
    from tokenizers.pre_tokenizers import ByteLevel
    from transformers import RobertaConfig, RobertaTokenizer

    vocab = {t: i for i, t in enumerate(["<s>", "<pad>", "</s>", "<unk>", *sorted(ByteLevel.alphabet()), "<mask>"])}
    RobertaTokenizer(vocab=vocab, merges=[]).save_pretrained(folder)
    RobertaConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                  intermediate_size=64).save_pretrained(folder)
    return folder


def test_roberta_is_tokenised_word_by_word_without_a_space_prefix(tmp_path: Path) -> None:
    # the reference tokenises each word on its own (tokenizer.tokenize(word)) and inserts the raw "*" token,
    # so neither words nor markers carry the leading-space piece "Ġ" that add_prefix_space gives
    tok = load_tokenizer(str(_tiny_roberta(tmp_path / "roberta")))
    space, star = tok.convert_tokens_to_ids("Ġ"), tok.convert_tokens_to_ids("*")
    doc = tiny_docs(1)[0]
    f = build_feature(doc, tok)
    assert space not in f.input_ids
    assert f.input_ids[0] == tok.cls_token_id and f.input_ids[-1] == tok.sep_token_id
    expected = [tok.convert_tokens_to_ids(t) for w in ["*", *"Anna", *"Berg", "*", *"was"] for t in tok.tokenize(w)]
    assert f.input_ids[1 : 1 + len(expected)] == expected
    for positions in f.entity_pos:
        assert all(f.input_ids[p] == star for p in positions)
    # "* Anna Berg * was born in * Umea" -> the city's marker follows 1+4+4+1+3+4+2 pieces and [CLS]
    assert f.entity_pos[0][0] == 1 and f.entity_pos[1][0] == 1 + 1 + 4 + 4 + 1 + 3 + 4 + 2


def test_pooling_gathers_once_per_document_with_the_per_entity_values_and_gradients(tiny_encoder: Path) -> None:
    """The pooled outputs and their gradients equal ATLOP's per-entity indexing, written out here."""
    model = _model(tiny_encoder)
    torch.manual_seed(1)
    seq = torch.randn(2, 12, 32, requires_grad=True)
    att = torch.rand(2, 2, 12, 12).softmax(-1).requires_grad_(True)
    entity_pos = [[[1, 5], [3], [7, 8, 9]], [[2], [4, 10]]]
    hts = [[(h, t) for h in range(3) for t in range(3) if h != t], [(0, 1), (1, 0)]]

    def per_entity(seq, att):
        hs, ts, rs = [], [], []
        for i, ents in enumerate(entity_pos):
            embs = [torch.logsumexp(seq[i, pos], 0) if len(pos) > 1 else seq[i, pos[0]] for pos in ents]
            atts = [att[i, :, pos].mean(1) for pos in ents]
            emb, ent_att = torch.stack(embs), torch.stack(atts)
            h, t = torch.tensor([p[0] for p in hts[i]]), torch.tensor([p[1] for p in hts[i]])
            ht_att = (ent_att[h] * ent_att[t]).mean(1)
            ht_att = ht_att / (ht_att.sum(1, keepdim=True) + 1e-5)
            hs.append(emb[h])
            ts.append(emb[t])
            rs.append(ht_att @ seq[i])
        return torch.cat(hs), torch.cat(ts), torch.cat(rs)

    weights = [torch.randn(8, 32) for _ in range(3)]
    grads = []
    for fn in (lambda s, a: model.pooled(s, a, entity_pos, hts), per_entity):
        outs = fn(seq, att)
        assert [o.shape for o in outs] == [(8, 32)] * 3
        grads.append((outs, torch.autograd.grad(sum((o * w).sum() for o, w in zip(outs, weights)), [seq, att])))
    (out_new, g_new), (out_old, g_old) = grads
    for x, y in [*zip(out_new, out_old), *zip(g_new, g_old)]:
        assert torch.allclose(x, y, atol=1e-6)
