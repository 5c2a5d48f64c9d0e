"""Shared by the DocuNet and KD-DocRE tests: a document past the official 42-entity cap, fixed head inputs."""

from __future__ import annotations

from typing import Any

CAP = 42  # both official codes pad every document to 42 entities and fail above


def many_entities_doc(n: int = CAP + 3, title: str = "Crowd") -> dict[str, Any]:
    """One sentence per entity ("Ent7 is near Ent8 ."), each entity mentioned once or twice, a few relations."""
    sents, vertex = [], [[] for _ in range(n)]
    for i in range(n):
        j = (i + 1) % n
        sents.append([f"ent{i}", "is", "near", f"ent{j}", "."])
        vertex[i].append({"name": f"ent{i}", "sent_id": i, "pos": [0, 1], "type": "LOC"})
        vertex[j].append({"name": f"ent{j}", "sent_id": i, "pos": [3, 4], "type": "LOC"})
    labels = [{"h": i, "t": (i + 1) % n, "r": "P47", "evidence": [i]} for i in range(0, n, 5)]
    labels += [{"h": n - 1, "t": 0, "r": "P17", "evidence": [n - 1]}]  # a pair past the 42nd entity
    return {"title": title, "sents": sents, "vertexSet": vertex, "labels": labels}


def fixed_head_inputs(counts: list[int], hidden: int, seed: int = 0) -> tuple[Any, Any, Any, list]:
    """Seeded head, tail and context vectors for every grid cell of documents with ``counts`` entities,
    and every ordered pair h != t as ``hts`` (what a model's ``head`` takes after the encoder)."""
    import torch

    g = torch.Generator().manual_seed(seed)
    cells = sum(n * n for n in counts)
    hs, ts, rs = (torch.randn(cells, hidden, generator=g) for _ in range(3))
    hts = [[(h, t) for h in range(n) for t in range(n) if h != t] for n in counts]
    return hs, ts, rs, hts


def no_encoder(hidden: int) -> Any:
    """A stand-in encoder that only has a config (for tests of the part after the encoder)."""
    from types import SimpleNamespace

    from torch import nn

    enc = nn.Module()
    enc.config = SimpleNamespace(hidden_size=hidden)
    return enc


def sample_world_features(tmp_path: Any, n_docs: int = 4) -> tuple[Any, list[Any]]:
    """A tiny random BERT and the features of the first ``n_docs`` sample-world training documents."""
    from envbench.formats.docred import read_docs
    from envbench.worlds.sample import make_sample
    from models.data import build_features
    from models.encoder import load_tokenizer
    from tests.models.conftest import make_tiny_encoder

    make_sample(tmp_path / "sample", seed=0)
    docs = read_docs(tmp_path / "sample" / "docs" / "train.json").docs[:n_docs]
    enc_dir = make_tiny_encoder(tmp_path / "enc", docs)
    feats, _ = build_features(docs, load_tokenizer(str(enc_dir)))
    return enc_dir, feats
