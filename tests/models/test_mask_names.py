"""`mask_names`, the no-name floor: train and predict read every mention as its type placeholder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from envbench.cli import cli
from models.config import TrainConfig
from tests.models.conftest import tiny_docs

pytestmark = pytest.mark.train

TINY = ["--set", "emb_size=32", "--set", "block_size=8", "--set", "batch_size=2", "--set", "progress=false",
        "--set", "dtype=fp32", "--set", "eval_every_epoch=false"]


def test_the_switch_is_one_config_field_off_by_default() -> None:
    assert TrainConfig().mask_names is False
    assert TrainConfig.from_dict({"mask_names": True}).mask_names is True


def test_train_and_predict_read_placeholders_when_on(tiny_encoder: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import models.data
    import models.predict
    import models.train

    seen: list[list[dict[str, Any]]] = []
    real = models.data.build_features

    def spy(docs: list[dict[str, Any]], *args: Any, **kwargs: Any) -> Any:
        seen.append(docs)
        return real(docs, *args, **kwargs)

    monkeypatch.setattr(models.train, "build_features", spy)
    monkeypatch.setattr(models.predict, "build_features", spy)
    (tmp_path / "train.json").write_text(json.dumps(tiny_docs(4)))
    (tmp_path / "dev.json").write_text(json.dumps(tiny_docs(2)))
    run = tmp_path / "run"
    r = CliRunner().invoke(cli, ["train", "--train", str(tmp_path / "train.json"), "--dev", str(tmp_path / "dev.json"),
                                 "--encoder", str(tiny_encoder), "--out", str(run), "--epochs", "1", *TINY,
                                 "--set", "mask_names=true"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert json.loads((run / "best" / "config.json").read_text())["mask_names"] is True
    r = CliRunner().invoke(cli, ["predict", "--run", str(run), "--docs", str(tmp_path / "dev.json"),
                                 "--out", str(tmp_path / "pred.json")], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert len(seen) == 3  # train, dev, then the predicted documents
    for docs in seen:
        for doc in docs:
            assert doc["sents"][0][:2] == ["Person", "1"]  # "Anna Berg was born in Umea ."
            assert [[m["name"] for m in e] for e in doc["vertexSet"]] == [
                ["Person 1", "Person 1"], ["Location 1", "Location 1"], ["Location 2", "Location 2"]]
    assert {p["title"] for p in json.loads((tmp_path / "pred.json").read_text())} <= {"Doc 0", "Doc 1"}
