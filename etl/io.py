"""Streaming readers and crash-safe writers shared by every step."""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import orjson

COMPRESSED_SUFFIXES = (".gz", ".bz2", ".zst")


class InputError(Exception):
    """Bad input; the message names the file and says what to do."""


def compression_of(path: str | os.PathLike[str]) -> str | None:
    """Return 'gz', 'bz2', 'zst' or None from the file name."""
    name = str(path)
    for suffix in COMPRESSED_SUFFIXES:
        if name.endswith(suffix):
            return suffix[1:]
    return None


def open_binary(path: str | os.PathLike[str]) -> IO[bytes]:
    """Open a possibly compressed file (or '-' for stdin) as a decompressed byte stream.

    The fastest decoder available is used: isal for gzip, zstandard for zstd; bz2 comes
    from the standard library (the ingest pipes through lbzip2 itself when present).
    """
    if str(path) == "-":
        return sys.stdin.buffer
    p = Path(path)
    if not p.exists():
        raise InputError(f"no such file: {p}; check the path")
    kind = compression_of(p)
    if kind == "gz":
        try:
            from isal import igzip

            return igzip.open(p, "rb")  # type: ignore[return-value]
        except ImportError:  # pragma: no cover - isal is a core dependency
            import gzip

            return gzip.open(p, "rb")
    if kind == "bz2":
        import bz2

        return bz2.open(p, "rb")
    if kind == "zst":
        import zstandard

        fh = open(p, "rb")  # noqa: SIM115 - closed with the reader
        return zstandard.ZstdDecompressor().stream_reader(fh, closefd=True)  # type: ignore[return-value]
    return open(p, "rb")


def read_json(path: str | os.PathLike[str], what: str = "JSON file") -> Any:
    """Load a whole (possibly compressed) JSON file, naming the file and position on errors."""
    try:
        with open_binary(path) as fh:
            data = fh.read()
    except InputError:
        raise
    except Exception as exc:
        if isinstance(exc, OSError) and exc.filename is not None:  # a file-system error, not a decoder's
            raise
        # truncated or corrupt archives surface as EOFError, BadGzipFile, OSError or zstandard.ZstdError
        raise InputError(
            f"{path}: cannot decompress it ({exc}); the file is corrupt or ends early; "
            "download it again or compress it again"
        ) from None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"{path}: not a valid {what} ({exc}); fix or re-download the file") from None


def dumps_json(obj: Any, *, indent: bool = False) -> bytes:
    """Serialise deterministically: sorted keys, UTF-8, trailing newline."""
    opts = orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE | orjson.OPT_SERIALIZE_NUMPY
    if indent:
        opts |= orjson.OPT_INDENT_2
    return orjson.dumps(obj, option=opts)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it into place only if the block succeeds.

    A crash leaves the previous file (or no file) in place, never a partial one.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    # mkstemp creates 0600 files; outputs should get the ordinary umask-derived mode.
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp_path, 0o666 & ~umask)
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())


def write_json_atomic(path: str | os.PathLike[str], obj: Any, *, indent: bool = False) -> None:
    """Write JSON deterministically and atomically."""
    write_bytes_atomic(path, dumps_json(obj, indent=indent))


def sha256_file(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
