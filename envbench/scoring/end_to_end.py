"""End-to-end DocRE scores: mentions, clusters, entities, coreference and relations, as pure Python.

What is scored, per document, and summed over documents (micro averages: every count adds up, so a
:class:`Tally` of any set of documents is the sum of theirs). A mention is the span ``(sentence,
start, end)``; a gold entity is its ``vertexSet`` cluster, typed as its first mention (as DocRED's
statistics type it); the metrics follow JEREX's paper (Eberts and Ulges, EACL 2021, Section 4):

- **mention detection**: the set of predicted spans against the set of gold spans;
- **cluster** (JEREX's coreference "clusters"): a predicted entity is correct when its mention set
  equals a gold entity's; **entity** (strict entity detection): the same, and the type agrees;
- **coreference**, over the predicted and gold mention partitions, as the CoNLL reference scorer
  (Pradhan et al., ACL 2014) computes them for predicted mentions, a mention missing on one side
  counting as a singleton of its own there:

  - MUC (Vilain et al., 1995): recall = Σ_K (|K| - |p(K)|) / Σ_K (|K| - 1), with p(K) the parts
    of key cluster K cut by the response clusters; precision the same with key and response swapped
    (singletons add 0 to both sides, so a document of singletons alone has MUC 0, as 0/0 is 0);
  - B³ (Bagga and Baldwin, 1998): recall = Σ_K Σ_R |K ∩ R|² / |K|, over Σ_K |K|; precision swapped;
  - CEAF-e (Luo, 2005): φ4(K, R) = 2 |K ∩ R| / (|K| + |R|), Φ the largest total φ4 of a one-to-one
    alignment of key and response clusters (Kuhn-Munkres); recall = Φ / #key, precision = Φ / #response;
  - their mean F1 (the CoNLL F1, as the coreference literature reports it);

  all three read each side as a partition of its mentions (on overlapping clusters MUC and B³ leave
  [0, 1]): predicted entities that share a mention but not all are refused when the file is read
  (:mod:`envbench.formats.end_to_end`), and a gold mention in two entities counts in the first one
  only (:func:`gold_partition`; the cluster, entity and relation scores use the gold entities as they are);

- **relation, strict**: ``(head, tail, r)`` with head and tail compared as (mention set, type): both
  arguments must be exact gold entities, with their types;
- **relation, relaxed**: an argument matches a gold entity when they share at least one mention span
  and the type agrees; a predicted relation is correct when it can be paired with a gold relation of the
  same r whose head and tail it matches so. Each gold relation is paired at most once and each
  prediction at most once: the correct count is the size of the largest such pairing (a maximum
  bipartite matching), so a merged or split entity cannot be counted twice.

Duplicates count once: predicted relations are a set of strict keys (two predicted entities with the
same mentions and type are one entity), mentions a set of spans. P, R and F1 are 0 where they would
divide by 0, as :func:`envbench.scoring.metrics.prf`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from envbench.core.errors import DataError
from envbench.formats.end_to_end import DocPrediction, Span, shared_mention
from envbench.scoring.metrics import Counts, prf

Cluster = frozenset[Span]
EntityKey = tuple[Cluster, str]  # (mention spans, type)
RelationKey = tuple[EntityKey, EntityKey, str]
FRACTION_SLACK = 1e-9  # rounding of float sums (B³), never a count

# The headline metrics: each has _precision, _recall and _f1 in a scores dict; the table shows F1.
METRICS: tuple[str, ...] = ("mention", "cluster", "entity", "muc", "b3", "ceafe", "coref", "relation_strict",
                            "relation_relaxed")
LABELS: dict[str, str] = {
    "mention": "Mention", "cluster": "Cluster", "entity": "Entity (typed)", "muc": "MUC", "b3": "B³",
    "ceafe": "CEAF-e", "coref": "Coref mean", "relation_strict": "Relation strict",
    "relation_relaxed": "Relation relaxed",
}


# --------------------------------------------------------------------------- gold and predicted views
def gold_view(doc: Mapping[str, Any]) -> tuple[list[EntityKey], set[tuple[int, int, str]]]:
    """A gold document's entities as (spans, type) and its labels as (h, t, r)."""
    ents = [(frozenset((m["sent_id"], m["pos"][0], m["pos"][1]) for m in e), str(e[0].get("type", "MISC")))
            for e in doc["vertexSet"]]
    labels = {(lab["h"], lab["t"], lab["r"]) for lab in doc.get("labels", []) or []}
    return ents, labels


