"""Answer parser: tolerant reading, drops counted by reason, numbers mapped back to vertexSet indices."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from envbench.core.errors import EnvbenchError
from envbench.core.relations import RELATIONS
from envbench.formats.docred import distinct_names
from envbench.scoring.metrics import score
from icl.parse import covered_titles, entity_number, parse_answer, parse_run, relation_id
from icl.prompts import build_prompts, entity_order, render_document, triple_lines
from icl.run import run_prompts
from icl.templates import TEMPLATES
from tests.icl.test_client import FakeServer, make_client, test_title
from tests.icl.test_prompts import write_world

NAMES = [["Willi Schneider", "Schneider"], ["Mediaș"], ["Germany"], ["3 Doors Down"]]


def test_relation_names_match_case_insensitively() -> None:
    assert relation_id("country") == "P17"
    assert relation_id("  Country Of  Citizenship ") == "P27"
    assert relation_id('"located_in_the_administrative_territorial_entity"') == "P131"
    assert relation_id("dissolved, abolished or demolished") == "P576"
    assert relation_id("p19") == "P19"
    assert relation_id("P9999") is None and relation_id("best friend") is None


def test_entity_forms() -> None:
    for text in ("2", " e2", "E2", "#2", "[2]", "Entity 2", "entity#2", "<e2>Mediaș</e2>", "2 (Mediaș)", "2: Mediaș",
                 "Mediaș", "mediaș", '"Mediaș"'):
        assert entity_number(text, NAMES) == 2, text
    assert entity_number("Schneider", NAMES) == 1  # any mention name of the entity
    assert entity_number("3 Doors Down", NAMES) == 4  # a name wins over a leading number
    assert entity_number("Berlin", NAMES) is None and entity_number("", NAMES) is None


def test_a_number_too_long_for_int_is_out_of_range() -> None:
    # regression: "ValueError: Exceeds the limit (4300 digits) for integer string conversion" in _entity
    from icl.parse import TOO_LARGE

    huge = "9" * 5000
    lines = [f"<[{huge}]; country; [2]>", f"<[{huge}] Mediaș [{huge}]; country; [3]>", f"<{huge}; country; 3>",
             f"<<e{huge}>x</e{huge}>; country; 3>", f"<Mediaș [{huge}]; country; 3>"]
    parsed = parse_answer("\n".join(lines), NAMES)
    assert parsed.triples == [] and parsed.counts["dropped_entity_out_of_range"] == 5
    assert [reason for reason, _ in parsed.dropped] == ["entity_out_of_range"] * 5
    assert entity_number(huge, NAMES) == TOO_LARGE
    assert entity_number("0" * 5000 + "2", NAMES) == 2  # leading zeros say nothing
    assert parse_answer(f"<[{'0' * 5000}1]; country; [3]>", NAMES).triples == [(1, 3, "P17")]


def test_tolerant_parse_and_drop_reasons() -> None:
    answer = """Sure! Here are the relations:

