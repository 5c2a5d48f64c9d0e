"""DocRED-HWE reading and the MAP(K) metric, against hand-computed values."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from envbench.core.errors import DataError
from envbench.scoring.hwe import (
    MAX_K,
    HweFact,
    RunMap,
    ap_curve,
    elbow_index,
    evidence_words,
    format_table,
    hwe_facts,
    ideal_ap_curve,
    map_curves,
    pair_words,
    plot_map,
    random_ap_curve,
    read_hwe,
    read_titles,
    select_documents,
    write_map_json,
)
from tests.conftest import reference_elbow, shared_path


def _doc(title: str = "T", labels: list | None = None) -> dict:
    sents = [["Anna", "was", "born", "in", "Umea", "."], ["Umea", "lies", "in", "Sweden", "."]]
    ents = [[{"name": "Anna", "sent_id": 0, "pos": [0, 1], "type": "PER"}],
            [{"name": "Umea", "sent_id": 0, "pos": [4, 5], "type": "LOC"},
             {"name": "Umea", "sent_id": 1, "pos": [0, 1], "type": "LOC"}],
            [{"name": "Sweden", "sent_id": 1, "pos": [3, 4], "type": "LOC"}]]
    if labels is None:
        labels = [{"h": 0, "t": 1, "r": "P19", "evidence": [0],
                   "keywords": [{"name": "born in", "sent_id": 0, "pos": [2, 4]}]},
                  {"h": 1, "t": 2, "r": "P17", "evidence": [1],
                   "keywords": [{"name": "lies in", "sent_id": 1, "pos": [1, 3]},
                                {"name": "in", "sent_id": 1, "pos": [2, 3]},
                                {"name": "born", "sent_id": 0, "pos": [2, 3]}]}]
    return {"title": title, "sents": sents, "vertexSet": ents, "labels": labels}


# --- AP(K) on hand-made rankings ---

def test_perfect_ranking_is_the_ideal_curve() -> None:
    relevant = frozenset({3, 7})
    ap = ap_curve([3, 7, 1, 2, 4], relevant, max_k=5)
    # i=1 hit P=1, i=2 hit P=1, then misses: AP(K) = 2/K from K=2 on
    assert ap == pytest.approx([1.0, 1.0, 2 / 3, 2 / 4, 2 / 5])
    assert ap == pytest.approx(ideal_ap_curve(2, max_k=5))
    assert ideal_ap_curve(3, max_k=4) == pytest.approx([1.0, 1.0, 1.0, 3 / 4])


def test_reversed_ranking() -> None:
    # the 2 evidence words of a 5-word document ranked last
    ap = ap_curve([1, 2, 4, 3, 7], frozenset({3, 7}), max_k=6)
    # i=4: hits 1, P=1/4; i=5: hits 2, P=2/5
    assert ap == pytest.approx([0.0, 0.0, 0.0, 0.25 / 4, (0.25 + 0.4) / 5, (0.25 + 0.4) / 6])


def test_a_shuffled_ranking_by_hand() -> None:
    ap = ap_curve([2, 7, 0, 3, 5, 1, 4, 6], frozenset({3, 7, 6}), max_k=8)
    # hits at i = 2 (P 1/2), 4 (P 2/4), 8 (P 3/8)
    assert ap[0] == 0.0
    assert ap[1] == pytest.approx(0.5 / 2)
    assert ap[3] == pytest.approx(1.0 / 4)
    assert ap[7] == pytest.approx(1.375 / 8)


def test_random_rankings_average_to_the_expected_value() -> None:
    # every ordering of 5 words, 2 of them evidence. E[P(i) 1(i)] = (n/N)(1 + (i-1)(n-1)/(N-1)) / i:
    # i=1: 0.4, i=2: 0.4 * 1.25 / 2 = 0.25, i=3: 0.4 * 1.5 / 3 = 0.2, so E[AP(3)] = 0.85 / 3
    perms = list(itertools.permutations(range(5)))
    mean = map_curves([(p, frozenset({0, 1})) for p in perms], max_k=5)["model"]
    assert mean[0] == pytest.approx(0.4, abs=1e-6)
    assert mean[1] == pytest.approx(0.65 / 2, abs=1e-6)
    assert mean[2] == pytest.approx(0.85 / 3, abs=1e-6)
    assert mean[4] < ideal_ap_curve(2, 5)[4]
    assert random_ap_curve(2, 5, max_k=5) == pytest.approx(mean, abs=1e-6)  # the chance curve, in closed form
    with_chance = map_curves([(p, frozenset({0, 1})) for p in perms[:3]], max_k=5, words=[5, 5, 5])
    assert with_chance["random"] == pytest.approx(mean, abs=1e-6)
    assert random_ap_curve(1, 1, max_k=2) == pytest.approx([1.0, 0.5])


def test_short_document_and_the_mean_over_facts() -> None:
    # a 2-word document: nothing past its end, the 1/K stays
    assert ap_curve([0, 1], frozenset({0}), max_k=5) == pytest.approx([1.0, 0.5, 1 / 3, 0.25, 0.2])
    curves = map_curves([([0, 1, 2], frozenset({0})), ([0, 1, 2], frozenset({2}))], max_k=3)
    # AP of the second: i=3 hit, P=1/3 -> AP(3) = 1/9
    assert curves["model"] == pytest.approx([0.5, 0.25, (1 / 3 + 1 / 9) / 2], abs=1e-6)
    assert curves["ideal"] == pytest.approx([1.0, 0.5, 1 / 3], abs=1e-6)
    assert map_curves([], max_k=2) == {"model": [0.0, 0.0], "ideal": [0.0, 0.0]}
    assert len(map_curves([([0], frozenset({0}))])["model"]) == MAX_K


# --- the official form (DocRED-HWE's MAP_metric.py), worked by hand from its formula ---
# a hit at rank i adds 1/i; the saved variant adds 1/min(i, m + 1), m the fact's 0-based elbow index

RANKS_1_2_5 = [10, 11, 0, 1, 12, 2, 3, 4, 5, 6]  # evidence words 10, 11, 12 at ranks 1, 2 and 5


def test_the_official_form_by_hand() -> None:
    evidence = frozenset({10, 11, 12})
    official = ap_curve(RANKS_1_2_5, evidence, max_k=10, form="official")
    assert official[0] == pytest.approx(1.0)  # K=1: 1/1
    assert official[1] == pytest.approx((1 + 1 / 2) / 2)  # 0.75
    assert official[4] == pytest.approx((1 + 1 / 2 + 1 / 5) / 5)  # 0.34
    assert official[9] == pytest.approx(0.17)  # (1 + 1/2 + 1/5) / 10, the example
    assert ap_curve(RANKS_1_2_5, evidence, max_k=10)[9] == pytest.approx(0.26)  # precision: (1 + 1 + 3/5) / 10
    assert ideal_ap_curve(3, max_k=10, form="official")[9] == pytest.approx((1 + 1 / 2 + 1 / 3) / 10)  # 0.1833
    assert ideal_ap_curve(3, max_k=10)[9] == pytest.approx(0.3)
    assert ideal_ap_curve(2, max_k=3, form="official") == pytest.approx([1.0, 0.75, 0.5])  # 1.5/2, then 1.5/3


def test_the_elbow_variant_by_hand() -> None:
    evidence = frozenset({10, 11, 12})
    # m = 1: ranks 1 and 2 keep 1 and 1/2; rank 5 is past the elbow and adds 1/(m + 1) = 1/2
    assert ap_curve(RANKS_1_2_5, evidence, max_k=10, form="official", elbow=1)[9] == pytest.approx((1 + 0.5 + 0.5) / 10)
    # m = 0: every hit adds 1/1
    assert ap_curve(RANKS_1_2_5, evidence, max_k=10, form="official", elbow=0)[9] == pytest.approx(3 / 10)
    # an elbow at or past the last hit changes nothing
    assert ap_curve(RANKS_1_2_5, evidence, max_k=10, form="official", elbow=4) == pytest.approx(
        ap_curve(RANKS_1_2_5, evidence, max_k=10, form="official"))
    curves = map_curves([(RANKS_1_2_5, evidence), ([0, 10], frozenset({10}))], max_k=10, form="official",
                        elbows=[1, 0], words=[13, 2])
    # second fact: a hit at rank 2 adds 1/2, or 1/1 past the elbow m = 0
    assert curves["model"][9] == pytest.approx((0.17 + 0.05) / 2)
    assert curves["elbow"][9] == pytest.approx((0.2 + 0.1) / 2)
    # chance, officially: (n/N) sum_{i <= min(K, N)} 1/i / K; the 2-word document, n = 1: (1/2)(1 + 1/2) / 10
    assert curves["random"][9] == pytest.approx(((3 / 13) * sum(1 / i for i in range(1, 11)) / 10 + 0.075) / 2, abs=1e-6)
    with pytest.raises(ValueError):
        ap_curve(RANKS_1_2_5, evidence, form="recall")


def test_official_chance_level_is_the_mean_over_all_orderings() -> None:
    # 4 words, 2 of them evidence: E[AP(2)] = (1/2)(P(hit at 1) / 1 + P(hit at 2) / 2) = (1/2)(1/2 + 1/4) = 0.375
    perms = list(itertools.permutations(range(4)))
    mean = map_curves([(p, frozenset({0, 1})) for p in perms], max_k=4, form="official")["model"]
    assert mean[1] == pytest.approx(0.375, abs=1e-6)
    assert random_ap_curve(2, 4, max_k=4, form="official") == pytest.approx(mean, abs=1e-6)


def test_elbow_index_edge_cases_by_hand() -> None:
    assert elbow_index([0.0] * 100) == 0  # the reference divides by sum(s^2) = 0; its NaNs end at index 0
    # fewer than 100 scores are padded with zeros (a padding position's attribution)
    assert elbow_index([1.0, 1.0]) == elbow_index([1.0, 1.0] + [0.0] * 98)
    # scaling does not move the elbow (the reference divides by sum(s^2)); the order of the scores is irrelevant
    scores = [1 / (1 + 0.3 * i) ** 2 for i in range(120)]
    assert elbow_index(scores) == elbow_index([5 * s for s in scores]) == elbow_index(scores[::-1])


def test_elbow_index_against_scipy() -> None:
    """The rule transcribed with scipy's cubic interpolation (the reference's interp1d) on random scores."""
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(3)
    for trial in range(20):
        raw = rng.gamma(0.5 + trial % 3, size=150) * rng.choice([-1, 1], size=150, p=[0.2, 0.8])
        assert elbow_index(raw.tolist()) == reference_elbow(raw), trial


# --- evidence words ---

def test_evidence_words_context_all_spans_or_the_last() -> None:
    doc = _doc()
    facts = hwe_facts(doc)
    assert facts[1] == HweFact(1, 1, 2, "P17", ((1, 1, 3), (1, 2, 3), (0, 2, 3)))
    # sentence 1 starts at flat word 6; "lies in" = 7, 8; "in" = 8 again; "born" (sentence 0) = 2
    assert evidence_words(doc, facts[1]) == frozenset({7, 8, 2})
    assert evidence_words(doc, facts[1], "last") == frozenset({2})  # the official script keeps the last span only
    assert evidence_words(doc, facts[0], "all") == evidence_words(doc, facts[0], "last") == frozenset({2, 3})
    # the default, context: the spans' words less the head's and tail's mention words (here none among them)
    assert evidence_words(doc, facts[0]) == frozenset({2, 3})
    # "Umea lies" (words 6, 7) for the pair (Umea, Sweden): Umea is the head's own name, so only "lies" is left
    umea_lies = HweFact(2, 1, 2, "P17", ((1, 0, 2),))
    assert pair_words(doc, umea_lies) == frozenset({4, 6, 9})
    assert evidence_words(doc, umea_lies, "all") == frozenset({6, 7})
    assert evidence_words(doc, umea_lies, "context") == frozenset({7})
    assert evidence_words(doc, HweFact(3, 1, 2, "P17", ((1, 0, 1),)), "context") == frozenset()  # a name only
    with pytest.raises(ValueError):
        evidence_words(doc, facts[0], "first")


def test_read_hwe_rejects_labels_without_keywords(tmp_path: Path) -> None:
    path = tmp_path / "hwe.json"
    doc = _doc()
    del doc["labels"][1]["keywords"]
    path.write_text(json.dumps([doc]))
    with pytest.raises(DataError) as e:
        read_hwe(path)
    assert str(e.value) == (f"{path}: document 0 'T': label 1 has no keywords; every DocRED-HWE label needs keyword "
                            "spans {sent_id, pos}; pass DocRED-HWE's dev_keys_new.json "
                            "(../shared/data/docred-hwe/dev_keys_new.json)")
    doc = _doc()
    doc["labels"][0]["keywords"][0]["pos"] = [4, 9]
    path.write_text(json.dumps([doc]))
    with pytest.raises(DataError) as e:  # caught by the one reader, which checks keyword spans too
        read_hwe(path)
    assert str(e.value) == (f"{path}: document 0 'T': label 0: keyword 0 has pos [4, 9] out of range for sentence 0 "
                            "(6 tokens); a keyword is a [start, end) token span of sentence sent_id; fix it or drop it")


def test_selection_exclusions_labels_and_max_docs(tmp_path: Path) -> None:
    docs = [_doc("A"), _doc("B", labels=[]), _doc("C"), _doc("D")]
    sel = select_documents(docs, exclude_titles={"C"}, max_docs=1)
    assert [d["title"] for d in sel.docs] == ["A"]
    assert sel.as_dict() == {"total": 4, "excluded": 1, "without_labels": 1, "cut_by_max_docs": 1, "documents": 1,
                             "facts": 2}
    train = tmp_path / "train.json"
    train.write_text(json.dumps([_doc("A"), _doc("D")]))
    assert read_titles([train]) == {"A", "D"}


# --- outputs ---

def test_outputs_table_json_and_plot(tmp_path: Path) -> None:
    curves = map_curves([([0, 1, 2], frozenset({0}))])
    official = map_curves([([0, 1, 2], frozenset({0}))], form="official", elbows=[0])
    runs = [RunMap("runs/vanilla", "vanilla", 3, 1, {"precision": {"all": curves, "last": curves},
                                                     "official": {"all": official, "last": official}},
                   {"seconds": 1.0})]
    table = format_table(runs, "all", "precision").splitlines()
    assert table[0].split() == ["run", "facts", "K=1", "K=5", "K=10", "K=20", "K=50"]
    assert table[1].split() == ["vanilla", "1", "1.0000", "0.2000", "0.1000", "0.0500", "0.0200"]
    assert table[2].split() == ["ideal", "(perfect", "ranking)", "1.0000", "0.2000", "0.1000", "0.0500", "0.0200"]
    table = format_table(runs, "all", "official").splitlines()
    assert table[1].split() == ["vanilla", "1", "1.0000", "0.2000", "0.1000", "0.0500", "0.0200"]
    assert table[2].split() == ["elbow", "variant", "(saved)", "1.0000", "0.2000", "0.1000", "0.0500", "0.0200"]
    write_map_json(tmp_path / "map.json", runs, {"steps": 10})
    data = json.loads((tmp_path / "map.json").read_text())
    assert data["k"][0] == 1 and data["k"][-1] == 100 and data["settings"] == {"steps": 10}
    assert data["runs"][0]["facts_kept"] == 1 and len(data["runs"][0]["map"]["official"]["all"]["model"]) == 100
    plot_map(tmp_path / "a.png", runs, "all", "t", "official")
    plot_map(tmp_path / "b.png", runs, "all", "t", "official")
    assert (tmp_path / "a.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()


# --- the real file ---

def test_the_real_hwe_file_and_the_test_side_documents() -> None:
    hwe = shared_path("docred-hwe", "dev_keys_new.json")
    dev = shared_path("re-docred", "dev_revised.json")
    test = shared_path("re-docred", "test_revised.json")
    docs = read_hwe(hwe)
    assert len(docs) == 699
    everything = select_documents(docs)
    assert (len(everything.docs), everything.without_labels, everything.facts) == (644, 55, 7342)
    # the documented way for a model trained on Re-DocRED dev: the 339 test-side documents only
    side = select_documents(docs, exclude_titles=read_titles([dev]))
    assert side.excluded == 360 and side.total - side.excluded == 339
    assert (len(side.docs), side.without_labels, side.facts) == (310, 29, 3512)
    assert {d["title"] for d in side.docs} <= read_titles([test])
    # 81 documents have entity lists that differ from Re-DocRED's: h and t index the HWE file's own vertexSet
    redocred = {d["title"]: d for p in (dev, test) for d in json.loads(Path(p).read_text())}

    def strip(vs: list) -> list:
        return [[(m["name"], m["sent_id"], tuple(m["pos"])) for m in e] for e in vs]

    differ = [d for d in docs if strip(d["vertexSet"]) != strip(redocred[d["title"]]["vertexSet"])]
    assert len(differ) == 81
    assert all(0 <= f.h < len(d["vertexSet"]) and 0 <= f.t < len(d["vertexSet"]) for d in docs for f in hwe_facts(d))
