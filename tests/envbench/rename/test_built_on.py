"""Names built on other names follow them (issue 58 §1): each quoted example, and the property that no
renamed document keeps a name holding another renamed entity's old name."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envbench.core.reasons import KeptReason
from envbench.formats.docred import entity_type
from envbench.rename.audit import Auditor
from envbench.rename.built_on import Embedded, builder_order, derive, embedded_names, holds
from envbench.rename.candidates import MAX_WINDOWS, ItemNames
from envbench.rename.engine import DocInfo, Draws, Run, advance, plan_runs
from envbench.rename.substitute import NewName, apply_plan, mention_tokens, new_name
from tests.envbench.index_fixture import mention


def _doc(sents: list[str], ents: list[list[tuple[str, int, str]]]) -> dict[str, Any]:
    """A document from sentences written with spaces and entities of mentions (name, sentence, type), each
    mention at the first place of its sentence its name's words stand that no earlier mention took."""
    words = [s.split() for s in sents]
    used: set[tuple[int, int]] = set()
    vs: list[list[dict[str, Any]]] = []
    for e in ents:
        ms = []
        for nm, sid, t in e:
            toks = nm.split()
            a = next(i for i in range(len(words[sid])) if words[sid][i:i + len(toks)] == toks
                     and not any((sid, j) in used for j in range(i, i + len(toks))))
            used.update((sid, j) for j in range(a, a + len(toks)))
            ms.append(mention(nm, sid, [a, a + len(toks)], t))
        vs.append(ms)
    return {"title": "T", "sents": words, "vertexSet": vs, "labels": []}


def _settle(doc: dict[str, Any], qids: list[str | None], items: dict[int, list[tuple[str, ItemNames]]],
            seed: int = 1, auditor: Auditor | None = None, **fields: Any) -> Run:
    """Settle one run of ``doc``, entity ``e`` drawing the candidates ``items[e]`` in their order (each of its
    own fine type, so no entity draws another's, but for entities of one item); ``fields`` are more of what
    the index answers (``Draws``: demonyms, genders, ...)."""
    ftypes = {(q, entity_type(doc["vertexSet"][e])): f"C{q}" for e, q in enumerate(qids) if q is not None}
    info = DocInfo(0, doc, qids, ftypes)
    runs, slots = plan_runs([info], [seed], "eval", twins=False)
    run = runs[0]
    windows: dict[tuple[int, int], list[str]] = {}
    names: dict[str, ItemNames] = {}
    for e, si in run.slots.items():
        for w in range(MAX_WINDOWS):
            windows[(si, w)] = []
        for q, nm in items.get(e, []):
            windows[(si, 0)].append(q)
            names[q] = nm
    draws = Draws(slots, lambda slot: 4, auditor or Auditor(con=None, constraints={}), windows, names, **fields)
    assert advance(run, draws) is None
    return run


def _names(run: Run, ei: int) -> list[str]:
    return next(r.new_names for r in run.rows if r.entity == ei)


def _row(run: Run, ei: int) -> Any:
    return next(r for r in run.rows if r.entity == ei)


def test_a_grant_named_after_its_founder_follows_the_founder() -> None:
    # "The Avery Fisher Career Grant , established by Avery Fisher" had read "… established by Lino S.
    # Cayetano" beside the kept grant
    doc = _doc(["The Avery Fisher Career Grant , established by Avery Fisher ."],
               [[("Avery Fisher Career Grant", 0, "MISC")], [("Avery Fisher", 0, "PER")]])
    run = _settle(doc, [None, "Q1"], {1: [("Q7", ItemNames("Lino S. Cayetano", ()))]})
    assert _names(run, 1) == ["Lino S. Cayetano"]
    grant = _row(run, 0)
    assert (grant.kind, grant.new_names, grant.built_on) == ("derived", ["Lino S. Cayetano Career Grant"], (1,))
    out = apply_plan(doc, run.plan, "T-1", run.outside)
    assert " ".join(out["sents"][0]) == "The Lino S. Cayetano Career Grant , established by Lino S. Cayetano ."


