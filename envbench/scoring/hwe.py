"""DocRED-HWE (Chen et al., ACL 2023): human evidence words per fact, and the MAP(K) metric.

DocRED-HWE (``dev_keys_new.json``) is DocRED dev (699 documents) where each label carries
``keywords``: word spans ``{name, sent_id, pos}`` that a human marked as the rationale for the
fact. A model "understands" a fact when the words its attribution ranks highest are those words.

Words are the document's tokens (``sents``), numbered in reading order across sentences (word
``i`` of the flat list); an attribution method ranks them, and this module scores the rankings in
one of two forms (``form``, ``envbench understand --map``):

- ``official``, the default, as DocRED-HWE's ``MAP_metric.py`` computes it: a hit at rank i adds 1/i,

      AP_t(K) = (1/K) sum_{i<=K} 1_t(i) / i

  and its saved ("new") variant caps the rank at the fact's elbow: a hit at rank i adds
  1 / min(i, m_t + 1), where m_t is :func:`elbow_index` of the fact's top-100 attribution scores.
  Example: 3 evidence words at ranks 1, 2 and 5, K = 10: (1 + 1/2 + 1/5) / 10 = 0.17; a perfect
  ranking (1 + 1/2 + 1/3) / 10 = 0.183.
- ``precision``, the paper's equation (5): a hit adds the precision of the top i words,

      AP_t(K) = (1/K) sum_{i<=K} P_t(i) 1_t(i);   the example scores (1 + 1 + 3/5) / 10 = 0.26, a perfect ranking 0.3.

MAP(K) = (1/T) sum_t AP_t(K) over the T facts measured, 1_t(i) being whether the i-th word is one
of fact t's evidence words. Because of the 1/K, a fact with n evidence words scores at most
min(K, n) / K in the precision form and H(min(K, n)) / K (H the harmonic number) in the official
one: :func:`ideal_ap_curve`. The chance level, a random ranking's expected AP, is
:func:`random_ap_curve`.

Which words are a fact's evidence (``spans``, ``envbench understand --spans``):

- ``context``, the default: the words of all the fact's keyword spans except the head's and tail's
  own mention words, which are also left out of the ranking. Annotators often mark the pair's names
  as evidence (a head or tail mention word is in the spans of 1,468 of the 7,342 facts), and an
  attribution ranks those names first almost always; scored as hits they reward the very reliance on
  names that a renaming benchmark exists to expose. This mode asks whether the model's attribution
  *beyond* the pair's names falls on the words humans marked. 247 facts have no evidence word besides
  the names and are left out of this mode (``facts_scored``).
- ``last``: the last keyword span of each fact, the evidence DocRED-HWE's ``MAP_metric.py`` reads (its
  ``keywords_dict.pkl`` holds each label's last span: equal on all 644 labelled documents); the pair's
  names stay in the ranking and in the evidence where the span holds them (1,170 facts).
- ``all``: every keyword span, names included: the mode that scores name reliance as understanding.
h and t index the HWE file's own ``vertexSet``: 81 of its documents have entity lists that differ
from Re-DocRED's, so never resolve them against Re-DocRED.

All 699 titles are in Re-DocRED (360 in dev, 339 in test). A model trained (or selected) on
Re-DocRED dev must be measured on the other 339 documents only (``exclude_titles`` with the
dev file's titles), or the curve measures memorisation. Pure Python; the plot imports matplotlib
lazily.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envbench.core.errors import DataError
from envbench.formats.docred import Doc, read_docs
from etl.io import write_bytes_atomic, write_json_atomic

MAX_K = 100  # MAP(K) is computed for K = 1..MAX_K, as the official script does
TABLE_KS: tuple[int, ...] = (1, 5, 10, 20, 50)
SPAN_MODES: tuple[str, ...] = ("context", "last", "all")  # see the module docstring; context first, the default
MAP_FORMS: tuple[str, ...] = ("official", "precision")  # see the module docstring; official first, the default
# What each span mode takes as a fact's evidence, for the command's output.
SPAN_NAMES: dict[str, str] = {
    "context": "all keyword spans less the head's and tail's mentions (which are not ranked either)",
    "last": "the last keyword span (DocRED-HWE's MAP_metric.py)",
    "all": "all keyword spans, the pair's names included",
}
# What each form is, for tables and plots: which curve uses which form must be said where it is shown.
FORM_NAMES: dict[str, str] = {
    "official": "official MAP (DocRED-HWE's MAP_metric.py: a hit at rank i adds 1/i)",
    "precision": "precision MAP (the paper's Eq. 5: a hit at rank i adds precision@i)",
}
HWE_HINT = "pass DocRED-HWE's dev_keys_new.json (../shared/data/docred-hwe/dev_keys_new.json)"


@dataclass(frozen=True)
class HweFact:
    """One labelled fact of a DocRED-HWE document and its keyword spans."""

    label_index: int  # position in the document's ``labels`` list
    h: int  # index into the HWE document's own vertexSet
    t: int
    r: str  # Wikidata property id, e.g. "P17"
    spans: tuple[tuple[int, int, int], ...]  # (sent_id, start, end): [start, end) tokens of sentence sent_id


def read_hwe(path: str | os.PathLike[str]) -> list[Doc]:
    """Read and validate a DocRED-HWE file: DocRED documents whose every label has keyword spans.

    The reader checks the spans of the keywords a label has (``docred.keyword_problem``); what is
    left to check here is that every label has some."""
    docs = read_docs(path, skip_flag=None).docs  # `envbench understand` has no --skip-invalid to name
    for di, doc in enumerate(docs):
        for li, label in enumerate(doc.get("labels") or []):
            if not label.get("keywords"):
                raise DataError(f"{path}: document {di} {doc['title']!r}: label {li} has no keywords; "
                                f"every DocRED-HWE label needs keyword spans {{sent_id, pos}}; {HWE_HINT}")
    return docs


def hwe_facts(doc: Doc) -> list[HweFact]:
    """The facts of a (validated) HWE document, in label order."""
    out = []
    for li, lab in enumerate(doc.get("labels") or []):
        spans = tuple((kw["sent_id"], kw["pos"][0], kw["pos"][1]) for kw in lab["keywords"])
        out.append(HweFact(li, lab["h"], lab["t"], lab["r"], spans))
    return out


def sentence_offsets(doc: Doc) -> list[int]:
    """Flat index of each sentence's first word."""
    offsets, n = [], 0
    for sent in doc["sents"]:
        offsets.append(n)
        n += len(sent)
    return offsets


