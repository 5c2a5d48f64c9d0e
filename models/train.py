"""Training, nanoGPT style: the loop reads top to bottom, each part a named function of a screen or less.

1. **Set-up** (:func:`check_run`, :func:`start`): the config's values and files, the encoder, OUT (a new or
   empty folder, or a run folder of `train`'s own: ``models.run_folder``) and whether ``last/`` resumes, all
   before anything loads; then the processes (DDP when WORLD_SIZE > 1), device, bf16 and seeds.
2. **Data** (:func:`load_data`): documents to features, the twins paired by title, documents of fewer than
   two entities (no pair) left out of training, batches per epoch.
3. **Model** (:func:`build`): ``cfg.model`` over the encoder, ``init_from``'s weights, the DDP wrapper.
4. **Optimizer** (:func:`make_optimizer`, :func:`resume`): AdamW in parameter groups, warm-up then linear
   decay; the counters, optimizer and RNG states of ``last/`` when the run resumes.
5. **The step** (:func:`forward_backward`, :func:`optimizer_step`): one micro-batch forward (EVRT encodes the
   twins as a second batch, as the reference code) and backward; clip, step, log. A loss or gradient that is
   no longer finite stops the run there, naming the step and the likely field (:func:`diverged`).
6. **Evaluation** (:func:`evaluate`): dev scores after each epoch (or only the last).
7. **Saving** (:func:`end_of_epoch`, :func:`save_last`, :func:`save_weights`): ``checkpoints/epoch-N/``,
   ``best/`` (dev F1 + Ign F1) and the resumable ``last/``; weights that are not finite are never saved.

:func:`train` calls them in that order, and :func:`run_loop` is the loop. A finished run, rerun, is up to
date; a run that stops before its first checkpoint removes what it wrote.

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
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from tqdm import tqdm

from envbench.core.errors import EnvbenchError
from envbench.core.seeding import derive_seed
from envbench.formats.docred import read_docs
from envbench.rename.attacks import mask_document
from envbench.scoring.metrics import score, train_facts
from etl.io import atomic_path, dumps_json, write_json_atomic
from etl.progress import bar as progress_bar
from models import losses
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
from models.data import Feature, FeatureStats, build_features, collate, pair_twins
from models.encoder import (
    check_encoder_path,
    default_encoder_path,
    hidden_size,
    load_tokenizer,
    max_positions,
)
from models.predict import infer
from models.run_folder import (
    INPUTS_FILE,
    check_out_apart,
    check_resumable,
    check_run_folder,
    clear_previous_run,
    input_fingerprints,
    remove_unfinished_run,
)


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


@dataclass
class Machine:
    """Where this process trains: its device, bf16 autocast, and its rank among ``world`` processes."""

    device: Any
    bf16: bool
    rank: int = 0
    world: int = 1

    @property
    def ddp(self) -> bool:
        return self.world > 1

    @property
    def master(self) -> bool:  # only the first process evaluates, saves and logs
        return self.rank == 0


@dataclass
class Data:
    """The features a run trains and scores on."""

    train: list[Feature]  # training documents with an entity pair
    twins: list[Feature] | None  # EVRT: each training document's renamed twin, in the same order
    dev: list[Feature]
    dev_docs: list[dict[str, Any]]
    ign_facts: frozenset  # facts "seen in train", for Ign F1
    stats: dict[str, FeatureStats]  # train, dev: windowed, cut and pairless documents (features.json)
    tokenizer: Any
    per_process: int  # training documents each process sees an epoch
    batches_per_epoch: int

    def features(self) -> dict[str, Any]:
        return {name: s.as_dict() for name, s in self.stats.items()}


@dataclass
class Counters:
    """Where the run stands: what last/state.pt saves, and what a resumed run reads back."""

    micro_batch: int = 0
    step: int = 0  # optimizer steps
    best: dict[str, Any] = field(default_factory=dict)  # dev scores of best/
    last_eval: dict[str, Any] = field(default_factory=dict)
    resumed_from: int = 0  # the step last/ was at, for a resumed run
    resumed: bool = False
    saved: bool = False  # a checkpoint of this run is on disk: from then on a run that stops is resumable


@dataclass
class Run:
    """Everything the loop reads and updates, built by the set-up, data, model and optimizer parts."""

    cfg: TrainConfig
    machine: Machine
    data: Data
    model: Any  # the model itself: what is saved, evaluated and resumed
    wrapped: Any  # what the step calls: EachBatch over the model, in DDP with several processes
    optimizer: Any
    scheduler: Any
    total_micro_batches: int
    total_steps: int
    counters: Counters
    inputs: dict[str, list[dict[str, Any]]]  # the document files' fingerprints (last/inputs.json)

    @property
    def out(self) -> Path:
        return Path(self.cfg.out)

    def finished(self) -> bool:
        c = self.counters
        return c.micro_batch >= self.total_micro_batches or (self.cfg.max_steps > 0 and c.step >= self.cfg.max_steps)

    def result(self, seconds: float) -> TrainResult:
        c = self.counters
        return TrainResult(str(self.out), c.step, round(c.micro_batch / self.data.batches_per_epoch, 3), c.best,
                           c.last_eval, round(seconds, 1), c.resumed_from, self.data.features())


# --- 1. set-up ------------------------------------------------------------------------------------------

def check_run(cfg: TrainConfig) -> dict[str, list[dict[str, Any]]]:
    """Everything that can be refused before a file loads: the config, the document files, the encoder folder,
    OUT, and a last/ of other settings or data. Resolves ``encoder`` and ``emb_size`` (0 = the encoder's hidden
    size; the saved config says which). Returns the document files' fingerprints."""
    cfg.validate()
    cfg.check_files()
    cfg.encoder = check_encoder_path(cfg.encoder or default_encoder_path(), weights=True)
    hidden = hidden_size(cfg.encoder)
    if not cfg.emb_size and hidden % cfg.block_size:  # the grouped bilinear splits emb_size into blocks
        raise EnvbenchError(f"emb_size=0 takes the encoder's hidden size, {hidden}, which is no multiple of block_size "
                            f"{cfg.block_size}; set --set emb_size= a multiple of it, or a block_size that divides {hidden}")
    cfg.emb_size = cfg.emb_size or hidden
    limit = max_positions(cfg.encoder)
    if limit is not None and cfg.window > limit:  # the encoder would fail on the first document longer than that
        raise EnvbenchError(f"window={cfg.window} is more than the {limit} positions of the encoder at {cfg.encoder}; "
                            f"use --set window={limit} or less")
    check_out_apart(cfg)
    check_run_folder(Path(cfg.out))
    inputs = input_fingerprints(cfg)
    check_resumable(cfg, Path(cfg.out), inputs)
    return inputs


