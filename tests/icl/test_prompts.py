"""Prompt builder: both templates' numbering and marking, demonstrations, DA twins, CG text, the step."""

from __future__ import annotations

import copy
import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from envbench.core.errors import DataError, EnvbenchError
from envbench.core.relations import RELATIONS
from icl.prompts import (
    CG_PARAGRAPH,
    build_prompt_text,
    build_prompts,
    demo_key,
    entity_order,
    pick_demos,
    render_document,
    triple_lines,
)
from icl.templates import TEMPLATES

V1 = TEMPLATES["envbench-v1"]
PAPER = TEMPLATES["paper"]


def make_doc(title: str, person: str, place: str, country: str) -> dict[str, Any]:
    """Two sentences; vertexSet order (country, person, place) differs from first-mention order."""
    first, last = person.split(), person.split()[-1:]
    s0 = first + ["was", "born", "in"] + place.split() + ["."]
    s1 = last + ["lives", "in"] + country.split() + ["."]
    p0 = len(first) + 3
    return {
        "title": title,
        "sents": [s0, s1],
        "vertexSet": [
            [{"name": country, "sent_id": 1, "pos": [3, 3 + len(country.split())], "type": "LOC"}],
            [
                {"name": last[0], "sent_id": 1, "pos": [0, 1], "type": "PER"},  # listed first, mentioned later
                {"name": person, "sent_id": 0, "pos": [0, len(first)], "type": "PER"},
            ],
            [{"name": place, "sent_id": 0, "pos": [p0, p0 + len(place.split())], "type": "LOC"}],
        ],
        "labels": [
            {"h": 1, "t": 0, "r": "P27", "evidence": [1]},
            {"h": 1, "t": 2, "r": "P19", "evidence": [0]},
            {"h": 2, "t": 0, "r": "P17", "evidence": []},
        ],
    }


TRAIN_NAMES = [
    ("Willi Schneider", "Mediaș", "Germany"),
    ("Anna Berg", "Uppsala", "Sweden"),
    ("Jan Kowalski", "Kraków", "Poland"),
    ("Maria Rossi", "Turin", "Italy"),
    ("Luis García Pérez", "Santa Cruz de Tenerife", "Spain"),
]
TWIN_NAMES = [
    ("Otto Krüger", "Bad Homburg vor der Höhe", "Austria"),
    ("Eva Lind", "Lund", "Norway"),
    ("Piotr Nowak", "Gdańsk", "Czech Republic"),
    ("Carla Bianchi", "Bari", "Malta"),
    ("Pablo Ruiz", "Cádiz", "Portugal"),
]


def write_world(tmp: Path) -> dict[str, Path]:
    """train.json (5 docs), train_twins.json (same titles, renamed), test.json (a doc and its Env renaming)."""
    train = [make_doc(f"Train {i}", *names) for i, names in enumerate(TRAIN_NAMES)]
    twins = [make_doc(f"Train {i}", *names) for i, names in enumerate(TWIN_NAMES)]
    test = [make_doc("Test A", "Hans Meier", "Basel", "Switzerland"),
            make_doc("Test A-1", "Karl Vogt", "Zug", "Liechtenstein"),
            make_doc("Test B", "Ida Holm", "Odense", "Denmark")]
    paths = {"train": tmp / "train.json", "twins": tmp / "train_twins.json", "test": tmp / "test.json"}
    for key, docs in (("train", train), ("twins", twins), ("test", test)):
        paths[key].write_text(json.dumps(docs), encoding="utf-8")
    return paths


def test_numbering_follows_first_mention_and_marks_every_mention() -> None:
    doc = make_doc("Test A", "Willi Schneider", "Mediaș", "Germany")
    order = entity_order(doc)
    assert order == [1, 2, 0]  # person (sentence 0, token 0), place, country
    text = render_document(doc, order)
    assert text == (
        "<e1>Willi Schneider</e1> was born in <e2>Mediaș</e2> . <e1>Schneider</e1> lives in <e3>Germany</e3> ."
    )
    assert triple_lines(doc, order) == [
        "<1; place of birth; 2>",
        "<1; country of citizenship; 3>",
        "<2; country; 3>",
    ]


