"""``envbench link``: link the entities of DocRED documents to the items of a local index."""

from __future__ import annotations

import click

from envbench.cli._options import progress_option


@click.command()
@click.argument("docs", type=click.Path(dir_okay=False))
@click.option("--index", "index", required=True, type=click.Path(file_okay=False),
              help="Index directory written by `envbench ingest-dump`.")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False),
              help="Link file to write: {title: [QID or null per entity index]} (and OUT.manifest.json beside it).")
@click.option("--gold", type=click.Path(dir_okay=False), default=None,
              help="Gold link file (any --links format of `generate`) to report accuracy against.")
@click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=0.5, show_default=True,
              help="Abstain (null) when the chosen item's softmax confidence is at or below this.")
@click.option("--report", type=click.Path(dir_okay=False), default=None,
              help="Also write the coverage/accuracy report as JSON here.")
@click.option("--skip-invalid", is_flag=True, help="Skip invalid documents instead of stopping.")
@click.option("--force", is_flag=True, help="Link again even when the outputs are up to date.")
@progress_option
def link(docs: str, index: str, out: str, gold: str | None, threshold: float, report: str | None,
         skip_invalid: bool, force: bool, progress: bool) -> None:
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
    from envbench.rename.link import link_file

    result = link_file(docs, index, out, gold=gold, threshold=threshold, report=report,
                       skip_invalid=skip_invalid, force=force, progress=progress)
    click.echo(result.summary())
