"""The robustness report: systems on the original and on several Env folders (attacks), one table."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from envbench.core.errors import DataError
from envbench.formats.predictions import check_predictions
from envbench.rename.generate import generate
from envbench.scoring.metrics import finalize, tally, train_facts
from envbench.scoring.report.robustness import (
    COUNTS,
    counts_by_source,
    paired_bootstrap,
    parse_system,
    resample_weights,
    robustness_report,
    scores_of,
)
from tests.envbench.cli.invoke import run
from tests.envbench.index_fixture import sample_world


def _facts(path: Path, keep: Any = lambda d, lab: True) -> list[dict[str, Any]]:
    return [{"title": d["title"], "h_idx": lab["h"], "t_idx": lab["t"], "r": lab["r"]}
            for d in json.loads(path.read_text()) for lab in d["labels"] if keep(d, lab)]


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    w = sample_world()
    root = tmp_path_factory.mktemp("rob")
    out = {}
    for name, kwargs in (("env", {}), ("env-r0.4", {"rate": 0.4}), ("env-mask", {"attack": "mask"}),
                         ("env-type-swap", {"attack": "type-swap"})):
        out[name] = root / name
        generate(w.test, w.index, out[name], links=w.links, seeds=2, progress=False, exclude_names_from=[w.train],
                 **kwargs)
    # "gold" predicts every gold fact everywhere; "forgets" every fact on the original and none on an Env file
    for system in ("gold", "forgets"):
        (root / system).mkdir()
        (root / system / "original.json").write_text(json.dumps(_facts(w.test)))
        for name, folder in out.items():
            keep = (lambda d, lab: True) if system == "gold" else (lambda d, lab: False)
            (root / system / f"{name}.json").write_text(json.dumps(_facts(folder / "test_env.json", keep)))
    out["root"] = root
    return out


def test_bootstrap_of_identical_systems_is_zero_and_of_a_fall_everywhere_is_below_zero() -> None:
    rows = [[3, 4, 5, 0, 2, 2, 3, 1, 2, 2], [1, 2, 2, 0, 1, 1, 1, 0, 1, 1], [1, 1, 3, 0, 1, 1, 2, 0, 0, 1]]
    original = [[r] for r in rows]  # documents x one "seed" x counts
    same = paired_bootstrap(original, original, lambda s: scores_of(s, "docred"), ["f1"], replicates=300)
    assert same["f1"]["fall"] == same["f1"]["fall_low"] == same["f1"]["fall_high"] == 0.0
    # two renamed copies, each losing a correct fact in every document: every resample falls
    worse = [[[r[0] - 1, *r[1:]], [r[0] - 1, *r[1:]]] for r in rows]
    fell = paired_bootstrap(original, worse, lambda s: scores_of(s, "docred"), ["f1"], replicates=300)["f1"]
    assert fell["fall"] > 0 and fell["fall_low"] > 0 and fell["fall_low"] <= fell["fall"] <= fell["fall_high"]
    assert fell["original"] == pytest.approx(2 * 5 / (7 + 10))  # P 5/7, R 5/10
    assert fell["env"] == pytest.approx(2 * 2 / (7 + 10))  # each copy: P 2/7, R 2/10; their mean
    assert fell["fall"] == pytest.approx(fell["original"] - fell["env"])


def test_resamples_are_fixed_and_draw_n_units() -> None:
    w = resample_weights(7, 50)
    assert w.shape == (50, 7) and (w.sum(axis=1) == 7).all()
    assert (w == resample_weights(7, 50)).all() and not w.flags.writeable
    assert resample_weights(0, 5).shape == (5, 0)


def test_vectorised_scores_equal_the_scorer(folders: dict[str, Path]) -> None:
    w = sample_world()
    docs = json.loads((folders["env"] / "test_env.json").read_text())
    preds = _facts(folders["env"] / "test_env.json", lambda d, lab: (lab["h"] + lab["t"]) % 3 != 0)
    preds += [{"title": docs[0]["title"], "h_idx": 0, "t_idx": 1, "r": "P1441"}]  # one wrong
    facts = train_facts(json.loads(w.train.read_text()))
    checked = check_predictions(preds, {d["title"]: len(d["vertexSet"]) for d in docs}, source="p")
    per = tally(docs, checked, facts=facts)
    sources = sorted({d["title"].rsplit("-", 1)[0] for d in docs})
    counts = counts_by_source(per, sources, [1, 2])
    assert len(counts) == len(sources) and {len(c) for c in counts} == {2}
    total = per[docs[0]["title"]]
    for t in list(per)[1:]:
        total += per[t]
    for scorer in ("docred", "re-docred"):
        want = finalize(total, scorer=scorer, with_train=True)
        got = scores_of([sum(c[k][i] for c in counts for k in (0, 1)) for i in range(len(COUNTS))], scorer)
        for k in ("f1", "ign_f1", "precision", "recall", "intra_f1", "inter_f1"):
            assert float(got[k]) == pytest.approx(want[k]), (scorer, k)


def test_one_table_of_every_system_and_attack(folders: dict[str, Path], tmp_path: Path) -> None:
    w = sample_world()
    root = folders["root"]
    (root / "forgets" / "env-mask.json").rename(root / "forgets" / "env-mask.json.away")  # one cell without
    try:
        r = robustness_report(w.test, [folders[n] for n in ("env", "env-r0.4", "env-mask", "env-type-swap")],
                              [("gold", root / "gold"), ("forgets", root / "forgets")], out=tmp_path / "out",
                              train=[w.train], replicates=200)
    finally:
        (root / "forgets" / "env-mask.json.away").rename(root / "forgets" / "env-mask.json")
    rows = r.report["rows"]
    assert [(x["system"], x["label"]) for x in rows] == [
        ("gold", "original"), ("gold", "rename"), ("gold", "rename 0.4"), ("gold", "mask"),
        ("gold", "type-swap (negative control)"), ("forgets", "original"), ("forgets", "rename"),
        ("forgets", "rename 0.4"), ("forgets", "type-swap (negative control)")]
    for x in rows:
        if x["system"] == "gold":
            assert x["scores"]["f1"] == 1.0 and (x["falls"] is None or x["falls"]["f1"]["fall_high"] == 0.0)
        elif x["env"] is not None:  # all of F1 lost, on every resample
            assert x["scores"]["f1"] == 0.0
            assert x["falls"]["f1"]["fall"] == x["falls"]["f1"]["fall_low"] == x["falls"]["f1"]["fall_high"] == 1.0
    assert [x["rate"] for x in rows[:5]] == [0.0, 1.0, 0.4, None, None]
    assert [x["negative_control"] for x in rows[:5]] == [False, False, False, False, True]
    assert rows[2]["changed_share"] < rows[1]["changed_share"]
    assert r.warnings == [f"no {root / 'forgets' / 'env-mask.json'}: system forgets is left out of the row of --env "
                          f"{folders['env-mask']}; put its predictions on that folder's Env file there"]
    assert any(n.startswith("type-swap is a negative control") for n in r.notes)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "manifest.json", "rate_curve.png", "robustness.json", "robustness.md"]
    assert (tmp_path / "out" / "rate_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (tmp_path / "out" / "robustness.md").read_text()
    assert "| forgets | rename 0.4 | 0.4 | – |" in md and "+100.00 [+100.00, +100.00]" in md
    assert json.loads((tmp_path / "out" / "robustness.json").read_text())["rows"] == rows


def test_folders_of_other_documents_and_bad_systems_are_refused(folders: dict[str, Path], tmp_path: Path) -> None:
    w = sample_world()
    docs = json.loads(w.test.read_text())
    (tmp_path / "part.json").write_text(json.dumps(docs[:5]))
    generate(tmp_path / "part.json", w.index, tmp_path / "part", links=w.links, seeds=1, progress=False, allow_training_names=True)
    with pytest.raises(DataError, match="the folders must be made from the same documents"):
        robustness_report(w.test, [folders["env"], tmp_path / "part"], [("gold", folders["root"] / "gold")],
                          out=tmp_path / "o")
    shutil.copytree(folders["env-mask"], tmp_path / "x" / "env")
    with pytest.raises(DataError) as exc:
        robustness_report(w.test, [folders["env"], tmp_path / "x" / "env"], [("gold", folders["root"] / "gold")],
                          out=tmp_path / "o")
    assert "has the name of --env" in str(exc.value)
    with pytest.raises(DataError) as exc:
        robustness_report(w.test, [folders["env"]], [("none", tmp_path)], out=tmp_path / "o")
    assert str(exc.value).startswith(f"--system none: no {tmp_path / 'original.json'}; put the system's predictions")
    with pytest.raises(DataError) as exc:
        robustness_report(w.test, [tmp_path], [("gold", folders["root"] / "gold")], out=tmp_path / "o")
    assert str(exc.value).startswith(f"--env {tmp_path}: not a folder `envbench generate` wrote")
    with pytest.raises(DataError, match="give NAME=FOLDER"):
        parse_system("gold")
    assert parse_system("my system=runs/a=b") == ("my system", Path("runs/a=b"))


def test_report_command_in_both_modes(folders: dict[str, Path], tmp_path: Path) -> None:
    w = sample_world()
    root = folders["root"]
    code, out = run("report", "--original-gold", w.test, "--env", folders["env"], "--env", folders["env-mask"],
                    "--system", f"gold={root / 'gold'}", "--out", tmp_path / "o")
    assert code == 0, out
    assert out.splitlines()[0].split() == ["system", "attack", "F1", "Ign", "F1", "F1", "fall", "[95%", "CI]"]
    assert out.splitlines()[1].split() == ["gold", "original", "100.00", "100.00"]
    assert out.rstrip().endswith("robustness.md, " + str(tmp_path / "o" / "rate_curve.png"))
    code, out = run("report", "--original-gold", w.test, "--env", folders["env"], "--original-pred",
                    root / "gold" / "original.json", "--system", f"gold={root / 'gold'}", "--out", tmp_path / "o")
    assert (code, out) == (2, "Error: --original-pred is for one Env benchmark's report; with --env and --system, "
                              "each system's predictions are found in its --system folder\n")
    code, out = run("report", "--original-gold", w.test, "--env", folders["env"], "--out", tmp_path / "o")
    assert (code, out) == (2, "Error: Missing option '--system'.\n")
    code, out = run("report", "--original-gold", w.test, "--original-pred", root / "gold" / "original.json",
                    "--env-pred", root / "gold" / "env.json", "--out", tmp_path / "o")
    assert (code, out) == (2, "Error: Missing option '--env-gold'.\n")
