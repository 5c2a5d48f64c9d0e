"""``envbench evaluate`` and ``envbench report``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from envbench.cli._options import progress_option
from envbench.formats.end_to_end import FORMATS
from envbench.scoring.metrics import SCORERS

if TYPE_CHECKING:  # the scorers load when a command runs
    from collections.abc import Sequence

    from envbench.scoring.evaluate import EvaluateResult
    from envbench.scoring.evaluate_end_to_end import EndToEndResult
    from envbench.scoring.report.build import ReportResult
    from envbench.scoring.report.robustness import RobustnessResult

# what to do instead, per end-to-end option given without --end-to-end
E2E_ONLY_ADVICE = {
    "--env-gold": "to score given-entities predictions on an Env file, pass that file as --gold",
    "--env-pred": "to score given-entities predictions on an Env file, pass them as --pred and the Env file as --gold",
    "--pred-format": "given-entities predictions have one format (DocRED's result list), so leave it out",
    "--skip-invalid": "given-entities scoring reads --gold whole; `envbench validate GOLD --show 3` lists its "
                      "invalid documents",
}

_FILE = click.Path(exists=True, dir_okay=False)
_DOCS = click.Path(exists=True)  # a DocRED JSON file, or a folder / Parquet file of `envbench export`
_DOCS.name = "file"  # named as before in the help (FILE) and in "File '...' does not exist."


@click.command()
@click.option("--gold", required=True, type=_DOCS,
              help="Gold documents in DocRED format (e.g. test_revised.json, or an Env file such as test_env.json), "
                   "or a folder of `envbench export` (its Env split) or one of its data/*.parquet files.")
@click.option("--pred", required=True, type=_FILE,
              help="Predictions: a JSON list of {title, h_idx, t_idx, r[, evidence]} as the official scorer reads; "
                   "with --end-to-end, predicted entities and relations per document (docs/pipeline.md).")
@click.option("--train", "train", multiple=True, type=_FILE,
              help="Training documents whose facts Ign F1 discounts (repeat for several files). "
                   "Without it Ign F1 equals F1.")
@click.option("--out", type=click.Path(dir_okay=False),
              help="Write all scores (fractions in [0, 1]) to this JSON file, e.g. scores.json, and its "
                   "manifest (inputs, parameters, hashes) beside it as scores.json.manifest.json.")
@click.option("--substitutions", type=_FILE,
              help="substitutions.parquet from `envbench generate`, for the name-independent Ign F1 of an Env "
                   "benchmark. Default: the one beside --gold, if present (for an exported folder, its "
                   "substitutions config's file).")
@click.option("--scorer", type=click.Choice(SCORERS), default="docred", show_default=True,
              help="Which official scorer's smoothing to copy: docred (exact counts) or re-docred "
                   "(evidence total starts at 1, Ign precision denominator +1e-5).")
@click.option("--env/--no-env", default=None,
              help="Treat gold as an Env benchmark (titles with seed suffix -k, one set of seeds for every "
                   "source document). Default: detect from the titles, which needs seeds 1..K.")
@click.option("--skip-invalid-train", is_flag=True,
              help="Skip invalid documents in --train files instead of stopping at the first.")
@click.option("--only-predicted", is_flag=True,
              help="Score only the gold documents the predictions are for: those with at least one prediction, "
                   "and every document that PRED.manifest.json (written by `envbench icl parse`) lists as "
                   "covered; a covered document without predictions (a failed request, no relation found) still "
                   "counts, its gold facts missed. Without that manifest a document answered with nothing is left "
                   "out as well. Default: score every gold document.")
@click.option("--end-to-end", "end_to_end", is_flag=True,
              help="Score end-to-end predictions (mentions, clusters, relations found in the text alone) with "
                   "JEREX's metrics: mention, cluster and typed entity detection, coreference (MUC, B³, CEAF-e, "
                   "their mean), strict and relaxed relations.")
@click.option("--env-gold", type=_FILE,
              help="With --end-to-end: the Env file generated from --gold, scored beside it per seed, with the F1 "
                   "fall and the consistency rate of relations.")
@click.option("--env-pred", type=_FILE, help="With --end-to-end: the predictions on --env-gold.")
@click.option("--pred-format", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="With --end-to-end: envbench's end-to-end rows, or JEREX's predictions.json (one row per gold "
                   "document, in the gold file's order); auto tells them apart by their keys.")
@click.option("--skip-invalid", is_flag=True,
              help="With --end-to-end: skip (and count and list) prediction rows with an unknown title, a span "
                   "outside its sentence, an entity without mentions or a relation to a missing entity, instead "
                   "of stopping at the first; their documents count as predicting nothing.")
@progress_option
def evaluate(gold: str, pred: str, train: tuple[str, ...], out: str | None, substitutions: str | None,
             scorer: str, env: bool | None, skip_invalid_train: bool, only_predicted: bool, end_to_end: bool,
             env_gold: str | None, env_pred: str | None, pred_format: str, skip_invalid: bool, progress: bool) -> None:
    """Score predictions like the official DocRED / Re-DocRED scorers, per seed on Env benchmarks.

    Prints F1, Ign F1, precision, recall, evidence F1, intra/inter-sentence F1 and frequent-10
    versus long-tail F1 as percentages; --out writes them as fractions (and OUT.manifest.json).

    An Env file (every title '<title>-k', each source document once for each seed 1..K) gets two
    aggregates. The 'all' column is the pooled score: the K copies scored as one file, every
    copy's facts counted together; this is the number the Env-DocRE/EVRT reference code prints
    for its five-copy test file (top-level keys of --out). 'mean ± std' is the mean and sample
    standard deviation over the renaming seeds of each copy scored alone ('env.mean', 'env.std'
    and 'env.seeds' in --out): the spread the drawn names cause for one model, not the paper's ±,
    which is over 5 training runs.

    Every gold document is scored (each Env twin is a document of its own): one without any
    prediction counts with all its gold facts missed, and a warning gives the count of such
    documents, leaving out those that PRED.manifest.json from `envbench icl parse` lists as
    covered. For predictions made for part of the gold file (`icl prompts --limit`), pass
    --only-predicted; 'coverage' in --out records which documents were scored.

    --end-to-end scores predictions that carry their own entities (mentions found in the text,
    clustered and typed, relations between them; docs/pipeline.md has the format, and JEREX's
    predictions.json is read as it is): mention, cluster and typed entity F1, MUC, B³, CEAF-e and
    their mean, and strict and relaxed relation F1. With --env-gold and --env-pred it sets the
    original beside every Env copy, with the F1 fall and the consistency rate of relations.

    \b
    Example:
      # predictions come from `envbench predict` or `envbench icl parse`
      envbench evaluate --gold data/sample/docs/test.json --pred runs/atlop/test_pred.json \\
          --train data/sample/docs/train.json --out runs/atlop/scores.json
      envbench evaluate --gold data/env/test_env.json --pred runs/atlop/env_pred.json \\
          --train data/sample/docs/train.json --out runs/atlop/env_scores.json
      # ICL predictions for the first 10 documents (icl prompts --limit 10)
      envbench evaluate --gold data/sample/docs/test.json --pred runs/icl/p10/pred.json --only-predicted
      # end-to-end predictions on the original and on its Env copies, side by side
      envbench evaluate --end-to-end --gold test_revised.json --pred runs/e2e/test_e2e.json \\
          --env-gold runs/lock/env/test_env.json --env-pred runs/e2e/env_e2e.json --out runs/e2e/scores.json
    """
    ctx = click.get_current_context()
    given = [f"--{name.replace('_', '-')}" for name in ("train", "substitutions", "scorer", "env", "skip_invalid_train",
                                                         "only_predicted", "env_gold", "env_pred", "pred_format",
                                                         "skip_invalid")
             if ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE]
    if end_to_end:
        unused = [o for o in given if o in ("--train", "--substitutions", "--scorer", "--env", "--skip-invalid-train",
                                            "--only-predicted")]
        if unused:
            raise click.UsageError(f"{unused[0]} is for given-entities predictions; --end-to-end takes --gold, --pred, "
                                   "--env-gold, --env-pred, --pred-format, --skip-invalid and --out")
        from envbench.scoring.evaluate_end_to_end import evaluate_end_to_end

        _echo(evaluate_end_to_end(gold, pred, env_gold=env_gold, env_pred=env_pred, pred_format=pred_format,
                                  skip_invalid=skip_invalid, out=out, progress=progress))
        return
    e2e_only = [o for o in given if o in ("--env-gold", "--env-pred", "--pred-format", "--skip-invalid")]
    if e2e_only:
        raise click.UsageError(f"{e2e_only[0]} needs --end-to-end (it is for end-to-end predictions); "
                               + E2E_ONLY_ADVICE[e2e_only[0]])
    from envbench.scoring.evaluate import evaluate as run

    _echo(run(gold, pred, train=train, out=out, substitutions=substitutions, scorer=scorer, env=env,
              skip_invalid_train=skip_invalid_train, only_predicted=only_predicted, progress=progress))


def _echo_outcome(warnings: Sequence[str], body: str, notes: Sequence[str], written: Sequence[object]) -> None:
    """What `evaluate` and `report` print: warnings (on stderr), the table or summary, notes, the files written."""
    for w in warnings:
        click.echo(f"Warning: {w}", err=True)
    click.echo(body)
    for n in notes:
        click.echo(f"Note: {n}")
    if written:
        click.echo(f"Wrote {', '.join(str(p) for p in written)}")


def _echo(result: EvaluateResult | EndToEndResult) -> None:
    """An evaluation's warnings, its table, its notes and the file it wrote."""
    _echo_outcome(result.warnings, result.table(), result.notes, [result.out] if result.out is not None else [])


