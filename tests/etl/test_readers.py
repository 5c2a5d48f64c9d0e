"""Dump framing, shapes, chunking by line count, and truncated archives."""

from __future__ import annotations

import bz2
import gzip
from pathlib import Path

import orjson
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from etl.io import InputError
from etl.readers import DumpStream, count_lines, detect_shape, iter_chunks, iter_records
from tests.conftest import shared_path


def _records(path: Path, chunk_lines: int = 2) -> list[tuple[int, int, bytes]]:
    """(absolute line, offset, record) over all chunks."""
    stream = DumpStream(path)
    out, before = [], 0
    try:
        for c in iter_chunks(stream, chunk_lines):
            out += [(line + before, off, rec) for line, off, rec in iter_records(c)]
            before += count_lines(c.data)
        return out
    finally:
        stream.close()


def _dump(entities: list[dict]) -> bytes:
    return b"[\n" + b",\n".join(orjson.dumps(e) for e in entities) + b"\n]\n"


ENTS = [{"id": f"Q{i}", "type": "item", "labels": {"en": {"language": "en", "value": f"n{i}"}}} for i in range(1, 8)]


@pytest.mark.parametrize("suffix", ["", ".gz", ".bz2", ".zst"])
def test_array_dump_in_every_compression(tmp_path: Path, suffix: str) -> None:
    data = _dump(ENTS)
    comp = {"": lambda b: b, ".gz": gzip.compress, ".bz2": bz2.compress,
            ".zst": lambda b: zstandard.ZstdCompressor().compress(b)}[suffix]
    p = tmp_path / f"d.json{suffix}"
    p.write_bytes(comp(data))
    recs = _records(p, chunk_lines=3)
    assert [orjson.loads(r)["id"] for _, _, r in recs] == [e["id"] for e in ENTS]
    assert [line for line, _, _ in recs] == list(range(2, 9))
    # byte offsets point at the line in the decompressed stream
    for _, off, rec in recs:
        assert data[off : off + len(rec)] == rec


def test_chunks_are_cut_by_line_count_only(tmp_path: Path) -> None:
    p = tmp_path / "d.json"
    p.write_bytes(_dump(ENTS))
    chunks = list(iter_chunks(DumpStream(p), 4))
    assert [(c.index, c.offset, count_lines(c.data)) for c in chunks] == [
        (0, 0, 4), (1, sum(len(c.data) for c in chunks[:1]), 4), (2, sum(len(c.data) for c in chunks[:2]), 1)]
    assert b"".join(c.data for c in chunks) == p.read_bytes()


def test_shapes() -> None:
    assert detect_shape(b"[\n") == "array"
    assert detect_shape(b'{"id": "Q1"},') == "lines"
    assert detect_shape(b"{") == "document"


def test_real_dump_and_document_shapes() -> None:
    recs = _records(shared_path("wikidata-samples", "wikidata-toolkit", "mock-dump-for-long-testing.json"), 7)
    assert len(recs) == 101
    # a pretty-printed single entity is read whole and becomes one record
    (rec,) = _records(shared_path("wikidata-samples", "wikibase-sdk", "Q2112.json"))
    assert orjson.loads(rec[2])["id"] == "Q2112"
    (rec,) = _records(shared_path("wikidata-samples", "syvb-wikidata", "Q42.json"))
    assert list(orjson.loads(rec[2])["entities"]) == ["Q42"]


def test_json_lines_without_brackets(tmp_path: Path) -> None:
    p = tmp_path / "d.jsonl"
    p.write_bytes(b"\n".join(orjson.dumps(e) for e in ENTS[:3]) + b"\n")
    assert len(_records(p)) == 3


def test_empty_input_has_no_chunks(tmp_path: Path) -> None:
    p = tmp_path / "e.json"
    p.write_bytes(b"")
    assert list(iter_chunks(DumpStream(p), 5)) == []


def test_truncated_gzip_names_the_byte_offset(tmp_path: Path) -> None:
    data = gzip.compress(_dump(ENTS * 200))
    p = tmp_path / "t.json.gz"
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=r"truncated or damaged at compressed byte \d+ \(decompressed byte \d+\)"):
        _records(p, 50)


