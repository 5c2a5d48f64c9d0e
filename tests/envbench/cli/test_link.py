"""CLI: link (moved here from test_generate.py), and what it says about the gold links it reads."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from tests.envbench.cli.docs import DOC, out_of_range, write_docs
from tests.envbench.cli.invoke import run as _run
from tests.envbench.cli.invoke import run_examples
from tests.envbench.index_fixture import sample_world


def _docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs.json"
    docs.write_text(json.dumps([DOC]))
    return docs


def test_link_then_generate(tmp_path: Path) -> None:
    w = sample_world()
    code, out = _run("link", str(w.test), "--index", str(w.index), "--out", str(tmp_path / "l.json"),
                     "--gold", str(w.links))
    assert code == 0, out
    assert "against gold" in out and (tmp_path / "l.json").is_file()
    assert out.endswith(f"\nwrote {tmp_path / 'l.json'}\n")
    manifest = json.loads((tmp_path / "l.json.manifest.json").read_text())
    assert manifest["step"] == "link" and [o["name"] for o in manifest["outputs"]] == ["l.json"]
    code, out = _run("link", str(w.test), "--index", str(w.index), "--out", str(tmp_path / "l.json"),
                     "--gold", str(w.links))
    assert (code, out) == (0, f"{tmp_path / 'l.json'} is up to date (same documents, index and parameters); "
                              "nothing to do. Pass --force to link again.\n")
    code, out = _run("link", str(w.test), "--index", str(w.index), "--out", str(tmp_path / "l.json"),
                     "--gold", str(w.links), "--force")
    assert code == 0 and "against gold" in out
    # the link file is what `generate --links` reads
    code, out = _run("generate", "--allow-training-names", str(w.test), "--index", str(w.index), "--links", str(tmp_path / "l.json"),
                     "--seeds", "1", "--out", str(tmp_path / "env"), "--no-progress")
    assert code == 0, out


def test_help_has_an_example_that_runs_when_pasted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    run_examples("link")
    assert (tmp_path / "data" / "test.links.json").is_file()


def test_gold_link_file_for_other_documents(tmp_path: Path) -> None:
    w = sample_world()
    links = tmp_path / "links.json"
    links.write_text(json.dumps({"Other": ["Q1"]}))
    code, out = _run("link", str(_docs(tmp_path)), "--index", str(w.index), "--gold", str(links),
                     "--out", str(tmp_path / "l.json"))
    assert (code, out) == (1, f"Error: {links}: none of the 1 document titles (e.g. 'Anna') is in this link file (1 "
                              "titles, e.g. 'Other'); pass the link file made for these documents, or make one with "
                              "`envbench link DOCS --index DIR --out LINKS.json`\n")
    assert not (tmp_path / "l.json").exists()


def test_predictions_given_as_docs(tmp_path: Path) -> None:
    w = sample_world()
    preds = tmp_path / "preds.json"
    preds.write_text(json.dumps([{"title": "Anna", "h_idx": 0, "t_idx": 1, "r": "P551"}]))
    code, out = _run("link", str(preds), "--index", str(w.index), "--out", str(tmp_path / "l.json"))
    assert (code, out) == (1, f"Error: {preds}: holds predictions (a list of {{title, h_idx, t_idx, r}}), not DocRED "
                              "documents; give a DocRED-format file (title, sents, vertexSet) here, and predictions "
                              "to `envbench evaluate --pred`\n")
    assert not (tmp_path / "l.json").exists()


def test_unwritable_outputs_fail_before_any_work(tmp_path: Path) -> None:
    w = sample_world()
    blocker = tmp_path / "file.txt"
    blocker.write_text("")
    # the link file used to be written before the report failed
    code, out = _run("link", str(w.test), "--index", str(w.index), "--out", str(tmp_path / "l.json"),
                     "--report", str(blocker / "r.json"))
    assert (code, out) == (1, f"Error: --report {blocker / 'r.json'}: {blocker} is a file, not a folder; "
                              "choose another path\n")
    code, out = _run("link", str(w.test), "--index", str(w.index), "--out", str(blocker / "l.json"))
    assert (code, out) == (1, f"Error: --out {blocker / 'l.json'}: {blocker} is a file, not a folder; "
                              "choose another path\n")
    code, out = _run("link", str(w.test), "--index", str(w.index), "--out", str(tmp_path / "l.json"),
                     "--report", str(tmp_path / "l.json"))
    assert (code, out) == (1, f"Error: --report {tmp_path / 'l.json'}: it is also --out; give the report another "
                              f"name, e.g. --report {tmp_path / 'l'}.report.json\n")
    before = w.test.read_bytes()
    code, out = _run("link", str(w.test), "--index", str(w.index), "--out", str(tmp_path / "l.json"),
                     "--report", str(w.test))
    assert (code, out) == (1, f"Error: --report {w.test}: it is the input DOCS, which the report would overwrite; "
                              f"give the report another name, e.g. --report {tmp_path / 'l'}.report.json\n")
    assert w.test.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]


def test_the_documents_are_never_overwritten(tmp_path: Path) -> None:
    # regression (issue 17, item 2): no input may be an output
    w = sample_world()
    docs = _docs(tmp_path)
    before = docs.read_bytes()
    code, out = _run("link", str(docs), "--index", str(w.index), "--out", str(docs))
    assert (code, out) == (1, f"Error: --out {docs}: the input {docs} would be overwritten by this step's output "
                              f"{docs}; choose another output location or move the input\n")
    assert docs.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["docs.json"]


def test_no_documents(tmp_path: Path) -> None:
    w = sample_world()
    empty = write_docs(tmp_path / "empty.json", [])
    code, out = _run("link", str(empty), "--index", str(w.index), "--out", str(tmp_path / "l.json"))
    assert (code, out) == (1, f"Error: {empty}: holds no documents; give a DocRED-format file with at least "
                              "one document\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.json"]


def test_skip_invalid_says_how_many_and_why(tmp_path: Path) -> None:
    # regression (issue 17, item 14): skipped documents went without a word
    w = sample_world()
    docs = write_docs(tmp_path / "docs.json", [DOC, out_of_range("Bad")])
    code, out = _run("link", str(docs), "--index", str(w.index), "--out", str(tmp_path / "l.json"), "--skip-invalid")
    assert code == 0, out
    assert out.splitlines()[-2:] == [
        f"skipped 1 invalid document of {docs}; the first: document 1 'Bad': entity 1 mention 0: pos [3, 9] is out "
        "of range for sentence 0 (5 tokens); pos is a [start, end) token span inside the sentence; fix it",
        f"wrote {tmp_path / 'l.json'}",
    ]


@functools.cache
def _kb_index() -> tuple[Path, Path]:
    """A kb-from-corpus index of the sample world's test documents, and its links (Q1000000000000...)."""
    import atexit
    import shutil
    import tempfile

    from envbench.worlds.kb_from_corpus import kb_from_corpus
    from wikidata_index.ingest import ingest_dump

    root = Path(tempfile.mkdtemp(prefix="envbench-kb-tests-"))
    atexit.register(shutil.rmtree, root, True)
    kb_from_corpus([sample_world().test], root / "kb.json.gz", root / "kb-links.json")
    ingest_dump(root / "kb.json.gz", root / "kbidx", progress=False)
    return root / "kbidx", root / "kb-links.json"


