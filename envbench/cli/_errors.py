"""Operating-system errors of a command (unwritable folder, full disk, a file where a folder is
needed) as one ``Error:`` line naming the path, like the library's own errors, never a traceback.

``envbench.cli.LazyGroup.invoke`` applies this to every command."""

from __future__ import annotations

import errno
from collections.abc import Callable
from typing import Any, TypeVar

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


def describe_os_error(exc: OSError) -> str:
    """``PATH: reason; what to do`` for an OSError."""
    where = exc.filename2 if exc.filename2 is not None else exc.filename
    reason = exc.strerror or str(exc)
    fix = _FIX.get(exc.errno or 0, "check the path and its permissions")
    return f"{where}: {reason}; {fix}" if where is not None else f"{reason}; {fix}"
