"""``envbench name-overlap``: the names an EVRT experiment's twins, Env test and training share."""

from __future__ import annotations

import click

_FILE = click.Path(dir_okay=False)


@click.command("name-overlap")
@click.option("--twins", type=_FILE, help="EVRT twins (<stem>_twins.json of `generate --twins`).")
@click.option("--twins-source", type=_FILE, help="The documents the twins were generated from.")
@click.option("--env", type=_FILE, help="The Env benchmark the models are scored on (<stem>_env.json).")
@click.option("--env-source", type=_FILE,
              help="The documents the Env benchmark was generated from: the original test file, also scored.")
@click.option("--train", "train", multiple=True, type=_FILE,
              help="Training documents (repeatable): the Env benchmark's new names must not be among their names.")
@click.option("--out", type=click.Path(dir_okay=False), help="Also write the counts as JSON here.")
def name_overlap(twins: str | None, twins_source: str | None, env: str | None, env_source: str | None,
                 train: tuple[str, ...], out: str | None) -> None:
    """Count the names that EVRT's twins, the scored documents and training share; fail when any.

    Three rows, as the files given allow: the twins' new names that are mention names of the test
    documents (--env-source), those that are new names of the Env benchmark, and the Env benchmark's
    new names that are mention names of the training documents. New names are the PER/ORG/LOC/MISC
    mention names a renamed document's source lacks, compared case- and accent-folded as `generate
    --exclude-names-from` compares them. Exits 1 when a row is not zero; the table is printed and
    --out written either way.

    \b
    Example (the sample world, its Env test, twins kept off both test files, then the check):
      envbench make-sample --out data/sample
      envbench ingest-dump data/sample/wikidata-sample.json.gz --out data/index
      envbench generate data/sample/docs/test.json --index data/index \\
          --links data/sample/links.json --exclude-names-from data/sample/docs/train.json --out data/env
      envbench generate data/sample/docs/train.json --index data/index \\
          --links data/sample/links.json --pool train --seeds 1 --twins \\
          --exclude-names-from data/sample/docs/test.json \\
          --exclude-names-from data/env/test_env.json --out data/twins
      envbench name-overlap --twins data/twins/train_twins.json \\
          --twins-source data/sample/docs/train.json --env data/env/test_env.json \\
          --env-source data/sample/docs/test.json --train data/sample/docs/train.json
    """
    from envbench.core.errors import EnvbenchError
    from envbench.rename.name_overlap import name_overlap as run
    from etl.io import write_json_atomic

    result = run(twins=twins, twins_source=twins_source, env=env, env_source=env_source, train=train)
    click.echo(result.summary())
    if out is not None:
        write_json_atomic(out, result.as_dict(), indent=True)
    if (problem := result.problem()) is not None:
        raise EnvbenchError(problem)
