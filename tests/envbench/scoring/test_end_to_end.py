"""End-to-end metrics on hand-worked documents: every expected value is worked here from the definitions.

The gold document (two sentences of six tokens) has three entities and two relations:

- E0 PER, mentions a = (0, 0, 1), b = (1, 0, 1), c = (1, 3, 4);
- E1 LOC, mention d = (0, 3, 4);
- E2 ORG, mentions e = (0, 5, 6), f = (1, 5, 6);
- labels (E0, E1, P19) and (E2, E1, P17).
"""

from __future__ import annotations

import itertools

import pytest

from envbench.formats.end_to_end import DocPrediction, Entity, Relation
from envbench.scoring.end_to_end import (
    b3_counts,
    ceafe_phi,
    max_assignment,
    max_matching,
    muc_counts,
    score_documents,
)

A, B, C, D, E, F = (0, 0, 1), (1, 0, 1), (1, 3, 4), (0, 3, 4), (0, 5, 6), (1, 5, 6)


def m(span: tuple[int, int, int], typ: str) -> dict:
    return {"name": f"t{span}", "sent_id": span[0], "pos": [span[1], span[2]], "type": typ}


def gold_doc(title: str = "G") -> dict:
    return {"title": title, "sents": [list("abcdef"), list("ghijkl")],
            "vertexSet": [[m(A, "PER"), m(B, "PER"), m(C, "PER")], [m(D, "LOC")], [m(E, "ORG"), m(F, "ORG")]],
            "labels": [{"h": 0, "t": 1, "r": "P19", "evidence": []}, {"h": 2, "t": 1, "r": "P17", "evidence": []}]}


def pred(entities: list[tuple[tuple, str]], relations: list[tuple[int, int, str]], title: str = "G") -> DocPrediction:
    return DocPrediction(title, tuple(Entity(tuple(s), t) for s, t in entities),
                         tuple(Relation(h, t, r) for h, t, r in relations))


def f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def check(scores: dict, name: str, p: float, r: float) -> None:
    assert scores[f"{name}_precision"] == pytest.approx(p), name
    assert scores[f"{name}_recall"] == pytest.approx(r), name
    assert scores[f"{name}_f1"] == pytest.approx(f1(p, r)), name


GOLD_ENTITIES = [((A, B, C), "PER"), ((D,), "LOC"), ((E, F), "ORG")]


def test_perfect_prediction_scores_one_everywhere() -> None:
    s = score_documents([gold_doc()], {"G": pred(GOLD_ENTITIES, [(0, 1, "P19"), (2, 1, "P17")])})
    for name in ("mention", "cluster", "entity", "muc", "b3", "ceafe", "coref", "relation_strict", "relation_relaxed"):
        check(s, name, 1.0, 1.0)
    # MUC's counts: E0 3 - 1 part = 2 of 2, E1 a singleton 0 of 0, E2 1 of 1
    assert (s["n_muc_r_num"], s["n_muc_r_den"]) == (3, 3)


def test_empty_prediction_scores_zero_and_counts_the_gold() -> None:
    s = score_documents([gold_doc()], {})
    for name in ("mention", "cluster", "entity", "muc", "b3", "ceafe", "coref", "relation_strict", "relation_relaxed"):
        check(s, name, 0.0, 0.0)
    assert (s["n_mention_gold"], s["n_entity_gold"], s["n_relation_gold"], s["n_pred_docs"]) == (6, 3, 2, 0)
    # an empty row is a prediction of nothing: the same scores, but the document counts as predicted
    s2 = score_documents([gold_doc()], {"G": pred([], [])})
    assert s2["relation_strict_f1"] == 0.0 and s2["n_pred_docs"] == 1


def test_split_cluster() -> None:
    # E0 predicted as two entities {a, b} and {c}; the relation P19 is given to {a, b}
    ents = [((A, B), "PER"), ((C,), "PER"), ((D,), "LOC"), ((E, F), "ORG")]
    s = score_documents([gold_doc()], {"G": pred(ents, [(0, 2, "P19"), (3, 2, "P17")])})
    check(s, "mention", 1.0, 1.0)  # all six spans found
    check(s, "cluster", 2 / 4, 2 / 3)  # E1 and E2 exact, of 4 predicted and 3 gold
    check(s, "entity", 2 / 4, 2 / 3)
    # MUC recall: E0 is cut into 2 parts -> 3 - 2 = 1 of 2; E2 1 of 1 -> 2/3.
    # MUC precision: {a, b} lies in one key cluster -> 1 of 1; {c} and {d} are singletons; E2 1 of 1 -> 2/2.
    check(s, "muc", 1.0, 2 / 3)
    # B3 recall: E0 (2² + 1²)/3 = 5/3, E1 1, E2 2²/2 = 2 -> (14/3)/6 = 7/9; precision: 2 + 1 + 1 + 2 = 6 of 6
    check(s, "b3", 1.0, 7 / 9)
    # CEAF-e: phi4(E0, {a,b}) = 2*2/5 = 0.8 beats phi4(E0, {c}) = 2/4; E1, E2 1 each -> 2.8 over 3 key, 4 response
    check(s, "ceafe", 2.8 / 4, 2.8 / 3)
    assert s["coref_f1"] == pytest.approx((f1(1, 2 / 3) + f1(1, 7 / 9) + f1(0.7, 2.8 / 3)) / 3)
    assert s["coref_f1"] == pytest.approx((0.8 + 0.875 + 0.8) / 3)
    # P19's head {a, b} is not E0: wrong under strict; under relaxed it shares a with E0 (PER): right
    check(s, "relation_strict", 1 / 2, 1 / 2)
    check(s, "relation_relaxed", 1.0, 1.0)