def word_count(doc: Doc) -> int:
    return sum(len(s) for s in doc["sents"])


def pair_words(doc: Doc, fact: HweFact) -> frozenset[int]:
    """Flat indices of the words of every mention of the fact's head and tail entities."""
    offsets = sentence_offsets(doc)
    return frozenset(offsets[m["sent_id"]] + i for e in (fact.h, fact.t) for m in doc["vertexSet"][e]
                     for i in range(m["pos"][0], m["pos"][1]))


def evidence_words(doc: Doc, fact: HweFact, spans: str = "context") -> frozenset[int]:
    """Flat indices of the fact's evidence words: every span's words less the head's and tail's mention
    words (``"context"``), the last span's (``"last"``) or every span's (``"all"``)."""
    if spans not in SPAN_MODES:
        raise ValueError(f"spans={spans!r}; use one of {SPAN_MODES}")
    offsets = sentence_offsets(doc)
    chosen = fact.spans[-1:] if spans == "last" else fact.spans
    words = frozenset(offsets[sid] + i for sid, start, end in chosen for i in range(start, end))
    return words - pair_words(doc, fact) if spans == "context" else words


def read_titles(paths: Iterable[str | os.PathLike[str]]) -> set[str]:
    """Titles of the documents of DocRED-format files (e.g. the training file of a run)."""
    titles: set[str] = set()
    for p in paths:
        titles.update(d["title"] for d in read_docs(p, skip_invalid=True).docs)
    return titles


