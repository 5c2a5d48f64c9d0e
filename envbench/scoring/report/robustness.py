"""The robustness report: systems on the original documents and on several Env folders of them, one table.

``envbench report --env DIR ... --system NAME=PREDS ...`` reads each Env folder ``envbench generate``
wrote (its ``<stem>_env.json``, and the attack its ``stats.json`` records: ``core.attacks``) and each
system's predictions (``PREDS/original.json`` on ``--original-gold``, ``PREDS/<folder name>.json`` on each
folder's Env file), and writes one row per (system, folder):

* the attack, its rate and popularity bin, and the share of entity slots it changed;
* F1, Ign F1, precision and recall, and intra- and inter-sentence F1; on an Env file the mean over its
  renaming seeds of each seed's copy scored alone (``envbench evaluate``'s ``env.mean``, the Env column
  of ``report``'s Table 2);
* the fall of F1, Ign F1, intra F1 and inter F1 from the same system on the original documents (original
  minus Env: positive when the score fell), with a paired 95% bootstrap interval
  (:func:`paired_bootstrap`): each resample draws source documents with replacement and scores every
  document drawn on both sides, with all its Env copies, as ``envbench compare`` resamples.

The Env folders must be made from the same original documents (the table compares like with like); the
original side is scored on those documents only. Ign F1 discounts the facts whose mention names occur
among the ``--train`` facts; on an Env file the names are mapped back to the original ones through its
``substitutions.parquet`` (``evaluate.name_independent``), so every row discounts the same facts. A
type-swap row is a negative control (``core.attacks.NEGATIVE_CONTROLS``): it breaks what the labels
assume, and the table and the plot mark it.

The plot (``rate_curve.png``): F1 against the share renamed for each system (rate 0 is the original;
the ``rename`` folders without a popularity bin give the other points), with the intervals, and beside
it F1 under each other attack.

The bootstrap (the counts per source document, the resamples, the scores of summed counts) is
``envbench.scoring.bootstrap``'s, which ``envbench compare`` draws its intervals with too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envbench.core.attacks import Attack, attack_of_stats
from envbench.core.errors import DataError
from envbench.core.notes import HasNotes, Level, Note, NoteCode, note, texts
from envbench.formats.docred import Doc, read_docs, read_json_file
from envbench.formats.predictions import check_predictions, load_predictions
from envbench.scoring.bootstrap import (
    CONFIDENCE,
    COUNTS,
    REPLICATES,
    counts_by_source,
    paired_bootstrap,
    resample_weights,
    scores_of,
    seed_mean,
)
from envbench.scoring.evaluate import (
    env_seed_problem,
    env_seeds,
    example_titles,
    name_independent,
    read_gold,
    split_seed,
)
from envbench.scoring.metrics import tally, train_facts
from etl.io import dumps_json
from etl.step import MANIFEST, Step, read_manifest

ROBUSTNESS_FILES = ("robustness.json", "robustness.md", "rate_curve.png")
ORIGINAL_PREDICTIONS = "original.json"  # a system's predictions on --original-gold, in its PREDS folder
LEVEL_KEYS = ("f1", "ign_f1", "precision", "recall", "intra_f1", "inter_f1")
FALL_KEYS = ("f1", "ign_f1", "intra_f1", "inter_f1")

# --------------------------------------------------------------------------- inputs
@dataclass
class EnvFolder:
    """An Env folder of ``envbench generate``: its benchmark file, attack and changed share."""

    path: Path
    gold: Path
    attack: Attack
    changed_share: float | None  # entity slots changed (stats.json's substitution_rate.total)

    @property
    def name(self) -> str:
        return self.path.name


def read_env_folder(path: str | os.PathLike[str]) -> EnvFolder:
    """The folder's Env file (the ``<stem>_env.json`` its manifest lists) and the attack its stats.json records."""
    folder = Path(path)
    manifest = read_manifest(folder / MANIFEST)
    if manifest is None or manifest.get("step") != "generate":
        raise DataError(f"--env {folder}: not a folder `envbench generate` wrote (no generate {MANIFEST}); "
                        "pass the --out folder of a generate run")
    mains = [o["name"] for o in manifest.get("outputs") or []
             if isinstance(o, dict) and isinstance(o.get("name"), str) and o["name"].endswith("_env.json")]
    if len(mains) != 1 or not (folder / mains[0]).is_file():
        raise DataError(f"--env {folder}: its {MANIFEST} lists no one <stem>_env.json that is there; regenerate it "
                        "with `envbench generate ... --out " f"{folder}`")
    stats_path = folder / "stats.json"
    stats = read_json_file(stats_path, "stats.json") if stats_path.is_file() else {}
    if not isinstance(stats, dict):
        raise DataError(f"{stats_path}: not a JSON object; pass the stats.json `envbench generate` wrote")
    rate = (stats.get("substitution_rate") or {}).get("total")
    share = float(rate) if type(rate) in (int, float) else None
    return EnvFolder(folder, folder / mains[0], attack_of_stats(stats, str(stats_path)), share)


