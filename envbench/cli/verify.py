"""``envbench lock`` and ``envbench verify``: pin a generated benchmark, and prove it regenerates."""

from __future__ import annotations

import click

from envbench.cli._options import progress_option


@click.command()
@click.argument("out", type=click.Path(file_okay=False))
@click.option("--index", "index", required=True, type=click.Path(file_okay=False),
              help="The index OUT was generated with (its content identity goes into the lock).")
@click.option("--out", "lock_path", type=click.Path(dir_okay=False), default=None,
              help="Where to write the lock [default: OUT/<stem>_env.lock.json].")
@progress_option
def lock(out: str, index: str, lock_path: str | None, progress: bool) -> None:
    """Write the lock of a `generate` output folder: inputs, parameters, index identity, output hashes.

    The lock (*.lock.json) is what `envbench verify` checks a regeneration against: the sha256 of
    the source documents and link file, the generate parameters, the index identity (the dump's
    sha256, languages and index format), the package and library versions, and per output its
    sha256 with a hash per document (Parquet: a hash of its rows). OUT's outputs must be the files
    generate wrote there.

    \b
    Example (the first three lines build a benchmark of the sample world):
      envbench make-sample --out data/sample
      envbench ingest-dump data/sample/wikidata-sample.json.gz --out data/index
      envbench generate data/sample/docs/test.json --index data/index \\
          --links data/sample/links.json --exclude-names-from data/sample/docs/train.json \\
          --seeds 5 --out data/env
      envbench lock data/env --index data/index
    """
    from envbench.rename.lock import write_lock

    click.echo(f"wrote {write_lock(out, index, lock_path, progress=progress)}")


@click.command()
@click.argument("lock_file", metavar="LOCK", type=click.Path(dir_okay=False))
@click.option("--docs", required=True, type=click.Path(dir_okay=False),
              help="The source documents the lock was made from (checked by sha256).")
@click.option("--index", "index", required=True, type=click.Path(file_okay=False),
              help="Index directory written by `envbench ingest-dump` from the lock's dump.")
@click.option("--links", type=click.Path(dir_okay=False), default=None,
              help="The link file the lock was made with (checked by sha256); leave out when it had none.")
@click.option("--published", type=click.Path(file_okay=False), default=None,
              help="Folder of the published outputs, to name the differing field and to check them too "
                   "[default: the lock's folder when the outputs are there].")
@click.option("--exclude-names-from", "exclude_names_from", multiple=True, type=click.Path(dir_okay=False),
              help="Repeatable: the files the lock's run kept new names off (checked by sha256), in its order.")
@progress_option
def verify(lock_file: str, docs: str, index: str, links: str | None, published: str | None,
           exclude_names_from: tuple[str, ...], progress: bool) -> None:
    """Regenerate the benchmark a lock describes, in a temporary folder, and compare with the lock.

    Exit 0 when every output is identical (JSON: bytes; Parquet: rows in order). Otherwise exit 1,
    naming the first differing document, entity and field (the field needs the published files),
    and the library versions that differ from the lock's. An input whose sha256 differs from the
    lock's is an error naming it. Needs no network; leaves nothing behind.

    \b
    Example (after the `envbench lock` example):
      envbench verify data/env/test_env.lock.json --docs data/sample/docs/test.json \\
          --index data/index --links data/sample/links.json \\
          --exclude-names-from data/sample/docs/train.json
    """
    from envbench.rename.lock import verify as run

    result = run(lock_file, docs, index, links=links, published=published,
                 exclude_names_from=exclude_names_from, progress=progress)
    click.echo(result.report())
    if not result.ok:
        raise SystemExit(1)