def test_a_label_named_by_its_short_name_writes_a_shared_last_word_once() -> None:
    # "released on Sire Records" beside the label's "Sire" renamed "Warp Records" had read "Warp Records Records"
    doc = _doc(["It was released on Sire Records in 1995 .", "Sire signed the band ."],
               [[("Sire Records", 0, "ORG")], [("Sire", 1, "ORG")]])
    run = _settle(doc, [None, "Q1"], {1: [("Q7", ItemNames("Warp Records", ()))]})
    assert _names(run, 1) == ["Warp Records"]
    label = _row(run, 0)
    assert (label.kind, label.new_names, label.built_on) == ("derived", ["Warp Records"], (1,))
    out = apply_plan(doc, run.plan, "T-1", run.outside)
    assert " ".join(out["sents"][0]) == "It was released on Warp Records in 1995 ."
    # the words a new name opens with, written right before the run, are written once too
    doc2 = _doc(["It flows into the River Kenn .", "The Kenn rises on the moor ."],
                [[("River Kenn", 0, "LOC")], [("Kenn", 1, "LOC")]])
    run2 = _settle(doc2, [None, "Q1"], {1: [("Q7", ItemNames("River Clyst", ()))]})
    assert _row(run2, 0).new_names == ["River Clyst"]
    # and a kind word written on one side of the run that the new name has at its other end: "the River Brosna
    # drainage basin" beside "Brosna" renamed "Hudson River" had read "the River Hudson River drainage basin"
    doc3 = _doc(["They form the River Brosna drainage basin .", "The Brosna rises here ."],
                [[("River Brosna", 0, "LOC")], [("Brosna", 1, "LOC")]])
    run3 = _settle(doc3, [None, "Q1"], {1: [("Q7", ItemNames("Hudson River", ()))]})
    assert _row(run3, 0).new_names == ["Hudson River"]
    out3 = apply_plan(doc3, run3.plan, "T-1", run3.outside)
    assert " ".join(out3["sents"][0]) == "They form the Hudson River drainage basin ."
    from envbench.rename.built_on import Embedded, derive

    got = derive("Oxford University", ["Oxford", "University"], [Embedded(0, 1, 1, "Oxford")],
                 {1: {"Oxford": NewName("University of Wyoming", ("University", "of", "Wyoming"))}})
    assert got is not None and got[0].name == "University of Wyoming" and got[0].tokens == ("University", "of",
                                                                                             "Wyoming")
    # a doubling the builder writes itself stays (dropping it made "Birch Alder Alder" and "Birch Alder" one name)
    from envbench.rename.built_on import Embedded, derive

    plans = {1: {"Alder": NewName("Ana Alder", ("Ana", "Alder"))}}
    got = derive("Birch Alder Alder", ["Birch", "Alder", "Alder"], [Embedded(1, 2, 1, "Alder")], plans)
    assert got is not None and got[0].name == "Birch Ana Alder Alder"
    got = derive("Alder Records", ["Alder", "Records"], [Embedded(0, 1, 1, "Alder")],
                 {1: {"Alder": NewName("Warp Records", ("Warp", "Records"))}})
    assert got is not None and got[0].name == "Warp Records"
    # a new name that does not end so is written whole: "Sire" renamed "Warp" reads "Warp Records"
    run = _settle(doc, [None, "Q1"], {1: [("Q7", ItemNames("Warp", ()))]})
    assert _row(run, 0).new_names == ["Warp Records"]


