"""`envbench understand`: integrated gradients on a tiny random BERT, word mapping, fact selection, CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from envbench.cli import cli
from models.understand import rank_words, top_relation_classes, word_scores
from tests.conftest import reference_elbow, shared_path
from tests.models.conftest import make_tiny_encoder, tiny_docs

pytestmark = pytest.mark.train


# --- pure helpers (no torch needed) ---

def _official_kept(logits: list[float], cls: int, k: int = 4) -> bool:
    """DocRED-HWE's test: positions of topk(logits[:, 1:]) compared with the class id (off by one)."""
    positions = sorted(range(len(logits) - 1), key=lambda i: -logits[i + 1])[:k]
    return cls in positions


def test_top_k_is_not_off_by_one() -> None:
    logits = [0.0] * 97
    logits[0] = 100.0  # the threshold class is not a relation, however high
    for cls, value in ((6, 10.0), (1, 9.0), (2, 8.0), (3, 7.0), (5, 6.0)):
        logits[cls] = value
    assert top_relation_classes(logits, 4) == [6, 1, 2, 3]
    # class 5 is only 5th: it must not count; the official test keeps it (position 5 is class 6) ...
    assert 5 not in top_relation_classes(logits, 4) and _official_kept(logits, 5)
    # ... and drops the best class of all
    assert 6 in top_relation_classes(logits, 4) and not _official_kept(logits, 6)


def test_rank_words_ties_and_unscored_words() -> None:
    scores = word_scores([0.0, 0.5, -1.0, 0.5, 2.0, 9.0], [[1], [2, 3], [], [4], [1, 3]])
    assert scores == [0.5, -0.5, None, 2.0, 1.0]
    assert rank_words(scores) == [3, 4, 0, 1, 2]  # a word without wordpieces ranks last
    assert rank_words([1.0, 1.0, 1.0], limit=2) == [0, 1]  # ties by position


# --- torch ---

@pytest.fixture
def torch_mod():
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    return torch


def _model(encoder_dir: Path, window: int = 512, scale: float = 30.0):
    import torch

    from models.atlop import ATLOP
    from models.encoder import load_encoder

    torch.manual_seed(0)
    model = ATLOP(load_encoder(str(encoder_dir)), emb_size=32, block_size=8, window=window).eval()
    with torch.no_grad():  # a random head gives logits near 0, nearly linear in the input; scale them up
        model.bilinear.weight.mul_(scale)
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def test_embedding_forward_matches_the_model(torch_mod, tiny_encoder: Path) -> None:
    from models.data import build_feature, collate
    from models.encoder import load_tokenizer
    from models.understand import input_embeddings, logits_from_embeddings

    tok = load_tokenizer(str(tiny_encoder))
    doc = tiny_docs(1)[0]
    doc["vertexSet"][2] = doc["vertexSet"][2][:1]  # an entity with one mention (no logsumexp)
    f = build_feature(doc, tok)
    for window in (512, 16):  # one window; three overlapping windows
        model = _model(tiny_encoder, window)
        b = collate([f])
        ref = model(b["input_ids"], b["attention_mask"], b["entity_pos"], b["hts"])["logits"]
        x = input_embeddings(model, f.input_ids)
        got = logits_from_embeddings(model, torch_mod.stack([x, x]), f.entity_pos, f.hts)
        assert got.shape == (2, len(f.hts), 97)
        assert torch_mod.allclose(got[0], ref, atol=1e-5) and torch_mod.allclose(got[1], ref, atol=1e-5)


def test_gauss_legendre_nodes(torch_mod) -> None:
    from models.understand import gauss_legendre

    for n in (1, 2, 5, 10):
        nodes, weights = gauss_legendre(n)
        assert float(weights.sum()) == pytest.approx(1.0)
        assert bool(((nodes > 0) & (nodes < 1)).all())
        for deg in range(2 * n):  # exact for polynomials of degree 2n - 1 on [0, 1]
            assert float((weights * nodes**deg).sum()) == pytest.approx(1 / (deg + 1), rel=1e-9)


@pytest.mark.parametrize("window", [512, 16])
def test_integrated_gradients_completeness(torch_mod, tiny_encoder: Path, window: int) -> None:
    from models.data import build_feature
    from models.encoder import load_tokenizer
    from models.understand import input_embeddings, integrated_gradients, logits_from_embeddings

    torch = torch_mod
    tok = load_tokenizer(str(tiny_encoder))
    f = build_feature(tiny_docs(1)[0], tok)
    model = _model(tiny_encoder, window)
    x = input_embeddings(model, f.input_ids)
    targets = [(0, 1, 5), (1, 2, 3), (0, 2, 7), (2, 0, 0)]
    pairs = sorted({(h, t) for h, t, _ in targets})
    with torch.no_grad():
        both = logits_from_embeddings(model, torch.stack([x, torch.zeros_like(x)]), f.entity_pos, pairs)
    delta = torch.tensor([float(both[0, pairs.index((h, t)), c] - both[1, pairs.index((h, t)), c])
                          for h, t, c in targets])
    assert float(delta.abs().max()) > 1.0  # logits that move: the check below means something

    def err(attr):
        return float(((attr.sum(1) - delta).abs() / delta.abs().clamp(min=1)).max())

    attr = integrated_gradients(model, x, f.entity_pos, targets, steps=10)
    assert attr.shape == (len(targets), len(f.input_ids))
    assert err(attr) < 1e-3
    assert err(integrated_gradients(model, x, f.entity_pos, targets, steps=1)) > 10 * err(attr)  # the check can fail
    chunked = integrated_gradients(model, x, f.entity_pos, targets, steps=10, step_batch=3)
    assert torch.allclose(chunked, attr, atol=1e-5)
    # per wordpiece, against a plain one-point-at-a-time right Riemann sum with many steps
    n = 200
    ref = torch.zeros_like(attr)
    for s in range(1, n + 1):
        xs = (s / n * x).unsqueeze(0).requires_grad_(True)
        logits = logits_from_embeddings(model, xs, f.entity_pos, pairs)
        for i, (h, t, c) in enumerate(targets):
            (g,) = torch.autograd.grad(logits[0, pairs.index((h, t)), c], xs, retain_graph=True)
            ref[i] += (g[0] * x).sum(-1) / n
    assert float((attr - ref).abs().max()) < 0.02 * float(ref.abs().max())


