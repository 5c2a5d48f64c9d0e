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

from etl.io import InputError, compression_of

_HAVE_ISAL = importlib.util.find_spec("isal") is not None

BLOCK = 8 << 20
MAX_DOCUMENT_BYTES = 1 << 30


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


class _JoinSink:
    def __init__(self) -> None:
        self.parts: list[bytes | memoryview] = []

    def add(self, piece: memoryview) -> None:
        self.parts.append(piece)  # the view keeps its block alive; join copies once

    def finish(self, index: int, offset: int, size: int) -> Chunk:
        return Chunk(index, offset, b"".join(self.parts), size=size)


class _SlotSink:
    """Writes a chunk into a ring slot through a mapping of the slot file: a memcpy per block
    instead of a write() into tmpfs, which costs about three times as much. ``maps`` holds each
    slot's mapping for the whole run (iter_chunks closes them); slots only grow."""

    def __init__(self, path: str, maps: dict[str, mmap.mmap]) -> None:
        self.path = path
        self.maps = maps
        self.pos = 0

    def add(self, piece: memoryview) -> None:
        end = self.pos + len(piece)
        mm = self.maps.get(self.path)
        if mm is None or end > len(mm):
            mm = self._grow(end)
        mm[self.pos : end] = piece
        self.pos = end

    def _grow(self, need: int) -> mmap.mmap:
        old = self.maps.pop(self.path, None)
        size = max(need, 2 * len(old) if old is not None else 0, 1 << 20)
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

    def finish(self, index: int, offset: int, size: int) -> Chunk:
        return Chunk(index, offset, None, path=self.path, size=size)


class _NullSink:
    def add(self, piece: memoryview) -> None:
        pass

    def finish(self, index: int, offset: int, size: int) -> Chunk:
        return Chunk(index, offset, None, size=size)


class HashingReader(io.RawIOBase):
    """Wraps a raw file: counts and hashes every byte a decompressor reads through it."""

    def __init__(self, raw: IO[bytes]) -> None:
        super().__init__()
        self.raw = raw
        self.sha256 = hashlib.sha256()
        self.pos = 0

    def read(self, n: int = -1) -> bytes:
        data = self.raw.read(n)
        self.sha256.update(data)
        self.pos += len(data)
        return data

    def readinto(self, buf) -> int:  # type: ignore[override]
        n = self.raw.readinto(buf)
        if n:
            view = memoryview(buf)[:n]
            self.sha256.update(view)
            self.pos += n
        return n or 0

    def readable(self) -> bool:
        return True

    def drain(self) -> None:
        while self.read(BLOCK):
            pass

    def close(self) -> None:
        self.raw.close()
        super().close()


