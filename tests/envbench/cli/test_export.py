"""`envbench export` through click's CliRunner: exit codes, exact messages, the --help example, and
`evaluate` on the exported folder (the logic: tests/envbench/formats/test_hf_export.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.envbench.cli.invoke import run as _run
from tests.envbench.cli.invoke import run_examples
from tests.envbench.index_fixture import sample_env, sample_world


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sample_env(tmp_path_factory.mktemp("cli-export") / "env")


def test_export_prints_what_it_wrote_then_up_to_date(env: Path, tmp_path: Path) -> None:
    out = tmp_path / "hf"
    args = ("export", str(env), "--docs", str(sample_world().test), "--out", str(out))
    code, text = _run(*args)
    assert (code, text) == (0, "exported original 20, test_env 100, substitutions 1610 rows\n"
                               f"wrote {out / 'README.md'}\n"
                               f"wrote {out / 'data' / 'original-00000-of-00001.parquet'}\n"
                               f"wrote {out / 'data' / 'test_env-00000-of-00001.parquet'}\n"
                               f"wrote {out / 'substitutions' / 'test_env-00000-of-00001.parquet'}\n"
                               f"load it: datasets.load_dataset({str(out)!r})\n")
    assert _run(*args) == (0, f"{out} is up to date (same inputs and parameters); nothing to do. "
                              "Pass --force to export again.\n")
    code, text = _run(*args, "--force", "--license", "cc-by-4.0", "--name", "Env sample")
    assert code == 0 and text.startswith("exported ")
    assert (out / "README.md").read_text().startswith("---\npretty_name: Env sample\n")
    assert "license:\n- cc-by-4.0\n- cc0-1.0\n" in (out / "README.md").read_text()


def test_export_errors_are_one_line(env: Path, tmp_path: Path) -> None:
    w = sample_world()
    code, text = _run("export", str(env), "--docs", str(w.train), "--out", str(tmp_path / "x"))
    assert (code, text) == (1, f"Error: --docs {w.train}: not the documents {env} was generated from (sha256 "
                               "differs from test.json in its manifest.json); pass that file\n")
    code, text = _run("export", str(tmp_path), "--docs", str(w.test), "--out", str(tmp_path / "x"))
    assert (code, text) == (1, f"Error: {tmp_path}: no manifest.json, not one of `envbench generate`; pass the --out "
                               "folder of a generate run (it holds <stem>_env.json, substitutions.parquet, stats.json)\n")
    code, text = _run("export", str(env), "--docs", str(w.test), "--out", str(tmp_path / "x"), "--format", "csv")
    assert code == 2 and "Invalid value for '--format': 'csv' is not 'hf'." in text
    assert not (tmp_path / "x").exists()


def test_export_writes_neither_inside_env_dir_nor_among_files_it_did_not_write(env: Path, tmp_path: Path) -> None:
    """A hostile-input probe: `--out ENV_DIR/hf` wrote inside the folder export reads, and `--out .` into any
    folder, beside the files there."""
    w = sample_world()
    before = sorted(p.name for p in env.iterdir())
    code, text = _run("export", str(env), "--docs", str(w.test), "--out", str(env / "hf"))
    assert (code, text) == (1, f"Error: --out {env / 'hf'}: inside ENV_DIR {env}, which export reads; export into a "
                               f"folder outside it, such as {env}-hf\n")
    assert sorted(p.name for p in env.iterdir()) == before
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    code, text = _run("export", str(env), "--docs", str(w.test), "--out", str(mine), "--force")
    assert (code, text) == (1, f"Error: --out {mine}: holds notes.txt, which no `export` run wrote; choose a new or "
                               "empty folder for --out, or move it out\n")
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]
    (mine / "notes.txt").unlink()
    code, text = _run("export", str(env), "--docs", str(w.test), "--out", str(mine))
    assert code == 0, text


def test_export_refuses_a_hostile_name_and_a_manifest_that_leads_out(env: Path, tmp_path: Path) -> None:
    # a hostile-input probe: the name opened "## Injected <script>" in the card's body, and an edited manifest
    # made export read /etc/passwd
    w = sample_world()
    args = ("export", str(env), "--docs", str(w.test), "--out", str(tmp_path / "x"))
    code, text = _run(*args, "--name", "evil\n\n## Injected <script>x</script>")
    assert (code, text) == (1, "Error: --name 'evil\\n\\n## Injected <script>x</script>': give one line of plain "
                               "text (no line breaks, <, >, ` or #), e.g. --name 'Env-Re-DocRED test'\n")
    for lic in ("not a license", "", "mit\n- evil: 1"):
        code, text = _run(*args, "--license", lic)
        assert (code, text) == (1, f"Error: --license {lic!r}: not a Hub license id; give one such as mit, cc-by-4.0 "
                                   "or apache-2.0\n"), lic
    bad = tmp_path / "bad"
    shutil.copytree(env, bad)
    manifest = json.loads((bad / "manifest.json").read_text())
    manifest["outputs"].append({"name": "../../../etc/passwd", "sha256": "0" * 64})
    (bad / "manifest.json").write_text(json.dumps(manifest))
    code, text = _run("export", str(bad), "--docs", str(w.test), "--out", str(tmp_path / "y"))
    assert (code, text) == (1, f"Error: {bad / 'manifest.json'}: lists an output '../../../etc/passwd' outside its "
                               "folder; regenerate with `envbench generate`\n")
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_export_of_a_benchmark_with_no_substitutions_is_refused(tmp_path: Path) -> None:
    # `datasets` cannot load a split of no rows: the folder would be written and never load
    w = sample_world()
    docs = [{**d, "vertexSet": [], "labels": []} for d in json.loads(w.test.read_text())[:2]]
    src = tmp_path / "noents.json"
    src.write_text(json.dumps(docs))
    code, text = _run("generate", "--allow-training-names", str(src), "--index", str(w.index), "--seeds", "1", "--out", str(tmp_path / "g"),
                      "--no-progress")
    assert code == 0, text
    code, text = _run("export", str(tmp_path / "g"), "--docs", str(src), "--out", str(tmp_path / "hf"))
    assert (code, text) == (1, f"Error: {tmp_path / 'g'}: no substitution rows, so the dataset could not be loaded; "
                               "generate from documents that have entities\n")
    assert not (tmp_path / "hf").exists()


def test_evaluate_on_the_exported_folder_scores_as_on_the_json(env: Path, tmp_path: Path) -> None:
    w = sample_world()
    out = tmp_path / "hf"
    assert _run("export", str(env), "--docs", str(w.test), "--out", str(out))[0] == 0
    gold = json.loads((env / "test_env.json").read_text())
    pred = tmp_path / "pred.json"  # two facts of three, with evidence, so every score is below 100
    pred.write_text(json.dumps([{"title": d["title"], "h_idx": lab["h"], "t_idx": lab["t"], "r": lab["r"],
                                 "evidence": lab["evidence"][:1]}
                                for d in gold for i, lab in enumerate(d["labels"]) if i % 3]))
    results = {}
    for name, path in (("json", env / "test_env.json"), ("folder", out),
                       ("parquet", out / "data" / "test_env-00000-of-00001.parquet")):
        scores = tmp_path / f"{name}.json"
        code, text = _run("evaluate", "--gold", str(path), "--pred", str(pred), "--train", str(w.train),
                          "--out", str(scores))
        assert code == 0, text
        results[name] = (text, json.loads(scores.read_text()))
    subs = {"json": env / "substitutions.parquet", "folder": out / "substitutions" / "test_env-00000-of-00001.parquet"}
    subs["parquet"] = subs["folder"]
    table = results["json"][0].split("\nNote: ")[0]
    assert "Ign F1 (name-indep.)" in table
    for name, (text, scores) in results.items():
        assert text.split("\nNote: ")[0] == table, name  # the same table, line for line
        assert f"(through {subs[name]})" in text
        assert scores["env"].pop("substitutions") == str(subs[name])
        scores["inputs"].pop("gold")
        scores["notes"] = [n.replace(str(subs[name]), "SUBS") for n in scores["notes"]]
    assert results["folder"][1] == results["json"][1] == results["parquet"][1]
    manifest = json.loads((tmp_path / "folder.json.manifest.json").read_text())
    assert manifest["inputs"][0]["name"] == "test_env-00000-of-00001.parquet"  # the split's file, hashed


def test_evaluate_on_a_folder_that_is_not_a_dataset(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    pred = tmp_path / "pred.json"
    pred.write_text("[]")
    code, text = _run("evaluate", "--gold", str(tmp_path / "notes"), "--pred", str(pred))
    assert (code, text) == (1, f"Error: {tmp_path / 'notes'}: a folder but not a dataset folder from `envbench "
                               "export` (no data/*.parquet); pass a DocRED JSON file, a folder that `envbench export` "
                               "wrote, or one of its data/*.parquet files\n")


def test_help_example_runs_when_pasted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    run_examples("export")
    assert (tmp_path / "data" / "env-hf" / "data" / "test_env-00000-of-00001.parquet").is_file()


def test_export_onto_a_full_disk_names_the_folder_and_its_own_free_space(env: Path, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 56: pyarrow's ENOSPC names no file, and the message gave the free space of the current folder's
    file system ("69.4 GB free" for a 40 KB tmpfs); it names --out and the space of --out's file system."""
    import envbench.cli._errors as errors
    import envbench.formats.hf as hf

    def full(*args: object, **kwargs: object) -> None:
        raise OSError("[Errno 28] Error writing bytes to file. Detail: [errno 28] No space left on device")

    class Usage:
        def __init__(self, free: int) -> None:
            self.free = free

    monkeypatch.setattr(hf, "write_split", full)
    monkeypatch.setattr(errors.shutil, "disk_usage",
                        lambda p: Usage(40_000 if Path(p).is_relative_to(tmp_path) else 69_400_000_000))
    out = tmp_path / "hf"
    code, text = _run("export", str(env), "--docs", str(sample_world().test), "--out", str(out))
    assert (code, text) == (1, f"Error: {out}: no space left on the device (40.0 KB free there); free some space "
                               "there, or write elsewhere (an --out on another disk)\n")
    assert not out.exists()


