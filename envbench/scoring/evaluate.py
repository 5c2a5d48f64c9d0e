"""File-level evaluation: one gold file, one prediction file, optional training files.

On Env benchmarks (every source document once per seed 1..K, titled ``<title>-k``) the scores are
also broken down per seed, summarised as mean ± std, the worst seed named, and a name-independent
Ign F1 computed: the renamed mention names are mapped back to the original ones through
``substitutions.parquet``, so the Ign F1 of a renamed benchmark discounts the same facts as the
Ign F1 of the original one.

Two aggregates of an Env file are reported, because both are in use:

- **pooled** (the top-level scores of scores.json, the ``all`` column): all K copies scored as one
  file, every copy's facts counted together. This is what the Env-DocRE/EVRT reference code prints
  for its five-copy test file.
- **mean over seeds** (``env.mean`` ± ``env.std``, the ``mean ± std`` column): each seed's copy
  scored alone, then averaged; the ± is the sample standard deviation over the renaming seeds of
  one model's predictions, so it measures how much the drawn names move the score. It is not the
  paper's ±, which is over 5 training runs (Section 5.1) on Env-Re-DocRED test, one
  2,500-document file: for that, train several runs and take the spread of their scores.

What the scores do not say is stated as notes and warnings (:mod:`envbench.core.notes`).
"""

from __future__ import annotations

import math
import os
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envbench.core.errors import DataError
from envbench.core.notes import HasNotes, Level, Note, NoteCode, note, texts
from envbench.formats.docred import Doc, read_docs
from envbench.formats.hf import default_substitutions, document_files
from envbench.formats.predictions import (
    Covers,
    load_predictions,
    predicted_titles,
    read_covers,
    unknown_titles,
)
from envbench.formats.substitutions import read_substitutions
from envbench.scoring.metrics import SCORE_KEYS, score, score_groups, train_facts
from etl.io import compression_of, dumps_json, sha256_file
from etl.progress import Stages
from etl.step import Step, manifest_beside

EXAMPLE_TITLES = 3  # titles quoted in a warning about many documents

# the whole title, newlines and all ("$" would also match before a final newline, "." stop at one)
_SEED = re.compile(r"(.*)-([1-9][0-9]*)", re.DOTALL)

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


# --------------------------------------------------------------------------- Env titles
def split_seed(title: str) -> tuple[str, int] | None:
    """``("Loud Tour", 3)`` for ``"Loud Tour-3"``; None when the title has no seed suffix."""
    m = _SEED.fullmatch(title)
    return (m.group(1), int(m.group(2))) if m else None


def env_seeds(gold_docs: Sequence[Mapping[str, Any]], *, consecutive: bool = True) -> list[int] | None:
    """The seeds of an Env benchmark, or None when the titles do not form one.

    An Env file has a ``-k`` suffix on every title, and every source title carries the same set
    of seeds; with ``consecutive`` (detection) that set must also be 1..K, as ``envbench generate``
    writes it. A plain benchmark whose titles merely end in digits (a lone ``Su-27``) meets
    neither; ``consecutive=False`` is for a file the user declared an Env benchmark (``--env``).
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
    seeds = sorted(next(iter(sets)))
    if consecutive and seeds != list(range(1, len(seeds) + 1)):
        return None
    return seeds


def seed_suffixes(seeds: Iterable[int]) -> str:
    """Seeds as the title suffixes that carry them, in order: {2, 1} -> "-1, -2"."""
    return ", ".join(f"-{k}" for k in sorted(seeds))


def env_seed_problem(gold_docs: Sequence[Mapping[str, Any]]) -> str:
    """What an Env benchmark needs and the first document at fault, for titles that form none with one set
    of seeds (``env_seeds(docs, consecutive=False)`` is None): "a seed suffix -k on every title (...), but
    'X' has none", or "the same seeds for every source document, but 'B' has seeds -1, -3 where 'A' has
    -1, -2". The others' seeds are those most source documents have (on a tie, the first source's)."""
    by_base: dict[str, set[int]] = {}
    for doc in gold_docs:
        parts = split_seed(doc["title"])
        if parts is None:
            return f"a seed suffix -k on every title (for example 'Loud Tour-1'), but {doc['title']!r} has none"
        by_base.setdefault(parts[0], set()).add(parts[1])
    if not by_base:
        return "documents, and the file has none"
    common = Counter(frozenset(v) for v in by_base.values()).most_common(1)[0][0]
    base, have = next((b, v) for b, v in by_base.items() if frozenset(v) != common)
    others = [b for b, v in by_base.items() if frozenset(v) == common]

    theirs = (f"{others[0]!r} has {seed_suffixes(common)}" if len(others) == 1 else
              f"{len(others):,} other source documents have {seed_suffixes(common)} (e.g. {example_titles(others)})")
    return (f"the same seeds for every source document, but {base!r} has seed{'s' if len(have) > 1 else ''} "
            f"{seed_suffixes(have)} where {theirs}")


