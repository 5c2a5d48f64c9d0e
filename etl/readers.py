"""Streaming dump readers: decompression, line framing, and deterministic chunks of lines.

Shapes understood (detected from the first line):

- ``array``: the official dump, ``[`` then one entity per line ending in ``,`` then ``]``;
- ``lines``: one JSON record per line (JSON Lines; a one-line JSON file is the 1-line case);
- ``document``: any other single JSON document (a pretty-printed entity, ``{"entities": {...}}``);
  it is read whole and passed on as one line, which is cheap because such files are small.

Chunks are cut by byte size (at line ends) or line count, so the same input always gives the
same chunks; each carries its decompressed byte offset, and line numbers inside it are
relative (the consumer adds the lines of the chunks before).
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import mmap
import os
import shutil
import subprocess
import sys
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import orjson

from etl.io import InputError, PrefixedReader, ZstdFrames, read_head, sniff_compression

_HAVE_ISAL = importlib.util.find_spec("isal") is not None

BLOCK = 8 << 20
# The longest record (line) read: the largest Wikidata entities are a few MB, and a longer line
# would have to be held whole (and copied) where the memory promised is about 4 x chunk size.
MAX_RECORD_BYTES = 128 << 20
MAX_DOCUMENT_BYTES = MAX_RECORD_BYTES


def record_too_long(path: str, offset: int) -> InputError:
    """The error for a record longer than MAX_RECORD_BYTES starting at decompressed byte ``offset``."""
    return InputError(
        f"{path}: the record at decompressed byte {offset:,} is longer than {MAX_RECORD_BYTES >> 20} MB, the "
        "most one entity may take; a dump holds one entity per line, as the official dumps do "
        "(a whole dump on one line, as one JSON array, is not read): check the file"
    )


@dataclass
class Chunk:
    index: int  # 0-based chunk number
    offset: int  # decompressed byte offset of the first line
    data: bytes | None  # whole lines, newline separated; None when spooled to ``path`` or skipped
    path: str | None = None  # the spool ring slot holding the data: its first ``size`` bytes
    size: int = 0

    def view(self) -> bytes | mmap.mmap:
        """The chunk's bytes without a copy where possible: a ring slot is mapped read-only (close
        it when done; the slot is written over once the consumer asks for later chunks)."""
        if self.data is None and self.path is not None and self.size:
            with open(self.path, "rb") as fh:
                return mmap.mmap(fh.fileno(), self.size, access=mmap.ACCESS_READ)
        return self.load()

    def load(self) -> bytes:
        """The chunk's bytes (a copy of its ring slot when spooled)."""
        if self.data is not None:
            return self.data
        if self.path is None:
            raise ValueError(f"chunk {self.index} was skipped and has no data")
        with open(self.path, "rb") as fh:
            return fh.read(self.size)


