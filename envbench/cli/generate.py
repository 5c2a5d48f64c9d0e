"""``envbench link`` and ``envbench generate``: the benchmark construction commands."""

from __future__ import annotations

import click


@click.command()
@click.argument("docs", type=click.Path(dir_okay=False))
@click.option("--index", "index", required=True, type=click.Path(file_okay=False),
              help="Index directory written by `envbench ingest-dump`.")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False),
              help="Link file to write: {title: [QID or null per entity index]}.")
@click.option("--gold", type=click.Path(dir_okay=False), default=None,
              help="Gold link file (any --links format of `generate`) to report accuracy against.")
@click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=0.5, show_default=True,
              help="Abstain (null) when the chosen item's softmax confidence is at or below this.")
@click.option("--report", type=click.Path(dir_okay=False), default=None,
              help="Also write the coverage/accuracy report as JSON here.")
@click.option("--skip-invalid", is_flag=True, help="Skip invalid documents instead of stopping.")
def link(docs: str, index: str, out: str, gold: str | None, threshold: float, report: str | None,
         skip_invalid: bool) -> None:
    """Link the entities of a DocRED-format file to Wikidata items of a local index.

    Candidates are exact and case/diacritic-folded matches of mention names against English
    labels and aliases, filtered by a P31 class compatible with the DocRED coarse type (through the
    P279 closure), disambiguated jointly per document (items between which the index has the
    document's gold relations win, then popularity); at or below --threshold the entity stays unlinked.
    NUM and TIME entities are never linked. The output is the project's link format, accepted by
    `envbench generate --links`.

    \b
    Example (the first two lines build the sample world and its index):
      envbench make-sample --out data/sample
      envbench ingest-dump data/sample/wikidata-sample.json.gz --out data/index
      envbench link data/sample/docs/test.json --index data/index --out data/test.links.json \\
          --gold data/sample/links.json
    """
    from envbench.formats.docred import read_docs
    from envbench.formats.links import read_links
    from envbench.rename.generate import check_writable, require_documents
    from envbench.rename.link import link_documents
    from etl.io import write_json_atomic
    from wikidata_index.index import WikidataIndex

    check_writable(out, "--out")
    if report:
        check_writable(report, "--report")
    docset = read_docs(docs, skip_invalid=skip_invalid)
    require_documents(docset)
    gold_links = read_links(gold, docset.docs) if gold else None
    with WikidataIndex(index) as ix:
        ix.require("entities", "names", "types", "subclasses", "edges")
        result = link_documents(docset.docs, ix.con, gold=gold_links, threshold=threshold)
    write_json_atomic(out, result.links)
    if report:
        write_json_atomic(report, result.report, indent=True)
    click.echo(result.summary())
    click.echo(f"wrote {out}" + (f" and {report}" if report else ""))


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
@click.option("--force", is_flag=True, help="Regenerate even when the outputs are up to date.")
@click.option("--skip-invalid", is_flag=True, help="Skip invalid documents instead of stopping.")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Progress bar on stderr.")
def generate(docs: str, index: str, links: str | None, seeds: int, out: str, pool: str, twins: bool,
             force: bool, skip_invalid: bool, progress: bool) -> None:
    """Build Env-DocRED / Env-Re-DocRED: rename every entity of every document, K times.

    Linked entities get a same-type Wikidata item with enough English names, substituted
    alias-wise; NUM and TIME entities get rule-based values in their written format; the gold
    labels and evidence stay, and type constraints the original items met are checked on the new
    ones. Same inputs, index and seeds give byte-identical files.

    \b
    Writes OUT/<stem>_env.json (or <stem>_twins.json with --twins), OUT/substitutions.parquet,
    OUT/stats.json and OUT/manifest.json.

    \b
    Examples (the first two lines build the sample world and its index):
      envbench make-sample --out data/sample
      envbench ingest-dump data/sample/wikidata-sample.json.gz --out data/index
      envbench generate data/sample/docs/test.json --index data/index \\
          --links data/sample/links.json --seeds 5 --out data/env
      envbench generate data/sample/docs/train.json --index data/index \\
          --links data/sample/links.json --pool train --seeds 1 --twins --out data/twins
    """
    from envbench.rename.generate import generate as run

    result = run(docs, index, out, links=links, seeds=seeds, pool=pool, twins=twins, force=force,
                 progress=progress, skip_invalid=skip_invalid)
    click.echo(result.summary())
