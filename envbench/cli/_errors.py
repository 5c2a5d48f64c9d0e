"""Operating-system errors of a command (unwritable folder, full disk, a file where a folder is
needed) as one ``Error:`` line naming the path, like the library's own errors, never a traceback.

``envbench.cli.LazyGroup.invoke`` applies this to every command. A full disk is recognised in
other libraries' errors too (DuckDB's IOException says "No space left on device" in its text).
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from envbench.core.errors import first_line
from etl.io import is_no_space, is_too_large, too_large_message

F = TypeVar("F", bound=Callable[..., Any])

_FIX = {
    errno.ENOENT: "check that the folder exists or can be created",
    errno.EACCES: "choose a location you can write to (or fix its permissions)",
    errno.EPERM: "choose a location you can write to (or fix its permissions)",
    errno.EROFS: "the file system is read-only; choose another location",
    errno.ENOSPC: "the disk is full; free some space or write elsewhere",
    errno.EISDIR: "a folder has that name; choose another path",
    errno.ENOTDIR: "a file stands where a folder is needed; choose another path",
    errno.EEXIST: "a file stands where a folder is needed; choose another path",
}


def free_space(path: str | os.PathLike[str] | None) -> int | None:
    """Free bytes on the file system of ``path`` (its nearest existing folder), or None."""
    p = Path(path) if path is not None else Path.cwd()
    while not p.exists() and p != p.parent:
        p = p.parent
    try:
        return shutil.disk_usage(p).free
    except OSError:
        return None


def _megabytes(n: int) -> str:
    """A size in KB, MB or GB (decimal units), one decimal."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n / 1e3:,.1f} KB"


def describe_no_space(exc: BaseException) -> str:
    """``PATH: no space left on the device (N MB free there); ...`` for a full disk."""
    where = None
    if isinstance(exc, OSError):
        where = exc.filename2 if exc.filename2 is not None else exc.filename
    free = free_space(where)
    needed = getattr(exc, "needed_bytes", None)  # set by etl.io's atomic writers
    left = f" ({_megabytes(free)} free there" if free is not None else ""
    if left and isinstance(needed, int):
        left += f", {_megabytes(needed)} needed"
    left += ")" if left else ""
    fix = "free some space there, or write elsewhere (an --out on another disk)"
    if where is not None:
        return f"{where}: no space left on the device{left}; {fix}"
    detail = first_line(exc, "no space left on the device")
    return f"no space left on the device{left}: {detail}; {fix}"


def describe_os_error(exc: OSError) -> str:
    """``PATH: reason; what to do`` for an OSError."""
    if is_no_space(exc):
        return describe_no_space(exc)
    where = exc.filename2 if exc.filename2 is not None else exc.filename
    if is_too_large(exc):  # said as ingest-dump says it, never "check the path and its permissions"
        return too_large_message(where if where is not None else "an output file")
    reason = exc.strerror or str(exc)
    fix = _FIX.get(exc.errno or 0, "check the path and its permissions")
    return f"{where}: {reason}; {fix}" if where is not None else f"{reason}; {fix}"