def test_words_map_to_their_wordpieces_after_cls(torch_mod, tiny_encoder: Path) -> None:
    """Regression for the [CLS] shift: a word's attribution is read at its own wordpieces."""
    from models.data import build_feature
    from models.encoder import load_tokenizer
    from models.understand import word_pieces

    tok = load_tokenizer(str(tiny_encoder))
    doc = tiny_docs(1)[0]
    ids, pieces = word_pieces(doc, tok)
    assert ids == build_feature(doc, tok).input_ids
    words = [w for s in doc["sents"] for w in s]
    assert len(pieces) == len(words)
    for w, ps in zip(words, pieces):
        assert tok.convert_ids_to_tokens([ids[p] for p in ps]) == [w.lower()]
    star = tok.convert_tokens_to_ids("*")
    owned = {p for ps in pieces for p in ps}
    markers = {i for i, t in enumerate(ids) if t == star}
    assert len(markers) == 12  # 6 mentions, a marker on each side: none is a word
    assert owned | markers | {0, len(ids) - 1} == set(range(len(ids))) and not owned & markers and 0 not in owned
    # attribution on word 5 ("Umea", after a marker) only: word 5 ranks first
    attr = [0.0] * len(ids)
    for p in pieces[5]:
        attr[p] = 1.0
    assert rank_words(word_scores(attr, pieces))[0] == 5
    # a cut document: words past the cut have no wordpieces and rank last
    ids, pieces = word_pieces(doc, tok, max_length=10)
    assert len(ids) == 10 and ids == build_feature(doc, tok, max_length=10).input_ids
    assert pieces[-1] == [] and rank_words(word_scores([1.0] * 10, pieces))[-1] == len(words) - 1


def test_subword_pieces_with_a_real_tokenizer(torch_mod) -> None:
    """Words split into several wordpieces (MiniLM's vocabulary) keep all their pieces."""
    from models.encoder import default_encoder_path, load_tokenizer
    from models.understand import word_pieces

    try:
        tok = load_tokenizer(default_encoder_path())
    except Exception as exc:  # noqa: BLE001 - the package is optional
        pytest.skip(f"MiniLM not installed: {exc}")
    doc = tiny_docs(1)[0]
    doc["sents"][1] = ["Umea", "is", "a", "Swedishtownship", "in", "Sweden", "."]
    ids, pieces = word_pieces(doc, tok)
    flat = [w for s in doc["sents"] for w in s]
    k = flat.index("Swedishtownship")
    assert len(pieces[k]) > 1 and pieces[k] == list(range(pieces[k][0], pieces[k][0] + len(pieces[k])))
    assert tok.decode([ids[p] for p in pieces[k]]).replace(" ", "") == "swedishtownship"


# --- the command, on a tiny trained run ---

TINY = ["--set", "emb_size=32", "--set", "block_size=8", "--set", "batch_size=2", "--set", "progress=false",
        "--set", "lr_encoder=1e-3", "--set", "lr_classifier=1e-3", "--set", "dtype=fp32", "--set", "max_steps=2",
        "--set", "max_labels=4"]


