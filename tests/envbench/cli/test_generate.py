from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from envbench.cli import cli
from tests.envbench.index_fixture import mention, sample_world

DOC = {
    "title": "Anna",
    "sents": [["Anna", "lives", "in", "Rome", "."]],
    "vertexSet": [[mention("Anna", 0, [0, 1], "PER")], [mention("Rome", 0, [3, 4], "LOC")]],
    "labels": [{"h": 0, "t": 1, "r": "P551", "evidence": [0]}],
}


def _files(path: Path) -> list[str]:
    return sorted(p.name for p in path.rglob("*")) if path.exists() else []


def _run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, list(args))
    return res.exit_code, res.output


def test_generate_and_link_commands(tmp_path: Path) -> None:
    w = sample_world()
    code, out = _run("link", str(w.test), "--index", str(w.index), "--out", str(tmp_path / "l.json"),
                     "--gold", str(w.links))
    assert code == 0, out
    assert "against gold" in out and (tmp_path / "l.json").is_file()
    code, out = _run("generate", str(w.test), "--index", str(w.index), "--links", str(tmp_path / "l.json"),
                     "--seeds", "2", "--out", str(tmp_path / "env"), "--no-progress")
    assert code == 0, out
    assert out.startswith("20 documents x 2 seeds -> 40 documents")
    assert _files(tmp_path / "env") == ["manifest.json", "stats.json", "substitutions.parquet", "test_env.json"]
    code, out = _run("generate", str(w.test), "--index", str(w.index), "--links", str(tmp_path / "l.json"),
                     "--seeds", "2", "--out", str(tmp_path / "env"))
    assert code == 0 and out == (f"{tmp_path / 'env'} is up to date (same inputs, index and parameters); "
                                 "nothing to do. Pass --force to regenerate.\n")


def test_help_has_examples() -> None:
    for cmd in ("generate", "link"):
        code, out = _run(cmd, "--help")
        assert code == 0 and "Example" in out


def test_seeds_below_one(tmp_path: Path) -> None:
    w = sample_world()
    code, out = _run("generate", str(w.test), "--index", str(w.index), "--seeds", "0", "--out", str(tmp_path / "o"))
    assert code == 1
    assert out == "Error: --seeds must be at least 1 (got 0); pass --seeds 5 for the Env-DocRED setting\n"
    assert _files(tmp_path / "o") == []


def test_out_of_range_positions(tmp_path: Path) -> None:
    w = sample_world()
    bad = json.loads(json.dumps(DOC))
    bad["vertexSet"][1][0]["pos"] = [3, 9]
    docs = tmp_path / "bad.json"
    docs.write_text(json.dumps([bad]))
    code, out = _run("generate", str(docs), "--index", str(w.index), "--out", str(tmp_path / "o"))
    assert code == 1
    assert out == (f"Error: {docs}: document 0 'Anna': entity 1 mention 0: pos [3, 9] is out of range for "
                   "sentence 0 (5 tokens); pos is a [start, end) token span inside the sentence; fix it; "
                   "or pass --skip-invalid to skip invalid documents\n")
    assert _files(tmp_path / "o") == []


def test_link_count_mismatch(tmp_path: Path) -> None:
    w = sample_world()
    docs = tmp_path / "docs.json"
    docs.write_text(json.dumps([DOC]))
    links = tmp_path / "links.json"
    links.write_text(json.dumps({"Anna": ["Q1"]}))
    code, out = _run("generate", str(docs), "--index", str(w.index), "--links", str(links), "--out", str(tmp_path / "o"))
    assert code == 1
    assert out == (f"Error: {links}: document 0 'Anna': the link file lists 1 entities but the document has 2; "
                   "give a QID or null for each entity index (or regenerate it with `envbench link`)\n")
    assert _files(tmp_path / "o") == []


def test_missing_index_table(tmp_path: Path) -> None:
    w = sample_world()
    index = tmp_path / "index"
    shutil.copytree(w.index, index)
    shutil.rmtree(index / "property_constraints")
    docs = tmp_path / "docs.json"
    docs.write_text(json.dumps([DOC]))
    code, out = _run("generate", str(docs), "--index", str(index), "--out", str(tmp_path / "o"))
    assert code == 1
    assert out == (f"Error: index at {index} has no table 'property_constraints'; "
                   f"rerun `envbench ingest-dump DUMP --out {index} --force`\n")
    assert _files(tmp_path / "o") == []


def test_no_index(tmp_path: Path) -> None:
    docs = tmp_path / "docs.json"
    docs.write_text(json.dumps([DOC]))
    code, out = _run("generate", str(docs), "--index", str(tmp_path / "none"), "--out", str(tmp_path / "o"))
    assert code == 1
    assert out == (f"Error: no index at {tmp_path / 'none'}; run `envbench ingest-dump DUMP --out "
                   f"{tmp_path / 'none'}` first\n")


def _docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs.json"
    docs.write_text(json.dumps([DOC]))
    return docs


def test_help_examples_run_when_pasted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for cmd in ("link", "generate"):
        code, out = _run(cmd, "--help")
        block = out.split("Example", 1)[1].split("\nOptions:", 1)[0].split("\n", 1)[1]
        lines = block.replace("\\\n", " ").strip().splitlines()
        assert lines and all(line.split()[0] == "envbench" for line in lines), block
        for line in lines:
            code, res = _run(*shlex.split(line)[1:])
            assert code == 0, (line, res)
    assert (tmp_path / "data" / "test.links.json").is_file() and (tmp_path / "data" / "twins").is_dir()