def start(cfg: TrainConfig) -> Machine:
    """The processes (DDP when WORLD_SIZE > 1: NCCL on GPUs, gloo on CPU), device, precision, threads and seeds."""
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        backend = "nccl" if torch.cuda.is_available() and cfg.device != "cpu" else "gloo"
        dist.init_process_group(backend=backend)
        rank, world = dist.get_rank(), dist.get_world_size()
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        device = torch.device(f"cuda:{local_rank}") if backend == "nccl" else torch.device("cpu")
        if device.type == "cuda":
            torch.cuda.set_device(device)
    else:
        rank, world, device = 0, 1, resolve_device(cfg.device, option="device")
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    random.seed(cfg.seed)
    torch.manual_seed(cfg.seed + rank)
    return Machine(device, use_bf16(cfg.dtype, device), rank, world)


# --- 2. data --------------------------------------------------------------------------------------------

def load_data(cfg: TrainConfig, machine: Machine) -> Data:
    """The documents as features. A training document of fewer than two entities has no pair, so no loss term:
    it is left out (counted in features.json); in dev it stays, predicted nothing, since its facts still count."""
    tokenizer = load_tokenizer(cfg.encoder)
    train_docs = read_docs(cfg.train, skip_invalid=cfg.skip_invalid).docs[: cfg.max_train_docs or None]
    dev_docs = read_docs(cfg.dev, skip_invalid=cfg.skip_invalid).docs[: cfg.max_dev_docs or None]
    ign_docs = read_docs(cfg.ign_train, skip_invalid=cfg.skip_invalid).docs if cfg.ign_train else train_docs
    ign_facts = train_facts(ign_docs)  # before masking: "seen in train" stays a fact of the named documents
    if cfg.mask_names:  # the no-name floor: every mention read as its type placeholder
        train_docs, dev_docs = [mask_document(d) for d in train_docs], [mask_document(d) for d in dev_docs]
    fkw = {"marker": cfg.marker, "markers": cfg.markers, "max_length": cfg.max_length, "window": cfg.window,
           "progress": cfg.progress and machine.master}
    train, train_stats = build_features(train_docs, tokenizer, desc="train features", **fkw)
    dev, dev_stats = build_features(dev_docs, tokenizer, desc="dev features", **fkw)
    twins = None
    if cfg.evrt:
        twin_docs = read_docs(cfg.twins, skip_invalid=cfg.skip_invalid).docs
        twin_docs = [mask_document(d) for d in twin_docs] if cfg.mask_names else twin_docs
        twins = pair_twins(train, build_features(twin_docs, tokenizer, desc="twin features", **fkw)[0], cfg.twins)
    if not train:
        raise EnvbenchError(f"{cfg.train}: no training documents; pass --train FILE with at least one document")
    if not dev:  # best/ is picked on dev F1: with no dev documents every epoch scores 0
        raise EnvbenchError(f"{cfg.dev}: no dev documents; pass --dev FILE with at least one document (scored after "
                            "each epoch to pick best/)")
    if twins is not None:
        twins = [tw for f, tw in zip(train, twins) if f.hts]
    train = [f for f in train if f.hts]
    per_process, batches = batches_per_epoch(cfg, machine, train, train_stats, dev_stats)
    return Data(train, twins, dev, dev_docs, ign_facts, {"train": train_stats, "dev": dev_stats},
                tokenizer, per_process, batches)