@dataclass
class Selection:
    """The documents to measure and why the others were left out."""

    docs: list[Doc]
    total: int  # documents in the HWE file
    excluded: int  # titles found in an --exclude-titles-from file
    without_labels: int  # documents (not excluded) with no labels: they contribute no fact
    cut_by_max_docs: int  # documents dropped by max_docs
    facts: int = 0  # facts of the selected documents

    def as_dict(self) -> dict[str, int]:
        return {"total": self.total, "excluded": self.excluded, "without_labels": self.without_labels,
                "cut_by_max_docs": self.cut_by_max_docs, "documents": len(self.docs), "facts": self.facts}


def select_documents(docs: Sequence[Doc], *, exclude_titles: Iterable[str] = (), max_docs: int = 0) -> Selection:
    """Drop excluded titles and documents without labels, then keep the first ``max_docs`` (0 = all), in file order."""
    exclude = set(exclude_titles)
    kept = [d for d in docs if d["title"] not in exclude]
    excluded = len(docs) - len(kept)
    labelled = [d for d in kept if d.get("labels")]
    chosen = labelled[:max_docs] if max_docs else labelled
    sel = Selection(chosen, len(docs), excluded, len(kept) - len(labelled), len(labelled) - len(chosen))
    sel.facts = sum(len(d["labels"]) for d in chosen)
    return sel


# --- the metric ---------------------------------------------------------------------------------

def _check_form(form: str) -> None:
    if form not in MAP_FORMS:
        raise ValueError(f"form={form!r}; use one of {MAP_FORMS}")


def ap_curve(ranking: Sequence[int], relevant: frozenset[int] | set[int], max_k: int = MAX_K,
             form: str = "precision", elbow: int | None = None) -> list[float]:
    """AP(K) for K = 1..max_k of one ranking (word indices, best first) against the evidence words.

    ``form="precision"``: a hit at rank i adds P(i); ``"official"``: it adds 1/i, or with ``elbow``
    (the 0-based elbow index m of :func:`elbow_index`) 1 / min(i, m + 1), as DocRED-HWE's saved MAP.
    A ranking shorter than K (a document of fewer than K words) contributes nothing past its end;
    the 1/K stays, as in the formula.
    """
    _check_form(form)
    out, hits, total = [], 0, 0.0
    for i in range(1, max_k + 1):
        if i <= len(ranking) and ranking[i - 1] in relevant:
            hits += 1
            if form == "precision":
                total += hits / i  # P(i) * 1(i)
            else:
                total += 1 / (i if elbow is None else min(i, elbow + 1))
        out.append(total / i)
    return out


def ideal_ap_curve(n_relevant: int, max_k: int = MAX_K, form: str = "precision") -> list[float]:
    """AP(K) of a perfect ranking (all n evidence words first): min(K, n) / K, or H(min(K, n)) / K officially."""
    _check_form(form)
    if form == "precision":
        return [min(k, n_relevant) / k for k in range(1, max_k + 1)]
    out, total = [], 0.0
    for k in range(1, max_k + 1):
        if k <= n_relevant:
            total += 1 / k
        out.append(total / k)
    return out


def random_ap_curve(n_relevant: int, n_words: int, max_k: int = MAX_K, form: str = "precision") -> list[float]:
    """Expected AP(K) of a uniformly random ranking of n_words words, n_relevant of them evidence.

    The i-th word is evidence with probability n/N. Officially it then adds 1/i:
    E = (n/N) / i. In the precision form, given that, the i - 1 before it hold (i - 1)(n - 1)/(N - 1)
    evidence words on average: E[P(i) 1(i)] = (n/N)(1 + (i-1)(n-1)/(N-1)) / i.
    """
    _check_form(form)
    n, big_n = n_relevant, n_words
    out, total = [], 0.0
    for i in range(1, max_k + 1):
        if i <= big_n and big_n:
            if form == "precision":
                total += (n / big_n) * (1 + (i - 1) * (n - 1) / max(big_n - 1, 1)) / i
            else:
                total += (n / big_n) / i
        out.append(total / i)
    return out


