"""``make_report``: read the four files, run every analysis, write report.json, report.md and the plots.

The analyses are in :mod:`~envbench.scoring.report.analyses` (one function each, plain data in and
out); this module reads the inputs, decides what can be computed and says so in notes, and writes
the folder as one step (:mod:`etl.step`): paths checked before any work, files staged and published
together, ``manifest.json`` last.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envbench.core.errors import DataError, shorten
from envbench.core.notes import HasNotes, Level, Note, NoteCode, note, texts
from envbench.core.types import COARSE_TYPES, LINKED_TYPES
from envbench.formats.docred import Doc, read_docs, read_json_file
from envbench.formats.predictions import load_predictions, read_covers
from envbench.formats.substitutions import read_substitution_rows
from envbench.scoring.compare import fall_intervals
from envbench.scoring.evaluate import (
    coverage,
    env_seed_problem,
    env_seeds,
    example_titles,
    mean_std_text,
    name_independent,
    prediction_notes,
    read_gold,
    score_env,
    spread_label,
    train_is_gold_notes,
)
from envbench.scoring.metrics import score, train_facts
from envbench.scoring.report import analyses as A
from envbench.scoring.report.markdown import LABELS, render_markdown
from envbench.scoring.report.plots import PLOT_FILES, plots
from etl.io import dumps_json
from etl.progress import Stages
from etl.step import Step

REPORT_FILES = ("report.json", "report.md", *PLOT_FILES)


@dataclass
class ReportResult(HasNotes):
    """The report's numbers (report.json) and the files written."""

    report: dict[str, Any]
    files: list[Path] = field(default_factory=list)
    messages: list[Note] = field(default_factory=list)

    def summary(self) -> str:
        t2 = self.report["table2_precision_recall"]
        n = len(self.report["seeds"])
        lines = ["             original   " + spread_label(n, "env (mean ± std)", "env (one seed)  ")
                 + "   env pooled   change"]
        for k in A.TABLE2_KEYS:
            row = t2[k]
            std = None if row["env_std"] is None else f"{100 * row['env_std']:5.2f}"
            env = mean_std_text(f"{100 * row['env_mean']:7.2f}", std, n).ljust(15)
            lines.append(f"{LABELS[k]:<12} {100 * row['original']:8.2f}   {env}"
                         f"   {100 * row['env_pooled']:10.2f}   {100 * row['change']:+7.2f}")
        prov = self.report.get("provenance")
        if prov:
            lines.insert(0, f"benchmark made from {prov['source']}")
        c = self.report["consistency"]["overall"]
        if c["rate"] is not None:
            lines.append(f"consistency rate: {100 * c['rate']:.2f}% of {c['original_correct']} facts "
                         "correct on the original stay correct on the renamed twins")
        return "\n".join(lines)


RATE_KEYS = frozenset({*COARSE_TYPES, "total"})


def _read_stats(path: Path) -> dict[str, Any]:
    """The stats.json of `envbench generate`, with the fields Table 1 prints checked: they go into report.md
    as they are, so a hand-edited rate ("abc", a list) had ended in a traceback, and a type named "<b>X|Y</b>"
    broke the table."""
    data = read_json_file(path, "stats.json")
    if not isinstance(data, dict) or not isinstance(data.get("substitution_rate"), dict):
        raise DataError(f"{path}: has no 'substitution_rate' object; pass the stats.json of `envbench generate`")
    fix = "pass the stats.json `envbench generate` wrote, unedited"
    for key, rate in data["substitution_rate"].items():
        if key not in RATE_KEYS:
            raise DataError(f"{path}: substitution_rate has the key {shorten(repr(key))}, not a DocRED type or "
                            f"'total'; {fix}")
        if rate is not None and (type(rate) not in (int, float) or not 0 <= rate <= 1):
            raise DataError(f"{path}: substitution_rate.{key} is {shorten(repr(rate))}, not a share from 0 to 1; {fix}")
    reasons = data.get("kept_reasons", {})
    if not isinstance(reasons, dict) or not all(
            isinstance(k, str) and k.isidentifier() and type(v) is int and v >= 0 for k, v in reasons.items()):
        raise DataError(f"{path}: kept_reasons is not an object of reasons and counts; {fix}")
    gender = data.get("gender")
    if gender is not None and (not isinstance(gender, dict) or not all(
            type(v) is int and v >= 0 for v in gender.values())):
        raise DataError(f"{path}: gender is not an object of counts; {fix}")
    return data