def test_nested_and_shared_spans_stay_nested() -> None:
    doc = {
        "title": "N",
        "sents": [["University", "of", "Basel", "opened", "."]],
        "vertexSet": [
            [{"name": "Basel", "sent_id": 0, "pos": [2, 3], "type": "LOC"}],
            [{"name": "University of Basel", "sent_id": 0, "pos": [0, 3], "type": "ORG"}],
            [{"name": "University", "sent_id": 0, "pos": [0, 1], "type": "ORG"}],
        ],
        "labels": [],
    }
    order = entity_order(doc)
    assert order == [1, 2, 0]  # the longer span opening at the same token comes first
    assert render_document(doc, order) == "<e1><e2>University</e2> of <e3>Basel</e3></e1> opened ."


def test_prompt_layout_plain_da_cg() -> None:
    test = make_doc("T", "Hans Meier", "Basel", "Switzerland")
    demo = make_doc("D", "Anna Berg", "Uppsala", "Sweden")
    twin = make_doc("D", "Eva Lind", "Lund", "Norway")
    plain, order = build_prompt_text(test, [demo], template=V1)
    assert order == [1, 2, 0]
    for name in RELATIONS.values():
        assert f"\n{name}\n" in plain
    assert "Example 1:\nDocument: <e1>Anna Berg</e1>" in plain
    assert plain.endswith("Test document:\nDocument: <e1>Hans Meier</e1> was born in <e2>Basel</e2> . "
                          "<e1>Meier</e1> lives in <e3>Switzerland</e3> .\nRelations:")
    assert CG_PARAGRAPH not in plain and "Example 1a" not in plain

    da, _ = build_prompt_text(test, [demo], [twin], template=V1)
    assert "Example 1a:\nDocument: <e1>Anna Berg</e1>" in da
    assert "Example 1b:\nDocument: <e1>Eva Lind</e1> was born in <e2>Lund</e2>" in da
    blocks = re.findall(r"Relations:\n((?:<[^\n]*>\n?)+)", da)
    assert len(blocks) == 2 and blocks[0].strip() == blocks[1].strip()  # the twin carries the same triples
    assert CG_PARAGRAPH not in da

    cg, _ = build_prompt_text(test, [demo], [twin], cg=True, template="envbench-v1")
    assert CG_PARAGRAPH in cg
    assert cg.index(CG_PARAGRAPH) < cg.index("Example 1a")
    assert "differ only in the names" in CG_PARAGRAPH and "context" in CG_PARAGRAPH


def test_demo_draw_is_deterministic_and_shared_by_renamed_versions() -> None:
    titles = [f"Doc {i}" for i in range(50)]
    a = pick_demos(demo_key("Rihanna-3"), titles, 3, seed=0)
    assert a == pick_demos(demo_key("Rihanna"), titles, 3, seed=0)
    assert a == pick_demos("Rihanna", list(reversed(titles)), 3, seed=0)  # input order does not matter
    assert len(set(a)) == 3
    assert pick_demos("Rihanna", titles, 3, seed=1) != a or pick_demos("Other", titles, 3, seed=0) != a
    assert demo_key("Rihanna-3", same_for_renamed=False) == "Rihanna-3"
    assert "Doc 7" not in pick_demos("X", titles, 49, seed=0, exclude=("Doc 7",))


