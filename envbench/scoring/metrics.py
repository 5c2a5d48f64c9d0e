"""DocRE scores with the semantics of the official DocRED and Re-DocRED scorers, as pure Python.

What the official scorers do (thunlp/DocRED ``code/evaluation.py``; tonytan48/Re-DocRED
``evaluation.py``, which ATLOP-style training code copies) and this module reproduces:

- a prediction is the fact ``(title, h_idx, t_idx, r)``; duplicates count once (the first
  one, and its evidence, is kept);
- predictions for titles absent from the gold file are submitted but never correct, so they
  lower precision only;
- F1 = 2PR / (P + R); a relation fact is correct when ``(title, r, h, t)`` is a gold label;
- Ign F1 ("re_f1_ignore_train_annotated"): a correct fact is *in train* when, for some mention
  name n1 of the head and n2 of the tail, ``(n1, n2, r)`` is a fact of the training documents
  (over all mention-name pairs of their labels). Ign precision =
  (correct - in_train) / (submitted - in_train); recall is not adjusted;
- evidence: precision over the evidence sentences of all predictions on known titles, recall
  over all gold evidence sentences, counting the overlap on correct facts;
- intra/inter: a pair is intra-sentence when the minimum sentence distance between any head
  mention and any tail mention is 0, inter-sentence when it is >= 1; P, R and F1 are computed
  within each class (gold labels and predictions classified alike). Predictions on unknown
  titles cannot be classified and are left out of both classes;
- frequent-10 vs long-tail: labels and predictions split by relation id.

Where the official code divides by zero (no predictions, no gold) this module returns 0.
The two official scorers differ in two smoothing constants; ``scorer="re-docred"`` applies
them (evidence recall's denominator starts at 1, Ign precision's denominator gets +1e-5),
``scorer="docred"`` (the default) uses the exact counts. Two faults of Re-DocRED's
``official_evaluate_benchmark`` are not copied: it drops a lone prediction (``len(tmp) > 1``)
and crashes on predictions for unknown titles when splitting intra/inter.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from envbench.core.errors import DataError
from envbench.core.notes import Note, NoteCode, note
from envbench.core.relations import FREQUENT_10
from envbench.formats.predictions import CheckedPredictions, check_predictions

SCORERS = ("docred", "re-docred")
FREQUENT = frozenset(FREQUENT_10)

# The headline scores, as fractions in [0, 1], in the order tables show them.
SCORE_KEYS: tuple[str, ...] = (
    "f1",
    "ign_f1",
    "precision",
    "recall",
    "evidence_f1",
    "intra_f1",
    "inter_f1",
    "freq_f1",
    "long_tail_f1",
)



def prf(correct: int, submitted: float, gold: float) -> tuple[float, float, float]:
    """Precision, recall, F1 as the official scorers compute them, with 0 where they would divide by 0."""
    p = correct / submitted if submitted > 0 else 0.0
    r = correct / gold if gold > 0 else 0.0
    f = 2.0 * p * r / (p + r) if p + r > 0 else 0.0
    return p, r, f


def train_facts(train_docs: Iterable[Mapping[str, Any]]) -> frozenset[tuple[str, str, str]]:
    """All ``(head mention name, tail mention name, r)`` of the training labels, as the official scorer builds them."""
    facts: set[tuple[str, str, str]] = set()
    for doc in train_docs:
        vs = doc["vertexSet"]
        for lab in doc.get("labels", []) or []:
            r = lab["r"]
            heads = {m["name"] for m in vs[lab["h"]]}
            tails = {m["name"] for m in vs[lab["t"]]}
            facts.update((n1, n2, r) for n1 in heads for n2 in tails)
    return frozenset(facts)


_C = TypeVar("_C", bound="Counts")


class Counts:
    """Raw counts of a set of documents, one per slot, all 0 at first; counts add up (``+=``), so any
    grouping of documents is scored from one pass. A scorer's tally names its counts in ``__slots__``."""

    __slots__: tuple[str, ...] = ()

    def __init__(self) -> None:
        for name in self.__slots__:
            setattr(self, name, 0)

    def __iadd__(self: _C, other: Counts) -> _C:
        for name in self.__slots__:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        return self

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


class Tally(Counts):
    """The counts of the official scorers' metrics (see the module docstring)."""

    __slots__ = (
        "docs", "gold", "submitted", "correct",
        "intra_gold", "intra_submitted", "intra_correct",
        "inter_gold", "inter_submitted", "inter_correct",
        "freq_gold", "freq_submitted", "freq_correct",
        "tail_gold", "tail_submitted", "tail_correct",
        "gold_evidence", "pred_evidence", "correct_evidence",
        "in_train", "in_train_original",
        "duplicates", "unknown_title_preds", "unknown_titles",
    )


