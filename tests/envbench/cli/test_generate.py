from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from envbench.rename.generate import ALLOWED_NOTE
from tests.envbench.cli.docs import DOC, out_of_range, write_docs
from tests.envbench.cli.invoke import run as _run
from tests.envbench.cli.invoke import run_examples
from tests.envbench.index_fixture import sample_world


def _files(path: Path) -> list[str]:
    return sorted(p.name for p in path.rglob("*")) if path.exists() else []




def test_generate_command(tmp_path: Path) -> None:
    w = sample_world()  # `link` writing the link file: tests/envbench/cli/test_link.py
    code, out = _run("generate", "--allow-training-names", str(w.test), "--index", str(w.index), "--links", str(w.links),
                     "--seeds", "2", "--out", str(tmp_path / "env"), "--no-progress")
    assert code == 0, out
    assert out.startswith("20 documents x 2 seeds -> 40 documents")
    assert _files(tmp_path / "env") == ["manifest.json", "stats.json", "substitutions.parquet", "test_env.json"]
    code, out = _run("generate", "--allow-training-names", str(w.test), "--index", str(w.index), "--links", str(w.links),
                     "--seeds", "2", "--out", str(tmp_path / "env"))
    assert code == 0 and out == (f"{tmp_path / 'env'} is up to date (same inputs, index and parameters); "
                                 "nothing to do. Pass --force to regenerate.\n")


def test_help_has_examples() -> None:
    for cmd in ("generate",):
        code, out = _run(cmd, "--help")
        assert code == 0 and "Example" in out


def test_seeds_below_one(tmp_path: Path) -> None:
    w = sample_world()
    code, out = _run("generate", "--allow-training-names", str(w.test), "--index", str(w.index), "--seeds", "0", "--out", str(tmp_path / "o"))
    assert code == 1
    assert out == "Error: --seeds must be at least 1 (got 0); pass --seeds 5 for the Env-DocRED setting\n"
    assert _files(tmp_path / "o") == []


def test_seeds_past_the_bound_fail_before_any_work(tmp_path: Path) -> None:
    # --seeds 99999999999 had run on with no end in sight
    w = sample_world()
    for command in (["generate", "--allow-training-names", str(w.test), "--index", str(w.index)], ["demo"]):
        code, out = _run(*command, "--seeds", "99999999999", "--out", str(tmp_path / "o"))
        assert (code, out) == (1, "Error: --seeds must be at most 1000 (got 99999999999); pass --seeds 5 for the "
                                  "Env-DocRED setting\n")
        assert _files(tmp_path / "o") == []


def test_out_of_range_positions(tmp_path: Path) -> None:
    w = sample_world()
    docs = write_docs(tmp_path / "bad.json", [out_of_range()])
    code, out = _run("generate", "--allow-training-names", str(docs), "--index", str(w.index), "--out", str(tmp_path / "o"))
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
    code, out = _run("generate", "--allow-training-names", str(docs), "--index", str(w.index), "--links", str(links), "--out", str(tmp_path / "o"))
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
    code, out = _run("generate", "--allow-training-names", str(docs), "--index", str(index), "--out", str(tmp_path / "o"))
    assert code == 1
    assert out == (f"Error: index at {index} has no table 'property_constraints'; "
                   f"rerun `envbench ingest-dump DUMP --out {index} --force`\n")
    assert _files(tmp_path / "o") == []


def test_no_index(tmp_path: Path) -> None:
    docs = tmp_path / "docs.json"
    docs.write_text(json.dumps([DOC]))
    code, out = _run("generate", "--allow-training-names", str(docs), "--index", str(tmp_path / "none"), "--out", str(tmp_path / "o"))
    assert code == 1
    assert out == (f"Error: no index at {tmp_path / 'none'}; run `envbench ingest-dump DUMP --out "
                   f"{tmp_path / 'none'}` first\n")


def _docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs.json"
    docs.write_text(json.dumps([DOC]))
    return docs


def test_help_examples_run_when_pasted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for cmd in ("generate",):
        run_examples(cmd)
    assert (tmp_path / "data" / "twins").is_dir()


def test_link_file_for_other_documents(tmp_path: Path) -> None:
    w = sample_world()
    links = tmp_path / "links.json"
    links.write_text(json.dumps({"Other": ["Q1"]}))
    expected = (f"Error: {links}: none of the 1 document titles (e.g. 'Anna') is in this link file (1 titles, "
                "e.g. 'Other'); pass the link file made for these documents, or make one with "
                "`envbench link DOCS --index DIR --out LINKS.json`\n")
    code, out = _run("generate", "--allow-training-names", str(_docs(tmp_path)), "--index", str(w.index), "--links", str(links),
                     "--out", str(tmp_path / "o"))
    assert (code, out) == (1, expected) and _files(tmp_path / "o") == []