class DumpStream:
    """A decompressed byte stream over a dump, with the raw position and sha256 of what was read.

    gzip uses isal in-process; bz2 and gzip go through lbzip2 / pigz in a subprocess when they
    are on PATH (so decompression runs on its own cores, overlapping parsing); zstd uses
    zstandard. ``-`` reads stdin.
    """

    def __init__(self, path: str | os.PathLike[str], *, use_tools: bool = True, tool_threads: int = 0) -> None:
        self.path = str(path)
        self.kind = compression_of(path) if self.path != "-" else None
        self._proc: subprocess.Popen[bytes] | None = None
        self._feeder: threading.Thread | None = None
        self._feed_error: BaseException | None = None
        self._tool_fd: str | None = None
        self.tool: str | None = None
        if self.path == "-":
            self.size: int | None = None
            self.raw = HashingReader(sys.stdin.buffer)
            self.stream: IO[bytes] = self.raw  # type: ignore[assignment]
            return
        p = Path(path)
        if not p.is_file():
            raise InputError(f"no such file: {p}; check the path")
        self.size = p.stat().st_size
        self.raw = HashingReader(open(p, "rb"))  # noqa: SIM115 - closed by close()
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
            self._feeder = threading.Thread(target=self._hash_input, daemon=True)
            self._feeder.start()
            self.stream = self._proc.stdout  # type: ignore[assignment]
        elif self.kind == "gz":
            if _HAVE_ISAL:
                from isal import igzip

                self.stream = igzip.IGzipFile(fileobj=self.raw, mode="rb")  # type: ignore[arg-type]
            else:  # pragma: no cover - isal is a core dependency
                import gzip

                self.stream = gzip.GzipFile(fileobj=self.raw, mode="rb")  # type: ignore[arg-type]
        elif self.kind == "bz2":
            import bz2

            self.stream = bz2.BZ2File(self.raw, "rb")  # type: ignore[arg-type]
        elif self.kind == "zst":
            self.stream = _ZstdStream(self.raw)  # type: ignore[assignment]
        else:
            self.stream = self.raw  # type: ignore[assignment]

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
        try:
            data = self.stream.read(n)
        except (EOFError, OSError, zlib.error, ValueError) as exc:
            raise self._truncated(decompressed_pos, exc) from None
        except Exception as exc:  # zstandard.ZstdError and friends
            if type(exc).__module__.startswith("zstandard"):
                raise self._truncated(decompressed_pos, exc) from None
            raise
        if not data and self._proc is not None:
            assert self._feeder is not None
            self._feeder.join()
            err = self._proc.stderr.read().decode(errors="replace").strip() if self._proc.stderr else ""
            if self._proc.wait() != 0:
                raise self._truncated(decompressed_pos, RuntimeError(f"{self.tool}: {err or 'failed'}"))
        return data

    def _truncated(self, pos: int, exc: BaseException) -> InputError:
        return InputError(
            f"{self.path}: the {self.kind or 'input'} archive is truncated or damaged at compressed byte "
            f"{self.raw_pos} (decompressed byte {pos}): {exc}; re-download or re-compress the dump"
        )

    def finish(self) -> str:
        """Hash the rest of the raw file and return its sha256."""
        if self._feeder is not None:
            self._feeder.join()
            if self._feed_error is not None:
                raise self._feed_error
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


class _ZstdStream:
    """zstd frames read one after another; unlike zstandard's stream_reader, a frame cut short
    raises instead of ending quietly."""

    def __init__(self, raw: HashingReader) -> None:
        import zstandard

        self._zstd = zstandard
        self.raw = raw
        self._dobj = zstandard.ZstdDecompressor().decompressobj()
        self._buf = b""
        self._in_frame = False

    def read(self, n: int) -> bytes:
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

    def close(self) -> None:
        pass


