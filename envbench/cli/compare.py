"""``envbench compare``: two systems on one benchmark, with paired bootstrap intervals of their difference."""

from __future__ import annotations

import click

_FILE = click.Path(dir_okay=False)


@click.command()
@click.option("--gold", required=True, type=_FILE, help="Gold documents of the test file (the original benchmark).")
@click.option("--env-gold", type=_FILE,
              help="Its Env version (titles <title>-k); without it only test F1 is compared.")
@click.option("--a-test", "a_test", multiple=True, required=True, type=_FILE,
              help="System A's predictions on --gold, one file per training run (repeatable).")
@click.option("--a-env", "a_env", multiple=True, type=_FILE,
              help="System A's predictions on --env-gold, one per run, in the order of --a-test.")
@click.option("--b-test", "b_test", multiple=True, required=True, type=_FILE,
              help="System B's predictions on --gold, one file per training run (repeatable).")
@click.option("--b-env", "b_env", multiple=True, type=_FILE,
              help="System B's predictions on --env-gold, one per run, in the order of --b-test.")
@click.option("--name-a", default="A", show_default=True, help="System A's name in the table.")
@click.option("--name-b", default="B", show_default=True, help="System B's name in the table.")
@click.option("--samples", type=int, default=2000, show_default=True,
              help="Bootstrap samples (`report --env` draws as many; at --seed 0, the same documents).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the draws (hashed with the document titles; the same seed, the same interval).")
@click.option("--level", type=float, default=0.95, show_default=True, help="Confidence level of the intervals.")
@click.option("--unpaired-runs", is_flag=True,
              help="Draw each system's runs on their own, even when both have as many (by default the i-th "
                   "runs of the two are paired: the same training seed of each arm).")
@click.option("--out", type=click.Path(dir_okay=False), help="Also write the comparison as JSON here.")
def compare(gold: str, env_gold: str | None, a_test: tuple[str, ...], a_env: tuple[str, ...],
            b_test: tuple[str, ...], b_env: tuple[str, ...], name_a: str, name_b: str, samples: int, seed: int,
            level: float, unpaired_runs: bool, out: str | None) -> None:
    """Compare two systems on one benchmark: B minus A in test F1, Env F1 and the F1 fall, with intervals.

    A paired bootstrap: each sample draws the test documents with replacement, each with its Env
    copies, and both systems are scored on the same draw; where a system has several training runs,
    the sample also draws its runs (the i-th runs of the two systems together, when both have as
    many). F1 is micro-averaged over the drawn documents as `envbench evaluate` computes it, Env F1 is
    the mean over the renaming seeds, the fall is test F1 minus Env F1. An interval that spans 0 is
    reported as no measurable difference.

    \b
    Example (the gold sets and predictions of a `bench/evrt.toml` run; its report publishes them):
      envbench compare --gold runs/evrt/data/test.json --env-gold runs/evrt/data/env.json \\
          --a-test runs/evrt/vanilla-s42/pred-test.json --a-env runs/evrt/vanilla-s42/pred-env.json \\
          --b-test runs/evrt/evrt-s42/pred-test.json --b-env runs/evrt/evrt-s42/pred-env.json \\
          --name-a vanilla --name-b evrt
    """
    from envbench.scoring.compare import SystemFiles
    from envbench.scoring.compare import compare as run
    from etl.io import write_json_atomic

    result = run(SystemFiles(name_a, list(a_test), list(a_env)), SystemFiles(name_b, list(b_test), list(b_env)),
                 gold=gold, env_gold=env_gold, samples=samples, seed=seed, level=level,
                 paired_runs=False if unpaired_runs else None)
    click.echo(result.summary())
    if out is not None:
        write_json_atomic(out, result.as_dict(), indent=True)
