"""A run's folder: where `envbench train` may write, what an earlier run left there, and whether it resumes.

``train`` writes only into a new folder, an empty one, or a run folder of its own: one whose config.json
is a training config (:func:`models.config.is_train_config`), which ``train`` writes there first, so that
config.json is the run's marker. Anything else (/etc, a project, an encoder folder, a run's own ``best/``,
the folder of the documents it reads) is refused in one line before anything is written. The run is
resumable from its first checkpoint on, so it is not staged and published whole as ``etl.step``'s steps
are; instead a run that stops before its first checkpoint removes what it wrote
(:func:`remove_unfinished_run`), and one that starts over removes what the old run wrote
(:func:`clear_previous_run`), never anything else.
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from typing import Any

import orjson

from envbench.core.errors import EnvbenchError
from envbench.formats.hf import document_files
from etl.io import InputError, listed, read_json
from etl.manifest import describe_file
from etl.step import resolves_inside
from models.checkpoints import CHECKPOINT_FILE, STATE_FILE
from models.config import TrainConfig, is_train_config

# What `train` writes in OUT; config.json (written first) marks the folder as a run of it.
RUN_OUTPUTS = ("config.json", "encoder", "features.json", "train.log", "metrics.jsonl", "result.json", "best", "last",
               "checkpoints")
CHECKPOINT_OUTPUTS = (CHECKPOINT_FILE, STATE_FILE, "config.json", "metrics.json")  # in best/, last/, checkpoints/epoch-N/
INPUTS_FILE = "inputs.json"  # last/inputs.json: sha256 of every document file the run was trained on


def _is_run(out: Path) -> bool:
    try:
        return is_train_config(read_json(out / "config.json", what="run config"))
    except (InputError, OSError):
        return False


def check_run_folder(out: Path) -> None:
    """Refuse an OUT that is neither new, nor empty, nor a run folder of `train` (its config.json a training
    config): a folder of other files (/etc, a project: `--set out=/etc` wrote a whole run among them), an
    encoder folder (whose config.json a run would overwrite), or a run's own checkpoint folder (best/, last/,
    epoch-N/: its config.json is a training config, beside its weights)."""
    if out.exists() and not out.is_dir():
        raise EnvbenchError(f"--out {out}: a file has that name; choose a folder path")
    held = [name for name in (CHECKPOINT_FILE, STATE_FILE) if (out / name).exists()]
    if held:
        raise EnvbenchError(f"--out {out}: holds {held[0]}, a checkpoint of a run; give the run folder itself (or a "
                            "new one) as --out, never one of its checkpoints")
    if not out.is_dir() or _is_run(out):
        return
    taken = [name for name in RUN_OUTPUTS if (out / name).exists() or (out / name).is_symlink()]
    if taken:
        shown = listed(taken)
        why = ("its config.json is not a training config" if "config.json" in taken
               else "no config.json of a run is there, which `envbench train` writes first")
        raise EnvbenchError(f"--out {out}: holds {shown}, which `envbench train` did not write ({why}) and would "
                            "overwrite; choose a new or empty --out folder")
    others = sorted(p.name for p in out.iterdir())
    if others:
        raise EnvbenchError(f"--out {out}: holds {listed(others)}, which `envbench train` did not write; it writes "
                            "only into a new folder, an empty one or a run folder of its own (its config.json a "
                            "training config); choose a new or empty --out folder")


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


def saved_config(path: Path) -> dict[str, Any]:
    """The config.json of last/, which a resumed run must match; one cut short is no reason to stop for good."""
    fix = f"it was cut short or overwritten: pass --set resume=false to start over (or delete {path.parent})"
    try:
        data = orjson.loads(path.read_bytes())  # written by write_json_atomic: plain JSON, never compressed
    except orjson.JSONDecodeError as exc:
        raise EnvbenchError(f"{path}: not a valid checkpoint config ({exc}); {fix}") from None
    if not isinstance(data, dict):
        raise EnvbenchError(f"{path}: not a checkpoint config (a JSON {type(data).__name__}, not an object); {fix}")
    return data


def check_resumable(cfg: TrainConfig, out: Path, inputs: dict[str, list[dict[str, Any]]]) -> None:
    """When OUT/last/ will be resumed: refuse it when it was written with other settings or other documents."""
    last = out / "last"
    if not (cfg.resume and (last / STATE_FILE).is_file() and (last / "config.json").is_file()):
        return
    changed = cfg.resume_differences(saved_config(last / "config.json"))
    if changed:
        raise EnvbenchError(
            f"{out}/last was written by a run with other settings ({'; '.join(changed)}); rerun with those "
            "settings to continue it, or start over with --set resume=false or another --out"
        )
    changed = changed_inputs(last / INPUTS_FILE, inputs, cfg)
    if changed:
        raise EnvbenchError(
            f"{out}/last was trained on other data ({'; '.join(changed)} since); rerun with the files it was "
            "trained on to continue it, or start over with --set resume=false or another --out"
        )


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
