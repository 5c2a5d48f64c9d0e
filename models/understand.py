"""`envbench understand`: does a trained run base its predictions on the words humans mark as evidence?

For each fact of DocRED-HWE (see ``envbench.scoring.hwe``) this computes integrated gradients
(IG, Sundararajan et al. 2017) of the gold relation's logit for the pair (h, t) with respect to
the input word embeddings, ranks the document's words by their attribution and scores the
rankings with MAP(K).

Choices, and where they differ from the official DocRED-HWE code:

- **Baseline and path.** The baseline is the zero vector in place of every token's word embedding
  ([CLS], [SEP] and the entity markers included); position and token-type embeddings are added
  by the encoder as usual. The path integral uses Gauss-Legendre quadrature with ``steps`` nodes
  (the official code uses a right Riemann sum, step/steps for step = 1..steps), all nodes of a
  document in one batched forward pass (``step_batch`` splits it when memory is short). One
  backward pass per fact then gives that fact's gradients at every node.
- **Which facts count.** Only facts whose gold relation is among the model's top-k (k = 4, as
  the official ``topk``) relation logits at the real input, the threshold class excluded. The
  official code takes ``topk(logits[:, 1:])``, whose indices are class - 1, and compares them to
  the class id: off by one. It computes IG for logit index ``topk index`` (class - 1 of each top
  class) and reads the row whose index equals the gold class, so it attributes the gold class, but
  keeps a fact when the class *after* the gold one is among the top k. Here indices are shifted back
  before comparing (:func:`top_relation_classes`), in every ``--units``.
- **Words, not wordpieces.** A word's score is the sum of its wordpieces' signed attributions,
  each summed over the embedding dimensions. Words are mapped to wordpiece positions through the
  same marked word list that ``models.data.build_feature`` tokenises (:func:`document_layout`), so
  [CLS] (position 0) and the entity markers are accounted for. Markers, [CLS] and [SEP] are not words
  and are never ranked. ``--units wordpiece`` ranks every input position instead, as the official code
  does (markers, [CLS] and [SEP] included), against the evidence words' pieces ([CLS]-shifted).
  ``--units reference`` ranks the same positions against exactly the positions the official script
  checks: the last span's offsets among the marked wordpieces, markers included, counted without
  [CLS] (:func:`reference_positions`), so one position to the left of the pieces meant.
- **Evidence beyond the names.** The default span mode, ``context``, takes the head's and tail's
  mention words out of the evidence and out of the ranking (in pieces: their pieces and markers):
  MAP then measures where the attribution *beyond* the pair's names falls, and how often a name
  ranks first is reported beside it (``pair_first``). ``envbench.scoring.hwe`` says why.
- **Long documents.** A document longer than the encoder window (512 wordpieces) is encoded as
  the run encodes it (its ``long_docs``, ``models.encoder.window_plan``). IG is taken with respect
  to the document-level embeddings, so a word in the overlap gets its gradient through both
  windows and completeness still holds.
  Wordpieces past ``max_length`` (1,024) are cut as in training; words that lose all their
  pieces this way (or have none) get no score and rank last, after every scored word; they are
  counted (``unscored_words``).
- **Completeness check.** IG's attributions sum to F(x) - F(baseline). Every fact's error
  |sum - (F(x) - F(0))| is recorded; map.json reports its maximum and mean, relative to
  max(1, |F(x) - F(0)|), and how many facts exceed :data:`COMPLETENESS_TOLERANCE`.

- **The metric.** ``--map official`` (the default) is DocRED-HWE's MAP, a hit at rank i adding 1/i,
  with its saved elbow variant beside it; ``--map precision`` is the paper's equation (5)
  (``envbench.scoring.hwe``). Both are computed and written to map.json; ``--map`` picks the one
  printed and plotted. The elbow is found from the fact's top-100 *word* scores, where the
  reference takes its top-100 wordpiece positions (markers and padding included); with ``--units
  wordpiece`` or ``reference`` it reads the top-100 positions too. In the ``context`` mode it reads
  the top-100 units left once the pair's are out.
- **Facts every run keeps.** Each run keeps the facts its own model predicts, so two runs' curves
  average different facts. With several runs every curve is also computed over the facts all of them
  keep (``map_common`` in map.json, the second block of the table, the plot).

Ranks and scores are stored per fact (the top 100 words, and as many more as the pair has mention words;
likewise input positions) in ``OUT/attributions/<run>.jsonl``, one line per
document; a rerun with the same run, checkpoint weights and settings reuses those lines, so an
interrupted measurement continues where it stopped. Documented use (a run trained on Re-DocRED
dev): ``--exclude-titles-from dev_revised.json`` leaves the 339 test-side documents.

torch is imported inside the functions: ``envbench --help`` imports this module to list it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence, Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from envbench.cli._options import progress_option
from envbench.core.errors import EnvbenchError
from envbench.scoring.hwe import (
    FORM_NAMES,
    HWE_HINT,
    MAP_FORMS,
    MAX_K,
    SPAN_MODES,
    SPAN_NAMES,
    HweFact,
    RunMap,
    elbow_index,
    evidence_words,
    format_table,
    hwe_facts,
    map_curves,
    pair_words,
    plot_map,
    read_hwe,
    read_titles,
    select_documents,
    word_count,
    write_map_json,
)
from etl.io import dumps_json, require_path, sha256_file
from etl.manifest import describe_file
from models.checkpoints import checkpoint_dir
from models.config import INT64_MAX, MAX_THREADS
from models.data import REL2CLASS, RELATION_IDS, build_feature, mention_markers, typed_marker_ids
from models.data import word_pieces as data_word_pieces

TOP_K = 4  # a fact counts when its gold relation is among the model's 4 best relations (DocRED-HWE's topk)
# |sum of attributions - (F(x) - F(0))| / max(1, |F(x) - F(0)|). Measured at 10 steps: <= 1.2% with a random
# MiniLM head; mean 7%, max 43% on barely trained MiniLM runs, whose path F(a x) rises sharply near a = 0.2
# (30 steps: < 1%). Facts over it are counted and the command says to raise --steps.
COMPLETENESS_TOLERANCE = 0.05
MAX_STEPS = 1000  # --steps at most: the quadrature's nodes need a steps x steps matrix and each step a forward pass
CHECKPOINT = "best"
CACHE_VERSION = 4  # 2: top_scores (the elbow); 3: piece_ranking, piece_top_scores; 4: rankings past MAX_K (context)
# What is ranked and against which evidence: words; every input position (as the reference ranks them) against
# the evidence words' pieces; or every input position against exactly the positions DocRED-HWE's MAP_metric.py
# checks (its last span, not shifted for [CLS]: reference_positions).
UNITS: tuple[str, ...] = ("word", "wordpiece", "reference")


# --- words and wordpieces ------------------------------------------------------------------------

@dataclass(frozen=True)
class Layout:
    """Where each word and each entity marker of a document sits in the run's input (``build_feature``)."""

    input_ids: list[int]  # [CLS], the marked wordpieces (cut at max_length), [SEP]
    pieces: list[list[int]]  # per word (flat reading order): its positions in input_ids; [] for a word past the cut
    markers: dict[tuple[int, int, str], int]  # (sent_id, token, "start" | "end") -> the marker's position (kept ones)
    # DocRED-HWE's ``sent_map``: per sentence, for token 0..len(sentence), the offset where that token's block
    # (its start marker first, if it starts a mention) begins among the marked wordpieces, counted *without*
    # [CLS] and before any cut. MAP_metric.py uses these offsets as positions of the model's input, in which
    # [CLS] comes first: :func:`reference_positions`.
    blocks: list[list[int]]


