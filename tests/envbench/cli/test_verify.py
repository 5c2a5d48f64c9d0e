"""`envbench lock` and `envbench verify`: exit codes and exact messages (the logic: tests/envbench/rename/test_lock.py)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import orjson
import pytest

from etl.io import sha256_file
from tests.envbench.cli.invoke import run as _run
from tests.envbench.cli.invoke import run_examples
from tests.envbench.index_fixture import sample_env, sample_world


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    w = sample_world()
    out = sample_env(tmp_path_factory.mktemp("cli-verify") / "env")
    code, text = _run("lock", str(out), "--index", str(w.index))
    assert (code, text) == (0, f"wrote {out / 'test_env.lock.json'}\n")
    return out


def _verify(lock: Path, *extra: str) -> tuple[int, str]:
    w = sample_world()
    return _run("verify", str(lock), "--docs", str(w.test), "--index", str(w.index), "--links", str(w.links), *extra)


def test_verify_passes_on_an_unchanged_tree(env: Path) -> None:
    code, out = _verify(env / "test_env.lock.json")
    assert code == 0, out
    assert out.startswith(f"OK: {env / 'test_env.lock.json'}: regenerated stats.json, substitutions.parquet, "
                          "test_env.json identical to the lock in ")


def test_verify_names_an_edited_document(env: Path, tmp_path: Path) -> None:
    pub = tmp_path / "pub"
    shutil.copytree(env, pub)
    docs = json.loads((pub / "test_env.json").read_text())
    doc = docs[3]
    old = doc["vertexSet"][0][0]["name"]
    doc["vertexSet"][0][0]["name"] = "X"
    (pub / "test_env.json").write_bytes(orjson.dumps(docs, option=orjson.OPT_SORT_KEYS))
    code, out = _verify(env / "test_env.lock.json", "--published", str(pub))
    assert code == 1
    assert out.splitlines() == [
        f"FAIL: {env / 'test_env.lock.json'}: the regenerated benchmark differs from the lock",
        f"published test_env.json: {doc['title']!r} entity 0 mention 0: name 'X' in the published file, "
        f"{old!r} in the lock's run",
    ]


def test_verify_input_mismatch(env: Path, tmp_path: Path) -> None:
    w = sample_world()
    links = tmp_path / "links.json"
    links.write_text(w.links.read_text().replace("Q9", "Q8", 1))
    lock = json.loads((env / "test_env.lock.json").read_text())
    code, out = _run("verify", str(env / "test_env.lock.json"), "--docs", str(w.test), "--index", str(w.index),
                     "--links", str(links))
    assert code == 1
    assert out == (f"Error: --links {links}: sha256 {sha256_file(links)[:12]}... differs from the lock's (links.json, "
                   f"{lock['inputs']['links']['sha256'][:12]}...); pass the file the lock was made from\n")


def test_verify_missing_published_folder(env: Path, tmp_path: Path) -> None:
    code, out = _verify(env / "test_env.lock.json", "--published", str(tmp_path / "none"))
    assert (code, out) == (1, f"Error: --published {tmp_path / 'none'}: no such folder; give the folder of the "
                              "published outputs\n")


def test_lock_of_a_folder_without_manifest(tmp_path: Path) -> None:
    code, out = _run("lock", str(tmp_path), "--index", str(sample_world().index))
    assert (code, out) == (1, f"Error: {tmp_path}: no readable manifest.json; run `envbench generate ... --out "
                              f"{tmp_path}` first\n")


def test_help_examples_run_when_pasted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for cmd in ("lock", "verify"):
        run_examples(cmd)
    assert (tmp_path / "data" / "env" / "test_env.lock.json").is_file()


def test_an_edited_lock_fails_and_a_tampered_file_is_named_for_itself(env: Path, tmp_path: Path) -> None:
    """issue 29: a lock whose per-document hash was edited verified OK, and then verify named the
    document whose hash was edited instead of the one really tampered with."""
    lock = json.loads((env / "test_env.lock.json").read_text())
    entry = next(e for e in lock["outputs"] if e.get("kind") == "documents")
    title, real = entry["documents"][3]
    entry["documents"][3][1] = "0123456789abcdef"
    edited = tmp_path / "edited.lock.json"
    edited.write_text(json.dumps(lock))
    code, out = _verify(edited)
    assert code == 1
    assert out.splitlines()[1] == (
        f'lock: test_env.json: document 3 ({title!r}) is ["{title}","0123456789abcdef"] in the lock, but the file '
        f'with the lock\'s sha256 gives ["{title}","{real}"]; the lock was edited; restore it, or rebuild it with '
        "`envbench lock OUT --index DIR`")
    pub = tmp_path / "pub"
    shutil.copytree(env, pub)
    docs = json.loads((pub / "test_env.json").read_text())
    docs[7]["sents"][0][0] = "TAMPERED"
    (pub / "test_env.json").write_bytes(orjson.dumps(docs))
    code, out = _verify(edited, "--published", str(pub))
    assert code == 1
    assert out.splitlines()[2].startswith(f"published test_env.json: {docs[7]['title']!r} sentence 0 token 0: "
                                          "'TAMPERED' in the published file, ")
    assert out.splitlines()[2].endswith(" in the lock's run")


def test_lock_never_writes_over_what_it_pins(env: Path) -> None:
    before = {p.name: p.read_bytes() for p in env.iterdir() if p.is_file()}
    for name, what in (("test_env.json", "an output"), ("manifest.json", "the manifest"),
                       ("substitutions.parquet", "an output")):
        w = sample_world()
        code, out = _run("lock", str(env), "--index", str(w.index), "--out", str(env / name))
        assert code == 1
        assert out == (f"Error: --out {env / name}: that is {what} of {env} the lock describes; write the lock "
                       f"elsewhere (default: {env / 'test_env.lock.json'})\n")
    assert {p.name: p.read_bytes() for p in env.iterdir() if p.is_file()} == before


def test_lock_never_writes_over_its_inputs_the_index_or_a_device(env: Path, tmp_path: Path) -> None:
    w = sample_world()
    docs = tmp_path / "docs.json"
    shutil.copy(w.test, docs)
    for target in (docs, Path(w.index) / "manifest.json", Path(w.index) / "new.lock.json"):
        before = target.read_bytes() if target.exists() else None
        code, out = _run("lock", str(env), "--index", str(w.index), "--out", str(target))
        assert code == 1
        if before is None:
            assert out == (f"Error: --out {target}: inside the index {w.index}, which the lock describes; write "
                           f"the lock elsewhere (default: {env / 'test_env.lock.json'})\n")
            assert not target.exists()
        else:
            assert out == (f"Error: --out {target}: that file is there and is not a lock (envbench-lock/1); write "
                           f"the lock to a new path (default: {env / 'test_env.lock.json'}), or move that file\n")
            assert target.read_bytes() == before
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    code, out = _run("lock", str(env), "--index", str(w.index), "--out", str(fifo))
    assert (code, out) == (1, f"Error: --out {fifo}: that file is there and is not a lock (envbench-lock/1); write "
                              f"the lock to a new path (default: {env / 'test_env.lock.json'}), or move that file\n")
    # a lock is replaced by a new one
    lock = tmp_path / "x.lock.json"
    for _ in range(2):
        assert _run("lock", str(env), "--index", str(w.index), "--out", str(lock)) == (0, f"wrote {lock}\n")


def test_verify_of_a_hostile_lock_or_published_folder_is_one_line(env: Path, tmp_path: Path) -> None:
    lock = json.loads((env / "test_env.lock.json").read_text())
    fix = "restore it, or rebuild it with `envbench lock OUT --index DIR`"
    kinds = [e["kind"] for e in lock["outputs"]]
    docs_at, rows_at = kinds.index("documents"), kinds.index("parquet")
    for change, message in (({"outputs": 5}, "'outputs' should be a list, not int"),
                            ({"outputs": [{"name": "../x.json"}]}, "outputs[0] is not an output entry with a plain "
                                                                   "file name"),
                            ({"parameters": {**lock["parameters"], "seeds": 10**9}},
                             "parameters.seeds is 1000000000, not a count from 1 to 1000"),
                            ({"parameters": {**lock["parameters"], "seeds": "abc"}},
                             "parameters.seeds is 'abc', not a count from 1 to 1000"),
                            ({"parameters": {**lock["parameters"], "pool": "hack"}},
                             'parameters.pool is \'hack\', not "eval" or "train"'),
                            ({"parameters": {**lock["parameters"], "twins": "yes"}},
                             "parameters.twins is 'yes', not true or false"),
                            # found by a hostile-input probe: these ended in tracebacks or verified OK
                            ({"inputs": {**lock["inputs"], "docs": None}},
                             "inputs.docs is not an input entry (an object with a name and a sha256)"),
                            ({"outputs": [{**e, "kind": "parquet"} for e in lock["outputs"]]},
                             "outputs[0] (stats.json) is not an output entry of the kind its file name has, with "
                             "a sha256"),
                            ({"outputs": [{**e, "documents": "x"} if e["kind"] == "documents" else e
                                          for e in lock["outputs"]]}, f"outputs[{docs_at}].documents is 'x', not a list"),
                            ({"outputs": [{**e, "documents": [[1, 2]]} if e["kind"] == "documents" else e
                                          for e in lock["outputs"]]},
                             f"outputs[{docs_at}].documents holds entries other than [title, hash]"),
                            ({"outputs": [{**e, "rows": "x"} if e["kind"] == "parquet" else e
                                          for e in lock["outputs"]]}, f"outputs[{rows_at}].rows is 'x', not a count"),
                            # found by a hostile-input probe: generate's own message, naming its options --twins
                            # and --seeds, and a window no version could have run reported as a changed parameter
                            ({"parameters": {**lock["parameters"], "twins": True}},
                             "the lock's parameters are inconsistent: twins true needs seeds 1 and pool \"train\", "
                             "but the lock has seeds 5 and pool 'eval'"),
                            ({"parameters": {**lock["parameters"], "twins": True, "seeds": 1}},
                             "the lock's parameters are inconsistent: twins true needs seeds 1 and pool \"train\", "
                             "but the lock has seeds 1 and pool 'eval'"),
                            ({"parameters": {**lock["parameters"], "window": 0}},
                             "parameters.window is 0, not a count of at least 1"),
                            ({"parameters": {**lock["parameters"], "window": -1}},
                             "parameters.window is -1, not a count of at least 1"),
                            ({"parameters": {**lock["parameters"], "max_windows": "4"}},
                             "parameters.max_windows is '4', not a count of at least 1")):
        edited = tmp_path / "edited.lock.json"
        edited.write_text(json.dumps({**lock, **change}))
        assert _verify(edited) == (1, f"Error: {edited}: {message}; {fix}\n")
    # a lock whose parameters this version would not run (an edited window, a key it does not know) is no
    # verdict, even though the regeneration's outputs match
    for change, diff in (({"window": 7}, "window 7 in the lock, 4 now"),
                         ({"surprise": 1}, "surprise 1 in the lock, null now")):
        edited = tmp_path / "edited.lock.json"
        edited.write_text(json.dumps({**lock, "parameters": {**lock["parameters"], **change}}))
        code, out = _verify(edited)
        assert code == 1 and f"parameters that differ from the lock's: {diff}" in out
    # published files that cannot be read are named, and so are outputs missing from --published
    pub = tmp_path / "pub"
    shutil.copytree(env, pub)
    (pub / "substitutions.parquet").write_text("hello")
    (pub / "stats.json").unlink()
    code, out = _verify(env / "test_env.lock.json", "--published", str(pub))
    assert code == 1
    assert out.splitlines()[1:] == [
        f"published {pub / 'stats.json'}: not there, though the lock lists it; give the folder that holds the "
        "published outputs",
        f"published {pub / 'substitutions.parquet'}: cannot be read (ArrowInvalid: Parquet file size is 5 bytes, "
        "smaller than the minimum file footer (8 bytes)); restore it from the lock's run",
    ]
