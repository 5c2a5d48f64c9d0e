"""`envbench train` and `envbench predict` refuse a folder of `envbench export` whose data file was edited
after the export (issue 56): the shared reader of exported folders (envbench.formats.hf) checks the sha256
that the folder's manifest lists, and names the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from envbench.cli import cli
from envbench.formats import hf
from etl.step import Step
from tests.models.conftest import tiny_docs
from tests.models.test_train_cli import TINY

pytestmark = pytest.mark.train


def _exported(folder: Path, split: str, docs: list[dict]) -> Path:
    """Documents as a split of a folder with an export manifest (its files and sha256s), as `envbench export`
    writes one; the data file's path."""
    with Step("export", root=folder, outputs=[f"{hf.DATA_DIR}/"]) as step:
        data = step.path(f"{hf.DATA_DIR}/")
        data.mkdir()
        hf.write_split([hf.to_row(d, source_title=d["title"], seed=0) for d in docs], data / hf.shard_name(split))
    return folder / hf.DATA_DIR / hf.shard_name(split)


def _edit(data: Path) -> None:
    """Every relation set to P17, as the hostile round did."""
    docs = [dict(d, labels=[dict(lab, r="P17") for lab in d["labels"]]) for d in hf.read_dataset_docs(data)]
    hf.write_split([hf.to_row(d, source_title=d["title"], seed=0) for d in docs], data)


def test_train_and_predict_name_an_edited_data_file_of_an_export(tiny_encoder: Path, tmp_path: Path) -> None:
    train_json, dev_json = tmp_path / "train.json", tmp_path / "dev.json"
    train_json.write_text(json.dumps(tiny_docs(4)))
    dev_json.write_text(json.dumps(tiny_docs(2)))
    data = {name: _exported(tmp_path / f"{name}-ds", name, docs)
            for name, docs in (("train", tiny_docs(4)), ("dev", tiny_docs(2)))}
    run = tmp_path / "run"
    base = ["--encoder", str(tiny_encoder), "--epochs", "1", "--loss", "atlop", *TINY]
    r = CliRunner().invoke(cli, ["train", "--train", str(data["train"].parent.parent), "--dev", str(dev_json),
                                 "--out", str(run), *base])
    assert r.exit_code == 0, r.output  # unedited, the export is read
    for f in data.values():
        _edit(f)

    def changed(f: Path) -> str:
        return (f"Error: {f}: changed since `envbench export` wrote it (its sha256 is not the one "
                f"{f.parent.parent / 'manifest.json'} lists); run `envbench export` again, or copy the whole folder "
                "again")

    r = CliRunner().invoke(cli, ["train", "--train", str(data["train"].parent.parent), "--dev", str(dev_json),
                                 "--out", str(tmp_path / "run2"), *base])
    assert r.exit_code == 1 and r.output.splitlines()[-1] == changed(data["train"]), r.output
    assert not (tmp_path / "run2").exists()
    for docs in (data["dev"].parent.parent, data["dev"]):  # the folder, and its Parquet file named
        r = CliRunner().invoke(cli, ["predict", "--run", str(run), "--docs", str(docs), "--out",
                                     str(tmp_path / "pred.json")])
        assert (r.exit_code, r.output.splitlines()[-1]) == (1, changed(data["dev"])), r.output
    assert not (tmp_path / "pred.json").exists()
