"""File-level evaluation: one gold file, one prediction file, optional training files.

On Env benchmarks (every gold title ends in a seed suffix ``-k``) the scores are also broken
down per seed, summarised as mean ± std, the worst seed named, and a name-independent Ign F1
computed: the renamed mention names are mapped back to the original ones through
``substitutions.parquet``, so the Ign F1 of a renamed benchmark discounts the same facts as the
Ign F1 of the original one.
"""

from __future__ import annotations

import math
import os
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envbench.core.errors import DataError
from envbench.formats.docred import Doc
from envbench.formats.linked_docred import read_documents, read_json_file
from envbench.formats.substitutions import read_substitutions
from envbench.scoring.metrics import SCORE_KEYS, score, score_groups, train_facts
from etl.io import compression_of, write_json_atomic

_SEED = re.compile(r"^(.*)-([1-9][0-9]*)$")

LABELS: dict[str, str] = {
    "f1": "F1",
    "ign_f1": "Ign F1",
    "precision": "Precision",
    "recall": "Recall",
    "evidence_f1": "Evidence F1",
    "intra_f1": "Intra F1",
    "inter_f1": "Inter F1",
    "freq_f1": "Freq-10 F1",
    "long_tail_f1": "Long-tail F1",
}

NAME_INDEPENDENT_NOTE = (
    "name-independent Ign F1 maps renamed mentions back to their original names "
    "(through {path}) before testing for overlap with training facts, so it is comparable with the "
    "original benchmark's Ign F1"
)


def split_seed(title: str) -> tuple[str, int] | None:
    """``("Loud Tour", 3)`` for ``"Loud Tour-3"``; None when the title has no seed suffix."""
    m = _SEED.match(title)
    return (m.group(1), int(m.group(2))) if m else None


def env_seeds(gold_docs: Sequence[Mapping[str, Any]]) -> list[int] | None:
    """The seeds of an Env benchmark, or None when the titles do not form one.

    An Env file has a ``-k`` suffix on every title, and every source title carries the same set
    of seeds; an original benchmark whose titles merely end in digits does not meet both.
    """
    by_base: dict[str, set[int]] = {}
    for doc in gold_docs:
        parts = split_seed(doc["title"])
        if parts is None:
            return None
        by_base.setdefault(parts[0], set()).add(parts[1])
    if not by_base:
        return None
    sets = {frozenset(s) for s in by_base.values()}
    if len(sets) != 1:
        return None
    return sorted(next(iter(sets)))


def load_predictions(path: str | os.PathLike[str]) -> list[Any]:
    """Read an official-format prediction file (a JSON list of {title, h_idx, t_idx, r[, evidence]})."""
    data = read_json_file(path, "prediction JSON file")
    if not isinstance(data, list):
        raise DataError(
            f"{path}: expected a JSON list of predictions, got a {type(data).__name__}; "
            'write [{"title": ..., "h_idx": ..., "t_idx": ..., "r": ...}, ...] as the official scorer reads'
        )
    if data and isinstance(data[0], dict) and {"vertexSet", "entities", "sents"} & data[0].keys():
        raise DataError(
            f"{path}: holds DocRED documents (title, sents, vertexSet), not predictions; give it as the gold "
            "file, and as predictions the model's JSON list of {title, h_idx, t_idx, r}"
        )
    return data


def read_gold(path: str | os.PathLike[str]) -> list[Doc]:
    """Gold documents; all of them count, so an invalid one is an error (there is no skipping)."""
    docs = read_documents(path, skip_flag=None).docs
    if not docs:
        raise DataError(f"{path}: has no documents; pass the gold DocRED file the predictions were made for")
    return docs


def check_outputs_differ(outputs: Sequence[str | os.PathLike[str] | None],
                         inputs: Sequence[str | os.PathLike[str] | None]) -> None:
    """Refuse to write over an input file (e.g. --out given the predictions' path) or under a .gz name."""
    ins = {Path(p).resolve(): p for p in inputs if p is not None}
    for o in outputs:
        if o is not None and compression_of(o):
            raise DataError(f"output {o}: JSON outputs are written uncompressed; give a .json name")
        if o is not None and Path(o).resolve() in ins:
            raise DataError(f"output {o} is also an input ({ins[Path(o).resolve()]}); "
                            "choose another output path, or the input would be overwritten")


def load_train_facts(paths: Sequence[str | os.PathLike[str]], *, skip_invalid: bool = False) -> frozenset | None:
    """The (head name, tail name, r) facts of all training files; None when no file is given."""
    if not paths:
        return None
    facts: set[tuple[str, str, str]] = set()
    for p in paths:
        facts |= train_facts(read_documents(p, skip_invalid=skip_invalid, skip_flag="--skip-invalid-train").docs)
    return frozenset(facts)