1. <1; country of citizenship; 3>
- < 2 ;Country; 3 >
* (1; place of birth; 2)
<1; place of birth; 2>
[e4; country; e3]  <1; member of; 3>
2; located in the administrative territorial entity; 3
<1; best friend; 3>
<1; country; 9>
<0; country; 3>
<3; country; 3>
<Berlin; country; 3>
<1; country; 3; extra>
Germany; country; Germany
That is all."""
    parsed = parse_answer(answer, NAMES)
    assert parsed.triples == [(1, 3, "P27"), (2, 3, "P17"), (1, 2, "P19"), (4, 3, "P17"), (1, 3, "P463"),
                              (2, 3, "P131")]
    c = parsed.counts
    assert c["kept"] == 6
    assert c["dropped_duplicate"] == 1
    assert c["dropped_unknown_relation"] == 1
    assert c["dropped_entity_out_of_range"] == 2
    assert c["dropped_self_pair"] == 2  # <3; country; 3> and Germany; country; Germany
    assert c["dropped_bad_entity"] == 1
    assert c["dropped_malformed"] == 1
    assert c["ignored_lines"] == 2  # the chatter before and after
    assert c["resolved_by_name"] == 2
    assert c["triples_found"] == 14
    assert parse_answer("None", NAMES).counts["ignored_lines"] == 0
    thinking = parse_answer("<think>maybe <1; country; 2>?\n</think>\n<1; country; 3>", NAMES)
    assert thinking.triples == [(1, 3, "P17")] and thinking.counts["thinking_removed"] == 1
    assert parse_answer("<think>cut off while thinking <1; country; 3>", NAMES).triples == []
    assert parse_answer("None.", NAMES).triples == []
    # the paper's answer form, as its reference scorer reads it: numbers in square brackets
    assert parse_answer("<[1]; country; [3]>\n<[2]; located in or next to body of water; [3]>", NAMES).triples == \
        [(1, 3, "P17"), (2, 3, "P206")]


def test_parse_run_maps_numbers_to_vertexset_and_scores(tmp_path: Path) -> None:
    p = write_world(tmp_path)
    build_prompts(p["test"], p["train"], tmp_path / "prompts", shots=1, template="envbench-v1")
    # Test documents: vertexSet (country 0, person 1, place 2); numbers (person 1, place 2, country 3).
    answers = {
        "Hans": "<1; country of citizenship; 3>\n<1; place of birth; 2>\n<2; country; 3>\n<1; country of citizenship; 3>",
        "Karl": "<1; country of citizenship; 3>\n<3; capital; 2>",
        "Ida": "",
    }
    server = FakeServer(lambda body: answers[test_title(body)])
    server.faults = {"Ida": [500] * 10}
    try:
        run_prompts(tmp_path / "prompts", tmp_path / "run", make_client(server.url), progress=False)
    finally:
        server.close()
    res = parse_run(tmp_path / "prompts", tmp_path / "run", tmp_path / "pred.json")
    preds = json.loads((tmp_path / "pred.json").read_text())
    assert preds == [
        {"title": "Test A", "h_idx": 1, "t_idx": 0, "r": "P27"},
        {"title": "Test A", "h_idx": 1, "t_idx": 2, "r": "P19"},
        {"title": "Test A", "h_idx": 2, "t_idx": 0, "r": "P17"},
        {"title": "Test A-1", "h_idx": 0, "t_idx": 2, "r": "P36"},
        {"title": "Test A-1", "h_idx": 1, "t_idx": 0, "r": "P27"},
    ]
    stats = json.loads((tmp_path / "pred.stats.json").read_text())
    per_document = stats.pop("per_document")
    assert stats == res.stats
    assert (stats["documents"], stats["failed_documents"], stats["predictions"]) == (3, 1, 5)
    assert stats["dropped_duplicate"] == 1 and stats["dropped_self_pair"] == 0
    # per document: what was kept, what was dropped and why, with the dropped text
    assert [(d["title"], d["failed"]) for d in per_document] == [("Test A", False), ("Test A-1", False),
                                                                 ("Test B", True)]
    assert per_document[0]["kept"] == 3 and per_document[0]["dropped_duplicate"] == 1
    assert per_document[0]["dropped"] == [{"reason": "duplicate", "text": "<1; country of citizenship; 3>"}]
    assert per_document[1]["kept"] == 2 and per_document[1]["dropped"] == []
    assert "HTTP 500" in per_document[2]["error"]
    # the manifest, written last, names the documents these predictions cover (the failed one included)
    manifest = json.loads((tmp_path / "pred.json.manifest.json").read_text())
    assert manifest["step"] == "icl-parse" and sorted(o["name"] for o in manifest["outputs"]) == \
        ["pred.json", "pred.stats.json"]
    assert manifest["covers"]["titles"] == ["Test A", "Test A-1", "Test B"]
    assert manifest["covers"]["failed_titles"] == ["Test B"]
    assert (manifest["covers"]["limit"], manifest["covers"]["subset"], manifest["covers"]["docs_documents"]) == \
        (None, False, 3)
    assert covered_titles(tmp_path / "pred.json") == ["Test A", "Test A-1", "Test B"]
    again = parse_run(tmp_path / "prompts", tmp_path / "run", tmp_path / "pred.json")
    assert again.up_to_date and again.stats == res.stats and again.summary().startswith("up to date: 5 predictions")
    # predictions replaced after parsing: the manifest describes another file, so it covers nothing known
    other = tmp_path / "other" / "pred.json"
    other.parent.mkdir()
    other.write_text("[]")
    (other.parent / "pred.json.manifest.json").write_bytes((tmp_path / "pred.json.manifest.json").read_bytes())
    assert covered_titles(other) is None and covered_titles(tmp_path / "missing.json") is None
    gold = json.loads(p["test"].read_text())
    s = score(gold, preds)
    # 9 gold triples; 4 correct of 5 predicted; the failed document's 3 stay in the denominator
    assert s["precision"] == pytest.approx(4 / 5) and s["recall"] == pytest.approx(4 / 9)


def test_parse_run_refuses_missing_or_stale_answers(tmp_path: Path) -> None:
    p = write_world(tmp_path)
    build_prompts(p["test"], p["train"], tmp_path / "prompts", shots=1)
    with pytest.raises(EnvbenchError, match=r"no answers at .*answers\.json; run `envbench icl run --prompts"):
        parse_run(tmp_path / "prompts", tmp_path / "run", tmp_path / "pred.json")
    server = FakeServer()
    try:
        run_prompts(tmp_path / "prompts", tmp_path / "run", make_client(server.url), progress=False)
    finally:
        server.close()
    build_prompts(p["test"], p["train"], tmp_path / "prompts", shots=2)
    with pytest.raises(EnvbenchError, match=r"the answer for prompts/0000\.json was made from a different prompt"):
        parse_run(tmp_path / "prompts", tmp_path / "run", tmp_path / "pred.json")
    assert not (tmp_path / "pred.json").exists()


def test_hostile_answers_and_prompt_files_are_one_line(tmp_path: Path) -> None:
    """An answer that is not text, answers that are not a list, a prompt file emptied by hand: each is
    refused naming the file (they used to end in a TypeError or KeyError traceback)."""
    import json

    from icl.prompts import read_prompt

    p = write_world(tmp_path)
    build_prompts(p["test"], p["train"], tmp_path / "prompts", shots=1)
    server = FakeServer()
    try:
        run_prompts(tmp_path / "prompts", tmp_path / "run", make_client(server.url), progress=False)
    finally:
        server.close()
    answers = tmp_path / "run" / "answers.json"
    good = json.loads(answers.read_text())
    no_answer = {k: v for k, v in good["answers"][0].items() if k != "answer"}  # had raised KeyError 'answer'
    for bad in ({**good, "answers": "x"}, {**good, "answers": [{**good["answers"][0], "answer": 5}]},
                {**good, "answers": [no_answer]}):
        answers.write_text(json.dumps(bad))
        with pytest.raises(EnvbenchError) as err:
            parse_run(tmp_path / "prompts", tmp_path / "run", tmp_path / "pred.json")
        assert str(err.value) == (f"{answers}: answers is not a list of {{file, answer}} records with a text or null "
                                  "answer; rerun `envbench icl run` (cached answers are reused)")
    prompt = tmp_path / "prompts" / "prompts" / "0000.json"
    for text, why in (("{}", "messages is not a list of {role, content} strings"), ("[]", "a list, not an object")):
        prompt.write_text(text)
        with pytest.raises(EnvbenchError) as err:
            read_prompt(tmp_path / "prompts", "prompts/0000.json")
        assert str(err.value) == (f"{prompt}: not an envbench prompt file ({why}); rebuild the prompts with "
                                  "`envbench icl prompts`")
    # a tampered index.json or answers.json never leads the reader outside the prompts folder
    outside = tmp_path / "secret.json"
    outside.write_text(json.dumps({"messages": []}))
    (tmp_path / "prompts" / "prompts" / "link.json").symlink_to(outside)
    for name in ("../secret.json", "prompts/../../secret.json", str(outside), "prompts/link.json"):
        with pytest.raises(EnvbenchError) as err:
            read_prompt(tmp_path / "prompts", name)
        assert str(err.value) == (f"{tmp_path / 'prompts' / 'index.json'}: lists {name!r}, which is not a file "
                                  f"inside {tmp_path / 'prompts'}; rebuild the prompts with `envbench icl prompts`")
    assert not (tmp_path / "pred.json").exists()


@pytest.mark.parametrize("name", ["paper", "envbench-v1"])
def test_oracle_answers_on_real_re_docred_score_perfectly(tmp_path: Path, name: str) -> None:
    """Gold triples written as the template's examples write them come back as the gold facts."""
    from tests.conftest import shared_path

    tpl = TEMPLATES[name]
    test_path = shared_path("re-docred", "test_revised.json")
    train_path = shared_path("re-docred", "dev_revised.json")
    gold = json.loads(test_path.read_text())[:150]
    by_text = {}
    for d in gold:
        order = entity_order(d, tpl.numbering)
        by_text[render_document(d, order, tpl.marking)] = "\n".join(triple_lines(d, order, tpl))
    head, tail = ("Test document:\n\n", "\n\nAll relation triples extracted from the document:") if name == "paper" \
        else ("Test document:\nDocument: ", "\nRelations:")

    def oracle(body: dict) -> str:
        test_part = body["messages"][-1]["content"].split(head, 1)[1]
        assert test_part.endswith(tail)
        return "Here you go:\n" + by_text[test_part[: -len(tail)]]

    build_prompts(test_path, train_path, tmp_path / "p", shots=1, limit=150, template=name)
    server = FakeServer(oracle)
    try:
        res = run_prompts(tmp_path / "p", tmp_path / "r", make_client(server.url), concurrency=4, progress=False)
    finally:
        server.close()
    assert res.answered == 150 and res.requests == 150
    parsed = parse_run(tmp_path / "p", tmp_path / "r", tmp_path / "pred.json")
    assert parsed.stats["kept"] == sum(len(d["labels"]) for d in gold)
    assert all(parsed.stats[f"dropped_{r}"] == 0 for r in ("bad_entity", "unknown_relation", "self_pair"))
    s = score(gold, json.loads((tmp_path / "pred.json").read_text()))
    assert s["f1"] == pytest.approx(1.0) and s["recall"] == pytest.approx(1.0)