def document_layout(doc: dict[str, Any], tokenizer: Any, *, marker: str = "*", max_length: int = 1024,
                    markers: str = "plain", cache: dict[str, list[int]] | None = None) -> Layout:
    """The :class:`Layout` of ``doc`` as ``models.data.build_feature`` tokenises it (same words, markers and cut);
    ``cache`` (word -> ids) is ``models.data.word_pieces``'s, shared across documents."""
    starts, ends = mention_markers(doc, marker, markers)
    words: list[str] = []
    slots: list[tuple[str, int, int]] = []  # per marked word: ("start" | "word" | "end", sent_id, token)
    for sid, sent in enumerate(doc["sents"]):
        for ti, tok in enumerate(sent):
            if (sid, ti) in starts:
                words.append(starts[(sid, ti)])
                slots.append(("start", sid, ti))
            words.append(tok)
            slots.append(("word", sid, ti))
            if (sid, ti) in ends:
                words.append(ends[(sid, ti)])
                slots.append(("end", sid, ti))
    # each word tokenised on its own, exactly as training's build_feature does (models.data)
    per_word = data_word_pieces(tokenizer, words, cache,
                                specials=typed_marker_ids(tokenizer) if markers == "typed" else None)
    total = sum(len(ids) for ids in per_word)
    limit = max_length - 2 if max_length and total + 2 > max_length else total
    body: list[int] = []
    word_of = {(sid, ti): w for w, (sid, ti) in enumerate((sid, ti) for sid, sent in enumerate(doc["sents"])
                                                         for ti in range(len(sent)))}
    pieces: list[list[int]] = [[] for _ in word_of]
    marker_at: dict[tuple[int, int, str], int] = {}
    blocks: list[list[int]] = [[] for _ in doc["sents"]]
    for (kind, sid, ti), ids in zip(slots, per_word):
        if kind == "start" or (kind == "word" and (sid, ti) not in starts):
            blocks[sid].append(len(body))  # the token's block begins here, at its start marker if it has one
        kept = [len(body) + 1 + j for j in range(len(ids)) if len(body) + j < limit]  # +1: [CLS] comes first
        if kind == "word":
            pieces[word_of[(sid, ti)]] = kept
        elif kept:
            marker_at[(sid, ti, kind)] = kept[0]
        body.extend(ids)
        if ti == len(doc["sents"][sid]) - 1 and kind != "start" and (kind == "end" or (sid, ti) not in ends):
            blocks[sid].append(len(body))  # the sentence's end: its last token's block, end marker included, is over
    input_ids = [tokenizer.cls_token_id, *body[:limit], tokenizer.sep_token_id]
    return Layout(input_ids, pieces, marker_at, blocks)


def word_pieces(doc: dict[str, Any], tokenizer: Any, *, marker: str = "*", max_length: int = 1024,
                markers: str = "plain") -> tuple[list[int], list[list[int]]]:
    """``input_ids`` as ``build_feature`` makes them, and for each word (flat reading order) the
    positions of its wordpieces in ``input_ids`` ([CLS] is position 0; markers belong to no word)."""
    layout = document_layout(doc, tokenizer, marker=marker, max_length=max_length, markers=markers)
    return layout.input_ids, layout.pieces


def pair_positions(layout: Layout, doc: dict[str, Any], fact: HweFact) -> frozenset[int]:
    """Input positions of the head's and tail's mentions: their words' pieces and their markers."""
    out: set[int] = {p for w in pair_words(doc, fact) for p in layout.pieces[w]}
    for e in (fact.h, fact.t):
        for m in doc["vertexSet"][e]:
            for key in ((m["sent_id"], m["pos"][0], "start"), (m["sent_id"], m["pos"][1] - 1, "end")):
                if key in layout.markers:
                    out.add(layout.markers[key])
    return frozenset(out)


def reference_positions(layout: Layout, fact: HweFact) -> frozenset[int]:
    """The evidence positions DocRED-HWE's ``MAP_metric.py`` checks a fact's ranking against (its ``key_inds``).

    Its rule: the fact's last keyword span (sent_id, st, ed) covers ``range(sent_map[sent_id][st],
    sent_map[sent_id][ed])``, offsets among the marked wordpieces (entity markers inside the span, and the
    start marker of a mention that begins it, included) counted without [CLS], and compared as they are
    with positions of the input, which begins with [CLS]. So each position is one to the left of the
    piece it was meant for: the span's last piece (or end marker) is left out and the piece before the span
    is in. Reproduced as it is, for numbers comparable with DocRED-HWE's; positions past the cut never rank.
    """
    sid, st, ed = fact.spans[-1]
    return frozenset(range(layout.blocks[sid][st], layout.blocks[sid][ed]))


