"""File-level end-to-end evaluation (``envbench evaluate --end-to-end``): gold files, prediction files.

One gold file and its predictions are scored with :mod:`envbench.scoring.end_to_end`; an Env gold file
(every title ``<title>-k``) is also scored per seed, each copy alone, and summarised as mean ± sample
std over seeds, with the worst seed by strict relation F1, as ``envbench evaluate`` does for
given-entities predictions. With an Env pair besides the original one (``env_gold``, ``env_pred``) the
result sets the original beside every Env copy and adds what the given-entities path reports for name
robustness:

- the **fall** of each metric: original minus the Env mean over seeds (points of F1), and relative to
  the original;
- the **consistency rate**: of the gold relations predicted correctly (strict) on an original document,
  the share still predicted correctly on each of its twins. A twin keeps its source's ``vertexSet`` order
  and labels, so a relation is the same gold label ``(h, t, r)`` on both sides, whatever spans the
  renaming moved.

Spans are matched against the mentions of the gold document of the prediction's title, so a twin's
predictions are scored against the twin's own positions.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envbench.core.errors import DataError
from envbench.formats.docred import Doc
from envbench.formats.end_to_end import EndToEndPredictions, check_end_to_end, load_end_to_end
from envbench.scoring.end_to_end import LABELS, METRICS, Tally, finalize, gold_overlaps, tally_document
from envbench.scoring.evaluate import (
    env_seed_problem,
    env_seeds,
    mean_std_text,
    read_gold,
    refuse_compressed_out,
    sample_std,
    split_seed,
    spread_label,
)
from etl.io import dumps_json
from etl.progress import Stages
from etl.step import Step, manifest_beside

SHOWN_SKIPS = 5  # skipped rows listed on the console (scores.json lists them all)


@dataclass
class Scored:
    """One gold file scored: pooled scores, per-seed scores when it is an Env file, correct labels by title."""

    scores: dict[str, Any]
    seeds: dict[int, dict[str, Any]] | None
    correct: dict[str, set[tuple[int, int, str]]]


def score_set(gold_docs: Sequence[Mapping[str, Any]], checked: EndToEndPredictions,
              seeds: Sequence[int] | None) -> Scored:
    """Pooled scores and, for an Env file, each seed's, from one pass over the documents."""
    total = Tally()
    groups: dict[int, Tally] = {}
    correct: dict[str, set[tuple[int, int, str]]] = {}
    wanted = set(seeds or ())
    for doc in gold_docs:
        t, found = tally_document(doc, checked.docs.get(doc["title"]))
        total += t
        correct[doc["title"]] = found
        parts = split_seed(doc["title"]) if seeds else None
        if parts is not None and parts[1] in wanted:
            groups.setdefault(parts[1], Tally())
            groups[parts[1]] += t
    per_seed = {k: finalize(groups.get(k, Tally())) for k in seeds} if seeds else None
    return Scored(finalize(total), per_seed, correct)


def summarize(per_seed: Mapping[int, Mapping[str, Any]]) -> dict[str, Any]:
    """Mean and sample std (n-1; None for one seed) of every F1, P and R; the worst seed by strict relation F1."""
    seeds = sorted(per_seed)
    keys = [f"{m}_{k}" for m in METRICS for k in ("f1", "precision", "recall")]
    mean = {k: statistics.fmean(per_seed[s][k] for s in seeds) for k in keys}
    std = {k: sample_std([per_seed[s][k] for s in seeds]) for k in keys}
    worst = min(seeds, key=lambda s: (per_seed[s]["relation_strict_f1"], s))
    return {"mean": mean, "std": std, "worst_seed": {"seed": worst, "relation_strict_f1":
                                                     per_seed[worst]["relation_strict_f1"]}}


def consistency(orig_docs: Sequence[Mapping[str, Any]], orig: Scored, env_docs: Sequence[Mapping[str, Any]],
                env: Scored) -> dict[str, Any]:
    """Of the gold relations right (strict) on an original document, the share still right on each twin."""
    orig_titles = {d["title"] for d in orig_docs}
    kept = total = lonely = 0
    with_twins: set[str] = set()
    for d in env_docs:
        parts = split_seed(d["title"])
        if parts is None or parts[0] not in orig_titles:
            lonely += 1
            continue
        with_twins.add(parts[0])
        before = orig.correct.get(parts[0], set())
        total += len(before)
        kept += len(before & env.correct.get(d["title"], set()))
    # original_correct and still_correct count twin copies (a relation right on a source with K twins
    # counts K times); original_relations counts each such relation once
    return {"original_relations": sum(len(orig.correct.get(t, ())) for t in with_twins),
            "original_correct": total, "still_correct": kept, "rate": kept / total if total else None,
            "n_twins_without_original": lonely}


def _env_block(scored: Scored) -> dict[str, Any]:
    assert scored.seeds is not None
    return {"seeds": {str(k): v for k, v in scored.seeds.items()}, **summarize(scored.seeds)}