def demonstrations(text: str, template: str) -> list[tuple[str, str]]:
    """(document text, expected-output block) of every demonstration in a rendered prompt."""
    if template == "paper":
        blocks = text.split("\n\nExample document:\n\n")[1:]
        blocks[-1] = blocks[-1].split("\n\nTest document:\n\n")[0]
        return [tuple(b.split("\n\nAll relation triples extracted from the document:\n\n")) for b in blocks]
    blocks = re.split(r"\n\nExample \d+[ab]?:\nDocument: ", text)[1:]
    blocks[-1] = blocks[-1].split("\n\nTest document:\n")[0]
    return [tuple(b.split("\nRelations:\n")) for b in blocks]


def with_names(block: str, names: list[list[str]], form: str) -> str:
    """The expected output rewritten with the entities' first names in one of the prompt's marking forms."""
    def field(n: str) -> str:
        name = names[int(n) - 1][0]
        return {"around": f"[{n}] {name} [{n}]", "before": f"[{n}] {name}", "after": f"{name} [{n}]",
                "tags": f"<e{n}>{name}</e{n}>"}[form]
    return re.sub(r"<\[?(\d+)\]?; ([^;]+); \[?(\d+)\]?>", lambda m: f"<{field(m[1])}; {m[2]}; {field(m[3])}>", block)


