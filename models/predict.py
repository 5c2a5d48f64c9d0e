"""Inference: a trained run + DocRED documents -> official-format predictions.

Loading the run (model building, checkpoint files, devices) is ``models.checkpoints``; this module
predicts: :func:`infer` over features (also train's dev scoring) and :func:`predict`, the step.

The output is a JSON list of ``{"title", "h_idx", "t_idx", "r"}`` (r a property id such as
"P17"), which ``envbench evaluate`` and the official DocRED / Re-DocRED scorers read.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from envbench.core.errors import EnvbenchError
from envbench.formats.docred import read_docs, require_documents
from envbench.formats.hf import document_files
from envbench.rename.attacks import mask_document
from etl.io import require_path, write_json_atomic
from models.checkpoints import (
    autocast_context,
    checkpoint_dir,
    load_run,
    resolve_device,
    use_bf16,
    weights_of,
)
from models.config import INT64_MAX, MAX_THREADS
from models.data import RELATION_IDS, Feature, build_features, collate


def infer(
    model: Any, feats: Sequence[Feature], *, batch_size: int = 8, max_labels: int = 4, device: Any = None,
    bf16: bool = False, progress: bool = False, desc: str = "predict",
) -> list[dict[str, Any]]:
    """Official-format predictions for the features, in document and pair order. A document without an entity
    pair (fewer than two entities) has nothing to score: it is not run and gets no prediction."""
    import torch

    from etl.progress import bar
    from models.losses import decode

    was_training = model.training
    model.eval()
    preds: list[dict[str, Any]] = []
    feats = [f for f in feats if f.hts]  # the models pool over pairs: a document of none has no rows to give
    with torch.no_grad():
        for start in bar(range(0, len(feats), batch_size), desc=desc, unit="batch", enabled=progress):
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


@dataclass
class PredictResult:
    out: str
    documents: int
    predictions: int
    checkpoint: str
    seconds: float
    long_documents: dict[str, Any] = field(default_factory=dict)
    up_to_date: bool = False  # OUT already held these predictions (same checkpoint, documents, settings)


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
    require_path(out, "--out", "the predictions file", "--out runs/atlop/test.json")
    for option, value in (("--batch-size", batch_size), ("--max-docs", max_docs), ("--threads", threads)):
        if value < 0:  # a negative batch size predicted nothing, a negative max_docs dropped the last documents
            raise EnvbenchError(f"{option} {value}: use 0 (the default) or a positive number")
        if value > INT64_MAX:  # the manifest records it: past 64 bits it was written, then its manifest failed
            raise EnvbenchError(f"{option} {value}: out of range (a 64-bit integer, which the manifest records); "
                                "use 0 (the default) or a smaller number")
    if threads > MAX_THREADS:
        raise EnvbenchError(f"--threads {threads}: use 0 (torch's default) or a number up to {MAX_THREADS}")
    if threads:
        torch.set_num_threads(threads)
    dev = resolve_device(device)
    ckpt = checkpoint_dir(run, checkpoint)
    # the checkpoint's files (the weights load_run reads, and the config: max_labels, marker, window live
    # there) and every setting that can change a prediction; the batch size can, through bf16 padding
    inputs = [*document_files(docs_path), *(f for f in (weights_of(ckpt), ckpt / "config.json") if f.is_file())]
    parameters = {"checkpoint": checkpoint, "max_docs": max_docs, "skip_invalid": skip_invalid,
                  "device": str(dev), "dtype": dtype, "batch_size": batch_size}
    with Step("predict", manifest=manifest_beside(out), outputs=[out], inputs=inputs, parameters=parameters,
              force=force) as step:
        if step.up_to_date:
            return PredictResult(str(out), 0, 0, checkpoint, round(time.time() - t0, 1), up_to_date=True)
        docset = read_docs(docs_path, skip_invalid=skip_invalid)
        require_documents(docset)  # every document skipped as invalid is a mistake, not "0 predictions"
        docs = docset.docs
        model, cfg, tokenizer = load_run(run, checkpoint, dev)
        if max_docs:
            docs = docs[:max_docs]
        if cfg.mask_names:  # a model trained without names reads documents without names (same titles)
            docs = [mask_document(d) for d in docs]
        feats, stats = build_features(docs, tokenizer, marker=cfg.marker, markers=cfg.markers, max_length=cfg.max_length,
                                      window=cfg.window)
        preds = infer(
            model, feats, batch_size=batch_size or cfg.eval_batch_size, max_labels=cfg.max_labels, device=dev,
            bf16=use_bf16(dtype, dev), progress=progress,
        )
        write_json_atomic(step.path(out), preds)
        step.info["covers"] = {"titles": [d["title"] for d in docs], "failed_titles": [], "documents": len(docs),
                               "subset": bool(max_docs)}
    return PredictResult(str(out), len(docs), len(preds), checkpoint, round(time.time() - t0, 1), stats.as_dict())