@pytest.mark.parametrize("seed", range(1, 6))
def test_a_derived_name_moves_its_own_years_with_the_documents_dates(seed: int) -> None:
    # "Following 2009–2010 Iranian election protests , Karroubi was put under house arrest in February 2011"
    # had read "Following 2009–2010 Syrian election protests , ... in January 1992"
    doc = _doc(["Following 2009–2010 Karroubi protests , Karroubi was put under house arrest in February 2011 ."],
               [[("2009–2010 Karroubi protests", 0, "MISC")], [("Karroubi", 0, "PER")],
                [("February 2011", 0, "TIME")]])
    run = _settle(doc, [None, "Q1", None], {1: [("Q7", ItemNames("Lino", ()))]}, seed=seed)
    year = int(run.new_tokens[2]["February 2011"][-1])
    d = year - 2011
    assert _row(run, 0).new_names == [f"{2009 + d}–{2010 + d} Lino protests"]
    out = apply_plan(doc, run.plan, "T-1", run.outside)
    assert " ".join(out["sents"][0]).startswith(f"Following {2009 + d}–{2010 + d} Lino protests , Lino was")


def test_a_ship_named_after_a_president_takes_his_new_name() -> None:
    # "USS Lyndon B. Johnson" kept, while Lyndon B. Johnson became "Comte de Boulainvilliers"
    doc = _doc(["USS Lyndon B. Johnson is named for Lyndon B. Johnson ."],
               [[("USS Lyndon B. Johnson", 0, "MISC")], [("Lyndon B. Johnson", 0, "PER")]])
    run = _settle(doc, ["Q1", "Q2"], {0: [("Q6", ItemNames("HMS Victory", ()))],
                                      1: [("Q7", ItemNames("Comte de Boulainvilliers", ()))]})
    assert _names(run, 0) == ["USS Comte de Boulainvilliers"]  # no draw of its own: it follows
    assert run.slots.keys() == {1}


def test_a_shogunate_and_its_shogun_keep_one_family_name() -> None:
    # "the first shōgun of the Tokugawa Shogunate , Tokugawa Ieyasu" had read "… of the Tokugawa
    # Shogunate , Yuri Viktorovich Ushakov"
    doc = _doc(["He was the first shōgun of the Tokugawa Shogunate , Tokugawa Ieyasu .",
                "Tokugawa died in Edo ."],
               [[("Tokugawa Shogunate", 0, "ORG")],
                [("Tokugawa Ieyasu", 0, "PER"), ("Tokugawa", 1, "PER")]])
    run = _settle(doc, ["Q1", "Q2"], {1: [("Q7", ItemNames("Yuri Viktorovich Ushakov", ("Ushakov",)))]})
    assert _names(run, 1) == ["Yuri Viktorovich Ushakov", "Ushakov"]
    assert _names(run, 0) == ["Ushakov Shogunate"]
    # the shogun kept: the shogunate is kept too, for that reason (it had an item and a type to draw by)
    run = _settle(doc, ["Q1", "Q2"], {0: [("Q6", ItemNames("Ashikaga Shogunate", ()))]})
    assert [(r.entity, r.reason) for r in sorted(run.rows, key=lambda r: r.entity)] == [
        (0, KeptReason.BUILT_ON), (1, KeptReason.NO_CANDIDATE)]


def test_lee_hall_follows_the_general_it_is_named_for() -> None:
    # Lee Hall, "named for" Robert E. Lee, stayed "Lee Hall" while the general became "Matthew"
    doc = _doc(["Lee Hall was named for General Lee ."],
               [[("Lee Hall", 0, "LOC")], [("Lee", 0, "PER")]])
    run = _settle(doc, ["Q1", "Q2"], {1: [("Q7", ItemNames("Matthew Smith", ("Smith",)))]})
    assert _names(run, 0) == [" ".join(_names(run, 1)) + " Hall"]


