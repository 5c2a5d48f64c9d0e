"""Prediction files: the official DocRED format, read and checked against the gold documents.

A prediction file is a JSON list (optionally .gz/.bz2/.zst) of ``{"title", "h_idx", "t_idx", "r"[,
"evidence"]}``: ``title`` names a gold document, ``h_idx``/``t_idx`` are 0-based positions in its
``vertexSet``, ``r`` is a Wikidata property id of the 96 DocRED relations and ``evidence`` a list of
sentence ids. This is what the official scorers read, what ``envbench predict`` and ``envbench icl
parse`` write, and what ``envbench evaluate`` and ``envbench report`` score.

Reading (:func:`load_predictions`) checks the file's shape; :func:`check_predictions` checks each
prediction against the gold entity counts and drops duplicates, as the official scorers do (the first
copy of a fact, and its evidence, is kept). Predictions for titles the gold file lacks are kept: they
count against precision.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envbench.core.errors import DataError, shorten
from envbench.core.relations import NAME_TO_ID, RELATIONS
from envbench.formats.docred import json_type, read_json_file, show_value
from etl.io import sha256_file
from etl.step import manifest_beside, read_manifest

Fact = tuple[str, int, int, str]  # (title, h_idx, t_idx, r)
SHAPE = "{title, h_idx, t_idx, r[, evidence]}"


def load_predictions(path: str | os.PathLike[str]) -> list[Any]:
    """Read an official-format prediction file (a JSON list of {title, h_idx, t_idx, r[, evidence]})."""
    data = read_json_file(path, "prediction JSON file")
    if not isinstance(data, list):
        raise DataError(
            f"{path}: expected a JSON list of predictions, got {json_type(data)}; "
            'write [{"title": ..., "h_idx": ..., "t_idx": ..., "r": ...}, ...] as the official scorer reads'
        )
    if data and isinstance(data[0], dict) and {"vertexSet", "entities", "sents"} & data[0].keys():
        raise DataError(
            f"{path}: holds DocRED documents (title, sents, vertexSet), not predictions; give it as the gold "
            "file, and as predictions the model's JSON list of {title, h_idx, t_idx, r}"
        )
    return data


@dataclass(frozen=True)
class CheckedPredictions:
    """Predictions after validation and de-duplication."""

    facts: list[Fact]  # unique, in first-seen order
    evidence: list[frozenset[int]]  # evidence sentences of each fact (empty when not given)
    duplicates: int  # predictions dropped as repeats of an earlier one
    unknown_title_preds: int  # unique predictions whose title is not in gold
    unknown_titles: int  # distinct such titles
    duplicates_by_title: dict[str, int] = field(default_factory=dict)


def _shown(v: Any) -> str:
    """A field as the message quotes it, cut short: a string as Python quotes titles in every message
    ('Loud Tour'), anything else in JSON's spelling (true, 1e+30), as the file has it."""
    return shorten(repr(v), 80) if isinstance(v, str) else show_value(v)


def _describe(i: int, x: Any, source: str) -> str:
    if isinstance(x, Mapping):
        parts = ", ".join(f"{k} {_shown(x[k])}" for k in ("title", "h_idx", "t_idx", "r") if k in x)
        return f"{source}: prediction {i} ({parts})"
    return f"{source}: prediction {i}"


def _index_problem(end: str, v: Any, title: str, n: int | None) -> str | None:
    """What is wrong with the entity index ``v`` at ``end`` (h_idx or t_idx) of a prediction for ``title``
    (``n`` entities; None: a title the gold file lacks), or None. A number is judged by its value, so a
    huge one reads as out of range whether the file wrote it as 1e30 or as an integer too long for the
    JSON reader's integers (which reads it as a real number)."""
    number = type(v) in (int, float)  # bool is no number here: JSON true is not an index
    if number and (v < 0 or (n is not None and v >= n)):
        if n is None:
            return f"{end} {_shown(v)} is out of range; entity indices start at 0"
        indices = f" (indices 0-{n - 1})" if n else ""  # "0--1" for a document without entities
        return (f"{end} {_shown(v)} is out of range; document {title!r} has {n} entities{indices}; "
                "check that the predictions were made for this gold file")
    if type(v) is int:
        return None
    if type(v) is float and v.is_integer() and v < 2 ** 53:  # exact: 1.0 was meant as 1, 1e30 as nothing
        return f"{end} {_shown(v)} is not an entity index (a real number); write it as the integer {int(v)}"
    return f"{end} {_shown(v)} is not an entity index; write it as a 0-based integer, a position in the gold vertexSet"