def test_export_into_another_steps_folder_offers_no_force_that_it_refuses(env: Path, tmp_path: Path) -> None:
    """Issue 56: the message suggested --force, which export then refused (its folder is its own)."""
    docs, other = str(sample_world().test), tmp_path / "other"
    shutil.copytree(env, other)  # a folder of `generate` that is not ENV_DIR
    before = sorted(p.name for p in other.iterdir())
    code, text = _run("export", str(env), "--docs", docs, "--out", str(other))
    assert (code, text) == (1, f"Error: --out {other}: manifest.json there describes the output of `generate` "
                               "(stats.json, substitutions.parquet, test_env.json), not `export`; choose another "
                               "--out\n")
    code, text = _run("export", str(env), "--docs", docs, "--out", str(other), "--force")
    assert (code, text) == (1, f"Error: --out {other}: holds manifest.json, stats.json, substitutions.parquet and 1 "
                               "more, which no `export` run wrote; choose a new or empty folder for --out, or move "
                               "them out\n")
    assert sorted(p.name for p in other.iterdir()) == before


def test_evaluate_names_an_edited_data_file_of_an_export(env: Path, tmp_path: Path) -> None:
    """Issue 56: every relation of the exported Env split set to P17 scored perfect predictions at F1 10.28,
    with no word; the file's sha256 is held against the manifest's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from envbench.formats import hf

    out = tmp_path / "hf"
    assert _run("export", str(env), "--docs", str(sample_world().test), "--out", str(out))[0] == 0
    data = out / "data" / "test_env-00000-of-00001.parquet"
    rows = pq.read_table(data).to_pylist()
    for r in rows:
        r["labels"]["relation_id"] = ["P17"] * len(r["labels"]["relation_id"])
    pq.write_table(pa.Table.from_pylist(rows, schema=hf.document_schema()), data, compression="zstd")
    pred = tmp_path / "pred.json"
    pred.write_text("[]")
    code, text = _run("evaluate", "--gold", str(out), "--pred", str(pred))
    assert (code, text) == (1, f"Error: {data}: changed since `envbench export` wrote it (its sha256 is not the one "
                               f"{out / 'manifest.json'} lists); run `envbench export` again, or copy the whole "
                               "folder again\n")
    stray = out / "data" / "extra-00000-of-00001.parquet"
    shutil.copy(data, stray)
    code, text = _run("evaluate", "--gold", str(stray), "--pred", str(pred))
    assert (code, text) == (1, f"Error: {stray}: not a file that `envbench export` wrote ({out / 'manifest.json'} "
                               "does not list it); remove it, or run `envbench export` again\n")
