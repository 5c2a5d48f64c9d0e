"""DocRED documents -> model features: entity markers, wordpiece offsets, entity pairs, labels.

No torch here except in :func:`collate`, which imports it lazily, so features can be built and
inspected cheaply. Relation ids follow ``envbench.core.relations.RELATIONS`` order: class 0 is the
threshold / "Na" class, class i (1..96) is the i-th property id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from envbench.core.errors import DataError, EnvbenchError
from envbench.core.relations import RELATIONS

RELATION_IDS: tuple[str, ...] = tuple(RELATIONS)  # index i -> class i + 1
REL2CLASS: dict[str, int] = {pid: i + 1 for i, pid in enumerate(RELATION_IDS)}
MARKER_STYLES: tuple[str, ...] = ("plain", "typed")
# DocuNet's BERT entity markers (zjunlp/DocuNet prepro.py): "[unusedK]" before a mention of the type, "[unused(K+50)]"
# after it; its RoBERTa path uses "*". They hand the model the mention's coarse type, which renaming keeps.
TYPED_MARKER_BASE: dict[str, int] = {"ORG": 1, "LOC": 3, "TIME": 5, "PER": 7, "MISC": 9, "NUM": 11}


@dataclass
class Feature:
    """One document ready for the model."""

    title: str
    input_ids: list[int]  # [CLS] wordpieces-with-markers [SEP]
    entity_pos: list[list[int]]  # per entity: positions (in input_ids) of its mentions' start markers
    hts: list[tuple[int, int]]  # every ordered pair (h, t), h != t
    labels: list[list[int]]  # per pair: classes (1..96); empty = no relation
    cut: bool = False  # input was longer than max_length and was cut
    mentions_cut: int = 0  # mentions whose start marker fell past the cut (dropped from their entity)


@dataclass
class FeatureStats:
    documents: int = 0
    wordpieces_max: int = 0
    wordpieces_mean: float = 0.0
    over_window: int = 0  # documents longer than one encoder window (encoded in windows, models.encoder)
    cut: int = 0  # documents longer than max_length (cut; their later mentions dropped)
    mentions_cut: int = 0
    entities_without_mention: int = 0  # entities whose every mention was cut (they fall back to [CLS])
    labels_unknown_relation: int = 0
    # documents with fewer than two entities: no pair to score, so training skips them and predict gives them
    # no prediction (they still count as documents)
    without_pairs: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def mention_markers(doc: dict[str, Any], marker: str = "*", markers: str = "plain"
                    ) -> tuple[dict[tuple[int, int], str], dict[tuple[int, int], str]]:
    """The marker word put before each mention's first token and after its last, keyed by (sent_id, token).

    ``plain``: ``marker`` for every mention (ATLOP). ``typed``: ``[unusedK]`` and ``[unused(K+50)]`` with K
    by the mention's type (:data:`TYPED_MARKER_BASE`), as DocuNet's BERT path. Where several mentions
    start (or end) at one token there is one marker, that of the first in ``vertexSet`` order, as the
    reference's ``list.index`` picks.
    """
    if markers not in MARKER_STYLES:
        raise EnvbenchError(f"markers={markers!r}; use " + " or ".join(repr(m) for m in MARKER_STYLES))
    start: dict[tuple[int, int], str] = {}
    end: dict[tuple[int, int], str] = {}
    for entity in doc["vertexSet"]:
        for m in entity:
            before = after = marker
            if markers == "typed":
                k = TYPED_MARKER_BASE.get(m.get("type", ""))
                if k is None:
                    raise DataError(f"document {doc.get('title')!r}: mention {m.get('name')!r} has type "
                                    f"{m.get('type')!r}, which typed entity markers do not know "
                                    f"({', '.join(TYPED_MARKER_BASE)}); fix the type or use markers = \"plain\"")
                before, after = f"[unused{k}]", f"[unused{k + 50}]"
            start.setdefault((m["sent_id"], m["pos"][0]), before)
            end.setdefault((m["sent_id"], m["pos"][1] - 1), after)
    return start, end


def typed_marker_ids(tokenizer: Any) -> dict[str, int]:
    """The vocabulary ids of the typed markers; they are vocabulary tokens, never tokenised as text."""
    out = {}
    for k in TYPED_MARKER_BASE.values():
        for token in (f"[unused{k}]", f"[unused{k + 50}]"):
            tid = tokenizer.convert_tokens_to_ids(token)
            if tid is None or tid == tokenizer.unk_token_id:
                raise EnvbenchError(f"typed entity markers need the token {token} in the encoder's vocabulary, which "
                                    "BERT vocabularies have and this one lacks; use markers = \"plain\" (the * marker)")
            out[token] = tid
    return out


def _marked_words(doc: dict[str, Any], marker: str, markers: str = "plain"
                  ) -> tuple[list[str], dict[tuple[int, int], int]]:
    """Words of the document with a marker around each mention (:func:`mention_markers`).

    Returns the words and, for each (sent_id, token start) that begins a mention, the index of
    its start marker among the words.
    """
    starts, ends = mention_markers(doc, marker, markers)
    words: list[str] = []
    start_word: dict[tuple[int, int], int] = {}
    for sid, sent in enumerate(doc["sents"]):
        for ti, tok in enumerate(sent):
            if (sid, ti) in starts:
                start_word[(sid, ti)] = len(words)
                words.append(starts[(sid, ti)])
            words.append(tok)
            if (sid, ti) in ends:
                words.append(ends[(sid, ti)])
    return words, start_word


def word_pieces(tokenizer: Any, words: Sequence[str], cache: dict[str, list[int]] | None = None,
                specials: Mapping[str, int] | None = None) -> list[list[int]]:
    """The token ids of each word, tokenised on its own, as the EVRT reference code does.

    Each word is its own text, so byte-level BPE (RoBERTa) gives no word and no marker the
    leading-space piece ("Ġ") that pre-split input with ``add_prefix_space`` would add; for WordPiece
    (BERT) this equals tokenising the pre-split words in one call. ``cache`` (word -> ids, shared
    across documents) tokenises each distinct word once. ``specials`` (the typed markers) map words to
    one vocabulary id each, untokenised.
    """
    cache = {} if cache is None else cache
    specials = specials or {}
    new = sorted({w for w in words if w not in cache and w not in specials})
    if new:
        cache.update(zip(new, (list(ids) for ids in tokenizer(new, add_special_tokens=False)["input_ids"])))
    return [[specials[w]] if w in specials else cache[w] for w in words]


def build_feature(doc: dict[str, Any], tokenizer: Any, *, marker: str = "*", max_length: int = 1024,
                  cache: dict[str, list[int]] | None = None, markers: str = "plain") -> Feature:
    """Tokenise one document (ATLOP style: a marker before and after each mention), word by word."""
    words, start_word = _marked_words(doc, marker, markers)
    specials = typed_marker_ids(tokenizer) if markers == "typed" else None
    first_piece: dict[int, int] = {}
    body: list[int] = []
    for w, ids in enumerate(word_pieces(tokenizer, words, cache, specials)):
        first_piece[w] = len(body)
        body.extend(ids)
    cut = False
    limit = len(body)
    if max_length and len(body) + 2 > max_length:
        limit = max_length - 2
        body = body[:limit]
        cut = True
    input_ids = [tokenizer.cls_token_id, *body, tokenizer.sep_token_id]
    entity_pos: list[list[int]] = []
    mentions_cut = 0
    for entity in doc["vertexSet"]:
        pos = []
        for m in entity:
            piece = first_piece[start_word[(m["sent_id"], m["pos"][0])]]
            if piece >= limit:
                mentions_cut += 1
                continue
            pos.append(piece + 1)  # +1 for [CLS]
        entity_pos.append(sorted(set(pos)) or [0])
    n = len(doc["vertexSet"])
    hts = [(h, t) for h in range(n) for t in range(n) if h != t]
    pair_index = {ht: i for i, ht in enumerate(hts)}
    labels: list[list[int]] = [[] for _ in hts]
    for lab in doc.get("labels", []) or []:
        cls = REL2CLASS.get(lab["r"])
        i = pair_index.get((lab["h"], lab["t"]))
        if cls is None or i is None:
            continue
        if cls not in labels[i]:
            labels[i].append(cls)
    for lab in labels:
        lab.sort()
    return Feature(doc["title"], input_ids, entity_pos, hts, labels, cut, mentions_cut)


def build_features(
    docs: Sequence[dict[str, Any]], tokenizer: Any, *, marker: str = "*", max_length: int = 1024, window: int = 512,
    progress: bool = False, desc: str = "features", markers: str = "plain",
) -> tuple[list[Feature], FeatureStats]:
    """Features for all documents plus counts of what long documents went through."""
    from etl.progress import bar

    feats: list[Feature] = []
    stats = FeatureStats()
    total = 0
    cache: dict[str, list[int]] = {}
    for doc in bar(docs, desc=desc, enabled=progress):
        f = build_feature(doc, tokenizer, marker=marker, max_length=max_length, cache=cache, markers=markers)
        feats.append(f)
        n = len(f.input_ids)
        total += n
        stats.wordpieces_max = max(stats.wordpieces_max, n)
        stats.over_window += n > window
        stats.cut += f.cut
        stats.mentions_cut += f.mentions_cut
        stats.entities_without_mention += sum(p == [0] for p in f.entity_pos)
        stats.labels_unknown_relation += sum(lab["r"] not in REL2CLASS for lab in doc.get("labels", []) or [])
        stats.without_pairs += not f.hts
    stats.documents = len(feats)
    stats.wordpieces_mean = round(total / len(feats), 1) if feats else 0.0
    return feats, stats


def pair_twins(originals: Sequence[Feature], twins: Sequence[Feature], twins_path: str = "twins") -> list[Feature]:
    """The twin of each original, matched by title; entity order must be identical."""
    by_title = {f.title: f for f in twins}
    missing = [f.title for f in originals if f.title not in by_title]
    if missing:
        raise DataError(
            f"{twins_path}: {len(missing)} of {len(originals)} training titles have no twin (first: {missing[0]!r}); "
            "make the twins from the same training file with "
            "`envbench generate TRAIN --index DIR --pool train --seeds 1 --twins --out OUT`"
        )
    out = []
    for f in originals:
        tw = by_title[f.title]
        if len(tw.entity_pos) != len(f.entity_pos):
            raise DataError(
                f"{twins_path}: twin of {f.title!r} has {len(tw.entity_pos)} entities, the original "
                f"{len(f.entity_pos)}; twins must keep the entity order; regenerate them from the same training file"
            )
        out.append(tw)
    return out


def collate(feats: Sequence[Feature], pad_id: int = 0) -> dict[str, Any]:
    """Pad a batch into tensors; entity positions and pairs stay per-document lists."""
    import torch

    length = max(len(f.input_ids) for f in feats)
    input_ids = torch.full((len(feats), length), pad_id, dtype=torch.long)
    mask = torch.zeros((len(feats), length), dtype=torch.float)
    for i, f in enumerate(feats):
        input_ids[i, : len(f.input_ids)] = torch.tensor(f.input_ids, dtype=torch.long)
        mask[i, : len(f.input_ids)] = 1.0
    n_pairs = sum(len(f.hts) for f in feats)
    labels = torch.zeros((n_pairs, len(RELATION_IDS) + 1), dtype=torch.float)
    row = 0
    for f in feats:
        for lab in f.labels:
            if lab:
                labels[row, lab] = 1.0
            else:
                labels[row, 0] = 1.0
            row += 1
    return {
        "input_ids": input_ids,
        "attention_mask": mask,
        "entity_pos": [f.entity_pos for f in feats],
        "hts": [f.hts for f in feats],
        "labels": labels,
        "titles": [f.title for f in feats],
    }