def _skipped(checked: EndToEndPredictions) -> list[dict[str, Any]]:
    return [{"file": checked.source, "row": s.row, "title": s.title, "problem": s.problem} for s in checked.skipped]


def overlap_warnings(path: str | os.PathLike[str], gold_docs: Sequence[Mapping[str, Any]]) -> list[str]:
    """A warning when gold documents put a mention in two entities (MUC, B³ and CEAF-e count it once)."""
    found = gold_overlaps(gold_docs)
    if not found:
        return []
    n = len(found)
    return [f"{n} gold document{'s' if n != 1 else ''} of {path} put{'s' if n == 1 else ''} a mention in two "
            f"entities whose mentions differ (the first: {found[0]}); MUC, B³ and CEAF-e count such a mention "
            "in the first of them only"]


@dataclass
class EndToEndResult:
    """What ``envbench evaluate --end-to-end`` computed; ``scores`` is the content of --out."""

    scores: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    out: Path | None = None

    def table(self) -> str:
        """F1 of every metric as percentages: the original beside the Env copies when both were given."""
        s = self.scores
        env = s.get("env")
        own = s.get("seeds")  # --gold itself is an Env file
        header = ["F1", "all" if env is None else "original"]
        if own is not None:
            header += [spread_label(len(own["seeds"]), alone="mean"), *(f"seed {k}" for k in own["seeds"])]
        if env is not None:
            header += ["Env all", spread_label(len(env["seeds"]), "Env mean ± std", "Env mean"),
                       *(f"seed {k}" for k in env["seeds"]), "fall"]

        def spread(block: Mapping[str, Any], key: str) -> list[str]:  # mean ± std, then each seed
            std = block["std"][key]
            return [mean_std_text(f"{100 * block['mean'][key]:.2f}", None if std is None else f"{100 * std:.2f}",
                                  len(block["seeds"])),
                    *(f"{100 * v[key]:.2f}" for v in block["seeds"].values())]

        lines = [header]
        for m in METRICS:
            key = f"{m}_f1"
            row = [LABELS[m], f"{100 * s['scores'][key]:.2f}"]
            if own is not None:
                row += spread(own, key)
            if env is not None:
                row += [f"{100 * env['pooled'][key]:.2f}", *spread(env, key), f"{100 * env['fall'][key]:.2f}"]
            lines.append(row)
        widths = [max(len(r[i]) for r in lines) for i in range(len(header))]
        text = ["  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r)).rstrip()
                for r in lines]
        sc = s["scores"]
        text.append(f"{sc['n_docs']} documents ({sc['n_pred_docs']} predicted), {sc['n_mention_gold']} gold mentions, "
                    f"{sc['n_entity_gold']} gold entities, {sc['n_relation_gold']} gold relations; "
                    f"{sc['n_relation_pred']} predicted relations")
        if env is not None:
            c = env["consistency"]
            rate = "n/a" if c["rate"] is None else f"{100 * c['rate']:.2f}%"
            text.append(f"consistency: {rate} ({c['still_correct']} of {c['original_correct']} twin copies of the "
                        f"{c['original_relations']} relations right (strict) on the original documents are still "
                        "right on the twin)")
            text.append(f"worst Env seed: {env['worst_seed']['seed']} "
                        f"(relation strict F1 {100 * env['worst_seed']['relation_strict_f1']:.2f})")
        return "\n".join(text)


def score_files(
    gold: str | os.PathLike[str],
    pred: str | os.PathLike[str],
    *,
    env_gold: str | os.PathLike[str] | None = None,
    env_pred: str | os.PathLike[str] | None = None,
    pred_format: str = "auto",
    skip_invalid: bool = False,
    progress: bool = False,
) -> EndToEndResult:
    """Read and score; writes nothing (see :func:`evaluate_end_to_end`). ``progress``: the stages on stderr
    (``etl.progress.Stages``, on a terminal only)."""
    if (env_gold is None) != (env_pred is None):
        given, missing = ("--env-gold", "--env-pred") if env_pred is None else ("--env-pred", "--env-gold")
        raise DataError(f"{given} needs {missing}: the Env copies are scored from their own gold file and predictions")
    with Stages("evaluate", 2 if env_gold is None else 4, enabled=progress) as stage:
        return _score_files(gold, pred, env_gold=env_gold, env_pred=env_pred, pred_format=pred_format,
                            skip_invalid=skip_invalid, stage=stage)


