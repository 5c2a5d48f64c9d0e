"""Streaming readers and crash-safe writers shared by every step."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import logging
import os
import secrets
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import orjson

COMPRESSED_SUFFIXES = (".gz", ".bz2", ".zst")
# The first bytes of each compressed format. Reading goes by these, not by the file name: a gzip
# file named .bz2 is read as gzip (with a warning), a plain file named .gz as plain text.
MAGIC = {"gz": b"\x1f\x8b", "bz2": b"BZh", "zst": b"\x28\xb5\x2f\xfd"}
# Formats recognised only to name them in an error: no reader here.
OTHER_MAGIC = {"xz": b"\xfd7zXZ\x00", "zip": b"PK\x03\x04", "7z": b"7z\xbc\xaf\x27\x1c"}
SNIFF_BYTES = 6

log = logging.getLogger("etl.io")


class InputError(Exception):
    """Bad input; the message names the file and says what to do."""


def shorten(text: str, limit: int = 40) -> str:
    """``text`` cut to ``limit`` characters with "..." (a message quotes what a file or the user gave,
    not all of it)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def listed(names: Sequence[str], limit: int = 3) -> str:
    """The first ``limit`` of ``names`` for a message, and how many more: "a.json, b.json, c.json and 2 more"."""
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def compression_of(path: str | os.PathLike[str]) -> str | None:
    """Return 'gz', 'bz2', 'zst' or None from the file name (for writing; reading sniffs the bytes)."""
    name = str(path)
    for suffix in COMPRESSED_SUFFIXES:
        if name.endswith(suffix):
            return suffix[1:]
    return None


def compression_of_bytes(head: bytes) -> str | None:
    """'gz', 'bz2', 'zst' from a file's first bytes, or None for anything else."""
    for kind, magic in MAGIC.items():
        if head.startswith(magic):
            return kind
    return None


def sniff_compression(path: str | os.PathLike[str], head: bytes | None = None) -> str | None:
    """The compression of a file (or of ``head``, its first bytes) by its magic bytes.

    When the magic disagrees with the name, the magic wins and a warning says so. Formats that
    can be recognised but not read (xz, zip, 7z) are an error that names them.
    """
    if head is None:
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
    kind = compression_of_bytes(head)
    for other, magic in OTHER_MAGIC.items():
        if head.startswith(magic):
            raise InputError(f"{path}: the file is {other}-compressed (by its first bytes), which is not read here; "
                             "decompress it, or recompress it as .gz, .bz2 or .zst")
    named = compression_of(path)
    if kind != named and str(path) != "-" and head:  # an empty file is empty whatever its name
        actual = f"{kind}-compressed" if kind else "not compressed"
        said = f"ends in .{named}" if named else "has no compression suffix"
        log.warning("%s is %s (by its first bytes) although its name %s; reading it as %s", path, actual, said,
                    kind or "plain bytes")
    return kind