def word_scores(token_attr: Sequence[float], pieces: Sequence[Sequence[int]]) -> list[float | None]:
    """Per word, the sum of its wordpieces' attributions; None for a word without pieces."""
    return [sum(token_attr[p] for p in ps) if ps else None for ps in pieces]


def rank_words(scores: Sequence[float | None], limit: int = MAX_K, skip: Set[int] = frozenset()) -> list[int]:
    """Word indices by score, highest first; ties by position; words without a score last; ``skip`` left out."""
    scored = sorted((i for i, s in enumerate(scores) if s is not None and i not in skip), key=lambda i: (-scores[i], i))
    unscored = [i for i, s in enumerate(scores) if s is None and i not in skip]
    return (scored + unscored)[:limit]


def rank_positions(attr: Sequence[float], limit: int = MAX_K, skip: Set[int] = frozenset()) -> list[int]:
    """Input positions by attribution, highest first, ties by position ([CLS], markers and [SEP] compete, as in
    the reference, which takes ``argsort``); ``skip`` left out."""
    return sorted((i for i in range(len(attr)) if i not in skip), key=lambda i: (-attr[i], i))[:limit]


def top_relation_classes(logits: Sequence[float], k: int = TOP_K) -> list[int]:
    """The k relation classes (1..96) with the highest logits; class 0, the threshold, is not a relation.

    Logits are indexed by class; dropping class 0 shifts positions by one, which is undone here
    (the official code compares the shifted positions to class ids).
    """
    rel = sorted(range(1, len(logits)), key=lambda c: (-logits[c], c))
    return rel[:k]


# --- the model on embeddings ---------------------------------------------------------------------

def encode_embeddings(encoder: Any, embeds: Any, window: int, scheme: str = "two_windows") -> tuple[Any, Any]:
    """``models.encoder.encode`` for rows of one document given as word embeddings [R, L, H] (no padding).

    Rows longer than ``window`` are windowed as in training (``scheme``, the run's ``long_docs``);
    gradients reach the document-level embeddings through every window that holds a position.
    """
    from models.encoder import encode

    mask = embeds.new_ones(embeds.shape[:2], dtype=embeds.dtype).long()
    return encode(encoder, None, mask, window, scheme=scheme, inputs_embeds=embeds)


def logits_from_embeddings(model: Any, embeds: Any, entity_pos: list[list[int]], pairs: list[tuple[int, int]]) -> Any:
    """ATLOP's logits [R, P, C] for R rows of one document given as word embeddings, for ``pairs`` only.

    Mirrors ``models.atlop.ATLOP.forward`` (a test checks the two agree), except that the pooling
    gathers every mention's attention row once, for all rows together: ``ATLOP.pooled`` indexes the
    full [heads, L, L] map per entity and row, and the backward pass of each such index allocates a
    map-sized tensor, which made one backward pass per fact several times slower on long documents.
    """
    import torch

    rows = embeds.shape[0]
    seq, att = encode_embeddings(model.encoder, embeds, model.window, model.long_docs)
    seq, att = seq.float(), att.float()
    flat = [p for pos in entity_pos for p in pos]
    index = torch.tensor(flat, device=seq.device)
    seq_m, att_m = seq[:, index], att[:, :, index]  # [R, M, H], [R, heads, M, L]
    embs, atts, start = [], [], 0
    for pos in entity_pos:
        n = len(pos)
        e = seq_m[:, start : start + n]
        embs.append(torch.logsumexp(e, dim=1) if n > 1 else e[:, 0])
        atts.append(att_m[:, :, start : start + n].mean(2))
        start += n
    emb, ent_att = torch.stack(embs, 1), torch.stack(atts, 1)  # [R, E, H], [R, E, heads, L]
    ph = torch.tensor([h for h, _ in pairs], device=seq.device)
    pt = torch.tensor([t for _, t in pairs], device=seq.device)
    ht_att = (ent_att[:, ph] * ent_att[:, pt]).mean(2)  # [R, P, L]
    ht_att = ht_att / (ht_att.sum(-1, keepdim=True) + 1e-5)
    width = seq.shape[-1]
    rs = torch.bmm(ht_att, seq).reshape(-1, width)
    hs, ts = emb[:, ph].reshape(-1, width), emb[:, pt].reshape(-1, width)
    zh = torch.tanh(model.head_extractor(torch.cat([hs, rs], dim=1)))
    zt = torch.tanh(model.tail_extractor(torch.cat([ts, rs], dim=1)))
    groups = model.emb_size // model.block_size
    b1 = zh.view(-1, groups, model.block_size)
    b2 = zt.view(-1, groups, model.block_size)
    bl = (b1.unsqueeze(3) * b2.unsqueeze(2)).reshape(-1, model.emb_size * model.block_size)
    return model.bilinear(bl).float().view(rows, len(pairs), -1)


def input_embeddings(model: Any, input_ids: Sequence[int]) -> Any:
    """The word embeddings [L, H] of one document's wordpieces (float32, no gradient)."""
    import torch

    layer = model.encoder.get_input_embeddings()
    ids = torch.tensor([list(input_ids)], dtype=torch.long, device=layer.weight.device)
    with torch.no_grad():
        return layer(ids)[0].float()


def gauss_legendre(n: int) -> tuple[Any, Any]:
    """Nodes in (0, 1) and weights (summing to 1) of n-point Gauss-Legendre quadrature (Golub-Welsch)."""
    import torch

    if n == 1:
        return torch.tensor([0.5], dtype=torch.float64), torch.tensor([1.0], dtype=torch.float64)
    k = torch.arange(1, n, dtype=torch.float64)
    off = k / torch.sqrt(4 * k * k - 1)
    jacobi = torch.diag(off, 1) + torch.diag(off, -1)
    nodes, vecs = torch.linalg.eigh(jacobi)
    weights = vecs[0] ** 2  # 2 * v0^2 on [-1, 1], halved for [0, 1]
    return (nodes + 1) / 2, weights