def test_build_prompts_writes_files_index_and_entity_maps(tmp_path: Path) -> None:
    p = write_world(tmp_path)
    out = tmp_path / "prompts"
    res = build_prompts(p["test"], p["train"], out, twins_path=p["twins"], shots=3, da=True, cg=True,
                        template="envbench-v1")
    assert res.documents == 3 and not res.up_to_date
    index = json.loads((out / "index.json").read_text())
    assert [e["file"] for e in index["documents"]] == ["prompts/0000.json", "prompts/0001.json", "prompts/0002.json"]
    assert index["params"]["system"] is None and index["params"]["limit"] is None
    assert (index["docs_documents"], index["count"], index["subset"]) == (3, 3, False)
    assert index["params"]["shots"] == 3 and index["params"]["da"] and index["params"]["cg"]
    recs = [json.loads((out / e["file"]).read_text()) for e in index["documents"]]
    assert recs[0]["title"] == "Test A" and recs[0]["entity_map"] == [1, 2, 0]
    assert recs[0]["entity_names"] == [["Meier", "Hans Meier"], ["Basel"], ["Switzerland"]]
    assert recs[0]["demos"] == recs[1]["demos"]  # "Test A-1" is a renaming of "Test A"
    text = recs[0]["messages"][0]["content"]
    assert text.count("Example ") == 6 and CG_PARAGRAPH in text
    for i, demo in enumerate(recs[0]["demos"]):
        k = int(demo.split()[1])
        assert f"Example {i + 1}a:\nDocument: <e1>{TRAIN_NAMES[k][0]}</e1>" in text
        assert f"Example {i + 1}b:\nDocument: <e1>{TWIN_NAMES[k][0]}</e1>" in text
    txt = (out / "prompts" / "0000.txt").read_text()
    assert txt.startswith(text) and "1 -> vertexSet[1]" in txt

    def files() -> dict[str, bytes]:
        return {str(f.relative_to(out)): f.read_bytes() for f in sorted(out.rglob("*")) if f.is_file()}

    before = files()
    again = build_prompts(p["test"], p["train"], out, twins_path=p["twins"], shots=3, da=True, cg=True,
                          template="envbench-v1")
    assert again.up_to_date and files() == before and again.summary().startswith("up to date: 3 prompts")
    forced = build_prompts(p["test"], p["train"], out, twins_path=p["twins"], shots=3, da=True, cg=True,
                           template="envbench-v1", force=True)
    assert not forced.up_to_date and files() == before  # byte-identical rebuild

    build_prompts(p["test"], p["train"], out, shots=1, limit=1, template="envbench-v1")
    assert sorted(files()) == ["index.json", "manifest.json", "prompts/0000.json", "prompts/0000.txt"]  # stale gone
    one = json.loads((out / "prompts" / "0000.json").read_text())
    assert one["messages"][0]["content"].count("Example ") == 1
    index = json.loads((out / "index.json").read_text())
    assert (index["params"]["limit"], index["docs_documents"], index["count"], index["subset"]) == (1, 3, 1, True)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["step"] == "icl-prompts"
    assert [o["name"] for o in manifest["outputs"]] == ["index.json", "prompts/0000.json", "prompts/0000.txt"]


def test_option_errors_name_the_fix(tmp_path: Path) -> None:
    p = write_world(tmp_path)
    with pytest.raises(EnvbenchError, match=r"--da needs --twins FILE"):
        build_prompts(p["test"], p["train"], tmp_path / "o", shots=1, da=True)
    with pytest.raises(EnvbenchError, match=r"--cg .* needs --da"):
        build_prompts(p["test"], p["train"], tmp_path / "o", shots=1, cg=True)
    with pytest.raises(DataError, match=r"only 5 usable demonstrations for 'Test A'"):
        build_prompts(p["test"], p["train"], tmp_path / "o", shots=6)
    twins = json.loads(p["twins"].read_text())
    p["twins"].write_text(json.dumps(twins[:1]))
    with pytest.raises(DataError, match=r"no twin for demonstration 'Train \d'"):
        build_prompts(p["test"], p["train"], tmp_path / "o", twins_path=p["twins"], shots=3, da=True)
    twins[0]["labels"] = twins[0]["labels"][:1]
    p["twins"].write_text(json.dumps(twins))
    with pytest.raises(DataError, match=r"twin of 'Train 0' has different labels"):
        build_prompts(p["test"], p["train"], tmp_path / "o", twins_path=p["twins"], shots=5, da=True)