def test_gold_links_made_for_another_index_are_refused(tmp_path: Path) -> None:
    # regression (issue 17, item 10): the sample world's links against a kb-from-corpus index passed
    w = sample_world()
    kbidx, _ = _kb_index()
    code, out = _run("link", str(w.test), "--index", str(kbidx), "--gold", str(w.links),
                     "--out", str(tmp_path / "l.json"))
    assert code == 1
    assert out == (f"Error: {w.links}: 219 of its 219 linked entities (100%) name items that are not in the index at "
                   f"{kbidx} (e.g. Q900000003); the link file was most likely made for another index (its QIDs run "
                   "Q900000003..Q900001128, the index's items Q1001576698746..Q1990156252678): pass the link file made "
                   "for this index (make-sample and kb-from-corpus write one beside each dump), or make one with "
                   f"`envbench link DOCS --index {kbidx} --out LINKS.json`\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_misaligned_linked_docred_gold_file_is_refused(tmp_path: Path) -> None:
    # regression (issue 17, item 11): documents whose mentions did not align were silently unlinked
    w = sample_world()
    records = json.loads((w.sample / "docs" / "test.linked-docred.json").read_text())
    for doc in records:
        for ent in doc["entities"]:
            for m in ent["mentions"]:
                m["pos"] = [m["pos"][0] + 1, m["pos"][1] + 1]
    shifted = tmp_path / "shifted.json"
    shifted.write_text(json.dumps(records))
    code, out = _run("link", str(w.test), "--index", str(w.index), "--gold", str(shifted),
                     "--out", str(tmp_path / "l.json"))
    assert code == 1, out
    assert out.startswith(f"Error: {shifted}: only ")
    assert out.endswith("of the 20 documents it shares with the DocRED file align with its mentions by (sent_id, pos) "
                        "(at least 80% needed); its mentions are not these documents' mentions: pass the Linked-DocRED "
                        "file made from these documents, or a {title: [QID or null per entity index]} link file\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shifted.json"]


def test_gaps_in_the_gold_links_are_warnings_with_counts(tmp_path: Path) -> None:
    # regression (issue 17, items 11 and 12): missing titles, missing entity_linking, garbage resources
    w = sample_world()
    records = json.loads((w.sample / "docs" / "test.linked-docred.json").read_text())
    dropped = records.pop(3)["title"]
    del records[0]["entities"][0]["entity_linking"]
    records[1]["entities"][0]["entity_linking"]["wikidata_resource"] = "not a qid"
    for ent in records[2]["entities"]:  # one document of the 19 left: every position shifted
        for m in ent["mentions"]:
            m["pos"] = [m["pos"][0] + 1, m["pos"][1] + 1]
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps(records))
    n_entities = sum(len(d["entities"]) for d in records)
    code, out = _run("link", str(w.test), "--index", str(w.index), "--gold", str(gold),
                     "--out", str(tmp_path / "l.json"))
    assert code == 0, out
    warnings = [line for line in out.splitlines() if line.startswith("warning: ")]
    assert warnings[:3] == [
        f"warning: {gold}: 1 of the 20 documents have no entry in this link file (e.g. {dropped!r}); their entities "
        "stay unlinked",
        f"warning: {gold}: 1 of its {n_entities} entities have no entity_linking (e.g. document "
        f"{records[0]['title']!r} entity 0); they stay unlinked",
        f"warning: {gold}: 1 of its {n_entities} entities have a wikidata_resource that is not a Wikidata item id "
        f"(e.g. 'not a qid' in document {records[1]['title']!r} entity 0); they stay unlinked",
    ]
    assert warnings[3].startswith(f"warning: {gold}: in 1 document fewer than 80% of the entities align with this "
                                  f"file's mentions by (sent_id, pos) (e.g. {records[2]['title']!r}: ")
    assert len(warnings) == 4 and out.endswith(f"wrote {tmp_path / 'l.json'}\n")
    (rate,) = [line for line in out.splitlines() if line.startswith("gold links ")]
    assert rate.startswith(f"gold links {gold}: Linked-DocRED, 19 of 20 documents, ")