def integrated_gradients(model: Any, x: Any, entity_pos: list[list[int]], targets: Sequence[tuple[int, int, int]], *,
                         steps: int = 10, step_batch: int = 0) -> Any:
    """IG with a zero baseline of each target (h, t, class) logit w.r.t. the embeddings ``x`` [L, H].

    Returns [T, L]: per target, each wordpiece's attribution summed over the embedding dimensions.
    The ``steps`` interpolation points go through the model together (``step_batch`` at a time).
    """
    import torch

    pairs = sorted({(h, t) for h, t, _ in targets})
    pair_index = {p: i for i, p in enumerate(pairs)}
    alphas, weights = gauss_legendre(steps)
    alphas, weights = alphas.to(x.device, torch.float32), weights.to(x.device, torch.float32)
    attr = x.new_zeros((len(targets), x.shape[0]))
    chunk = step_batch if step_batch > 0 else steps
    for start in range(0, steps, chunk):
        a, w = alphas[start : start + chunk], weights[start : start + chunk]
        xs = (a.view(-1, 1, 1) * x.unsqueeze(0)).detach().requires_grad_(True)
        logits = logits_from_embeddings(model, xs, entity_pos, pairs)
        for i, (h, t, c) in enumerate(targets):
            y = (logits[:, pair_index[(h, t)], c] * w).sum()
            (grad,) = torch.autograd.grad(y, xs, retain_graph=i < len(targets) - 1)
            attr[i] += (grad.sum(0) * x).sum(-1)
    return attr


# --- one document ----------------------------------------------------------------------------------

def attribute_document(model: Any, tokenizer: Any, cfg: Any, doc: dict[str, Any], *, steps: int = 10,
                       step_batch: int = 0, top_k: int = TOP_K, every_fact: bool = False) -> dict[str, Any]:
    """Attributions of one HWE document: per fact, whether it counts, its top-100 words and the completeness terms.

    ``every_fact`` attributes every fact whatever the model predicts (for timing an untrained model).
    """
    import torch

    t0 = time.time()
    feat = build_feature(doc, tokenizer, marker=cfg.marker, max_length=cfg.max_length, markers=cfg.markers)
    layout = document_layout(doc, tokenizer, marker=cfg.marker, max_length=cfg.max_length, markers=cfg.markers)
    input_ids, pieces = layout.input_ids, layout.pieces
    if input_ids != feat.input_ids:  # the two must tokenise alike, or words would map to the wrong pieces
        raise EnvbenchError(f"document {doc['title']!r}: word-to-wordpiece mapping disagrees with models.data."
                            "build_feature; report this as a bug")
    facts = hwe_facts(doc)
    known = [f for f in facts if f.r in REL2CLASS]
    x = input_embeddings(model, input_ids)
    pairs = sorted({(f.h, f.t) for f in known})
    records: list[dict[str, Any]] = []
    if pairs:
        with torch.no_grad():
            both = logits_from_embeddings(model, torch.stack([x, torch.zeros_like(x)]), feat.entity_pos, pairs)
        real, base = both[0].tolist(), both[1].tolist()
    for f in facts:
        rec: dict[str, Any] = {"label": f.label_index, "h": f.h, "t": f.t, "r": f.r, "kept": False}
        if f.r in REL2CLASS:
            row = real[pairs.index((f.h, f.t))]
            c = REL2CLASS[f.r]
            top = top_relation_classes(row, top_k)
            rec.update(kept=every_fact or c in top, above_threshold=row[c] > row[0], top=[RELATION_IDS[k - 1] for k in top],
                       f_x=row[c], f_0=base[pairs.index((f.h, f.t))][c])
        else:
            rec["unknown_relation"] = True
        records.append(rec)
    kept = [rec for rec in records if rec["kept"]]
    if kept:
        targets = [(rec["h"], rec["t"], REL2CLASS[rec["r"]]) for rec in kept]
        attr = integrated_gradients(model, x, feat.entity_pos, targets, steps=steps, step_batch=step_batch)
        for rec, row in zip(kept, attr.tolist()):
            rec["attr_sum"] = sum(row)
            rec.update(rankings(row, layout, doc, facts[rec["label"]]))
    return {"title": doc["title"], "words": word_count(doc), "wordpieces": len(input_ids),
            "windows": len(input_ids) > cfg.window, "cut": feat.cut, "unscored_words": sum(not p for p in pieces),
            "seconds": round(time.time() - t0, 3), "facts": records}


def rankings(attr: Sequence[float], layout: Layout, doc: dict[str, Any], fact: HweFact) -> dict[str, list]:
    """What the attributions file keeps of one fact's attributions (one per input position): the words by
    score (``ranking``, ``top_scores``) and the input positions by attribution (``piece_ranking``,
    ``piece_top_scores``), each the top MAX_K and as many more as the pair has mention units, so that the
    ``context`` mode, which takes those out, still has its top MAX_K. Scores are rounded to 6 decimals."""
    scores = word_scores(attr, layout.pieces)
    words = rank_words(scores, MAX_K + len(pair_words(doc, fact)))
    # every input position ([CLS], markers, [SEP] included), as the reference ranks them
    positions = rank_positions(attr, MAX_K + len(pair_positions(layout, doc, fact)))
    return {"ranking": words, "top_scores": [round(scores[i], 6) for i in words if scores[i] is not None],
            "piece_ranking": positions, "piece_top_scores": [round(attr[i], 6) for i in positions]}


def completeness(records: Sequence[dict[str, Any]], tolerance: float = COMPLETENESS_TOLERANCE) -> dict[str, Any]:
    """How far the attributions' sums are from F(x) - F(0), over the kept facts of ``records`` (documents)."""
    errs = []
    for doc in records:
        for f in doc["facts"]:
            if f.get("kept"):
                delta = f["f_x"] - f["f_0"]
                errs.append((abs(f["attr_sum"] - delta), abs(f["attr_sum"] - delta) / max(1.0, abs(delta))))
    if not errs:
        return {"facts": 0, "tolerance": tolerance}
    return {"facts": len(errs), "tolerance": tolerance, "max_abs_error": round(max(e for e, _ in errs), 6),
            "mean_abs_error": round(sum(e for e, _ in errs) / len(errs), 6),
            "max_rel_error": round(max(r for _, r in errs), 6),
            "mean_rel_error": round(sum(r for _, r in errs) / len(errs), 6),
            "over_tolerance": sum(r > tolerance for _, r in errs)}


# --- scoring the rankings ----------------------------------------------------------------------------