def original_names(
    gold_docs: Sequence[Mapping[str, Any]], subs: Mapping[str, Mapping[int, Mapping[str, str]]]
) -> tuple[dict[str, list[list[str]]], dict[str, int]]:
    """Per title and entity, each mention's original name (renamed names mapped back pairwise).

    Entities without a substitution row keep their names. Returns the names and counts:
    ``titles`` covered by the substitutions and ``unmapped`` mentions of a renamed entity whose
    name is none of its new names (a mismatch between gold and substitutions file).
    """
    names: dict[str, list[list[str]]] = {}
    covered = unmapped = 0
    for doc in gold_docs:
        rows = subs.get(doc["title"])
        if rows is None:
            continue
        covered += 1
        per_entity = []
        for ei, entity in enumerate(doc["vertexSet"]):
            mapping = rows.get(ei)
            if not mapping:
                per_entity.append([m["name"] for m in entity])
                continue
            mapped = []
            for m in entity:
                old = mapping.get(m["name"])
                if old is None:
                    unmapped += 1
                    old = m["name"]
                mapped.append(old)
            per_entity.append(mapped)
        names[doc["title"]] = per_entity
    return names, {"titles": covered, "unmapped": unmapped}


def summarize(per_seed: Mapping[int, Mapping[str, Any]], keys: Sequence[str] = SCORE_KEYS) -> dict[str, Any]:
    """Mean, sample standard deviation (n-1; 0 for one seed) and the worst seed (lowest F1)."""
    seeds = sorted(per_seed)
    mean = {k: statistics.fmean(per_seed[s][k] for s in seeds) for k in keys}
    std = {k: statistics.stdev([per_seed[s][k] for s in seeds]) if len(seeds) > 1 else 0.0 for k in keys}
    worst = min(seeds, key=lambda s: (per_seed[s]["f1"], s))
    return {"mean": mean, "std": std, "worst_seed": {"seed": worst, **{k: per_seed[worst][k] for k in keys}}}


