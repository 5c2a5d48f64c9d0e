"""``envbench generate``: the benchmark construction command (``envbench link`` is in cli/link.py)."""

from __future__ import annotations

import click


@click.command()
@click.argument("docs", type=click.Path(dir_okay=False))
@click.option("--index", "index", required=True, type=click.Path(file_okay=False),
              help="Index directory written by `envbench ingest-dump`.")
@click.option("--links", type=click.Path(dir_okay=False), default=None,
              help="Entity links: {title: [QID or null]} (as `envbench link` writes), or a Linked-DocRED / "
                   "Linked-Re-DocRED file. Without it the entities are linked as `envbench link` does.")
@click.option("--seeds", type=int, default=5, show_default=True,
              help="Renamed copies per document, titled <title>-1 .. <title>-K (the paper uses 5).")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False),
              help="Output directory.")
@click.option("--pool", type=click.Choice(["eval", "train"]), default="eval", show_default=True,
              help="Name pool: eval for benchmarks, train for EVRT twins (the two share no item).")
@click.option("--twins", is_flag=True,
              help="Write <stem>_twins.json (same titles as the source) for EVRT; use with --pool train --seeds 1.")
@click.option("--exclude-names-from", "exclude_names_from", multiple=True, type=click.Path(dir_okay=False),
              help="DocRED-format file (repeatable), such as a model's training split: no new name of a "
                   "PER/ORG/LOC/MISC entity is a mention name of its documents (compared case- and "
                   "accent-folded, as the source-document check compares). stats.json reports the share "
                   "of names seen (names_seen).")
@click.option("--force", is_flag=True, help="Regenerate even when the outputs are up to date.")
@click.option("--skip-invalid", is_flag=True, help="Skip invalid documents instead of stopping.")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Progress bar on stderr.")
def generate(docs: str, index: str, links: str | None, seeds: int, out: str, pool: str, twins: bool,
             exclude_names_from: tuple[str, ...], force: bool, skip_invalid: bool, progress: bool) -> None:
    """Build Env-DocRED / Env-Re-DocRED: rename every entity of every document, K times.

    Linked entities get a same-type Wikidata item with enough English names, substituted
    alias-wise; NUM and TIME entities get rule-based values in their written format; the gold
    labels and evidence stay, and type constraints the original items met are checked on the new
    ones. Same inputs, index and seeds give byte-identical files.

    \b
    Writes OUT/<stem>_env.json (or <stem>_twins.json with --twins), OUT/substitutions.parquet,
    OUT/stats.json and OUT/manifest.json.

    \b
    Examples (the first two build the sample world and its index; the last avoids train.json's names):
      envbench make-sample --out data/sample
      envbench ingest-dump data/sample/wikidata-sample.json.gz --out data/index
      envbench generate data/sample/docs/test.json --index data/index \\
          --links data/sample/links.json --seeds 5 --out data/env
      envbench generate data/sample/docs/train.json --index data/index \\
          --links data/sample/links.json --pool train --seeds 1 --twins --out data/twins
      envbench generate data/sample/docs/test.json --index data/index \\
          --links data/sample/links.json --exclude-names-from data/sample/docs/train.json \\
          --out data/env-novel
    """
    from envbench.rename.generate import generate as run

    result = run(docs, index, out, links=links, seeds=seeds, pool=pool, twins=twins, force=force,
                 progress=progress, skip_invalid=skip_invalid, exclude_names_from=exclude_names_from)
    click.echo(result.summary())
