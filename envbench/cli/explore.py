"""``envbench explore``."""

from __future__ import annotations

import click

from envbench.cli._options import progress_option


@click.command("explore")
@click.option("--env-gold", required=True, type=click.Path(dir_okay=False),
              help="The Env benchmark: <stem>_env.json written by `envbench generate` (titles '<title>-k').")
@click.option("--original-gold", required=True, type=click.Path(dir_okay=False),
              help="The source documents the benchmark was generated from.")
@click.option("--substitutions", type=click.Path(dir_okay=False), default=None,
              help="substitutions.parquet of the same generate run (names, QIDs, fine types, kept reasons). "
                   "Default: the one beside --env-gold, when there is one.")
@click.option("--original-pred", type=click.Path(dir_okay=False), default=None,
              help="A model's predictions on --original-gold (official format: [{title, h_idx, t_idx, r}]).")
@click.option("--env-pred", type=click.Path(dir_okay=False), default=None,
              help="The same model's predictions on --env-gold; with --original-pred, shows lost facts.")
@click.option("--report", type=click.Path(file_okay=False, exists=True), default=None,
              help="An `envbench report` output folder; its plots go on the summary page.")
@click.option("--index", type=click.Path(file_okay=False, exists=True), default=None,
              help="The index the benchmark was generated with: QIDs and fine types are shown with their labels.")
@click.option("--out", required=True, help="Folder to write the site to (index.html and its data files).")
@click.option("--force", is_flag=True, help="Rebuild even when the site is up to date.")
@progress_option
def explore(env_gold: str, original_gold: str, substitutions: str | None, original_pred: str | None,
            env_pred: str | None, report: str | None, index: str | None, out: str, force: bool,
            progress: bool) -> None:
    """Write a static site to browse original and renamed documents side by side.

    A document list (search, filters by type and kept reason, F1 on the original and on the twins),
    one document's original and renamed text sentence by sentence with every mention coloured by
    entity, each entity's substitution, and, with predictions, the facts lost on the twin first.
    Open OUT/index.html from disk: no server and no network are needed.

    \b
    Example:
      envbench explore --env-gold data/env/test_env.json --original-gold data/sample/docs/test.json \\
          --original-pred runs/pred-test.json --env-pred runs/pred-env.json --index data/index --out runs/explore
    """
    from envbench.scoring.explore import build_site

    if (original_pred is None) != (env_pred is None):
        raise click.UsageError("--original-pred and --env-pred go together: lost facts compare the two")
    result = build_site(env_gold, original_gold, out, substitutions=substitutions, original_pred=original_pred,
                        env_pred=env_pred, report=report, index=index, force=force, progress=progress)
    click.echo(result.summary())