def _strip_record(line: bytes) -> bytes:
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
            orjson.loads(_strip_record(head))
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
    This loop runs in the one process that feeds all workers, so each block is scanned once and
    copied once: into a joined ``data`` or, with ``spool`` (a folder), into one of
    ``spool_slots`` ring files that a worker maps (see Chunk.view). ``skip(index) -> bool`` marks
    chunks whose bytes are not needed (finished in an earlier run). ``on_read(decompressed_bytes,
    raw_bytes)`` is called after every block. For the array shape a missing closing ``]`` means the
    input was cut short.

    Chunk ``i`` overwrites the slot of chunk ``i - spool_slots``, so the consumer must have
    finished with that chunk before it asks for chunk ``i``. A consumer that keeps at most ``w``
    chunks unfinished, as ``etl.runner.ShardRunner`` with ``window=w`` does, needs
    ``spool_slots >= w + 1``.
    """
    if chunk_lines is None and chunk_bytes is None:
        raise InputError("give chunk_lines or chunk_bytes")
    if spool is not None and not spool_slots:
        raise ValueError("a spool needs spool_slots (the ring size)")
    if (chunk_lines is not None and chunk_lines < 1) or (chunk_bytes is not None and chunk_bytes < 1):
        raise InputError(f"chunk sizes must be at least 1, got {chunk_lines} lines, {chunk_bytes} bytes")

    maps: dict[str, mmap.mmap] = {}
    try:
        yield from _cut_chunks(stream, chunk_lines, chunk_bytes, on_read, spool, skip, spool_slots, maps)
    finally:
        for mm in maps.values():
            mm.close()


def _cut_chunks(stream: DumpStream, chunk_lines: int | None, chunk_bytes: int | None, on_read,
                spool: str | os.PathLike[str] | None, skip, spool_slots: int | None,
                maps: dict[str, mmap.mmap]) -> Iterator[Chunk]:
    def new_sink(i: int):
        if skip is not None and skip(i):
            return _NullSink()
        if spool is not None:
            return _SlotSink(os.path.join(spool, f"slot-{i % spool_slots:04d}.chunk"), maps)
        return _JoinSink()

    pos = 0
    head = b""
    shape: str | None = None
    size = 0  # bytes in the current chunk
    lines = 0  # newlines in the current chunk (only counted when chunk_lines is set)
    index = 0
    chunk_start = 0
    last_nonblank = b""
    sink = None
    eof = False
    while not eof:
        block = stream.read(BLOCK, pos)
        pos += len(block)
        if on_read is not None:
            on_read(pos, stream.raw_pos)
        eof = not block
        if shape is None:
            head += block
            nl = head.find(b"\n")
            if nl < 0 and not eof:
                continue  # a first line longer than a block
            if not head:
                return  # empty input: no chunks
            shape = detect_shape(head if nl < 0 else head[:nl])
            if shape == "document":
                yield from _document_chunk(stream, head, pos, on_read, eof)
                return
            block, head = head, b""
        view = memoryview(block)
        start = 0
        while start < len(block):
            if sink is None:
                sink = new_sink(index)
            cut = -1
            if chunk_bytes is not None and size + len(block) - start >= chunk_bytes:
                cut = block.find(b"\n", start + max(0, chunk_bytes - 1 - size))
            if chunk_lines is not None:
                end = cut + 1 if cut >= 0 else len(block)
                n = block.count(b"\n", start, end)
                if lines + n >= chunk_lines:
                    cut = start - 1
                    for _ in range(chunk_lines - lines):
                        cut = block.find(b"\n", cut + 1)
                elif cut < 0:
                    lines += n
            stop = len(block) if cut < 0 else cut + 1
            sink.add(view[start:stop])
            size += stop - start
            last = _last_nonblank_in(block, start, stop)
            if last:
                last_nonblank = last
            start = stop
            if cut >= 0:
                yield sink.finish(index, chunk_start, size)
                index += 1
                chunk_start += size
                sink, size, lines = None, 0, 0
    if sink is not None and size:
        yield sink.finish(index, chunk_start, size)
    if shape == "array" and last_nonblank != b"]":
        raise InputError(
            f"{stream.path}: the dump ends at decompressed byte {pos} without the closing ']' "
            "(the file is truncated); re-download it"
        )


def _last_nonblank_in(block: bytes, start: int, stop: int) -> bytes:
    """The last non-whitespace byte of block[start:stop], or b"" (walks back from the end)."""
    i = stop - 1
    while i >= start and block[i] in b" \t\r\n":
        i -= 1
        if stop - i > 256:  # long blank run: let C do it
            return block[start:stop].rstrip()[-1:]
    return block[i : i + 1] if i >= start else b""


def _document_chunk(stream: DumpStream, buf: bytes, pos: int, on_read, eof: bool) -> Iterator[Chunk]:
    parts = [buf]
    total = len(buf)
    while not eof and (block := stream.read(BLOCK, pos)):
        pos += len(block)
        total += len(block)
        if total > MAX_DOCUMENT_BYTES:
            raise InputError(
                f"{stream.path}: not a dump (no '[' on the first line) and larger than 1 GiB; "
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
    rec = _strip_record(data[start:stop])
    if rec and rec != b"[" and rec != b"]":
        return rec
    return None