def batches_per_epoch(cfg: TrainConfig, machine: Machine, train: list[Feature], train_stats: FeatureStats,
                      dev_stats: FeatureStats) -> tuple[int, int]:
    """Training documents per process and batches per epoch; refused when nothing would train or score."""
    if not train:
        raise EnvbenchError(f"{cfg.train}: no training document has an entity pair (all {train_stats.documents} have "
                            "fewer than two entities), so there is nothing to train on; pass --train FILE with "
                            "documents of two or more entities")
    if dev_stats.without_pairs == dev_stats.documents:
        raise EnvbenchError(f"{cfg.dev}: no dev document has an entity pair (all {dev_stats.documents} have fewer than "
                            "two entities), so every epoch would score 0; pass --dev FILE with documents of two or "
                            "more entities (scored after each epoch to pick best/)")
    per_process = len(train) // machine.world
    if per_process == 0:
        raise EnvbenchError(f"{cfg.train}: {len(train)} training documents with an entity pair for {machine.world} "
                            "processes; give each process at least one (fewer processes, or more documents)")
    batches = math.ceil(per_process / cfg.batch_size)
    # a fraction of an epoch is rounded up to whole micro-batches (the report says the epochs trained); less than
    # one batch would train a whole one anyway: `--epochs 1e-9` trained a step and said "1.0 epochs"
    if cfg.epochs * batches < 1:
        least = math.ceil(1000 / batches) / 1000
        raise EnvbenchError(f"epochs={cfg.epochs:g} trains less than one batch ({per_process} training documents in "
                            f"batches of {cfg.batch_size}: {batches} an epoch); use --epochs {least:g} or more")
    return per_process, batches


