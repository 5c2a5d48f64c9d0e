"""`envbench make-sample`, `envbench kb-from-corpus` and `envbench validate`."""

from __future__ import annotations

from pathlib import Path

import click

from envbench.cli._options import progress_option
from etl.io import dumps_json, require_path


@click.command("make-sample")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False),
              help="Directory to write: wikidata-sample.json.gz, docs/{train,dev,test}.json, links.json, "
                   "docs/test.linked-docred.json.")
@click.option("--seed", type=click.IntRange(min=-(2**63), max=2**63 - 1), default=0, show_default=True,
              help="World seed (a 64-bit integer, which the manifest records); the same seed writes byte-identical "
                   "files.")
@click.option("--entities", type=click.IntRange(min=60, max=100_000_000), default=None,
              help="Number of items (default 1200: about 52 per class, 208 humans; every class gets at least 6, so "
                   "the smallest world has about 125; at most 2,000,000, built in memory, or with --lean "
                   "100,000,000, about Wikidata's size).")
@click.option("--docs", type=click.IntRange(min=3, max=1_000_000), default=None,
              help="Number of documents over all splits (default 100; dealt 60/20/20 to train/dev/test).")
@click.option("--lean", is_flag=True,
              help="Beyond the default world, write the remaining --entities as lean items (names and P31 "
                   "only), streamed, for scale benchmarks.")
@click.option("--force", is_flag=True, help="Write the world again even when OUT is up to date.")
def make_sample(out: str, seed: int, entities: int | None, docs: int | None, lean: bool, force: bool) -> None:
    """Write a deterministic sample world: a Wikidata dump, DocRED documents and their gold links.

    The dump is in the official JSON-dump format (20 fine classes such as human, city, record label,
    album; real class and property ids with P279 links and P2302 type constraints; synthetic item
    names with 0-5 aliases). Documents are DocRED-format, rendered from templates about the items,
    with gold triples that agree with the dump's claims. Every later command runs on these files.
    OUT/manifest.json is written last; a rerun with the same options writes nothing.

    \b
    Example:
      envbench make-sample --out data/sample
      envbench ingest-dump data/sample/wikidata-sample.json.gz --out data/sample-index
      envbench make-sample --out data/big --entities 1000000 --lean
    """
    from envbench.worlds.sample import make_sample as run

    require_path(out, "--out", "the folder for the sample world", "--out data/sample")
    result = run(out, seed=seed, entities=entities, docs=docs, lean=lean, force=force)
    click.echo(result.summary())


@click.command("kb-from-corpus")
@click.argument("docs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False),
              help="Dump to write (KB.json.gz, the official Wikidata array format; ingest it with ingest-dump).")
@click.option("--links", "links", required=True, type=click.Path(dir_okay=False),
              help="Linking to write: {title: [QID or null per entity index]}.")
@click.option("--index", "index", type=click.Path(file_okay=False), default=None,
              help="An index built from a real Wikidata dump; its property constraints take precedence over "
                   "the bundled type table when inferring fine types.")
@click.option("--untyped", type=click.Choice(["coarse", "keep"]), default="coarse", show_default=True,
              help="ORG/LOC/MISC items no typing signal speaks for: 'coarse' gives them their coarse type's "
                   "class, a catch-all that generate keeps (generic_type); 'keep' gives them no P31, so "
                   "generate keeps them as no_type. Either way none is renamed across kinds.")
@click.option("--skip-invalid", is_flag=True, help="Skip (and count) invalid documents instead of stopping.")
@click.option("--force", is_flag=True, help="Build again even when the dump and links are up to date.")
@click.option("--verbose", "-v", is_flag=True,
              help="List every inferred class with its items (by default the 10 largest; all of them are in "
                   "OUT.manifest.json, report.per_type).")