@click.command()
@click.option("--original-gold", required=True, type=_FILE, help="Gold documents of the original benchmark.")
@click.option("--original-pred", type=_FILE, help="Predictions on the original benchmark (one Env benchmark).")
@click.option("--env-gold", type=_FILE,
              help="Gold documents of the Env benchmark (titles '<title>-k'), from `envbench generate`.")
@click.option("--env-pred", type=_FILE, help="Predictions on the Env benchmark.")
@click.option("--env", "envs", multiple=True, type=click.Path(exists=True, file_okay=False),
              help="Robustness report: an Env folder of `envbench generate` (any --attack, --rate, --popularity; "
                   "repeatable, all made from --original-gold). Needs --system instead of the --*-pred options.")
@click.option("--system", "systems", multiple=True,
              help="With --env: NAME=FOLDER, a system's predictions: FOLDER/original.json on --original-gold and "
                   "FOLDER/<Env folder name>.json on each --env folder's Env file (repeatable; any system).")
@click.option("--index", type=click.Path(file_okay=False),
              help="Wikidata index directory (from `envbench ingest-dump`), for popularity (Table 4).")
@click.option("--train", "train", multiple=True, type=_FILE,
              help="Training documents: enables Ign F1 and the name-overlap table (Table 5). Repeatable.")