def epoch_order(run: Run, epoch: int) -> list[int]:
    """This process's document order in ``epoch``: from ``(seed, epoch)`` alone, so a resumed run sees the same
    batches; under DDP every process takes its own share of one order."""
    g = torch.Generator().manual_seed(derive_seed(run.cfg.seed, "epoch", epoch) % 2**63)
    order = torch.randperm(len(run.data.train), generator=g).tolist()
    m = run.machine
    return order[m.rank : run.data.per_process * m.world : m.world] if m.ddp else order


# --- 3. model -------------------------------------------------------------------------------------------

class EachBatch(torch.nn.Module):
    """The model on each batch in turn, in one forward call (so one DDP forward per micro-batch).

    EVRT encodes the originals and their twins as two batches, as the reference code does: one padded
    batch of both cost about 1.3 times the two on CPU (every op on twice the rows, all padded to the
    longest of the eight documents).
    """

    def __init__(self, inner: torch.nn.Module, device: Any) -> None:
        super().__init__()
        self.inner, self.device = inner, device

    def forward(self, batches: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [self.inner(b["input_ids"].to(self.device), b["attention_mask"].to(self.device), b["entity_pos"],
                           b["hts"]) for b in batches]


def build(cfg: TrainConfig, machine: Machine) -> tuple[Any, Any]:
    """The model on its device (``init_from``'s weights when given), and what the step calls: EachBatch over it,
    wrapped in DistributedDataParallel when several processes train."""
    model = build_model(cfg, cfg.encoder, weights=True)
    if cfg.init_from:
        fix = "point init_from at an intact model.pt of a run with this encoder and emb_size"
        load_weights(model, state_dict_of(load_checkpoint(cfg.init_from, fix=fix), cfg.init_from), cfg.init_from, fix)
    model = model.to(machine.device)
    wrapped: Any = EachBatch(model, machine.device)
    if machine.ddp:
        device = machine.device
        wrapped = torch.nn.parallel.DistributedDataParallel(
            wrapped, device_ids=[device.index] if device.type == "cuda" else None, find_unused_parameters=True
        )
    return model, wrapped


# --- 4. optimizer ---------------------------------------------------------------------------------------

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


def make_optimizer(model: Any, cfg: TrainConfig, data: Data) -> tuple[Any, Any, int, int]:
    """AdamW over :func:`optimizer_groups`, and its schedule: linear warm-up over ``warmup_ratio`` of the steps,
    then linear decay to 0. Returns the optimizer, the scheduler, and the micro-batches and steps of the run."""
    optimizer = torch.optim.AdamW(
        [{"params": [p for _, p in g["params"]], "lr": g["lr"]} for g in optimizer_groups(model, cfg)],
        eps=cfg.adam_eps, weight_decay=cfg.weight_decay,
    )
    total_micro_batches = math.ceil(cfg.epochs * data.batches_per_epoch)
    total_steps = math.ceil(total_micro_batches / cfg.grad_accum)
    if cfg.max_steps:
        total_steps = min(total_steps, cfg.max_steps)
    warmup = int(cfg.warmup_ratio * total_steps)

    def lr_lambda(step: int) -> float:  # a function, not a bound method: LambdaLR's state dict then holds no lambda
        if step < warmup:
            return (step + 1) / max(1, warmup)
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup))

    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda), total_micro_batches, total_steps


def resume(run: Run) -> None:
    """Continue from OUT/last/state.pt (set-up checked that its settings and data are this run's): the model,
    AdamW and schedule states, the counters and the RNG states."""
    state_file = run.out / "last" / STATE_FILE
    if not (run.cfg.resume and state_file.is_file()):
        return
    fresh = f"delete {run.out / 'last'} or pass --set resume=false to start over"
    state = load_checkpoint(state_file, fix=f"it was cut short: {fresh}")
    run.model.load_state_dict(state_dict_of(state, state_file, key="model"))
    run.optimizer.load_state_dict(state["optimizer"])
    run.scheduler.load_state_dict(state["scheduler"])
    random.setstate(state["python_rng"])
    torch.set_rng_state(state["torch_rng"])
    device = run.machine.device
    if device.type == "cuda" and state.get("cuda_rng") is not None:
        torch.cuda.set_rng_state(state["cuda_rng"], device)
    run.counters = Counters(state["micro_batch"], state["step"], state["best"], state["last_eval"],
                            resumed_from=state["step"], resumed=True)