def tally(
    gold_docs: Sequence[Mapping[str, Any]],
    checked: CheckedPredictions,
    *,
    facts: frozenset[tuple[str, str, str]] | None = None,
    original_names: Mapping[str, Sequence[Sequence[str]]] | None = None,
) -> dict[str, Tally]:
    """Counts per title (gold titles and the unknown titles of predictions), in one pass.

    ``original_names`` maps a title to, per entity, the mention names to test against the
    training facts for the name-independent Ign F1 (``in_train_original``).
    """
    out: dict[str, Tally] = {}
    gold_ev: dict[str, dict[tuple[int, int, str], frozenset[int]]] = {}
    sent_sets: dict[str, list[frozenset[int]]] = {}
    for doc in gold_docs:
        title = doc["title"]
        t = out[title] = Tally()
        t.docs = 1
        ents = sent_sets[title] = [frozenset(m["sent_id"] for m in e) for e in doc["vertexSet"]]
        labels = gold_ev[title] = {}
        for lab in doc.get("labels", []) or []:
            key = (lab["h"], lab["t"], lab["r"])
            ev_list = lab.get("evidence", []) or []
            # As the official scorer: every label's evidence list adds to the evidence total, but
            # gold is keyed by the fact, so a repeated label counts once (with its last evidence).
            t.gold_evidence += len(ev_list)
            repeated = key in labels
            labels[key] = frozenset(ev_list)
            if repeated:
                continue
            t.gold += 1
            if ents[key[0]].isdisjoint(ents[key[1]]):
                t.inter_gold += 1
            else:
                t.intra_gold += 1
            if key[2] in FREQUENT:
                t.freq_gold += 1
            else:
                t.tail_gold += 1
    for title, n in checked.duplicates_by_title.items():
        out.setdefault(title, Tally()).duplicates += n

    vertex_sets = {doc["title"]: doc["vertexSet"] for doc in gold_docs}
    for (title, h, tt, r), ev in zip(checked.facts, checked.evidence):
        t = out.get(title)
        if t is None:
            t = out[title] = Tally()
        if r in FREQUENT:
            t.freq_submitted += 1
            freq = True
        else:
            t.tail_submitted += 1
            freq = False
        t.submitted += 1
        labels = gold_ev.get(title)
        if labels is None:  # unknown title: submitted, never correct, not classifiable
            t.unknown_title_preds += 1
            t.unknown_titles = 1
            continue
        t.pred_evidence += len(ev)
        ents = sent_sets[title]
        intra = not ents[h].isdisjoint(ents[tt])
        if intra:
            t.intra_submitted += 1
        else:
            t.inter_submitted += 1
        gev = labels.get((h, tt, r))
        if gev is None:
            continue
        t.correct += 1
        if intra:
            t.intra_correct += 1
        else:
            t.inter_correct += 1
        if freq:
            t.freq_correct += 1
        else:
            t.tail_correct += 1
        t.correct_evidence += len(gev & ev)
        if facts:
            vs = vertex_sets[title]
            hn = [m["name"] for m in vs[h]]
            tn = [m["name"] for m in vs[tt]]
            if any((n1, n2, r) in facts for n1 in hn for n2 in tn):
                t.in_train += 1
            if original_names is not None:
                names = original_names.get(title)
                if names is not None:
                    hn, tn = names[h], names[tt]
                if any((n1, n2, r) in facts for n1 in hn for n2 in tn):
                    t.in_train_original += 1
    return out


def _ign(correct: int, submitted: int, in_train: int, recall: float, scorer: str) -> tuple[float, float]:
    den: float = submitted - in_train
    if scorer == "re-docred":
        den += 1e-5
    p = (correct - in_train) / den if den > 0 else 0.0
    return p, (2.0 * p * recall / (p + recall) if p + recall > 0 else 0.0)