@click.option("--substitutions", type=_FILE,
              help="substitutions.parquet from `envbench generate`. Default: the one beside --env-gold.")
@click.option("--stats", type=_FILE,
              help="stats.json from `envbench generate` (Table 1). Default: the one beside --env-gold.")
@click.option("--scorer", type=click.Choice(SCORERS), default="docred", show_default=True,
              help="Which official scorer's smoothing to copy (see `envbench evaluate --help`).")
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="Directory for report.md, report.json, the PNG plots and manifest.json.")
@progress_option
def report(original_gold: str, original_pred: str | None, env_gold: str | None, env_pred: str | None,
           envs: tuple[str, ...], systems: tuple[str, ...], index: str | None, train: tuple[str, ...],
           substitutions: str | None, stats: str | None, scorer: str, out: str, progress: bool) -> None:
    """Compare a model on the original and the renamed (Env) benchmark, as in the paper's analyses.

    Writes report.md, report.json and two plots: precision/recall change (Table 2), intra/inter
    F1 (Table 3), F1 by number of entities with linear-fit slopes (Figure 4), popularity of the
    renamed entities per type (Table 4, needs --index), names seen in training per type
    (Table 5, needs --train), substitution rates (Table 1), and the consistency rate: of the
    facts predicted correctly on an original document, the share still correct on its twins.
    Env scores are the mean ± std over seeds and the pooled score of the whole file (see
    `envbench evaluate --help`); --env-gold must be generated from --original-gold.

    With --env (repeatable) and --system instead, it writes the robustness report: one table of
    every system on the original and on each Env folder (the attack, rate and popularity bin its
    stats.json records; F1, Ign F1, P, R, intra and inter F1; the fall against the original with a
    paired 95% bootstrap interval over documents), robustness.md, robustness.json and
    rate_curve.png, F1 against the renaming rate per system. A type-swap row is a negative control.

    \b
    Example:
      envbench report --original-gold data/sample/docs/test.json \\
          --original-pred runs/atlop/test_pred.json \\
          --env-gold data/env/test_env.json --env-pred runs/atlop/env_pred.json \\
          --index data/index --train data/sample/docs/train.json --out runs/atlop/report
      # attacks side by side: runs/atlop/preds holds original.json, env.json, env-mask.json
      envbench report --original-gold data/sample/docs/test.json \\
          --env data/env --env data/env-mask --system atlop=runs/atlop/preds \\
          --train data/sample/docs/train.json --out runs/atlop/robustness
    """
    if envs or systems:
        given = [o for o, v in (("--original-pred", original_pred), ("--env-gold", env_gold), ("--env-pred", env_pred),
                                ("--index", index), ("--substitutions", substitutions), ("--stats", stats)) if v]
        if given:
            raise click.UsageError(f"{given[0]} is for one Env benchmark's report; with --env and --system, each "
                                   "system's predictions are found in its --system folder")
        if not envs or not systems:
            raise click.UsageError("Missing option '--env'." if not envs else "Missing option '--system'.")
        from envbench.scoring.report.robustness import parse_system, robustness_report
        from etl.progress import Stages

        with Stages("report", 1, enabled=progress) as stage:
            stage("score every system on every benchmark")
            rob = robustness_report(original_gold, envs, [parse_system(s) for s in systems], out=out, train=train,
                                    scorer=scorer)
        _echo_report(rob)
        return
    for option, value in (("--original-pred", original_pred), ("--env-gold", env_gold), ("--env-pred", env_pred)):
        if value is None:
            raise click.UsageError(f"Missing option '{option}'.")
    assert original_pred is not None and env_gold is not None and env_pred is not None
    from envbench.scoring.report import make_report

    _echo_report(make_report(
        original_gold, original_pred, env_gold, env_pred, index=index, train=train,
        substitutions=substitutions, stats=stats, scorer=scorer, out=out, progress=progress,
    ))


def _echo_report(result: ReportResult | RobustnessResult) -> None:
    """A report's warnings, its summary, its notes and the files it wrote."""
    _echo_outcome(result.warnings, result.summary(), result.notes, result.files)