def test_what_counts_as_a_run() -> None:
    def runs(names: list[list[str]], coarse: list[str], qids: list[str | None] | None = None) -> dict[int, Any]:
        tokens = [{nm: nm.split() for nm in own} for own in names]
        got = embedded_names(names, tokens, coarse, qids or [None] * len(names), ())
        return {a: {nm: [(r.leader, r.name) for r in rs] for nm, rs in by.items()} for a, by in got.items()}

    assert runs([["Lee Hall"], ["Lee"]], ["LOC", "PER"]) == {0: {"Lee Hall": [(1, "Lee")]}}
    # a kind word of its own entity's longer name is no name: "British House of Commons" holds no "House"
    assert runs([["British House of Commons"], ["Texas House of Representatives", "House"]], ["ORG", "ORG"]) == {}
    assert runs([["Commonwealth Games Federation"], ["Commonwealth Games", "Games"]], ["ORG", "MISC"]) == {
        0: {"Commonwealth Games Federation": [(1, "Commonwealth Games")]}}
    # in a person's name: a surname or a full name at its end, a place after "of"; no given name, no place name
    assert runs([["Zoltán Puskás"], ["Ferenc Puskás", "Puskás"]], ["PER", "PER"]) == {
        0: {"Zoltán Puskás": [(1, "Puskás")]}}
    assert runs([["Paul Desmarais Jr."], ["Paul Desmarais"]], ["PER", "PER"]) == {
        0: {"Paul Desmarais Jr.": [(1, "Paul Desmarais")]}}
    assert runs([["Ferdinand I"], ["Ferdinand"]], ["PER", "PER"]) == {}
    assert runs([["Philip V of Spain"], ["Spain"]], ["PER", "LOC"]) == {0: {"Philip V of Spain": [(1, "Spain")]}}
    assert runs([["George Washington"], ["Washington"]], ["PER", "LOC"]) == {}
    # two entities of one name: it names neither; two entities of one item follow the same-item rule instead
    assert runs([["Lee Hall"], ["Lee"], ["Lee"]], ["LOC", "PER", "PER"]) == {}
    assert runs([["Lee Hall"], ["Lee"]], ["LOC", "PER"], ["Q1", "Q1"]) == {}
    # the longest run wins; a builder's own name that is a name it follows follows it too
    assert runs([["Avery Fisher Hall Orchestra"], ["Avery Fisher Hall"], ["Avery Fisher"]], ["ORG", "LOC", "PER"]) == {
        0: {"Avery Fisher Hall Orchestra": [(1, "Avery Fisher Hall")]}, 1: {"Avery Fisher Hall": [(2, "Avery Fisher")]}}
    assert runs([["Villanova Preparatory School", "Villanova"], ["Villanova"]], ["ORG", "LOC"]) == {
        0: {"Villanova Preparatory School": [(1, "Villanova")], "Villanova": [(1, "Villanova")]}}


def test_a_builders_head_noun_before_of_is_no_name_it_holds() -> None:
    from envbench.rename.built_on import embedded_names

    # "The Shire is centred on the town of Pinjarra" beside "Shire of Murray" had read "The South Gaya is
    # centred" and "South Gaya of Murray" (salt fifth1207s68): "Shire" is the shire's kind word
    names = [["Shire of Murray"], ["Shire"], ["Murray"]]
    tokens = [{n: n.split()} for n in ("Shire of Murray", "Shire", "Murray")]
    got = embedded_names(names, tokens, ["LOC", "LOC", "LOC"], [None, "Q1", "Q2"], ())
    assert [(r.leader, r.name) for r in got[0]["Shire of Murray"]] == [(2, "Murray")]
    # inside the name too: "Texas House of Representatives" beside "House" had read "Kansas Seventy - ninth Congress
    # of Representatives" (salt eighth1207s69)
    names = [["Texas House of Representatives"], ["House"], ["Texas"]]
    tokens = [{n: n.split()} for n in ("Texas House of Representatives", "House", "Texas")]
    got = embedded_names(names, tokens, ["ORG", "ORG", "LOC"], [None, "Q1", "Q2"], ())
    assert [(r.leader, r.name) for r in got[0]["Texas House of Representatives"]] == [(2, "Texas")]
    # a name before "of" that is not the builder's head stays a run: "Lee of Fareham" beside "Lee"
    names = [["Lee Hall of Fareham"], ["Lee"]]
    tokens = [{"Lee Hall of Fareham": "Lee Hall of Fareham".split()}, {"Lee": ["Lee"]}]
    got = embedded_names(names, tokens, ["LOC", "PER"], [None, "Q1"], ())
    assert [(r.leader, r.name) for r in got[0]["Lee Hall of Fareham"]] == [(1, "Lee")]