def pred_view(pred: DocPrediction | None) -> tuple[list[EntityKey], set[RelationKey]]:
    """A prediction's entities as (spans, type) and its relations as strict keys (a set)."""
    if pred is None:
        return [], set()
    ents = [(frozenset(e.mentions), e.type) for e in pred.entities]
    return ents, {(ents[r.h], ents[r.t], r.r) for r in pred.relations}


# --------------------------------------------------------------------------- coreference
def gold_partition(clusters: Sequence[Cluster]) -> set[Cluster]:
    """The gold clusters as a partition of their mentions, for MUC, B³ and CEAF-e: a mention that two gold
    entities with different mentions share (DocRED-HWE's dev has one such document of 699) counts in the
    first of them only; entities with the same mentions are one cluster. See :func:`gold_overlaps`."""
    seen: set[Span] = set()
    out: set[Cluster] = set()
    for cluster in dict.fromkeys(clusters):
        kept = cluster - seen
        seen |= cluster
        if kept:
            out.add(frozenset(kept))
    return out


def gold_overlaps(gold_docs: Iterable[Mapping[str, Any]]) -> list[str]:
    """``'T': mention [s, a, b] in vertexSet[i] and vertexSet[j]`` for each gold document with a mention in two
    entities whose mentions differ (its first such mention), which :func:`gold_partition` counts once."""
    out = []
    for doc in gold_docs:
        shared = shared_mention([sorted(e[0]) for e in gold_view(doc)[0]])
        if shared is not None:
            span, i, j = shared
            out.append(f"{doc['title']!r}: mention {list(span)} in vertexSet[{i}] and vertexSet[{j}]")
    return out


def muc_counts(key: Sequence[Cluster], response: Sequence[Cluster]) -> tuple[int, int]:
    """MUC's (numerator, denominator) of recall of ``response`` against ``key`` (swap for precision)."""
    num = den = 0
    for k in key:
        if not k:
            continue
        touched = [r for r in response if not k.isdisjoint(r)]
        covered = set().union(*touched) if touched else set()
        parts = len(touched) + len(k - covered)  # every uncovered mention is a part of its own
        num += len(k) - parts
        den += len(k) - 1
    return num, den


def b3_counts(key: Sequence[Cluster], response: Sequence[Cluster]) -> tuple[float, int]:
    """B³'s (numerator, denominator) of recall: Σ_K Σ_R |K ∩ R|² / |K| and Σ_K |K| (swap for precision)."""
    num = 0.0
    den = 0
    for k in key:
        if not k:
            continue
        den += len(k)
        num += sum(len(k & r) ** 2 for r in response) / len(k)
    return num, den