def _not_a_knot_spline(y: Sequence[float], h: float) -> Any:
    """The cubic spline with not-a-knot ends through (i h, y_i), i = 0..n-1 (n >= 4), as a function of x.

    With second derivatives M_i the interior conditions are M_{i-1} + 4 M_i + M_{i+1} = d_i,
    d_i = 6 (y_{i+1} - 2 y_i + y_{i-1}) / h^2; not-a-knot (a continuous third derivative at x_1 and
    x_{n-2}) is M_0 - 2 M_1 + M_2 = 0, which with the first interior row gives 6 M_1 = d_1 (and likewise
    at the other end); the rows between are tridiagonal (Thomas algorithm).
    """
    n = len(y)
    d = [0.0] + [6 * (y[i + 1] - 2 * y[i] + y[i - 1]) / (h * h) for i in range(1, n - 1)] + [0.0]
    m = [0.0] * n
    m[1], m[n - 2] = d[1] / 6, d[n - 2] / 6
    lo, hi = 2, n - 3  # unknowns M_lo..M_hi
    if hi >= lo:
        rhs = [d[i] for i in range(lo, hi + 1)]
        rhs[0] -= m[1]
        rhs[-1] -= m[n - 2]
        size = len(rhs)
        c_prime, d_prime = [0.0] * size, [0.0] * size
        c_prime[0], d_prime[0] = 1 / 4, rhs[0] / 4
        for j in range(1, size):
            denom = 4 - c_prime[j - 1]
            c_prime[j] = 1 / denom
            d_prime[j] = (rhs[j] - d_prime[j - 1]) / denom
        sol = [0.0] * size
        sol[-1] = d_prime[-1]
        for j in range(size - 2, -1, -1):
            sol[j] = d_prime[j] - c_prime[j] * sol[j + 1]
        m[lo : hi + 1] = sol
    m[0] = 2 * m[1] - m[2]
    m[n - 1] = 2 * m[n - 2] - m[n - 3]

    def f(x: float) -> float:
        i = min(max(int(x // h), 0), n - 2)
        a, b = (i + 1) * h - x, x - i * h
        return (m[i] * a**3 + m[i + 1] * b**3) / (6 * h) + (y[i] / h - m[i] * h / 6) * a + (y[i + 1] / h - m[i + 1] * h / 6) * b

    return f


def elbow_index(scores: Sequence[float], max_k: int = MAX_K) -> int:
    """The elbow m of DocRED-HWE's saved MAP, from a fact's attribution scores (any order).

    As ``MAP_metric.py`` does: the ``max_k`` highest scores (padded with 0, the attribution of a
    padding position, when there are fewer), scaled by 1 / sum(s^2) and sorted descending, are
    interpolated by a cubic spline (not-a-knot, as scipy's ``interp1d(kind="cubic")``) over
    ``max_k`` points spread evenly on [0, max_k]. Its first and second derivatives are taken by
    central differences (step 0.1) at x = 0.1, 0.2, ..., 0.1 max_k, indexed j = 0..max_k-1. m is the
    first j where the first derivative changes sign (else the j where it is nearest 0), moved to the
    first j >= m where the second derivative is negative and changes sign, if any. m is an index
    on that 0.1-spaced grid, yet the reference compares it with 0-based ranks, and so does
    :func:`ap_curve`.
    """
    top = sorted(scores, reverse=True)[:max_k]
    top += [0.0] * (max_k - len(top))
    norm = sum(v * v for v in top)
    if not norm:  # the reference divides by 0 here: NaN derivatives, and its argmin picks index 0
        return 0
    top = sorted((v / norm for v in top), reverse=True)
    f = _not_a_knot_spline(top, max_k / (max_k - 1))
    dx = 0.1
    one, two = [], []
    for j in range(max_k):
        x = dx + dx * j
        lo, mid, hi = f(x - dx), f(x), f(x + dx)
        one.append((hi - lo) / (2 * dx))
        two.append((hi - 2 * mid + lo) / (dx * dx))
    m = next((j for j in range(max_k - 1) if one[j] * one[j + 1] < 0), None)
    if m is None:
        m = min(range(max_k), key=lambda j: (abs(one[j]), j))
    return next((j for j in range(m, max_k - 1) if two[j] < 0 and two[j] * two[j + 1] < 0), m)


def mean_curve(curves: Sequence[Sequence[float]], max_k: int = MAX_K) -> list[float]:
    """The pointwise mean (MAP(K)); all zeros for no facts, which the caller reports as such."""
    if not curves:
        return [0.0] * max_k
    return [sum(c[k] for c in curves) / len(curves) for k in range(max_k)]


def map_curves(facts: Iterable[tuple[Sequence[int], frozenset[int]]], max_k: int = MAX_K,
               words: Sequence[int] | None = None, form: str = "precision",
               elbows: Sequence[int] | None = None) -> dict[str, list[float]]:
    """MAP(K) of the model's rankings and of a perfect ranking of the same facts; with ``words``
    (each fact's document length) also the expected MAP(K) of a random ranking (chance level); in the
    official form with ``elbows`` (each fact's :func:`elbow_index`) also ``elbow``, the saved variant."""
    _check_form(form)
    model, ideal, sizes, capped = [], [], [], []
    facts = list(facts)
    if elbows is not None and len(elbows) != len(facts):
        raise ValueError(f"{len(elbows)} elbows for {len(facts)} facts")
    for fi, (ranking, relevant) in enumerate(facts):
        model.append(ap_curve(ranking, relevant, max_k, form))
        ideal.append(ideal_ap_curve(len(relevant), max_k, form))
        sizes.append(len(relevant))
        if elbows is not None and form == "official":
            capped.append(ap_curve(ranking, relevant, max_k, form, elbow=elbows[fi]))
    out = {"model": [round(x, 6) for x in mean_curve(model, max_k)],
           "ideal": [round(x, 6) for x in mean_curve(ideal, max_k)]}
    if elbows is not None and form == "official":
        out["elbow"] = [round(x, 6) for x in mean_curve(capped, max_k)]
    if words is not None:
        if len(words) != len(sizes):
            raise ValueError(f"{len(words)} document lengths for {len(sizes)} facts")
        chance = [random_ap_curve(n, big_n, max_k, form) for n, big_n in zip(sizes, words)]
        out["random"] = [round(x, 6) for x in mean_curve(chance, max_k)]
    return out


# --- outputs -------------------------------------------------------------------------------------

@dataclass
class RunMap:
    """What one run scored: MAP curves per span mode, on its own facts and on the facts every run keeps."""

    run: str  # the run folder as given
    label: str  # short unique name for tables and the plot
    facts_total: int  # facts of the measured documents
    facts_kept: int  # facts whose gold relation is among the model's top-k relations
    curves: dict[str, dict[str, dict[str, list[float]]]]  # form -> span mode -> {"model": [...], "ideal": [...], ...}
    extra: dict[str, Any] = field(default_factory=dict)  # completeness, timing, above-threshold count, ...
    facts_scored: dict[str, int] = field(default_factory=dict)  # span mode -> kept facts with evidence in that mode
    # the same curves over the facts that every compared run keeps (empty for a single run): a difference between
    # two runs' own curves may come from their different fact sets, a difference here from their rankings alone
    common: dict[str, dict[str, dict[str, list[float]]]] = field(default_factory=dict)
    facts_common: dict[str, int] = field(default_factory=dict)  # span mode -> facts every run keeps

    def scored(self, spans: str) -> int:
        """Facts behind the run's own curve of ``spans``."""
        return self.facts_scored.get(spans, self.facts_kept)

    def as_dict(self) -> dict[str, Any]:
        out = {"run": self.run, "label": self.label, "facts_total": self.facts_total,
               "facts_kept": self.facts_kept, "facts_scored": self.facts_scored, "map": self.curves}
        if self.common:
            out.update(facts_common=self.facts_common, map_common=self.common)
        return {**out, **self.extra}


def write_map_json(path: str | os.PathLike[str], runs: Sequence[RunMap], settings: Mapping[str, Any]) -> None:
    """map.json: MAP(K), K = 1..100 (list index K - 1), per run, MAP form and span mode, beside the settings;
    with several runs also each run's curves over the facts all of them keep (``map_common``)."""
    write_json_atomic(path, {"settings": dict(settings), "k": list(range(1, MAX_K + 1)),
                             "forms": dict(FORM_NAMES), "runs": [r.as_dict() for r in runs]}, indent=True)


def _row(name: str, facts: str, values: Sequence[float], ks: Sequence[int], width: int) -> str:
    return f"{name:<{width}}  {facts:>6}  " + "  ".join(f"{values[k - 1]:>6.4f}" for k in ks)


def _model_rows(label: str, facts: str, c: Mapping[str, list[float]], ks: Sequence[int], width: int) -> list[str]:
    """A run's curve, and in the official form its elbow variant."""
    lines = [_row(label, facts, c["model"], ks, width)]
    if "elbow" in c:
        lines.append(_row("  elbow variant (saved)", "", c["elbow"], ks, width))
    return lines


def _reference_rows(c: Mapping[str, list[float]], ks: Sequence[int], width: int) -> list[str]:
    """The perfect and (when known) random rankings of the same facts."""
    lines = [_row("  ideal (perfect ranking)", "", c["ideal"], ks, width)]
    if "random" in c:
        lines.append(_row("  random ranking", "", c["random"], ks, width))
    return lines


def format_table(runs: Sequence[RunMap], spans: str, form: str = "official", ks: Sequence[int] = TABLE_KS) -> str:
    """MAP at a few K per run on its own facts, each run followed by the ideal (and chance) curves of those facts,
    and in the official form by its elbow variant; with several runs then each run on the facts all of them keep."""
    width = max([len(r.label) + 2 for r in runs] + [len("ideal (perfect ranking)") + 2])
    lines = [f"{'run':<{width}}  {'facts':>6}  " + "  ".join(f"{'K=' + str(k):>6}" for k in ks)]
    for r in runs:
        c = r.curves[form][spans]
        lines += _model_rows(r.label, str(r.scored(spans)), c, ks, width) + _reference_rows(c, ks, width)
    shared = [r for r in runs if r.common]
    if shared:
        n = shared[0].facts_common.get(spans, 0)
        lines.append(f"on the {n} facts every run keeps:")
        for r in shared:
            lines += _model_rows(f"  {r.label}", str(n), r.common[form][spans], ks, width)
        lines += _reference_rows(shared[0].common[form][spans], ks, width)
    return "\n".join(lines)


def plot_map(path: str | os.PathLike[str], runs: Sequence[RunMap], spans: str, title: str, form: str = "official") -> Path:
    """map.png: every run's MAP(K) (solid; its elbow variant dash-dotted), its ideal (dashed) and chance (dotted)
    curves, same colour. With several runs the curves are those over the facts every run keeps (the comparison
    that differs only in the rankings); the legend says which, and the y label which MAP form."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ks = list(range(1, MAX_K + 1))
    fig, ax = plt.subplots(figsize=(6.4, 4), dpi=100)
    for i, r in enumerate(runs):
        if r.common:
            colour, c, what = f"C{i % 10}", r.common[form][spans], f"{r.facts_common.get(spans, 0)} facts all runs keep"
        else:
            colour, c, what = f"C{i % 10}", r.curves[form][spans], f"{r.scored(spans)} facts"
        ax.plot(ks, c["model"], "-", color=colour, label=f"{r.label} ({what})")
        if "elbow" in c:
            ax.plot(ks, c["elbow"], "-.", color=colour, linewidth=0.8, label=f"{r.label}: elbow variant")
        ax.plot(ks, c["ideal"], "--", color=colour, linewidth=0.8, label=f"{r.label}: ideal")
        if "random" in c:
            ax.plot(ks, c["random"], ":", color=colour, linewidth=0.8, label=f"{r.label}: random")
    ax.set_xlabel("K (top units)")
    ax.set_ylabel(FORM_NAMES[form].split(" (")[0] + " (K)" + (", 1/i" if form == "official" else ", precision@i"))
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})  # no version stamp: same inputs, same bytes
    plt.close(fig)
    write_bytes_atomic(path, buf.getvalue())
    return Path(path)
