"""Inference: a trained run + DocRED documents -> official-format predictions.

The output is a JSON list of ``{"title", "h_idx", "t_idx", "r"}`` (r a property id such as
"P17"), which ``envbench evaluate`` and the official DocRED / Re-DocRED scorers read.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envbench.core.errors import EnvbenchError
from envbench.formats.docred import read_docs
from etl.io import read_json, write_json_atomic
from models.config import TrainConfig
from models.data import RELATION_IDS, Feature, build_features, collate

CHECKPOINT_FILE = "model.pt"


def autocast_context(device: Any, enabled: bool) -> Any:
    import torch

    if not enabled:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16)


def bf16_supported(device: Any) -> bool:
    """bf16 autocast pays off on CUDA GPUs with bf16 and on CPUs with AVX512-BF16 or AMX."""
    import torch

    if device.type == "cuda":
        return bool(torch.cuda.is_bf16_supported())
    if device.type == "cpu":
        try:
            flags = Path("/proc/cpuinfo").read_text()
        except OSError:
            return False
        return "avx512_bf16" in flags or "amx_bf16" in flags
    return False


def resolve_device(name: str) -> Any:
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def use_bf16(dtype: str, device: Any) -> bool:
    return dtype == "bf16" or (dtype == "auto" and bf16_supported(device))


def infer(
    model: Any, feats: Sequence[Feature], *, batch_size: int = 8, max_labels: int = 4, device: Any = None,
    bf16: bool = False, progress: bool = False, desc: str = "predict",
) -> list[dict[str, Any]]:
    """Official-format predictions for the features, in document and pair order."""
    import torch
    from tqdm import tqdm

    from models.losses import decode

    was_training = model.training
    model.eval()
    preds: list[dict[str, Any]] = []
    with torch.no_grad():
        for start in tqdm(range(0, len(feats), batch_size), desc=desc, disable=None if progress else True, leave=False):
            chunk = feats[start : start + batch_size]
            batch = collate(chunk)
            with autocast_context(device, bf16):
                out = model(
                    batch["input_ids"].to(device), batch["attention_mask"].to(device), batch["entity_pos"], batch["hts"]
                )
            labels = decode(out["logits"].float(), max_labels).cpu()
            row = 0
            for f in chunk:
                for h, t in f.hts:
                    for c in torch.nonzero(labels[row, 1:]).flatten().tolist():
                        preds.append({"title": f.title, "h_idx": h, "t_idx": t, "r": RELATION_IDS[c]})
                    row += 1
    model.train(was_training)
    return preds


def build_model(cfg: TrainConfig, encoder_dir: str, *, weights: bool) -> Any:
    """``cfg.model`` (ATLOP, DocuNet, KD-DocRE) over the encoder in ``encoder_dir``; emb_size 0 = its hidden size."""
    from models.atlop import ATLOP
    from models.encoder import load_encoder

    encoder = load_encoder(encoder_dir, weights=weights)
    if cfg.model == "docunet":
        from models.docunet import DocuNet

        return DocuNet.from_config(encoder, cfg)
    if cfg.model == "kd-docre":
        from models.kd_docre import KDDocRE

        return KDDocRE.from_config(encoder, cfg)
    return ATLOP(encoder, emb_size=cfg.emb_size, block_size=cfg.block_size, num_class=cfg.num_class, window=cfg.window)


def load_checkpoint(path: str | os.PathLike[str], *, fix: str, full: bool = False) -> Any:
    """``torch.load`` of a checkpoint file, with one line naming the file when it is damaged.

    A file cut short (an interrupted copy, a full disk) or overwritten raises a long
    ``PytorchStreamReader`` traceback from torch; ``fix`` says what to do instead. ``full`` allows
    the pickled optimizer state of ``last/state.pt`` (files this tool wrote itself).
    """
    import pickle
    import zipfile

    import torch

    p = Path(path)
    try:
        return torch.load(p, map_location="cpu", weights_only=not full)
    except (RuntimeError, EOFError, OSError, ValueError, pickle.UnpicklingError, zipfile.BadZipFile) as exc:
        # torch's first sentence names the failure; the rest is generic advice
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0].split(". ")[0].rstrip(".")
        raise EnvbenchError(f"{p}: damaged checkpoint ({p.stat().st_size:,} bytes; torch: {first}); {fix}") from None


def load_weights(model: Any, state: dict[str, Any], path: str | os.PathLike[str], fix: str) -> None:
    """``model.load_state_dict`` with one line when the weights belong to another model shape."""
    try:
        model.load_state_dict(state)
    except RuntimeError as exc:
        first = str(exc).strip().splitlines()[0].rstrip(":.")
        raise EnvbenchError(f"{path}: weights do not fit this model ({first}); {fix}") from None


@dataclass
class PredictResult:
    out: str
    documents: int
    predictions: int
    checkpoint: str
    seconds: float
    long_documents: dict[str, Any] = field(default_factory=dict)
    up_to_date: bool = False  # OUT already held these predictions (same checkpoint, documents, settings)


def weights_of(ckpt: Path) -> Path:
    """The file a checkpoint's weights are read from: model.pt, or the resumable state.pt of last/."""
    return ckpt / CHECKPOINT_FILE if (ckpt / CHECKPOINT_FILE).is_file() else ckpt / "state.pt"