def max_assignment(weights: Sequence[Sequence[float]]) -> float:
    """The largest total weight of a one-to-one assignment of rows to columns (Kuhn-Munkres, O(n²m)).

    The Hungarian method with potentials, on costs ``-w`` over an n x m matrix with n <= m (the matrix
    is transposed otherwise); rows or columns left unassigned add nothing.
    """
    if not weights or not weights[0]:
        return 0.0
    w = [list(row) for row in weights]
    if len(w) > len(w[0]):
        w = [list(col) for col in zip(*w)]
    n, m = len(w), len(w[0])
    inf = float("inf")
    u = [0.0] * (n + 1)
    v = [0.0] * (m + 1)
    owner = [0] * (m + 1)  # owner[j]: the row (1-based) assigned to column j; 0 = none
    way = [0] * (m + 1)
    for i in range(1, n + 1):
        owner[0] = i
        j0 = 0
        minv = [inf] * (m + 1)
        used = [False] * (m + 1)
        while True:
            used[j0] = True
            i0, delta, j1 = owner[j0], inf, 0
            for j in range(1, m + 1):
                if not used[j]:
                    cur = -w[i0 - 1][j - 1] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j], way[j] = cur, j0
                    if minv[j] < delta:
                        delta, j1 = minv[j], j
            for j in range(m + 1):
                if used[j]:
                    u[owner[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if owner[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            owner[j0] = owner[j1]
            j0 = j1
    return sum(w[owner[j] - 1][j - 1] for j in range(1, m + 1) if owner[j])


def ceafe_phi(key: Sequence[Cluster], response: Sequence[Cluster]) -> float:
    """Φ of CEAF-e: the best one-to-one alignment's total φ4 = 2 |K ∩ R| / (|K| + |R|)."""
    key = [k for k in key if k]
    response = [r for r in response if r]
    if not key or not response:
        return 0.0
    return max_assignment([[2 * len(k & r) / (len(k) + len(r)) for r in response] for k in key])


# --------------------------------------------------------------------------- relaxed relations
def max_matching(edges: Sequence[Iterable[int]], n_right: int) -> int:
    """The size of a maximum matching of a bipartite graph (left i adjacent to ``edges[i]``), Kuhn's method."""
    match_right = [-1] * n_right

    def augment(i: int, seen: list[bool]) -> bool:
        for j in edges[i]:
            if not seen[j]:
                seen[j] = True
                if match_right[j] < 0 or augment(match_right[j], seen):
                    match_right[j] = i
                    return True
        return False

    return sum(augment(i, [False] * n_right) for i in range(len(edges)))


def _loose(p: EntityKey, g: EntityKey) -> bool:
    return p[1] == g[1] and not p[0].isdisjoint(g[0])


def relaxed_correct(pred: Iterable[RelationKey], gold_ents: Sequence[EntityKey],
                    gold_labels: Iterable[tuple[int, int, str]]) -> int:
    """How many predicted relations pair one-to-one with gold relations whose arguments they match loosely."""
    labels = sorted(gold_labels)
    edges = [[j for j, (h, t, r) in enumerate(labels) if r == pr and _loose(ph, gold_ents[h]) and _loose(pt, gold_ents[t])]
             for ph, pt, pr in sorted(pred, key=_relation_order)]
    return max_matching(edges, len(labels))


def _relation_order(key: RelationKey) -> tuple[Any, ...]:
    (hs, ht), (ts, tt), r = key
    return (sorted(hs), ht, sorted(ts), tt, r)


# --------------------------------------------------------------------------- tallies
class Tally(Counts):
    """The counts of the end-to-end metrics (see the module docstring)."""

    __slots__ = (
        "docs", "pred_docs",
        "mention_gold", "mention_pred", "mention_correct",
        "cluster_gold", "cluster_pred", "cluster_correct",
        "entity_gold", "entity_pred", "entity_correct",
        "muc_r_num", "muc_r_den", "muc_p_num", "muc_p_den",
        "b3_r_num", "b3_r_den", "b3_p_num", "b3_p_den",
        "ceafe_phi", "ceafe_key", "ceafe_response",
        "relation_gold", "relation_pred", "relation_strict_correct", "relation_relaxed_correct",
    )


def tally_document(gold: Mapping[str, Any], pred: DocPrediction | None) -> tuple[Tally, set[tuple[int, int, str]]]:
    """The counts of one document, and the gold labels (h, t, r) that a strict prediction got right."""
    t = Tally()
    t.docs = 1
    t.pred_docs = int(pred is not None)
    gold_ents, labels = gold_view(gold)
    pred_ents, pred_rels = pred_view(pred)
    shared = shared_mention([sorted(e[0]) for e in pred_ents])
    if shared is not None:  # check_end_to_end refuses such rows; this guards a caller's own DocPrediction
        span, i, j = shared
        raise DataError(f"document {gold['title']!r}: mention {list(span)} is in predicted entities {i} and {j}, "
                        "whose mentions differ; MUC and B³ score a partition of the mentions, so a mention belongs "
                        "to one entity: merge the two, or keep the mention in one")

    gold_mentions = set().union(*(e[0] for e in gold_ents)) if gold_ents else set()
    pred_mentions = set().union(*(e[0] for e in pred_ents)) if pred_ents else set()
    t.mention_gold, t.mention_pred = len(gold_mentions), len(pred_mentions)
    t.mention_correct = len(gold_mentions & pred_mentions)

    gold_clusters = {e[0] for e in gold_ents}
    pred_clusters = {e[0] for e in pred_ents}
    t.cluster_gold, t.cluster_pred = len(gold_clusters), len(pred_clusters)
    t.cluster_correct = len(gold_clusters & pred_clusters)
    gold_typed, pred_typed = set(gold_ents), set(pred_ents)
    t.entity_gold, t.entity_pred = len(gold_typed), len(pred_typed)
    t.entity_correct = len(gold_typed & pred_typed)

    key = sorted(gold_partition([e[0] for e in gold_ents]), key=sorted)
    response = sorted(pred_clusters, key=sorted)
    t.muc_r_num, t.muc_r_den = muc_counts(key, response)
    t.muc_p_num, t.muc_p_den = muc_counts(response, key)
    t.b3_r_num, t.b3_r_den = b3_counts(key, response)
    t.b3_p_num, t.b3_p_den = b3_counts(response, key)
    t.ceafe_phi, t.ceafe_key, t.ceafe_response = ceafe_phi(key, response), len(key), len(response)

    gold_rels: dict[RelationKey, list[tuple[int, int, str]]] = {}
    for h, tt, r in labels:
        gold_rels.setdefault((gold_ents[h], gold_ents[tt], r), []).append((h, tt, r))
    t.relation_gold, t.relation_pred = len(gold_rels), len(pred_rels)
    hits = [k for k in pred_rels if k in gold_rels]
    t.relation_strict_correct = len(hits)
    t.relation_relaxed_correct = relaxed_correct(pred_rels, gold_ents, labels) if pred_rels else 0
    found = {lab for k in hits for lab in gold_rels[k]}
    return t, found


def finalize(t: Tally) -> dict[str, Any]:
    """P, R and F1 (fractions) of every metric, and the ``n_*`` counts."""
    out: dict[str, Any] = {}

    def put(name: str, p: float, r: float, f: float) -> None:
        out[f"{name}_precision"], out[f"{name}_recall"], out[f"{name}_f1"] = p, r, f

    put("mention", *prf(t.mention_correct, t.mention_pred, t.mention_gold))
    put("cluster", *prf(t.cluster_correct, t.cluster_pred, t.cluster_gold))
    put("entity", *prf(t.entity_correct, t.entity_pred, t.entity_gold))
    for name, rn, rd, pn, pd in (("muc", t.muc_r_num, t.muc_r_den, t.muc_p_num, t.muc_p_den),
                                 ("b3", t.b3_r_num, t.b3_r_den, t.b3_p_num, t.b3_p_den),
                                 ("ceafe", t.ceafe_phi, t.ceafe_key, t.ceafe_phi, t.ceafe_response)):
        p = pn / pd if pd else 0.0
        r = rn / rd if rd else 0.0
        put(name, p, r, 2 * p * r / (p + r) if p + r > 0 else 0.0)
    put("coref", *(sum(out[f"{m}_{k}"] for m in ("muc", "b3", "ceafe")) / 3 for k in ("precision", "recall", "f1")))
    put("relation_strict", *prf(t.relation_strict_correct, t.relation_pred, t.relation_gold))
    put("relation_relaxed", *prf(t.relation_relaxed_correct, t.relation_pred, t.relation_gold))
    for key, value in out.items():
        # a fraction is in [0, 1] when every response is a partition of its mentions (tally_document checks);
        # B³'s float sums may pass 1 by a rounding step on a perfect score, which is 1
        if not -FRACTION_SLACK <= value <= 1 + FRACTION_SLACK:
            raise AssertionError(f"{key} = {value} is outside [0, 1]; the counts are {t.as_dict()}")
        out[key] = min(max(value, 0.0), 1.0)
    out.update({f"n_{name}": getattr(t, name) for name in Tally.__slots__})
    return out


def score_documents(gold_docs: Sequence[Mapping[str, Any]], preds: Mapping[str, DocPrediction]) -> dict[str, Any]:
    """Scores of predictions (by title) against gold documents; a document without a prediction predicts nothing."""
    total = Tally()
    for doc in gold_docs:
        total += tally_document(doc, preds.get(doc["title"]))[0]
    return finalize(total)


__all__ = ["LABELS", "METRICS", "Tally", "b3_counts", "ceafe_phi", "finalize", "gold_overlaps", "gold_partition",
           "gold_view", "max_assignment", "max_matching", "muc_counts", "pred_view", "relaxed_correct",
           "score_documents", "tally_document"]
