"""`envbench evaluate` and `envbench report` through click's CliRunner: exit codes and exact messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from envbench.cli import cli
from tests.envbench.scoring.test_evaluate import tiny_env, write  # noqa: F401 - tiny_env is a fixture
from tests.envbench.scoring.test_metrics import mention, tiny_doc


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_evaluate_prints_table_and_writes_scores(tmp_path: Path) -> None:
    gold = write(tmp_path / "g.json", [tiny_doc()])
    pred = write(tmp_path / "p.json", [{"title": "Tiny", "h_idx": 0, "t_idx": 1, "r": "P19"},
                                       {"title": "Tiny", "h_idx": 0, "t_idx": 1, "r": "P19"}])
    out = tmp_path / "scores.json"
    res = run("evaluate", "--gold", str(gold), "--pred", str(pred), "--out", str(out))
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].split() == ["all"]
    assert lines[1].split() == ["F1", "50.00"]  # P 1, R 1/3
    assert lines[3].split() == ["Precision", "100.00"]
    assert "Note: Ign F1 equals F1: no training documents were given (--train), so no correct fact can be " \
           "discounted as seen in training" in lines
    assert "Note: 1 duplicated predictions counted once" in lines
    assert lines[-1] == f"Wrote {out}"
    scores = json.loads(out.read_bytes())
    assert scores["f1"] == 0.5 and scores["recall"] == 1 / 3


def test_evaluate_out_of_range_prediction_is_one_line_error(tmp_path: Path) -> None:
    gold = write(tmp_path / "g.json", [tiny_doc()])
    pred = write(tmp_path / "p.json", [{"title": "Tiny", "h_idx": 7, "t_idx": 1, "r": "P19"}])
    res = run("evaluate", "--gold", str(gold), "--pred", str(pred))
    assert res.exit_code == 1
    assert res.stderr == (
        f"Error: {pred}: prediction 0 (title 'Tiny', h_idx 7, t_idx 1, r 'P19'): h_idx 7 is out of range; "
        "document 'Tiny' has 3 entities (indices 0-2); check that the predictions were made for this gold file\n"
    )
    assert "Traceback" not in res.output


OUT_OF_RANGE = "is out of range; document 'Tiny' has 3 entities (indices 0-2); check that the predictions were made " \
               "for this gold file"


@pytest.mark.parametrize(("written", "shown", "problem"), [
    # a huge number, written as a real number or as an integer too long for a JSON reader's integers (which reads
    # both as the same real number): shown as the integer's digits, cut at 40 characters (it was "1e+30")
    ("1e30", "1000000000000000000000000000000", OUT_OF_RANGE),
    ("1" + "0" * 40, "1000000000000000000000000000000000000...", OUT_OF_RANGE),  # was "1e+40 is not an integer"
    ("18446744073709551615", "18446744073709551615", OUT_OF_RANGE),
    ("-1", "-1", OUT_OF_RANGE),
    ("true", "true", "is not an entity index; write it as a 0-based integer, a position in the gold vertexSet"),
    ("1.0", "1.0", "is not an entity index (a real number); write it as the integer 1"),
    ("0.5", "0.5", "is not an entity index; write it as a 0-based integer, a position in the gold vertexSet"),
])
def test_evaluate_names_a_bad_entity_index_as_the_file_has_it(tmp_path: Path, written: str, shown: str,
                                                             problem: str) -> None:
    gold = write(tmp_path / "g.json", [tiny_doc()])
    pred = tmp_path / "p.json"
    pred.write_text('[{"title": "Tiny", "h_idx": ' + written + ', "t_idx": 1, "r": "P19"}]')
    res = run("evaluate", "--gold", str(gold), "--pred", str(pred))
    assert res.exit_code == 1
    assert res.stderr == (f"Error: {pred}: prediction 0 (title 'Tiny', h_idx {shown}, t_idx 1, r 'P19'): "
                          f"h_idx {shown} {problem}\n")


def test_evaluate_cuts_a_long_title_or_relation_short_in_its_error(tmp_path: Path) -> None:
    gold = write(tmp_path / "g.json", [tiny_doc()])
    pred = write(tmp_path / "p.json", [{"title": "T" * 5000, "h_idx": 0, "t_idx": 1, "r": "R" * 5000}])
    res = run("evaluate", "--gold", str(gold), "--pred", str(pred))
    assert res.exit_code == 1
    title, r = "'" + "T" * 76 + "...", "'" + "R" * 76 + "..."
    assert res.stderr == (f"Error: {pred}: prediction 0 (title {title}, h_idx 0, t_idx 1, r {r}): relation {r} is "
                          "not one of the 96 DocRED relations; use a Wikidata property id such as 'P17'\n")


def test_evaluate_unknown_relation_is_one_line_error(tmp_path: Path) -> None:
    gold = write(tmp_path / "g.json", [tiny_doc()])
    pred = write(tmp_path / "p.json", [{"title": "Tiny", "h_idx": 0, "t_idx": 1, "r": "P0"}])
    res = run("evaluate", "--gold", str(gold), "--pred", str(pred))
    assert res.exit_code == 1
    assert res.stderr == (f"Error: {pred}: prediction 0 (title 'Tiny', h_idx 0, t_idx 1, r 'P0'): relation 'P0' "
                          "is not one of the 96 DocRED relations; use a Wikidata property id such as 'P17'\n")


def test_evaluate_unknown_titles_warn_on_stderr(tmp_path: Path) -> None:
    gold = write(tmp_path / "g.json", [tiny_doc()])
    pred = write(tmp_path / "p.json", [{"title": "Nope", "h_idx": 0, "t_idx": 1, "r": "P19"}])
    res = run("evaluate", "--gold", str(gold), "--pred", str(pred))
    assert res.exit_code == 0
    assert res.stderr == (f"Warning: 1 predictions name 1 titles that are not in {gold} (e.g. 'Nope'); they "
                          "count against precision, as in the official scorer; check that --pred was made for "
                          "this --gold\n"
                          f"Warning: gold documents without any prediction in {pred}: 1 of 1 (e.g. 'Tiny'); each is "
                          "scored with all its gold facts missed, which lowers recall; if the predictions are for "
                          "a subset, pass --only-predicted to score only the predicted documents\n")


def test_evaluate_bad_gold_names_document(tmp_path: Path) -> None:
    doc = tiny_doc()
    doc["labels"][0]["h"] = 9
    gold = write(tmp_path / "g.json", [doc])
    pred = write(tmp_path / "p.json", [])
    res = run("evaluate", "--gold", str(gold), "--pred", str(pred))
    assert res.exit_code == 1
    # evaluate has no --skip-invalid (every gold document counts), so the error does not suggest one
    assert res.stderr == f"Error: {gold}: document 0 'Tiny': label 0: h=9 is out of range (3 entities); fix the entity index\n"


def test_evaluate_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    res = run("evaluate", "--gold", str(tmp_path / "none.json"), "--pred", str(tmp_path / "p.json"))
    assert res.exit_code == 2
    assert f"Invalid value for '--gold': File '{tmp_path / 'none.json'}' does not exist." in res.stderr


def test_evaluate_env_table(tiny_env: dict[str, Path], tmp_path: Path) -> None:  # noqa: F811
    res = run("evaluate", "--gold", str(tiny_env["gold"]), "--pred", str(tiny_env["pred"]),
              "--train", str(tiny_env["train"]), "--scorer", "re-docred")
    assert res.exit_code == 0, res.output
    header = res.stdout.splitlines()[0].split()
    assert header == ["all", "mean", "±", "std", "seed", "1", "seed", "2"]
    assert "worst seed: 1 (F1 40.00)" in res.stdout


def test_help_texts_teach() -> None:
    for cmd in ("evaluate", "report"):
        res = run(cmd, "--help")
        assert res.exit_code == 0
        assert "Example:" in res.stdout
        assert "envbench " + cmd in res.stdout


def test_report_cli_writes_files(tiny_env: dict[str, Path], tmp_path: Path) -> None:  # noqa: F811
    orig = write(tmp_path / "orig.json", [tiny_doc()])
    opred = write(tmp_path / "op.json", [{"title": "Tiny", "h_idx": 0, "t_idx": 1, "r": "P19"},
                                         {"title": "Tiny", "h_idx": 1, "t_idx": 2, "r": "P17"}])
    out = tmp_path / "rep"
    res = run("report", "--original-gold", str(orig), "--original-pred", str(opred),
              "--env-gold", str(tiny_env["gold"]), "--env-pred", str(tiny_env["pred"]),
              "--train", str(tiny_env["train"]), "--out", str(out))
    assert res.exit_code == 0, res.output
    assert "consistency rate: 75.00% of 4 facts correct on the original stay correct on the renamed twins" \
        in res.stdout
    for name in ("report.json", "report.md", "f1_by_entities.png", "type_drop.png"):
        assert (out / name).is_file()


def test_report_cli_rejects_plain_env_gold(tmp_path: Path) -> None:
    orig = write(tmp_path / "orig.json", [tiny_doc()])
    pred = write(tmp_path / "p.json", [])
    res = run("report", "--original-gold", str(orig), "--original-pred", str(pred),
              "--env-gold", str(orig), "--env-pred", str(pred), "--out", str(tmp_path / "rep"))
    assert res.exit_code == 1
    assert res.stderr == (f"Error: {orig}: --env-gold needs a seed suffix -k on every title (for example 'Loud "
                          "Tour-1'), but 'Tiny' has none; pass as --env-gold the Env file `envbench generate` wrote, "
                          "whole\n")
    # an Env file whose source documents have different seeds is named as such, not as lacking suffixes
    uneven = write(tmp_path / "uneven.json", [tiny_doc() | {"title": t} for t in ("Tiny-1", "Tiny-2", "Other-1")])
    res = run("report", "--original-gold", str(orig), "--original-pred", str(pred),
              "--env-gold", str(uneven), "--env-pred", str(pred), "--out", str(tmp_path / "rep"))
    assert res.exit_code == 1
    assert res.stderr == (f"Error: {uneven}: --env-gold needs the same seeds for every source document, but 'Other' "
                          "has seed -1 where 'Tiny' has -1, -2; pass as --env-gold the Env file `envbench generate` "
                          "wrote, whole\n")


def test_evaluate_env_names_the_uneven_seeds_not_the_suffix(tmp_path: Path) -> None:
    # the message led with "--env needs every title to end in a seed suffix -k" when every title had one
    gold = write(tmp_path / "g.json", [tiny_doc() | {"title": t} for t in ("A-1", "A-2", "B-1", "B-3")])
    res = run("evaluate", "--gold", str(gold), "--pred", str(write(tmp_path / "p.json", [])), "--env")
    assert res.exit_code == 1
    assert res.stderr == (f"Error: {gold}: --env needs the same seeds for every source document, but 'B' has seeds "
                          "-1, -3 where 'A' has -1, -2; pass the Env file `envbench generate` wrote, whole, or leave "
                          "out --env to score it as a plain benchmark\n")


def test_swapped_gold_and_predictions_are_named_as_such(tmp_path: Path) -> None:
    gold = write(tmp_path / "g.json", [tiny_doc()])
    pred = write(tmp_path / "p.json", [{"title": "Tiny", "h_idx": 0, "t_idx": 1, "r": "P19"}])
    res = run("evaluate", "--gold", str(gold), "--pred", str(gold))
    assert res.exit_code == 1
    assert res.stderr == (f"Error: {gold}: holds DocRED documents (title, sents, vertexSet), not predictions; give it "
                          "as the gold file, and as predictions the model's JSON list of {title, h_idx, t_idx, r}\n")
    for args in (["--gold", str(pred), "--pred", str(pred)], ["--gold", str(gold), "--pred", str(pred), "--train", str(pred)]):
        res = run("evaluate", *args)
        assert res.exit_code == 1
        assert res.stderr == (
            f"Error: {pred}: holds predictions (a list of {{title, h_idx, t_idx, r}}), not DocRED documents; give a "
            "DocRED-format file (title, sents, vertexSet) here, and predictions to `envbench evaluate --pred`\n"
        )


def test_empty_gold_is_an_error_not_a_zero_score(tmp_path: Path) -> None:
    gold = write(tmp_path / "g.json", [])
    pred = write(tmp_path / "p.json", [{"title": "Tiny", "h_idx": 0, "t_idx": 1, "r": "P19"}])
    res = run("evaluate", "--gold", str(gold), "--pred", str(pred))
    assert res.exit_code == 1
    assert res.stderr == f"Error: {gold}: has no documents; pass the gold DocRED file the predictions were made for\n"


def test_invalid_train_document_names_the_train_skip_option(tmp_path: Path) -> None:
    gold = write(tmp_path / "g.json", [tiny_doc()])
    pred = write(tmp_path / "p.json", [])
    bad = tiny_doc()
    bad["labels"][0]["h"] = 9
    train = write(tmp_path / "t.json", [bad])
    res = run("evaluate", "--gold", str(gold), "--pred", str(pred), "--train", str(train))
    assert res.exit_code == 1
    assert res.stderr == (f"Error: {train}: document 0 'Tiny': label 0: h=9 is out of range (3 entities); fix the "
                          "entity index; or pass --skip-invalid-train to skip invalid documents\n")
    assert run("evaluate", "--gold", str(gold), "--pred", str(pred), "--train", str(train),
               "--skip-invalid-train").exit_code == 0


def test_outputs_never_overwrite_inputs_or_leave_tracebacks(tiny_env: dict[str, Path], tmp_path: Path) -> None:  # noqa: F811
    gold = write(tmp_path / "g.json", [tiny_doc()])
    pred = write(tmp_path / "p.json", [{"title": "Tiny", "h_idx": 0, "t_idx": 1, "r": "P19"}])
    before = pred.read_bytes()
    res = run("evaluate", "--gold", str(gold), "--pred", str(pred), "--out", str(pred))
    assert res.exit_code == 1
    assert res.stderr == (f"Error: --out {pred}: the input {pred} would be overwritten by this step's output {pred}; "
                          "choose another output location or move the input\n")
    assert pred.read_bytes() == before and not (tmp_path / "p.json.manifest.json").exists()
    blocker = write(tmp_path / "file", [])
    res = run("evaluate", "--gold", str(gold), "--pred", str(pred), "--out", str(blocker / "scores.json"))
    assert res.exit_code == 1
    assert res.stderr == f"Error: --out {blocker / 'scores.json'}: {blocker} is a file, not a folder; choose another path\n"
    res = run("report", "--original-gold", str(gold), "--original-pred", str(pred), "--env-gold", str(tiny_env["gold"]),
              "--env-pred", str(tiny_env["pred"]), "--out", str(blocker / "rep"))
    assert res.exit_code == 1
    assert res.stderr == f"Error: --out {blocker / 'rep'}: {blocker} is a file, not a folder; choose another path\n"
    # an input inside the report folder, under an output's name
    rep = tmp_path / "rep"
    rep.mkdir()
    inside = write(rep / "report.json", [{"title": "Tiny", "h_idx": 0, "t_idx": 1, "r": "P19"}])
    res = run("report", "--original-gold", str(gold), "--original-pred", str(inside), "--env-gold", str(tiny_env["gold"]),
              "--env-pred", str(tiny_env["pred"]), "--out", str(rep))
    assert res.exit_code == 1
    assert res.stderr == (f"Error: --out {rep}: the input {inside} would be overwritten by this step's output "
                          f"{inside}; choose another output location or move the input\n")
    assert sorted(p.name for p in rep.iterdir()) == ["report.json"]


def test_out_files_are_published_with_a_manifest_last(tiny_env: dict[str, Path], tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "runs" / "scores.json"
    res = run("evaluate", "--gold", str(tiny_env["gold"]), "--pred", str(tiny_env["pred"]),
              "--train", str(tiny_env["train"]), "--out", str(out))
    assert res.exit_code == 0, res.output
    manifest = json.loads((tmp_path / "runs" / "scores.json.manifest.json").read_bytes())
    assert manifest["step"] == "evaluate"
    assert [i["name"] for i in manifest["inputs"]] == ["test_env.json", "pred.json", "train.json",
                                                       "substitutions.parquet"]
    assert [o["name"] for o in manifest["outputs"]] == ["scores.json"]
    assert sorted(p.name for p in out.parent.iterdir()) == ["scores.json", "scores.json.manifest.json"]
    bad = write(tmp_path / "bad.json", [{"title": "Tiny-1", "h_idx": 9, "t_idx": 1, "r": "P19"}])
    failed = tmp_path / "new" / "scores.json"
    assert run("evaluate", "--gold", str(tiny_env["gold"]), "--pred", str(bad), "--out", str(failed)).exit_code == 1
    assert not failed.parent.exists()  # a failed run leaves no folder, file or staging behind
    orig = write(tmp_path / "orig.json", [tiny_doc()])
    rep = tmp_path / "rep"
    args = ["report", "--original-gold", str(orig), "--original-pred", str(tiny_env["pred"]),
            "--env-gold", str(tiny_env["gold"]), "--env-pred", str(tiny_env["pred"]), "--out", str(rep)]
    assert run(*args).exit_code == 0
    manifest = json.loads((rep / "manifest.json").read_bytes())
    assert [o["name"] for o in manifest["outputs"]] == sorted(["report.json", "report.md", "f1_by_entities.png",
                                                                 "type_drop.png"])
    assert sorted(p.name for p in rep.iterdir()) == ["f1_by_entities.png", "manifest.json", "report.json",
                                                     "report.md", "type_drop.png"]  # no staging folder left
    first = (rep / "report.md").read_bytes()
    assert run(*args).exit_code == 0  # a rerun rewrites the folder, same bytes
    assert (rep / "report.md").read_bytes() == first


def test_substitutions_on_a_plain_benchmark_warn(tiny_env: dict[str, Path], tmp_path: Path) -> None:  # noqa: F811
    gold = write(tmp_path / "g.json", [tiny_doc()])
    pred = write(tmp_path / "p.json", [])
    subs = tiny_env["gold"].parent / "substitutions.parquet"
    res = run("evaluate", "--gold", str(gold), "--pred", str(pred), "--substitutions", str(subs))
    assert res.exit_code == 0
    assert res.stderr == (f"Warning: gold documents without any prediction in {pred}: 1 of 1 (e.g. 'Tiny'); each is "
                          "scored with all its gold facts missed, which lowers recall; if the predictions are for "
                          "a subset, pass --only-predicted to score only the predicted documents\n"
                          f"Warning: --substitutions {subs} is not used: {gold} is not an Env benchmark (its titles "
                          "lack the seed suffix -k); pass an Env gold file from `envbench generate`\n")


def test_truncated_gzip_predictions_are_one_line(tmp_path: Path) -> None:
    import gzip

    gold = write(tmp_path / "g.json", [tiny_doc()])
    data = gzip.compress(json.dumps([{"title": "Tiny", "h_idx": 0, "t_idx": 1, "r": "P19"}] * 50).encode())
    pred = tmp_path / "p.json.gz"
    pred.write_bytes(data[:-20])
    res = run("evaluate", "--gold", str(gold), "--pred", str(pred))
    assert res.exit_code == 1
    assert res.stderr == (f"Error: {pred}: cannot decompress it (Compressed file ended before the end-of-stream marker "
                          "was reached); the file is corrupt or ends early; download it again or compress it again\n")


def test_unlabelled_gold_warns(tmp_path: Path) -> None:
    doc = tiny_doc()
    del doc["labels"]  # as in DocRED's test split
    gold = write(tmp_path / "g.json", [doc])
    pred = write(tmp_path / "p.json", [{"title": "Tiny", "h_idx": 0, "t_idx": 1, "r": "P19"}])
    res = run("evaluate", "--gold", str(gold), "--pred", str(pred))
    assert res.exit_code == 0
    assert res.stderr == (f"Warning: {gold} has no gold facts (no labels), so every score is 0; is it an unlabelled "
                          "split such as DocRED's test set? Score on a labelled file (e.g. dev) instead\n")


def test_compressed_out_name_is_refused(tmp_path: Path) -> None:
    # a plain JSON file under a .gz name would fail when read back
    gold = write(tmp_path / "g.json", [tiny_doc()])
    pred = write(tmp_path / "p.json", [])
    res = run("evaluate", "--gold", str(gold), "--pred", str(pred), "--out", str(tmp_path / "s.json.gz"))
    assert res.exit_code == 1
    assert res.stderr == f"Error: output {tmp_path / 's.json.gz'}: JSON outputs are written uncompressed; give a .json name\n"
    assert not (tmp_path / "s.json.gz").exists()


# --------------------------------------------------------------------------- hostile inputs (issue 17)
def test_train_equal_to_gold_warns_that_ign_f1_means_nothing(tmp_path: Path) -> None:
    gold = write(tmp_path / "g.json", [tiny_doc()])
    pred = write(tmp_path / "p.json", [{"title": "Tiny", "h_idx": 0, "t_idx": 1, "r": "P19"}])
    res = run("evaluate", "--gold", str(gold), "--pred", str(pred), "--train", str(gold))
    assert res.exit_code == 0
    assert res.stderr == (f"Warning: --train {gold} is the same file as --gold {gold}: every correct prediction then "
                          "counts as seen in training, so Ign F1 is 0 by construction and means nothing; pass the "
                          "documents the model was trained on (e.g. train_annotated.json) as --train\n")
    assert res.stdout.splitlines()[2].split() == ["Ign", "F1", "0.00"]
    copy = write(tmp_path / "copy.json", [tiny_doc()])  # a byte-identical copy is as bad
    res = run("evaluate", "--gold", str(gold), "--pred", str(pred), "--train", str(copy))
    assert res.stderr.startswith(f"Warning: --train {copy} is the same file as --gold {gold}: ")
    other = write(tmp_path / "t.json", [tiny_doc() | {"title": "Other"}])  # the same facts, another file: no warning
    assert run("evaluate", "--gold", str(gold), "--pred", str(pred), "--train", str(other)).stderr == ""


def test_report_train_equal_to_a_gold_file_warns(tiny_env: dict[str, Path], tmp_path: Path) -> None:  # noqa: F811
    orig = write(tmp_path / "orig.json", [tiny_doc()])
    pred = write(tmp_path / "op.json", [])
    res = run("report", "--original-gold", str(orig), "--original-pred", str(pred), "--env-gold", str(tiny_env["gold"]),
              "--env-pred", str(tiny_env["pred"]), "--train", str(orig), "--out", str(tmp_path / "rep"))
    assert res.exit_code == 0, res.output
    assert res.stderr.splitlines()[0] == (
        f"Warning: --train {orig} is the same file as --original-gold {orig}: every correct prediction then counts "
        "as seen in training, so Ign F1 is 0 by construction and means nothing; pass the documents the model was "
        "trained on (e.g. train_annotated.json) as --train")


def test_a_lone_title_ending_in_digits_is_not_an_env_benchmark(tmp_path: Path) -> None:
    doc = tiny_doc() | {"title": "Su-27"}
    gold = write(tmp_path / "g.json", [doc])
    pred = write(tmp_path / "p.json", [{"title": "Su-27", "h_idx": 0, "t_idx": 1, "r": "P19"}])
    res = run("evaluate", "--gold", str(gold), "--pred", str(pred))
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[0].split() == ["all"]  # no per-seed columns, no "seed 27"
    assert "seed 27" not in res.stdout
    assert (f"Note: scored as a plain benchmark: the titles of {gold} end in a suffix -k (e.g. 'Su-27'), but an Env "
            "file has every source document once for each seed 1..K; pass --env to score it per seed anyway"
            ) in res.stdout.splitlines()
    forced = run("evaluate", "--gold", str(gold), "--pred", str(pred), "--env")
    assert forced.exit_code == 0
    # one seed: a mean with no spread (issue 33: "mean ± std 0.00 ± 0.00" said nothing)
    assert forced.stdout.splitlines()[0].split() == ["all", "mean", "seed", "27"]
    # an Env file with a copy missing is not detected either
    env = [tiny_doc() | {"title": t} for t in ("A-1", "A-2", "B-1", "B-3")]
    res = run("evaluate", "--gold", str(write(tmp_path / "e.json", env)), "--pred", str(write(tmp_path / "q.json", [])))
    assert res.exit_code == 0 and res.stdout.splitlines()[0].split() == ["all"]
    assert "Note: scored as a plain benchmark: " in res.stdout


def test_report_refuses_env_gold_from_another_benchmark(tiny_env: dict[str, Path], tmp_path: Path) -> None:  # noqa: F811
    other = write(tmp_path / "other.json", [tiny_doc() | {"title": "Elsewhere"}])
    pred = write(tmp_path / "p.json", [{"title": "Elsewhere", "h_idx": 0, "t_idx": 1, "r": "P19"}])
    out = tmp_path / "rep"
    res = run("report", "--original-gold", str(other), "--original-pred", str(pred), "--env-gold", str(tiny_env["gold"]),
              "--env-pred", str(tiny_env["pred"]), "--out", str(out))
    assert res.exit_code == 1
    assert res.stderr == (f"Error: {tiny_env['gold']}: 2 of its 2 documents are renamed copies of no document in "
                          f"{other} (e.g. 'Tiny-1'), so the two files are from different benchmarks; pass as "
                          "--env-gold the Env file that `envbench generate` wrote from --original-gold\n")
    assert not out.exists()  # nothing written, not even the folder


def test_subset_predictions_warn_and_only_predicted_scores_the_subset(tmp_path: Path) -> None:
    docs = []
    for title in ("A", "B", "C"):
        doc = tiny_doc()
        doc["title"] = title
        docs.append(doc)
    gold = write(tmp_path / "g.json", docs)
    pred = write(tmp_path / "p.json", [{"title": "A", "h_idx": 0, "t_idx": 1, "r": "P19"}])
    res = run("evaluate", "--gold", str(gold), "--pred", str(pred))
    assert res.exit_code == 0
    assert res.stderr == (f"Warning: gold documents without any prediction in {pred}: 2 of 3 (e.g. 'B', 'C'); each "
                          "is scored with all its gold facts missed, which lowers recall; if the predictions are "
                          "for a subset, pass --only-predicted to score only the predicted documents\n")
    assert "3 documents, 9 gold facts, 1 prediction (0 duplicates dropped), 1 correct" in res.stdout.splitlines()
    out = tmp_path / "scores.json"
    res = run("evaluate", "--gold", str(gold), "--pred", str(pred), "--only-predicted", "--out", str(out))
    assert res.exit_code == 0 and res.stderr == ""
    lines = res.stdout.splitlines()
    assert "1 document, 3 gold facts, 1 prediction (0 duplicates dropped), 1 correct" in lines
    assert (f"Note: --only-predicted: scored 1 of 3 gold documents, those with at least one prediction; no manifest "
            f"from `envbench icl parse` beside {pred} says which documents were asked, so a document answered with "
            "nothing is left out too (recall reads high by as much)") in lines
    assert json.loads(out.read_bytes())["coverage"]["scored_documents"] == 1
    res = run("evaluate", "--gold", str(gold), "--pred", str(write(tmp_path / "none.json", [])), "--only-predicted")
    assert res.exit_code == 1
    assert res.stderr == (f"Error: --only-predicted: none of the 3 documents of {gold} has a prediction in "
                          f"{tmp_path / 'none.json'}; check that --pred was made for this --gold\n")
    assert "--only-predicted" in run("evaluate", "--help").stdout


# --------------------------------------------------------------------------- --end-to-end
def e2e_doc() -> dict:
    """tiny_doc with Paris a token of its own beside Ann (in tiny_doc they share a span, which end-to-end
    coreference scores cannot take as a partition of the mentions)."""
    doc = tiny_doc()
    doc["sents"][0] = ["a", "p"]
    doc["vertexSet"][1] = [mention("Paris", 0, (1, 2), typ="LOC")]
    return doc


def e2e_files(tmp_path: Path, row: dict | None = None) -> tuple[Path, Path]:
    """The tiny document and one end-to-end row for it: Ann/Annie, Paris, France, relation P19 right."""
    gold = write(tmp_path / "g.json", [e2e_doc()])
    base = {"title": "Tiny",
            "entities": [{"mentions": [[0, 0, 1], [2, 0, 1]], "type": "PER"}, {"mentions": [[0, 1, 2]], "type": "LOC"}],
            "relations": [{"h": 0, "t": 1, "r": "P19"}]}
    return gold, write(tmp_path / "e2e.json", [base | (row or {})])


def test_end_to_end_prints_the_metrics(tmp_path: Path) -> None:
    gold, pred = e2e_files(tmp_path)
    res = run("evaluate", "--end-to-end", "--gold", str(gold), "--pred", str(pred))
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].split() == ["F1", "all"]
    # the gold mentions are Ann (0,0,1), Paris (0,1,2), Annie (2,0,1), France (3,0,1); the 3 predicted are
    # right: P 1, R 3/4, F1 6/7
    assert lines[1].split() == ["Mention", "85.71"]
    # relation strict and relaxed: 1 predicted, right; 3 gold: P 1, R 1/3, F1 2 * 1/3 / (4/3) = 0.5
    assert [ln.split()[:2] + ln.split()[-1:] for ln in lines[8:10]] == [["Relation", "strict", "50.00"],
                                                                        ["Relation", "relaxed", "50.00"]]
    assert res.stderr == ""


@pytest.mark.parametrize(("row", "problem"), [
    ({"title": "Nope"}, "document 'Nope' (row 0): title is not a document of the gold file; check that the "
                        "predictions were made for this --gold"),
    ({"entities": [{"mentions": [[1, 0, 2]], "type": "PER"}]},
     "document 'Tiny' (row 0): entities[0].mentions[0] [1, 0, 2] is outside sentence 1 (1 tokens: 0 <= start < end <= 1)"),
    ({"entities": [{"mentions": [], "type": "PER"}]},
     "document 'Tiny' (row 0): entities[0].mentions is empty; an entity needs at least one mention span"),
    ({"relations": [{"h": 0, "t": 4, "r": "P19"}]},
     "document 'Tiny' (row 0): relations[0].t 4 is not an entity of this document (entities: 0-1)"),
])
def test_end_to_end_bad_rows_are_one_line_errors(tmp_path: Path, row: dict, problem: str) -> None:
    gold, pred = e2e_files(tmp_path, row)
    res = run("evaluate", "--end-to-end", "--gold", str(gold), "--pred", str(pred))
    assert res.exit_code == 1
    assert res.stderr == f"Error: {pred}: {problem}; or pass --skip-invalid to skip such rows\n"
    assert "Traceback" not in res.output


@pytest.mark.parametrize(("row", "problem"), [
    # issue 56: "TypeError: unhashable type" for r as a list or an object, with --skip-invalid too
    ({"relations": [{"h": 0, "t": 1, "r": ["P17"]}]},
     "relations[0].r ['P17'] is not one of the 96 DocRED relations; use a property id such as 'P17'"),
    ({"relations": [{"h": 0, "t": 1, "r": {"id": "P17"}}]},
     "relations[0].r {'id': 'P17'} is not one of the 96 DocRED relations; use a property id such as 'P17'"),
    # issue 56: predicted entities sharing a mention made B³ 100.29 and MUC recall negative
    ({"entities": [{"mentions": [[0, 0, 1], [2, 0, 1]], "type": "PER"}, {"mentions": [[2, 0, 1]], "type": "PER"}]},
     "entities[1].mentions[0] [2, 0, 1] is also a mention of entities[0], whose mentions differ; a mention belongs "
     "to one entity (MUC and B³ score a partition of the mentions): merge the two entities, or keep the mention in "
     "one"),
])
def test_end_to_end_hostile_rows_are_one_line_and_skippable(tmp_path: Path, row: dict, problem: str) -> None:
    gold, pred = e2e_files(tmp_path, row)
    res = run("evaluate", "--end-to-end", "--gold", str(gold), "--pred", str(pred))
    assert (res.exit_code, res.stderr) == (1, f"Error: {pred}: document 'Tiny' (row 0): {problem}; or pass "
                                              "--skip-invalid to skip such rows\n")
    res = run("evaluate", "--end-to-end", "--gold", str(gold), "--pred", str(pred), "--skip-invalid")
    assert res.exit_code == 0 and res.stderr.splitlines()[0] == (
        f"Warning: skipped 1 invalid row of {pred} (--skip-invalid; their documents count as predicting nothing): "
        f"{pred}: document 'Tiny' (row 0): {problem}")
    assert all(line.split()[-1] == "0.00" for line in res.stdout.splitlines()[1:10])


@pytest.mark.parametrize(("relations", "shown"), [(None, "null"), (5, "an integer")])
def test_end_to_end_jerex_relations_that_are_no_list_are_one_line(tmp_path: Path, relations: object,
                                                                   shown: str) -> None:
    # issue 56: JEREX rows whose relations are null or 5 gave "TypeError: ... not iterable", with --skip-invalid too
    gold = write(tmp_path / "g.json", [e2e_doc()])
    row = {"tokens": ["a", "p", "b", "c", "d"], "mentions": [{"start": 0, "end": 1}, {"start": 1, "end": 2}],
           "entities": [{"mentions": [0], "type": "PER"}, {"mentions": [1], "type": "LOC"}], "relations": relations}
    pred = write(tmp_path / "predictions.json", [row])
    problem = (f"{pred}: document 'Tiny' (row 0): relations is {shown}, not a list of relations {{head, tail, type}}")
    res = run("evaluate", "--end-to-end", "--gold", str(gold), "--pred", str(pred))
    assert (res.exit_code, res.stderr) == (1, f"Error: {problem}; or pass --skip-invalid to skip such rows\n")
    res = run("evaluate", "--end-to-end", "--gold", str(gold), "--pred", str(pred), "--skip-invalid")
    assert res.exit_code == 0 and res.stderr == (
        f"Warning: skipped 1 invalid row of {pred} (--skip-invalid; their documents count as predicting nothing): "
        f"{problem}\n")


def test_end_to_end_skip_invalid_counts_and_lists_the_rows(tmp_path: Path) -> None:
    gold, pred = e2e_files(tmp_path, {"title": "Nope"})
    res = run("evaluate", "--end-to-end", "--gold", str(gold), "--pred", str(pred), "--skip-invalid")
    assert res.exit_code == 0, res.output
    assert res.stderr == (
        f"Warning: skipped 1 invalid row of {pred} (--skip-invalid; their documents count as predicting nothing): "
        f"{pred}: document 'Nope' (row 0): title is not a document of the gold file; check that the predictions were "
        "made for this --gold\n"
        f"Warning: 1 of the 1 documents of the gold file have no row in {pred}; they count as predicting nothing\n")
    assert res.stdout.splitlines()[1].split() == ["Mention", "0.00"]


def test_end_to_end_options_do_not_mix_with_given_entities_ones(tmp_path: Path) -> None:
    gold, pred = e2e_files(tmp_path)
    res = run("evaluate", "--end-to-end", "--gold", str(gold), "--pred", str(pred), "--train", str(gold))
    assert res.exit_code == 2
    assert res.stderr.splitlines()[-1] == (
        "Error: --train is for given-entities predictions; --end-to-end takes --gold, --pred, --env-gold, --env-pred, "
        "--pred-format, --skip-invalid and --out")
    res = run("evaluate", "--gold", str(gold), "--pred", str(pred), "--skip-invalid")
    assert res.exit_code == 2
    assert res.stderr.splitlines()[-1] == (
        "Error: --skip-invalid needs --end-to-end (it is for end-to-end predictions); given-entities scoring reads "
        "--gold whole; `envbench validate GOLD --show 3` lists its invalid documents")
    res = run("evaluate", "--gold", str(gold), "--pred", str(pred), "--env-gold", str(gold))
    assert res.exit_code == 2
    assert res.stderr.splitlines()[-1] == (
        "Error: --env-gold needs --end-to-end (it is for end-to-end predictions); to score given-entities "
        "predictions on an Env file, pass that file as --gold")


def test_end_to_end_refuses_given_entities_predictions(tmp_path: Path) -> None:
    gold = write(tmp_path / "g.json", [tiny_doc()])
    pred = write(tmp_path / "p.json", [{"title": "Tiny", "h_idx": 0, "t_idx": 1, "r": "P19"}])
    res = run("evaluate", "--end-to-end", "--gold", str(gold), "--pred", str(pred))
    assert res.exit_code == 1
    assert res.stderr == (f"Error: {pred}: holds given-entities predictions ({{title, h_idx, t_idx, r}}), which index "
                          "the gold entities; score them without --end-to-end\n")