def test_builders_settle_after_the_builders_they_follow() -> None:
    built = {0: {"x": (Embedded(0, 1, 1, "y"),)}, 1: {"y": (Embedded(0, 1, 2, "z"),)}, 3: {"w": (Embedded(0, 1, 2, "z"),)}}
    assert builder_order(built) == [1, 3, 0]
    circle = {0: {"x": (Embedded(0, 1, 1, "y"),)}, 1: {"y": (Embedded(0, 1, 0, "x"),)}}
    assert builder_order(circle) == [0, 1]


def test_derive_leaves_the_article_out_inside_a_title() -> None:
    # Env-Re-DocRED test "Walter Newman (screenwriter)": "The Magnificent Seven and The Great Escape" read "... and
    # The Great the Black Cauldron" once the radio show "Escape" was renamed "The Black Cauldron"
    nn = new_name("The Black Cauldron")
    assert nn is not None
    got = derive("The Great Escape", ["The", "Great", "Escape"], [Embedded(2, 3, 13, "Escape")], {13: {"Escape": nn}})
    assert got is not None and got[0].name == "The Great Black Cauldron"
    assert got[0].tokens == ("The", "Great", "Black", "Cauldron")


def test_derive_keeps_the_spacing_and_writes_the_article_small() -> None:
    nn = new_name("The Netherlands")
    assert nn is not None
    got = derive("Anything For You in Europe", "Anything For You in Europe".split(), [Embedded(4, 5, 1, "Europe")],
                 {1: {"Europe": nn}})
    assert got is not None and got[0].name == "Anything For You in the Netherlands" and got[1] == (1,)
    assert derive("Lee Hall", ["Lee", "Hall"], [Embedded(0, 1, 1, "Lee")], {}) is None  # the leader kept
    smith = new_name("Anna Smith")
    assert smith is not None
    got = derive("Zoltán Puskás", ["Zoltán", "Puskás"], [Embedded(1, 2, 1, "Puskás")], {1: {"Puskás": smith}},
                 person=True)
    assert got is not None and got[0].name == "Zoltán Smith"


def test_a_kept_name_that_holds_a_renamed_name_keeps_that_one_too() -> None:
    # "Ferdinand I" holds the given name "Ferdinand" of another person, which it cannot follow: the other
    # one keeps its name too, so the document never reads "Ferdinand I" beside a renamed "Ferdinand"
    doc = _doc(["Ferdinand I was the son of Ferdinand ."],
               [[("Ferdinand I", 0, "PER")], [("Ferdinand", 0, "PER")]])
    run = _settle(doc, [None, "Q2"], {1: [("Q7", ItemNames("Carl", ()))]})
    assert [(r.entity, r.kind, r.reason) for r in sorted(run.rows, key=lambda r: r.entity)] == [
        (0, "kept", KeptReason.UNLINKED), (1, "kept", KeptReason.BUILT_ON)]


_WORDS = st.sampled_from(["Lee", "Hall", "Avery", "Fisher", "Grant", "of", "Spain", "USS", "Johnson", "Career"])
_TYPES = st.sampled_from(["PER", "LOC", "ORG", "MISC"])