def parse_system(spec: str) -> tuple[str, Path]:
    """``NAME=FOLDER`` of ``--system``: the system's name and its predictions folder."""
    name, sep, folder = spec.partition("=")
    if not sep or not name.strip() or not folder.strip():
        raise DataError(f"--system {spec!r}: give NAME=FOLDER, the folder holding {ORIGINAL_PREDICTIONS} and one "
                        "<Env folder name>.json per --env (e.g. --system atlop=runs/atlop/preds)")
    return name.strip(), Path(folder.strip())


# --------------------------------------------------------------------------- the report
@dataclass
class RobustnessResult(HasNotes):
    report: dict[str, Any]
    files: list[Path] = field(default_factory=list)
    messages: list[Note] = field(default_factory=list)

    def summary(self) -> str:
        """The table as the terminal shows it: one line per row, percentages and points."""
        lines = [f"{'system':<14} {'attack':<34} {'F1':>6} {'Ign F1':>6} {'F1 fall [95% CI]':>24}"]
        for row in self.report["rows"]:
            fall = row["falls"].get("f1") if row["falls"] else None
            ci = (f"{100 * fall['fall']:+6.2f} [{100 * fall['fall_low']:+.2f}, {100 * fall['fall_high']:+.2f}]"
                  if fall else "")
            lines.append(f"{row['system']:<14} {row['label']:<34} {100 * row['scores']['f1']:6.2f} "
                         f"{100 * row['scores']['ign_f1']:6.2f} {ci:>24}")
        return "\n".join(lines)


def robustness_report(
    original_gold: str | os.PathLike[str],
    envs: Sequence[str | os.PathLike[str]],
    systems: Sequence[tuple[str, str | os.PathLike[str]]],
    *,
    out: str | os.PathLike[str],
    train: Sequence[str | os.PathLike[str]] = (),
    scorer: str = "docred",
    replicates: int = REPLICATES,
) -> RobustnessResult:
    """Score every system on the original and on every Env folder, write robustness.json, robustness.md
    and rate_curve.png into ``out`` (recomputed on every run; its manifest records the inputs)."""
    if not envs:
        raise DataError("--env: give at least one Env folder of `envbench generate`")
    if not systems:
        raise DataError("--system: give at least one NAME=FOLDER of predictions")
    folders = [read_env_folder(p) for p in envs]
    seen: dict[str, Path] = {}
    for f in folders:
        if f.name in seen:
            raise DataError(f"--env {f.path}: has the name of --env {seen[f.name]}, and a system's predictions on "
                            f"each are found by that name ({f.name}.json); give the folders different names")
        seen[f.name] = f.path
    names = [s[0] for s in systems]
    if len(set(names)) != len(names):
        raise DataError(f"--system: the name {next(n for n in names if names.count(n) > 1)!r} is given twice; "
                        "name each system once")
    pred_files = {name: {"original": Path(folder) / ORIGINAL_PREDICTIONS,
                         **{f.name: Path(folder) / f"{f.name}.json" for f in folders}} for name, folder in systems}
    for name, files in pred_files.items():
        if not files["original"].is_file():
            raise DataError(f"--system {name}: no {files['original']}; put the system's predictions on "
                            f"--original-gold there (a folder holds {ORIGINAL_PREDICTIONS} and <Env folder name>.json)")
    inputs: list[Path] = [Path(original_gold), *[Path(t) for t in train], *[f.gold for f in folders],
                          *[p for files in pred_files.values() for p in files.values() if p.is_file()]]
    parameters = {"scorer": scorer, "replicates": replicates, "confidence": CONFIDENCE,
                  "env": [str(f.path) for f in folders], "systems": {n: str(f) for n, f in systems}}
    with Step("report", root=Path(out), outputs=ROBUSTNESS_FILES, inputs=inputs, parameters=parameters,
              rerun=True, force_flag=None) as step:
        report, messages = _analyse(Path(original_gold), folders, pred_files, train, scorer, replicates)
        from envbench.scoring.report.plots import rate_curve_png

        step.path("rate_curve.png").write_bytes(rate_curve_png(report["rows"]))
        step.path("robustness.md").write_bytes(render_robustness(report).encode("utf-8"))
        step.path("robustness.json").write_bytes(dumps_json(report, indent=True))
    return RobustnessResult(report, [Path(out) / n for n in ROBUSTNESS_FILES], messages)