def _more_familiar(table5: dict[str, Any], env_gold: str | os.PathLike[str], stats_path: Path) -> Note | None:
    """The warning for an Env benchmark whose renamed PER/ORG/LOC/MISC mentions carry names of the training
    documents more often than the original mentions do (Table 5; NUM and TIME are renamed by rule)."""
    def share(rows: dict[str, Any]) -> float:
        n = sum((rows.get(t) or {}).get("mentions", 0) for t in LINKED_TYPES)
        return sum((rows.get(t) or {}).get("in_train", 0) for t in LINKED_TYPES) / n if n else 0.0

    orig, env = share(table5["original"]), share(table5["env"])
    if env <= orig:
        return None
    how = ""
    if stats_path.is_file():
        made = ((read_json_file(stats_path, "stats.json") or {}).get("names_seen") or {}).get("training_names")
        if made == "allowed":
            how = f" ({stats_path} records that it was built with --allow-training-names)"
    return note(NoteCode.RENAMED_NAMES_MORE_FAMILIAR, env=env_gold, env_share=f"{env:.1%}", orig_share=f"{orig:.1%}",
                how=how)


def _provenance(prov: Any) -> dict[str, str] | None:
    """stats.json's provenance, its two sentences only, when they are plain one-line text (they go into report.md
    as they are; a hand-edited stats.json must not write a table or a tag there), else None."""
    if not isinstance(prov, dict):
        return None
    said = {k: prov.get(k) for k in ("kind", "source", "names", "licence")}
    if not all(isinstance(said[k], str) and said[k].isprintable() and not any(c in said[k] for c in "<>|")
               for k in ("kind", "source", "names")):
        return None
    return said


def make_report(
    original_gold: str | os.PathLike[str],
    original_pred: str | os.PathLike[str],
    env_gold: str | os.PathLike[str],
    env_pred: str | os.PathLike[str],
    *,
    out: str | os.PathLike[str],
    index: str | os.PathLike[str] | None = None,
    train: Sequence[str | os.PathLike[str]] = (),
    substitutions: str | os.PathLike[str] | None = None,
    stats: str | os.PathLike[str] | None = None,
    scorer: str = "docred",
    progress: bool = False,
) -> ReportResult:
    """Compute every analysis, write report.json, report.md and the plots into ``out``.

    Recomputing is cheap, so ``out`` is always rewritten (never skipped as up to date); its
    ``manifest.json`` records the inputs' sha256 and the parameters. ``progress``: the stages on stderr
    (``etl.progress.Stages``, on a terminal only).
    """
    out_dir = Path(out)
    env_dir = Path(env_gold).parent
    sub_path = Path(substitutions) if substitutions else env_dir / "substitutions.parquet"
    stats_path = Path(stats) if stats else env_dir / "stats.json"
    index_manifest = Path(index) / "manifest.json" if index is not None else None
    optional = [p for p in (sub_path, stats_path, index_manifest) if p is not None and p.is_file()]
    inputs = [original_gold, original_pred, env_gold, env_pred, *train, *optional]
    parameters = {"scorer": scorer, "index": str(index) if index is not None else None}
    with Step("report", root=out_dir, outputs=REPORT_FILES, inputs=inputs, parameters=parameters,
              rerun=True, force_flag=None) as step, Stages("report", 5 + bool(train), enabled=progress) as stage:
        report, messages = _analyse(original_gold, original_pred, env_gold, env_pred, index=index, train=train,
                                    substitutions=substitutions, sub_path=sub_path, stats_path=stats_path,
                                    scorer=scorer, stage=stage)
        # plots first: matplotlib is what most likely fails, and staging keeps the old folder until the end
        stage("draw the plots")
        for name, png in plots(report["figure4_f1_by_entities"], report["per_type_f1"]).items():
            step.path(name).write_bytes(png)
        step.path("report.md").write_bytes(render_markdown(report).encode("utf-8"))
        step.path("report.json").write_bytes(dumps_json(report, indent=True))
    return ReportResult(report=report, files=[out_dir / name for name in REPORT_FILES], messages=messages)