def _hwe_docs(docs: list[dict]) -> list[dict]:
    """Tiny documents with DocRED-HWE keyword spans on every label."""
    out = json.loads(json.dumps(docs))
    for d in out:
        for lab in d["labels"]:
            sid = lab["evidence"][0]
            lab["keywords"] = [{"name": "x", "sent_id": sid, "pos": [1, 3]}, {"name": "y", "sent_id": sid, "pos": [4, 5]}]
    return out


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    root = tmp_path_factory.mktemp("understand")
    enc = make_tiny_encoder(root / "encoder", tiny_docs(8) + tiny_docs(8, rename=True))
    paths = {"train": root / "train.json", "dev": root / "dev.json", "hwe": root / "hwe.json", "run": root / "run"}
    paths["train"].write_text(json.dumps(tiny_docs(4)))
    paths["dev"].write_text(json.dumps(tiny_docs(2)))
    paths["hwe"].write_text(json.dumps(_hwe_docs(tiny_docs(6))))
    r = CliRunner().invoke(cli, ["train", "--train", str(paths["train"]), "--dev", str(paths["dev"]), "--encoder",
                                 str(enc), "--out", str(paths["run"]), "--epochs", "1", *TINY], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return paths


def _invoke(args: list[str]):
    return CliRunner().invoke(cli, ["understand", *args], catch_exceptions=False)


def test_understand_end_to_end(tiny_run: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "u"
    args = ["--run", str(tiny_run["run"]), "--run", str(tiny_run["run"]), "--hwe", str(tiny_run["hwe"]),
            "--out", str(out), "--steps", "4", "--exclude-titles-from", str(tiny_run["dev"]), "--threads", "1"]
    r = _invoke(args)
    assert r.exit_code == 0, r.output
    # Doc 0..3 are the run's training documents: measuring on them is flagged
    assert (f"warning: 2 of the 4 measured documents are in {tiny_run['run']}'s training file {tiny_run['train']}: "
            f"the curve then measures memorisation; pass --exclude-titles-from {tiny_run['train']}") in r.output
    lines = r.stdout.splitlines()
    assert lines[0] == ("4 documents, 12 facts (2 documents excluded, 0 without labels, 0 past --max-docs); IG with 4 "
                        "steps; a fact counts when its relation is in the model's top 4")
    assert lines[1] == ("official MAP (DocRED-HWE's MAP_metric.py: a hit at rank i adds 1/i), of words; evidence: "
                        "all keyword spans less the head's and tail's mentions (which are not ranked either)")
    assert lines[2].split() == ["run", "facts", "K=1", "K=5", "K=10", "K=20", "K=50"]
    assert [ln.split()[0] for ln in lines[3:18]] == ["run#1", "elbow", "ideal", "random", "run#2", "elbow", "ideal",
                                                     "random", "on", "run#1", "elbow", "run#2", "elbow", "ideal",
                                                     "random"]
    assert lines[18].startswith("evidence last (own facts): run#1 K=1 ")
    assert lines[19].startswith("evidence all (own facts): run#1 K=1 ")
    assert lines[20].startswith("precision MAP (own facts): run#1 K=1 ")
    assert lines[21].startswith("the head's or tail's own mention ranked first among the words: run#1 ")
    data = json.loads((out / "map.json").read_text())
    assert data["settings"]["selection"]["documents"] == 4 and data["settings"]["steps"] == 4
    assert data["settings"]["map"] == "official"
    a, b = data["runs"]
    assert a["map"] == b["map"] and a["facts_total"] == 12 and 0 < a["facts_kept"] <= 12
    assert set(a["map"]) == {"official", "precision"} and set(a["map"]["official"]) == {"context", "all", "last"}
    assert set(a["map"]["official"]["all"]) == {"model", "elbow", "ideal", "random"}
    assert set(a["map"]["precision"]["all"]) == {"model", "ideal", "random"}
    # the same run twice keeps the same facts: its curves over the common facts are its own
    assert a["map_common"] == a["map"] and a["facts_common"] == a["facts_scored"]
    # labels 0 and 2 lose "Berg" (their head's name) from the evidence, label 1 loses nothing: all keep evidence
    assert a["facts_scored"] == {"context": a["facts_kept"], "last": a["facts_kept"], "all": a["facts_kept"]}
    assert 0 <= a["pair_first"] <= a["facts_kept"]
    assert data["forms"]["precision"] == "precision MAP (the paper's Eq. 5: a hit at rank i adds precision@i)"
    official, precision = a["map"]["official"]["all"], a["map"]["precision"]["all"]
    assert len(official["model"]) == 100
    for c in (official, precision):
        assert all(r <= i + 1e-9 for r, i in zip(c["random"], c["ideal"]))
        assert all(m <= i + 1e-9 for m, i in zip(c["model"], c["ideal"]))
    # a hit adds 1/i officially and hits/i >= 1/i in the precision form; at K = 1 the two agree
    assert official["model"][0] == precision["model"][0]
    assert all(o <= p + 1e-9 for o, p in zip(official["model"], precision["model"]))
    assert all(o <= e + 1e-9 for o, e in zip(official["model"], official["elbow"]))  # the elbow caps the rank
    assert a["completeness"]["facts"] == a["facts_kept"] and a["completeness"]["max_rel_error"] < 1e-2
    assert (out / "map.png").read_bytes()[:4] == b"\x89PNG"
    recs = [json.loads(x) for x in Path(a["attributions"]).read_text().splitlines()[1:]]
    assert [x["title"] for x in recs] == ["Doc 2", "Doc 3", "Doc 4", "Doc 5"]
    kept = [f for x in recs for f in x["facts"] if f["kept"]]
    n_words = sum(len(s) for s in tiny_docs(1)[0]["sents"])  # 21: fewer than 100, so every word is ranked
    assert kept and all(sorted(f["ranking"]) == list(range(n_words)) for f in kept)
    assert all(len(f["top_scores"]) == n_words and f["top_scores"] == sorted(f["top_scores"], reverse=True)
               for f in kept)
    r = _invoke([*args, "--map", "precision"])  # the cached attributions, the other form printed
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[1] == ("precision MAP (the paper's Eq. 5: a hit at rank i adds precision@i), of "
                                        "words; evidence: all keyword spans less the head's and tail's mentions "
                                        "(which are not ranked either)")
    assert json.loads((out / "map.json").read_text())["runs"][0]["documents_computed"] == 0
    # every wordpiece position ranked, as the reference: [CLS], markers and [SEP] compete with the words
    assert all(len(f["piece_ranking"]) == min(100, x["wordpieces"]) for x in recs for f in x["facts"] if f["kept"])
    r = _invoke([*args, "--units", "wordpiece", "--spans", "all"])
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[1] == ("official MAP (DocRED-HWE's MAP_metric.py: a hit at rank i adds 1/i), of input "
                                        "positions; evidence: all keyword spans, the pair's names included")
    pieces_map = json.loads((out / "map.json").read_text())
    assert pieces_map["settings"]["units"] == "wordpiece" and pieces_map["runs"][0]["documents_computed"] == 0
    assert pieces_map["runs"][0]["map"]["official"]["all"]["model"] != official["model"]
    # DocRED-HWE's own evidence positions: the last span only, and the same cached attributions
    r = _invoke([*args, "--units", "reference"])
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[1] == ("official MAP (DocRED-HWE's MAP_metric.py: a hit at rank i adds 1/i), of input "
                                        "positions; evidence: the positions DocRED-HWE's MAP_metric.py checks (last "
                                        "span, not shifted for [CLS])")
    ref = json.loads((out / "map.json").read_text())
    assert ref["settings"]["spans"] == "last" and set(ref["runs"][0]["map"]["official"]) == {"last"}
    assert ref["runs"][0]["documents_computed"] == 0
    r = _invoke([*args, "--units", "reference", "--spans", "all"])
    assert r.exit_code == 1
    assert r.output == ("Error: --spans all: --units reference scores DocRED-HWE's own evidence, the last keyword "
                        "span; leave --spans out (or pass --spans last)\n")
    # a rerun reuses the attributions (and keeps those it does not need); --max-docs keeps the first documents
    r = _invoke([*args, "--max-docs", "1"])
    assert r.exit_code == 0, r.output
    again = json.loads((out / "map.json").read_text())["runs"][0]
    assert again["documents"] == 1 and again["documents_computed"] == 0
    assert len(Path(again["attributions"]).read_text().splitlines()) == 1 + 4
    r = _invoke([*args, "--steps", "5"])  # other settings: computed afresh
    assert json.loads((out / "map.json").read_text())["runs"][0]["documents_computed"] == 4


def test_understand_bad_input(tiny_run: dict[str, Path], tmp_path: Path) -> None:
    run, hwe = str(tiny_run["run"]), str(tiny_run["hwe"])
    out = str(tmp_path / "u")
    r = _invoke(["--run", run, "--hwe", str(tmp_path / "none.json"), "--out", out])
    assert r.exit_code == 1
    assert r.output == (f"Error: --hwe {tmp_path / 'none.json'}: no such file; pass DocRED-HWE's dev_keys_new.json "
                        "(../shared/data/docred-hwe/dev_keys_new.json)\n")
    r = _invoke(["--run", str(tmp_path / "norun"), "--hwe", hwe, "--out", out])
    assert r.exit_code == 1
    assert r.output == f"Error: no run at {tmp_path / 'norun'}; train one with `envbench train ... --out {tmp_path / 'norun'}`\n"
    r = _invoke(["--run", run, "--hwe", hwe, "--out", out, "--steps", "0"])
    assert r.output == "Error: --steps 0: use at least 1 interpolation step (default 10)\n"
    r = _invoke(["--run", run, "--hwe", hwe, "--out", out, "--max-docs", "-1"])
    assert r.output == "Error: --max-docs -1: use 0 (all) or a positive number\n"
    r = _invoke(["--run", run, "--hwe", hwe, "--out", out, "--exclude-titles-from", str(tmp_path / "t.json")])
    assert r.output == f"Error: --exclude-titles-from {tmp_path / 't.json'}: no such file\n"
    r = _invoke(["--run", run, "--hwe", hwe, "--out", out, "--exclude-titles-from", hwe])
    assert r.exit_code == 1
    assert r.output == (f"Error: {hwe}: no documents left to measure (6 in the file, 6 excluded by "
                        "--exclude-titles-from, 0 without labels); exclude fewer titles\n")
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(tiny_docs(2)))  # DocRED documents without keywords
    r = _invoke(["--run", run, "--hwe", str(plain), "--out", out])
    assert r.exit_code == 1
    assert r.output == (f"Error: {plain}: document 0 'Doc 0': label 0 has no keywords; every DocRED-HWE label needs "
                        "keyword spans {sent_id, pos}; pass DocRED-HWE's dev_keys_new.json "
                        "(../shared/data/docred-hwe/dev_keys_new.json)\n")
    r = _invoke(["--hwe", hwe, "--out", out])
    assert r.exit_code == 2 and "Missing option '--run'" in r.output


# --- hostile input (sweep of understand) ----------------------------------------------------------------

def test_understand_never_overwrites_the_users_files(tiny_run: dict[str, Path], tmp_path: Path) -> None:
    """map.json and map.png were written over whatever had those names in --out."""
    run, hwe = str(tiny_run["run"]), str(tiny_run["hwe"])
    out = tmp_path / "mine"
    out.mkdir()
    (out / "map.json").write_text("my notes\n")
    r = _invoke(["--run", run, "--hwe", hwe, "--out", str(out), "--steps", "2"])
    assert (r.exit_code, r.output) == (1, f"Error: --out {out}: map.json is there and no `understand` run wrote "
                                          "it; move it, or choose another --out\n")
    assert sorted(p.name for p in out.iterdir()) == ["map.json"] and (out / "map.json").read_text() == "my notes\n"
    other = tmp_path / "other"
    (other / "attributions").mkdir(parents=True)
    (other / "attributions" / "01-run.jsonl").write_text("precious\n")
    r = _invoke(["--run", run, "--hwe", hwe, "--out", str(other), "--steps", "2"])
    assert r.exit_code == 1
    assert r.output.splitlines()[-1] == (f"Error: {other / 'attributions' / '01-run.jsonl'}: not an attributions file "
                                         "of `envbench understand` (it would be overwritten); move it, or choose "
                                         "another --out")
    assert (other / "attributions" / "01-run.jsonl").read_text() == "precious\n"
    assert not (other / "map.json").exists()
    # published together, with a manifest written last
    good = tmp_path / "u"
    r = _invoke(["--run", run, "--hwe", hwe, "--out", str(good), "--steps", "2"])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in good.iterdir()) == ["attributions", "manifest.json", "map.json", "map.png"]
    assert json.loads((good / "manifest.json").read_text())["step"] == "understand"