def _analyse(original_gold: Path, folders: Sequence[EnvFolder], pred_files: Mapping[str, Mapping[str, Path]],
             train: Sequence[str | os.PathLike[str]], scorer: str, replicates: int,
             ) -> tuple[dict[str, Any], list[Note]]:
    og = read_gold(original_gold)
    by_title = {d["title"]: d for d in og}
    env_docs: dict[str, list[Doc]] = {}
    seeds: dict[str, list[int]] = {}
    covered: frozenset[str] | None = None
    for f in folders:
        docs = read_gold(f.gold)
        found = env_seeds(docs, consecutive=False)
        if found is None:
            raise DataError(f"--env {f.path}: {f.gold.name} needs {env_seed_problem(docs)}; pass the folder "
                            "`envbench generate` wrote, whole")
        seeds[f.name] = found
        sources = set()
        for d in docs:
            parts = split_seed(d["title"])
            if parts is None or parts[0] not in by_title:
                raise DataError(f"--env {f.path}: {f.gold.name} holds {d['title']!r}, a renamed copy of no document "
                                f"of --original-gold {original_gold}; pass Env folders generated from that file")
            sources.add(parts[0])
        if covered is not None and frozenset(sources) != covered:
            raise DataError(f"--env {f.path}: renames {len(sources)} documents, where --env {folders[0].path} renames "
                            f"{len(covered)} others or more; the folders must be made from the same documents")
        covered = frozenset(sources)
        env_docs[f.name] = docs
    assert covered is not None
    titles = [d["title"] for d in og if d["title"] in covered]
    og = [by_title[t] for t in titles]
    train_docs: list[Doc] = []
    for p in train:
        train_docs.extend(read_docs(p, skip_flag=None).docs)
    facts = train_facts(train_docs) if train_docs else None
    messages: list[Note] = []
    if len(titles) < len(by_title):
        messages.append(note(NoteCode.REPORT_ORIGINALS_NOT_RENAMED, gold=original_gold, env=folders[0].gold,
                             n=len(by_title) - len(titles), total=len(by_title), kept=len(titles),
                             examples=example_titles([t for t in by_title if t not in covered])))
    mapped: dict[str, Any] = {}
    for f in folders:
        ni = name_independent(f.gold, env_docs[f.name], facts, None)
        mapped[f.name] = ni.names
    rows: list[dict[str, Any]] = []

    def stat(sums: Any) -> Mapping[str, Any]:
        return scores_of(sums, scorer)

    for system, files in pred_files.items():
        orig = _counts(og, files["original"], titles, facts=facts, names=None, seeds=None, messages=messages)
        rows.append(_row(system, None, seed_mean(orig, stat), None))
        for f in folders:
            path = files[f.name]
            if not path.is_file():
                messages.append(note(NoteCode.ROBUSTNESS_NO_PREDICTIONS, system=system, path=path, env=f.path))
                continue
            env = _counts(env_docs[f.name], path, titles, facts=facts, names=mapped[f.name], seeds=seeds[f.name],
                          messages=messages)
            falls = paired_bootstrap(orig, env, stat, FALL_KEYS, replicates=replicates)
            rows.append(_row(system, f, seed_mean(env, stat), falls))
    if any(r["negative_control"] for r in rows):
        messages.append(note(NoteCode.ROBUSTNESS_NEGATIVE_CONTROL))
    messages.append(note(NoteCode.ROBUSTNESS_INTERVALS, replicates=replicates, n=len(titles)))
    if facts is None:
        messages.append(note(NoteCode.NO_TRAIN))
    report = {
        "inputs": {"original_gold": str(original_gold), "env": {f.name: str(f.gold) for f in folders},
                   "systems": {s: {k: str(p) for k, p in files.items()} for s, files in pred_files.items()},
                   "train": [str(t) for t in train]},
        "documents": len(titles),
        "bootstrap": {"replicates": replicates, "confidence": CONFIDENCE, "unit": "source document",
                      "pairing": "each resampled document on both sides, with all its Env copies"},
        "rows": rows,
        "notes": texts(messages, Level.NOTE),
        "warnings": texts(messages, Level.WARNING),
    }
    return report, messages