_TAG = re.compile(r"<(/?)e(\d+)>")


def unrender(text: str) -> tuple[list[str], set[tuple[int, int, int]]]:
    """Tokens and (start, end, number) spans recovered from a rendered one-sentence document."""
    tokens: list[str] = []
    spans: set[tuple[int, int, int]] = set()
    open_at: dict[int, list[int]] = {}
    for piece in text.split(" "):
        pos = 0
        while (m := _TAG.match(piece, pos)) and not m.group(1):  # opening tags before the token
            open_at.setdefault(int(m.group(2)), []).append(len(tokens))
            pos = m.end()
        rest = piece[pos:]
        core = _TAG.split(rest)[0]
        tokens.append(core)
        for closing, num in _TAG.findall(rest[len(core):]):
            assert closing == "/", piece
            spans.add((open_at[int(num)].pop(), len(tokens), int(num)))
    return tokens, spans


@st.composite
def one_sentence_docs(draw: st.DrawFn) -> dict[str, Any]:
    n_tok = draw(st.integers(1, 12))
    tokens = draw(st.lists(st.text("abcXY,.'-", min_size=1, max_size=4), min_size=n_tok, max_size=n_tok))
    n_ent = draw(st.integers(1, 5))
    entities = []
    for _ in range(n_ent):
        spans = draw(st.lists(st.tuples(st.integers(0, n_tok - 1), st.integers(1, n_tok)).map(sorted)
                              .filter(lambda se: se[0] < se[1]), min_size=1, max_size=3))
        for (a, b), (c, d) in itertools.combinations(spans, 2):  # one entity's mentions never cross
            assume(not (a < c < b < d or c < a < d < b))
        entities.append([{"name": " ".join(tokens[s:e]), "sent_id": 0, "pos": [s, e], "type": "MISC"}
                         for s, e in spans])
    return {"title": "H", "sents": [tokens], "vertexSet": entities, "labels": []}


@settings(max_examples=150, deadline=None)
@given(one_sentence_docs())
def test_rendering_keeps_tokens_and_every_mention_span(doc: dict[str, Any]) -> None:
    order = entity_order(doc)
    assert sorted(order) == list(range(len(doc["vertexSet"])))
    number_of = {v: n for n, v in enumerate(order, start=1)}
    text = render_document(doc, order)
    tokens, spans = unrender(text)
    assert tokens == doc["sents"][0]
    want = {(m["pos"][0], m["pos"][1], number_of[v]) for v, ent in enumerate(doc["vertexSet"]) for m in ent}
    assert spans == want
    firsts = [min(m.start() for m in re.finditer(f"<e{n}>", text)) for n in range(1, len(order) + 1)]
    assert firsts == sorted(firsts)  # numbers appear in order of first mention


def rename_in_place(doc: dict[str, Any]) -> dict[str, Any]:
    """A twin: every mention token replaced by a new word of the same length in tokens; labels kept."""
    twin = copy.deepcopy(doc)
    for v, entity in enumerate(twin["vertexSet"]):
        for m in entity:
            sent = twin["sents"][m["sent_id"]]
            for j in range(*m["pos"]):
                sent[j] = f"Zed{v}x{j}"
    for entity in twin["vertexSet"]:
        for m in entity:
            m["name"] = " ".join(twin["sents"][m["sent_id"]][m["pos"][0]:m["pos"][1]])
    return twin