def test_docred_file_given_as_links(tmp_path: Path) -> None:
    w = sample_world()
    docs = _docs(tmp_path)
    code, out = _run("generate", "--allow-training-names", str(docs), "--index", str(w.index), "--links", str(docs), "--out", str(tmp_path / "o"))
    assert code == 1
    assert out == (f"Error: {docs}: not a link file: it holds DocRED documents (vertexSet) without links; pass "
                   "{title: [QID or null per entity index]} as `envbench link DOCS --index DIR --out LINKS.json` "
                   "writes, or a Linked-DocRED / Linked-Re-DocRED file\n")
    assert _files(tmp_path / "o") == []


def test_missing_link_file(tmp_path: Path) -> None:
    w = sample_world()
    missing = tmp_path / "nope.json"
    code, out = _run("generate", "--allow-training-names", str(_docs(tmp_path)), "--index", str(w.index), "--links", str(missing),
                     "--out", str(tmp_path / "o"))
    assert code == 1
    assert out == (f"Error: --links {missing}: no such file; check the path, or leave --links out to link the "
                   "entities with `envbench link`'s linker\n")
    assert _files(tmp_path / "o") == []


def test_predictions_given_as_docs(tmp_path: Path) -> None:
    w = sample_world()
    preds = tmp_path / "preds.json"
    preds.write_text(json.dumps([{"title": "Anna", "h_idx": 0, "t_idx": 1, "r": "P551"}]))
    code, out = _run("generate", "--allow-training-names", str(preds), "--index", str(w.index), "--out", str(tmp_path / "o"))
    assert code == 1
    assert out == (f"Error: {preds}: holds predictions (a list of {{title, h_idx, t_idx, r}}), not DocRED "
                   "documents; give a DocRED-format file (title, sents, vertexSet) here, and predictions to "
                   "`envbench evaluate --pred`\n")
    assert _files(tmp_path / "o") == []