def _counts(docs: Sequence[Doc], pred: Path, titles: Sequence[str], *, facts: frozenset | None,
            names: Mapping[str, Any] | None, seeds: Sequence[int] | None, messages: list[Note]) -> list[list[list[int]]]:
    preds = load_predictions(pred)
    checked = check_predictions(preds, {d["title"]: len(d["vertexSet"]) for d in docs}, source=str(pred),
                                n_sentences={d["title"]: len(d["sents"]) for d in docs})
    per_title = tally(docs, checked, facts=facts, original_names=names)
    known = {d["title"] for d in docs}
    unknown = sorted(t for t in per_title if t not in known)
    if unknown:
        messages.append(note(NoteCode.ROBUSTNESS_UNKNOWN_TITLES, path=pred, n=len(unknown),
                             examples=example_titles(unknown)))
    return counts_by_source({t: v for t, v in per_title.items() if t in known}, titles, seeds,
                            original_ign=names is not None)


def _row(system: str, folder: EnvFolder | None, scores: Mapping[str, Any],
         falls: Mapping[str, Mapping[str, float]] | None) -> dict[str, Any]:
    attack = folder.attack if folder is not None else None
    return {
        "system": system,
        "env": folder.name if folder is not None else None,
        "label": attack.label() if attack is not None else "original",
        "attack": attack.name if attack is not None else "original",
        "rate": (attack.rate if attack.name == "rename" else None) if attack is not None else 0.0,
        "popularity": attack.popularity if attack is not None else None,
        "negative_control": bool(attack is not None and attack.negative_control),
        "changed_share": folder.changed_share if folder is not None else None,
        "scores": {k: float(scores[k]) for k in LEVEL_KEYS},
        "falls": dict(falls) if falls is not None else None,
    }


# --------------------------------------------------------------------------- robustness.md
def render_robustness(report: Mapping[str, Any]) -> str:
    """robustness.md: the one table, then what it rests on."""
    def pct(v: float | None) -> str:
        return "–" if v is None else f"{100 * v:.2f}"

    def fall(row: Mapping[str, Any], key: str) -> str:
        f = (row["falls"] or {}).get(key)
        return "" if f is None else f"{100 * f['fall']:+.2f} [{100 * f['fall_low']:+.2f}, {100 * f['fall_high']:+.2f}]"

    lines = ["# Robustness to renaming: attacks side by side", "",
             f"{report['documents']} original documents. Every Env row is the mean over its renaming seeds of each "
             "seed's copy scored alone; each fall is the same system's score on the original documents minus "
             "that score (positive: it fell), in points, with the paired "
             f"{round(100 * report['bootstrap']['confidence'])}% bootstrap interval over documents "
             f"({report['bootstrap']['replicates']} resamples). 'changed' is the share of entity slots the "
             "attack changed.", "",
             "| system | attack | rate | popularity | changed | F1 | Ign F1 | P | R | intra F1 | inter F1 "
             "| F1 fall [95% CI] | Ign F1 fall [95% CI] | intra F1 fall [95% CI] | inter F1 fall [95% CI] |",
             "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|---|"]
    for row in report["rows"]:
        s = row["scores"]
        rate = "–" if row["rate"] is None else f"{row['rate']:g}"
        lines.append(f"| {row['system']} | {row['label']} | {rate} | {row['popularity'] or '–'} | "
                     f"{pct(row['changed_share'])} | {pct(s['f1'])} | {pct(s['ign_f1'])} | {pct(s['precision'])} | "
                     f"{pct(s['recall'])} | {pct(s['intra_f1'])} | {pct(s['inter_f1'])} | {fall(row, 'f1')} | "
                     f"{fall(row, 'ign_f1')} | {fall(row, 'intra_f1')} | {fall(row, 'inter_f1')} |")
    lines += ["", "Plot: `rate_curve.png` (F1 against the share renamed, per system; F1 under the other attacks).",
              ""]
    lines += [f"Note: {n}" for n in report["notes"]] + [f"Warning: {w}" for w in report["warnings"]]
    return "\n".join(lines) + "\n"


__all__ = ["COUNTS", "FALL_KEYS", "LEVEL_KEYS", "ORIGINAL_PREDICTIONS", "REPLICATES", "ROBUSTNESS_FILES", "EnvFolder",
           "RobustnessResult", "counts_by_source", "paired_bootstrap", "parse_system", "read_env_folder",
           "render_robustness", "resample_weights", "robustness_report", "scores_of", "seed_mean"]
