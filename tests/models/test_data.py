"""Entity markers: DocuNet's typed BERT markers ([unusedK] ... [unused(K+50)]) beside ATLOP's plain `*`."""

from __future__ import annotations

from pathlib import Path

import pytest

from envbench.core.errors import DataError, EnvbenchError
from models.config import TrainConfig
from tests.models.conftest import tiny_docs

pytestmark = pytest.mark.train

pytest.importorskip("transformers")

from models.data import build_feature, mention_markers  # noqa: E402
from models.encoder import load_tokenizer  # noqa: E402


def _typed_tokenizer(folder: Path):
    """A WordPiece vocabulary with BERT's [unused0..99] tokens and the tiny documents' words."""
    from transformers import BertTokenizer

    words = sorted({t.lower() for d in tiny_docs(2) for s in d["sents"] for t in s})
    vocab = ["[PAD]", *[f"[unused{i}]" for i in range(100)], "[UNK]", "[CLS]", "[SEP]", "[MASK]", "*", *words]
    BertTokenizer(vocab={w: i for i, w in enumerate(vocab)}).save_pretrained(folder)
    return load_tokenizer(str(folder))


def test_typed_markers_by_hand(tmp_path: Path) -> None:
    tok = _typed_tokenizer(tmp_path / "tok")
    doc = tiny_docs(1)[0]  # "Anna Berg was born in Umea ." / "Umea is a town in Sweden ." / "Later Berg moved ..."
    f = build_feature(doc, tok, markers="typed")
    ids = tok.convert_tokens_to_ids
    # PER start 7, end 57; LOC start 3, end 53 (zjunlp/DocuNet prepro.py: ORG 1, LOC 3, TIME 5, PER 7, MISC 9, NUM 11)
    expected = ["[CLS]", "[unused7]", "anna", "berg", "[unused57]", "was", "born", "in", "[unused3]", "umea",
                "[unused53]", ".", "[unused3]", "umea", "[unused53]", "is"]
    assert f.input_ids[: len(expected)] == ids(expected)
    assert f.entity_pos == [[1, 24], [8, 12], [19, 30]]  # "Later" is 23, then [unused7] berg; "from" 29, then [unused3]
    assert all(f.input_ids[p] in ids(["[unused7]", "[unused3]"]) for ps in f.entity_pos for p in ps)
    plain = build_feature(doc, tok)  # the default: the `*` marker, same positions
    assert plain.entity_pos == f.entity_pos and plain.input_ids[1] == ids("*")
    assert TrainConfig().markers == "plain"
    for preset in ("redocred-docunet-bert-base-vanilla", "redocred-docunet-bert-base-evrt"):
        assert TrainConfig.from_file(preset).markers == "typed"


def test_one_marker_where_mentions_share_a_token_the_first_in_vertexset_order() -> None:
    doc = tiny_docs(1)[0]
    doc["vertexSet"].append([{"name": "Anna", "sent_id": 0, "pos": [0, 1], "type": "ORG"}])
    starts, ends = mention_markers(doc, markers="typed")
    assert starts[(0, 0)] == "[unused7]"  # the PER mention comes first
    assert ends[(0, 0)] == "[unused51]" and ends[(0, 1)] == "[unused57]"


def test_typed_marker_errors(tmp_path: Path, tiny_encoder: Path) -> None:
    doc = tiny_docs(1)[0]
    with pytest.raises(EnvbenchError) as e:
        build_feature(doc, load_tokenizer(str(tiny_encoder)), markers="typed")  # a vocabulary without [unused]
    assert str(e.value) == ("typed entity markers need the token [unused1] in the encoder's vocabulary, which BERT "
                            "vocabularies have and this one lacks; use markers = \"plain\" (the * marker)")
    doc["vertexSet"][0][0]["type"] = "BLANK"
    with pytest.raises(DataError) as e:
        build_feature(doc, _typed_tokenizer(tmp_path / "tok"), markers="typed")
    assert str(e.value) == ("document 'Doc 0': mention 'Anna Berg' has type 'BLANK', which typed entity markers do not "
                            "know (ORG, LOC, TIME, PER, MISC, NUM); fix the type or use markers = \"plain\"")
    with pytest.raises(EnvbenchError, match=r"markers='tagged'; use 'plain' or 'typed'"):
        mention_markers(doc, markers="tagged")
