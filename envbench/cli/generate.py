"""``envbench generate``: the benchmark construction command (``envbench link`` is in cli/link.py)."""

from __future__ import annotations

import click

from envbench.cli._options import progress_option


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
              help="Write <stem>_twins.json (same titles as the source) for EVRT; use with --pool train --seeds 1 "
                   "and --exclude-names-from the scored documents.")
@click.option("--exclude-names-from", "exclude_names_from", multiple=True, type=click.Path(dir_okay=False),
              help="DocRED-format file (repeatable), such as a model's training split: no new name of a "
                   "PER/ORG/LOC/MISC entity is a mention name of its documents (compared case- and "
                   "accent-folded, as the source-document check compares). stats.json reports the share "
                   "of names seen (names_seen). With --twins it is required: the documents the EVRT model is "
                   "scored on (the test file and its Env version). --pool eval needs it too (for --attack rename "
                   "and type-swap, which draw new names), or --allow-training-names.")
@click.option("--allow-training-names", is_flag=True,
              help="Build a --pool eval benchmark without --exclude-names-from: new names may then be names a "
                   "model saw in training (recorded in stats.json, names_seen.training_names, and manifest.json).")
@click.option("--attack", type=click.Choice(["rename", "mask", "shuffle", "type-swap"]), default="rename",
              show_default=True,
              help="What the names become: rename (the Env benchmark: novel names of the same fine type), mask "
                   "(each entity's mentions become its type placeholder, 'Person 3'), shuffle (names permuted "
                   "among the document's entities of one coarse type) or type-swap (names of an item of another "
                   "coarse type: a negative control that breaks what the labels assume). docs/renaming.md#attacks.")
@click.option("--rate", type=float, default=1.0, show_default=True,
              help="With --attack rename: rename only this share of the renamable entities, drawn by seed; the "
                   "entities renamed at a lower rate are among those renamed at a higher one, with the same names.")
@click.option("--popularity", type=click.Choice(["low", "high"]), default=None,
              help="With --attack rename: draw new items only from the lower (low) or upper (high) quartile of "
                   "popularity in their class (relation instances in the dump; needs an index with popularity).")
@click.option("--force", is_flag=True, help="Regenerate even when the outputs are up to date.")
@click.option("--skip-invalid", is_flag=True, help="Skip invalid documents instead of stopping.")
@progress_option
def generate(docs: str, index: str, links: str | None, seeds: int, out: str, pool: str, twins: bool,
             exclude_names_from: tuple[str, ...], allow_training_names: bool, attack: str, rate: float,
             popularity: str | None, force: bool, skip_invalid: bool, progress: bool) -> None:
    """Build Env-DocRED / Env-Re-DocRED: rename every entity of every document, K times.

    Linked entities get a same-type Wikidata item with enough English names, substituted
    alias-wise; NUM and TIME entities get rule-based values in their written format; the gold
    labels and evidence stay, and type constraints the original items met are checked on the new
    ones. Same inputs, index and seeds give byte-identical files. A benchmark (--pool eval) keeps
    its new names off the documents the models train on: name them with --exclude-names-from (or
    say --allow-training-names).

    \b
    Writes OUT/<stem>_env.json (or <stem>_twins.json with --twins), OUT/substitutions.parquet,
    OUT/stats.json and OUT/manifest.json. Another --attack than rename, a --rate under 1 or a
    --popularity bin is recorded in stats.json ('attack') and the manifest; `envbench report --env`
    sets several such folders side by side.

    \b
    Examples (sample world, index, Env novel to train and dev, twins, a masked copy, 40% renamed):
      envbench make-sample --out data/sample
      envbench ingest-dump data/sample/wikidata-sample.json.gz --out data/index
      envbench generate data/sample/docs/test.json --index data/index \\
          --links data/sample/links.json --exclude-names-from data/sample/docs/train.json \\
          --exclude-names-from data/sample/docs/dev.json --seeds 5 --out data/env
      envbench generate data/sample/docs/train.json --index data/index \\
          --links data/sample/links.json --pool train --seeds 1 --twins \\
          --exclude-names-from data/sample/docs/test.json \\
          --exclude-names-from data/env/test_env.json --out data/twins
      envbench generate data/sample/docs/test.json --index data/index \\
          --links data/sample/links.json --attack mask --seeds 1 --out data/env-mask
      envbench generate data/sample/docs/test.json --index data/index \\
          --links data/sample/links.json --exclude-names-from data/sample/docs/train.json \\
          --rate 0.4 --out data/env-rate0.4
    """
    from envbench.rename.generate import generate as run

    result = run(docs, index, out, links=links, seeds=seeds, pool=pool, twins=twins, force=force,
                 progress=progress, skip_invalid=skip_invalid, exclude_names_from=exclude_names_from,
                 allow_training_names=allow_training_names, attack=attack, rate=rate, popularity=popularity)
    click.echo(result.summary())