# --- 5. the step ----------------------------------------------------------------------------------------

def forward_backward(run: Run, batches: list[dict[str, Any]]) -> dict[str, float]:
    """One micro-batch: the forward pass over the documents (EVRT: and their twins, a second batch of the same
    pairs in the same order), the loss terms, backward. Returns each term and the weighted ``loss``, divided by
    ``grad_accum``; a loss that is not finite stops the run before it reaches the weights."""
    cfg, device = run.cfg, run.machine.device
    labels = batches[0]["labels"].to(device)
    with autocast_context(device, run.machine.bf16):
        res = run.wrapped(batches)
    logits = res[0]["logits"].float()
    parts = {"clo": losses.classification_loss(cfg.loss, logits, labels, cfg.shift)}
    if len(batches) > 1:
        twin_logits = res[1]["logits"].float()
        if cfg.use_clp:
            parts["clp"] = losses.classification_loss(cfg.loss, twin_logits, batches[1]["labels"].to(device), cfg.shift)
        if cfg.use_rcr and cfg.rcr_repr == "bl" and getattr(run.model, "bl_is_grouped_outer_product", False):
            parts["rcr"] = losses.rcr_grouped_bilinear(res[0]["zhzt"], res[1]["zhzt"], run.model.block_size,
                                                       cfg.rcr_reduction)  # = rcr_loss of bl, without bl's difference
        elif cfg.use_rcr:
            parts["rcr"] = losses.rcr_loss(res[0][cfg.rcr_repr], res[1][cfg.rcr_repr], cfg.rcr_reduction)
        if cfg.use_pcr:
            parts["pcr"] = losses.pcr_loss(cfg.pcr_form, logits, twin_logits)
    weights = {"clo": 1.0, "clp": 1.0, "rcr": cfg.alpha, "pcr": cfg.beta}
    loss = sum(weights[k] * v for k, v in parts.items())
    (loss / cfg.grad_accum).backward()
    terms = {k: float(v.detach()) / cfg.grad_accum for k, v in parts.items()}
    terms["loss"] = float(loss.detach()) / cfg.grad_accum
    if not math.isfinite(terms["loss"]):
        shown = ", ".join(f"{k} {v * cfg.grad_accum:.4g}" for k, v in terms.items() if k != "loss")
        raise diverged(cfg, run.counters.step + 1, f"the loss is {terms['loss']} ({shown})")
    return terms


def optimizer_step(run: Run) -> float:
    """Clip the gradients (max_grad_norm; 0 = no clipping, the norm still measured), step AdamW and the schedule.
    Returns the gradient norm; one that is not finite stops the run before the weights change."""
    norm = float(torch.nn.utils.clip_grad_norm_(run.wrapped.parameters(), run.cfg.max_grad_norm or float("inf")))
    if not math.isfinite(norm):
        raise diverged(run.cfg, run.counters.step + 1, f"the gradient norm is {norm}")
    run.optimizer.step()
    run.scheduler.step()
    run.optimizer.zero_grad(set_to_none=True)
    run.counters.step += 1
    return norm


# Values past which a field is the likely cause of a loss that is no longer finite: the reference runs keep well
# inside them (learning rates up to 1e-4, alpha and beta up to 0.2, eps 1e-6); lr_encoder=1e308 gave NaN weights.
DIVERGES_ABOVE = {"lr_encoder": 1e-2, "lr_classifier": 1e-1, "lr_grid": 1e-1, "alpha": 100.0, "beta": 100.0}
DIVERGES_BELOW = {"adam_eps": 1e-12}


