"""A person's new name keeps the form of the old one (issue 58 §3), each example from its quoted sentence."""

from __future__ import annotations

from envbench.core.reasons import KeptReason
from envbench.rename.candidates import ItemNames
from envbench.rename.person_forms import is_given_name, is_peerage, keep_forms, titled_names
from envbench.rename.substitute import apply_plan, new_name
from tests.envbench.rename.test_built_on import _doc, _names, _settle


def _text(doc: dict, run: object) -> list[str]:
    out = apply_plan(doc, run.plan, "T-1", run.outside)  # type: ignore[attr-defined]
    return [" ".join(s) for s in out["sents"]]


def test_a_general_written_by_his_full_name_never_becomes_a_given_name() -> None:
    # "Confederate general Robert E. Lee" had read "Confederate general Matthew"
    doc = _doc(["Despite the name , he descends from no Confederate general Robert E. Lee ."],
               [[("Robert E. Lee", 0, "PER")]])
    run = _settle(doc, ["Q1"], {0: [("Q7", ItemNames("Matthew", ())), ("Q8", ItemNames("Matthew Perry", ()))]})
    assert _text(doc, run) == ["Despite the name , he descends from no Confederate general Matthew Perry ."]


def test_a_surname_after_a_title_stays_a_surname() -> None:
    # "a direct lineage to General Lee": the one word after the title takes the new surname, never a given name
    doc = _doc(["A direct lineage to General Lee can not be traced ."], [[("Lee", 0, "PER")]])
    run = _settle(doc, ["Q1"], {0: [("Q7", ItemNames("Matthew", ())), ("Q8", ItemNames("Matthew Perry", ()))]})
    assert _text(doc, run) == ["A direct lineage to General Perry can not be traced ."]


def test_a_founding_dean_keeps_a_full_name() -> None:
    # "Its founding dean was Charles Kothe" had read "… was Billy"
    doc = _doc(["Its founding dean was Charles Kothe , a Tulsa labor attorney ."], [[("Charles Kothe", 0, "PER")]])
    run = _settle(doc, ["Q1"], {0: [("Q7", ItemNames("Billy", ()))]})
    assert [(r.kind, r.reason) for r in run.rows] == [("kept", KeptReason.NO_CANDIDATE)]
    run = _settle(doc, ["Q1"], {0: [("Q7", ItemNames("Billy", ())), ("Q8", ItemNames("Billy Joel", ()))]})
    assert _names(run, 0) == ["Billy Joel"]


def test_a_peerage_stays_a_peerage() -> None:
    # "Arthur Peel , 1st Viscount Peel" had read "James Monroe , 1st Tom Coburn"
    sent = "Peel was the second son of Arthur Peel , 1st Viscount Peel , Speaker of the House of Commons ."
    doc = _doc([sent], [[("Arthur Peel", 0, "PER"), ("Viscount Peel", 0, "PER")]])
    run = _settle(doc, ["Q1"], {0: [("Q7", ItemNames("James Monroe", ("Tom Coburn",)))]})
    assert _text(doc, run) == [
        "Peel was the second son of James Monroe , 1st Viscount Monroe , Speaker of the House of Commons ."]
    # Re-DocRED splits them into two entities of one item: the second takes the first's item and its surname
    doc = _doc([sent], [[("Arthur Peel", 0, "PER")], [("Viscount Peel", 0, "PER")]])
    run = _settle(doc, ["Q1", "Q1"], {0: [("Q7", ItemNames("James Monroe", ("Tom Coburn",)))],
                                      1: [("Q9", ItemNames("Otto Kahn", ()))]})
    assert _text(doc, run) == [
        "Peel was the second son of James Monroe , 1st Viscount Monroe , Speaker of the House of Commons ."]


def test_keep_forms_rules() -> None:
    def nn(text: str) -> object:
        got = new_name(text)
        assert got is not None
        return got

    mapping = {"Arthur Peel": nn("James Monroe"), "Viscount Peel": nn("Tom Coburn")}
    got = keep_forms(list(mapping), mapping, frozenset(), "James Monroe")  # type: ignore[arg-type]
    assert got is not None and got[0]["Viscount Peel"].name == "Viscount Monroe" and got[1] == {"Viscount Peel"}
    mapping = {"Earl of Derby": nn("Ann Lee")}
    got = keep_forms(list(mapping), mapping, frozenset(), "Ann Lee")  # type: ignore[arg-type]
    assert got is not None and got[0]["Earl of Derby"].name == "Earl of Lee"
    assert keep_forms(["Kothe"], {"Kothe": nn("Billy")}, frozenset(), "Billy") is not None  # one word before too
    assert keep_forms(["Lee"], {"Lee": nn("Matthew")}, frozenset({"Lee"}), "Matthew") is None
    assert keep_forms(["Lee"], {"Lee": nn("Tempah")}, frozenset({"Lee"}), "Tempah") is not None  # no given name
    assert is_peerage("Viscount Peel") and is_peerage("Earl of Derby") and not is_peerage("Viscount")
    assert not is_peerage("Countess of the") and not is_peerage("Peel")
    assert is_given_name("Matthew") and is_given_name("Billy") and not is_given_name("Kothe")


def test_titled_names_are_read_from_the_token_before_each_mention() -> None:
    doc = _doc(["General Lee met Mr. Smith and Lee .", "Lee left ."],
               [[("Lee", 0, "PER"), ("Lee", 1, "PER")], [("Smith", 0, "PER")]])
    sents = doc["sents"]
    assert titled_names(sents, doc["vertexSet"][0]) == {"Lee"}
    assert titled_names(sents, doc["vertexSet"][1]) == {"Smith"}