def _score_files(gold: str | os.PathLike[str], pred: str | os.PathLike[str], *,
                 env_gold: str | os.PathLike[str] | None, env_pred: str | os.PathLike[str] | None, pred_format: str,
                 skip_invalid: bool, stage: Stages) -> EndToEndResult:
    stage("read the gold documents and predictions")
    gold_docs: list[Doc] = read_gold(gold)
    warnings: list[str] = overlap_warnings(gold, gold_docs)
    checked = check_end_to_end(load_end_to_end(pred), gold_docs, source=str(pred), pred_format=pred_format,
                               skip_invalid=skip_invalid)
    own_seeds = env_seeds(gold_docs)
    stage("score")
    orig = score_set(gold_docs, checked, own_seeds)
    s: dict[str, Any] = {"mode": "end-to-end", "format": checked.format, "scores": orig.scores}
    if orig.seeds is not None:
        s["seeds"] = _env_block(orig)
    skipped = _skipped(checked)
    if env_gold is not None and env_pred is not None:
        stage("read the Env documents and predictions")
        env_docs: list[Doc] = read_gold(env_gold)
        warnings += overlap_warnings(env_gold, env_docs)
        seeds = env_seeds(env_docs, consecutive=False)
        if seeds is None:
            raise DataError(f"{env_gold}: --env-gold needs {env_seed_problem(env_docs)}; pass as --env-gold the Env "
                            "file `envbench generate` wrote, whole")
        env_checked = check_end_to_end(load_end_to_end(env_pred), env_docs, source=str(env_pred),
                                       pred_format=pred_format, skip_invalid=skip_invalid)
        stage("score the Env copies")
        env = score_set(env_docs, env_checked, seeds)
        block = {"pooled": env.scores, **_env_block(env)}
        block["fall"] = {k: orig.scores[k] - block["mean"][k] for k in block["mean"]}
        block["relative_fall"] = {k: (v / orig.scores[k] if orig.scores[k] > 0 else None)
                                  for k, v in block["fall"].items()}
        block["consistency"] = c = consistency(gold_docs, orig, env_docs, env)
        if 2 * c["n_twins_without_original"] > len(env_docs):
            raise DataError(f"{env_gold}: {c['n_twins_without_original']} of its {len(env_docs)} documents are "
                            f"renamed copies of no document in {gold}; pass as --env-gold the Env file that "
                            "`envbench generate` wrote from --gold")
        if c["n_twins_without_original"]:
            warnings.append(f"{c['n_twins_without_original']} documents of {env_gold} are copies of no document "
                            f"of {gold}; the consistency rate leaves them out")
        s["env"] = block
        skipped += _skipped(env_checked)
    s["skipped"] = skipped
    for files in ([(checked, gold_docs)] + ([(env_checked, env_docs)] if env_gold is not None else [])):
        ck, docs = files
        if ck.skipped:
            n = len(ck.skipped)
            shown = "; ".join(str(x) for x in ck.skipped[:SHOWN_SKIPS]) + ("; ..." if n > SHOWN_SKIPS else "")
            warnings.append(f"skipped {n} invalid row{'s' if n != 1 else ''} of {ck.source} (--skip-invalid; their "
                            f"documents count as predicting nothing): {shown}")
        skipped_titles = {x.title for x in ck.skipped}
        missing = sum(d["title"] not in ck.docs and d["title"] not in skipped_titles for d in docs)
        if missing > 0:
            warnings.append(f"{missing} of the {len(docs)} documents of the gold file have no row in {ck.source}; "
                            "they count as predicting nothing")
    s["inputs"] = {"gold": str(gold), "pred": str(pred), "env_gold": None if env_gold is None else str(env_gold),
                   "env_pred": None if env_pred is None else str(env_pred)}
    notes = ["end-to-end scores (JEREX's metrics, docs/pipeline.md): entity and relation strict compare mention "
             "sets and types; relaxed matches an argument by one shared mention and its type"]
    s["warnings"], s["notes"] = warnings, notes
    return EndToEndResult(scores=s, warnings=warnings, notes=notes)


def evaluate_end_to_end(
    gold: str | os.PathLike[str],
    pred: str | os.PathLike[str],
    *,
    env_gold: str | os.PathLike[str] | None = None,
    env_pred: str | os.PathLike[str] | None = None,
    pred_format: str = "auto",
    skip_invalid: bool = False,
    out: str | os.PathLike[str] | None = None,
    progress: bool = False,
) -> EndToEndResult:
    """Score end-to-end predictions (and their Env copies); write ``out`` and its manifest as a step."""
    kwargs: dict[str, Any] = {"env_gold": env_gold, "env_pred": env_pred, "pred_format": pred_format,
                              "skip_invalid": skip_invalid, "progress": progress}
    if out is None:
        return score_files(gold, pred, **kwargs)
    refuse_compressed_out(out)
    inputs = [p for p in (gold, pred, env_gold, env_pred) if p is not None]
    with Step("evaluate-end-to-end", manifest=manifest_beside(out), outputs=[out], inputs=inputs,
              parameters={"pred_format": pred_format, "skip_invalid": skip_invalid}, force=True) as step:
        result = score_files(gold, pred, **kwargs)
        step.path(out).write_bytes(dumps_json(result.scores, indent=True))
    result.out = Path(out)
    return result


__all__ = ["EndToEndResult", "Scored", "consistency", "evaluate_end_to_end", "score_files", "score_set", "summarize"]