# --------------------------------------------------------------------------- inputs
def read_gold(path: str | os.PathLike[str]) -> list[Doc]:
    """Gold documents; all of them count, so an invalid one is an error (there is no skipping)."""
    docs = read_docs(path, skip_flag=None).docs
    if not docs:
        raise DataError(f"{path}: has no documents; pass the gold DocRED file the predictions were made for")
    return docs


def refuse_compressed_out(out: str | os.PathLike[str]) -> None:
    """A plain JSON file under a .gz name would fail when read back."""
    if compression_of(out):
        raise DataError(f"output {out}: JSON outputs are written uncompressed; give a .json name")


def load_train_facts(paths: Sequence[str | os.PathLike[str]], *, skip_invalid: bool = False) -> frozenset | None:
    """The (head name, tail name, r) facts of all training files; None when no file is given."""
    if not paths:
        return None
    facts: set[tuple[str, str, str]] = set()
    for p in paths:
        facts |= train_facts(read_docs(p, skip_invalid=skip_invalid, skip_flag="--skip-invalid-train").docs)
    return frozenset(facts)


def same_content(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """The same file, or two files with the same bytes (a copy of the gold file is as bad as the file)."""
    pa, pb = Path(a), Path(b)
    try:
        if pa.resolve() == pb.resolve() or os.path.samefile(pa, pb):
            return True
        if pa.stat().st_size != pb.stat().st_size:
            return False
    except OSError:
        return False
    return sha256_file(pa) == sha256_file(pb)


def train_is_gold_notes(train: Sequence[str | os.PathLike[str]],
                        golds: Sequence[tuple[str, str | os.PathLike[str]]]) -> list[Note]:
    """A warning for each --train file that is one of the gold files (``golds``: (option, path) pairs)."""
    return [note(NoteCode.TRAIN_IS_GOLD, train=t, gold_option=option, gold=g)
            for t in train for option, g in golds if same_content(t, g)]


# --------------------------------------------------------------------------- name-independent Ign F1
def original_names(
    gold_docs: Sequence[Mapping[str, Any]], subs: Mapping[str, Mapping[int, Mapping[str, str]]]
) -> tuple[dict[str, list[list[str]]], dict[str, int]]:
    """Per title and entity, each mention's original name (renamed names mapped back pairwise).

    Entities without a substitution row keep their names. Returns the names and counts:
    ``titles`` covered by the substitutions and ``unmapped`` mentions of a renamed entity whose
    name is none of its new names (a mismatch between gold and substitutions file). A mention whose
    name is a new name after "the" maps as that name: renaming writes the article a place needs
    into the mention ("held in Italy" -> "held in the United Arab Emirates"), and one whose first letter
    is a capital a lower-case new name took at a sentence's start maps as that name ("De Glendonwyn was").
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
                if old is None and m["name"].startswith(("the ", "The ")):
                    old = mapping.get(m["name"][4:])  # the article renaming wrote into it ("held in the UAE")
                if old is None and m["name"][:1].isupper():
                    old = mapping.get(m["name"][:1].lower() + m["name"][1:])  # a sentence's capital ("De Glendonwyn")
                if old is None:
                    unmapped += 1
                    old = m["name"]
                mapped.append(old)
            per_entity.append(mapped)
        names[doc["title"]] = per_entity
    return names, {"titles": covered, "unmapped": unmapped}


@dataclass
class NameIndependent:
    """The original mention names for the name-independent Ign F1, or why there are none."""

    names: dict[str, list[list[str]]] | None
    path: Path  # the substitutions file asked for (it may not exist)
    notes: list[Note] = field(default_factory=list)

    @property
    def used(self) -> Path | None:
        return self.path if self.names is not None else None


def name_independent(
    gold: str | os.PathLike[str],
    gold_docs: Sequence[Mapping[str, Any]],
    facts: frozenset | None,
    substitutions: str | os.PathLike[str] | None,
) -> NameIndependent:
    """Map an Env file's renamed mentions back through substitutions.parquet (default: beside ``gold``).

    Needs training facts (there is nothing to discount otherwise) and the substitutions; a file
    that covers none of the titles is an error, partial cover and unmapped mentions are warnings.
    """
    path = Path(substitutions) if substitutions is not None else default_substitutions(gold)
    if facts is None:
        return NameIndependent(None, path, [note(NoteCode.NAME_INDEPENDENT_NEEDS_TRAIN)])
    if substitutions is None and not path.exists():
        return NameIndependent(None, path, [note(NoteCode.NAME_INDEPENDENT_NEEDS_SUBSTITUTIONS, gold=gold)])
    names, cover = original_names(gold_docs, read_substitutions(path))
    if cover["titles"] == 0:
        raise DataError(f"{path} covers none of the titles in {gold}; pass the substitutions.parquet "
                        "written together with this Env gold file")
    notes = []
    if cover["titles"] < len(gold_docs):
        notes.append(note(NoteCode.SUBSTITUTIONS_PARTIAL, path=path, covered=cover["titles"], total=len(gold_docs)))
    if cover["unmapped"]:
        notes.append(note(NoteCode.SUBSTITUTIONS_UNMAPPED, n=cover["unmapped"], path=path))
    notes.append(note(NoteCode.NAME_INDEPENDENT, path=path))
    return NameIndependent(names, path, notes)


# --------------------------------------------------------------------------- scoring
def has_spread(n: int) -> bool:
    """Whether ``n`` values (renaming seeds, training runs) have a spread. One value has none: its
    standard deviation is undefined, stored as None (null in JSON), and neither a stored 0 nor a printed
    "± 0.00" may claim a measured spread. The one rule behind every "mean ± std" that envbench and its
    benches store and print."""
    return n > 1


def spread_label(n: int, plus: str = "mean ± std", alone: str = "mean (one seed)") -> str:
    """The column head of a mean over ``n`` values: ``plus`` when they have a spread, else ``alone``."""
    return plus if has_spread(n) else alone


def mean_std_text(mean: str, std: str | None, n: int) -> str:
    """"mean ± std" for ``n`` values, or the mean alone for one (both already formatted; ``std`` is
    None where there is no spread)."""
    return f"{mean} ± {std}" if has_spread(n) and std is not None else mean


def sample_std(values: Sequence[float]) -> float | None:
    """The sample standard deviation (n-1) of ``values``; None for one value (:func:`has_spread`)."""
    return statistics.stdev(values) if has_spread(len(values)) else None


def summarize(per_seed: Mapping[int, Mapping[str, Any]], keys: Sequence[str] = SCORE_KEYS) -> dict[str, Any]:
    """Mean, sample standard deviation (n-1; None for one seed, see :func:`has_spread`) and the worst seed
    (lowest F1)."""
    seeds = sorted(per_seed)
    mean = {k: statistics.fmean(per_seed[s][k] for s in seeds) for k in keys}
    std = {k: sample_std([per_seed[s][k] for s in seeds]) for k in keys}
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

    Each seed's copy is scored as if alone, with the predictions whose title carries that seed's suffix
    (an unknown title too, 'Other-1' against seed 1); the pooled score, as the official scorer, with all
    of them. So a prediction on a title of no seed of the file ('Tiny', 'Tiny-9') counts against the
    pooled precision only: ``n_preds_without_seed`` counts them, and :func:`prediction_notes` warns.
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
    without_seed = pooled["n_unknown_title_preds"] - sum(per["n_unknown_title_preds"] for per in per_seed.values())
    return pooled, {"seeds": {str(k): per_seed[k] for k in seeds}, **summarize(per_seed, keys),
                    "n_preds_without_seed": without_seed}


def prediction_notes(
    scores: Mapping[str, Any],
    preds: Sequence[Any],
    gold_docs: Sequence[Mapping[str, Any]],
    gold: str | os.PathLike[str],
    *,
    pred_option: str = "--pred",
    gold_option: str = "--gold",
    env: Mapping[str, Any] | None = None,
) -> list[Note]:
    """Warnings about a (gold, predictions) pair: predictions for unknown titles (and, on an Env file, those
    of them whose title has no seed of it, given ``env``, the summary of :func:`score_env`), a gold file
    without labels."""
    out = []
    if scores["n_unknown_title_preds"]:
        titles = {d["title"] for d in gold_docs}
        examples = unknown_titles(preds, titles)
        out.append(note(NoteCode.UNKNOWN_TITLES, n=scores["n_unknown_title_preds"], k=scores["n_unknown_titles"],
                        gold=gold, examples=", ".join(repr(t) for t in examples), pred_option=pred_option,
                        gold_option=gold_option))
        if env is not None and env.get("n_preds_without_seed"):
            seeds = {int(k) for k in env["seeds"]}
            seedless = sorted({t for x in preds if (t := x["title"]) not in titles
                               and ((parts := split_seed(t)) is None or parts[1] not in seeds)})
            out.append(note(NoteCode.ENV_PREDS_WITHOUT_SEED, n=env["n_preds_without_seed"], gold=gold,
                            seeds=seed_suffixes(seeds), examples=example_titles(seedless)))
    if not scores["n_gold"]:
        out.append(note(NoteCode.NO_GOLD_FACTS, gold=gold))
    return out


# --------------------------------------------------------------------------- which documents are scored
@dataclass(frozen=True)
class Coverage:
    """Which gold documents the predictions speak about (titles: each Env twin is a document of its own)."""

    total: int  # gold documents
    predicted: list[str]  # gold titles with at least one prediction, in gold order
    covered_empty: list[str]  # gold titles without predictions that the manifest says are covered
    missing: list[str]  # gold titles with neither, in gold order
    covers: Covers | None = None  # the manifest's covers, when it describes this prediction file

    @property
    def scored_titles(self) -> set[str]:
        """What ``--only-predicted`` keeps: the predicted documents and the covered ones."""
        return {*self.predicted, *self.covered_empty}

    def as_dict(self, *, only_predicted: bool, scored: int) -> dict[str, Any]:
        """The ``coverage`` entry of scores.json."""
        return {"gold_documents": self.total, "with_predictions": len(self.predicted),
                "covered_without_predictions": len(self.covered_empty), "without_prediction": len(self.missing),
                "covers": str(self.covers.manifest) if self.covers is not None else None,
                "only_predicted": only_predicted, "scored_documents": scored}


def coverage(gold_docs: Sequence[Mapping[str, Any]], preds: Sequence[Any], covers: Covers | None) -> Coverage:
    """Split the gold titles into predicted, covered without predictions, and missing.

    ``covers`` (from the manifest beside the predictions) is used only when it describes this very
    prediction file (``matches``); a covered document is one the predictions are for even when
    they hold none for it (a failed request, or no relation found).
    """
    have = predicted_titles(preds)
    used = covers if covers is not None and covers.matches else None
    listed = set(used.titles) if used is not None else set()
    predicted: list[str] = []
    empty: list[str] = []
    missing: list[str] = []
    for doc in gold_docs:
        title = doc["title"]
        (predicted if title in have else empty if title in listed else missing).append(title)
    return Coverage(len(gold_docs), predicted, empty, missing, used)


def coverage_notes(cov: Coverage, covers: Covers | None, pred: str | os.PathLike[str], *,
                   only_predicted: bool, scored: int) -> list[Note]:
    """What the scores cover: gold documents nobody predicted for, or the subset --only-predicted scored."""
    out = []
    if covers is not None and not covers.matches:
        out.append(note(NoteCode.COVERS_STALE, manifest=covers.manifest, pred=pred))
    if only_predicted:
        if cov.covers is not None:
            out.append(note(NoteCode.ONLY_PREDICTED_COVERS, scored=scored, total=cov.total,
                            manifest=cov.covers.manifest, empty=len(cov.covered_empty)))
        else:
            out.append(note(NoteCode.ONLY_PREDICTED_NO_COVERS, scored=scored, total=cov.total, pred=pred))
    elif cov.missing:
        out.append(note(NoteCode.GOLD_WITHOUT_PREDICTIONS, pred=pred, n=len(cov.missing), total=cov.total,
                        examples=example_titles(cov.missing)))
    return out


def example_titles(titles: Sequence[str]) -> str:
    """The first ``EXAMPLE_TITLES`` titles, quoted, and "..." when there are more: "'A', 'B', 'C', ..."."""
    return ", ".join(repr(t) for t in titles[:EXAMPLE_TITLES]) + (", ..." if len(titles) > EXAMPLE_TITLES else "")


@dataclass
class EvaluateResult(HasNotes):
    """What ``envbench evaluate`` computed; ``scores`` is the content of scores.json."""

    scores: dict[str, Any]
    messages: list[Note] = field(default_factory=list)
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
            header += [spread_label(len(seeds), alone="mean"), *(f"seed {k}" for k in seeds)]
        lines = [header]
        for key, label in rows:
            row = [label, f"{100 * s[key]:.2f}"]
            if env:
                std = env["std"][key]
                row.append(mean_std_text(f"{100 * env['mean'][key]:.2f}", None if std is None else f"{100 * std:.2f}",
                                         len(seeds)))
                row += [f"{100 * env['seeds'][k][key]:.2f}" for k in seeds]
            lines.append(row)
        widths = [max(len(r[i]) for r in lines) for i in range(len(header))]
        text = [
            "  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r)).rstrip()
            for r in lines
        ]
        def n(count: int, word: str) -> str:  # "1 document", "2 documents"
            return f"{count} {word}{'' if count == 1 else 's'}"

        counts = (f"{n(s['n_docs'], 'document')}, {n(s['n_gold'], 'gold fact')}, {n(s['n_pred'], 'prediction')} "
                  f"({n(s['n_duplicates'], 'duplicate')} dropped), {s['n_correct']} correct")
        text.append(counts)
        if env:
            w = env["worst_seed"]
            text.append(f"worst seed: {w['seed']} (F1 {100 * w['f1']:.2f})")
        return "\n".join(text)


def score_file(
    gold: str | os.PathLike[str],
    pred: str | os.PathLike[str],
    *,
    train: Sequence[str | os.PathLike[str]] = (),
    substitutions: str | os.PathLike[str] | None = None,
    scorer: str = "docred",
    env: bool | None = None,
    skip_invalid_train: bool = False,
    only_predicted: bool = False,
    progress: bool = False,
) -> EvaluateResult:
    """Read and score; writes nothing (see :func:`evaluate`). ``progress``: the stages on stderr
    (``etl.progress.Stages``, on a terminal only)."""
    with Stages("evaluate", 4 if train else 3, enabled=progress) as stage:
        return _score_file(gold, pred, train=train, substitutions=substitutions, scorer=scorer, env=env,
                           skip_invalid_train=skip_invalid_train, only_predicted=only_predicted, stage=stage)


def _score_file(gold: str | os.PathLike[str], pred: str | os.PathLike[str], *, train: Sequence[str | os.PathLike[str]],
                substitutions: str | os.PathLike[str] | None, scorer: str, env: bool | None, skip_invalid_train: bool,
                only_predicted: bool, stage: Stages) -> EvaluateResult:
    stage("read the gold documents")
    all_gold: list[Doc] = read_gold(gold)
    stage("read the predictions")
    preds = load_predictions(pred)
    covers = read_covers(pred)
    cov = coverage(all_gold, preds, covers)
    gold_docs = all_gold
    if only_predicted:
        keep = cov.scored_titles
        gold_docs = [d for d in all_gold if d["title"] in keep]
        if not gold_docs:
            none = (f"the only document of {gold} has no prediction" if len(all_gold) == 1
                    else f"none of the {len(all_gold):,} documents of {gold} has a prediction")
            raise DataError(f"--only-predicted: {none} in {pred}; check that --pred was made for this --gold")
    if train:
        stage("read the training documents")
    facts = load_train_facts(train, skip_invalid=skip_invalid_train)
    stage("score")
    source = str(pred)
    # whether gold is an Env benchmark is a property of the whole file, not of the subset scored
    seeds = env_seeds(all_gold)
    detect: list[Note] = []
    if env is True:
        seeds = seeds or env_seeds(all_gold, consecutive=False)
        if seeds is None:
            raise DataError(f"{gold}: --env needs {env_seed_problem(all_gold)}; pass the Env file `envbench generate` "
                            "wrote, whole, or leave out --env to score it as a plain benchmark")
    elif env is False:
        seeds = None
    elif seeds is None and all(split_seed(d["title"]) for d in all_gold):
        detect.append(note(NoteCode.ENV_NOT_DETECTED, gold=gold, example=repr(all_gold[0]["title"])))
    if seeds is not None and gold_docs is not all_gold:
        seeds = env_seeds(gold_docs, consecutive=False)  # the seeds every scored source document has
        if seeds is None:
            detect.append(note(NoteCode.ENV_SUBSET_UNEVEN))

    ni = None
    if seeds is not None:
        ni = name_independent(gold, gold_docs, facts, substitutions)
        s, env_scores = score_env(gold_docs, preds, seeds=seeds, facts=facts, original_names=ni.names,
                                  scorer=scorer, source=source)
        env_scores["substitutions"] = str(ni.used) if ni.used is not None else None
        s["env"] = env_scores
    else:
        s = score(gold_docs, preds, facts=facts, scorer=scorer, source=source)
    messages: list[Note] = [
        *coverage_notes(cov, covers, pred, only_predicted=only_predicted, scored=len(gold_docs)),
        *train_is_gold_notes(train, [("--gold", gold)]),
        *s.pop("notes"),
        *detect,
        *(ni.notes if ni is not None else []),
    ]
    if seeds is None and substitutions is not None:
        messages.append(note(NoteCode.SUBSTITUTIONS_UNUSED, path=substitutions, gold=gold))
    pred_notes = prediction_notes(s, preds, gold_docs, gold, env=s.get("env"))
    # the unknown-title warnings lead the warnings, as they most often explain the others
    leading = (NoteCode.UNKNOWN_TITLES, NoteCode.ENV_PREDS_WITHOUT_SEED)
    messages[:0] = [n for n in pred_notes if n.code in leading]
    messages += [n for n in pred_notes if n.code not in leading]
    if s["n_duplicates"]:
        messages.append(note(NoteCode.DUPLICATES, n=s["n_duplicates"]))

    s["inputs"] = {"gold": str(gold), "pred": str(pred), "train": [str(t) for t in train]}
    s["coverage"] = cov.as_dict(only_predicted=only_predicted, scored=len(gold_docs))
    s["notes"] = texts(messages, Level.NOTE)
    s["warnings"] = texts(messages, Level.WARNING)
    for k in SCORE_KEYS:
        if not (0.0 <= s[k] <= 1.0) or math.isnan(s[k]):  # pragma: no cover - guards the formulas
            raise AssertionError(f"score {k}={s[k]} outside [0, 1]")
    return EvaluateResult(scores=s, messages=messages)


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
    only_predicted: bool = False,
    progress: bool = False,
) -> EvaluateResult:
    """Score a prediction file against a gold file; write scores.json when ``out`` is given.

    ``env`` None detects an Env benchmark from the titles (seeds 1..K); True scores per seed any
    file whose source titles share one set of seeds. ``substitutions`` defaults to
    substitutions.parquet beside the gold file when that exists.

    Every gold document is scored, and those without any prediction (and not covered, see below)
    are counted in a warning. ``only_predicted`` scores only the gold documents that have a
    prediction or that PRED.manifest.json (written by ``envbench icl parse``) lists in ``covers``;
    a covered document without predictions still counts, with all its gold facts missed.

    ``out`` is written as a step (:mod:`etl.step`): the paths are checked before any work (no input
    may be the output), the file is published atomically and ``OUT.manifest.json`` (inputs with
    their sha256, parameters, output hash) is written last. Scoring is cheaper than hashing every
    input twice, so a rerun always scores again rather than asking whether ``out`` is up to date.
    """
    kwargs: dict[str, Any] = {"train": train, "substitutions": substitutions, "scorer": scorer, "env": env,
                              "skip_invalid_train": skip_invalid_train, "only_predicted": only_predicted,
                              "progress": progress}
    if out is None:
        return score_file(gold, pred, **kwargs)
    refuse_compressed_out(out)
    default_subs = default_substitutions(gold)
    subs_input = substitutions if substitutions is not None else (default_subs if default_subs.is_file() else None)
    pred_manifest = manifest_beside(pred)  # its covers decide which documents count
    inputs = [p for p in (*document_files(gold), pred, *train, subs_input,
                          pred_manifest if pred_manifest.is_file() else None) if p is not None]
    parameters = {"scorer": scorer, "env": env, "skip_invalid_train": skip_invalid_train,
                  "only_predicted": only_predicted}
    with Step("evaluate", manifest=manifest_beside(out), outputs=[out], inputs=inputs, parameters=parameters,
              rerun=True, force_flag=None) as step:
        result = score_file(gold, pred, **kwargs)
        step.path(out).write_bytes(dumps_json(result.scores, indent=True))
    result.out = Path(out)
    return result


__all__ = ["Coverage", "EvaluateResult", "LABELS", "NameIndependent", "coverage", "coverage_notes", "env_seeds",
           "env_seed_problem",
           "example_titles", "evaluate", "load_train_facts",
           "name_independent", "original_names", "prediction_notes", "read_gold", "refuse_compressed_out",
           "same_content", "sample_std", "score_env", "score_file", "split_seed", "summarize", "train_is_gold_notes"]
