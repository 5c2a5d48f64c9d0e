"""Paired comparison of two systems on one benchmark: bootstrap intervals of the difference in test F1,
Env F1 and the F1 fall, over documents and training runs.

Two systems scored on the same documents differ by chance as well as by what they learnt: which
documents the test happens to hold, and which training seed each run drew. A difference is a claim
only with its interval. As significance tools of other fields do (sacrebleu's paired bootstrap), this
module resamples what varies and keeps paired what is paired:

* **documents**: each bootstrap sample draws the N source documents of the test file N times with
  replacement, and both systems are scored on the same draw. A source document comes *with its Env
  copies* (``<title>-1`` .. ``<title>-K``): they are renamings of one text, not independent documents;
* **training runs**: where a system is given several runs (training seeds), each sample also draws
  its runs with replacement and averages their scores; when both systems have as many runs, the i-th
  runs of the two are paired (the same seed of each arm) and drawn together, else each system's runs
  are drawn on their own.

A run's scores on a sample are those of ``envbench evaluate``: F1 is micro-averaged over the sampled
documents (counts added up, then P, R and F1, as the official scorer does), a document drawn twice
counting twice; its Env F1 is the mean over the K renaming seeds of each seed's F1 (``evaluate``'s
``env.mean``); its fall is test F1 minus Env F1. On the whole data (every document once, every run once)
the figures equal ``evaluate``'s. The interval is the percentile interval of B minus A over the samples;
identical systems give exactly [0, 0], a system better on every document an interval above 0.

The resamples are ``envbench.scoring.bootstrap``'s (``report --env`` draws the same: at seed 0, the same
documents), from SHAKE-256 of stable keys, so the same files and ``seed`` give the same interval on any
machine.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from envbench.core.errors import DataError, EnvbenchError
from envbench.formats.docred import Doc
from envbench.formats.predictions import check_predictions, load_predictions
from envbench.scoring.bootstrap import (
    CONFIDENCE,
    REPLICATES,
    counts_by_source,
    resample_weights,
    scores_of,
    seed_mean,
)
from envbench.scoring.evaluate import read_gold, split_seed
from envbench.scoring.metrics import Tally, tally

METRICS: tuple[str, ...] = ("test_f1", "env_f1", "fall_f1")
LABELS = {"test_f1": "test F1", "env_f1": "Env F1", "fall_f1": "F1 fall"}
SAMPLES = REPLICATES  # bootstrap samples: report --env's, so the two draw alike
LEVEL = CONFIDENCE


@dataclass(frozen=True)
class Benchmark:
    """The gold side: the test documents, and per test document its Env copies in seed order."""

    test: list[Doc]
    env: list[Doc]  # empty without an Env file
    copies: list[int]  # the renaming seeds 1..K ([] without an Env file)
    test_path: str
    env_path: str | None

    @property
    def titles(self) -> list[str]:
        return [d["title"] for d in self.test]


def read_benchmark(test: str | os.PathLike[str], env: str | os.PathLike[str] | None = None) -> Benchmark:
    """The test gold file and its Env version, checked to be one benchmark (:func:`benchmark_of`)."""
    return benchmark_of(read_gold(test), read_gold(env) if env is not None else None, str(test),
                        str(env) if env is not None else None)


def benchmark_of(test_docs: list[Doc], env_docs: list[Doc] | None, test: str = "test", env: str | None = "env"
                 ) -> Benchmark:
    """Gold documents as a benchmark: every Env title is a test title with a "-k" suffix, and every test
    document has the same K copies (``test`` and ``env`` name the files in errors)."""
    titles = [d["title"] for d in test_docs]
    if len(set(titles)) != len(titles):
        raise DataError(f"{test}: two documents share a title; documents are told apart by title here")
    if env_docs is None:
        return Benchmark(test_docs, [], [], test, None)
    known = set(titles)
    copies: dict[str, set[int]] = {}
    for doc in env_docs:
        parts = split_seed(doc["title"])
        if parts is None or parts[0] not in known:
            raise DataError(f"{env}: document {doc['title']!r} is no copy '<title>-k' of a document of {test}; pass "
                            "the Env version of that test file (as `generate` wrote it, or subset with it)")
        copies.setdefault(parts[0], set()).add(parts[1])
    want = sorted(copies.get(titles[0], set()))
    for title in titles:
        if sorted(copies.get(title, set())) != want:
            raise DataError(f"{env}: {title!r} has the copies {sorted(copies.get(title, set()))} where "
                            f"{titles[0]!r} has {want}; every test document needs the same Env copies")
    return Benchmark(test_docs, env_docs, want, test, env)


@dataclass(frozen=True)
class Counts:
    """One run's counts per source document (``bootstrap.COUNTS``): ``test`` N x 1 x C, ``env`` N x K x C."""

    test: Any  # numpy arrays
    env: Any | None