def diverged(cfg: TrainConfig, step: int, what: str) -> EnvbenchError:
    """The one-line error of a run whose numbers are no longer finite at ``step``: ``what`` and the likely field,
    the one farthest past its limit (:data:`DIVERGES_ABOVE`, :data:`DIVERGES_BELOW`), else the learning rates."""
    far = {name: getattr(cfg, name) / limit for name, limit in DIVERGES_ABOVE.items() if getattr(cfg, name) > limit}
    far |= {name: limit / getattr(cfg, name) for name, limit in DIVERGES_BELOW.items() if getattr(cfg, name) < limit}
    if far:
        name = max(far, key=lambda n: far[n])
        likely = (f"likely {name}={getattr(cfg, name):g}; e.g. --set {name}={getattr(TrainConfig, name):g} "
                  "(the default)")
    else:
        likely = (f"likely the learning rates (lr_encoder={cfg.lr_encoder:g}, lr_classifier={cfg.lr_classifier:g}); "
                  "lower them" + (", or --set dtype=fp32" if cfg.dtype != "fp32" else ""))
    return EnvbenchError(f"step {step}: {what}; training stopped, no checkpoint holds this step's weights; {likely}")


def require_finite(run: Run) -> None:
    """Refuse to save weights that are not finite (a learning rate of 1e308 turns them to inf in one step)."""
    bad = [name for name, t in run.model.state_dict().items() if t.is_floating_point() and not torch.isfinite(t).all()]
    if bad:
        raise diverged(run.cfg, run.counters.step, f"{len(bad)} of {len(run.model.state_dict())} weight tensors hold "
                                                   f"NaN or inf after the optimizer step (first: {bad[0]})")


def log_step(run: Run, log: Any, accum: dict[str, float], grad_norm: float, seconds: float) -> None:
    """One line of train.log (and of stderr): step, epoch, each loss term, gradient norm, learning rate, seconds."""
    c = run.counters
    line = (f"step {c.step}/{run.total_steps} epoch {c.micro_batch / run.data.batches_per_epoch:.3f} "
            + " ".join(f"{k} {v:.4f}" for k, v in accum.items())
            + f" grad_norm {grad_norm:.3f} lr {run.scheduler.get_last_lr()[0]:.3g} {seconds:.2f}s")
    log.write(line + "\n")
    log.flush()
    tqdm.write(line, file=sys.stderr)


# --- 6. evaluation --------------------------------------------------------------------------------------

def evaluate(model: Any, feats: list, docs: list[dict], ign_facts: frozenset, cfg: TrainConfig, device: Any,
             bf16: bool) -> dict[str, Any]:
    """Dev scores (official DocRED semantics) of the current model; ``ign_facts`` from ``train_facts``."""
    preds = infer(model, feats, batch_size=cfg.eval_batch_size, max_labels=cfg.max_labels, device=device, bf16=bf16,
                  progress=cfg.progress, desc="dev")
    s = score(docs, preds, facts=ign_facts)
    keys = ("f1", "ign_f1", "precision", "recall", "intra_f1", "inter_f1")
    return {k: round(float(s[k]), 6) for k in keys if k in s} | {"predictions": len(preds)}


# --- 7. saving ------------------------------------------------------------------------------------------

def end_of_epoch(run: Run, epoch_end: bool) -> None:
    """At an epoch's end (or the run's): score dev, write checkpoints/epoch-N/, best/ when dev F1 + Ign F1 is
    the best yet, and last/. Only the first process scores and saves; the others wait for it."""
    cfg, c, m = run.cfg, run.counters, run.machine
    if m.master:
        require_finite(run)
        done_epochs = c.micro_batch / run.data.batches_per_epoch
        if cfg.eval_every_epoch or run.finished():
            d = run.data
            c.last_eval = evaluate(run.model, d.dev, d.dev_docs, d.ign_facts, cfg, m.device, m.bf16)
            c.last_eval |= {"epoch": round(done_epochs, 3), "step": c.step}
            with open(run.out / "metrics.jsonl", "a", encoding="utf-8") as fh:
                fh.write(json.dumps(c.last_eval, sort_keys=True) + "\n")
            print(f"dev after epoch {done_epochs:.2f}: F1 {c.last_eval['f1']:.4f} "
                  f"Ign F1 {c.last_eval['ign_f1']:.4f}", file=sys.stderr)
            if cfg.keep_epoch_checkpoints and epoch_end:
                save_weights(run.model, cfg, c.last_eval, run.out / "checkpoints" / f"epoch-{int(done_epochs)}")
                c.saved = True
            if not c.best or c.last_eval["f1"] + c.last_eval["ign_f1"] > c.best["f1"] + c.best["ign_f1"]:
                c.best = dict(c.last_eval)
                save_weights(run.model, cfg, c.best, run.out / "best")
                c.saved = True
        save_last(run)
    if m.ddp:
        dist.barrier()