def span_modes(units: str) -> tuple[str, ...]:
    """The span modes scored in ``units``: the reference's evidence is its own (the last span's positions)."""
    return ("last",) if units == "reference" else SPAN_MODES


@dataclass(frozen=True)
class ScoredFact:
    """One kept fact as a span mode scores it."""

    key: tuple[str, int]  # (document title, label index): the same fact in every run
    ranking: list[int]  # the top MAX_K units (word indices or input positions), best first
    evidence: frozenset[int]  # the units that count as hits
    size: int  # how many units were ranked (a random ranking's N)
    elbow: int  # the official MAP's saved variant: elbow_index of the ranked units' scores


def scored_facts(records: Sequence[dict[str, Any]], docs: dict[str, dict[str, Any]], layouts: dict[str, Layout],
                 units: str, spans: str) -> list[ScoredFact]:
    """The kept facts of ``records`` (attribution records) with their ranking and evidence in ``units``/``spans``.

    ``context`` takes the pair's mention words (in pieces: their pieces and markers) out of the ranking as well
    as the evidence, and leaves out a fact with no evidence besides them. ``layouts`` (by title) are needed for
    the wordpiece and reference units.
    """
    if spans not in span_modes(units):
        raise ValueError(f"spans={spans!r} with units={units!r}; use one of {span_modes(units)}")
    out = []
    for rec in records:
        doc = docs[rec["title"]]
        facts = hwe_facts(doc)
        for f in rec["facts"]:
            if not f["kept"]:
                continue
            fact = facts[f["label"]]
            if units == "word":
                skip = pair_words(doc, fact) if spans == "context" else frozenset()
                ranked, scores, size = f["ranking"], f["top_scores"], rec["words"]
                evidence = evidence_words(doc, fact, spans)
            else:
                layout = layouts[rec["title"]]
                skip = pair_positions(layout, doc, fact) if spans == "context" else frozenset()
                ranked, scores, size = f["piece_ranking"], f["piece_top_scores"], rec["wordpieces"]
                if units == "reference":
                    evidence = reference_positions(layout, fact)
                else:
                    evidence = frozenset(p for w in evidence_words(doc, fact, spans) for p in layout.pieces[w])
            if not evidence:
                continue
            # scores list the scored units in ranking order (unscored words rank last), so zip pairs them up
            top = [v for u, v in zip(ranked, scores) if u not in skip][:MAX_K]
            out.append(ScoredFact((rec["title"], f["label"]), [u for u in ranked if u not in skip][:MAX_K], evidence,
                                  size - len(skip), elbow_index(top)))
    return out


def pair_first(records: Sequence[dict[str, Any]], docs: dict[str, dict[str, Any]], layouts: dict[str, Layout],
               units: str) -> int:
    """How many kept facts have a mention of their own head or tail (a word, or a piece or marker) ranked first."""
    n = 0
    for rec in records:
        doc = docs[rec["title"]]
        facts = hwe_facts(doc)
        for f in rec["facts"]:
            if f["kept"]:
                fact = facts[f["label"]]
                if units == "word":
                    n += bool(f["ranking"]) and f["ranking"][0] in pair_words(doc, fact)
                else:
                    n += bool(f["piece_ranking"]) and f["piece_ranking"][0] in pair_positions(layouts[rec["title"]], doc, fact)
    return n


def curves_of(facts: Sequence[ScoredFact]) -> dict[str, dict[str, list[float]]]:
    """MAP(K) of the facts in each form (MAP_FORMS), with the ideal, random and (official) elbow curves."""
    items = [(f.ranking, f.evidence) for f in facts]
    sizes, elbows = [f.size for f in facts], [f.elbow for f in facts]
    return {form: map_curves(items, words=sizes, form=form, elbows=elbows if form == "official" else None)
            for form in MAP_FORMS}


def add_common(results: Sequence[RunMap], scored: Sequence[dict[str, list[ScoredFact]]]) -> None:
    """Give each run (of two or more) its curves over the facts that every run keeps, per span mode."""
    if len(results) < 2:
        return
    for mode in scored[0]:
        keys = set.intersection(*({f.key for f in s[mode]} for s in scored))
        for r, s in zip(results, scored):
            for form, c in curves_of([f for f in s[mode] if f.key in keys]).items():
                r.common.setdefault(form, {})[mode] = c
            r.facts_common[mode] = len(keys)


# --- runs and the measurement -----------------------------------------------------------------------

@dataclass
class UnderstandResult:
    out: str
    runs: list[RunMap]
    selection: dict[str, int]
    spans: str
    map_form: str = "official"
    files: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def run_labels(runs: Sequence[str]) -> list[str]:
    """Short unique names: the folder name, or more of the path (or a number) where two collide."""
    paths = [Path(r) for r in runs]
    names = [p.name or str(p) for p in paths]
    out = list(names)
    for name in sorted(set(names)):
        group = [i for i, n in enumerate(names) if n == name]
        if len(group) == 1:
            continue
        longer = ["/".join(paths[i].parts[-2:]) for i in group]
        distinct = len(set(longer)) == len(longer)
        for k, i in enumerate(group):
            out[i] = longer[k] if distinct else f"{name}#{k + 1}"
    return out


def _cache_file(out: Path, index: int, label: str) -> Path:
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in label)
    return out / "attributions" / f"{index + 1:02d}-{safe}.jsonl"