def checkpoint_dir(run: str | os.PathLike[str], checkpoint: str) -> Path:
    run_p = Path(run)
    if not run_p.is_dir():
        raise EnvbenchError(f"no run at {run}; train one with `envbench train ... --out {run}`")
    cand = run_p / checkpoint if checkpoint in ("best", "last") else run_p / "checkpoints" / checkpoint
    if not (cand / CHECKPOINT_FILE).is_file() and not (cand / "state.pt").is_file():
        have = sorted(p.parent.relative_to(run_p).as_posix() for p in run_p.rglob(CHECKPOINT_FILE))
        raise EnvbenchError(
            f"run {run} has no checkpoint {checkpoint!r} (looked in {cand}); available: {', '.join(have) or 'none'}; "
            "pass --checkpoint best, last or epoch-N"
        )
    return cand


def checkpoint_names(run: str | os.PathLike[str]) -> list[str]:
    """The ``--checkpoint`` values a run offers: best, epoch-N (in epoch order), last."""
    run_p = Path(run)
    epochs = sorted((p.parent.name for p in run_p.glob(f"checkpoints/epoch-*/{CHECKPOINT_FILE}")),
                    key=lambda name: (len(name), name))
    return ((["best"] if (run_p / "best" / CHECKPOINT_FILE).is_file() else []) + epochs
            + (["last"] if (run_p / "last" / "state.pt").is_file() else []))


def load_run(run: str | os.PathLike[str], checkpoint: str = "best", device: Any = None) -> tuple[Any, TrainConfig, Any]:
    """Model (weights loaded, eval mode), its config and tokenizer from a run directory."""
    from models.encoder import load_tokenizer

    ckpt = checkpoint_dir(run, checkpoint)
    config_file = ckpt / "config.json"
    cfg = TrainConfig.from_dict(read_json(config_file, what="checkpoint config"), source=str(config_file))
    encoder_dir = str(Path(run) / "encoder")
    model = build_model(cfg, encoder_dir, weights=False)
    weights_file = weights_of(ckpt)
    others = [name for name in checkpoint_names(run) if checkpoint_dir(run, name) != ckpt]
    fix = ("it was cut short or overwritten: copy it again from where it was trained, or pass another "
           f"--checkpoint ({', '.join(others) or 'none left in this run'})")
    if weights_file.name == CHECKPOINT_FILE:
        state = load_checkpoint(weights_file, fix=fix)
    else:
        state = load_checkpoint(weights_file, fix=fix, full=True)["model"]
    load_weights(model, state, weights_file, f"its config.json ({config_file}) must be the one it was trained with")
    model.to(device or "cpu").eval()
    return model, cfg, load_tokenizer(encoder_dir)


def predict(
    run: str | os.PathLike[str], docs_path: str | os.PathLike[str], out: str | os.PathLike[str], *,
    checkpoint: str = "best", device: str = "auto", dtype: str = "auto", batch_size: int = 0,
    max_docs: int = 0, skip_invalid: bool = False, progress: bool = True, threads: int = 0, force: bool = False,
) -> PredictResult:
    """Predict relations for every document of ``docs_path`` and write them to ``out``.

    ``out`` is written as one step (``etl.step.Step``): staged, published atomically, with
    ``OUT.manifest.json`` beside it written last. The manifest records the checkpoint and documents it
    came from and, under ``covers``, the titles predicted for (all of ``docs_path``, or the first
    ``max_docs``), so that ``envbench evaluate`` does not mistake a document the model found no
    relation in for one it never saw, and scores a ``max_docs`` subset with ``--only-predicted``.
    When that manifest matches (the same documents and checkpoint files, by sha256, and the same
    settings that change predictions), nothing is loaded or written and the result says
    ``up_to_date``; ``force`` predicts again.
    """
    import torch

    from etl.step import Step, manifest_beside

    t0 = time.time()
    if threads:
        torch.set_num_threads(threads)
    dev = resolve_device(device)
    ckpt = checkpoint_dir(run, checkpoint)
    # the checkpoint's files (the weights load_run reads, and the config: max_labels, marker, window live
    # there) and every setting that can change a prediction; the batch size can, through bf16 padding
    inputs = [docs_path, *(f for f in (weights_of(ckpt), ckpt / "config.json") if f.is_file())]
    parameters = {"checkpoint": checkpoint, "max_docs": max_docs, "skip_invalid": skip_invalid,
                  "device": str(dev), "dtype": dtype, "batch_size": batch_size}
    with Step("predict", manifest=manifest_beside(out), outputs=[out], inputs=inputs, parameters=parameters,
              force=force) as step:
        if step.up_to_date:
            return PredictResult(str(out), 0, 0, checkpoint, round(time.time() - t0, 1), up_to_date=True)
        model, cfg, tokenizer = load_run(run, checkpoint, dev)
        docs = read_docs(docs_path, skip_invalid=skip_invalid).docs
        if max_docs:
            docs = docs[:max_docs]
        feats, stats = build_features(docs, tokenizer, marker=cfg.marker, max_length=cfg.max_length,
                                      window=cfg.window)
        preds = infer(
            model, feats, batch_size=batch_size or cfg.eval_batch_size, max_labels=cfg.max_labels, device=dev,
            bf16=use_bf16(dtype, dev), progress=progress,
        )
        write_json_atomic(step.path(out), preds)
        step.info["covers"] = {"titles": [d["title"] for d in docs], "failed_titles": [], "documents": len(docs),
                               "subset": bool(max_docs)}
    return PredictResult(str(out), len(docs), len(preds), checkpoint, round(time.time() - t0, 1), stats.as_dict())