def save_last(run: Run) -> None:
    """last/: state.pt (model, AdamW and schedule states, counters, RNG states), config.json and inputs.json."""
    require_finite(run)
    c, device = run.counters, run.machine.device
    with atomic_path(run.out / "last" / STATE_FILE) as tmp:
        torch.save({
            "model": run.model.state_dict(), "optimizer": run.optimizer.state_dict(),
            "scheduler": run.scheduler.state_dict(), "micro_batch": c.micro_batch, "step": c.step, "best": c.best,
            "last_eval": c.last_eval, "python_rng": random.getstate(), "torch_rng": torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state(device) if device.type == "cuda" else None,
        }, tmp)
    write_json_atomic(run.out / "last" / "config.json", run.cfg.to_dict(), indent=True)
    write_json_atomic(run.out / "last" / INPUTS_FILE, run.inputs, indent=True)
    c.saved = True


def save_weights(model: Any, cfg: TrainConfig, metrics: dict[str, Any], folder: Path) -> None:
    """model.pt, config.json and metrics.json of a checkpoint folder, all three written in full beside
    their places first and then renamed in one after another: a kill while they are written (seconds,
    for the weights) leaves the previous checkpoint whole; only one in the milliseconds between the
    three renames could pair new weights with the old epoch's metrics."""
    folder.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:  # exits in reverse order: the renames follow one another
        metrics_tmp = stack.enter_context(atomic_path(folder / "metrics.json"))
        config_tmp = stack.enter_context(atomic_path(folder / "config.json"))
        weights_tmp = stack.enter_context(atomic_path(folder / CHECKPOINT_FILE))
        torch.save(model.state_dict(), weights_tmp)
        config_tmp.write_bytes(dumps_json(cfg.to_dict(), indent=True))
        metrics_tmp.write_bytes(dumps_json(metrics, indent=True))


def open_run_folder(run: Run) -> None:
    """Make OUT a run folder: config.json first (the mark of a run, ``models.run_folder``), the old run's files
    gone when this one starts over, encoder/ (tokenizer and config, for predict) and features.json."""
    cfg, out, stats = run.cfg, run.out, run.data.stats
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "config.json", cfg.to_dict(), indent=True)
    if not run.counters.resumed:
        clear_previous_run(out, keep=cfg.init_from)  # starting over: no log line or checkpoint of the old run stays
    run.data.tokenizer.save_pretrained(out / "encoder")
    run.model.encoder.config.save_pretrained(out / "encoder")
    write_json_atomic(out / "features.json", run.data.features(), indent=True)
    skipped = f"{stats['train'].without_pairs} more without an entity pair skipped; " if stats["train"].without_pairs else ""
    windows = "two windows" if cfg.long_docs == "two_windows" else "overlapping windows"
    print(f"train: {len(run.data.train)} docs ({skipped}{stats['train'].over_window} longer than {cfg.window} "
          f"wordpieces, encoded in {windows}; {stats['train'].cut} cut at {cfg.max_length}); dev: {len(run.data.dev)} "
          f"docs; {run.total_steps} steps; device {run.machine.device}{' bf16' if run.machine.bf16 else ''}; "
          f"evrt={cfg.evrt}", file=sys.stderr)