def _per_title(gold: Sequence[Doc], preds: Sequence[Any], source: str) -> dict[str, Tally]:
    checked = check_predictions(preds, {d["title"]: len(d["vertexSet"]) for d in gold}, source=source,
                                n_sentences={d["title"]: len(d["sents"]) for d in gold})
    counts = tally(gold, checked)
    known = {d["title"] for d in gold}
    stray = sorted(t for t in counts if t not in known)
    if stray:
        raise DataError(f"{source}: has predictions for {len(stray)} title(s) that the gold file lacks (first: "
                        f"{stray[0]!r}); the bootstrap draws gold documents: pass the predictions made on that file")
    return counts


def run_counts(bench: Benchmark, test_pred: str | os.PathLike[str] | Sequence[Any],
               env_pred: str | os.PathLike[str] | Sequence[Any] | None = None) -> Counts:
    """A run's counts on the benchmark's documents, from its prediction files (or their loaded lists)."""
    import numpy as np

    def loaded(pred: str | os.PathLike[str] | Sequence[Any]) -> tuple[Sequence[Any], str]:
        return (load_predictions(pred), str(pred)) if isinstance(pred, (str, os.PathLike)) else (pred, "predictions")

    test = np.asarray(counts_by_source(_per_title(bench.test, *loaded(test_pred)), bench.titles), dtype=np.int64)
    if not bench.env:
        return Counts(test, None)
    if env_pred is None:
        raise EnvbenchError(f"{test_pred}: no Env predictions for this run; give one Env prediction file per run")
    env = counts_by_source(_per_title(bench.env, *loaded(env_pred)), bench.titles, bench.copies)
    return Counts(test, np.asarray(env, dtype=np.int64))


def _f1(sums: Any) -> Mapping[str, Any]:
    return {"f1": scores_of(sums, "docred")["f1"]}


def run_scores(counts: Counts, weights: Any | None) -> dict[str, Any]:
    """A run's test F1, Env F1 (the mean over renaming seeds) and fall, on the whole data (``weights`` None: one
    value each) or under document ``weights`` (S x N: how often each sample draws each document; S values)."""
    test = seed_mean(counts.test, _f1, weights)["f1"]
    out = {"test_f1": test}
    if counts.env is not None:
        env = seed_mean(counts.env, _f1, weights)["f1"]
        out["env_f1"] = env
        out["fall_f1"] = test - env
    return out


def system_samples(runs: Sequence[Counts], weights: Any, run_weights: Any | None) -> dict[str, Any]:
    """A system's scores per sample: the mean over the runs a sample drew (``run_weights``: S x R, how often each
    run is drawn; None: every run once) of each run's scores on the sample's documents."""
    import numpy as np

    per_run = [run_scores(r, weights) for r in runs]
    out = {}
    for m in per_run[0]:
        table = np.stack([s[m] for s in per_run], axis=1)  # S x R
        out[m] = table.mean(axis=1) if run_weights is None else (table * run_weights).sum(axis=1) / len(runs)
    return out


def whole_data(runs: Sequence[Counts]) -> dict[str, list[float]]:
    """Each run's scores on the whole data (every document once): ``evaluate``'s figures."""
    per_run = [run_scores(r, None) for r in runs]
    return {m: [float(s[m]) for s in per_run] for m in per_run[0]}


def draws(bench: Benchmark, samples: int, seed: int, runs: int, what: str = "runs") -> tuple[Any, Any | None]:
    """The document weights (S x N) and the run weights (S x R; None for one run) of ``samples`` samples, from
    ``bootstrap.resample_weights`` (SHAKE-256 of stable keys): seed 0 draws the documents as ``report --env``
    does; the runs are drawn apart from the documents, keyed by ``what`` and the titles."""
    docs = resample_weights(len(bench.titles), samples, *(() if seed == 0 else ("seed", seed)))
    picks = resample_weights(runs, samples, what, seed, *bench.titles) if runs > 1 else None
    return docs.astype(float), None if picks is None else picks.astype(float)


def points(x: float, scale: float = 100.0) -> float:
    """``x`` in points, rounded to two decimals, never -0.0 (a fall of -0.000004 reads "0.00", not "-0.00")."""
    return round(scale * x, 2) + 0.0


