from __future__ import annotations

import json
import shutil
from pathlib import Path

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
