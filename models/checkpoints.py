"""Building a model and reading it back: devices, bf16, model construction, checkpoint files and run folders.

``train`` builds models and writes checkpoints with these; ``predict`` and ``understand`` load runs
through :func:`load_run`. Every checkpoint file is read with ``torch.load(weights_only=True)``: a
``model.pt`` is a state dict, and ``last/state.pt`` (model, optimizer and scheduler state dicts,
step counters, RNG states) holds only tensors, dicts, lists, tuples, numbers, strings and None,
which the weights-only unpickler takes as they are, so no type is allow-listed
(:data:`SAFE_GLOBALS` is empty). A file that pickles anything else (a crafted one that would run
code on loading) is refused, as is a file that holds no state dict.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from envbench.core.errors import EnvbenchError
from etl.io import require_path
from models.config import TrainConfig

CHECKPOINT_FILE = "model.pt"  # the weights of best/ and checkpoints/epoch-N/
STATE_FILE = "state.pt"  # last/: everything a resumed run needs
# Types torch.load(weights_only=True) is told to accept beyond its own (tensors, containers, numbers,
# strings): none, since the optimizer (AdamW), scheduler (LambdaLR) and RNG states need none; a test
# loads a real state.pt weights-only.
SAFE_GLOBALS: tuple[Any, ...] = ()
# What a checkpoint file starts with: torch.save's zip archive, or the pickle of torch's legacy format
ZIP_MAGIC, PICKLE_MAGIC = b"PK\x03\x04", b"\x80"


# --- device and precision ---------------------------------------------------------------------------

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


def resolve_device(name: str, option: str = "--device") -> Any:
    """The torch device ``name`` (auto, cpu, cuda, cuda:N, ...) stands for; one line naming ``option`` when it
    is no device or one this machine lacks (torch would fail later with a traceback)."""
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    given = f"{option} {name}" if option.startswith("-") else f"{option}={name}"
    try:
        device = torch.device(name)
    except (RuntimeError, TypeError):
        raise EnvbenchError(f"{given}: not a device; use auto, cpu, cuda or cuda:N") from None
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise EnvbenchError(f"{given}: this machine has no CUDA GPU (or torch was built without CUDA); "
                                "use auto or cpu")
        if device.index is not None and device.index >= count:
            raise EnvbenchError(f"{given}: this machine has {count} CUDA GPU{'s' if count > 1 else ''} "
                                f"(cuda:0{f' to cuda:{count - 1}' if count > 1 else ''}); use one of them, or auto")
    elif device.type == "mps" and not torch.backends.mps.is_available():
        raise EnvbenchError(f"{given}: this machine has no MPS device; use auto or cpu")
    return device


def use_bf16(dtype: str, device: Any) -> bool:
    return dtype == "bf16" or (dtype == "auto" and bf16_supported(device))


# --- the model --------------------------------------------------------------------------------------

def build_model(cfg: TrainConfig, encoder_dir: str, *, weights: bool) -> Any:
    """``cfg.model`` (ATLOP, DocuNet, KD-DocRE) over the encoder in ``encoder_dir``; emb_size 0 = its hidden size."""
    from models.atlop import ATLOP
    from models.encoder import load_encoder

    encoder = load_encoder(encoder_dir, weights=weights)
    model: Any
    if cfg.model == "docunet":
        from models.docunet import DocuNet

        model = DocuNet.from_config(encoder, cfg)
    elif cfg.model == "kd-docre":
        from models.kd_docre import KDDocRE

        model = KDDocRE.from_config(encoder, cfg)
    else:
        model = ATLOP(encoder, emb_size=cfg.emb_size, block_size=cfg.block_size, num_class=cfg.num_class,
                      window=cfg.window)
    model.long_docs = cfg.long_docs  # how documents over `window` wordpieces are encoded (models.encoder)
    return model


# --- checkpoint files -------------------------------------------------------------------------------

def load_checkpoint(path: str | os.PathLike[str], *, fix: str) -> Any:
    """``torch.load(weights_only=True)`` of a checkpoint file, with one line naming the file when it fails.

    A file cut short (an interrupted copy, a full disk) or overwritten raises a long
    ``PytorchStreamReader`` traceback from torch, one that pickles another type (a crafted file
    that would run code) an ``UnpicklingError``, and one that is no checkpoint at all (a text file in
    its place) a ``KeyError`` or a misleading "pickles an object": each becomes one line; ``fix`` says
    what to do.
    """
    import pickle
    import zipfile

    import torch

    p = Path(path)
    with open(p, "rb") as fh:
        head = fh.read(len(ZIP_MAGIC))
    not_one = (f"{p}: not a checkpoint ({p.stat().st_size:,} bytes, neither the zip archive torch.save writes nor a "
               f"pickle of tensors); {fix}")
    if head and not head.startswith((ZIP_MAGIC, PICKLE_MAGIC)):  # a text file, an image: never a checkpoint
        raise EnvbenchError(not_one)
    try:
        with torch.serialization.safe_globals(list(SAFE_GLOBALS)):
            return torch.load(p, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        # torch names the refused global as "Unsupported global: GLOBAL module.name"
        text = str(exc)
        what = next((ln.split("GLOBAL", 1)[1].split()[0] for ln in text.splitlines() if "GLOBAL " in ln), "")
        what = what.rstrip(":.,")
        if not what:  # no type named: bytes the unpickler cannot read, not a pickle that would run code
            raise EnvbenchError(not_one) from None
        raise EnvbenchError(f"{p}: refused: the file pickles {what}, which no checkpoint holds "
                            "(loading it could run code); a checkpoint holds only tensors and plain values; "
                            "use a checkpoint written by `envbench train`") from None
    except (KeyError, IndexError, TypeError, AttributeError):  # the unpickler lost in bytes that are no pickle
        raise EnvbenchError(not_one) from None
    except (RuntimeError, EOFError, OSError, ValueError, zipfile.BadZipFile) as exc:
        # torch's first sentence names the failure; the rest is generic advice
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0].split(". ")[0].rstrip(".")
        raise EnvbenchError(f"{p}: damaged checkpoint ({p.stat().st_size:,} bytes; torch: {first}); {fix}") from None


def _kind(obj: Any) -> str:
    return type(obj).__name__


def state_dict_of(obj: Any, path: str | os.PathLike[str], *, key: str | None = None) -> dict[str, Any]:
    """``obj`` (or ``obj[key]``, for ``last/state.pt``) checked to be a state dict: names to tensors.

    A file holding a bare tensor, a list or a dict of other values is refused with one line naming it.
    """
    import torch

    what = obj
    if key is not None:
        if not isinstance(obj, Mapping) or key not in obj:
            raise EnvbenchError(f"{path}: not a training state (it holds a {_kind(obj)}"
                                f"{'' if not isinstance(obj, Mapping) else ' without ' + repr(key)}); "
                                "it must be the state.pt `envbench train` writes in RUN/last/")
        what = obj[key]
    if (not isinstance(what, Mapping) or not what
            or not all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in what.items())):
        inner = f"{key!r} holds" if key is not None else "it holds"
        raise EnvbenchError(f"{path}: not a state dict ({inner} a {_kind(what)}, not parameter names mapped to "
                            "tensors); use a model.pt written by `envbench train`")
    return dict(what)


def load_weights(model: Any, state: dict[str, Any], path: str | os.PathLike[str], fix: str) -> None:
    """``model.load_state_dict`` with one line when the weights belong to another model shape."""
    try:
        model.load_state_dict(state)
    except RuntimeError as exc:
        first = str(exc).strip().splitlines()[0].rstrip(":.")
        raise EnvbenchError(f"{path}: weights do not fit this model ({first}); {fix}") from None


# --- run folders ------------------------------------------------------------------------------------

def weights_of(ckpt: Path) -> Path:
    """The file a checkpoint's weights are read from: model.pt, or the resumable state.pt of last/."""
    return ckpt / CHECKPOINT_FILE if (ckpt / CHECKPOINT_FILE).is_file() else ckpt / STATE_FILE