def test_sample_world_prompts(tmp_path: Path) -> None:
    sample_world = pytest.importorskip("envbench.worlds.sample")
    sample_world.make_sample(tmp_path / "s", seed=0)
    docs_dir = tmp_path / "s" / "docs"
    train = json.loads((docs_dir / "train.json").read_text())
    test = json.loads((docs_dir / "test.json").read_text())
    twins_path = tmp_path / "train_twins.json"
    twins_path.write_text(json.dumps([rename_in_place(d) for d in train]))
    out = tmp_path / "p"
    res = build_prompts(docs_dir / "test.json", docs_dir / "train.json", out, twins_path=twins_path,
                        shots=3, da=True, cg=True, template="envbench-v1")
    assert res.documents == len(test)
    train_by_title = {d["title"]: d for d in train}
    index = json.loads((out / "index.json").read_text())
    for entry, doc in zip(index["documents"], test):
        rec = json.loads((out / entry["file"]).read_text())
        assert rec["title"] == doc["title"]
        emap = rec["entity_map"]
        assert sorted(emap) == list(range(len(doc["vertexSet"])))
        firsts = [min((m["sent_id"], m["pos"][0]) for m in doc["vertexSet"][v]) for v in emap]
        assert firsts == sorted(firsts)  # numbered in order of first mention
        text = rec["messages"][0]["content"]
        assert text.count(CG_PARAGRAPH) == 1
        test_part = text.split("Test document:\n", 1)[1]
        n_mentions = len({(m["sent_id"], *m["pos"], v) for v, e in enumerate(doc["vertexSet"]) for m in e})
        assert len(re.findall(r"<e\d+>", test_part)) == n_mentions
        assert len(rec["demos"]) == 3 and len(set(rec["demos"])) == 3
        for i, title in enumerate(rec["demos"], start=1):
            demo, twin_text = train_by_title[title], text.split(f"Example {i}b:\n", 1)[1]
            demo_text = text.split(f"Example {i}a:\n", 1)[1].split(f"Example {i}b:\n", 1)[0]
            assert "Zed" not in demo_text and twin_text.split("\n\n", 1)[0].count("Zed") >= len(demo["vertexSet"])
            assert demo_text.split("Relations:\n")[1].strip() == \
                twin_text.split("\n\n", 1)[0].split("Relations:\n")[1].strip()


DATA = Path(__file__).parent / "data"


APPENDIX_A = DATA / "paper_appendix_a.txt"  # the paper's Appendix A, copied from its text; "……" marks a block


def test_paper_1shot_prompt_is_appendix_a_word_for_word() -> None:
    test = make_doc("T", "Hans Meier", "Basel", "Switzerland")
    demo = make_doc("D", "Anna Berg", "Uppsala", "Sweden")
    text, order = build_prompt_text(test, [demo])  # paper is the default
    appendix = APPENDIX_A.read_text(encoding="utf-8")
    pieces = appendix.split("……")
    assert len(pieces) == 4 and pieces[0].startswith("Given a document in which all entity mentions")
    demo_text = "[1] Anna Berg [1] was born in [2] Uppsala [2] . [1] Berg [1] lives in [3] Sweden [3] ."
    demo_triples = "<[1]; place of birth; [2]>\n<[1]; country of citizenship; [3]>\n<[2]; country; [3]>"
    test_text = "[1] Hans Meier [1] was born in [2] Basel [2] . [1] Meier [1] lives in [3] Switzerland [3] ."
    assert text == pieces[0] + demo_text + pieces[1] + demo_triples + pieces[2] + test_text + pieces[3]
    assert "; ".join(RELATIONS.values()) in pieces[0] and len(RELATIONS) == 96
    # numbered in order of first mention; the map leads back to vertexSet (country 0, person 1, place 2)
    assert order == [1, 2, 0]


def test_the_appendix_comparison_can_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    from icl import templates

    monkeypatch.setattr(templates, "PAPER_FORMAT_ONE", " in the same format as the example:")
    text, _ = build_prompt_text(make_doc("T", "Hans Meier", "Basel", "Switzerland"),
                                [make_doc("D", "Anna Berg", "Uppsala", "Sweden")])
    assert not text.startswith(APPENDIX_A.read_text(encoding="utf-8").split("……")[0])