@pytest.mark.parametrize("name", ["paper", "envbench-v1"])
@pytest.mark.parametrize("shots,da", [(1, False), (3, False), (1, True), (3, True)])
def test_every_demonstration_parses_back_to_its_gold(tmp_path: Path, name: str, shots: int, da: bool) -> None:
    # regression (issue 33): "<Loud Tour [1]; performer; Rihanna [3]>" and "[1] Loud Tour" were bad_entity
    p = write_world(tmp_path)
    build_prompts(p["test"], p["train"], tmp_path / "o", twins_path=p["twins"] if da else None, shots=shots,
                  da=da, cg=da, template=name)
    train = {d["title"]: d for d in json.loads(p["train"].read_text())}
    twins = {d["title"]: d for d in json.loads(p["twins"].read_text())}
    tpl = TEMPLATES[name]
    checked = 0
    for f in sorted((tmp_path / "o" / "prompts").glob("*.json")):
        rec = json.loads(f.read_text())
        shown = demonstrations(rec["messages"][-1]["content"], name)
        docs = [d for t in rec["demos"] for d in ([train[t], twins[t]] if da else [train[t]])]
        assert len(shown) == len(docs) == shots * (2 if da else 1)
        for (text, block), doc in zip(shown, docs):
            order = entity_order(train[doc["title"]], tpl.numbering)  # a twin keeps its source's numbers
            assert text == render_document(doc, order, tpl.marking)
            number_of = {v: n for n, v in enumerate(order, start=1)}
            gold = sorted((number_of[lab["h"]], number_of[lab["t"]], lab["r"]) for lab in doc["labels"])
            names = [sorted(distinct_names(doc["vertexSet"][v])) for v in order]
            forms = ["around", "before", "after"] if name == "paper" else ["tags"]
            for answer in [block] + [with_names(block, names, form) for form in forms]:
                parsed = parse_answer(answer, names)
                assert sorted(parsed.triples) == gold, answer
                assert parsed.counts["kept"] == len(gold) == parsed.counts["triples_found"], answer
            checked += 1
    assert checked == 3 * shots * (2 if da else 1)


