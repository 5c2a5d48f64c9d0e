"""`envbench ingest-dump` and `envbench index info|get|find`."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from envbench.cli._options import progress_option
from etl.io import dumps_json, shorten


def _languages(value: str) -> tuple[str, ...]:
    langs = tuple(dict.fromkeys(x.strip() for x in value.split(",") if x.strip()))
    if not langs:
        raise click.BadParameter("give at least one language code, e.g. --languages en")
    return langs


@click.command("ingest-dump")
@click.argument("dump", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("--out", "out", required=True, type=click.Path(file_okay=False),
              help="Index directory to write (tables, index.duckdb, manifest.json).")
@click.option("--languages", default="en", show_default=True,
              help="Comma-separated language codes whose labels and aliases go into `names`, and whose "
                   "demonyms (P1549) go into `demonyms` beside the English ones.")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Parsing processes (default: all cores; at most 256). Output does not depend on it.")
@click.option("--max-errors", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Stop with an error once more entities than this are malformed.")
@click.option("--chunk-mb", type=click.IntRange(min=1), default=32, show_default=True,
              help="Decompressed MB per work chunk, at most 1024 (resume granularity; memory is about "
                   "4 x workers x this). Changing it restarts from scratch.")
@click.option("--extractor", type=click.Choice(["auto", "c", "python"]), default="auto", show_default=True,
              help="Entity extraction: c (compiled, about 2x faster per core), python (pysimdjson), "
                   "or auto (c when it is built). Both give byte-identical tables.")
@click.option("--no-name-tokens", is_flag=True,
              help="Leave the name_tokens table empty: DocRED's tokens of the English names that need spaCy "
                   "(about a tenth of the names; tokenising them is part of the ingest time). `generate` on "
                   "such an index loads spaCy, about 3 s more per run.")
@click.option("--force", is_flag=True,
              help="Start over (discard finished chunks of an interrupted run), and replace an index at --out "
                   "even when the new one has fewer entities or fewer name languages.")
@progress_option
def ingest_dump(dump: tuple[str, ...], out: str, languages: str, workers: int | None, max_errors: int,
                chunk_mb: int, extractor: str, no_name_tokens: bool, force: bool, progress: bool) -> None:
    """Ingest a Wikidata JSON dump into Parquet tables + DuckDB views under --out.

    DUMP is the official dump (latest-all.json[.gz|.bz2|.zst]), '-' for stdin (plain or
    compressed), or a file in the one-entity, {"entities": {...}} (Special:EntityData,
    wbgetentities), JSON-lines or one-line JSON array shape, each record at most 128 MB; the
    compression is read from the file's first bytes. Several DUMP files, or a folder of them
    (*.json, *.jsonl, *.ndjson, each possibly compressed; sorted by path), are ingested together
    into one index whose manifest lists each file.
    Killed runs resume when rerun with the same arguments, and the same command over the index it
    made finds it up to date; DIR keeps the previous index until the new one is complete. A dump
    with no item or property is an error, and an index that would replace one with more entities
    (or with names in more languages) needs --force. Names with control characters, format
    characters (Unicode Cf: bidi overrides, zero-width spaces and joiners, soft hyphens, the BOM)
    or more than 250 characters are left out (counted as unusable names), and a QID held twice is
    named with its lines in a warning.

    \b
    Example:
      envbench ingest-dump latest-all.json.gz --out data/index --workers 16
      envbench ingest-dump data/sample/wikidata-sample.json.gz --out data/index
      envbench ingest-dump entities/Q42.json entities/Q45.json --out data/entities-index
      envbench ingest-dump entities/ --out data/entities-index
    """
    from envbench.core.text import name_tokenizer
    from wikidata_index.ingest import ingest_dump as run

    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.WARNING, format="warning: %(message)s", stream=sys.stderr)
    result = run(dump[0] if len(dump) == 1 else list(dump), out, languages=_languages(languages), workers=workers, max_errors=max_errors,
                 force=force, progress=progress, chunk_bytes=chunk_mb << 20, extractor=extractor,
                 tokenizer=None if no_name_tokens else name_tokenizer())
    click.echo(result.summary())


@click.group("index")
def index_group() -> None:
    """Look into an index written by `envbench ingest-dump`.

    \b
    Example:
      envbench index info data/index
      envbench index get data/index Q42
      envbench index find data/index "Douglas Adams" --json
    """


@index_group.command("info")
@click.argument("path", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print the manifest and row counts as JSON.")
@click.option("--verify", is_flag=True,
              help="Also check every table file's sha256 against manifest.json (reads the whole index).")
def info(path: str, as_json: bool, verify: bool) -> None:
    """Row counts, input and parameters of an index.

    \b
    Example:
      envbench index info data/index
      envbench index info data/index --verify
    """
    from wikidata_index.index import index_info

    res = index_info(path, verify=verify)
    manifest = res.manifest
    if as_json:
        data = {"path": str(Path(path)), "rows": res.rows, "manifest": manifest}
        if verify:
            data["verified_files"] = res.verified_files
        click.echo(dumps_json(data, indent=True), nl=False)
        return
    click.echo(f"index: {path}")
    for inp in manifest.get("inputs", []):
        click.echo(f"input: {inp.get('name')} ({inp.get('bytes', 0):,} bytes, sha256 {inp.get('sha256', '')[:16]}...)")
    from envbench.formats.provenance import describe, index_provenance

    said = describe(index_provenance(manifest))
    click.echo(f"made from: {said['source']}; {said['names']}")
    if manifest.get("parameters"):
        params = manifest["parameters"]
        click.echo(f"languages: {','.join(params.get('languages', []))}; version {manifest.get('package_version')}")
    made = manifest.get("name_tokens")
    tokenizer = made.get("tokenizer") if isinstance(made, dict) else None
    for table, n in res.rows.items():
        # which tokenizer's tokens name_tokens holds: generate uses them only under the same one
        suffix = f"  (tokens of {tokenizer})" if table == "name_tokens" and tokenizer else ""
        click.echo(f"  {table:<22}{n:>14,}{suffix}")
    stats = manifest.get("stats", {})
    other = {k: v for k, v in stats.items() if k.startswith(("skipped_", "malformed_"))}
    if other:
        click.echo("skipped/malformed: " + ", ".join(f"{k} {v:,}" for k, v in sorted(other.items())))
    for note in res.notes:
        click.echo(f"note: {note}")
    if res.verified_files is not None:
        click.echo(f"verified: {res.verified_files} table files match the sha256s in manifest.json")


@index_group.command("get")
@click.argument("path", type=click.Path())
@click.argument("qid")
@click.option("--lang", default="en", show_default=True, help="Language of the names and demonyms shown.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def get(path: str, qid: str, lang: str, as_json: bool) -> None:
    """Show one entity: label, aliases, demonyms, P21 (sex or gender), types, sitelinks, popularity.

    \b
    Example:
      envbench index get data/index Q42 --json
    """
    from wikidata_index.index import WikidataIndex

    with WikidataIndex(path) as ix:
        out = ix.card(qid, lang)
    if as_json:
        click.echo(dumps_json(out, indent=True), nl=False)
        return
    click.echo(f"{out['id']}  {out['label'] or '(no label)'}")
    if out["description"]:
        click.echo(f"  description: {out['description']}")
    click.echo(f"  aliases:     {', '.join(out['aliases']) or '-'}")
    if out["demonyms"]:  # P1549, for places mostly: no line for the many items without one
        click.echo(f"  demonyms:    {', '.join(out['demonyms'])}")
    if out["p21"]:  # sex or gender, for people: what keeps a renamed person's gender
        from envbench.core.gender import pronoun_class

        click.echo("  P21:         " + ", ".join(f"{v} ({pronoun_class(v) or 'no he/she'}, {rank})"
                                               for v, rank in out["p21"]))
    click.echo(f"  types:       {', '.join(out['types']) or '-'}")
    click.echo(f"  sitelinks:   {out['sitelinks']}" + (f" (enwiki: {out['enwiki']})" if out["enwiki"] else ""))
    click.echo(f"  popularity:  {out['popularity'] if out['popularity'] is not None else 'unknown (no statements in the dump)'}")


@index_group.command("find")
@click.argument("path", type=click.Path())
@click.argument("name")
@click.option("--lang", default="en", show_default=True, help="Language of the names searched.")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True, help="Most results shown.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def find(path: str, name: str, lang: str, limit: int, as_json: bool) -> None:
    """Entities named NAME: exact matches first, then case- and diacritic-folded ones.

    \b
    Example:
      envbench index find data/index "douglas adams"
    """
    from wikidata_index.index import WikidataIndex

    with WikidataIndex(path) as ix:
        rows = ix.search(name, lang, limit)
    if as_json:
        click.echo(dumps_json(rows, indent=True), nl=False)
        return
    if not rows:
        click.echo(f"no entity named {shorten(repr(name))} in {shorten(lang)}")
        return
    for r in rows:
        desc = f" - {r['description']}" if r["description"] else ""
        click.echo(f"{r['id']}\t{r['label'] or ''}{desc}\t(popularity {r['popularity']})")