def test_unwritable_outputs_fail_before_any_work(tmp_path: Path) -> None:
    w = sample_world()
    blocker = tmp_path / "file.txt"
    blocker.write_text("")
    code, out = _run("generate", "--allow-training-names", str(w.test), "--index", str(w.index), "--out", str(blocker / "env"))
    assert (code, out) == (1, f"Error: --out {blocker / 'env'}: {blocker} is a file, not a folder; "
                              "choose another path\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]


def test_bad_pool(tmp_path: Path) -> None:
    w = sample_world()
    code, out = _run("generate", "--allow-training-names", str(w.test), "--index", str(w.index), "--pool", "bad", "--out", str(tmp_path / "o"))
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


def test_demo_refuses_an_empty_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--out ""` ran the three steps in the current folder, among the user's files."""
    monkeypatch.chdir(tmp_path)
    code, out = _run("demo", "--out", "")
    assert (code, out) == (1, "Error: --out is empty; give the demo folder, e.g. --out runs/demo\n")
    assert list(tmp_path.iterdir()) == []


def test_no_documents(tmp_path: Path) -> None:
    w = sample_world()
    empty = write_docs(tmp_path / "empty.json", [])
    code, out = _run("generate", "--allow-training-names", str(empty), "--index", str(w.index), "--out", str(tmp_path / "o"))
    assert (code, out) == (1, f"Error: {empty}: holds no documents; give a DocRED-format file with at least "
                              "one document\n")
    invalid = write_docs(tmp_path / "invalid.json", [out_of_range()])
    code, out = _run("generate", "--allow-training-names", str(invalid), "--index", str(w.index), "--skip-invalid", "--out", str(tmp_path / "o"))
    assert (code, out) == (1, f"Error: {invalid}: all 1 documents are invalid and were skipped; run without "
                              "--skip-invalid to see the first problem\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.json", "invalid.json"]


def _links(tmp_path: Path) -> Path:
    links = tmp_path / "links.json"
    links.write_text(json.dumps({"Anna": [None, None]}))
    return links


def test_an_input_that_is_an_output_is_refused_and_kept(tmp_path: Path) -> None:
    # issue 17 #2: a link file copied to OUT/stats.json used to be overwritten by the stats
    w = sample_world()
    out = tmp_path / "o"
    out.mkdir()
    shutil.copy(w.links, out / "stats.json")
    before = (out / "stats.json").read_bytes()
    code, res = _run("generate", "--allow-training-names", str(w.test), "--index", str(w.index), "--links", str(out / "stats.json"),
                     "--seeds", "1", "--out", str(out))
    assert (code, res) == (1, f"Error: --out {out}: the input {out / 'stats.json'} would be overwritten by this "
                              f"step's output {out / 'stats.json'}; choose another output location or move the input\n")
    assert (out / "stats.json").read_bytes() == before and _files(out) == ["stats.json"]
    # an output of the previous run, which this run would remove, counts too
    code, res = _run("generate", "--allow-training-names", str(w.test), "--index", str(w.index), "--links", str(w.links), "--seeds", "1",
                     "--out", str(tmp_path / "env"))
    assert code == 0, res
    again = tmp_path / "env" / "test_env.json"
    kept = again.read_bytes()
    code, res = _run("generate", "--allow-training-names", str(again), "--index", str(w.index), "--seeds", "1", "--out", str(tmp_path / "env"))
    assert (code, res) == (1, f"Error: --out {tmp_path / 'env'}: the input {again} would be overwritten by this "
                              f"step's output {again}; choose another output location or move the input\n")
    assert again.read_bytes() == kept


def test_out_inside_the_index_is_refused(tmp_path: Path) -> None:
    w = sample_world()
    for out in (w.index, w.index / "names"):
        code, res = _run("generate", "--allow-training-names", str(_docs(tmp_path)), "--index", str(w.index), "--out", str(out))
        assert (code, res) == (1, f"Error: --out {out}: it is the index folder {w.index} or a folder inside it; "
                                  "choose an output folder outside the index\n")


def test_a_manifest_that_is_not_an_object_is_replaced_with_force(tmp_path: Path) -> None:
    # issue 17 #5: `echo '[1,2]' > OUT/manifest.json` made the up-to-date check raise AttributeError; no step
    # writes such a manifest, so it is somebody's file: refused in one line, replaced with --force
    w = sample_world()
    out = tmp_path / "o"
    out.mkdir()
    (out / "manifest.json").write_text("[1,2]\n")
    args = ["generate", "--allow-training-names", str(_docs(tmp_path)), "--index", str(w.index), "--links", str(_links(tmp_path)),
            "--seeds", "1", "--out", str(out)]
    code, res = _run(*args)
    assert (code, res) == (1, f"Error: --out {out}: manifest.json there is not a manifest an envbench step wrote "
                              "(not a JSON object); move it, or choose another --out, or pass --force to replace it\n")
    code, res = _run(*args, "--force")
    assert code == 0, res
    assert res.startswith("1 document x 1 seed -> 1 document in ")  # regression (issue 33): "1 documents x 1 seeds"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["step"] == "generate" and [o["name"] for o in manifest["outputs"]] == \
        ["docs_env.json", "stats.json", "substitutions.parquet"]


def test_skip_invalid_says_how_many_and_why(tmp_path: Path) -> None:
    # issue 17 #14: --skip-invalid dropped documents without a word on the console
    w = sample_world()
    docs = write_docs(tmp_path / "docs.json", [DOC, out_of_range("Anna 2")])
    code, res = _run("generate", "--allow-training-names", str(docs), "--index", str(w.index), "--links", str(_links(tmp_path)),
                     "--seeds", "1", "--skip-invalid", "--out", str(tmp_path / "o"))
    assert code == 0, res
    assert (f"warning: skipped 1 invalid document of {docs}; the first: document 1 'Anna 2': entity 1 mention 0: "
            "pos [3, 9] is out of range for sentence 0 (5 tokens); pos is a [start, end) token span inside the "
            "sentence; fix it") in res.splitlines()
    stats = json.loads((tmp_path / "o" / "stats.json").read_text())
    assert stats["documents"] == 1 and stats["validation"]["skipped_documents"] == 1


def test_staging_left_by_a_killed_run_is_removed_and_a_users_folder_kept(tmp_path: Path) -> None:
    # issue 17 #24: a SIGKILLed generate left its staging folder, which no rerun removed; the fix removed
    # every ".generate-*" and ".staging-generate-*", the user's own folders of such names among them
    from etl.step import mark_staging

    w = sample_world()
    out = tmp_path / "o"
    killed = out / ".staging-generate-x9y8"  # what a killed run leaves: the folder holds the step's marker
    killed.mkdir(parents=True)
    mark_staging(killed, "generate")
    (killed / "docs_env.json").write_text("[")
    for mine in (".generate-backup", ".staging-generate-mine"):
        (out / mine).mkdir()
        (out / mine / "keep.txt").write_text("precious")
    code, res = _run("generate", "--allow-training-names", str(_docs(tmp_path)), "--index", str(w.index), "--links", str(_links(tmp_path)),
                     "--seeds", "1", "--out", str(out))
    assert code == 0, res
    assert sorted(p.name for p in out.iterdir()) == [".generate-backup", ".staging-generate-mine", "docs_env.json",
                                                      "manifest.json", "stats.json", "substitutions.parquet"]
    assert [(out / m / "keep.txt").read_text() for m in (".generate-backup", ".staging-generate-mine")] == \
        ["precious"] * 2


def test_a_second_run_into_the_same_out_fails_at_once(tmp_path: Path) -> None:
    # issue 17 #25: two runs into one OUT both reported success and the last silently won
    import fcntl
    import os

    w = sample_world()
    out = tmp_path / "o"
    out.mkdir()
    fd = os.open(out, os.O_RDONLY)  # what the first run holds while it writes
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        code, res = _run("generate", "--allow-training-names", str(_docs(tmp_path)), "--index", str(w.index), "--links",
                         str(_links(tmp_path)), "--seeds", "1", "--out", str(out))
    finally:
        os.close(fd)
    assert (code, res) == (1, f"Error: --out {out}: another run is writing there now; wait for it to end, or "
                              "choose another output location\n")
    assert _files(out) == []


@pytest.mark.slow
def test_a_sigkilled_run_leaves_nothing_a_rerun_keeps(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    w = sample_world()
    out = tmp_path / "o"
    args = ["generate", "--allow-training-names", str(w.test), "--index", str(w.index), "--links", str(w.links), "--no-progress",
            "--out", str(out)]
    proc = subprocess.Popen([sys.executable, "-m", "envbench", *args, "--seeds", "60"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not list(out.glob(".staging-generate-*")) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None, "generate ended before it staged anything; give it more work"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert list(out.glob(".staging-generate-*")) and not (out / "manifest.json").exists()
    code, res = _run(*args, "--seeds", "1")
    assert code == 0, res
    assert _files(out) == ["manifest.json", "stats.json", "substitutions.parquet", "test_env.json"]


def _renamed_mention_keys(out: Path) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Both keys of every mention of an entity given a new item, read back from the written files."""
    import pyarrow.parquet as pq

    from envbench.rename.novelty import keys_of

    linked = {(r["title"], r["entity"]) for r in pq.read_table(out / "substitutions.parquet").to_pylist()
              if r["kind"] == "linked"}
    return [keys_of(d, m) for d in json.loads((out / "test_env.json").read_text())
            for ei, e in enumerate(d["vertexSet"]) if (d["title"], ei) in linked for m in e]


def test_exclude_names_from_keeps_training_names_out(tmp_path: Path) -> None:
    from envbench.rename.novelty import excluded_names, seen

    w = sample_world()
    base = ["generate", str(w.test), "--index", str(w.index), "--links", str(w.links), "--seeds", "2", "--no-progress"]
    code, res = _run(*base, "--out", str(tmp_path / "plain"))
    assert (code, res.split(" (")[0]) == (1, "Error: --pool eval builds a benchmark of names novel to the models it "
                                             "tests: pass the documents they train on with --exclude-names-from "
                                             "TRAIN.json")
    assert not (tmp_path / "plain").exists()
    code, res = _run(*base, "--allow-training-names", "--out", str(tmp_path / "plain"))
    assert code == 0 and "names seen" not in res, res
    assert f"warning: {ALLOWED_NOTE}\n" in res
    train = excluded_names([w.train])
    plain = _renamed_mention_keys(tmp_path / "plain")
    assert sum(seen(k, train) for k in plain) > 0  # without the option, training names do come up
    plain_stats = json.loads((tmp_path / "plain" / "stats.json").read_text())["names_seen"]
    assert plain_stats["exclude_names_from"] == [] and plain_stats["renamed"]["in_excluded"] is None
    assert plain_stats["training_names"] == "allowed"
    assert json.loads((tmp_path / "plain" / "manifest.json").read_text())["parameters"]["allow_training_names"]

    out = tmp_path / "novel"
    code, res = _run(*base, "--exclude-names-from", str(w.train), "--out", str(out))
    assert code == 0, res
    assert "names seen in train.json: 0.0% of 588 renamed mentions (source mentions: 53.7%)\n" in res
    novel = _renamed_mention_keys(out)
    assert len(novel) == 588 and not any(seen(k, train) for k in novel)
    stats = json.loads((out / "stats.json").read_text())["names_seen"]
    assert stats["renamed"]["mentions"] == 588 and stats["renamed"]["in_excluded"] == 0
    assert stats["training_names"] == "excluded"
    assert (stats["source"]["in_excluded"], stats["source"]["mentions"]) == (176, 328)
    code, res = _run(*base, "--exclude-names-from", str(w.train), "--out", str(tmp_path / "again"))
    assert code == 0, res
    for name in ("test_env.json", "substitutions.parquet"):  # byte-deterministic with the option too
        assert (tmp_path / "again" / name).read_bytes() == (out / name).read_bytes()
    man = json.loads((out / "manifest.json").read_text())
    assert [i["name"] for i in man["inputs"]] == ["test.json", "links.json", "train.json"]
    assert man["parameters"]["exclude_names_from"] == ["train.json"]
    # the excluded file is an input: the same one is up to date, an edited one is not
    code, res = _run(*base, "--exclude-names-from", str(w.train), "--out", str(out))
    assert (code, res.split(";")[0]) == (0, f"{out} is up to date (same inputs, index and parameters)")
    edited = tmp_path / "train.json"
    edited.write_text(json.dumps(json.loads(w.train.read_text())[:1]))
    code, res = _run(*base, "--exclude-names-from", str(edited), "--out", str(out))
    assert code == 0 and not res.startswith(f"{out} is up to date"), res


def test_exclude_names_from_errors(tmp_path: Path) -> None:
    w = sample_world()
    base = ["generate", str(w.test), "--index", str(w.index), "--links", str(w.links), "--seeds", "1", "--no-progress"]
    code, res = _run(*base, "--allow-training-names", "--exclude-names-from", str(w.train), "--out", str(tmp_path / "o"))
    assert (code, res) == (1, "Error: --allow-training-names and --exclude-names-from contradict each other: the "
                              "second keeps the new names off those files; give one of them\n")
    missing = tmp_path / "nope.json"
    code, res = _run(*base, "--exclude-names-from", str(missing), "--out", str(tmp_path / "o"))
    assert (code, res) == (1, f"Error: --exclude-names-from {missing}: no such file; give a DocRED-format file "
                              "whose mention names the new names must avoid (a model's training split)\n")
    assert _files(tmp_path / "o") == []
    empty = write_docs(tmp_path / "empty.json", [])
    code, res = _run(*base, "--exclude-names-from", str(empty), "--out", str(tmp_path / "o"))
    assert (code, res) == (1, f"Error: {empty}: holds no documents; give a DocRED-format file with at least one "
                              "document\n")
    assert _files(tmp_path / "o") == []
    # an output of the folder (here the previous run's benchmark) is refused, and kept
    out = tmp_path / "env"
    code, res = _run(*base, "--exclude-names-from", str(w.train), "--out", str(out))
    assert code == 0, res
    env = out / "test_env.json"
    kept = env.read_bytes()
    code, res = _run(*base, "--exclude-names-from", str(env), "--out", str(out))
    assert (code, res) == (1, f"Error: --out {out}: the input {env} would be overwritten by this step's output "
                              f"{env}; choose another output location or move the input\n")
    assert env.read_bytes() == kept


def test_twins_are_drawn_from_the_train_pool_only(tmp_path: Path) -> None:
    # --twins --pool eval was accepted: twins named from the benchmarks' pool (hostile-input probe)
    w = sample_world()
    code, out = _run("generate", "--allow-training-names", str(w.train), "--index", str(w.index), "--links", str(w.links), "--seeds", "1",
                     "--twins", "--out", str(tmp_path / "t"), "--no-progress")
    assert (code, out) == (1, "Error: --twins draws EVRT training twins, whose names no benchmark may share; pass "
                              "--pool train\n")
    assert not (tmp_path / "t").exists()
    code, out = _run("generate", str(w.train), "--index", str(w.index), "--links", str(w.links), "--seeds", "1",
                     "--pool", "train", "--twins", "--out", str(tmp_path / "t"), "--no-progress")
    assert (code, out) == (1, "Error: --twins: pass the documents the models trained on these twins are scored on "
                              "as --exclude-names-from (the test file and its Env version), so that no twin takes "
                              "one of their names\n")
    assert not (tmp_path / "t").exists()