def test_an_interrupted_measurement_keeps_every_document_it_had(tiny_run: dict[str, Path], tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A rerun rewrote the attributions file from the top: stopped on its first new document, it had lost
    every cached one after it."""
    import models.understand as und

    run, hwe, out = str(tiny_run["run"]), tiny_run["hwe"], tmp_path / "u"
    skip_first = tmp_path / "first.json"
    skip_first.write_text(json.dumps(json.loads(hwe.read_text())[:1]))
    und.measure_understanding([run], hwe, out, steps=2, exclude_titles_from=[str(skip_first)], progress=False)
    cache = next((out / "attributions").iterdir())
    lines = cache.read_bytes().splitlines()
    assert len(lines) == 1 + 5

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(und, "attribute_document", stopped)
    with pytest.raises(KeyboardInterrupt):
        und.measure_understanding([run], hwe, out, steps=2, progress=False)
    assert cache.read_bytes().splitlines() == lines
    monkeypatch.undo()
    with cache.open("ab") as fh:  # a line cut by a kill
        fh.write(b'{"title": "Doc')
    r = und.measure_understanding([run], hwe, out, steps=2, progress=False)
    assert r.runs[0].extra["documents_computed"] == 1 and r.runs[0].extra["documents"] == 6
    assert len(cache.read_bytes().splitlines()) == 1 + 6 and cache.read_bytes().endswith(b"\n")


def test_understand_options_out_of_range(tiny_run: dict[str, Path], tmp_path: Path) -> None:
    run, hwe, out = str(tiny_run["run"]), str(tiny_run["hwe"]), str(tmp_path / "u")
    r = _invoke(["--run", run, "--hwe", hwe, "--out", out, "--steps", "100000"])  # asked torch for 80 GB
    assert (r.exit_code, r.output) == (1, "Error: --steps 100000: use at most 1,000 interpolation steps (default 10; "
                                          "30 keep the completeness error under 1%)\n")
    r = _invoke(["--run", run, "--hwe", hwe, "--out", out, "--threads", "-1"])  # a torch RuntimeError traceback
    assert (r.exit_code, r.output) == (2, "Error: Invalid value for '--threads': -1 is not in the range 0<=x<=512.\n")
    r = _invoke(["--run", run, "--hwe", hwe, "--out", out, "--threads", "100000"])  # exhausted the memory
    assert (r.exit_code, r.output) == (2, "Error: Invalid value for '--threads': 100000 is not in the range "
                                          "0<=x<=512.\n")
    r = _invoke(["--run", run, "--hwe", hwe, "--out", out, "--max-docs", str(2**64)])  # its manifest failed after
    assert (r.exit_code, r.output) == (1, f"Error: --max-docs {2**64}: out of range (a 64-bit integer, which the "
                                          "manifest records); use 0 (all) or a smaller number\n")
    r = _invoke(["--run", run, "--hwe", hwe, "--out", out, "--device", "bogus"])
    assert (r.exit_code, r.output) == (1, "Error: --device bogus: not a device; use auto, cpu, cuda or cuda:N\n")
    r = _invoke(["--run", run, "--hwe", hwe, "--out", ""])  # was the current folder
    assert (r.exit_code, r.output) == (1, "Error: --out is empty; give a folder for map.json and map.png, e.g. "
                                          "--out runs/understand\n")
    assert not Path(out).exists()


def test_a_run_without_its_best_checkpoint_names_no_option_understand_lacks(tmp_path: Path) -> None:
    # understand reads "best" only: "pass --checkpoint ..." named an option it does not have
    from envbench.core.errors import EnvbenchError
    from models.checkpoints import checkpoint_dir

    run = tmp_path / "r"
    (run / "best").mkdir(parents=True)
    with pytest.raises(EnvbenchError) as err:
        checkpoint_dir(run, "best", choosable=False)
    assert str(err.value) == (f"run {run} has no checkpoint 'best' (looked in {run / 'best'}); available: none; give "
                              "a run that has it (a finished `envbench train` run writes 'best')")
    with pytest.raises(EnvbenchError, match="pass --checkpoint best, last or epoch-N$"):
        checkpoint_dir(run, "best")


def test_understand_never_writes_into_a_run_it_reads(tiny_run: dict[str, Path]) -> None:
    """`--out RUN` wrote map.json, map.png, manifest.json and attributions/ into the run folder it measured."""
    run, hwe = tiny_run["run"], str(tiny_run["hwe"])
    before = sorted(p.relative_to(run) for p in run.rglob("*"))
    for out in (run, run / "understand"):
        r = _invoke(["--run", str(run), "--hwe", hwe, "--out", str(out), "--steps", "2"])
        assert (r.exit_code, r.output) == (1, f"Error: --out {out / 'map.json'}: inside {run}, which this step reads; "
                                              "choose an output outside it\n")
    assert sorted(p.relative_to(run) for p in run.rglob("*")) == before


@pytest.mark.parametrize(("text", "message"), [
    ("[1, 2]", "expected a JSON object of config fields, found a JSON list"),  # was a TypeError (sequence item 0)
    ('"agile"', "expected a JSON object of config fields, found a JSON string"),
    (None, "model='nosuch'; use 'atlop' or 'docunet' or 'kd-docre'"),
])
def test_a_run_config_that_is_no_config_is_one_line(tiny_run: dict[str, Path], tmp_path: Path, text: str | None,
                                                    message: str) -> None:
    """Issue 56: a run whose best/config.json is a JSON list crashed `understand`; one reader (TrainConfig.of_checkpoint)
    serves predict and understand as `train --config`."""
    run = tmp_path / "run"
    shutil.copytree(tiny_run["run"], run)
    config = run / "best" / "config.json"
    config.write_text(text or json.dumps({**json.loads(config.read_text()), "model": "nosuch"}))
    r = _invoke(["--run", str(run), "--hwe", str(tiny_run["hwe"]), "--out", str(tmp_path / "u"), "--steps", "2",
                 "--threads", "1"])
    assert (r.exit_code, r.output.splitlines()[-1]) == (1, f"Error: {config}: {message}; it must be the config.json "
                                                           "`envbench train` saved beside the checkpoint; copy the run "
                                                           "again")


# --- DocRED-HWE's own evidence positions (--units reference), against a transcription of its rule ---

def _minilm_tokenizer():
    from models.encoder import default_encoder_path, load_tokenizer

    try:
        return load_tokenizer(default_encoder_path())
    except Exception as exc:  # noqa: BLE001 - the package is optional
        pytest.skip(f"MiniLM not installed: {exc}")


def _reference_rule(doc: dict, tokenizer, max_length: int = 1024) -> tuple[list[int], dict[tuple, set[int]]]:
    """DocRED-HWE's MAP_metric.py, transcribed: the input ids and each fact's ``key_inds``.

    Every token is tokenised on its own; a "*" goes before a token that starts some mention and after one that
    ends some mention (one each, however many mentions share the token); ``sent_map[s][t]`` is the offset among
    those pieces (no [CLS]) where token t's pieces (its "*" first) begin, and ``sent_map[s][len]`` where the
    sentence ends. Its keywords_dict.pkl holds, per label, the label's last keyword span (checked: equal to
    dev_keys_new.json's last span on all 644 labelled documents); a fact's key_inds are
    range(sent_map[s][st], sent_map[s][ed]), compared as they are with positions of the input, [CLS] first.
    """
    starts = {(m["sent_id"], m["pos"][0]) for e in doc["vertexSet"] for m in e}
    ends = {(m["sent_id"], m["pos"][1] - 1) for e in doc["vertexSet"] for m in e}
    pieces: list[str] = []
    sent_map = []
    for s, sent in enumerate(doc["sents"]):
        offsets = {}
        for t, token in enumerate(sent):
            if token not in _TOKENIZE:
                _TOKENIZE[token] = tokenizer.tokenize(token)
            wp = _TOKENIZE[token]
            wp = (["*"] if (s, t) in starts else []) + wp + (["*"] if (s, t) in ends else [])
            offsets[t] = len(pieces)
            pieces.extend(wp)
        offsets[len(sent)] = len(pieces)
        sent_map.append(offsets)
    ids = [tokenizer.cls_token_id, *tokenizer.convert_tokens_to_ids(pieces[: max_length - 2]), tokenizer.sep_token_id]
    keys = {}
    for lab in doc["labels"]:
        kw = lab["keywords"][-1]
        s, (st, ed) = kw["sent_id"], kw["pos"]
        keys[(lab["h"], lab["t"], lab["r"])] = set(range(sent_map[s][st], sent_map[s][ed]))
    return ids, keys


_TOKENIZE: dict[str, list[str]] = {}  # the transcription's tokenize(token), memoised: a pure function of the token


@pytest.fixture(scope="module")
def hwe_labelled() -> list[dict]:
    """The labelled documents of the real DocRED-HWE file (read once: the reader validates all 699)."""
    from envbench.scoring.hwe import read_hwe

    return [d for d in read_hwe(shared_path("docred-hwe", "dev_keys_new.json")) if d.get("labels")]


@pytest.mark.slow
def test_reference_positions_equal_docred_hwe_rule_on_every_real_document(torch_mod, hwe_labelled) -> None:
    from envbench.scoring.hwe import hwe_facts
    from models.data import build_feature
    from models.understand import document_layout, reference_positions

    tok = _minilm_tokenizer()
    docs = hwe_labelled
    facts = same = 0
    cache: dict[str, list[int]] = {}  # word -> ids, shared across documents as training shares it
    for doc in docs:
        ids, keys = _reference_rule(doc, tok)
        layout = document_layout(doc, tok, cache=cache)
        assert layout.input_ids == ids == build_feature(doc, tok, cache=cache).input_ids, doc["title"]  # same input
        for f in hwe_facts(doc):
            facts += 1
            same += reference_positions(layout, f) == keys[(f.h, f.t, f.r)]
    assert (len(docs), facts, same) == (644, 7342, 7342)


def _reference_map(ig: list, keys: list[set[int]], max_k: int = 100) -> tuple[list[float], list[float]]:
    """MAP_metric.py's cal_mAP for K = 1..max_k, transcribed: (the 1/i MAP, the saved elbow variant).

    Per fact: the top K positions by IG (argsort, best first); the elbow from the top-100 IG values scaled by
    1/sum(v^2), sorted descending, a cubic interp1d over linspace(0, 100, 100), derivatives by central
    differences of step 0.1 at 0.1, 0.2, ..., 10.0 (scipy.misc.derivative's rule); a hit at rank i adds 1/i,
    or 1/min(i, m + 1) in the variant; each AP divided by K, then averaged over facts.
    """
    np = pytest.importorskip("numpy")
    plain, capped = np.zeros(max_k), np.zeros(max_k)
    for vals, key in zip(ig, keys):
        vals = np.asarray(vals)
        m = reference_elbow(vals)
        # argsort(...)[-topk:] reversed is, for every topk, the first topk of the whole descending order
        order = np.argsort(vals).tolist()[::-1][:max_k]
        hits = [pos for pos in range(max_k) if order[pos] in key]
        for k in range(1, max_k + 1):
            plain[k - 1] += sum(1 / (pos + 1) for pos in hits if pos < k) / k
            capped[k - 1] += sum(1 / ((pos + 1) if pos <= m else (m + 1)) for pos in hits if pos < k) / k
    return (plain / len(keys)).tolist(), (capped / len(keys)).tolist()


def test_reference_map_equals_docred_hwe_rule_on_real_documents(torch_mod, hwe_labelled) -> None:
    """``--units reference``: the 1/i MAP and its elbow variant of synthetic attributions on the first 20 labelled
    DocRED-HWE documents equal the transcribed cal_mAP, K = 1..100."""
    np = pytest.importorskip("numpy")
    from envbench.scoring.hwe import hwe_facts
    from models.understand import curves_of, document_layout, rankings, scored_facts

    tok = _minilm_tokenizer()
    docs = hwe_labelled[:20]
    rng = np.random.default_rng(60)
    records, layouts, ig, keys = [], {}, [], []
    for doc in docs:
        layout = layouts[doc["title"]] = document_layout(doc, tok)
        ref_ids, ref_keys = _reference_rule(doc, tok)
        assert len(ref_ids) >= 100  # the reference's argpartition needs 100 positions
        facts = []
        for f in hwe_facts(doc):
            # attributions with 6 decimals (what the attributions file keeps), some weight near the evidence
            vals = np.round(rng.normal(size=len(ref_ids)) + 2 * np.isin(np.arange(len(ref_ids)),
                            list(ref_keys[(f.h, f.t, f.r)])) * rng.random(), 6)
            ig.append(vals.tolist())
            keys.append(ref_keys[(f.h, f.t, f.r)])
            facts.append({"label": f.label_index, "kept": True, **rankings(vals.tolist(), layout, doc, f)})
        records.append({"title": doc["title"], "words": sum(len(s) for s in doc["sents"]),
                        "wordpieces": len(layout.input_ids), "facts": facts})
    scored = scored_facts(records, {d["title"]: d for d in docs}, layouts, "reference", "last")
    assert len(scored) == len(keys) > 200
    ours = curves_of(scored)["official"]
    plain, capped = _reference_map(ig, keys)
    assert ours["model"] == pytest.approx(plain, abs=1e-6)
    assert ours["elbow"] == pytest.approx(capped, abs=1e-6)
    assert max(plain) > 0.05  # the evidence is found often enough for the comparison to mean something
    # --units wordpiece's evidence (the last span's word pieces, after [CLS]) is never the reference's: the
    # reference's positions lie one to the left and take in the span's markers
    pieces = scored_facts(records, {d["title"]: d for d in docs}, layouts, "wordpiece", "last")
    assert [s.key for s in pieces] == [s.key for s in scored]
    assert sum(a.evidence == b.evidence for a, b in zip(pieces, scored)) == 0


# --- the span modes: evidence beyond the pair's names, and the reference's positions, by hand ---

def _tiny_hwe_doc() -> dict:
    """Doc 0 of the tiny documents: words 0-6 "Anna Berg was born in Umea .", 7-13 "Umea is a town in Sweden .",
    14-20 "Later Berg moved away from Sweden ."; label 0 (Anna Berg, Umea) has spans "Berg was" and "in", label
    1 (Umea, Sweden) only the name "Umea" of sentence 1."""
    doc = _hwe_docs(tiny_docs(1))[0]
    doc["labels"][1]["keywords"] = [{"name": "Umea", "sent_id": 1, "pos": [0, 1]}]
    return doc


def test_layout_and_the_reference_positions_by_hand(torch_mod, tiny_encoder: Path) -> None:
    from envbench.scoring.hwe import hwe_facts
    from models.encoder import load_tokenizer
    from models.understand import document_layout, pair_positions, reference_positions

    tok = load_tokenizer(str(tiny_encoder))
    doc = _tiny_hwe_doc()
    lay = document_layout(doc, tok)
    # input: [CLS] * anna berg * was born in * umea * . | * umea * is a town in * sweden * . | later * berg * ...
    assert tok.convert_ids_to_tokens(lay.input_ids[:12]) == ["[CLS]", "*", "anna", "berg", "*", "was", "born", "in",
                                                             "*", "umea", "*", "."]
    assert lay.pieces[:7] == [[2], [3], [5], [6], [7], [9], [11]]
    assert lay.markers[(0, 0, "start")] == 1 and lay.markers[(0, 1, "end")] == 4 and (0, 1, "start") not in lay.markers
    # the reference's sent_map: offsets without [CLS], a token's block starting at its start marker
    assert lay.blocks[0] == [0, 2, 4, 5, 6, 7, 10, 11] and lay.blocks[1][0] == 11 and lay.blocks[1][-1] == 22
    f0, f1, _ = hwe_facts(doc)
    # label 0's last span is "in" (input position 7): the reference checks position 6, "born"
    assert reference_positions(lay, f0) == frozenset({6})
    # label 1's "Umea" of sentence 1: offsets 11..13 = "* umea *" unshifted, i.e. ". * umea" of the input
    assert reference_positions(lay, f1) == frozenset({11, 12, 13})
    assert tok.convert_ids_to_tokens([lay.input_ids[p] for p in (11, 12, 13)]) == [".", "*", "umea"]
    # the pair's positions: every piece of Anna Berg (twice) and Umea (twice), and their markers, not Sweden's
    pair = pair_positions(lay, doc, f0)
    names = {p for w in (0, 1, 5, 7, 15) for p in lay.pieces[w]}
    marks = {lay.markers[k] for k in lay.markers if (k[0], k[1]) in {(0, 0), (0, 1), (0, 5), (1, 0), (2, 1)}}
    assert pair == frozenset(names | marks) and len(marks) == 8
    assert not {lay.markers[(1, 5, "start")], lay.markers[(2, 5, "end")]} & pair


def _records(doc: dict) -> list[dict]:
    """One document's attributions by hand: words ranked 1 (Berg), 5 (Umea), 2 (was), 0 (Anna), 4 (in), then the
    rest in order, for both facts."""
    first = [1, 5, 2, 0, 4]
    ranking = first + [w for w in range(21) if w not in first]
    scores = [float(21 - i) for i in range(21)]
    facts = [{"label": i, "kept": True, "ranking": ranking, "top_scores": scores} for i in (0, 1)]
    return [{"title": doc["title"], "words": 21, "wordpieces": 36, "facts": facts}]


def test_context_mode_leaves_the_pair_out_of_evidence_and_ranking() -> None:
    from models.understand import pair_first, scored_facts

    doc = _tiny_hwe_doc()
    docs, recs = {doc["title"]: doc}, _records(doc)
    every = scored_facts(recs, docs, {}, "word", "all")
    assert [(s.key, s.evidence, s.size) for s in every] == [(("Doc 0", 0), frozenset({1, 2, 4}), 21),
                                                            (("Doc 0", 1), frozenset({7}), 21)]
    context = scored_facts(recs, docs, {}, "word", "context")
    # label 1's evidence is the name "Umea" alone: nothing left beyond the names, so the fact is not scored
    assert [s.key for s in context] == [("Doc 0", 0)]
    (c,) = context
    assert c.evidence == frozenset({2, 4}) and c.size == 21 - 5  # Anna, Berg, Umea, Umea, Berg are not ranked
    assert c.ranking[:3] == [2, 4, 3] and not {0, 1, 5, 7, 15} & set(c.ranking)
    assert scored_facts(recs, docs, {}, "word", "last")[0].evidence == frozenset({4})
    # "Berg" ranks first for both facts: a name of label 0's pair, not of label 1's (Umea, Sweden)
    assert pair_first(recs, docs, {}, "word") == 1
    with pytest.raises(ValueError):
        scored_facts(recs, docs, {}, "reference", "context")


def test_the_metric_over_the_facts_every_run_keeps() -> None:
    from envbench.scoring.hwe import RunMap, format_table
    from models.understand import ScoredFact, add_common, curves_of

    def fact(title: str, hit: bool) -> ScoredFact:
        return ScoredFact((title, 0), [0, 1, 2], frozenset({0 if hit else 2}), 3, 0)

    a = {"context": [fact("A", True), fact("B", True)]}  # run a keeps A and B, and ranks both well
    b = {"context": [fact("B", False), fact("C", True)]}  # run b keeps B (ranked badly) and C
    runs = [RunMap(name, name, 3, 2, {form: {"context": c} for form, c in curves_of(s["context"]).items()},
                   facts_scored={"context": 2}) for name, s in (("a", a), ("b", b))]
    assert runs[0].curves["official"]["context"]["model"][0] == 1.0
    assert runs[1].curves["official"]["context"]["model"][0] == 0.5  # its own facts: B missed, C hit
    add_common(runs, [a, b])
    assert runs[0].facts_common == runs[1].facts_common == {"context": 1}  # only B
    assert runs[0].common["official"]["context"]["model"][0] == 1.0
    assert runs[1].common["official"]["context"]["model"][0] == 0.0  # on the same fact, b ranks it third
    lines = format_table(runs, "context", "official", ks=(1, 3)).splitlines()
    assert [ln.split() for ln in lines[9:]] == [
        ["on", "the", "1", "facts", "every", "run", "keeps:"],
        ["a", "1", "1.0000", "0.3333"], ["elbow", "variant", "(saved)", "1.0000", "0.3333"],
        # b's hit at rank 3 adds 1/3 (so 1/9 at K = 3), and 1 in the variant capped at its elbow (rank 1)
        ["b", "1", "0.0000", "0.1111"], ["elbow", "variant", "(saved)", "0.0000", "0.3333"],
        ["ideal", "(perfect", "ranking)", "1.0000", "0.3333"], ["random", "ranking", "0.3333", "0.2037"]]
    solo = [RunMap("a", "a", 3, 2, runs[0].curves)]
    add_common(solo, [a])
    assert not solo[0].common and "every run keeps" not in format_table(solo, "context")