def test_truncated_gzip_names_the_real_decompressed_offset(tmp_path: Path) -> None:
    """Issue 17 #21: the decoder drops what the failing read decompressed, so the message said
    "decompressed byte 0" for a small file; the offset is now where the data really ends."""
    import zlib

    raw = _dump(ENTS * 400)
    data = gzip.compress(raw, mtime=0)
    p = tmp_path / "t.json.gz"
    p.write_bytes(data[: len(data) // 2])
    good = len(zlib.decompressobj(31).decompress(data[: len(data) // 2]))  # what any reader can recover
    assert 0 < good < len(raw)
    with pytest.raises(InputError) as err:
        list(iter_chunks(DumpStream(p, use_tools=False), chunk_bytes=1 << 20))
    assert str(err.value) == (
        f"{p}: the gz archive is truncated or damaged at compressed byte {len(data) // 2} (decompressed byte "
        f"{good}): Compressed file ended before the end-of-stream marker was reached; re-download or "
        "re-compress the dump")


def test_clean_length_follows_members_and_stops_at_damage(tmp_path: Path) -> None:
    from etl.readers import clean_length

    a, b = b"x" * 5000, b"y" * 7000
    p = tmp_path / "two.gz"
    p.write_bytes(gzip.compress(a) + gzip.compress(b))
    assert clean_length(p, "gz") == len(a) + len(b)
    z = tmp_path / "two.zst"
    z.write_bytes(zstandard.ZstdCompressor().compress(a) + zstandard.ZstdCompressor().compress(b))
    assert clean_length(z, "zst") == len(a) + len(b)
    cut = tmp_path / "cut.bz2"
    cut.write_bytes(bz2.compress(a) + bz2.compress(b)[:20])
    assert clean_length(cut, "bz2") == len(a)


def test_the_format_comes_from_the_magic_bytes_not_the_name(tmp_path: Path, caplog: pytest.LogCaptureFixture
                                                           ) -> None:
    """Issue 17 #20: a gzip file named .json.bz2 was called a damaged bz2."""
    raw = _dump(ENTS)
    p = tmp_path / "d.json.bz2"
    p.write_bytes(gzip.compress(raw))
    with caplog.at_level("WARNING", logger="etl.io"):
        assert b"".join(c.data for c in iter_chunks(DumpStream(p), 3)) == raw
    assert caplog.messages == [f"{p} is gz-compressed (by its first bytes) although its name ends in .bz2; "
                               "reading it as gz"]
    plain = tmp_path / "plain.json.gz"
    plain.write_bytes(raw)
    assert b"".join(c.data for c in iter_chunks(DumpStream(plain), 3)) == raw
    xz = tmp_path / "d.json.xz"
    xz.write_bytes(b"\xfd7zXZ\x00" + b"\x00" * 20)
    with pytest.raises(InputError) as err:
        DumpStream(xz)
    assert str(err.value) == (f"{xz}: the file is xz-compressed (by its first bytes), which is not read here; "
                              "decompress it, or recompress it as .gz, .bz2 or .zst")


@pytest.mark.parametrize("kind", ["plain", "gz", "bz2", "zst"])
def test_stdin_is_decompressed_by_its_magic_bytes(monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """Issue 17 #22: a compressed dump on stdin was called "not valid UTF-8"."""
    import hashlib
    import io
    import sys

    raw = _dump(ENTS * 3)
    data = {"plain": raw, "gz": gzip.compress(raw), "bz2": bz2.compress(raw),
            "zst": zstandard.ZstdCompressor().compress(raw)}[kind]

    class Stdin:
        buffer = io.BytesIO(data)

    monkeypatch.setattr(sys, "stdin", Stdin)
    stream = DumpStream("-")
    assert stream.kind == (None if kind == "plain" else kind)
    assert b"".join(c.data for c in iter_chunks(stream, 2)) == raw
    assert stream.raw.sha256.hexdigest() == hashlib.sha256(data).hexdigest() and stream.raw_pos == len(data)


@pytest.mark.parametrize("suffix", [".bz2", ".zst"])
def test_truncated_bz2_and_zst(tmp_path: Path, suffix: str) -> None:
    raw = _dump(ENTS * 200)
    data = bz2.compress(raw) if suffix == ".bz2" else zstandard.ZstdCompressor().compress(raw)
    p = tmp_path / f"t.json{suffix}"
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="truncated"):
        _records(p, 50)


def test_dump_without_closing_bracket_is_truncated(tmp_path: Path) -> None:
    p = tmp_path / "t.json"
    p.write_bytes(_dump(ENTS)[:-3])  # drop "]\n" and the last newline
    with pytest.raises(InputError, match=r"ends at decompressed byte \d+ without the closing '\]'"):
        _records(p)


def test_sha256_of_the_raw_file(tmp_path: Path) -> None:
    import hashlib

    p = tmp_path / "d.json.gz"
    p.write_bytes(gzip.compress(_dump(ENTS)))
    stream = DumpStream(p)
    list(iter_chunks(stream, 3))
    assert stream.finish() == hashlib.sha256(p.read_bytes()).hexdigest()
    stream.close()


def test_without_digest_the_stream_reads_the_same_and_has_no_sha256(tmp_path: Path) -> None:
    p = tmp_path / "d.json.gz"
    p.write_bytes(gzip.compress(_dump(ENTS)))
    stream = DumpStream(p, digest=False)
    assert b"".join(c.data for c in iter_chunks(stream, 3)) == _dump(ENTS)
    with pytest.raises(ValueError, match=r"d\.json\.gz was opened with digest=False: there is no sha256"):
        stream.finish()
    stream.close()


def test_missing_file() -> None:
    with pytest.raises(InputError, match="no such file: /nonexistent.json; check the path"):
        DumpStream("/nonexistent.json")


def test_chunks_by_bytes_do_not_depend_on_read_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import etl.readers

    p = tmp_path / "d.json"
    p.write_bytes(_dump(ENTS * 30))
    cuts = []
    for block in (7, 64, 1 << 20):
        monkeypatch.setattr(etl.readers, "BLOCK", block)
        chunks = list(iter_chunks(DumpStream(p), 50, chunk_bytes=300))
        assert b"".join(c.data for c in chunks) == p.read_bytes()
        assert all(c.data.endswith(b"\n") for c in chunks)
        assert all(len(c.data) - len(c.data.rstrip(b"\n").rsplit(b"\n", 1)[-1]) - 1 < 300 for c in chunks[:-1])
        cuts.append([(c.index, c.offset) for c in chunks])
    assert cuts[0] == cuts[1] == cuts[2] and len(cuts[0]) > 5


def test_line_and_byte_limits_together(tmp_path: Path) -> None:
    p = tmp_path / "d.json"
    p.write_bytes(_dump(ENTS * 30))
    data = p.read_bytes()
    chunks = list(iter_chunks(DumpStream(p), 5, chunk_bytes=250))
    assert b"".join(c.data for c in chunks) == data
    for c in chunks[:-1]:
        n = count_lines(c.data)
        body = c.data[: c.data.rstrip(b"\n").rfind(b"\n") + 1]  # all but the last line
        assert n == 5 or (n < 5 and len(body) < 250 <= len(c.data))


def test_external_decompressor_path(tmp_path: Path, stand_in_lbzip2: Path) -> None:
    """The lbzip2 subprocess path, with a stand-in tool on PATH (the real one may be absent)."""
    import bz2
    import hashlib

    data = bz2.compress(_dump(ENTS))
    p = tmp_path / "d.json.bz2"
    p.write_bytes(data)
    stream = DumpStream(p)
    assert stream.tool == "lbzip2"
    recs = [r for c in iter_chunks(stream, 3) for r in iter_records(c)]
    assert len(recs) == len(ENTS)
    assert stream.finish() == hashlib.sha256(data).hexdigest()
    assert stream.raw_pos == len(data)
    stream.close()
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=r"truncated or damaged at compressed byte \d+ .*lbzip2"):
        _records(p)


def test_gzip_stays_in_process_with_pigz_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """isal inflates faster than pigz; a pigz on PATH is not used while isal is there."""
    import os

    (tmp_path / "pigz").write_text("#!/bin/sh\nexit 1\n")
    (tmp_path / "pigz").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    p = tmp_path / "d.json.gz"
    p.write_bytes(gzip.compress(_dump(ENTS)))
    stream = DumpStream(p)
    assert stream.tool is None
    assert len([r for c in iter_chunks(stream, 3) for r in iter_records(c)]) == len(ENTS)
    stream.close()


@pytest.mark.parametrize("data", [b"", b"[\n", b"a\nb", b"a\nb\n", b"\n\n\n", b'[\n{"id":1},\n]\n'])
def test_line_count_from_iteration(data: bytes) -> None:
    from etl.readers import Chunk

    lines = [None]
    list(iter_records(Chunk(0, 0, data), lines))
    assert lines[0] == count_lines(data)


def _reference_cuts(data: bytes, chunk_lines: int | None, chunk_bytes: int | None) -> list[bytes]:
    """The chunking rule written plainly over the whole input: a chunk ends at its
    ``chunk_lines``-th newline or at its first newline at or past byte ``chunk_bytes - 1``."""
    chunks, start = [], 0
    while start < len(data):
        ends = []
        if chunk_bytes is not None:
            nl = data.find(b"\n", start + chunk_bytes - 1)
            if nl >= 0:
                ends.append(nl)
        if chunk_lines is not None:
            nl = start - 1
            for _ in range(chunk_lines):
                nl = data.find(b"\n", nl + 1)
                if nl < 0:
                    break
            if nl >= 0:
                ends.append(nl)
        stop = min(ends) + 1 if ends else len(data)
        chunks.append(data[start:stop])
        start = stop
    return chunks


@settings(max_examples=120, deadline=None)
@given(
    lines=st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"x")), min_size=1, max_size=40),
    chunk_lines=st.none() | st.integers(1, 6),
    chunk_bytes=st.none() | st.integers(1, 120),
    block=st.integers(1, 70),
    read_past=st.integers(1, 50),
    spool_slots=st.none() | st.integers(2, 4),
    skipped=st.sets(st.integers(0, 30), max_size=5),
    gz=st.booleans(),
)
def test_chunks_equal_the_plain_rule_whatever_the_reads_and_buffers(
    tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], chunk_lines: int | None, chunk_bytes: int | None,
    block: int, read_past: int, spool_slots: int | None, skipped: set[int], gz: bool,
) -> None:
    """Bytes are decompressed straight into the chunk buffers (bytearrays, or mmapped ring slots)
    and only what follows a cut is copied on: cuts, offsets and bytes must not depend on how the
    input arrives or where it is kept."""
    import etl.readers

    if chunk_lines is None and chunk_bytes is None:
        chunk_bytes = 50
    tmp = tmp_path_factory.mktemp("cuts")
    data = b"[\n" + b"\n".join(b"{" + line + b"}," for line in lines) + b"\n]\n"
    p = tmp / ("d.json.gz" if gz else "d.json")
    p.write_bytes(gzip.compress(data) if gz else data)
    expected = _reference_cuts(data, chunk_lines, chunk_bytes)
    spool = None
    if spool_slots is not None:
        spool = tmp / "spool"
        spool.mkdir()
    old = etl.readers.BLOCK, etl.readers.READ_PAST
    etl.readers.BLOCK, etl.readers.READ_PAST = block, read_past
    try:
        stream = DumpStream(p)
        got = []
        for c in iter_chunks(stream, chunk_lines, chunk_bytes=chunk_bytes, spool=spool, spool_slots=spool_slots,
                             skip=lambda i: i in skipped):
            assert c.offset == sum(map(len, expected[: c.index]))
            assert c.size == len(expected[c.index])
            if c.index in skipped:
                assert c.data is None and c.path is None
                got.append(expected[c.index])
            else:
                got.append(c.load())  # before the next chunk, as a consumer with a window of 1
        stream.close()
    finally:
        etl.readers.BLOCK, etl.readers.READ_PAST = old
    assert got == expected