def checkpoint_dir(run: str | os.PathLike[str], checkpoint: str, *, choosable: bool = True) -> Path:
    """The folder of checkpoint ``best``, ``last`` or ``epoch-N`` of a run; any other name (a path such as
    ``../other-run/best`` included) is refused, so a checkpoint is always read from inside the run.
    ``choosable``: whether the command has ``--checkpoint`` (``understand`` reads ``best`` only), which
    the message then names."""
    run_p = Path(run)
    require_path(run, "--run", "the run folder `envbench train --out` wrote", "--run runs/atlop")
    if not run_p.is_dir():
        raise EnvbenchError(f"no run at {run}; train one with `envbench train ... --out {run}`")
    if checkpoint not in ("best", "last") and not re.fullmatch(r"epoch-[0-9]+", checkpoint):
        raise EnvbenchError(f"--checkpoint {checkpoint!r}: not a checkpoint name; pass best, last or epoch-N "
                            f"(run {run} has: {', '.join(checkpoint_names(run)) or 'none'})")
    cand = run_p / checkpoint if checkpoint in ("best", "last") else run_p / "checkpoints" / checkpoint
    if not (cand / CHECKPOINT_FILE).is_file() and not (cand / STATE_FILE).is_file():
        fix = ("pass --checkpoint best, last or epoch-N" if choosable
               else f"give a run that has it (a finished `envbench train` run writes {checkpoint!r})")
        raise EnvbenchError(
            f"run {run} has no checkpoint {checkpoint!r} (looked in {cand}); available: "
            f"{', '.join(checkpoint_names(run)) or 'none'}; {fix}"
        )
    return cand


def checkpoint_names(run: str | os.PathLike[str]) -> list[str]:
    """The ``--checkpoint`` values a run offers: best, epoch-N (in epoch order), last."""
    run_p = Path(run)
    epochs = sorted((p.parent.name for p in run_p.glob(f"checkpoints/epoch-*/{CHECKPOINT_FILE}")),
                    key=lambda name: (len(name), name))
    return ((["best"] if (run_p / "best" / CHECKPOINT_FILE).is_file() else []) + epochs
            + (["last"] if (run_p / "last" / STATE_FILE).is_file() else []))


def load_run(run: str | os.PathLike[str], checkpoint: str = "best", device: Any = None) -> tuple[Any, TrainConfig, Any]:
    """Model (weights loaded, eval mode), its config and tokenizer from a run directory."""
    from models.encoder import load_tokenizer

    ckpt = checkpoint_dir(run, checkpoint)
    config_file = ckpt / "config.json"
    cfg = TrainConfig.of_checkpoint(config_file)
    encoder_dir = str(Path(run) / "encoder")
    model = build_model(cfg, encoder_dir, weights=False)
    weights_file = weights_of(ckpt)
    others = [name for name in checkpoint_names(run) if checkpoint_dir(run, name) != ckpt]
    fix = ("it was cut short or overwritten: copy it again from where it was trained, or pass another "
           f"--checkpoint ({', '.join(others) or 'none left in this run'})")
    loaded = load_checkpoint(weights_file, fix=fix)
    state = state_dict_of(loaded, weights_file, key=None if weights_file.name == CHECKPOINT_FILE else "model")
    load_weights(model, state, weights_file, f"its config.json ({config_file}) must be the one it was trained with")
    model.to(device or "cpu").eval()
    return model, cfg, load_tokenizer(encoder_dir)
