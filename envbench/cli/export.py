"""``envbench export``: a generate output folder as a Hugging Face dataset folder with a dataset card."""

from __future__ import annotations

import click

from envbench.cli._options import progress_option


@click.command()
@click.argument("env_dir", type=click.Path(file_okay=False))
@click.option("--out", "out", required=True, type=click.Path(file_okay=False),
              help="Output folder: README.md (the dataset card), data/*.parquet, substitutions/*.parquet, "
                   "manifest.json. A new or empty folder outside ENV_DIR, or one an earlier export wrote.")
@click.option("--docs", required=True, type=click.Path(dir_okay=False),
              help="The source documents ENV_DIR was generated from (checked by sha256 against its "
                   "manifest.json); they become the 'original' split.")
@click.option("--format", "fmt", type=click.Choice(["hf"]), default="hf", show_default=True,
              help="Output format: hf, a folder that Hugging Face `datasets.load_dataset(OUT)` loads offline.")
@click.option("--lock", type=click.Path(dir_okay=False), default=None,
              help="The lock of ENV_DIR from `envbench lock`, whose sha256 the card gives "
                   "[default: the one ENV_DIR/*.lock.json, when there is one].")
@click.option("--license", "license_id", default="mit", show_default=True,
              help="The source corpus's license, as a Hub license id (DocRED and Re-DocRED: mit); the card adds "
                   "the new names' own: cc0-1.0 for names from a Wikidata dump or the sample world, none for a "
                   "knowledge base made from the corpus (its names are the corpus's).")
@click.option("--name", default=None,
              help="The dataset's pretty name in the card [default: 'Env benchmark of <DOCS file name>'].")
@click.option("--force", is_flag=True, help="Export again even when OUT is up to date.")
@progress_option
def export(env_dir: str, out: str, docs: str, fmt: str, lock: str | None, license_id: str, name: str | None,
           force: bool, progress: bool) -> None:
    """Export an Env benchmark (a `generate` output folder) as a Hugging Face dataset folder.

    OUT holds the original documents (split 'original') and the renamed ones (split named after
    ENV_DIR's <stem>_env.json, e.g. 'test_env') as Parquet with the DocRED features of Hugging
    Face's DocRED, plus 'source_title' and 'seed'; a 'substitutions' config with the rows of
    substitutions.parquet; and README.md, a dataset card with the license, configs, features,
    sizes, how the benchmark was built, its substitution rates and the `envbench verify` command.
    Written with pyarrow alone; loading needs `datasets` (pip install 'envbench[hf]').
    `evaluate`, `train` and `predict` read OUT (its Env split) or one of its Parquet files
    wherever they take a DocRED JSON file.

    \b
    Example (the first three lines build a benchmark of the sample world):
      envbench make-sample --out data/sample
      envbench ingest-dump data/sample/wikidata-sample.json.gz --out data/index
      envbench generate data/sample/docs/test.json --index data/index \\
          --links data/sample/links.json --exclude-names-from data/sample/docs/train.json \\
          --seeds 5 --out data/env
      envbench export data/env --docs data/sample/docs/test.json --out data/env-hf
    """
    from envbench.formats.hf_export import export_hf

    result = export_hf(env_dir, out, docs=docs, lock=lock, license=license_id, name=name, force=force,
                       progress=progress)
    click.echo(result.summary())