def test_merged_cluster() -> None:
    # E0 and E2 predicted as one PER entity M = {a, b, c, e, f}
    ents = [((A, B, C, E, F), "PER"), ((D,), "LOC")]
    s = score_documents([gold_doc()], {"G": pred(ents, [(0, 1, "P19"), (0, 1, "P17")])})
    check(s, "mention", 1.0, 1.0)
    check(s, "cluster", 1 / 2, 1 / 3)  # only {d}
    check(s, "entity", 1 / 2, 1 / 3)
    # MUC recall: E0 in one part -> 2 of 2, E2 -> 1 of 1: 3/3; precision: M touches 2 key clusters -> 5 - 2 = 3 of 4
    check(s, "muc", 3 / 4, 1.0)
    # B3 recall: E0 3²/3 = 3, E1 1, E2 2²/2 = 2 -> 6/6; precision: M (3² + 2²)/5 = 13/5, {d} 1 -> (18/5)/6 = 3/5
    check(s, "b3", 3 / 5, 1.0)
    # CEAF-e: M aligns with E0 (2*3/8 = 0.75) rather than E2 (2*2/7); {d} with E1 (1) -> 1.75 over 3 key, 2 response
    check(s, "ceafe", 1.75 / 2, 1.75 / 3)
    check(s, "relation_strict", 0.0, 0.0)
    # relaxed: (M, d, P19) matches (E0, E1, P19) through a (PER = PER); (M, d, P17) would need E2, typed ORG: no
    check(s, "relation_relaxed", 1 / 2, 1 / 2)


def test_relaxed_pairs_each_gold_relation_once() -> None:
    # E0 split into {a} and {b}, each given P19 to E1: both match (E0, E1, P19) loosely, only one may count
    ents = [((A,), "PER"), ((B,), "PER"), ((D,), "LOC")]
    s = score_documents([gold_doc()], {"G": pred(ents, [(0, 2, "P19"), (1, 2, "P19")])})
    check(s, "relation_relaxed", 1 / 2, 1 / 2)
    check(s, "relation_strict", 0.0, 0.0)
    check(s, "mention", 3 / 3, 3 / 6)


def test_wrong_type_keeps_the_cluster_and_loses_the_entity() -> None:
    ents = [((A, B, C), "PER"), ((D,), "ORG"), ((E, F), "ORG")]
    s = score_documents([gold_doc()], {"G": pred(ents, [(0, 1, "P19"), (2, 1, "P17")])})
    check(s, "cluster", 1.0, 1.0)
    check(s, "entity", 2 / 3, 2 / 3)
    check(s, "relation_strict", 0.0, 0.0)  # both relations have d as tail, typed ORG instead of LOC
    check(s, "relation_relaxed", 0.0, 0.0)  # relaxed keeps the type


def test_duplicate_predictions_count_once_and_documents_add_up() -> None:
    ents = [((A, B, C), "PER"), ((D,), "LOC"), ((E, F), "ORG"), ((C, B, A), "PER")]  # entity 3 repeats entity 0
    rels = [(0, 1, "P19"), (3, 1, "P19"), (2, 1, "P17")]
    s = score_documents([gold_doc("G1"), gold_doc("G2")], {"G1": pred(ents, rels, "G1")})
    assert (s["n_relation_pred"], s["n_entity_pred"], s["n_docs"]) == (2, 3, 2)
    check(s, "relation_strict", 1.0, 2 / 4)  # G2 predicted nothing: its two relations are missed
    check(s, "mention", 1.0, 6 / 12)


def test_muc_b3_ceafe_counts_with_missing_mentions() -> None:
    # key {x, y, z}; response {x, w}: y and z are missing from the response, w is not in the key
    x, y, z, w = (0, 0, 1), (0, 1, 2), (0, 2, 3), (0, 3, 4)
    key, resp = [frozenset({x, y, z})], [frozenset({x, w})]
    # recall: parts of the key = {x} (touched by the response) + y + z -> 3 - 3 = 0 of 2
    assert muc_counts(key, resp) == (0, 2)
    # precision: parts of the response = {x} in the key + w on its own -> 2 - 2 = 0 of 1
    assert muc_counts(resp, key) == (0, 1)
    assert b3_counts(key, resp) == (pytest.approx(1 / 3), 3)  # 1²/3 over 3
    assert b3_counts(resp, key) == (pytest.approx(1 / 2), 2)  # 1²/2 over 2
    assert ceafe_phi(key, resp) == pytest.approx(2 * 1 / 5)


def brute_assignment(w: list[list[float]]) -> float:
    n, k = len(w), len(w[0])
    if n <= k:
        return max(sum(w[i][p[i]] for i in range(n)) for p in itertools.permutations(range(k), n))
    return brute_assignment([list(col) for col in zip(*w)])


@pytest.mark.parametrize("shape", [(1, 1), (2, 3), (3, 2), (3, 3), (4, 4), (2, 5)])
def test_max_assignment_equals_brute_force(shape: tuple[int, int]) -> None:
    n, k = shape
    for seed in range(5):
        # deterministic pseudo-random weights with ties and zeros (no random module)
        w = [[((i * 7 + j * 13 + seed * 5) % 6) / 5 for j in range(k)] for i in range(n)]
        assert max_assignment(w) == pytest.approx(brute_assignment(w))


def test_max_matching_finds_the_augmenting_path() -> None:
    # greedy would pair 0-0 and leave 1 unmatched; the maximum pairs 0-1 and 1-0
    assert max_matching([[0, 1], [0]], 2) == 2
    assert max_matching([[0], [0]], 1) == 1
    assert max_matching([], 0) == 0