@st.composite
def _documents(draw: st.DrawFn) -> tuple[dict[str, Any], list[str | None], dict[int, list[tuple[str, ItemNames]]]]:
    """A one-sentence document of a few entities whose names are runs of a few words (so names hold names),
    some linked, each linked one with a candidate or none."""
    n = draw(st.integers(2, 5))
    names = [draw(st.lists(_WORDS, min_size=1, max_size=3)) for _ in range(n)]
    words: list[str] = []
    ents: list[list[tuple[str, int, str]]] = []
    for nm in names:
        words.append("and")
        ents.append([(" ".join(nm), 0, draw(_TYPES))])
        words += nm
    doc = _doc([" ".join(words + ["."])], ents)
    qids = [draw(st.sampled_from([None, f"Q{e + 1}"])) for e in range(n)]
    items = {e: [(f"Q{100 + e}", ItemNames(draw(st.sampled_from(["Ann Vale", "Bo Tam", "Cy Roe Lund", "Dee"])), ()))]
             for e in range(n) if draw(st.booleans())}
    return doc, qids, items


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_documents())
def test_no_renamed_document_keeps_a_name_holding_a_renamed_entitys_old_name(
        case: tuple[dict[str, Any], list[str | None], dict[int, list[tuple[str, ItemNames]]]]) -> None:
    doc, qids, items = case
    run = _settle(doc, qids, items)
    out = apply_plan(doc, run.plan, "T-1", run.outside)
    old = [set(map(tuple, mention_tokens(doc, e).values())) for e in doc["vertexSet"]]
    now = [set(map(tuple, mention_tokens(out, e).values())) for e in out["vertexSet"]]
    renamed = {r.entity for r in run.rows if r.kind != "kept" and r.old_names != r.new_names}
    for b in renamed:
        gone = old[b] - now[b]
        for a in range(len(now)):
            if a != b:
                assert not any(holds(x, y) for x in now[a] for y in gone), (a, b, now[a], gone)
    # and the renamed document is one: every mention spells its name
    for e in out["vertexSet"]:
        for m in e:
            assert " ".join(out["sents"][m["sent_id"]][m["pos"][0]:m["pos"][1]]) == m["name"]


def test_a_run_beside_the_builders_words_takes_no_formal_name() -> None:
    # Re-DocRED test: "from Nazi Germany" read "from Nazi State of Israel", and "the United States Supreme Court"
    # read "the State of Qatar Supreme Court": a polity's formal name loses its head and "of" there
    qatar = {1: {"United States": NewName("State of Qatar", ("State", "of", "Qatar"))}}
    got = derive("United States Supreme Court", ["United", "States", "Supreme", "Court"],
                 [Embedded(0, 2, 1, "United States")], qatar)
    assert got is not None and got[0].name == "Qatar Supreme Court" and got[0].tokens == ("Qatar", "Supreme", "Court")
    congo = {1: {"Germany": NewName("Democratic Republic of the Congo", ("Democratic", "Republic", "of", "the",
                                                                           "Congo"))}}
    got = derive("Team Germany", ["Team", "Germany"], [Embedded(1, 2, 1, "Germany")], congo)
    assert got is not None and got[0].name == "Team Congo"
    # (since 61c4198b5c3f "Nazi Germany" takes no new name at all: a regime's name is its place's)
    assert derive("Nazi Germany", ["Nazi", "Germany"], [Embedded(1, 2, 1, "Germany")], congo) is None
    # beside a dash or a small word the run is a name of its own, and stays whole
    got = derive("IBM Research – Brazil", ["IBM", "Research", "–", "Brazil"], [Embedded(3, 4, 1, "Brazil")],
                 {1: {"Brazil": NewName("State of Qatar", ("State", "of", "Qatar"))}})
    assert got is not None and got[0].name == "IBM Research – State of Qatar"
    # a name with "of" that is no polity's has no such form: the run is not taken ("Jim Crow discriminatory laws"
    # had read "Secretariat of the Lok Sabha discriminatory laws"), and the builder keeps its name
    lok = {1: {"Jim Crow": NewName("Secretariat of the Lok Sabha", ("Secretariat", "of", "the", "Lok", "Sabha"))}}
    assert derive("Jim Crow discriminatory laws", ["Jim", "Crow", "discriminatory", "laws"],
                  [Embedded(0, 2, 1, "Jim Crow")], lok) is None
    # a leader that wrote "of" itself may take a name with "of" ("Bank of America Stadium")
    got = derive("Bank of America Stadium", ["Bank", "of", "America", "Stadium"],
                 [Embedded(0, 3, 1, "Bank of America")],
                 {1: {"Bank of America": NewName("University of Warsaw", ("University", "of", "Warsaw"))}})
    assert got is not None and got[0].name == "University of Warsaw Stadium"