class PrefixedReader(io.RawIOBase):
    """``head`` (bytes already read from ``raw``, e.g. to sniff them) followed by the rest of ``raw``."""

    def __init__(self, head: bytes, raw: IO[bytes]) -> None:
        super().__init__()
        self._head = memoryview(head)
        self.raw = raw

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:  # type: ignore[override]
        if self._head:
            n = min(len(buf), len(self._head))
            buf[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        into = getattr(self.raw, "readinto", None)
        if into is not None:
            return into(buf) or 0
        data = self.raw.read(len(buf))
        buf[: len(data)] = data
        return len(data)

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            rest = self.raw.read()
            out, self._head = bytes(self._head) + rest, memoryview(b"")
            return out
        return super().read(n) or b""


def read_head(raw: IO[bytes], n: int = SNIFF_BYTES) -> bytes:
    """Up to ``n`` first bytes of a stream (a pipe may return fewer per read)."""
    head = b""
    while len(head) < n:
        got = raw.read(n - len(head))
        if not got:
            break
        head += got
    return head


def require_file(path: str | os.PathLike[str], what: str = "file") -> Path:
    """``path`` when it is a regular file to read; else one line saying what it is: missing (``no such
    WHAT``), a dangling link, a folder, or not a regular file (a pipe, socket or device: /dev/zero)."""
    p = Path(path)
    if not p.exists():
        if p.is_symlink():  # exists() follows the link: a loop or a missing target is no "no such file"
            raise InputError(f"{p}: a symbolic link that leads to no file (its target is missing, or it loops); "
                             "point it at the file, or give the file itself")
        raise InputError(f"no such {what}: {p}; check the path")
    if p.is_dir():
        raise InputError(f"{p} is a folder; give a file")
    if not p.is_file():
        # a named pipe would block until something writes to it, and is opened twice (its first bytes tell
        # the compression), which loses them; a device never ends (/dev/zero)
        raise InputError(f"{p}: not a regular file (a pipe, socket or device); save what it gives to a file, "
                         "and give that")
    return p


def open_binary(path: str | os.PathLike[str]) -> IO[bytes]:
    """Open a possibly compressed file (or '-' for stdin) as a decompressed byte stream.

    The format comes from the first bytes, not the name (see :func:`sniff_compression`). The
    fastest decoder available is used: isal for gzip, zstandard for zstd; bz2 comes from the
    standard library (the ingest pipes through lbzip2 itself when present).
    """
    if str(path) == "-":
        head = read_head(sys.stdin.buffer)
        kind = sniff_compression("-", head)
        raw = io.BufferedReader(PrefixedReader(head, sys.stdin.buffer))
        return raw if kind is None else _decoder(kind, raw)  # type: ignore[return-value]
    p = require_file(path)
    kind = sniff_compression(p)
    return open(p, "rb") if kind is None else _decoder(kind, p)


def _decoder(kind: str, source: Path | IO[bytes]) -> IO[bytes]:
    """A decompressing reader over a file path (which it opens and closes) or a stream."""
    if kind == "gz":
        try:
            from isal import igzip

            opener, reader = igzip.open, igzip.IGzipFile
        except ImportError:  # pragma: no cover - isal is a core dependency
            import gzip

            opener, reader = gzip.open, gzip.GzipFile  # type: ignore[assignment]
        if isinstance(source, Path):
            return opener(source, "rb")  # type: ignore[return-value]
        return reader(fileobj=source, mode="rb")  # type: ignore[return-value]
    if kind == "bz2":
        import bz2

        return bz2.open(source, "rb")  # type: ignore[return-value]
    fh = open(source, "rb") if isinstance(source, Path) else source  # noqa: SIM115 - closed with the reader
    return io.BufferedReader(ZstdFrames(fh, close_raw=isinstance(source, Path)))  # type: ignore[return-value]


class ZstdFrames(io.RawIOBase):
    """The decompressed bytes of the zstd frames of ``raw``, one frame after another.

    zstandard's ``stream_reader`` ends quietly where a file cut short ends, so a truncated .zst read
    as an empty or short document; here a frame cut short raises ``EOFError("zstd frame ends early")``,
    as gzip and bz2 do, and damaged bytes raise ``zstandard.ZstdError``. ``raw`` is closed with this
    reader only when ``close_raw``.
    """

    def __init__(self, raw: IO[bytes], *, close_raw: bool = False) -> None:
        super().__init__()
        import zstandard

        self._zstd = zstandard
        self.raw = raw
        self._close_raw = close_raw
        self._dobj = zstandard.ZstdDecompressor().decompressobj()
        self._buf = b""
        self._in_frame = False

    def readable(self) -> bool:
        return True

    def read(self, n: int | None = -1) -> bytes:
        if n is None or n < 0:
            return b"".join(iter(lambda: self.read(1 << 20), b""))
        while len(self._buf) < n:
            block = self.raw.read(1 << 20)
            if not block:
                if self._in_frame:
                    raise EOFError("zstd frame ends early")
                break
            while block:
                self._in_frame = True
                self._buf += self._dobj.decompress(block)
                if self._dobj.eof:
                    block = self._dobj.unused_data
                    self._dobj = self._zstd.ZstdDecompressor().decompressobj()
                    self._in_frame = False
                else:
                    block = b""
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def readinto(self, buf) -> int:  # type: ignore[override]
        data = self.read(len(buf))
        buf[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed and self._close_raw:
            self.raw.close()
        super().close()


def read_json(path: str | os.PathLike[str], what: str = "JSON file") -> Any:
    """Load a whole (possibly compressed) JSON file, naming the file and position on errors."""
    try:
        with open_binary(path) as fh:
            data = _read_capped(fh, path)
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
        kind = binary_kind(data)
        if kind is not None:  # "not UTF-8 text" would send the user to re-save a file that was never text
            raise InputError(f"{path}: a {kind}, not a {what}; pass the {what} (JSON)") from None
        bad = not_utf8(data)
        if bad is not None:
            where = "decompressed byte" if _is_compressed(path) else "byte"
            raise InputError(f"{path}: not UTF-8 text: {where} {bad[0]} (0x{bad[1]:02X}, line {bad[2]}) is not valid "
                             f"UTF-8; save the {what} as UTF-8, or re-download it") from None
        raise InputError(f"{path}: not a valid {what} ({exc}); fix or re-download the file") from None


# The most (decompressed) bytes read_json reads whole. DocRED's largest file, its 101,873 distantly
# supervised training documents, is under 1 GB, and parsing takes several times a file's size in objects.
# orjson copies its input, so a file of nothing but spaces still needs twice its size: a gzip bomb of a few
# hundred KB that decompresses to 300 MB peaked at 637 MB, and one that expands without end is stopped here,
# with one line, at about twice this cap, not by the kernel's OOM killer.
MAX_JSON_BYTES = 2 << 30
READ_CHUNK = 1 << 24


def _read_capped(fh: IO[bytes], path: str | os.PathLike[str]) -> bytearray:
    """All of ``fh``, at most ``MAX_JSON_BYTES``: read in chunks into one buffer that grows in place, so that
    a compression bomb is stopped at the cap (``fh.read()`` would decompress it whole, then join its chunks)."""
    data = bytearray()
    while chunk := fh.read(min(READ_CHUNK, MAX_JSON_BYTES + 1 - len(data))):
        data += chunk
        if len(data) > MAX_JSON_BYTES:
            where = "decompresses to" if _is_compressed(path) else "holds"
            raise InputError(f"{path}: {where} more than {MAX_JSON_BYTES:,} bytes, the most a JSON file is read "
                             "whole (etl.io.MAX_JSON_BYTES); check that it is the file you meant (a compression "
                             "bomb stops here), or split it into several files")
    return data


# files that are not text at all, named by kind when read as JSON (compressed ones are OTHER_MAGIC's)
BINARY_MAGIC = ((b"PAR1", "Parquet file"), (b"SQLite format 3\x00", "SQLite database"),
          (b"\x89PNG", "PNG image"), (b"%PDF", "PDF file"))


def binary_kind(data: bytes) -> str | None:
    """What a binary file is, by its first bytes ("Parquet file", "DuckDB database"), or None."""
    for magic, kind in BINARY_MAGIC:
        if data.startswith(magic):
            return kind
    if data[8:12] == b"DUCK":
        return "DuckDB database"
    return None


def not_utf8(data: bytes) -> tuple[int, int, int] | None:
    """(byte offset, byte value, line from 1) of the first byte that is not valid UTF-8, or None."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start, data[exc.start], data.count(b"\n", 0, exc.start) + 1
    return None


def _is_compressed(path: str | os.PathLike[str]) -> bool:
    if str(path) == "-":
        return False
    try:
        return sniff_compression_quiet(path) is not None
    except OSError:
        return False


def sniff_compression_quiet(path: str | os.PathLike[str]) -> str | None:
    """The compression by magic bytes, without warnings or errors (None when not compressed)."""
    with open(path, "rb") as fh:
        return compression_of_bytes(fh.read(SNIFF_BYTES))


def dumps_json(obj: Any, *, indent: bool = False) -> bytes:
    """Serialise deterministically: sorted keys, UTF-8, trailing newline."""
    opts = orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE | orjson.OPT_SERIALIZE_NUMPY
    if indent:
        opts |= orjson.OPT_INDENT_2
    return orjson.dumps(obj, option=opts)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], tmp_dir: str | os.PathLike[str] | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` (or in ``tmp_dir``, a folder on the same file system);
    rename it into place only if the block succeeds.

    A crash leaves the previous file (or no file) in place, never a partial one. A SIGKILL leaves the
    temporary file where it was made: a step makes it in its marked staging folder (``tmp_dir``), which
    its next run removes (etl.step), so that nothing of it stays beside its outputs.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tmp_dir) if tmp_dir is not None else target.parent
    made: Path | None = None
    try:
        while True:
            # the name is recorded before the file is made (O_EXCL): a signal (SIGTERM, Ctrl-C) between
            # mkstemp's making it and the try it returned into had left the temporary file behind
            made = folder / f".{target.name}.{secrets.token_hex(4)}.tmp"
            try:  # the ordinary umask-derived mode (mkstemp's was 0600)
                os.close(os.open(made, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
                break
            except FileExistsError:  # another file has the name: not ours to remove
                made = None
        yield made
        os.replace(made, target)
    finally:
        if made is not None and made.exists():
            made.unlink()


def plain_file_name(name: object) -> bool:
    """Whether ``name``, read from a manifest or a lock, names a file of that folder itself: a non-empty
    string with no folder part and not "." or ".." ("../../../etc/passwd" is no output of a step)."""
    return isinstance(name, str) and bool(name) and Path(name).name == name and name not in (".", "..")


def require_path(value: str | os.PathLike[str], option: str, what: str, example: str) -> None:
    """Refuse an empty path option: ``Path("")`` is the current folder, so an empty --out would write
    among the user's files. Example: ``require_path("", "--out", "the demo folder", "--out runs/demo")``
    raises "--out is empty; give the demo folder, e.g. --out runs/demo"."""
    if not str(value).strip():
        raise InputError(f"{option} is empty; give {what}, e.g. {example}")


def require_text(value: str, what: str) -> str:
    """``value`` when it is text; else one line naming it. A command-line argument that is not UTF-8 (a
    Latin-1 terminal typing "café") reaches Python as a string with lone surrogates, which no UTF-8 reader
    (DuckDB, orjson) takes."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raw = value.encode("utf-8", "surrogateescape")
        shown = shorten(repr(raw)[1:])  # the bytes as Python writes them, without the b: 'caf\xe9'
        byte = raw[len(value[:exc.start].encode("utf-8", "surrogateescape"))]
        raise InputError(f"{what} {shown} is not UTF-8 text (byte 0x{byte:02X} at character {exc.start}); the "
                         "terminal sent another encoding: set it to UTF-8 (e.g. LANG=C.UTF-8) and type it again") \
            from None
    return value


def is_no_space(exc: BaseException) -> bool:
    """Whether an error means the disk is full (an OSError, or a library's own error that says so)."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    text = str(exc).lower()
    return "no space left on device" in text or "[errno 28]" in text or "disk quota exceeded" in text


def is_too_large(exc: BaseException) -> bool:
    """Whether an error is a file that grew past the file-size limit (``ulimit -f``; Python ignores
    SIGXFSZ, so the write fails with EFBIG), in Python's words or a library's (DuckDB's, pyarrow's)."""
    if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
        return True
    return "file too large" in str(exc).lower()


def file_size_limit() -> str:
    """The file-size limit as the shell sets it: ``ulimit -f 64`` (in 1024-byte blocks), for a message."""
    import resource

    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return f"ulimit -f {limit // 1024}" if limit != resource.RLIM_INFINITY else "ulimit -f"


def too_large_message(where: str | os.PathLike[str], what: str = "", rerun: str = ", then rerun") -> str:
    """``WHERE: a file grew past the file-size limit (ulimit -f 64) while writing[ WHAT]; raise the limit
    ...``: what every command says when ``ulimit -f`` stops a write."""
    return (f"{where}: a file grew past the file-size limit ({file_size_limit()}) while writing{what}; raise the "
            f"limit (ulimit -f unlimited){rerun}")


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes, tmp_dir: str | os.PathLike[str] | None = None) -> None:
    with atomic_path(path, tmp_dir) as tmp:
        try:
            with open(tmp, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:  # a write() error carries no file name: give it the target's
            named = exc if exc.filename is not None else OSError(exc.errno, exc.strerror or str(exc), str(path))
            named.needed_bytes = len(data)  # type: ignore[attr-defined] - for the full-disk message
            if named is exc:
                raise
            raise named from None


def write_json_atomic(path: str | os.PathLike[str], obj: Any, *, indent: bool = False,
                      tmp_dir: str | os.PathLike[str] | None = None) -> None:
    """Write JSON deterministically and atomically (the temporary file in ``tmp_dir``: :func:`atomic_path`)."""
    write_bytes_atomic(path, dumps_json(obj, indent=indent), tmp_dir)


def sha256_file(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