def _check_same_benchmark(env_gold: str | os.PathLike[str], original_gold: str | os.PathLike[str],
                          orig_docs: Sequence[Doc], env_docs: Sequence[Doc]) -> None:
    """Refuse an Env file most of whose documents are copies of no original document (another benchmark)."""
    lonely = A.twins_without_original(orig_docs, env_docs)
    if 2 * len(lonely) > len(env_docs):
        raise DataError(
            f"{env_gold}: {len(lonely)} of its {len(env_docs)} documents are renamed copies of no document in "
            f"{original_gold} (e.g. {lonely[0]!r}), so the two files are from different benchmarks; pass as "
            "--env-gold the Env file that `envbench generate` wrote from --original-gold"
        )


def _analyse(
    original_gold: str | os.PathLike[str],
    original_pred: str | os.PathLike[str],
    env_gold: str | os.PathLike[str],
    env_pred: str | os.PathLike[str],
    *,
    index: str | os.PathLike[str] | None,
    train: Sequence[str | os.PathLike[str]],
    substitutions: str | os.PathLike[str] | None,
    sub_path: Path,
    stats_path: Path,
    scorer: str,
    stage: Stages,
) -> tuple[dict[str, Any], list[Note]]:
    """report.json's content and the notes, from the inputs."""
    stage("read the gold documents and predictions")
    og: list[Doc] = read_gold(original_gold)
    eg: list[Doc] = read_gold(env_gold)
    op = load_predictions(original_pred)
    ep = load_predictions(env_pred)
    seeds = env_seeds(eg, consecutive=False)  # --env-gold declares an Env file: any one set of seeds
    if seeds is None:
        raise DataError(f"{env_gold}: --env-gold needs {env_seed_problem(eg)}; pass as --env-gold the Env file "
                        "`envbench generate` wrote, whole")
    _check_same_benchmark(env_gold, original_gold, og, eg)
    og, op, uncovered = A.covered_originals(og, op, eg)
    train_docs: list[Doc] = []
    if train:
        stage("read the training documents")
    for p in train:
        train_docs.extend(read_docs(p, skip_flag=None).docs)
    facts = train_facts(train_docs) if train else None
    subs_rows = read_substitution_rows(sub_path) if sub_path.exists() else None

    stage("score the original")
    ni = name_independent(env_gold, eg, facts, substitutions)
    orig_scores = score(og, op, facts=facts, scorer=scorer, source=str(original_pred))
    stage("score the Env copies")
    env_pooled, env_summary = score_env(eg, ep, seeds=seeds, facts=facts, original_names=ni.names,
                                        scorer=scorer, source=str(env_pred))
    messages: list[Note] = [*train_is_gold_notes(train, [("--original-gold", original_gold),
                                                         ("--env-gold", env_gold)]),
                            *orig_scores.pop("notes")]  # the pooled Env scores say the same
    env_pooled.pop("notes")
    if uncovered:  # an Env file built from part of the documents: compare like with like
        messages.append(note(NoteCode.REPORT_ORIGINALS_NOT_RENAMED, gold=original_gold, env=env_gold,
                             n=len(uncovered), total=len(uncovered) + len(og), kept=len(og),
                             examples=example_titles(uncovered)))
    messages += prediction_notes(orig_scores, op, og, original_gold, pred_option="--original-pred",
                                 gold_option="--original-gold")
    messages += prediction_notes(env_pooled, ep, eg, env_gold, pred_option="--env-pred", gold_option="--env-gold",
                                 env=env_summary)
    for gold_docs, preds, pred_path, gold_path in ((og, op, original_pred, original_gold), (eg, ep, env_pred, env_gold)):
        # as evaluate warns: a document nobody predicted for (not listed in the manifest's covers) lowers recall
        cov = coverage(gold_docs, preds, read_covers(pred_path))
        if cov.missing:
            messages.append(note(NoteCode.REPORT_GOLD_WITHOUT_PREDICTIONS, pred=pred_path, gold=gold_path,
                                 n=len(cov.missing), total=cov.total, examples=example_titles(cov.missing)))
    messages += ni.notes

    stage("analyses by type, entities, popularity and names")
    oc = A.checked(og, op, str(original_pred))
    ec = A.checked(eg, ep, str(env_pred))

    table5 = A.names_in_train(og, eg, train_docs) if train_docs else None
    if table5 is None:
        messages.append(note(NoteCode.TABLE5_NEEDS_TRAIN))
    else:
        familiar = _more_familiar(table5, env_gold, stats_path)
        if familiar is not None:
            messages.append(familiar)

    provenance = None
    if stats_path.exists():
        read_stats = _read_stats(stats_path)
        table1 = A.substitution_rates_from_stats(read_stats, str(stats_path))
        provenance = _provenance(read_stats.get("provenance"))
    elif subs_rows is not None:
        table1 = A.substitution_rates_from_rows(subs_rows)
        messages.append(note(NoteCode.TABLE1_FROM_SUBSTITUTIONS, path=stats_path))
    else:
        table1 = None
        messages.append(note(NoteCode.TABLE1_SKIPPED, path=stats_path))

    table4 = None
    if subs_rows is None:
        messages.append(note(NoteCode.TABLE4_NEEDS_SUBSTITUTIONS, path=sub_path))
    elif index is None:
        messages.append(note(NoteCode.TABLE4_NEEDS_INDEX))
    elif not A.has_popularity(index):
        messages.append(note(NoteCode.TABLE4_NO_POPULARITY, index=index))
    else:
        table4 = A.popularity_table(subs_rows, index, eg, ec)

    consistency = A.consistency_rate(og, oc, eg, ec)
    if consistency["n_twins_without_original"]:
        messages.append(note(NoteCode.TWINS_WITHOUT_ORIGINAL, n=consistency["n_twins_without_original"],
                             original_gold=original_gold))

    report = {
        "inputs": {"original_gold": str(original_gold), "original_pred": str(original_pred),
                   "env_gold": str(env_gold), "env_pred": str(env_pred), "train": [str(t) for t in train],
                   "index": str(index) if index else None, "substitutions": str(sub_path) if subs_rows else None},
        "seeds": seeds,
        "provenance": provenance,
        "original": orig_scores,
        "env": {"pooled": env_pooled, **env_summary},
        "table1_substitution_rates": table1,
        "table2_precision_recall": A.precision_recall_table(orig_scores, env_summary, env_pooled),
        "table3_intra_inter": A.intra_inter_table(orig_scores, env_summary, env_pooled),
        "table4_popularity": table4,
        "table5_names_in_train": table5,
        "figure4_f1_by_entities": A.f1_by_entities(og, oc, eg, ec),
        "per_type_f1": A.per_type_f1(og, oc, eg, ec),
        "consistency": consistency,
        # the fall with its interval: a bootstrap over the documents, each with its renamed copies (compare)
        "bootstrap": fall_intervals(og, op, eg, ep),
        "notes": texts(messages, Level.NOTE),
        "warnings": texts(messages, Level.WARNING),
    }
    return report, messages
