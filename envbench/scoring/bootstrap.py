"""The paired bootstrap over source documents, each with its Env copies: counts, resamples, scores.

One definition for ``envbench report --env`` (``report.robustness``: the fall of each system under each
attack) and ``envbench compare`` (two systems against each other):

* :func:`counts_by_source`: a prediction file's tallies as an N x K x C array (source documents, renaming
  seeds, :data:`COUNTS`), so that a resample is a weighted sum;
* :func:`resample_weights`: how often each document is drawn in each resample, from SHAKE-256 of stable
  keys (the same inputs give the same interval on any machine);
* :func:`seed_mean` and :func:`scores_of`: the scores of summed counts, averaged over renaming seeds as
  ``evaluate``'s ``env.mean`` is;
* :func:`paired_bootstrap`: the fall original minus Env with its percentile interval.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from envbench.core.seeding import key_bytes
from envbench.scoring.evaluate import split_seed
from envbench.scoring.metrics import Tally

REPLICATES = 2000  # bootstrap resamples
CONFIDENCE = 0.95
# the Tally counts the bootstrap resamples (per source document), in this order
COUNTS = ("correct", "submitted", "gold", "in_train", "intra_correct", "intra_submitted", "intra_gold",
          "inter_correct", "inter_submitted", "inter_gold")


def counts_by_source(per_title: Mapping[str, Tally], titles: Sequence[str], seeds: Sequence[int] | None = None, *,
                     original_ign: bool = False) -> list[list[list[int]]]:
    """Per source title (in ``titles`` order) and per seed (``seeds``; None: the original documents, one
    "seed"), the :data:`COUNTS` of that document: an N x K x len(COUNTS) list. ``original_ign``: Ign F1's
    in-train count from the names mapped back to the original ones."""
    where = {k: i for i, k in enumerate(seeds)} if seeds is not None else {None: 0}
    rows = {t: [[0] * len(COUNTS) for _ in where] for t in titles}
    for title, t in per_title.items():
        parts = split_seed(title) if seeds is not None else (title, None)
        if parts is None or parts[0] not in rows or parts[1] not in where:
            continue  # a title of no compared document: the caller's notes count it
        row = rows[parts[0]][where[parts[1]]]
        for i, name in enumerate(COUNTS):
            row[i] += getattr(t, "in_train_original" if name == "in_train" and original_ign else name)
    return [rows[t] for t in titles]


def scores_of(sums: Any, scorer: str) -> dict[str, Any]:
    """F1, Ign F1, P, R, intra and inter F1 from summed :data:`COUNTS` (an array whose last axis is COUNTS),
    vectorised over the leading axes, with the official scorers' zeros where they would divide by zero
    (``metrics.finalize`` computes the same from a Tally; a test holds them equal)."""
    import numpy as np

    s = np.asarray(sums, dtype=float)
    c = {name: s[..., i] for i, name in enumerate(COUNTS)}

    def div(a: Any, b: Any) -> Any:
        return np.divide(a, b, out=np.zeros_like(a, dtype=float), where=b > 0)

    def f1(p: Any, r: Any) -> Any:
        return div(2 * p * r, p + r)

    p, r = div(c["correct"], c["submitted"]), div(c["correct"], c["gold"])
    den = c["submitted"] - c["in_train"] + (1e-5 if scorer == "re-docred" else 0.0)
    ign_p = div(c["correct"] - c["in_train"], den)
    return {
        "f1": f1(p, r), "ign_f1": f1(ign_p, r), "precision": p, "recall": r,
        "intra_f1": f1(div(c["intra_correct"], c["intra_submitted"]), div(c["intra_correct"], c["intra_gold"])),
        "inter_f1": f1(div(c["inter_correct"], c["inter_submitted"]), div(c["inter_correct"], c["inter_gold"])),
    }


@functools.lru_cache(maxsize=4)
def resample_weights(n: int, replicates: int, *keys: object) -> Any:
    """A (replicates x n) matrix: how often each of ``n`` units is drawn in each resample. The draws come
    from SHAKE-256 of (keys, resample, n), so the same inputs give the same interval on any machine, and
    every row of one report is drawn from the same resamples (read-only: it is shared)."""
    import numpy as np

    out = np.zeros((replicates, n), dtype=np.int64)
    for b in range(replicates if n else 0):
        raw = hashlib.shake_256(key_bytes(*keys, "bootstrap", b, n)).digest(8 * n)
        out[b] = np.bincount(np.frombuffer(raw, dtype=">u8") % n, minlength=n)
    out.setflags(write=False)
    return out


def seed_mean(counts: Any, statistic: Callable[[Any], Mapping[str, Any]], weights: Any | None = None
              ) -> dict[str, Any]:
    """The scores of N x K x C ``counts`` (documents, seeds, :data:`COUNTS`): each seed's counts summed over the
    documents (weighted by ``weights``, S x N, for S resamples), scored, and the scores averaged over the seeds
    (``evaluate``'s ``env.mean``; one seed: its scores)."""
    import numpy as np

    c = np.asarray(counts, dtype=float)
    n, k, width = c.shape
    if weights is None:
        return {key: v.mean(axis=-1) for key, v in statistic(c.sum(axis=0)).items()}
    sums = (weights @ c.reshape(n, k * width)).reshape(-1, k, width)
    return {key: v.mean(axis=-1) for key, v in statistic(sums).items()}


def paired_bootstrap(original: Any, env: Any, statistic: Callable[[Any], Mapping[str, Any]], keys: Sequence[str], *,
                     replicates: int = REPLICATES, confidence: float = CONFIDENCE,
                     seed_keys: Sequence[object] = ()) -> dict[str, dict[str, float]]:
    """The paired bootstrap of the fall ``original - env`` over source documents: ``original`` and ``env`` are
    N x K x C counts (:func:`counts_by_source`; the original has K = 1), each resample draws N documents
    with replacement and scores both sides on that draw (:func:`seed_mean`). Per key: the values on the whole
    data (``original``, ``env``, ``fall``) and the percentile intervals of the fall (``fall_low``,
    ``fall_high``) and of the Env value (``env_low``, ``env_high``). ``envbench compare`` draws its
    intervals the same way; this is the one place to point at it."""
    import numpy as np

    point_o, point_e = seed_mean(original, statistic), seed_mean(env, statistic)
    w = resample_weights(len(original), replicates, *seed_keys).astype(float)
    boot_o, boot_e = seed_mean(original, statistic, w), seed_mean(env, statistic, w)
    lo_q, hi_q = 100 * (1 - confidence) / 2, 100 * (1 + confidence) / 2
    out: dict[str, dict[str, float]] = {}
    for k in keys:
        fall = boot_o[k] - boot_e[k]
        out[k] = {"original": float(point_o[k]), "env": float(point_e[k]), "fall": float(point_o[k] - point_e[k]),
                  "fall_low": float(np.percentile(fall, lo_q)), "fall_high": float(np.percentile(fall, hi_q)),
                  "env_low": float(np.percentile(boot_e[k], lo_q)), "env_high": float(np.percentile(boot_e[k], hi_q))}
    return out


__all__ = ["CONFIDENCE", "COUNTS", "REPLICATES", "counts_by_source", "paired_bootstrap", "resample_weights",
           "scores_of", "seed_mean"]
