"""Tiny documents and a tiny random BERT saved to a temp folder, for the models tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

PEOPLE = ["Anna Berg", "Carl Dahl", "Eva Fors", "Gus Holm", "Ida Juhl", "Karl Lund", "Maja Nord", "Olof Pers"]
CITIES = ["Umea", "Lulea", "Kiruna", "Gavle", "Malmo", "Lund", "Boras", "Visby"]
COUNTRIES = ["Sweden", "Norway", "Finland", "Denmark"]


# `envbench train` options that keep a run on the tiny encoder small and quick
TINY = ["--set", "emb_size=32", "--set", "block_size=8", "--set", "batch_size=2", "--set", "progress=false",
        "--set", "lr_encoder=1e-3", "--set", "lr_classifier=1e-3", "--set", "dtype=fp32"]


def tiny_doc(i: int, *, rename: bool = False) -> dict[str, Any]:
    """A 3-sentence document: person born in city, city in country; the twin swaps the names."""
    k = (i + 3) % len(PEOPLE) if rename else i
    person, city, country = PEOPLE[k % len(PEOPLE)], CITIES[k % len(CITIES)], COUNTRIES[k % len(COUNTRIES)]
    p = person.split()
    s0 = [*p, "was", "born", "in", city, "."]
    s1 = [city, "is", "a", "town", "in", country, "."]
    s2 = ["Later", p[1], "moved", "away", "from", country, "."]
    ent = [
        [{"name": person, "sent_id": 0, "pos": [0, 2], "type": "PER"},
         {"name": p[1], "sent_id": 2, "pos": [1, 2], "type": "PER"}],
        [{"name": city, "sent_id": 0, "pos": [5, 6], "type": "LOC"},
         {"name": city, "sent_id": 1, "pos": [0, 1], "type": "LOC"}],
        [{"name": country, "sent_id": 1, "pos": [5, 6], "type": "LOC"},
         {"name": country, "sent_id": 2, "pos": [5, 6], "type": "LOC"}],
    ]
    labels = [
        {"h": 0, "t": 1, "r": "P19", "evidence": [0]},
        {"h": 1, "t": 2, "r": "P17", "evidence": [1]},
        {"h": 0, "t": 2, "r": "P27", "evidence": [0, 1]},
    ]
    return {"title": f"Doc {i}", "sents": [s0, s1, s2], "vertexSet": ent, "labels": labels}


def tiny_docs(n: int = 8, *, rename: bool = False) -> list[dict[str, Any]]:
    return [tiny_doc(i, rename=rename) for i in range(n)]


def make_tiny_encoder(folder: Path, docs: list[dict[str, Any]], *, hidden: int = 32, layers: int = 2,
                      heads: int = 2, max_positions: int = 512) -> Path:
    """Save a random BertModel (hidden 32, 2 layers, 2 heads) and a WordPiece tokenizer over the docs' words."""
    from transformers import BertConfig, BertModel, BertTokenizer

    words = sorted({tok.lower() for d in docs for s in d["sents"] for tok in s})
    vocab_list = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "*", *[w for w in words if w != "*"]]
    vocab = {w: i for i, w in enumerate(vocab_list)}
    tok = BertTokenizer(vocab=vocab)
    config = BertConfig(vocab_size=len(vocab), hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                        intermediate_size=2 * hidden, max_position_embeddings=max_positions)
    import torch

    torch.manual_seed(0)
    model = BertModel(config)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture
def tiny_encoder(tmp_path: Path) -> Path:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    docs = tiny_docs(8) + tiny_docs(8, rename=True)
    return make_tiny_encoder(tmp_path / "encoder", docs)


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """One intra-op thread: on 2 shared cores, two spinning threads ran these tiny models 4x slower."""
    try:
        import torch
    except ImportError:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """Four training documents, their renamed twins and two dev documents, as JSON files in ``tmp_path``."""
    paths = {"train": tmp_path / "train.json", "twins": tmp_path / "twins.json", "dev": tmp_path / "dev.json"}
    paths["train"].write_text(json.dumps(tiny_docs(4)))
    paths["twins"].write_text(json.dumps(tiny_docs(4, rename=True)))
    paths["dev"].write_text(json.dumps(tiny_docs(2)))
    return paths


def invoke(args: list[str]) -> Any:
    """``envbench ARGS`` through click's runner, exceptions raised (a traceback is a failure, not an exit code)."""
    from click.testing import CliRunner

    from envbench.cli import cli

    return CliRunner().invoke(cli, args, catch_exceptions=False)
