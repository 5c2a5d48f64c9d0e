"""`envbench understand`: integrated gradients on a tiny random BERT, word mapping, fact selection, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from envbench.cli import cli
from models.understand import rank_words, top_relation_classes, word_scores
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
    assert lines[1] == "official MAP(K) of words, evidence = all keyword spans of each fact:"
    assert lines[2].split() == ["run", "facts", "K=1", "K=5", "K=10", "K=20", "K=50"]
    assert [ln.split()[0] for ln in lines[3:11]] == ["run#1", "elbow", "ideal", "random",
                                                     "run#2", "elbow", "ideal", "random"]
    assert lines[12].startswith("precision MAP: run#1 K=1 ")
    data = json.loads((out / "map.json").read_text())
    assert data["settings"]["selection"]["documents"] == 4 and data["settings"]["steps"] == 4
    assert data["settings"]["map"] == "official"
    a, b = data["runs"]
    assert a["map"] == b["map"] and a["facts_total"] == 12 and 0 < a["facts_kept"] <= 12
    assert set(a["map"]) == {"official", "precision"} and set(a["map"]["official"]) == {"all", "last"}
    assert set(a["map"]["official"]["all"]) == {"model", "elbow", "ideal", "random"}
    assert set(a["map"]["precision"]["all"]) == {"model", "ideal", "random"}
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
    assert r.stdout.splitlines()[1] == "precision MAP(K) of words, evidence = all keyword spans of each fact:"
    assert json.loads((out / "map.json").read_text())["runs"][0]["documents_computed"] == 0
    # every wordpiece position ranked, as the reference: [CLS], markers and [SEP] compete with the words
    assert all(len(f["piece_ranking"]) == min(100, x["wordpieces"]) for x in recs for f in x["facts"] if f["kept"])
    r = _invoke([*args, "--units", "wordpiece"])
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[1] == "official MAP(K) of wordpieces, evidence = all keyword spans of each fact:"
    pieces_map = json.loads((out / "map.json").read_text())
    assert pieces_map["settings"]["units"] == "wordpiece" and pieces_map["runs"][0]["documents_computed"] == 0
    assert pieces_map["runs"][0]["map"]["official"]["all"]["model"] != official["model"]
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
