"""A run's output folder: whose it is, who holds it, and what a run stopped early leaves there.

A run's folder is known by the format marker (``RUN_FORMAT``) of its ``answers.json`` or ``run.json``; there a run
rewrites only its own files (``answers.json``, ``failures.json``, ``run.json``), and what `icl parse` puts beside
them stays. A folder without the marker may hold only the answer cache of an interrupted run, which resumes.
A run holds the folder (an exclusive ``flock``, as the other steps do) from start to end, so no answer is paid
twice, and one stopped before its first answer removes the folders it made, which hold nothing.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import Any

from envbench.core.errors import EnvbenchError
from etl.io import listed, read_json
from icl import cache
from icl.openai_format import server_count

RUN_FORMAT = "envbench-icl-run/1"  # the marker of answers.json and run.json
RUN_FILES = ("answers.json", "run.json")  # the files that carry the marker
_RUN_TEMP = re.compile(r"\.(?:answers|failures|run)\.json\.[0-9a-f]{8}\.tmp")  # a write of a run killed (-9) midway


def hold_out(out_dir: Path) -> int:
    """An exclusive flock on OUT for the whole run (as etl.step does for the other steps): two runs into
    one folder would each send every request, and each answer would be paid twice. The caller closes it."""
    from etl.io import InputError
    from etl.step import hold_folder

    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        return hold_folder(out_dir)
    except InputError as exc:  # the run's errors are EnvbenchError; the words are the steps' own
        raise EnvbenchError(str(exc)) from None


def check_places(prompts_dir: str | os.PathLike[str], out_dir: Path, cache_root: Path) -> None:
    """Refuse an --out or --cache that is the --prompts folder or lies inside it."""
    prompts_real = Path(prompts_dir).resolve()
    for option, folder in (("--out", out_dir), ("--cache", cache_root)):
        if folder.resolve().is_relative_to(prompts_real):
            # said apart from check_out's refusal, which a first run gets too: answers kept in the prompts' folder
            # mix two steps' outputs, and `icl prompts` refuses to rebuild a prompts/ holding files it did not write
            where = ("is the --prompts folder" if folder.resolve() == prompts_real
                     else f"lies inside the --prompts folder {prompts_dir}")
            raise EnvbenchError(f"{option} {folder} {where}; choose another {option}, outside it")


def is_run_record(path: Path) -> bool:
    """Whether ``path`` is an answers.json or run.json an `icl run` wrote (both carry RUN_FORMAT)."""
    try:
        data = read_json(path, what="run record")
    except Exception:  # noqa: BLE001 - not JSON, a folder, unreadable: not the run's
        return False
    return isinstance(data, dict) and data.get("format") == RUN_FORMAT


def check_out(out_dir: Path, cache_root: Path) -> None:
    """Refuse an --out holding files that no `icl run` wrote, before anything is sent or written there.

    A run's folder is known by the format marker of its answers.json or run.json. There, the run rewrites
    only its own files (pred.json and the like, which `icl parse` may put beside them, stay). A folder
    without that marker may hold only the answer cache of an interrupted run: anything else (a user's
    files, another step's output folder) would be overwritten or mixed with the answers.
    """
    names = sorted(p.name for p in out_dir.iterdir())
    if not names:
        return
    marked = [n for n in RUN_FILES if n in names and is_run_record(out_dir / n)]
    strangers = [n for n in RUN_FILES if n in names and n not in marked]
    if not marked:
        own_cache = cache_root.resolve() == (out_dir / "cache").resolve()
        is_cache = cache_root.resolve() == out_dir.resolve()  # --cache the same folder as --out
        inside = cache_root.resolve().relative_to(out_dir.resolve()).parts[:1] \
            if cache_root.resolve().is_relative_to(out_dir.resolve()) else ()
        for name in names:
            path = out_dir / name
            if name in RUN_FILES or _RUN_TEMP.fullmatch(name):
                continue
            if name == "cache" and own_cache and path.is_dir():
                foreign = cache.strangers(path)
                if foreign:
                    shown = listed([os.path.relpath(f, out_dir) for f in foreign])
                    raise EnvbenchError(f"--out {out_dir}: cache/ holds files that no `icl-run` run wrote ({shown}); "
                                        "move them out of it, or choose another --out")
                continue
            if (is_cache and cache.SHARD.fullmatch(name) and path.is_dir()) or (inside and name == inside[0]):
                continue  # the answer cache --cache names (the user's choice of folder)
            strangers.append(name + ("/" if path.is_dir() else ""))
    if strangers:
        one = len(strangers) == 1
        raise EnvbenchError(f"--out {out_dir}: {listed(sorted(strangers))} {'is' if one else 'are'} there and no "
                            f"`icl-run` run wrote {'it' if one else 'them'}; move {'it' if one else 'them'}, or "
                            "choose another --out")


def remove_empty(made: list[Path]) -> None:
    """Remove the folders in ``made`` (--out, the cache) that this run created, when they hold nothing: a run
    interrupted (Ctrl-C) or stopped (a fatal error) before its first answer left an empty --out behind. The
    cache's empty shard folders go first; a folder holding anything (an answer, a write cut short) stays."""
    for folder in made:
        if folder.is_dir() and not folder.is_symlink():
            cache.remove_empty_shards(folder)
    for folder in sorted(made, key=lambda f: len(f.parts), reverse=True):  # OUT/cache before OUT
        with contextlib.suppress(OSError):
            folder.rmdir()  # only when empty


def last_server(out_dir: Path) -> dict[str, Any]:
    """The server facts of the last run into OUT (its run.json), kept when this run learns nothing new."""
    try:
        last = read_json(out_dir / "run.json", what="run record")
    except Exception:  # noqa: BLE001 - no earlier run, or a damaged record: nothing known
        return {}
    server = last.get("server") if isinstance(last, dict) else None
    if not isinstance(server, dict):
        return {}
    models = server.get("models")
    # written back into run.json: only what a server could have said
    return {"models": models if isinstance(models, list) and all(isinstance(m, str) for m in models) else None,
            "slots": server_count(server.get("slots"), least=1)}


__all__ = ["RUN_FILES", "RUN_FORMAT", "check_out", "check_places", "hold_out", "is_run_record", "last_server",
           "remove_empty"]