def test_paper_template_plural_forms_and_cg() -> None:
    test = make_doc("T", "Hans Meier", "Basel", "Switzerland")
    demos = [make_doc(f"D{i}", *names) for i, names in enumerate(TRAIN_NAMES[:3])]
    twins = [make_doc(f"D{i}", *names) for i, names in enumerate(TWIN_NAMES[:3])]
    one_sentence = "Before the test document, an example document and its expected output are provided."
    one_format = "in the same format as the example, i.e., each line outputs"
    many_sentence = "Before the test document, example documents and their expected outputs are provided."
    many_format = "in the same format as the examples, i.e., each line outputs"
    one, _ = build_prompt_text(test, demos[:1])
    assert one_sentence in one and one_format in one and many_sentence not in one and many_format not in one
    for three in (build_prompt_text(test, demos)[0], build_prompt_text(test, demos[:1], twins[:1])[0]):
        # 3-shot, and 1-shot + DA (two example documents): only what number forces changes
        assert many_sentence in three and many_format in three
        assert one_sentence not in three and one_format not in three
        assert three.replace(many_sentence, one_sentence).replace(many_format, one_format).split("\n\n")[0] == \
            one.split("\n\n")[0]
    assert build_prompt_text(test, demos)[0].count("Example document:\n") == 3
    cg = ("The only difference between two documents lies in the entity names. Apart from the entities, the contextual "
          "content of the two documents is entirely the same. Therefore, the expected outputs for the two documents are "
          "also identical. When extracting relation triples from the test document, please base the extraction on the "
          "context of the document and avoid identifying the relations solely based on the information of the "
          "entities themselves.")  # Section 7.4, word for word
    for pairs in (build_prompt_text(test, demos[:1], twins[:1], cg=True)[0],
                  build_prompt_text(test, demos, twins, cg=True)[0]):
        assert pairs.split("\n\n")[1] == cg  # right after the instruction, before the first example
    assert build_prompt_text(test, demos, twins, cg=True)[0].count("Example document:\n") == 6
    assert cg not in build_prompt_text(test, demos, twins)[0]
    zero, _ = build_prompt_text(test, [])
    assert "example" not in zero.split("Test document:")[0].lower()  # no sentence about examples that are absent
    assert "Please output the extraction results of the test document: each line outputs" in zero


def test_twins_that_equal_their_originals_are_refused(tmp_path: Path) -> None:
    p = write_world(tmp_path)
    with pytest.raises(DataError) as exc:
        build_prompts(p["test"], p["train"], tmp_path / "o", twins_path=p["train"], shots=1, da=True, cg=True)
    assert str(exc.value) == (
        f"{p['train']}: the twin of 'Train 1' has the same text as the training document, so the pair would not "
        "differ in entity names; pass the _twins.json that `envbench generate --pool train --twins` made, not the "
        "--train file itself")
    assert not (tmp_path / "o" / "index.json").exists()


def test_paper_prompt_file_golden(tmp_path: Path) -> None:
    # the whole 1-shot prompt, pinned: any change of wording must be deliberate (and rebuilds prompt folders)
    p = write_world(tmp_path)
    build_prompts(p["test"], p["train"], tmp_path / "o", shots=1, limit=1)
    rec = json.loads((tmp_path / "o" / "prompts" / "0000.json").read_text())
    assert rec["messages"][0] == {"role": "system", "content": "You are a helpful assistant."}
    assert rec["messages"][1]["content"] == (DATA / "paper_1shot_golden.txt").read_text(encoding="utf-8")
    assert rec["entity_map"] == [1, 2, 0] and rec["params"]["template"] == "paper"
    txt = (tmp_path / "o" / "prompts" / "0000.txt").read_text()
    assert txt.startswith("[system]\nYou are a helpful assistant.\n\n[user]\n")
    build_prompts(p["test"], p["train"], tmp_path / "n", shots=1, limit=1, system="")
    assert [m["role"] for m in json.loads((tmp_path / "n" / "prompts" / "0000.json").read_text())["messages"]] == \
        ["user"]