def _read_cache(path: Path, header: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The records of the attributions file at ``path`` when its header is ``header``, by title; {} otherwise."""
    import orjson

    if not path.is_file():
        return {}
    lines = path.read_bytes().splitlines()
    try:
        if not lines or orjson.loads(lines[0]) != header:
            return {}  # another run, checkpoint or setting: start over
    except orjson.JSONDecodeError:
        return {}
    return _records(lines[1:])


def _records(lines: Sequence[bytes]) -> dict[str, dict[str, Any]]:
    """The attribution records of an attributions file's lines after its header, by title."""
    import orjson

    out: dict[str, dict[str, Any]] = {}
    for ln in lines:
        try:
            rec = orjson.loads(ln)
        except orjson.JSONDecodeError:  # a line cut by an interruption
            continue
        if isinstance(rec, dict) and isinstance(rec.get("title"), str):
            out[rec["title"]] = rec
    return out


def _open_cache(path: Path, header: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], Any]:
    """The cached records of ``path`` and the file opened to append new ones.

    A file with this header is kept and appended to (a line cut by an interruption is dropped
    first), so stopping a measurement never loses a document computed before; a file of other
    settings is started afresh; a file that is no attributions file is refused, not overwritten.
    """
    import orjson

    if path.exists():
        data = path.read_bytes() if path.is_file() else None
        try:
            first = orjson.loads(data.split(b"\n", 1)[0]) if data else None
        except orjson.JSONDecodeError:
            first = None
        if first == header:
            if not data.endswith(b"\n"):  # cut mid-line: keep the whole lines only
                with open(path, "r+b") as fh:
                    fh.truncate(data.rfind(b"\n") + 1)
            return _records(data.splitlines()[1:]), open(path, "ab")  # noqa: SIM115 - closed by the caller
        if data != b"" and not (isinstance(first, dict) and "cache" in first):  # b"": cut before its header
            raise EnvbenchError(f"{path}: not an attributions file of `envbench understand` (it would be "
                                "overwritten); move it, or choose another --out")
    path.parent.mkdir(parents=True, exist_ok=True)
    fh = open(path, "wb")  # noqa: SIM115 - closed by the caller
    fh.write(dumps_json(header))
    fh.flush()
    return {}, fh


def _train_overlap(cfg: Any, titles: set[str], run: str) -> list[str]:
    """Warnings for measured documents that the run trained or selected its checkpoint on."""
    out = []
    for name in ("train", "dev"):
        path = getattr(cfg, name, "")
        if path and Path(path).is_file():
            n = len(titles & read_titles([path]))
            if n:
                what = "training" if name == "train" else "checkpoint-selection (dev)"
                out.append(f"{n} of the {len(titles)} measured documents are in {run}'s {what} file {path}: the curve "
                           f"then measures memorisation; pass --exclude-titles-from {path}")
    return out