def test_link_file_for_other_documents(tmp_path: Path) -> None:
    w = sample_world()
    links = tmp_path / "links.json"
    links.write_text(json.dumps({"Other": ["Q1"]}))
    expected = (f"Error: {links}: none of the 1 document titles (e.g. 'Anna') is in this link file (1 titles, "
                "e.g. 'Other'); pass the link file made for these documents, or make one with "
                "`envbench link DOCS --index DIR --out LINKS.json`\n")
    code, out = _run("generate", str(_docs(tmp_path)), "--index", str(w.index), "--links", str(links),
                     "--out", str(tmp_path / "o"))
    assert (code, out) == (1, expected) and _files(tmp_path / "o") == []
    code, out = _run("link", str(_docs(tmp_path)), "--index", str(w.index), "--gold", str(links),
                     "--out", str(tmp_path / "l.json"))
    assert (code, out) == (1, expected) and not (tmp_path / "l.json").exists()


def test_docred_file_given_as_links(tmp_path: Path) -> None:
    w = sample_world()
    docs = _docs(tmp_path)
    code, out = _run("generate", str(docs), "--index", str(w.index), "--links", str(docs), "--out", str(tmp_path / "o"))
    assert code == 1
    assert out == (f"Error: {docs}: not a link file: it holds DocRED documents (vertexSet) without links; pass "
                   "{title: [QID or null per entity index]} as `envbench link DOCS --index DIR --out LINKS.json` "
                   "writes, or a Linked-DocRED / Linked-Re-DocRED file\n")
    assert _files(tmp_path / "o") == []


def test_missing_link_file(tmp_path: Path) -> None:
    w = sample_world()
    missing = tmp_path / "nope.json"
    code, out = _run("generate", str(_docs(tmp_path)), "--index", str(w.index), "--links", str(missing),
                     "--out", str(tmp_path / "o"))
    assert code == 1
    assert out == (f"Error: --links {missing}: no such file; check the path, or leave --links out to link the "
                   "entities with `envbench link`'s linker\n")
    assert _files(tmp_path / "o") == []


def test_predictions_given_as_docs(tmp_path: Path) -> None:
    w = sample_world()
    preds = tmp_path / "preds.json"
    preds.write_text(json.dumps([{"title": "Anna", "h_idx": 0, "t_idx": 1, "r": "P551"}]))
    for args in (["generate", "--out", str(tmp_path / "o")], ["link", "--out", str(tmp_path / "l.json")]):
        code, out = _run(args[0], str(preds), "--index", str(w.index), *args[1:])
        assert code == 1
        assert out == (f"Error: {preds}: holds predictions (a list of {{title, h_idx, t_idx, r}}), not DocRED "
                       "documents; give a DocRED-format file (title, sents, vertexSet) here, and predictions to "
                       "`envbench evaluate --pred`\n")
    assert _files(tmp_path / "o") == [] and not (tmp_path / "l.json").exists()


def test_unwritable_outputs_fail_before_any_work(tmp_path: Path) -> None:
    w = sample_world()
    blocker = tmp_path / "file.txt"
    blocker.write_text("")
    code, out = _run("generate", str(w.test), "--index", str(w.index), "--out", str(blocker / "env"))
    assert (code, out) == (1, f"Error: --out {blocker / 'env'}: {blocker} is a file, not a folder; "
                              "choose another path\n")
    # the link file used to be written before the report failed
    code, out = _run("link", str(w.test), "--index", str(w.index), "--out", str(tmp_path / "l.json"),
                     "--report", str(blocker / "r.json"))
    assert (code, out) == (1, f"Error: --report {blocker / 'r.json'}: {blocker} is a file, not a folder; "
                              "choose another path\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]


def test_bad_pool(tmp_path: Path) -> None:
    w = sample_world()
    code, out = _run("generate", str(w.test), "--index", str(w.index), "--pool", "bad", "--out", str(tmp_path / "o"))
    assert code == 2 and out.endswith("Error: Invalid value for '--pool': 'bad' is not one of 'eval', 'train'.\n")
    assert _files(tmp_path / "o") == []


def test_demo_bad_options(tmp_path: Path) -> None:
    code, out = _run("demo", "--out", str(tmp_path / "d"), "--seeds", "0")
    assert (code, out) == (1, "Error: --seeds must be at least 1 (got 0); pass --seeds 5 for the Env-DocRED setting\n")
    blocker = tmp_path / "file.txt"
    blocker.write_text("")
    code, out = _run("demo", "--out", str(blocker))
    assert (code, out) == (1, f"Error: --out {blocker}: a file has that name; choose a folder path\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]  # nothing half-built


def test_no_documents(tmp_path: Path) -> None:
    w = sample_world()
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    for args in (["generate", "--out", str(tmp_path / "o")], ["link", "--out", str(tmp_path / "l.json")]):
        code, out = _run(args[0], str(empty), "--index", str(w.index), *args[1:])
        assert (code, out) == (1, f"Error: {empty}: holds no documents; give a DocRED-format file with at least "
                                  "one document\n")
    bad = json.loads(json.dumps(DOC))
    bad["vertexSet"][1][0]["pos"] = [3, 9]
    invalid = tmp_path / "invalid.json"
    invalid.write_text(json.dumps([bad]))
    code, out = _run("generate", str(invalid), "--index", str(w.index), "--skip-invalid", "--out", str(tmp_path / "o"))
    assert (code, out) == (1, f"Error: {invalid}: all 1 documents are invalid and were skipped; run without "
                              "--skip-invalid to see the first problem\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.json", "invalid.json"]
