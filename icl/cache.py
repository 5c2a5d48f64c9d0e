"""The answer cache: ``CACHE/<key[:2]>/<key>.json``, one file per answer, each written atomically.

``key`` is ``ChatClient.cache_key`` (the sha256 of model, messages and sampling parameters), so a rerun sends no
request for a cached prompt and an interrupted run resumes where it stopped. What else may lie in a cache folder
is known here too: an entry, or the temporary file of a write cut short (``etl.io.write_json_atomic``'s
``.<name>.<8 hex>.tmp``); anything else is a stranger, which `icl run` refuses to mix with its answers.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import Any

from etl.io import read_json, write_json_atomic

SHARD = re.compile(r"[0-9a-f]{2}")  # a shard folder's name: the first two hex digits of its keys
_ENTRY = re.compile(r"(\.)?([0-9a-f]{64})\.json(?(1)\.[0-9a-f]{8}\.tmp|)")  # an entry, or a write cut short


class AnswerCache:
    """CACHE/<key[:2]>/<key>.json, one file per answer, each written atomically."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The entry of ``key``; None when there is none, or it is damaged (it is then simply asked again)."""
        p = self.path(key)
        if not p.exists():
            return None
        try:
            entry = read_json(p, what="cache entry")
        except Exception:  # noqa: BLE001 - a damaged entry is simply asked again
            return None
        return entry if isinstance(entry, dict) and isinstance(entry.get("content"), str) else None

    def put(self, key: str, entry: dict[str, Any]) -> None:
        write_json_atomic(self.path(key), entry, indent=True)


def strangers(cache: Path) -> list[Path]:
    """Files under an answer cache that are not its entries (``<key[:2]>/<key>.json``) or writes cut short."""
    found = []
    for f in sorted(cache.rglob("*")):
        rel = f.relative_to(cache).parts
        if f.is_dir() and len(rel) == 1 and SHARD.fullmatch(rel[0]):
            continue
        m = _ENTRY.fullmatch(rel[-1]) if len(rel) == 2 else None
        if m is None or not f.is_file() or not m.group(2).startswith(rel[0]):
            found.append(f)
    return found


def remove_empty_shards(folder: Path) -> None:
    """Remove the empty shard folders directly under ``folder`` (a run stopped before its first answer)."""
    for shard in sorted(folder.iterdir()):
        if SHARD.fullmatch(shard.name) and shard.is_dir() and not shard.is_symlink():
            with contextlib.suppress(OSError):
                shard.rmdir()  # only when empty


__all__ = ["SHARD", "AnswerCache", "remove_empty_shards", "strangers"]