def measure_understanding(runs: Sequence[str], hwe: str | os.PathLike[str], out: str | os.PathLike[str], *, max_docs: int = 0,
               steps: int = 10, exclude_titles_from: Sequence[str] = (), spans: str | None = None,
               device: str = "cpu", threads: int = 0, step_batch: int = 0, progress: bool = True,
               map_form: str = "official", units: str = "word") -> UnderstandResult:
    """MAP(K) of each run's IG rankings against DocRED-HWE's evidence; writes map.json and map.png.

    Both MAP forms (``MAP_FORMS``) are computed for every span mode of ``units`` (:func:`span_modes`);
    ``map_form`` and ``spans`` (default: ``context``, or ``last`` for the reference units) pick the curves
    printed and plotted. ``units="wordpiece"`` ranks every input position as DocRED-HWE's code does
    ([CLS], markers and [SEP] included; evidence = the evidence words' pieces, [CLS]-shifted);
    ``"reference"`` ranks them against exactly the positions ``MAP_metric.py`` checks
    (:func:`reference_positions`); ``"word"`` ranks words. With several runs every curve is also computed
    over the facts all of them keep (``RunMap.common``)."""
    if units not in UNITS:
        raise EnvbenchError(f"--units {units}: use one of {', '.join(UNITS)}")
    if spans is None:
        spans = span_modes(units)[0]
    if spans not in span_modes(units):
        if units == "reference":
            raise EnvbenchError(f"--spans {spans}: --units reference scores DocRED-HWE's own evidence, the last "
                                "keyword span; leave --spans out (or pass --spans last)")
        raise EnvbenchError(f"--spans {spans}: use one of {', '.join(SPAN_MODES)}")
    if map_form not in MAP_FORMS:
        raise EnvbenchError(f"--map {map_form}: use one of {', '.join(MAP_FORMS)}")
    require_path(out, "--out", "a folder for map.json and map.png", "--out runs/understand")
    if steps < 1:
        raise EnvbenchError(f"--steps {steps}: use at least 1 interpolation step (default 10)")
    if steps > MAX_STEPS:  # Gauss-Legendre's nodes come from a dense steps x steps matrix: 100,000 asked for 80 GB
        raise EnvbenchError(f"--steps {steps}: use at most {MAX_STEPS:,} interpolation steps (default 10; 30 keep "
                            "the completeness error under 1%)")
    if not 0 <= threads <= MAX_THREADS:
        raise EnvbenchError(f"--threads {threads}: use 0 (torch's default) or a number up to {MAX_THREADS}")
    if max_docs < 0:
        raise EnvbenchError(f"--max-docs {max_docs}: use 0 (all) or a positive number")
    if max_docs > INT64_MAX:  # map.json and the manifest record it: a 64-bit integer at most
        raise EnvbenchError(f"--max-docs {max_docs}: out of range (a 64-bit integer, which the manifest records); "
                            "use 0 (all) or a smaller number")
    for run in runs:
        checkpoint_dir(run, CHECKPOINT, choosable=False)  # fail on a bad run before hours of work on the good ones
    docs = read_hwe(hwe)
    sel = select_documents(docs, exclude_titles=read_titles(exclude_titles_from), max_docs=max_docs)
    if not sel.docs:
        raise EnvbenchError(f"{hwe}: no documents left to measure ({sel.total} in the file, {sel.excluded} excluded "
                            f"by --exclude-titles-from, {sel.without_labels} without labels); exclude fewer titles")

    import orjson
    import torch

    from etl.progress import bar
    from etl.step import Step
    from models.checkpoints import load_run, resolve_device, weights_of

    if threads:
        torch.set_num_threads(threads)
    dev = resolve_device(device)
    out_p = Path(out)
    # map.json and map.png are staged and published together, with OUT/manifest.json last; a map.json of the
    # user's is refused before any work. The attributions are a cache beside them, kept when a run stops.
    # each checkpoint's weights hashed once, for the manifest and for its attributions' header
    weights = [describe_file(weights_of(checkpoint_dir(run, CHECKPOINT, choosable=False))) for run in runs]
    parameters = {"steps": steps, "top_k": TOP_K, "spans": spans, "map": map_form, "units": units,
                  "max_docs": max_docs, "checkpoint": CHECKPOINT, "runs": [str(r) for r in runs]}
    # the runs are read whole (weights, encoder/, config): no output may go inside one (`--out RUN` wrote there)
    with Step("understand", root=out_p, outputs=["map.json", "map.png"], parameters=parameters, rerun=True,
              inputs=[hwe, *exclude_titles_from, *weights], force_flag=None, protected=list(runs)) as step:
        titles = {d["title"] for d in sel.docs}
        labels = run_labels(runs)
        hwe_sha256 = sha256_file(hwe)
        results: list[RunMap] = []
        scored: list[dict[str, list[ScoredFact]]] = []  # per run: span mode -> its scored facts
        warnings: list[str] = []
        for ri, (run, label) in enumerate(zip(runs, labels)):
            model, cfg, tokenizer = load_run(run, CHECKPOINT, dev)
            if cfg.model != "atlop":  # logits_from_embeddings mirrors ATLOP's forward only
                raise EnvbenchError(f"run {run} is a {cfg.model} model; understand measures ATLOP runs only "
                                    "(trained with --model atlop, the default)")
            for p in model.parameters():
                p.requires_grad_(False)  # gradients are wanted for the inputs only
            for w in _train_overlap(cfg, titles, run):
                warnings.append(w)
                click.echo(f"warning: {w}", err=True)
            header = {"cache": CACHE_VERSION, "run": str(Path(run).resolve()), "weights_sha256": weights[ri]["sha256"],
                      "hwe_sha256": hwe_sha256, "steps": steps, "top_k": TOP_K}
            cache_path = _cache_file(out_p, ri, label)
            records: list[dict[str, Any]] = []
            t0 = time.time()
            computed = 0
            # only new documents are appended: the cached ones (an earlier, larger selection's too) stay as they are
            cached, fh = _open_cache(cache_path, header)
            with fh:
                for doc in bar(sel.docs, desc=f"IG {label}", enabled=progress):
                    rec = cached.get(doc["title"])
                    if rec is None:
                        rec = attribute_document(model, tokenizer, cfg, doc, steps=steps, step_batch=step_batch)
                        computed += 1
                        fh.write(orjson.dumps(rec, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE))
                        fh.flush()
                    records.append(rec)
            seconds = time.time() - t0
            by_title = {d["title"]: d for d in sel.docs}
            layouts = {} if units == "word" else {
                rec["title"]: document_layout(by_title[rec["title"]], tokenizer, marker=cfg.marker,
                                              max_length=cfg.max_length, markers=cfg.markers) for rec in records}
            run_scored = {mode: scored_facts(records, by_title, layouts, units, mode) for mode in span_modes(units)}
            scored.append(run_scored)
            curves: dict[str, dict[str, dict[str, list[float]]]] = {form: {} for form in MAP_FORMS}
            for mode, facts in run_scored.items():
                for form, c in curves_of(facts).items():
                    curves[form][mode] = c
            kept = sum(f["kept"] for rec in records for f in rec["facts"])
            comp = completeness(records)
            if not kept:
                w = (f"{label}: no fact's gold relation is among the model's top {TOP_K}, so its MAP curve is empty (all 0); "
                     "is the run trained?")
                warnings.append(w)
                click.echo(f"warning: {w}", err=True)
            if comp.get("over_tolerance"):
                w = (f"{label}: {comp['over_tolerance']} of {comp['facts']} facts miss IG completeness by more than "
                     f"{COMPLETENESS_TOLERANCE:.0%} of the logit difference; raise --steps (now {steps})")
                warnings.append(w)
                click.echo(f"warning: {w}", err=True)
            extra = {
                "checkpoint": CHECKPOINT, "top_k": TOP_K,
                "facts_kept_above_threshold": sum(bool(f.get("above_threshold")) and f["kept"]
                                                  for rec in records for f in rec["facts"]),
                "facts_unknown_relation": sum(bool(f.get("unknown_relation")) for rec in records for f in rec["facts"]),
                "documents": len(records), "documents_over_window": sum(r["windows"] for r in records),
                "documents_cut": sum(r["cut"] for r in records), "unscored_words": sum(r["unscored_words"] for r in records),
                "completeness": comp, "seconds": round(seconds, 1), "documents_computed": computed,
                "seconds_per_document": round(sum(r["seconds"] for r in records) / len(records), 3),
                "attributions": str(cache_path),
                "pair_first": pair_first(records, by_title, layouts, units),
            }
            results.append(RunMap(run, label, sel.facts, kept, curves, extra,
                                  facts_scored={mode: len(f) for mode, f in run_scored.items()}))
            del model
        add_common(results, scored)
        settings = {"hwe": str(hwe), "steps": steps, "quadrature": "gauss-legendre", "baseline": "zero word embeddings",
                    "top_k": TOP_K, "spans": spans, "map": map_form, "units": units, "max_docs": max_docs, "checkpoint": CHECKPOINT,
                    "exclude_titles_from": [str(p) for p in exclude_titles_from], "selection": sel.as_dict(),
                    "completeness_tolerance": COMPLETENESS_TOLERANCE}
        write_map_json(step.path("map.json"), results, settings)
        title = (f"{FORM_NAMES[map_form]}\nDocRED-HWE, {len(sel.docs)} documents; evidence: {spans} "
                 f"({'positions of MAP_metric.py' if units == 'reference' else units + 's'})")
        plot_map(step.path("map.png"), results, spans, title, map_form)
    return UnderstandResult(str(out_p), results, sel.as_dict(), spans, map_form,
                            [str(out_p / "map.json"), str(out_p / "map.png")], warnings)


# --- the command -------------------------------------------------------------------------------------

@click.command("understand", context_settings={"max_content_width": 100})
@click.option("--run", "runs", multiple=True, required=True, type=click.Path(file_okay=False),
              help="Run directory written by `envbench train` (its best/ checkpoint); repeat to compare runs.")
@click.option("--hwe", "hwe_path", required=True, type=click.Path(dir_okay=False),
              help="DocRED-HWE's dev_keys_new.json (documents whose labels carry human evidence words).")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Folder for map.json, map.png, attributions/.")
@click.option("--max-docs", default=0, type=int, help="Only the first N documents left after exclusions (0 = all).")
@click.option("--steps", default=10, show_default=True, type=int,
              help=f"Interpolation steps of integrated gradients (1 to {MAX_STEPS:,}).")