def score_env(
    gold_docs: Sequence[Mapping[str, Any]],
    preds: Sequence[Any],
    *,
    seeds: Sequence[int],
    facts: frozenset | None,
    original_names: Mapping[str, Sequence[Sequence[str]]] | None = None,
    scorer: str = "docred",
    source: str = "predictions",
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Pooled scores, and per-seed scores with their summary, from one pass over the predictions.

    Predictions go to the seed of their title's suffix (unknown titles too).
    """
    wanted = set(seeds)

    def seed_of(title: str) -> int | None:
        parts = split_seed(title)
        return parts[1] if parts is not None and parts[1] in wanted else None

    pooled, groups = score_groups(gold_docs, preds, seed_of, facts=facts, original_names=original_names,
                                  scorer=scorer, source=source)
    per_seed = {k: groups[k] for k in seeds}
    for per in per_seed.values():
        per.pop("notes")  # the file-level result states them once
    keys = [*SCORE_KEYS, *(["name_independent_ign_f1"] if "name_independent_ign_f1" in pooled else [])]
    return pooled, {"seeds": {str(k): per_seed[k] for k in seeds}, **summarize(per_seed, keys)}


@dataclass
class EvaluateResult:
    """What ``envbench evaluate`` computed; ``scores`` is the content of scores.json."""

    scores: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    out: Path | None = None

    def table(self) -> str:
        """The scores as percentages; Env adds mean ± std, each seed and the worst seed."""
        s = self.scores
        env = s.get("env")
        rows = list(LABELS.items())
        if env and "name_independent_ign_f1" in s:
            rows.append(("name_independent_ign_f1", "Ign F1 (name-indep.)"))
        header = ["", "all"]
        if env:
            seeds = list(env["seeds"])
            header += ["mean ± std", *(f"seed {k}" for k in seeds)]
        lines = [header]
        for key, label in rows:
            row = [label, f"{100 * s[key]:.2f}"]
            if env:
                row.append(f"{100 * env['mean'][key]:.2f} ± {100 * env['std'][key]:.2f}")
                row += [f"{100 * env['seeds'][k][key]:.2f}" for k in seeds]
            lines.append(row)
        widths = [max(len(r[i]) for r in lines) for i in range(len(header))]
        text = [
            "  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r)).rstrip()
            for r in lines
        ]
        counts = (f"{s['n_docs']} documents, {s['n_gold']} gold facts, {s['n_pred']} predictions "
                  f"({s['n_duplicates']} duplicates dropped), {s['n_correct']} correct")
        text.append(counts)
        if env:
            w = env["worst_seed"]
            text.append(f"worst seed: {w['seed']} (F1 {100 * w['f1']:.2f})")
        return "\n".join(text)


def evaluate(
    gold: str | os.PathLike[str],
    pred: str | os.PathLike[str],
    *,
    train: Sequence[str | os.PathLike[str]] = (),
    out: str | os.PathLike[str] | None = None,
    substitutions: str | os.PathLike[str] | None = None,
    scorer: str = "docred",
    env: bool | None = None,
    skip_invalid_train: bool = False,
) -> EvaluateResult:
    """Score a prediction file against a gold file; write scores.json when ``out`` is given.

    ``env`` None detects an Env benchmark from the titles; ``substitutions`` defaults to
    substitutions.parquet beside the gold file when that exists.
    """
    check_outputs_differ([out], [gold, pred, *train, substitutions])
    gold_docs: list[Doc] = read_gold(gold)
    preds = load_predictions(pred)
    facts = load_train_facts(train, skip_invalid=skip_invalid_train)
    source = str(pred)
    seeds = env_seeds(gold_docs)
    if env is True and seeds is None:
        raise DataError(f"{gold}: --env needs every title to end in a seed suffix -k (for example 'Loud Tour-1') "
                        "with the same seeds for every source document; pass an Env file from `envbench generate`")
    if env is False:
        seeds = None
    warnings: list[str] = []
    notes: list[str] = []
    names = None
    if seeds is not None:
        sub_path = Path(substitutions) if substitutions is not None else Path(gold).parent / "substitutions.parquet"
        if facts is None:
            notes.append("no name-independent Ign F1: it needs training documents (--train)")
        elif substitutions is None and not sub_path.exists():
            notes.append(f"no name-independent Ign F1: no substitutions.parquet beside {gold}; "
                         "pass --substitutions FILE from `envbench generate`")
        else:
            names, cover = original_names(gold_docs, read_substitutions(sub_path))
            if cover["titles"] == 0:
                raise DataError(f"{sub_path} covers none of the titles in {gold}; pass the substitutions.parquet "
                                "written together with this Env gold file")
            if cover["titles"] < len(gold_docs):
                warnings.append(f"{sub_path} covers {cover['titles']} of {len(gold_docs)} gold documents; "
                                "the others keep their names for the name-independent Ign F1")
            if cover["unmapped"]:
                warnings.append(f"{cover['unmapped']} mentions of renamed entities carry none of the entity's new "
                                f"names in {sub_path}; they keep their names (is it the file for this gold?)")
        s, env_scores = score_env(gold_docs, preds, seeds=seeds, facts=facts, original_names=names,
                                  scorer=scorer, source=source)
        env_scores["substitutions"] = str(sub_path) if names is not None else None
    else:
        s = score(gold_docs, preds, facts=facts, scorer=scorer, source=source)
        if substitutions is not None:
            warnings.append(f"--substitutions {substitutions} is not used: {gold} is not an Env benchmark (its "
                            "titles lack the seed suffix -k); pass an Env gold file from `envbench generate`")
    notes[:0] = [n for n in s.pop("notes") if "not in the gold file" not in n]
    if names is not None:
        notes.append(NAME_INDEPENDENT_NOTE.format(path=sub_path))
    if s["n_unknown_title_preds"]:
        gold_titles = {d["title"] for d in gold_docs}
        examples = sorted({x["title"] for x in preds if x["title"] not in gold_titles})[:3]
        unknown = (
            f"{s['n_unknown_title_preds']} predictions name {s['n_unknown_titles']} titles that are not in {gold} "
            f"(e.g. {', '.join(repr(t) for t in examples)}); they count against precision, as in the official "
            "scorer; check that --pred was made for this --gold"
        )
        warnings.insert(0, unknown)
    if not s["n_gold"]:
        warnings.append(f"{gold} has no gold facts (no labels), so every score is 0; is it an unlabelled split such "
                        "as DocRED's test set? Score on a labelled file (e.g. dev) instead")
    if s["n_duplicates"]:
        notes.append(f"{s['n_duplicates']} duplicated predictions counted once")
    if seeds is not None:
        s["env"] = env_scores

    s["inputs"] = {"gold": str(gold), "pred": str(pred), "train": [str(t) for t in train]}
    s["notes"] = notes
    s["warnings"] = warnings
    for k in SCORE_KEYS:
        if not (0.0 <= s[k] <= 1.0) or math.isnan(s[k]):  # pragma: no cover - guards the formulas
            raise AssertionError(f"score {k}={s[k]} outside [0, 1]")
    out_path = None
    if out is not None:
        out_path = Path(out)
        write_json_atomic(out_path, s, indent=True)
    return EvaluateResult(scores=s, warnings=warnings, notes=notes, out=out_path)