def test_bracket_marking_keeps_every_mention() -> None:
    doc = {
        "title": "N",
        "sents": [["University", "of", "Basel", "opened", "."]],
        "vertexSet": [
            [{"name": "Basel", "sent_id": 0, "pos": [2, 3], "type": "LOC"}],
            [{"name": "University of Basel", "sent_id": 0, "pos": [0, 3], "type": "ORG"}],
            [{"name": "University", "sent_id": 0, "pos": [0, 1], "type": "ORG"}],
        ],
        "labels": [],
    }
    order = entity_order(doc, "vertexset")
    assert render_document(doc, order, "brackets") == "University [3] of Basel [1] [2] opened ."
    # the paper template's marking: nested mentions stay nested, the outer one opening first
    assert render_document(doc, entity_order(doc), "enclosed") == "[1] [2] University [2] of [3] Basel [3] [1] opened ."


def test_template_wording_is_part_of_the_up_to_date_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from icl import templates

    p = write_world(tmp_path)
    build_prompts(p["test"], p["train"], tmp_path / "o", shots=1)
    assert build_prompts(p["test"], p["train"], tmp_path / "o", shots=1).up_to_date
    monkeypatch.setattr(templates, "PAPER_TEST_HEADER", "Test document (new wording):")
    assert not build_prompts(p["test"], p["train"], tmp_path / "o", shots=1).up_to_date


def test_skipped_documents_are_counted_and_old_folders_named(tmp_path: Path) -> None:
    p = write_world(tmp_path)
    docs = json.loads(p["test"].read_text())
    docs[1]["vertexSet"][0][0]["sent_id"] = 9  # a mention in a sentence that does not exist
    p["test"].write_text(json.dumps(docs))
    res = build_prompts(p["test"], p["train"], tmp_path / "o", shots=1, skip_invalid=True)
    assert res.documents == 2
    assert res.summary().splitlines()[1].startswith(f"skipped 1 invalid document of {p['test']}; the first: "
                                                    "document 1 'Test A-1': ")
    old = tmp_path / "old"
    old.mkdir()
    (old / "index.json").write_text(json.dumps({"format": "envbench-icl-prompts/1", "documents": []}))
    from icl.prompts import read_index

    with pytest.raises(EnvbenchError) as exc:
        read_index(old)
    assert str(exc.value) == (f"{old / 'index.json'} was written by an older envbench (prompt files beside "
                              f"index.json); rebuild it with `envbench icl prompts ... --out {old}`")


def test_limit_on_an_env_file_counts_source_documents() -> None:
    """--limit 2 on an Env file: two source documents with every renamed copy, never one document twice."""
    from icl.prompts import first_documents

    env = [{"title": f"{t}-{k}"} for t in ("A", "B", "C") for k in (1, 2, 3)]
    assert [d["title"] for d in first_documents(env, 2)] == ["A-1", "A-2", "A-3", "B-1", "B-2", "B-3"]
    plain = [{"title": t} for t in ("A", "B-1", "C")]  # not an Env file: the first N as they come
    assert [d["title"] for d in first_documents(plain, 2)] == ["A", "B-1"]


def test_the_template_help_says_what_the_templates_do() -> None:
    from click.testing import CliRunner

    from envbench.cli import cli

    out = CliRunner().invoke(cli, ["icl", "prompts", "--help"]).output
    flat = " ".join(out.split())
    assert "vertexSet order" not in flat and "'mention [N]'" not in flat
    assert ("paper: the paper's Appendix A word for word (entities numbered in the order of their first mention, each "
            "mention enclosed as '[N] mention [N]'") in flat
    assert "of an Env file, the first N source documents with all their renamed copies" in flat