@click.option("--exclude-titles-from", "exclude", multiple=True, type=click.Path(dir_okay=False),
              help="DocRED-format file whose titles are left out, e.g. the runs' training file (repeatable).")
@click.option("--spans", default=None, type=click.Choice(list(SPAN_MODES)),
              help="Evidence printed and plotted: context (the default: every keyword span less the head's and tail's "
                   "mentions, which leave the ranking too: evidence beyond the pair's names), last (the last span, "
                   "as DocRED-HWE's MAP_metric.py) or all (every span, names included). map.json has every mode.")
@click.option("--map", "map_form", default="official", show_default=True, type=click.Choice(list(MAP_FORMS)),
              help="MAP form printed and plotted: official (DocRED-HWE's code: a hit at rank i adds 1/i; with its "
                   "elbow variant) or precision (the paper's equation 5: a hit adds precision@i). map.json has both.")
@click.option("--units", default="word", show_default=True, type=click.Choice(list(UNITS)),
              help="What is ranked: words (a word's wordpieces summed); every input position, [CLS] and markers "
                   "included, as DocRED-HWE's code ranks them (wordpiece); or those positions against exactly the "
                   "evidence positions of DocRED-HWE's MAP_metric.py, its last span unshifted for [CLS] (reference: "
                   "numbers comparable with DocRED-HWE's own).")
@click.option("--device", default="cpu", show_default=True, help="cpu, cuda or cuda:N (auto picks cuda if present).")
@click.option("--threads", default=0, type=click.IntRange(min=0, max=MAX_THREADS),
              help="torch CPU threads (0 = torch's default).")
@progress_option
def understand(runs, hwe_path, out, max_docs, steps, exclude, spans, map_form, units, device, threads,
               progress) -> None:
    """MAP(K): do a run's integrated-gradients rankings match DocRED-HWE's human evidence words?

    Writes OUT/map.json (MAP(K), K = 1..100, per run, MAP form and evidence mode; facts kept; settings),
    OUT/map.png and prints MAP at K = 1, 5, 10, 20, 50 beside the ideal curve of the same facts; with
    several runs, also each run over the facts that all of them keep. By default the evidence leaves the
    head's and tail's own mentions out (--spans context): attributions rank those names first for most
    facts, and counting them as hits scores reliance on names as understanding. --units reference
    reproduces DocRED-HWE's MAP_metric.py's evidence positions for numbers comparable with its own.
    map.json and map.png are published together, OUT/manifest.json last, and files of those names that
    understand did not write are refused. A run trained (or selected) on Re-DocRED dev must be measured on
    the 339 test-side documents only: exclude the dev titles. Cost: one forward pass over the --steps
    interpolated copies of a document and one backward pass per counted fact; with MiniLM at 10 steps
    about 3 CPU-seconds per fact, so hours on CPU for the 339 documents (bench/understand.py). Rerunning
    continues an interrupted run, and another --spans, --map or --units reuses its attributions.

    \b
    Example (vanilla vs EVRT, both trained on Re-DocRED dev; then DocRED-HWE's own evidence positions):
      envbench understand --run runs/vanilla --run runs/evrt \\
          --hwe ../shared/data/docred-hwe/dev_keys_new.json \\
          --exclude-titles-from ../shared/data/re-docred/dev_revised.json --out runs/understand
      envbench understand --run runs/vanilla --run runs/evrt \\
          --hwe ../shared/data/docred-hwe/dev_keys_new.json --units reference \\
          --exclude-titles-from ../shared/data/re-docred/dev_revised.json --out runs/understand
    """
    if not Path(hwe_path).is_file():
        raise EnvbenchError(f"--hwe {hwe_path}: no such file; {HWE_HINT}")
    for p in exclude:
        if not Path(p).is_file():
            raise EnvbenchError(f"--exclude-titles-from {p}: no such file")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    r = measure_understanding(list(runs), hwe_path, out, max_docs=max_docs, steps=steps, exclude_titles_from=list(exclude),
                   spans=spans, device=device, threads=threads, progress=progress, map_form=map_form,
                   units=units)
    sel, spans = r.selection, r.spans
    click.echo(f"{sel['documents']} documents, {sel['facts']} facts ({sel['excluded']} documents excluded, "
               f"{sel['without_labels']} without labels, {sel['cut_by_max_docs']} past --max-docs); "
               f"IG with {steps} steps; a fact counts when its relation is in the model's top {TOP_K}")
    ranked = "input positions" if units != "word" else "words"
    evidence = ("the positions DocRED-HWE's MAP_metric.py checks (last span, not shifted for [CLS])"
                if units == "reference" else SPAN_NAMES[spans])
    click.echo(f"{FORM_NAMES[map_form]}, of {ranked}; evidence: {evidence}")
    click.echo(format_table(r.runs, spans, map_form))
    for mode in span_modes(units):
        if mode != spans:
            click.echo(f"evidence {mode} (own facts): " + "; ".join(
                f"{m.label} K=1 {m.curves[map_form][mode]['model'][0]:.4f} K=10 {m.curves[map_form][mode]['model'][9]:.4f}"
                for m in r.runs))
    alt = "precision" if map_form == "official" else "official"
    click.echo(f"{alt} MAP (own facts): " + "; ".join(
        f"{m.label} K=1 {m.curves[alt][spans]['model'][0]:.4f} K=10 {m.curves[alt][spans]['model'][9]:.4f}"
        for m in r.runs))
    click.echo(f"the head's or tail's own mention ranked first among the {ranked}: " + "; ".join(
        f"{m.label} {m.extra['pair_first']} of {m.facts_kept} facts" for m in r.runs))
    for m in r.runs:
        c = m.extra["completeness"]
        if c["facts"]:
            click.echo(f"{m.label}: IG completeness error max {c['max_rel_error']:.2e}, mean {c['mean_rel_error']:.2e} "
                       f"(relative to max(1, |F(x) - F(0)|); tolerance {c['tolerance']:.0%}, exceeded by "
                       f"{c['over_tolerance']} facts); {m.extra['seconds_per_document']:.1f} s/document")
    click.echo(f"wrote {', '.join(r.files)}")
