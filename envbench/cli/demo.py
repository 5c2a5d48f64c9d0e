"""The main job end to end on the built-in sample world, offline (``make demo``).

    envbench demo --out runs/demo

1. make-sample: a small synthetic Wikidata dump plus DocRED-format documents and gold links;
2. ingest-dump: the dump -> Parquet index tables;
3. generate --seeds 5 on the sample test split;

then a summary table (documents, entities renamed per type, time taken) and where the files are.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from envbench.core.types import COARSE_TYPES
from etl.io import read_json, require_path


def run_demo(out: str | Path, *, seeds: int = 5, force: bool = False) -> str:
    """Run the three steps under ``out`` and return the printed summary."""
    from envbench.core.checks import check_seeds
    from envbench.core.text import name_tokenizer
    from envbench.rename.generate import generate
    from envbench.worlds.sample import make_sample
    from etl.step import check_writable
    from wikidata_index.ingest import ingest_dump

    # checked before the first step, so a bad option never leaves a half-built demo behind
    check_seeds(seeds)
    require_path(out, "--out", "the demo folder", "--out runs/demo")
    check_writable(out, "--out", folder=True)
    out = Path(out)
    timings: list[tuple[str, float]] = []
    t = time.perf_counter()
    sample = make_sample(out / "sample")
    timings.append(("make-sample", time.perf_counter() - t))
    t = time.perf_counter()
    ingest_dump(sample.dump, out / "index", force=force, progress=False, tokenizer=name_tokenizer())
    timings.append(("ingest-dump", time.perf_counter() - t))
    t = time.perf_counter()
    result = generate(out / "sample" / "docs" / "test.json", out / "index", out / "env",
                      links=sample.links, seeds=seeds, force=force, progress=sys.stderr.isatty())
    timings.append(("generate", time.perf_counter() - t))
    stats = result.stats or read_json(out / "env" / "stats.json", what="stats file")  # empty when up to date

    lines = ["", "envbench demo: Env benchmark of the sample world's test split", ""]
    lines.append(f"{'step':<14}{'seconds':>9}")
    lines += [f"{name:<14}{sec:>9.2f}" for name, sec in timings]
    lines.append("")
    lines.append(f"documents: {stats['documents']} source x {stats['seeds']} seeds = "
                 f"{stats['output_documents']} renamed documents")
    lines.append(f"{'type':<7}{'renamed':>9}{'entities':>10}{'rate':>8}")
    for ty in (*COARSE_TYPES, "total"):
        c = stats["renamed"][ty]
        lines.append(f"{ty:<7}{c['renamed']:>9}{c['entities']:>10}{stats['substitution_rate'][ty]:>8.3f}")
    if stats["kept_reasons"]:
        lines.append("kept: " + ", ".join(f"{k} {v}" for k, v in stats["kept_reasons"].items()))
    audit = stats["audit"]["total"]
    lines.append(f"audit: {audit['held_after']} of {audit['held_before']} type-constraint checks still hold")
    if result.up_to_date:
        lines.append("(generate: outputs were up to date; nothing regenerated)")
    lines.append("")
    lines.append(f"sample world: {out / 'sample'}")
    lines.append(f"index:        {out / 'index'}")
    lines.append(f"benchmark:    {out / 'env' / 'test_env.json'}")
    lines.append(f"details:      {out / 'env' / 'substitutions.parquet'}, {out / 'env' / 'stats.json'}")
    return "\n".join(lines)


@click.command("demo")
@click.option("--out", default="runs/demo", show_default=True,
              help="Directory for the sample world, its index and the benchmark.")
@click.option("--seeds", type=int, default=5, show_default=True, help="Renamed copies per document.")
@click.option("--force", is_flag=True, help="Redo every step, even those whose outputs are up to date.")
def demo(out: str, seeds: int, force: bool) -> None:
    """Run the main job end to end on the built-in sample world, offline, in a few seconds.

    make-sample writes a small synthetic Wikidata dump with DocRED-format documents and gold links;
    ingest-dump turns the dump into index tables; generate --seeds 5 renames the test split. The
    summary shows the time per step and the entities renamed per type.

    \b
    Example:
      envbench demo --out runs/demo
    """
    click.echo(run_demo(out, seeds=seeds, force=force))
