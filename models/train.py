"""Training, nanoGPT style: one function that reads top to bottom.

setup (DDP when WORLD_SIZE > 1, seed, device, bf16) -> data -> model and optimizer -> resume
(from OUT/last/, only when its config.json matches this run's outside ``RESUME_FREE``) -> loop over
micro-batches (EVRT encodes the twins as a second batch, as the reference code) -> at each epoch
end score dev, write the epoch checkpoint, `best/` (dev F1 + Ign F1) and the resumable `last/`.
A finished run, rerun, is up to date; a run that starts over in OUT first removes what the old one
wrote there; an OUT whose config.json is no training config (a project or encoder folder) is refused, and
so is an OUT that is the folder of a document file it reads. A run that stops before its first checkpoint
removes what it wrote (:func:`remove_unfinished_run`): the run is resumable from its first checkpoint on,
so it is not staged and published whole as ``etl.step`` steps are, but it leaves no folder that looks like
a run and has nothing to resume or predict from. Documents of fewer than two entities (no pair) are skipped.

Run directory::

    OUT/encoder/                tokenizer + encoder config (predict rebuilds the model from here)
    OUT/checkpoints/epoch-N/    model.pt, config.json, metrics.json
    OUT/best/                   the same, for the best epoch on dev F1 + Ign F1
    OUT/last/                   state.pt (model, optimizer, scheduler, step, RNG), config.json, inputs.json
                                (sha256 of the documents trained on: a rerun on other data is refused)
    OUT/train.log               one line per step;  OUT/metrics.jsonl: one line per evaluation
    OUT/result.json             summary of the finished run
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from envbench.core.errors import EnvbenchError
from envbench.core.seeding import derive_seed
from envbench.formats.docred import read_docs
from envbench.formats.hf import document_files
from envbench.scoring.metrics import score, train_facts
from etl.io import InputError, atomic_path, dumps_json, listed, read_json, write_json_atomic
from etl.manifest import describe_file
from etl.step import resolves_inside
from models.checkpoints import (
    CHECKPOINT_FILE,
    STATE_FILE,
    autocast_context,
    build_model,
    load_checkpoint,
    load_weights,
    resolve_device,
    state_dict_of,
    use_bf16,
)
from models.config import TrainConfig
from models.data import build_features, collate, pair_twins
from models.predict import infer


@dataclass
class TrainResult:
    out: str
    steps: int
    epochs_done: float
    best: dict[str, Any]
    last_eval: dict[str, Any]
    seconds: float
    resumed_from_step: int
    features: dict[str, Any] = field(default_factory=dict)
    up_to_date: bool = False  # the run in OUT had finished already: nothing was trained or written


# What `train` writes in OUT; config.json (written first) marks the folder as a run of it.
RUN_OUTPUTS = ("config.json", "encoder", "features.json", "train.log", "metrics.jsonl", "result.json", "best", "last",
               "checkpoints")
CHECKPOINT_OUTPUTS = (CHECKPOINT_FILE, STATE_FILE, "config.json", "metrics.json")  # in best/, last/, checkpoints/epoch-N/
INPUTS_FILE = "inputs.json"  # last/inputs.json: sha256 of every document file the run was trained on


def _is_train_config(path: Path) -> bool:
    try:
        data = read_json(path, what="run config")
    except (InputError, OSError):
        return False
    return isinstance(data, dict) and {"train", "dev", "encoder", "epochs", "loss", "out"} <= set(data)


def check_run_folder(out: Path) -> None:
    """Refuse an OUT whose files of the names `train` writes (config.json, encoder/, train.log, ...) are not
    a run's: a project folder, an encoder folder (whose config.json a run would overwrite), or a run's own
    checkpoint folder (best/, last/, epoch-N/: its config.json is a training config, beside its weights)."""
    if out.exists() and not out.is_dir():
        raise EnvbenchError(f"--out {out}: a file has that name; choose a folder path")
    held = [name for name in (CHECKPOINT_FILE, STATE_FILE) if (out / name).exists()]
    if held:
        raise EnvbenchError(f"--out {out}: holds {held[0]}, a checkpoint of a run; give the run folder itself (or a "
                            "new one) as --out, never one of its checkpoints")
    taken = [name for name in RUN_OUTPUTS if (out / name).exists() or (out / name).is_symlink()]
    if taken and not _is_train_config(out / "config.json"):
        shown = listed(taken)
        why = ("its config.json is not a training config" if "config.json" in taken
               else "no config.json of a run is there, which `envbench train` writes first")
        raise EnvbenchError(f"--out {out}: holds {shown}, which `envbench train` did not write ({why}) and would "
                            "overwrite; choose a new or empty --out folder")


def check_out_apart(cfg: TrainConfig) -> None:
    """Refuse an OUT that is the folder of a document file the run reads, or lies in a dataset folder it reads
    (`envbench export`'s): the run's config.json, encoder/, best/, last/ and logs would go in among the
    documents (inside: :func:`etl.step.resolves_inside`, the rule by which ``etl.step.Step`` refuses an output inside
    a folder its step reads, with these words)."""
    out = Path(cfg.out).resolve()
    named = [("--train", cfg.train), ("--dev", cfg.dev), *([("--twins", cfg.twins)] if cfg.evrt else []),
             *([("--set ign_train=", cfg.ign_train)] if cfg.ign_train else [])]
    for option, path in named:
        given = f"{option}{'' if option.endswith('=') else ' '}{path}"
        if Path(path).is_dir():
            if resolves_inside(out, path):
                raise EnvbenchError(f"--out {cfg.out}: inside {path}, the dataset folder of {given}, which this step "
                                    "reads; choose an --out outside it")
        elif out == Path(path).resolve().parent:
            raise EnvbenchError(f"--out {cfg.out}: the folder of {given}, which this step reads; choose another "
                                "--out (a run writes config.json, encoder/, best/, last/, checkpoints/ and logs there)")


def clear_previous_run(out: Path, keep: str = "") -> None:
    """Remove what an earlier run in ``out`` (a run folder, by :func:`check_run_folder`) left, before a run
    starts over there: its logs, result and checkpoint files; ``keep`` (an ``init_from`` file) stays."""
    kept = Path(keep).resolve() if keep else None
    for name in ("train.log", "metrics.jsonl", "result.json"):
        (out / name).unlink(missing_ok=True)
    folders = [out / "best", out / "last", *sorted((out / "checkpoints").glob("epoch-*"))]
    for folder in folders:
        if folder.is_symlink() or not folder.is_dir():
            continue
        for name in (*CHECKPOINT_OUTPUTS, INPUTS_FILE):
            f = folder / name
            if f.is_file() and not f.is_symlink() and f.resolve() != kept:
                f.unlink()
        with contextlib.suppress(OSError):
            folder.rmdir()  # only when nothing else is in it


def remove_unfinished_run(out: Path, *, created: bool) -> None:
    """Remove what a run that stopped before its first checkpoint wrote in ``out`` (a run folder it started
    over in, by :func:`clear_previous_run`, or made): config.json, encoder/, features.json, the logs, and the
    checkpoint folders it left empty; ``out`` itself when the run made it and nothing else is in it. A folder
    that is only config.json, encoder/ and an empty train.log is no run, but looked like one."""
    for name in ("config.json", "features.json", "train.log", "metrics.jsonl", "result.json"):
        f = out / name
        if f.is_file() and not f.is_symlink():
            f.unlink()
    encoder = out / "encoder"  # the run's own (check_run_folder), rewritten by it: no symlink is followed
    if encoder.is_dir() and not encoder.is_symlink():
        shutil.rmtree(encoder, ignore_errors=True)
    for folder in (out / "best", out / "last", out / "checkpoints", out):
        if folder == out and not created:
            continue
        if folder.is_dir() and not folder.is_symlink():
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when empty


def input_fingerprints(cfg: TrainConfig) -> dict[str, list[dict[str, Any]]]:
    """Name, size and sha256 of every document file the run reads, by option (train, dev, twins, ign_train)."""
    named = {"train": cfg.train, "dev": cfg.dev, "twins": cfg.twins if cfg.evrt else "", "ign_train": cfg.ign_train}
    return {key: [describe_file(f) for f in document_files(path)] for key, path in named.items() if path}


def changed_inputs(saved_file: Path, now: dict[str, list[dict[str, Any]]], cfg: TrainConfig) -> list[str]:
    """``--train FILE changed`` for each document file that differs from the ones a saved run was trained on
    (none for a run saved before inputs were recorded)."""
    if not saved_file.is_file():
        return []
    saved = read_json(saved_file, what="run inputs")
    if not isinstance(saved, dict):
        return []
    option = {"train": "--train", "dev": "--dev", "twins": "--twins", "ign_train": "--set ign_train="}
    return [f"{option[key]}{'' if option[key].endswith('=') else ' '}{getattr(cfg, key)} changed"
            for key in now if key in saved and saved[key] != now[key]]


def _saved_config(path: Path) -> dict[str, Any]:
    """The config.json of last/, which a resumed run must match; one cut short is no reason to stop for good."""
    fix = f"it was cut short or overwritten: pass --set resume=false to start over (or delete {path.parent})"
    try:
        data = orjson.loads(path.read_bytes())  # written by write_json_atomic: plain JSON, never compressed
    except orjson.JSONDecodeError as exc:
        raise EnvbenchError(f"{path}: not a valid checkpoint config ({exc}); {fix}") from None
    if not isinstance(data, dict):
        raise EnvbenchError(f"{path}: not a checkpoint config (a JSON {type(data).__name__}, not an object); {fix}")
    return data


def _save_torch(obj: Any, path: Path) -> None:
    import torch

    with atomic_path(path) as tmp:
        torch.save(obj, tmp)


def _save_weights(model: Any, cfg: TrainConfig, metrics: dict[str, Any], folder: Path) -> None:
    """model.pt, config.json and metrics.json of a checkpoint folder, all three written in full beside
    their places first and then renamed in one after another: a kill while they are written (seconds,
    for the weights) leaves the previous checkpoint whole; only one in the milliseconds between the
    three renames could pair new weights with the old epoch's metrics."""
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:  # exits in reverse order: the renames follow one another
        metrics_tmp = stack.enter_context(atomic_path(folder / "metrics.json"))
        config_tmp = stack.enter_context(atomic_path(folder / "config.json"))
        weights_tmp = stack.enter_context(atomic_path(folder / CHECKPOINT_FILE))
        torch.save(model.state_dict(), weights_tmp)
        config_tmp.write_bytes(dumps_json(cfg.to_dict(), indent=True))
        metrics_tmp.write_bytes(dumps_json(metrics, indent=True))


def optimizer_groups(model: Any, cfg: TrainConfig) -> list[dict[str, Any]]:
    """AdamW's parameter groups, in order: ``encoder.*`` at ``lr_encoder``; everything outside the encoder
    and ``grid_net`` (extractors, bilinear, KD-DocRE's projection and classifier) at ``lr_classifier``; and,
    for DocuNet and KD-DocRE, ``grid_net.*`` (the U-Net, the axial attention) at ``lr_grid``
    (0 = lr_classifier). Each group: ``name``, ``lr`` and ``params``, a list of (name, parameter)."""
    named = list(model.named_parameters())
    groups = [{"name": "encoder", "lr": cfg.lr_encoder, "params": [(n, p) for n, p in named if n.startswith("encoder.")]},
              {"name": "classifier", "lr": cfg.lr_classifier,
               "params": [(n, p) for n, p in named if not n.startswith(("encoder.", "grid_net."))]}]
    grid = [(n, p) for n, p in named if n.startswith("grid_net.")]  # DocuNet, KD-DocRE
    if grid:
        groups.append({"name": "grid", "lr": cfg.lr_grid or cfg.lr_classifier, "params": grid})
    return groups


def evaluate(model: Any, feats: list, docs: list[dict], ign_facts: frozenset, cfg: TrainConfig, device: Any,
             bf16: bool) -> dict[str, Any]:
    """Dev scores (official DocRED semantics) of the current model; ``ign_facts`` from ``train_facts``."""
    preds = infer(model, feats, batch_size=cfg.eval_batch_size, max_labels=cfg.max_labels, device=device, bf16=bf16,
                  progress=cfg.progress, desc="dev")
    s = score(docs, preds, facts=ign_facts)
    keys = ("f1", "ign_f1", "precision", "recall", "intra_f1", "inter_f1")
    return {k: round(float(s[k]), 6) for k in keys if k in s} | {"predictions": len(preds)}


def train(cfg: TrainConfig) -> TrainResult:
    import torch
    import torch.distributed as dist
    from tqdm import tqdm

    from models.encoder import (
        check_encoder_path,
        default_encoder_path,
        hidden_size,
        load_tokenizer,
        max_positions,
    )
    from models.losses import classification_loss, pcr_loss, rcr_grouped_bilinear, rcr_loss

    t_start = time.time()
    cfg.validate()
    cfg.check_files()
    cfg.encoder = check_encoder_path(cfg.encoder or default_encoder_path())
    cfg.emb_size = cfg.emb_size or hidden_size(cfg.encoder)  # 0 = the encoder's; the saved config says which
    limit = max_positions(cfg.encoder)
    if limit is not None and cfg.window > limit:  # the encoder would fail on the first document longer than that
        raise EnvbenchError(f"window={cfg.window} is more than the {limit} positions of the encoder at {cfg.encoder}; "
                            f"use --set window={limit} or less")
    out = Path(cfg.out)
    check_out_apart(cfg)
    check_run_folder(out)
    state_file = out / "last" / STATE_FILE
    inputs = input_fingerprints(cfg)
    if cfg.resume and state_file.is_file() and (out / "last" / "config.json").is_file():
        changed = cfg.resume_differences(_saved_config(out / "last" / "config.json"))
        if changed:
            raise EnvbenchError(
                f"{out}/last was written by a run with other settings ({'; '.join(changed)}); rerun with those "
                "settings to continue it, or start over with --set resume=false or another --out"
            )
        changed = changed_inputs(out / "last" / INPUTS_FILE, inputs, cfg)
        if changed:
            raise EnvbenchError(
                f"{out}/last was trained on other data ({'; '.join(changed)} since); rerun with the files it was "
                "trained on to continue it, or start over with --set resume=false or another --out"
            )

    # --- setup: processes, device, precision, seed ---
    ddp = int(os.environ.get("WORLD_SIZE", "1")) > 1
    if ddp:
        backend = "nccl" if torch.cuda.is_available() and cfg.device != "cpu" else "gloo"
        dist.init_process_group(backend=backend)
        rank, world = dist.get_rank(), dist.get_world_size()
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        device = torch.device(f"cuda:{local_rank}") if backend == "nccl" else torch.device("cpu")
        if device.type == "cuda":
            torch.cuda.set_device(device)
    else:
        rank, world, device = 0, 1, resolve_device(cfg.device, option="device")
    master = rank == 0
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    bf16 = use_bf16(cfg.dtype, device)
    random.seed(cfg.seed)
    torch.manual_seed(cfg.seed + rank)

    # --- data ---
    tokenizer = load_tokenizer(cfg.encoder)
    train_docs = read_docs(cfg.train, skip_invalid=cfg.skip_invalid).docs
    if cfg.max_train_docs:
        train_docs = train_docs[: cfg.max_train_docs]
    dev_docs = read_docs(cfg.dev, skip_invalid=cfg.skip_invalid).docs
    if cfg.max_dev_docs:
        dev_docs = dev_docs[: cfg.max_dev_docs]
    ign_docs = read_docs(cfg.ign_train, skip_invalid=cfg.skip_invalid).docs if cfg.ign_train else train_docs
    ign_facts = train_facts(ign_docs)  # once, not at every evaluation
    fkw = {"marker": cfg.marker, "markers": cfg.markers, "max_length": cfg.max_length, "window": cfg.window,
           "progress": cfg.progress and master}
    train_feats, train_stats = build_features(train_docs, tokenizer, desc="train features", **fkw)
    dev_feats, dev_stats = build_features(dev_docs, tokenizer, desc="dev features", **fkw)
    twin_feats = None
    if cfg.evrt:
        twin_docs = read_docs(cfg.twins, skip_invalid=cfg.skip_invalid).docs
        twin_all, _ = build_features(twin_docs, tokenizer, desc="twin features", **fkw)
        twin_feats = pair_twins(train_feats, twin_all, cfg.twins)
    if not train_feats:
        raise EnvbenchError(f"{cfg.train}: no training documents; pass --train FILE with at least one document")
    if not dev_feats:  # best/ is picked on dev F1: with no dev documents every epoch scores 0
        raise EnvbenchError(f"{cfg.dev}: no dev documents; pass --dev FILE with at least one document (scored after "
                            "each epoch to pick best/)")
    # a document of fewer than two entities has no pair, so no loss term: it is skipped (counted in features.json
    # and reported); in dev it stays, predicted nothing (infer), since its gold facts, if any, still count
    if twin_feats is not None:
        twin_feats = [tw for f, tw in zip(train_feats, twin_feats) if f.hts]
    train_feats = [f for f in train_feats if f.hts]
    if not train_feats:
        raise EnvbenchError(f"{cfg.train}: no training document has an entity pair (all {train_stats.documents} have "
                            "fewer than two entities), so there is nothing to train on; pass --train FILE with "
                            "documents of two or more entities")
    if dev_stats.without_pairs == len(dev_feats):
        raise EnvbenchError(f"{cfg.dev}: no dev document has an entity pair (all {len(dev_feats)} have fewer than "
                            "two entities), so every epoch would score 0; pass --dev FILE with documents of two or "
                            "more entities (scored after each epoch to pick best/)")
    n_local = len(train_feats) // world if ddp else len(train_feats)
    if n_local == 0:
        raise EnvbenchError(f"{cfg.train}: {len(train_feats)} training documents with an entity pair for {world} "
                            "processes; give each process at least one (fewer processes, or more documents)")
    batches_per_epoch = math.ceil(n_local / cfg.batch_size)
    # a fraction of an epoch is rounded up to whole micro-batches (the report says the epochs trained); less than
    # one batch would train a whole one anyway: `--epochs 1e-9` trained a step and said "1.0 epochs"
    if cfg.epochs * batches_per_epoch < 1:
        least = math.ceil(1000 / batches_per_epoch) / 1000
        raise EnvbenchError(f"epochs={cfg.epochs:g} trains less than one batch ({n_local} training documents in "
                            f"batches of {cfg.batch_size}: {batches_per_epoch} an epoch); use --epochs {least:g} or more")

    # --- model, optimizer, schedule ---
    model = build_model(cfg, cfg.encoder, weights=True)
    if cfg.init_from:
        fix = "point init_from at an intact model.pt of a run with this encoder and emb_size"
        load_weights(model, state_dict_of(load_checkpoint(cfg.init_from, fix=fix), cfg.init_from), cfg.init_from, fix)
    model = model.to(device)
    raw_model = model

    class EachBatch(torch.nn.Module):
        """The model on each batch in turn, in one forward call (so one DDP forward per micro-batch).

        EVRT encodes the originals and their twins as two batches, as the reference code does: one
        padded batch of both cost about 1.3 times the two on CPU (every op on twice the rows, all
        padded to the longest of the eight documents).
        """

        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, batches: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return [self.inner(b["input_ids"].to(device), b["attention_mask"].to(device), b["entity_pos"], b["hts"])
                    for b in batches]

    model = EachBatch(raw_model)
    if ddp:
        model = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[device.index] if device.type == "cuda" else None, find_unused_parameters=True
        )
    optimizer = torch.optim.AdamW(
        [{"params": [p for _, p in g["params"]], "lr": g["lr"]} for g in optimizer_groups(raw_model, cfg)],
        eps=cfg.adam_eps, weight_decay=cfg.weight_decay,
    )
    total_mb = math.ceil(cfg.epochs * batches_per_epoch)
    total_steps = math.ceil(total_mb / cfg.grad_accum)
    if cfg.max_steps:
        total_steps = min(total_steps, cfg.max_steps)
    warmup = int(cfg.warmup_ratio * total_steps)

    def lr_lambda(step: int) -> float:
        if step < warmup:
            return (step + 1) / max(1, warmup)
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)

    # --- resume ---
    mb, step, best, last_eval, resumed_from = 0, 0, {}, {}, 0
    if cfg.resume and state_file.is_file():
        fresh = f"delete {out / 'last'} or pass --set resume=false to start over"
        state = load_checkpoint(state_file, fix=f"it was cut short: {fresh}")
        raw_model.load_state_dict(state_dict_of(state, state_file, key="model"))
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        mb, step, best, last_eval = state["micro_batch"], state["step"], state["best"], state["last_eval"]
        random.setstate(state["python_rng"])
        torch.set_rng_state(state["torch_rng"])
        if device.type == "cuda" and state.get("cuda_rng") is not None:
            torch.cuda.set_rng_state(state["cuda_rng"], device)
        resumed_from = step
    resumed = cfg.resume and state_file.is_file()
    if resumed and (mb >= total_mb or (cfg.max_steps > 0 and step >= cfg.max_steps)):
        # a finished run, rerun with the same settings and data: nothing is left to train, nothing is written
        # but the summary a kill between the last save and it left out
        if ddp:
            dist.destroy_process_group()
        done = TrainResult(str(out), step, round(mb / batches_per_epoch, 3), best, last_eval,
                           round(time.time() - t_start, 1), resumed_from,
                           {"train": train_stats.as_dict(), "dev": dev_stats.as_dict()})
        if master and not (out / "result.json").is_file():
            write_json_atomic(out / "result.json", done.__dict__, indent=True)
        done.up_to_date = True
        return done
    if resumed and master:
        print(f"resuming {out} at step {step} (micro-batch {mb})", file=sys.stderr)
    created_out = not out.exists()
    saved = False  # a checkpoint of this run is on disk: from then on a run that stops is resumable
    log = None
    try:
        if master:
            out.mkdir(parents=True, exist_ok=True)
            # config.json first: it is what marks the folder as a run of `envbench train` (check_run_folder)
            write_json_atomic(out / "config.json", cfg.to_dict(), indent=True)
            if not resumed:
                clear_previous_run(out, keep=cfg.init_from)  # starting over: no log line or checkpoint of the old run stays
            tokenizer.save_pretrained(out / "encoder")
            raw_model.encoder.config.save_pretrained(out / "encoder")
            write_json_atomic(out / "features.json", {"train": train_stats.as_dict(), "dev": dev_stats.as_dict()}, indent=True)
            skipped = (f"{train_stats.without_pairs} more without an entity pair skipped; "
                       if train_stats.without_pairs else "")
            print(f"train: {len(train_feats)} docs ({skipped}{train_stats.over_window} longer than {cfg.window} "
                  f"wordpieces, encoded as overlapping windows; {train_stats.cut} cut at {cfg.max_length}); dev: "
                  f"{len(dev_feats)} docs; {total_steps} steps; device {device}{' bf16' if bf16 else ''}; "
                  f"evrt={cfg.evrt}", file=sys.stderr)

        def save_last() -> None:
            nonlocal saved
            _save_torch({
                "model": raw_model.state_dict(), "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                "micro_batch": mb, "step": step, "best": best, "last_eval": last_eval,
                "python_rng": random.getstate(), "torch_rng": torch.get_rng_state(),
                "cuda_rng": torch.cuda.get_rng_state(device) if device.type == "cuda" else None,
            }, state_file)
            write_json_atomic(out / "last" / "config.json", cfg.to_dict(), indent=True)
            write_json_atomic(out / "last" / INPUTS_FILE, inputs, indent=True)
            saved = True

        def epoch_order(epoch: int) -> list[int]:
            g = torch.Generator().manual_seed(derive_seed(cfg.seed, "epoch", epoch) % 2**63)
            order = torch.randperm(len(train_feats), generator=g).tolist()
            return order[rank : n_local * world : world] if ddp else order

        def end_of_run() -> bool:
            return mb >= total_mb or (cfg.max_steps > 0 and step >= cfg.max_steps)

        # --- the loop ---
        model.train()
        log = open(out / "train.log", "a", encoding="utf-8") if master else None
        bar = tqdm(total=total_mb, initial=mb, desc="train", disable=None if (cfg.progress and master) else True)
        order, order_epoch = None, -1
        accum: dict[str, float] = {}
        t_step = time.time()
        while not end_of_run():
            epoch, b = divmod(mb, batches_per_epoch)
            if order_epoch != epoch:
                order, order_epoch = epoch_order(epoch), epoch
            idx = order[b * cfg.batch_size : (b + 1) * cfg.batch_size]
            batches = [collate([train_feats[i] for i in idx])]
            if twin_feats is not None:
                batches.append(collate([twin_feats[i] for i in idx]))  # same pairs, same order, same labels
            labels = batches[0]["labels"].to(device)
            with autocast_context(device, bf16):
                res = model(batches)
            logits = res[0]["logits"].float()
            parts = {"clo": classification_loss(cfg.loss, logits, labels, cfg.shift)}
            if twin_feats is not None:
                twin_logits = res[1]["logits"].float()
                if cfg.use_clp:
                    parts["clp"] = classification_loss(cfg.loss, twin_logits, batches[1]["labels"].to(device), cfg.shift)
                if cfg.use_rcr and cfg.rcr_repr == "bl" and getattr(raw_model, "bl_is_grouped_outer_product", False):
                    parts["rcr"] = rcr_grouped_bilinear(res[0]["zhzt"], res[1]["zhzt"], raw_model.block_size,
                                                        cfg.rcr_reduction)  # = rcr_loss of bl, without bl's difference
                elif cfg.use_rcr:
                    parts["rcr"] = rcr_loss(res[0][cfg.rcr_repr], res[1][cfg.rcr_repr], cfg.rcr_reduction)
                if cfg.use_pcr:
                    parts["pcr"] = pcr_loss(cfg.pcr_form, logits, twin_logits)
            weights = {"clo": 1.0, "clp": 1.0, "rcr": cfg.alpha, "pcr": cfg.beta}
            loss = sum(weights[k] * v for k, v in parts.items())
            (loss / cfg.grad_accum).backward()
            for k, v in parts.items():
                accum[k] = accum.get(k, 0.0) + float(v.detach()) / cfg.grad_accum
            accum["loss"] = accum.get("loss", 0.0) + float(loss.detach()) / cfg.grad_accum
            mb += 1
            bar.update(1)
            epoch_end = mb % batches_per_epoch == 0
            if mb % cfg.grad_accum == 0 or epoch_end or mb >= total_mb:
                grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm or float("inf"))
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
                step += 1
                if master and step % cfg.log_every == 0:
                    dt = time.time() - t_step
                    line = (f"step {step}/{total_steps} epoch {mb / batches_per_epoch:.3f} "
                            + " ".join(f"{k} {v:.4f}" for k, v in accum.items())
                            + f" grad_norm {float(grad_norm):.3f} lr {scheduler.get_last_lr()[0]:.3g} {dt:.2f}s")
                    log.write(line + "\n")
                    log.flush()
                    tqdm.write(line, file=sys.stderr)
                accum, t_step = {}, time.time()
                if master and cfg.save_every and step % cfg.save_every == 0 and not (epoch_end or end_of_run()):
                    save_last()
            if epoch_end or end_of_run():
                done_epochs = mb / batches_per_epoch
                if master:
                    if cfg.eval_every_epoch or end_of_run():
                        last_eval = evaluate(raw_model, dev_feats, dev_docs, ign_facts, cfg, device, bf16)
                        last_eval |= {"epoch": round(done_epochs, 3), "step": step}
                        with open(out / "metrics.jsonl", "a", encoding="utf-8") as fh:
                            fh.write(json.dumps(last_eval, sort_keys=True) + "\n")
                        print(f"dev after epoch {done_epochs:.2f}: F1 {last_eval['f1']:.4f} "
                              f"Ign F1 {last_eval['ign_f1']:.4f}", file=sys.stderr)
                        if cfg.keep_epoch_checkpoints and epoch_end:
                            _save_weights(raw_model, cfg, last_eval, out / "checkpoints" / f"epoch-{int(done_epochs)}")
                            saved = True
                        if not best or last_eval["f1"] + last_eval["ign_f1"] > best["f1"] + best["ign_f1"]:
                            best = dict(last_eval)
                            _save_weights(raw_model, cfg, best, out / "best")
                            saved = True
                    save_last()
                if ddp:
                    dist.barrier()
        bar.close()
    except BaseException:
        # stopped before its first checkpoint: nothing can resume or predict from what it wrote, so it goes (a
        # folder of config.json, encoder/ and an empty train.log looked like a run); a resumed run keeps its last/
        if master and not resumed and not saved:
            if log is not None:
                log.close()
            remove_unfinished_run(out, created=created_out)
        raise

    result = TrainResult(str(out), step, round(mb / batches_per_epoch, 3), best, last_eval,
                         round(time.time() - t_start, 1), resumed_from,
                         {"train": train_stats.as_dict(), "dev": dev_stats.as_dict()})
    if master:
        log.close()
        write_json_atomic(out / "result.json", result.__dict__, indent=True)
    if ddp:
        dist.destroy_process_group()
    return result