def test_a_runaway_dropped_line_is_quoted_short() -> None:
    """A 4 MB answer line used to be copied whole into the stats file (19 MB)."""
    from icl.parse import MAX_DROPPED_CHARS

    parsed = parse_answer("<1; best friend; 3" + "x" * 100_000 + ">", NAMES)
    ((reason, text),) = parsed.dropped
    assert len(text) == MAX_DROPPED_CHARS + 3 and text.endswith("...") and text.startswith("<1; best friend; 3")


def test_only_lines_shaped_like_triples_count() -> None:
    # regression (issue 33): any line with two semicolons was a found triple, echoed prose included
    names = [["Loud Tour"], ["Rihanna"], ["Barbados"]]
    relations = "; ".join(RELATIONS.values())
    answer = (f"The scope of target relation types is limited to these 96 types: {relations}.\n"
              "Each relation triple should be output only once; it is written as a triple; that is all we know "
              "about the format of the answer that the model should give here.\n"
              "the format of each triple is: <subject entity number; relation type; object entity number>.\n"
              "<[1] Loud Tour [1]; performer; [2] Rihanna [2]>\n"
              "[1] [2]; performer; [3]\n")
    parsed = parse_answer(answer, names)
    assert parsed.triples == [(1, 2, "P175")]
    assert (parsed.counts["triples_found"], parsed.counts["ignored_lines"]) == (2, 3)
    # the dropped line is quoted whole (it was "1] [2]; performer; [3")
    assert parsed.dropped == [("bad_entity", "[1] [2]; performer; [3]")]
    assert parse_answer("<[1] Loud Tour [2]; performer; [3]>", names).counts["dropped_bad_entity"] == 1


def test_triples_written_with_the_prompts_own_marking() -> None:
    # regression: the bare-line fallback stripped "<" off "<e1>" and ">" off "</e2>", losing both entities
    names = [["Alpha"], ["Beta (band)"], ["Gamma"]]
    for line in ("<e1>Alpha</e1>; country; <e2>Beta (band)</e2>", "(<e1>Alpha</e1>; country; <e2>Beta (band)</e2>)",
                 "- <e1>Alpha</e1> ; Country ; <e2>Beta (band)</e2>"):
        assert parse_answer(line, names).triples == [(1, 2, "P17")], line


def test_names_that_end_in_a_bracket() -> None:
    # regression: "Beta (band)" lost its ")" to bracket stripping and matched no entity
    names = [["Alpha"], ["Beta (band)"], ["Gamma"]]
    parsed = parse_answer("<Alpha; country; Beta (band)>\n(Gamma; country; Alpha)", names)
    assert parsed.triples == [(1, 2, "P17"), (3, 1, "P17")]
    assert parsed.counts["resolved_by_name"] == 4


def test_stats_file_may_not_be_the_predictions_file(tmp_path: Path) -> None:
    with pytest.raises(EnvbenchError) as exc:
        parse_run(tmp_path / "p", tmp_path / "r", tmp_path / "a.json", stats_path=tmp_path / "a.json")
    assert str(exc.value) == f"--stats and --out are the same file ({tmp_path / 'a.json'}); give the counts another name"


def test_compressed_output_names_are_refused(tmp_path: Path) -> None:
    with pytest.raises(EnvbenchError) as exc:
        parse_run(tmp_path / "p", tmp_path / "r", tmp_path / "pred.json.gz")
    assert str(exc.value) == (f"{tmp_path / 'pred.json.gz'}: predictions and counts are written uncompressed; "
                              "give a .json name")