def _invalid(i: int, x: Any, n_entities: Mapping[str, int], source: str,
             n_sentences: Mapping[str, int] | None = None) -> DataError:
    """The error for a prediction the fast path rejected: the first problem, named precisely."""
    what = _describe(i, x, source)
    if not isinstance(x, Mapping):
        return DataError(f"{what}: is {json_type(x)}, not an object; each prediction is {SHAPE}")
    missing = [k for k in ("title", "h_idx", "t_idx", "r") if k not in x]
    if missing:
        return DataError(f"{what}: lacks {', '.join(missing)}; each prediction is {SHAPE}")
    title, h, t, r = x["title"], x["h_idx"], x["t_idx"], x["r"]
    if not isinstance(title, str):
        return DataError(f"{what}: title is not a string; use the gold document's title")
    n = n_entities.get(title)
    for end, v in (("h_idx", h), ("t_idx", t)):
        if type(v) is not int and (problem := _index_problem(end, v, title, n)) is not None:
            return DataError(f"{what}: {problem}")
    if not isinstance(r, str) or r not in RELATIONS:
        hint = ""
        if isinstance(r, str) and r.strip().casefold() in NAME_TO_ID:
            hint = f" (did you mean {NAME_TO_ID[r.strip().casefold()]!r}?)"
        return DataError(f"{what}: relation {_shown(r)} is not one of the 96 DocRED relations{hint}; "
                         "use a Wikidata property id such as 'P17'")
    for end, v in (("h_idx", h), ("t_idx", t)):
        if (problem := _index_problem(end, v, title, n)) is not None:
            return DataError(f"{what}: {problem}")
    ev = x.get("evidence")
    if type(ev) is list and all(type(e) is int for e in ev):
        ns = (n_sentences or {}).get(title)
        bad = next(e for e in ev if e < 0 or (ns is not None and e >= ns))
        span = f"document {title!r} has {ns} sentences (ids 0-{ns - 1})" if ns is not None else "ids start at 0"
        return DataError(f"{what}: evidence sentence {bad} is out of range; {span}; "
                         "check that the predictions were made for this gold file")
    return DataError(f"{what}: evidence {shorten(repr(ev), 80)} is not a list of sentence ids; "
                     "write it as [0, 2] or leave it out")


_NO_EVIDENCE: frozenset[int] = frozenset()