@progress_option
def kb_from_corpus(docs: tuple[str, ...], out: str, links: str, index: str | None, untyped: str,
                   skip_invalid: bool, force: bool, verbose: bool, progress: bool) -> None:
    """Build a knowledge base and gold links from DocRED-format documents themselves.

    One item per real-world entity (clusters merged across documents by folded name, a leading "the"
    dropped, and coarse type, and within a document when two entities share such a name; label = most
    frequent mention name, aliases = the other names), one fine P31 per item voted by the typing signals
    (adjectival forms, the name's kind word, gazetteers, definitions, kind nouns beside mentions, gold
    relation roles, a model learned from those; see docs/pipeline.md), the adjectival forms of the
    bundled lexicon that no document names as items of their own ("Lutheran", "Whig"), and hashed QIDs
    in Q1000000000000-Q1999999999999.
    This lets the renaming method run on corpora that are not linked to Wikidata, such as Re-DocRED.
    The dump and the links appear together, with KB.manifest.json beside the dump written last.

    \b
    Example:
      envbench kb-from-corpus ../shared/data/re-docred/dev_revised.json \\
          ../shared/data/re-docred/test_revised.json --out data/redocred-kb.json.gz \\
          --links data/redocred-links.json
      envbench ingest-dump data/redocred-kb.json.gz --out data/redocred-index
    """
    from envbench.worlds.kb_from_corpus import kb_from_corpus as run

    result = run(list(docs), out, links, index=index, untyped=untyped, skip_invalid=skip_invalid, force=force,
                 progress=progress)
    click.echo(result.summary(verbose=verbose))


@click.command("validate")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--skip-invalid", is_flag=True,
              help="Count and list invalid documents instead of stopping at the first one.")
@click.option("--show", type=click.IntRange(min=0), default=10, show_default=True,
              help="How many skipped documents and warnings to print per file.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per file instead of text.")
def validate(files: tuple[str, ...], skip_invalid: bool, show: int, as_json: bool) -> None:
    """Check DocRED, Re-DocRED or Linked-DocRED files.

    Checks: positions in range, mention tokens equal to the mention name (mismatches are warnings;
    Re-DocRED has some), relation ids among the 96 DocRED relations, evidence sentences in range, no
    entity without mentions, unique non-empty titles, tokens of at most 1,000 characters. Warnings,
    which stop nothing: null labels or evidence, a repeated label, fewer than two entities, an empty
    token, a control or bidirectional control character in a token (read as it is). Each file is
    also named as an official release of DocRED or Re-DocRED (by size and sha256), or as a modified
    or unknown version, whose scores are not comparable with published ones. Without
    --skip-invalid the first invalid document stops the run with exit code 1; with --json every file
    is reported (an unreadable or invalid one as {"file", "error"}), and the exit code is 1 after.

    \b
    Example:
      envbench validate ../shared/data/re-docred/dev_revised.json
      envbench validate data/sample/docs/*.json --skip-invalid --show 3
    """
    from envbench.formats.linked_docred import validate_file
    from envbench.formats.releases import identify
    from etl.io import InputError

    failed = False
    for path in files:
        try:
            report = validate_file(path, skip_invalid=skip_invalid)
        except (InputError, OSError) as exc:
            if not as_json:  # the group prints it as one line, and exits 1
                raise
            from envbench.cli._errors import describe_os_error

            # one object per file all the same: a reader of the JSON lines learns of every file
            error = str(exc) if isinstance(exc, InputError) else describe_os_error(exc)
            click.echo(dumps_json({"file": path, "error": error}).decode().rstrip("\n"))
            failed = True
            continue
        release = identify(path) if Path(path).is_file() else None
        if as_json:
            data = report.to_dict(show) | ({"release": release.to_dict()} if release is not None else {})
            click.echo(dumps_json(data).decode().rstrip("\n"))
            continue
        click.echo(report.summary())
        if release is not None:
            click.echo(f"  {release.line()}")
        for p in report.docset.skipped[:show]:
            click.echo(f"  skipped: {p}")
        for p in report.docset.warnings[:show]:
            click.echo(f"  warning: {p}")
        more = len(report.docset.skipped) + len(report.docset.warnings) - min(show, len(report.docset.skipped)) - min(
            show, len(report.docset.warnings))
        if more > 0:
            click.echo(f"  ... and {more} more (raise --show to see them)")
    if failed:
        raise SystemExit(1)