def finalize(
    t: Tally, *, scorer: str = "docred", with_train: bool = False, with_original: bool = False
) -> dict[str, Any]:
    """Scores (fractions) and ``n_*`` counts from a tally, as the official scorer computes them."""
    p, rc, f1 = prf(t.correct, t.submitted, t.gold)
    ign_p, ign_f1 = _ign(t.correct, t.submitted, t.in_train, rc, scorer)
    tot_ev = t.gold_evidence + (1 if scorer == "re-docred" else 0)
    ev_p, ev_r, ev_f1 = prf(t.correct_evidence, t.pred_evidence, tot_ev)
    ip, ir, if1 = prf(t.intra_correct, t.intra_submitted, t.intra_gold)
    xp, xr, xf1 = prf(t.inter_correct, t.inter_submitted, t.inter_gold)
    fp, fr, ff1 = prf(t.freq_correct, t.freq_submitted, t.freq_gold)
    lp, lr, lf1 = prf(t.tail_correct, t.tail_submitted, t.tail_gold)
    out: dict[str, Any] = {
        "f1": f1,
        "ign_f1": ign_f1,
        "precision": p,
        "recall": rc,
        "evidence_f1": ev_f1,
        "intra_f1": if1,
        "inter_f1": xf1,
        "freq_f1": ff1,
        "long_tail_f1": lf1,
        "ign_precision": ign_p,
        "evidence_precision": ev_p,
        "evidence_recall": ev_r,
        "intra_precision": ip,
        "intra_recall": ir,
        "inter_precision": xp,
        "inter_recall": xr,
        "freq_precision": fp,
        "freq_recall": fr,
        "long_tail_precision": lp,
        "long_tail_recall": lr,
    }
    if with_original:
        op, of1 = _ign(t.correct, t.submitted, t.in_train_original, rc, scorer)
        out["name_independent_ign_f1"] = of1
        out["name_independent_ign_precision"] = op
        out["n_correct_in_train_original"] = t.in_train_original
    out.update({
        "n_docs": t.docs,
        "n_gold": t.gold,
        "n_pred": t.submitted,
        "n_correct": t.correct,
        "n_correct_in_train": t.in_train,
        "n_duplicates": t.duplicates,
        "n_unknown_title_preds": t.unknown_title_preds,
        "n_unknown_titles": t.unknown_titles,
        "n_gold_evidence": tot_ev,
        "n_pred_evidence": t.pred_evidence,
        "n_correct_evidence": t.correct_evidence,
        "n_intra_gold": t.intra_gold,
        "n_inter_gold": t.inter_gold,
        "n_freq_gold": t.freq_gold,
        "n_long_tail_gold": t.tail_gold,
        "ign_basis": "train" if with_train else "none",
        "scorer": scorer,
    })
    # Predictions on unknown titles are counted (n_unknown_title_preds); the file-level layer, which
    # knows the paths and the titles, words that warning (NoteCode.UNKNOWN_TITLES).
    notes: list[Note] = [] if with_train else [note(NoteCode.NO_TRAIN)]
    out["notes"] = notes
    return out


def score_groups(
    gold_docs: Sequence[Mapping[str, Any]],
    preds: Sequence[Any],
    group: Callable[[str], Hashable | None],
    train_docs: Sequence[Mapping[str, Any]] | None = None,
    *,
    facts: frozenset[tuple[str, str, str]] | None = None,
    original_names: Mapping[str, Sequence[Sequence[str]]] | None = None,
    scorer: str = "docred",
    source: str = "predictions",
) -> tuple[dict[str, Any], dict[Hashable, dict[str, Any]]]:
    """Scores over everything and per group of titles (``group(title)``; None: in no group), in one pass.

    Predictions on unknown titles join the group their title maps to, as they would if the
    group's documents were scored alone.
    """
    if scorer not in SCORERS:
        raise DataError(f"unknown scorer {scorer!r}; use one of {', '.join(SCORERS)}")
    if facts is None and train_docs is not None:
        facts = train_facts(train_docs)
    n_entities = {doc["title"]: len(doc["vertexSet"]) for doc in gold_docs}
    checked = check_predictions(preds, n_entities, source=source,
                                n_sentences={doc["title"]: len(doc["sents"]) for doc in gold_docs})
    per_title = tally(gold_docs, checked, facts=facts, original_names=original_names)
    total = Tally()
    groups: dict[Hashable, Tally] = {}
    for title, t in per_title.items():
        total += t
        key = group(title)
        if key is not None:
            g = groups.get(key)
            if g is None:
                g = groups[key] = Tally()
            g += t
    opts = {"scorer": scorer, "with_train": facts is not None,
            "with_original": facts is not None and original_names is not None}
    return finalize(total, **opts), {k: finalize(g, **opts) for k, g in groups.items()}


def score(
    gold_docs: Sequence[Mapping[str, Any]],
    preds: Sequence[Any],
    train_docs: Sequence[Mapping[str, Any]] | None = None,
    *,
    facts: frozenset[tuple[str, str, str]] | None = None,
    original_names: Mapping[str, Sequence[Sequence[str]]] | None = None,
    scorer: str = "docred",
    source: str = "predictions",
) -> dict[str, Any]:
    """Score predictions against gold documents.

    ``train_docs`` (or precomputed ``facts`` from :func:`train_facts`) enable Ign F1; without
    them Ign F1 equals F1 and ``notes`` says so. With ``original_names`` (per title, per entity,
    the original mention names of a renamed document) the result adds the name-independent
    Ign F1, which tests those names instead of the document's against the training facts.

    Returns the fractions of :data:`SCORE_KEYS`, more P/R pairs, ``n_*`` counts and ``notes``
    (a list of :class:`envbench.core.notes.Note`).
    """
    total, _ = score_groups(gold_docs, preds, lambda _t: None, train_docs, facts=facts,
                            original_names=original_names, scorer=scorer, source=source)
    return total