@dataclass(frozen=True)
class Interval:
    """A figure and its bootstrap percentile interval."""

    estimate: float
    low: float
    high: float
    level: float = LEVEL

    def words(self, *, positive: str = "B above A", negative: str = "B below A",
              none: str = "no measurable difference", scale: float = 100.0) -> str:
        """What the interval says: ``positive`` when it lies above 0, ``negative`` below, ``none`` when it
        spans 0; with the interval ("no measurable difference (95% CI [-9.70, +10.10])")."""
        verdict = positive if self.low > 0 else negative if self.high < 0 else none
        return f"{verdict} ({self.ci_text(scale)})"

    def ci_text(self, scale: float = 100.0) -> str:
        return f"{round(100 * self.level)}% CI [{points(self.low, scale):+.2f}, {points(self.high, scale):+.2f}]"

    def as_dict(self) -> dict[str, Any]:
        return {"estimate": self.estimate, "low": self.low, "high": self.high, "level": self.level}


def interval(estimate: float, samples: Any, level: float = LEVEL) -> Interval:
    """The percentile interval of ``samples`` at ``level`` around a whole-data ``estimate``."""
    import numpy as np

    tail = 100 * (1 - level) / 2
    low, high = np.percentile(samples, [tail, 100 - tail])
    return Interval(float(estimate), float(low), float(high), level)


def _check_bootstrap(samples: int, level: float) -> None:
    if samples < 1:
        raise EnvbenchError(f"--samples must be at least 1 (got {samples}); 2000 is usual")
    if not 0 < level < 1:
        raise EnvbenchError(f"--level must lie between 0 and 1 (got {level}); 0.95 is usual")


@dataclass
class SystemFiles:
    """A system's prediction files: one test file per training run, and one Env file per run (or none)."""

    name: str
    test: list[str]
    env: list[str] = field(default_factory=list)

    def counts(self, bench: Benchmark) -> list[Counts]:
        if not self.test:
            raise EnvbenchError(f"{self.name}: no prediction file; give one test prediction file per training run")
        if bench.env and len(self.env) != len(self.test):
            raise EnvbenchError(f"{self.name}: {len(self.test)} test prediction file(s) and {len(self.env)} Env "
                                "one(s); give one of each per training run, in the same order")
        if not bench.env and self.env:
            raise EnvbenchError(f"{self.name}: Env predictions given without the Env gold file; pass --env-gold")
        return [run_counts(bench, t, self.env[i] if bench.env else None) for i, t in enumerate(self.test)]


@dataclass
class CompareResult:
    """B minus A on each metric, with the interval, and each system's own figures."""

    names: tuple[str, str]
    documents: int
    copies: int
    runs: tuple[int, int]
    paired_runs: bool
    samples: int
    seed: int
    level: float
    systems: dict[str, dict[str, Any]]  # name -> metric -> {"mean", "per_run"}
    differences: dict[str, Interval]  # metric -> B minus A
    # the share of A's fall that B does not have, 1 - fall(B) / fall(A); None without Env, or where a sample
    # gives A no fall (the ratio then says nothing)
    recovered: Interval | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"a": self.names[0], "b": self.names[1], "documents": self.documents, "env_copies": self.copies,
                "runs": {self.names[0]: self.runs[0], self.names[1]: self.runs[1]},
                "paired_runs": self.paired_runs, "samples": self.samples, "seed": self.seed, "level": self.level,
                "systems": self.systems,
                "difference_b_minus_a": {m: iv.as_dict() for m, iv in self.differences.items()},
                "fall_recovered": self.recovered.as_dict() if self.recovered is not None else None}

    def design(self) -> str:
        docs = f"{self.documents} documents" + (f", each with its {self.copies} Env copies" if self.copies else "")
        if max(self.runs) == 1:
            runs = "one run each"
        elif self.paired_runs:
            runs = f"{self.runs[0]} runs each, paired by position"
        else:
            runs = f"{self.runs[0]} and {self.runs[1]} runs, drawn apart"
        return f"paired bootstrap over {docs}; {runs}; {self.samples} samples, seed {self.seed}"

    def summary(self) -> str:
        a, b = self.names
        lines = [self.design(), f"{'':<9} {a:>10} {b:>10} {b + ' - ' + a:>18}   interval"]
        for m, iv in self.differences.items():
            lines.append(f"{LABELS[m]:<9} {points(self.systems[a][m]['mean']):>10.2f} "
                         f"{points(self.systems[b][m]['mean']):>10.2f} {points(iv.estimate):>+18.2f}   "
                         f"{iv.words(positive=f'{b} above {a}', negative=f'{b} below {a}')}")
        if self.recovered is not None:
            r = self.recovered
            lines.append(f"{b} recovers {r.estimate:.3f} of {a}'s F1 fall ({round(100 * r.level)}% CI "
                         f"[{r.low:.3f}, {r.high:.3f}])")
        return "\n".join(lines)