class _ArrayBuffer:
    """A chunk's bytes in a bytearray (no spool): copied once into ``Chunk.data`` when cut. One
    bytearray serves every chunk of a run, so it is allocated and grown once."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.fill = 0

    def reserve(self, n: int) -> memoryview:
        """A writable view of the next ``n`` bytes (release it before the next reserve)."""
        need = self.fill + n
        if need > len(self.data):
            self.data.extend(bytes(max(need, 2 * len(self.data)) - len(self.data)))
        return memoryview(self.data)[self.fill : need]

    def finish(self, index: int, offset: int, size: int, keep: bool) -> Chunk:
        if not keep:
            return Chunk(index, offset, None, size=size)
        with memoryview(self.data) as view:  # one copy (a slice of the bytearray would be a second)
            return Chunk(index, offset, bytes(view[:size]), size=size)


class _SlotBuffer:
    """A chunk's bytes in a ring slot file, written through a mapping of the slot (decompressed
    straight into it: no copy, and no write() into tmpfs, which costs about three times a
    memcpy). ``maps`` holds each slot's mapping for the whole run (iter_chunks closes them);
    slots only grow."""

    def __init__(self, path: str, maps: dict[str, mmap.mmap], size_hint: int) -> None:
        self.path = path
        self.maps = maps
        self.size_hint = size_hint  # mapped at this size from the start: no remapping while filling
        self.fill = 0

    @property
    def data(self) -> mmap.mmap:
        return self.maps[self.path]

    def reserve(self, n: int) -> memoryview:
        """A writable view of the next ``n`` bytes (release it before the next reserve)."""
        need = self.fill + n
        mm = self.maps.get(self.path)
        if mm is None or need > len(mm):
            mm = self._grow(need)
        return memoryview(mm)[self.fill : need]

    def _grow(self, need: int) -> mmap.mmap:
        old = self.maps.pop(self.path, None)
        size = max(need, 2 * len(old) if old is not None else 0, self.size_hint, 1 << 20)
        size = -(-size // (1 << 20)) << 20
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            os.ftruncate(fd, max(size, os.fstat(fd).st_size))
            mm = mmap.mmap(fd, size)  # the same file: what was written is already there
        finally:
            os.close(fd)
        if old is not None:
            old.close()
        self.maps[self.path] = mm
        return mm

    def finish(self, index: int, offset: int, size: int, keep: bool) -> Chunk:
        return Chunk(index, offset, None, path=self.path if keep else None, size=size)


class HashingReader(io.RawIOBase):
    """Wraps a raw file: counts and (unless ``digest`` is false) hashes every byte a decompressor
    reads through it."""

    def __init__(self, raw: IO[bytes], digest: bool = True) -> None:
        super().__init__()
        self.raw = raw
        self.sha256 = hashlib.sha256() if digest else None
        self.pos = 0

    def read(self, n: int = -1) -> bytes:
        data = self.raw.read(n)
        if self.sha256 is not None:
            self.sha256.update(data)
        self.pos += len(data)
        return data

    def readinto(self, buf) -> int:  # type: ignore[override]
        n = self.raw.readinto(buf)
        if n and self.sha256 is not None:
            self.sha256.update(memoryview(buf)[:n])
        self.pos += n or 0
        return n or 0

    def readable(self) -> bool:
        return True

    def drain(self) -> None:
        while self.read(BLOCK):
            pass

    def close(self) -> None:
        self.raw.close()
        super().close()


# A damaged archive is decompressed again from the start to find the exact decompressed byte
# where it breaks, when that costs at most about this many compressed bytes of reading.
RECOUNT_MAX_RAW = 1 << 30


class DumpStream:
    """A decompressed byte stream over a dump, with the raw position and sha256 of what was read.

    The compression comes from the first bytes (gzip, bz2, zstd), not the name, for files and
    for stdin alike. gzip uses isal in-process; bz2 and gzip go through lbzip2 / pigz in a
    subprocess when they are on PATH (so decompression runs on its own cores, overlapping
    parsing); zstd uses zstandard. ``-`` reads stdin. ``digest=False`` skips the sha256 (for
    measurements).
    """

    def __init__(self, path: str | os.PathLike[str], *, use_tools: bool = True, tool_threads: int = 0,
                 digest: bool = True) -> None:
        self.path = str(path)
        self._proc: subprocess.Popen[bytes] | None = None
        self._feeder: threading.Thread | None = None
        self._feed_error: BaseException | None = None
        self._tool_fd: str | None = None
        self.tool: str | None = None
        self.stream: IO[bytes]
        if self.path == "-":
            self.size: int | None = None
            head = read_head(sys.stdin.buffer)
            self.kind = sniff_compression("-", head)
            self.raw = HashingReader(PrefixedReader(head, sys.stdin.buffer), digest)  # type: ignore[arg-type]
            self.stream = self._in_process() if self.kind else self.raw  # type: ignore[assignment]
            return
        p = Path(path)
        if not p.is_file():
            raise InputError(f"no such file: {p}; check the path")
        self.size = p.stat().st_size
        self.kind = sniff_compression(p)
        self.raw = HashingReader(open(p, "rb"), digest)  # noqa: SIM115 - closed by close()
        # isal inflates gzip about twice as fast as pigz's single inflate thread: pigz only without it.
        tool = None
        if use_tools and self.kind == "bz2":
            tool = "lbzip2"
        elif use_tools and self.kind == "gz" and not _HAVE_ISAL:
            tool = "pigz"
        if tool and shutil.which(tool):
            self.tool = tool
            # The tool reads the file itself. Feeding it through a pipe deadlocks: worker processes
            # forked later inherit the pipe's write end, so the tool never sees end of input.
            cmd = [tool, "-dc"] + ([f"-n{tool_threads}"] if tool == "lbzip2" and tool_threads else []) + [str(p)]
            self._proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE)
            if digest:
                self._feeder = threading.Thread(target=self._hash_input, daemon=True)
                self._feeder.start()
            self.stream = self._proc.stdout  # type: ignore[assignment]
        elif self.kind:
            self.stream = self._in_process()
        else:
            self.stream = self.raw  # type: ignore[assignment]

    def _in_process(self) -> IO[bytes]:
        """A decompressor in this process over ``self.raw``, for ``self.kind``."""
        if self.kind == "gz":
            if _HAVE_ISAL:
                from isal import igzip, isal_zlib

                # isal's own reader decompresses straight into the caller's buffer (readinto);
                # IGzipFile puts a BufferedReader in front of it, which costs a copy of every byte.
                reader = getattr(isal_zlib, "_GzipReader", None)
                if reader is not None:
                    return reader(self.raw, 1 << 20)  # type: ignore[no-any-return]
                return igzip.IGzipFile(fileobj=self.raw, mode="rb")  # type: ignore[arg-type,return-value]  # pragma: no cover
            import gzip  # pragma: no cover - isal is a core dependency

            return gzip.GzipFile(fileobj=self.raw, mode="rb")  # type: ignore[arg-type,return-value]  # pragma: no cover
        if self.kind == "bz2":
            import bz2

            return bz2.BZ2File(self.raw, "rb")  # type: ignore[arg-type,return-value]
        return ZstdFrames(self.raw)  # type: ignore[return-value]

    def _hash_input(self) -> None:
        """The sha256 of the compressed file, while the tool decompresses it (hashlib drops the GIL)."""
        try:
            self.raw.drain()
        except BaseException as exc:  # pragma: no cover - closed early; reported by finish()
            self._feed_error = exc

    def _tool_pos(self) -> int | None:
        """How far the tool has read its input (Linux /proc), for the progress bar and messages."""
        if self._proc is None or self._proc.poll() is not None:
            return None
        fd_dir = Path(f"/proc/{self._proc.pid}/fd")
        try:
            if self._tool_fd is None:
                target = os.path.realpath(self.path)
                self._tool_fd = next(fd.name for fd in fd_dir.iterdir() if os.path.realpath(fd) == target)
            info = (Path(f"/proc/{self._proc.pid}/fdinfo") / self._tool_fd).read_text()
            return int(info.split("pos:", 1)[1].split()[0])
        except (OSError, StopIteration, IndexError, ValueError):
            return None

    @property
    def raw_pos(self) -> int:
        """Compressed bytes consumed so far (by the tool, when one decompresses)."""
        if self._proc is not None:
            pos = self._tool_pos()
            return pos if pos is not None else self.raw.pos  # else what the hash thread has read
        return self.raw.pos

    def read(self, n: int, decompressed_pos: int) -> bytes:
        """Read up to n decompressed bytes; a damaged or truncated archive raises InputError."""
        return self._checked(self.stream.read, n, decompressed_pos)

    def readinto(self, view: memoryview, decompressed_pos: int) -> int:
        """Decompress into ``view``; the number of bytes written, 0 at the end of the input."""
        into = getattr(self.stream, "readinto", None)
        if into is None:  # a reader without readinto
            data = self.read(len(view), decompressed_pos)
            view[: len(data)] = data
            return len(data)
        return self._checked(into, view, decompressed_pos) or 0

    def _checked(self, fn, arg, decompressed_pos: int):
        try:
            got = fn(arg)
        except (EOFError, OSError, zlib.error, ValueError) as exc:
            raise self._truncated(decompressed_pos, exc) from None
        except Exception as exc:  # zstandard.ZstdError and friends
            if type(exc).__module__.startswith("zstandard"):
                raise self._truncated(decompressed_pos, exc) from None
            raise
        if not got and self._proc is not None:
            assert self._feeder is not None
            self._feeder.join()
            err = self._proc.stderr.read().decode(errors="replace").strip() if self._proc.stderr else ""
            if self._proc.wait() != 0:
                raise self._truncated(decompressed_pos, RuntimeError(f"{self.tool}: {err or 'failed'}"))
        return got

    def _truncated(self, pos: int, exc: BaseException) -> InputError:
        # The decompressed position is where the failing read began; the decoders drop what that
        # read had decompressed, so a file is decompressed again to find the exact byte.
        exact = None
        if self.path != "-" and self._proc is None and self.kind and self.raw.pos <= RECOUNT_MAX_RAW:
            exact = clean_length(self.path, self.kind)
        where = f"decompressed byte {exact}" if exact is not None else f"after decompressed byte {pos}"
        return InputError(
            f"{self.path}: the {self.kind or 'input'} archive is truncated or damaged at compressed byte "
            f"{self.raw_pos} ({where}): {exc}; re-download or re-compress the dump"
        )

    def finish(self) -> str:
        """Hash the rest of the raw file and return its sha256."""
        if self._feeder is not None:
            self._feeder.join()
            if self._feed_error is not None:
                raise self._feed_error
        if self.raw.sha256 is None:
            raise ValueError(f"{self.path} was opened with digest=False: there is no sha256")
        self.raw.drain()
        return self.raw.sha256.hexdigest()

    def close(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
        try:
            if self.stream is not self.raw:
                self.stream.close()
        finally:
            if self.path != "-":
                self.raw.close()


def clean_length(path: str | os.PathLike[str], kind: str, block: int = 16 << 10) -> int:
    """How many bytes decompress cleanly from the start of a damaged or truncated archive.

    Exact for an archive cut short; for one damaged inside, exact to within what one ``block`` of
    compressed input decompresses to. Members (gzip), streams (bz2) and frames (zstd) one after
    another are followed, as the readers do.
    """
    def fresh() -> object:
        if kind == "gz":
            if _HAVE_ISAL:
                from isal import isal_zlib

                return isal_zlib.decompressobj(31)
            return zlib.decompressobj(31)  # pragma: no cover - isal is a core dependency
        if kind == "bz2":
            import bz2

            return bz2.BZ2Decompressor()
        import zstandard

        return zstandard.ZstdDecompressor().decompressobj()

    total = 0
    dec: object = fresh()
    with open(path, "rb") as fh:
        while data := fh.read(block):
            while data:
                try:
                    total += len(dec.decompress(data))  # type: ignore[attr-defined]
                except Exception:  # the damage: what decompressed before it is the answer
                    return total
                if getattr(dec, "eof", False):
                    data = dec.unused_data  # type: ignore[attr-defined]
                    dec = fresh()
                else:
                    data = b""
    return total


def strip_record(line: bytes) -> bytes:
    if line.endswith(b"},"):  # the usual dump line: one copy, not three
        return line[:-1]
    return line.strip().rstrip(b",").rstrip()


def detect_shape(first_line: bytes) -> str:
    """'array', 'lines' or 'document' from the first line of the decompressed input."""
    head = first_line.strip()
    if head == b"[" or head == b"":
        return "array" if head == b"[" else "document"
    if head.startswith(b"{"):
        try:
            orjson.loads(strip_record(head))
            return "lines"
        except orjson.JSONDecodeError:
            return "document"
    return "document"


def iter_chunks(stream: DumpStream, chunk_lines: int | None = None, *, chunk_bytes: int | None = None,
                on_read=None, spool: str | os.PathLike[str] | None = None, skip=None,
                spool_slots: int | None = None) -> Iterator[Chunk]:
    """Cut the decompressed stream into chunks of whole lines.

    A chunk ends after ``chunk_lines`` lines or at the first line end at or past ``chunk_bytes``
    bytes, whichever comes first; both depend only on the input, so chunks are reproducible.
    This loop runs in the one process that feeds all workers, so it decompresses straight into
    the buffer that holds the chunk: a bytearray that becomes ``data``, or, with ``spool`` (a
    folder), one of ``spool_slots`` ring files that a worker maps (see Chunk.view). Only the bytes
    after a cut are copied, into the next chunk's buffer; the read that crosses ``chunk_bytes``
    stops ``READ_PAST`` bytes beyond it, so that is usually the rest of one line.
    ``skip(index) -> bool`` marks chunks whose bytes are not needed (finished in an earlier run).
    ``on_read(decompressed_bytes, raw_bytes)`` is called after every read. For the array shape a
    missing closing ``]`` means the input was cut short.

    Chunk ``i`` overwrites the slot of chunk ``i - spool_slots``, so the consumer must have
    finished with that chunk before it asks for chunk ``i``. A consumer that keeps at most ``w``
    chunks unfinished, as ``etl.runner.ShardRunner`` with ``window=w`` does, needs
    ``spool_slots >= w + 1``.
    """
    if chunk_lines is None and chunk_bytes is None:
        raise InputError("give chunk_lines or chunk_bytes")
    if spool is not None and (spool_slots or 0) < 2:
        raise ValueError("a spool needs spool_slots (the ring size) of at least 2")
    if (chunk_lines is not None and chunk_lines < 1) or (chunk_bytes is not None and chunk_bytes < 1):
        raise InputError(f"chunk sizes must be at least 1, got {chunk_lines} lines, {chunk_bytes} bytes")

    maps: dict[str, mmap.mmap] = {}
    try:
        yield from _cut_chunks(stream, chunk_lines, chunk_bytes, on_read, spool, skip, spool_slots, maps)
    finally:
        for mm in maps.values():
            mm.close()


# The read that crosses a chunk's byte target stops this far past it (see iter_chunks).
READ_PAST = 256 << 10


def _cut_chunks(stream: DumpStream, chunk_lines: int | None, chunk_bytes: int | None, on_read,
                spool: str | os.PathLike[str] | None, skip, spool_slots: int | None,
                maps: dict[str, mmap.mmap]) -> Iterator[Chunk]:
    slot_size = (chunk_bytes or 0) + 2 * READ_PAST

    array = _ArrayBuffer() if spool is None else None

    def new_buffer(i: int) -> _ArrayBuffer | _SlotBuffer:
        if array is not None:
            array.fill = 0
            return array
        assert spool_slots is not None
        return _SlotBuffer(os.path.join(spool, f"slot-{i % spool_slots:04d}.chunk"), maps, slot_size)

    pos = 0
    index = 0
    chunk_start = 0
    buf = new_buffer(0)
    scanned = 0  # buf.data[:scanned] holds no cut
    lines = 0  # newlines in buf.data[:scanned] (only counted when chunk_lines is set)
    shape: str | None = None
    last_nonblank = b""
    open_line = 0  # where the line that is not finished yet starts (decompressed offset)
    eof = False
    while not eof:
        want = BLOCK
        if chunk_bytes is not None and buf.fill < chunk_bytes:
            want = min(BLOCK, chunk_bytes - buf.fill + READ_PAST)
        with buf.reserve(want) as view:
            n = stream.readinto(view, pos)
        eof = n == 0
        pos += n
        buf.fill += n
        if on_read is not None:
            on_read(pos, stream.raw_pos)
        if shape is None:
            if not buf.fill:
                return  # empty input: no chunks
            nl = buf.data.find(b"\n", 0, buf.fill)
            if nl < 0 and not eof:
                if buf.fill > MAX_RECORD_BYTES:
                    raise record_too_long(stream.path, 0)
                continue  # a first line longer than a read
            shape = detect_shape(bytes(buf.data[: nl if nl >= 0 else buf.fill]))
            if shape == "array" and nl >= 0:
                nl2 = buf.data.find(b"\n", nl + 1, buf.fill)
                if nl2 >= 0 and bytes(buf.data[nl + 1 : nl2]).strip() == b"{":  # json.dump(..., indent=2)
                    raise InputError(f"{stream.path}: a JSON array written across lines (line 2 is a lone '{{'), "
                                     "not a dump with one entity per line; rewrite it one entity per line "
                                     "(for example with jq -c '.[]')")
            if shape == "document":
                yield from _document_chunk(stream, bytes(buf.data[: buf.fill]), pos, on_read, eof)
                return
        if n:
            last_nonblank = _last_nonblank_in(buf.data, buf.fill - n, buf.fill) or last_nonblank
            # The line open before this read, where it ends in it, or still open: not longer than a
            # record may be (two finds per read, as reads are much shorter than the limit).
            first = buf.data.find(b"\n", buf.fill - n, buf.fill)
            open_len = (first if first >= 0 else buf.fill) - (open_line - chunk_start)
            if open_len > MAX_RECORD_BYTES:
                raise record_too_long(stream.path, open_line)
            if first >= 0:
                open_line = chunk_start + buf.data.rfind(b"\n", buf.fill - n, buf.fill) + 1
        while scanned < buf.fill:  # every chunk that the buffer now holds
            cut, scanned, lines = _find_cut(buf.data, scanned, buf.fill, lines, chunk_lines, chunk_bytes)
            if cut < 0:
                break
            yield buf.finish(index, chunk_start, cut + 1, keep=skip is None or not skip(index))
            # The consumer asked for the next chunk, so its slot is free (see the ring rule above).
            rest = buf.data[cut + 1 : buf.fill]  # a copy: the next buffer may be this one
            nxt = new_buffer(index + 1)
            if rest:
                with nxt.reserve(len(rest)) as view:
                    view[:] = rest
                nxt.fill = len(rest)
            index += 1
            chunk_start += cut + 1
            buf, scanned, lines = nxt, 0, 0
    if buf.fill:
        yield buf.finish(index, chunk_start, buf.fill, keep=skip is None or not skip(index))
    if shape == "array" and last_nonblank != b"]":
        raise InputError(
            f"{stream.path}: the dump ends at decompressed byte {pos} without the closing ']' "
            "(the file is truncated, or text follows the array); re-download it"
        )


def _find_cut(data: bytearray | mmap.mmap, scanned: int, fill: int, lines: int, chunk_lines: int | None,
              chunk_bytes: int | None) -> tuple[int, int, int]:
    """(the index of the newline that ends the chunk in data[:fill] or -1, bytes scanned, newlines
    in them): the ``chunk_lines``-th newline or the first at or past byte ``chunk_bytes - 1``."""
    cut = -1
    if chunk_bytes is not None and fill >= chunk_bytes:
        cut = data.find(b"\n", max(scanned, chunk_bytes - 1), fill)
    if chunk_lines is not None:
        end = cut + 1 if cut >= 0 else fill
        p = scanned - 1
        while lines < chunk_lines:
            p = data.find(b"\n", p + 1, end)
            if p < 0:
                break
            lines += 1
        if lines == chunk_lines:
            return p, p + 1, lines
    return cut, (cut + 1 if cut >= 0 else fill), lines


def _last_nonblank_in(data: bytearray | mmap.mmap, start: int, stop: int) -> bytes:
    """The last non-whitespace byte of data[start:stop], or b"" (walks back from the end)."""
    i = stop - 1
    while i >= start and data[i] in b" \t\r\n":
        i -= 1
        if stop - i > 256:  # long blank run: let C do it
            return bytes(data[start:stop]).rstrip()[-1:]
    return bytes(data[i : i + 1]) if i >= start else b""


def _document_chunk(stream: DumpStream, buf: bytes, pos: int, on_read, eof: bool) -> Iterator[Chunk]:
    parts = [buf]
    total = len(buf)
    while not eof and (block := stream.read(BLOCK, pos)):
        pos += len(block)
        total += len(block)
        if total > MAX_DOCUMENT_BYTES:
            raise InputError(
                f"{stream.path}: not a dump (no '[' on the first line) and larger than {MAX_DOCUMENT_BYTES >> 20} MB; "
                "convert it to the official one-entity-per-line format"
            )
        parts.append(block)
        if on_read is not None:
            on_read(pos, stream.raw_pos)
    data = b"".join(parts)
    try:
        record = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputError(
            f"{stream.path}: neither a dump (first line '[') nor JSON lines nor one JSON document ({exc}); "
            "check the file"
        ) from None
    data = orjson.dumps(record) + b"\n"
    yield Chunk(0, 0, data, size=len(data))


def count_lines(data: bytes) -> int:
    """Lines in a chunk (a last line without a newline counts)."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def iter_records(chunk: Chunk, lines: list[int] | None = None) -> Iterator[tuple[int, int, bytes]]:
    """(line number within the chunk from 1, byte offset in the stream, record bytes) for each
    non-framing line. Line numbers are relative because chunk cutting does not count lines;
    callers add the lines of earlier chunks. When given, ``lines[0]`` is set to the chunk's line
    count at the end (saves a second pass over the bytes)."""
    line_no = 1
    offset = chunk.offset
    data = chunk.load()
    start = 0
    end = len(data)
    while start < end:
        nl = data.find(b"\n", start)
        if nl < 0:
            nl = end
        rec = record_of_line(data, start, nl)
        if rec is not None:
            yield line_no, offset + start, rec
        line_no += 1
        start = nl + 1
    if lines is not None:
        lines[0] = line_no - 1


def record_of_line(data: bytes, start: int, stop: int) -> bytes | None:
    """The record on the line data[start:stop] (no newline), or None for framing and blank lines."""
    if data.endswith(b"},", start, stop):  # the usual dump line: cut the comma, copy once
        return data[start : stop - 1]
    rec = strip_record(data[start:stop])
    if rec and rec != b"[" and rec != b"]":
        return rec
    return None
