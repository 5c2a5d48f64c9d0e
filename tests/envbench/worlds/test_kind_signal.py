"""The ``kind`` typing signal of kb-from-corpus (issue 58): a catch-all cluster takes the class learned for a
kind noun that plainly says its kind in some document, and a work named after its kind word is of that kind."""

from __future__ import annotations

from envbench.core.kind_nouns import kind_nouns
from envbench.core.types import CATCH_ALL_CLASSES
from envbench.worlds.fine_typing import HEAD_CLASS_BASE, Evidence, FineTyper, MentionContext, Typing

ORGANIZATION, ENTITY = "Q43229", "Q35120"
AGENCY = "Q327333"  # government agency


def _evidence(coarse: str, name: str, sentence: str = "") -> Evidence:
    """A cluster of one mention, in ``sentence`` when given (its first occurrence of ``name``)."""
    if not sentence:
        return Evidence(coarse, [name])
    toks, ms = sentence.split(), name.split()
    i = next(i for i in range(len(toks)) if toks[i:i + len(ms)] == ms)
    doc = {"sents": [toks], "vertexSet": [[{"name": name, "sent_id": 0, "pos": [i, i + len(ms)], "type": coarse}]]}
    return Evidence(coarse, [name], contexts=[MentionContext.of(toks, i, i + len(ms), kind_nouns(doc, 0))])


def _pass(rows: list[tuple[Evidence, str]]) -> list[Typing]:
    typed = [Typing(q, "fallback" if q in CATCH_ALL_CLASSES else "name") for _, q in rows]
    return FineTyper().kind_pass([ev for ev, _ in rows], typed)


def test_a_definition_noun_takes_the_class_its_names_teach() -> None:
    # "The Reichskommissariat of Belgium and Northern France was a German civil administration": two agencies
    # named "... Administration" teach the noun's class
    out = _pass([(_evidence("ORG", "Farm Security Administration"), AGENCY),
                 (_evidence("ORG", "Food and Drug Administration"), AGENCY),
                 (_evidence("ORG", "Reichskommissariat", "The Reichskommissariat was a German civil administration ."),
                  ORGANIZATION)])
    assert (out[2].qid, out[2].signal) == (AGENCY, "kind")


def test_clusters_sharing_a_kind_noun_get_a_class_of_it_and_a_lone_one_stays() -> None:
    # ("cruiser" names a kind: a name of the corpus ends in it; "gunboat" too)
    ships = [_evidence("MISC", n, f"the cruiser {n} sailed .") for n in ("Aurora", "Bogatyr", "Prinz Eugen")]
    named = [(_evidence("MISC", "Baltic Fleet Cruiser"), ENTITY), (_evidence("MISC", "Yangtze Gunboat"), ENTITY)]
    out = _pass([(ev, ENTITY) for ev in ships] + [(_evidence("MISC", "Varyag", "the gunboat Varyag sailed ."), ENTITY)]
                + named)
    assert len({t.qid for t in out[:3]}) == 1 and int(out[0].qid[1:]) >= HEAD_CLASS_BASE
    assert out[3].qid == ENTITY  # one gunboat: no class to draw another from


def test_words_that_name_no_kind_teach_nothing() -> None:
    # "the popular X", "the greater X": no name, class or kind word has them
    out = _pass([(_evidence("LOC", n, f"in the greater {n} area ."), "Q2221906") for n in ("Tehachapi", "Boston", "Denver")])
    assert {t.qid for t in out} == {"Q2221906"}


def test_a_typed_cluster_keeps_its_class() -> None:
    out = _pass([(_evidence("ORG", "Farm Security Administration"), AGENCY),
                 (_evidence("ORG", "Food and Drug Administration"), AGENCY),
                 (_evidence("ORG", "Reichskommissariat", "The Reichskommissariat was a German civil administration ."),
                  "Q176799")])
    assert out[2].qid == "Q176799"  # only catch-all clusters are typed by the pass