def test_a_builder_that_cannot_follow_keeps_its_leader_too() -> None:
    # the leader of a run that takes no name keeps its name with the builder: no document holds "Jim Crow
    # discriminatory laws" beside a renamed Jim Crow
    doc = _doc(["Jim Crow discriminatory laws were passed .", "Jim Crow was a caricature ."],
               [[("Jim Crow discriminatory laws", 0, "MISC")], [("Jim Crow", 1, "MISC")]])
    run = _settle(doc, [None, "Q1"], {1: [("Q7", ItemNames("Secretariat of the Lok Sabha", ()))]})
    assert _names(run, 1) == ["Jim Crow"] and _names(run, 0) == ["Jim Crow discriminatory laws"]
    run = _settle(doc, [None, "Q1"], {1: [("Q7", ItemNames("Rosa Parks", ()))]})
    assert _names(run, 0) == ["Rosa Parks discriminatory laws"]


def test_a_new_place_named_after_an_old_one_is_no_run() -> None:
    # "the first trolley system in New England" had read "in the New Italian Social Republic" beside England renamed
    # "Italian Social Republic" (salt third1207s69)
    from envbench.rename.built_on import embedded_names

    # nor a people or a language so named: "a South Korean talk show" had read "a South Andorran talk show", and
    # "rather than in Classical Chinese" "in Classical Andorran" (salt eighth1207s69)
    for builder, kind in (("New England", "LOC"), ("New South Wales", "LOC"), ("Nova Scotia", "LOC"),
                          ("East Germany", "LOC"), ("South Korean", "LOC"), ("Classical Chinese", "MISC")):
        leader = builder.split(" ", 1)[1]
        names = [[builder], [leader]]
        tokens = [{builder: builder.split()}, {leader: leader.split()}]
        assert embedded_names(names, tokens, [kind, "LOC"], ["Q1", "Q2"], ()) == {}, builder
    # the word must open the name, the other name end it: "South Korean Air Force" still follows "South Korean"
    names = [["Royal South Korean Navy"], ["Korean"]]
    tokens = [{"Royal South Korean Navy": ["Royal", "South", "Korean", "Navy"]}, {"Korean": ["Korean"]}]
    got = embedded_names(names, tokens, ["ORG", "LOC"], ["Q1", "Q2"], ())
    assert [(r.leader, r.name) for r in got[0]["Royal South Korean Navy"]] == [(1, "Korean")]
    # not so a work or a ship: "New Order Records" beside "New Order" aside, "USS New Jersey" holds "New Jersey"
    names = [["USS New Jersey"], ["New Jersey"]]
    tokens = [{"USS New Jersey": ["USS", "New", "Jersey"]}, {"New Jersey": ["New", "Jersey"]}]
    got = embedded_names(names, tokens, ["MISC", "LOC"], ["Q1", "Q2"], ())
    assert [(r.leader, r.name) for r in got[0]["USS New Jersey"]] == [(1, "New Jersey")]


def test_a_regimes_name_follows_no_new_name_of_its_place() -> None:
    # "bringing ... Jewish children ... to the United States from Nazi Germany" had read "from Nazi French Guiana"
    # (salt fresh1208h): a regime's name is its place's alone, so both keep their names
    from envbench.rename.built_on import REGIME_WORDS

    doc = _doc(["They came from Nazi Germany .", "Germany had invaded Poland ."],
               [[("Nazi Germany", 0, "LOC")], [("Germany", 1, "LOC")]])
    run = _settle(doc, [None, "Q1"], {1: [("Q7", ItemNames("French Guiana", ()))]})
    assert (_row(run, 0).kind, _row(run, 1).kind) == ("kept", "kept")
    assert "Nazi" in REGIME_WORDS
    # a name built on a place with no such word still follows it ("German Navy" is no regime)
    doc = _doc(["They served in the Germany Navy .", "Germany had invaded Poland ."],
               [[("Germany Navy", 0, "ORG")], [("Germany", 1, "LOC")]])
    run = _settle(doc, [None, "Q1"], {1: [("Q7", ItemNames("French Guiana", ()))]})
    assert _names(run, 0) == ["French Guiana Navy"]
