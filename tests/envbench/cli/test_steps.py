"""Steps that share a folder (etl/step.py, the deletion rule): a step never removes or replaces what
another step wrote. Every folder step is run into the output folder of every other folder step; the
command fails with one line naming the step that wrote the folder, and every file there is unchanged.
One-file steps are run with a planted manifest that names files outside their folder."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from etl.io import sha256_file
from tests.envbench.cli.invoke import run as _run
from tests.envbench.index_fixture import sample_world


def _snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One output folder of each folder step, made from the sample world."""
    w = sample_world()
    root = tmp_path_factory.mktemp("steps")
    sample = root / "sample"
    assert _run("make-sample", "--out", sample)[0] == 0
    index = root / "index"
    code, out = _run("ingest-dump", sample / "wikidata-sample.json.gz", "--out", index, "--no-progress")
    assert code == 0, out
    env = root / "env"
    code, out = _run("generate", "--allow-training-names", w.test, "--index", w.index, "--links", w.links, "--seeds", "1", "--out", env,
                     "--no-progress")
    assert code == 0, out
    docs = json.loads(w.test.read_text())
    gold_pred = root / "pred.json"
    gold_pred.write_text(json.dumps([{"title": d["title"], "h_idx": lab["h"], "t_idx": lab["t"], "r": lab["r"]}
                                     for d in docs for lab in d["labels"]]))
    env_docs = json.loads((env / "test_env.json").read_text())
    env_pred = root / "env_pred.json"
    env_pred.write_text(json.dumps([{"title": d["title"], "h_idx": lab["h"], "t_idx": lab["t"], "r": lab["r"]}
                                    for d in env_docs for lab in d["labels"]]))
    report = root / "report"
    code, out = _run("report", "--original-gold", w.test, "--original-pred", gold_pred, "--env-gold",
                     env / "test_env.json", "--env-pred", env_pred, "--out", report)
    assert code == 0, out
    site = root / "site"
    code, out = _run("explore", "--env-gold", env / "test_env.json", "--original-gold", w.test, "--out", site)
    assert code == 0, out
    prompts = root / "prompts"
    code, out = _run("icl", "prompts", "--docs", w.test, "--train", w.test, "--shots", "1", "--limit", "2",
                     "--out", prompts)
    assert code == 0, out
    return {"make-sample": sample, "ingest-dump": index, "generate": env, "report": report, "explore": site,
            "icl-prompts": prompts, "_pred": gold_pred, "_env_pred": env_pred}


def _command(step: str, out: Path, f: dict[str, Path]) -> list[object]:
    w = sample_world()
    env = f["generate"]
    return {
        "make-sample": ["make-sample", "--out", out],
        "ingest-dump": ["ingest-dump", f["make-sample"] / "wikidata-sample.json.gz", "--out", out, "--no-progress"],
        "generate": ["generate", "--allow-training-names", w.test, "--index", w.index, "--links", w.links, "--seeds", "1", "--out", out,
                     "--no-progress"],
        "report": ["report", "--original-gold", w.test, "--original-pred", f["_pred"], "--env-gold",
                   env / "test_env.json", "--env-pred", f["_env_pred"], "--out", out],
        "explore": ["explore", "--env-gold", env / "test_env.json", "--original-gold", w.test, "--out", out],
        "icl-prompts": ["icl", "prompts", "--docs", w.test, "--train", w.test, "--shots", "1", "--limit", "2",
                        "--out", out],
    }[step]


STEPS = ["make-sample", "ingest-dump", "generate", "report", "explore", "icl-prompts"]
PAIRS = [(writer, there) for writer in STEPS for there in STEPS if writer != there]


@pytest.mark.slow
@pytest.mark.parametrize(("writer", "there"), PAIRS, ids=[f"{a}-into-{b}" for a, b in PAIRS])
def test_a_step_never_writes_over_another_steps_folder(folders: dict[str, Path], tmp_path: Path,
                                                       writer: str, there: str) -> None:
    target = tmp_path / there
    shutil.copytree(folders[there], target)
    before = _snapshot(target)
    code, out = _run(*_command(writer, target, folders))
    assert code == 1, out
    assert out.startswith(f"Error: --out {target}: manifest.json there describes the output of `{there}` (")
    fix = ("choose another --out\n" if writer == "report" else
           "choose another --out, or pass --force to write this step's files beside them (none of theirs is "
           "removed; manifest.json then describes this step)\n")
    assert out.endswith(f"), not `{writer}`; {fix}")
    assert _snapshot(target) == before


def test_force_writes_beside_another_steps_files_and_removes_none(folders: dict[str, Path], tmp_path: Path) -> None:
    target = tmp_path / "index"
    shutil.copytree(folders["ingest-dump"], target)  # `generate --out data_index`, a typo for --index
    before = _snapshot(target)
    code, out = _run(*_command("generate", target, folders), "--force")
    assert code == 0, out
    after = _snapshot(target)
    assert {k: v for k, v in after.items() if k in before and k != "manifest.json"} == \
        {k: v for k, v in before.items() if k != "manifest.json"}
    assert {"test_env.json", "stats.json", "substitutions.parquet"} <= set(after)


def test_a_planted_manifest_beside_a_one_file_output_deletes_nothing(folders: dict[str, Path],
                                                                     tmp_path: Path) -> None:
    w = sample_world()
    victim = tmp_path / "data" / "victim.json"
    victim.parent.mkdir()
    victim.write_text('{"precious": true}')
    out = tmp_path / "scores" / "s.json"
    out.parent.mkdir()
    digest = sha256_file(victim)
    (out.parent / "s.json.manifest.json").write_text(json.dumps({"step": "evaluate", "outputs": [
        {"name": "../data/victim.json", "sha256": digest}, {"name": str(victim), "sha256": digest},
        {"name": "s.json", "sha256": "0" * 64}]}))
    code, msg = _run("evaluate", "--gold", w.test, "--pred", folders["_pred"], "--out", out)
    assert code == 0, msg
    assert victim.read_text() == '{"precious": true}'
    assert json.loads(out.read_text())


def test_a_one_file_output_of_another_step_is_refused(folders: dict[str, Path], tmp_path: Path) -> None:
    w = sample_world()
    links = tmp_path / "links.json"
    code, msg = _run("link", w.test, "--index", w.index, "--out", links)
    assert code == 0, msg
    before = links.read_bytes()
    code, msg = _run("evaluate", "--gold", w.test, "--pred", folders["_pred"], "--out", links)
    assert code == 1
    assert msg == (f"Error: --out {links}: links.json.manifest.json there describes the output of `link` "
                   "(links.json), not `evaluate`; choose another --out\n")
    assert links.read_bytes() == before