def check_predictions(
    preds: Sequence[Any], n_entities: Mapping[str, int], *, source: str = "predictions",
    n_sentences: Mapping[str, int] | None = None,
) -> CheckedPredictions:
    """Validate predictions against the gold entity counts and drop duplicates.

    Raises DataError naming the prediction (its position in the list, title, h_idx, t_idx, r)
    for a missing field, an entity index that is no integer or out of range (below 0 on any title), an
    unknown relation id, or an evidence
    sentence id that is not a sentence of its document (negative, or past ``n_sentences`` of the
    title when given), just as a sentence id that is not an integer (``["0"]``).
    """
    if not isinstance(preds, Sequence) or isinstance(preds, (str, bytes)):
        raise DataError(
            f"{source}: expected a JSON list of predictions, got {json_type(preds)}; "
            'write [{"title": ..., "h_idx": ..., "t_idx": ..., "r": ...}, ...]'
        )
    seen: set[Fact] = set()
    facts: list[Fact] = []
    evidence: list[frozenset[int]] = []
    unknown: dict[str, None] = {}
    unknown_preds = 0
    duplicates = 0
    dup_by_title: dict[str, int] = {}
    # Fast path: exact type tests on the common shape; anything odd goes to _invalid for its message.
    for i, x in enumerate(preds):
        try:
            title, h, t, r = x["title"], x["h_idx"], x["t_idx"], x["r"]
            ev = x.get("evidence")
        except (TypeError, KeyError, AttributeError, IndexError):
            raise _invalid(i, x, n_entities, source) from None
        if type(title) is not str or type(h) is not int or type(t) is not int or type(r) is not str:
            raise _invalid(i, x, n_entities, source)
        n = n_entities.get(title)
        if r not in RELATIONS or h < 0 or t < 0 or (n is not None and not (h < n and t < n)):
            raise _invalid(i, x, n_entities, source)
        if ev is None:
            ev_set = _NO_EVIDENCE
        elif type(ev) is list and all(type(e) is int for e in ev):
            ev_set = frozenset(ev)
            ns = n_sentences.get(title) if n_sentences is not None else None
            if ev_set and (min(ev_set) < 0 or (ns is not None and max(ev_set) >= ns)):
                raise _invalid(i, x, n_entities, source, n_sentences)
        else:
            raise _invalid(i, x, n_entities, source)
        fact = (title, h, t, r)
        if fact in seen:
            duplicates += 1
            dup_by_title[title] = dup_by_title.get(title, 0) + 1
            continue
        seen.add(fact)
        facts.append(fact)
        evidence.append(ev_set)
        if n is None:
            unknown_preds += 1
            unknown.setdefault(title, None)
    return CheckedPredictions(facts, evidence, duplicates, unknown_preds, len(unknown), dup_by_title)


def unknown_titles(preds: Sequence[Any], gold_titles: set[str] | frozenset[str], limit: int = 3) -> list[str]:
    """The first ``limit`` titles, sorted, of predictions that name no gold document (for a warning's examples)."""
    return sorted({x["title"] for x in preds if x["title"] not in gold_titles})[:limit]


def predicted_titles(preds: Sequence[Any]) -> set[str]:
    """The titles that have at least one prediction (entries without a string title are skipped: the
    scorer reports them with their position)."""
    return {x["title"] for x in preds if isinstance(x, Mapping) and isinstance(x.get("title"), str)}


@dataclass(frozen=True)
class Covers:
    """The documents a prediction file is for, as the manifest beside it says (``envbench icl parse``).

    A document can be covered and have no prediction (its request failed, or the model found no
    relation); only the manifest tells such a document from one that was never asked about.
    """

    manifest: Path
    titles: list[str]  # every covered title, in prompt order, failed ones included
    failed_titles: list[str]
    matches: bool  # the manifest records this file's sha256 (False: it describes an earlier file)


def read_covers(pred_path: str | os.PathLike[str]) -> Covers | None:
    """The ``covers`` of PRED.manifest.json, or None when there is no manifest or it names no covers.

    The manifest is written by ``icl parse`` beside the predictions; a prediction file replaced
    afterwards (copied over, hand-edited) no longer matches the sha256 the manifest records for it,
    and ``matches`` says so, so that its list is not trusted for another file.
    """
    path = manifest_beside(pred_path)
    manifest = read_manifest(path)
    covers = manifest.get("covers") if manifest else None
    titles = covers.get("titles") if isinstance(covers, dict) else None
    if not isinstance(titles, list) or not all(isinstance(t, str) for t in titles):
        return None
    failed = covers.get("failed_titles")
    failed_titles = [t for t in failed if isinstance(t, str)] if isinstance(failed, list) else []
    name = Path(pred_path).name
    recorded = [o.get("sha256") for o in manifest.get("outputs") or [] if isinstance(o, dict) and o.get("name") == name]
    matches = bool(recorded) and recorded[0] == sha256_file(pred_path)
    return Covers(path, list(titles), failed_titles, matches)


__all__ = ["CheckedPredictions", "Covers", "Fact", "check_predictions", "load_predictions", "predicted_titles",
           "read_covers", "unknown_titles"]