# --- the loop -------------------------------------------------------------------------------------------

def run_loop(run: Run, log: Any) -> None:
    """Micro-batches in each epoch's order until the run is done: the step, a log line per optimizer step,
    last/ every ``save_every`` steps, and evaluation and saving at each epoch's end."""
    cfg, c, data = run.cfg, run.counters, run.data
    run.wrapped.train()
    bar = progress_bar(total=run.total_micro_batches, initial=c.micro_batch, desc="train", unit="batch",
                       enabled=cfg.progress and run.machine.master, leave=True)
    order, order_epoch = [], -1
    accum: dict[str, float] = {}
    t_step = time.time()
    while not run.finished():
        epoch, b = divmod(c.micro_batch, data.batches_per_epoch)
        if order_epoch != epoch:
            order, order_epoch = epoch_order(run, epoch), epoch
        idx = order[b * cfg.batch_size : (b + 1) * cfg.batch_size]
        batches = [collate([data.train[i] for i in idx])]
        if data.twins is not None:
            batches.append(collate([data.twins[i] for i in idx]))  # same pairs, same order, same labels
        for k, v in forward_backward(run, batches).items():
            accum[k] = accum.get(k, 0.0) + v
        c.micro_batch += 1
        bar.update(1)
        epoch_end = c.micro_batch % data.batches_per_epoch == 0
        if c.micro_batch % cfg.grad_accum == 0 or epoch_end or c.micro_batch >= run.total_micro_batches:
            grad_norm = optimizer_step(run)
            if run.machine.master and c.step % cfg.log_every == 0:
                log_step(run, log, accum, grad_norm, time.time() - t_step)
            accum, t_step = {}, time.time()
            if run.machine.master and cfg.save_every and c.step % cfg.save_every == 0 and not (epoch_end or run.finished()):
                save_last(run)
        if epoch_end or run.finished():
            end_of_epoch(run, epoch_end)
    bar.close()


def train(cfg: TrainConfig) -> TrainResult:
    """Train as ``cfg`` says into ``cfg.out``: set-up, data, model, optimizer (and resume), then the loop."""
    t_start = time.time()
    inputs = check_run(cfg)
    machine = start(cfg)
    data = load_data(cfg, machine)
    model, wrapped = build(cfg, machine)
    optimizer, scheduler, total_micro_batches, total_steps = make_optimizer(model, cfg, data)
    run = Run(cfg, machine, data, model, wrapped, optimizer, scheduler, total_micro_batches, total_steps, Counters(),
              inputs)
    resume(run)
    if run.counters.resumed and run.finished():
        # a finished run, rerun with the same settings and data: nothing is left to train, nothing is written
        # but the summary a kill between the last save and it left out
        if machine.ddp:
            dist.destroy_process_group()
        done = run.result(time.time() - t_start)
        if machine.master and not (run.out / "result.json").is_file():
            write_json_atomic(run.out / "result.json", done.__dict__, indent=True)
        done.up_to_date = True
        return done
    if run.counters.resumed and machine.master:
        print(f"resuming {run.out} at step {run.counters.step} (micro-batch {run.counters.micro_batch})", file=sys.stderr)
    created_out = not run.out.exists()
    log = None
    try:
        if machine.master:
            open_run_folder(run)
            log = open(run.out / "train.log", "a", encoding="utf-8")
        run_loop(run, log)
    except BaseException:
        # stopped before its first checkpoint: nothing can resume or predict from what it wrote, so it goes (a
        # folder of config.json, encoder/ and an empty train.log looked like a run); a resumed run keeps its last/
        if log is not None:
            log.close()
        if machine.master and not run.counters.resumed and not run.counters.saved:
            remove_unfinished_run(run.out, created=created_out)
        raise
    result = run.result(time.time() - t_start)
    if machine.master:
        log.close()
        write_json_atomic(run.out / "result.json", result.__dict__, indent=True)
    if machine.ddp:
        dist.destroy_process_group()
    return result