def compare(a: SystemFiles, b: SystemFiles, *, gold: str | os.PathLike[str], env_gold: str | os.PathLike[str] | None = None,
            samples: int = SAMPLES, seed: int = 0, level: float = LEVEL, paired_runs: bool | None = None) -> CompareResult:
    """Compare system ``b`` with system ``a`` on ``gold`` (and its Env version ``env_gold``): the module
    docstring. ``paired_runs``: pair the i-th runs of the two (None: when both have as many runs)."""
    _check_bootstrap(samples, level)
    if a.name == b.name:
        raise EnvbenchError(f"both systems are named {a.name!r}; name them apart (--name-a, --name-b)")
    bench = read_benchmark(gold, env_gold)
    runs_a, runs_b = a.counts(bench), b.counts(bench)
    return compare_counts((a.name, b.name), bench, runs_a, runs_b, samples=samples, seed=seed, level=level,
                          paired_runs=paired_runs)


def compare_counts(names: tuple[str, str], bench: Benchmark, runs_a: Sequence[Counts], runs_b: Sequence[Counts], *,
                   samples: int = SAMPLES, seed: int = 0, level: float = LEVEL,
                   paired_runs: bool | None = None) -> CompareResult:
    """:func:`compare` over counts already read."""
    _check_bootstrap(samples, level)
    if paired_runs is None:
        paired_runs = len(runs_a) == len(runs_b)
    elif paired_runs and len(runs_a) != len(runs_b):
        raise EnvbenchError(f"runs can be paired only when both systems have as many ({len(runs_a)} and "
                            f"{len(runs_b)} given)")
    weights, picks_a = draws(bench, samples, seed, len(runs_a), "runs of A")
    picks_b = picks_a if paired_runs else draws(bench, samples, seed, len(runs_b), "runs of B")[1]
    got_a, got_b = system_samples(runs_a, weights, picks_a), system_samples(runs_b, weights, picks_b)
    whole_a, whole_b = whole_data(runs_a), whole_data(runs_b)
    systems = {name: {m: {"mean": sum(w[m]) / len(w[m]), "per_run": w[m]} for m in w}
               for name, w in zip(names, (whole_a, whole_b))}
    diffs = {m: interval(systems[names[1]][m]["mean"] - systems[names[0]][m]["mean"], got_b[m] - got_a[m], level)
             for m in METRICS if m in got_a}
    recovered = None
    if "fall_f1" in got_a and (got_a["fall_f1"] > 0).all() and systems[names[0]]["fall_f1"]["mean"] > 0:
        share = 1 - systems[names[1]]["fall_f1"]["mean"] / systems[names[0]]["fall_f1"]["mean"]
        recovered = interval(share, 1 - got_b["fall_f1"] / got_a["fall_f1"], level)
    return CompareResult(names, len(bench.titles), len(bench.copies), (len(runs_a), len(runs_b)), paired_runs,
                         samples, seed, level, systems, diffs, recovered)


def system_intervals(bench: Benchmark, runs: Sequence[Counts], *, samples: int = SAMPLES, seed: int = 0,
                     level: float = LEVEL) -> dict[str, Interval]:
    """One system's test F1, Env F1 and fall with their intervals, by the same bootstrap (``report`` uses it
    for the fall of one model)."""
    _check_bootstrap(samples, level)
    weights, picks = draws(bench, samples, seed, len(runs))
    got, whole = system_samples(runs, weights, picks), whole_data(runs)
    return {m: interval(sum(whole[m]) / len(whole[m]), got[m], level) for m in METRICS if m in got}


def fall_intervals(test_docs: list[Doc], test_preds: Sequence[Any], env_docs: list[Doc], env_preds: Sequence[Any],
                   *, samples: int = SAMPLES, seed: int = 0) -> dict[str, Any]:
    """One model's test F1, Env F1 and fall with their intervals, for ``report``: over the test documents that
    have Env copies and those copies (a copy of no test document, and predictions on titles of neither,
    left out). ``{"skipped": why}`` where the files form no benchmark of one set of copies."""
    titles = {d["title"] for d in test_docs}
    env = [d for d in env_docs if (parts := split_seed(d["title"])) is not None and parts[0] in titles]
    renamed = {d["title"] for d in env}
    try:
        bench = benchmark_of(test_docs, env, "--original-gold", "--env-gold")
        counts = run_counts(bench, [p for p in test_preds if isinstance(p, dict) and p.get("title") in titles],
                            [p for p in env_preds if isinstance(p, dict) and p.get("title") in renamed])
    except DataError as exc:
        return {"skipped": str(exc)}
    ivs = system_intervals(bench, [counts], samples=samples, seed=seed)
    return {"documents": len(bench.titles), "env_copies": len(bench.copies), "samples": samples, "seed": seed,
            **{m: iv.as_dict() for m, iv in ivs.items()}}


__all__ = ["Benchmark", "CompareResult", "Counts", "Interval", "SystemFiles", "benchmark_of", "compare",
           "compare_counts", "fall_intervals", "read_benchmark", "run_counts", "system_intervals"]