def test_a_linked_docred_gold_file_reports_its_alignment_rate(tmp_path: Path) -> None:
    # issue 17, item 11: the alignment rate is reported per file
    w = sample_world()
    gold = w.sample / "docs" / "test.linked-docred.json"
    code, out = _run("link", str(w.test), "--index", str(w.index), "--gold", str(gold), "--out", str(tmp_path / "l.json"))
    assert code == 0, out
    assert out.splitlines()[-2:] == [
        f"gold links {gold}: Linked-DocRED, 20 of 20 documents, 219 of 322 entities linked; 100.0% of 322 entities "
        "aligned by mention position",
        f"wrote {tmp_path / 'l.json'}",
    ]


def test_a_file_no_link_run_wrote_is_named_by_its_own_option(tmp_path: Path) -> None:
    # the message named --out for the report's file (hostile-input probe)
    w = sample_world()
    mine = tmp_path / "rep.json"
    mine.write_text('{"mine": 1}')
    code, out = _run("link", str(w.test), "--index", str(w.index), "--out", str(tmp_path / "l.json"),
                     "--report", str(mine))
    assert (code, out) == (1, f"Error: --report {mine}: rep.json is there and no `link` run wrote it; move it, or "
                              "choose another --report, or pass --force to replace it\n")
    assert mine.read_text() == '{"mine": 1}' and not (tmp_path / "l.json").exists()
