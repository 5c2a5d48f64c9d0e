from __future__ import annotations

import gzip
import os
import stat
from pathlib import Path

import pytest

from etl.io import InputError, atomic_path, read_json, write_json_atomic


def test_read_json_names_a_truncated_archive(tmp_path: Path) -> None:
    whole = gzip.compress(b'[{"title": "x"}]' * 50)
    bad = tmp_path / "docs.json.gz"
    bad.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(InputError) as err:
        read_json(bad)
    assert str(err.value).startswith(f"{bad}: cannot decompress it (")
    assert str(err.value).endswith("the file is corrupt or ends early; download it again or compress it again")


@pytest.mark.parametrize("kind", ["gz", "bz2", "zst"])
@pytest.mark.parametrize("keep", [0.5, 0.01])
def test_every_compression_names_a_truncated_archive_alike(tmp_path: Path, kind: str, keep: float) -> None:
    """A truncated .zst had read as an empty document ("not a valid JSON file (Input is a zero-length ...)"):
    zstandard's stream_reader ends quietly where the file ends."""
    import bz2

    import zstandard

    data = b'[{"title": "x"}]' * 5000
    whole = {"gz": gzip.compress, "bz2": bz2.compress, "zst": zstandard.ZstdCompressor().compress}[kind](data)
    bad = tmp_path / f"docs.json.{kind}"
    bad.write_bytes(whole[: max(6, int(len(whole) * keep))])
    with pytest.raises(InputError) as err:
        read_json(bad)
    assert str(err.value).startswith(f"{bad}: cannot decompress it (")
    assert str(err.value).endswith("); the file is corrupt or ends early; download it again or compress it again")


def test_zstd_frames_are_read_one_after_another(tmp_path: Path) -> None:
    import zstandard

    p = tmp_path / "docs.json.zst"
    p.write_bytes(zstandard.ZstdCompressor().compress(b'[{"a": ') + zstandard.ZstdCompressor().compress(b"1}]"))
    assert read_json(p) == [{"a": 1}]


def test_a_json_file_past_the_cap_is_one_line_and_read_no_further(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A gzip bomb ('[' + 300 MB of spaces + ']', 290 KB compressed) was decompressed whole and parsed at twice
    its size; past MAX_JSON_BYTES the read stops, naming the file and the cap."""
    import tracemalloc

    import etl.io

    monkeypatch.setattr(etl.io, "MAX_JSON_BYTES", 1 << 20)
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b"[" + b" " * (64 << 20) + b"]"))
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as err:
            read_json(bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(err.value) == (f"{bomb}: decompresses to more than 1,048,576 bytes, the most a JSON file is read whole "
                              "(etl.io.MAX_JSON_BYTES); check that it is the file you meant (a compression bomb stops "
                              "here), or split it into several files")
    assert peak < 16 << 20  # not the 64 MB it decompresses to
    plain = tmp_path / "big.json"
    plain.write_bytes(b"[" + b" " * (1 << 20) + b"]")
    with pytest.raises(InputError, match=r"big.json: holds more than 1,048,576 bytes, the most a JSON file is read"):
        read_json(plain)
    plain.write_bytes(b"[" + b" " * ((1 << 20) - 2) + b"]")  # the cap itself is read
    assert read_json(plain) == []


def test_read_json_names_the_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="^no such file: .*nope.json; check the path$"):
        read_json(tmp_path / "nope.json")


def test_a_link_to_nothing_and_a_pipe_are_one_line_not_a_hang(tmp_path: Path) -> None:
    # a hostile-input probe: a symbolic link loop read "no such file", and a named pipe blocked until killed
    (tmp_path / "a.json").symlink_to(tmp_path / "b.json")
    (tmp_path / "b.json").symlink_to(tmp_path / "a.json")
    (tmp_path / "dangling.json").symlink_to(tmp_path / "nowhere.json")
    for name in ("a.json", "dangling.json"):
        with pytest.raises(InputError) as err:
            read_json(tmp_path / name)
        assert str(err.value) == (f"{tmp_path / name}: a symbolic link that leads to no file (its target is missing, "
                                  "or it loops); point it at the file, or give the file itself")
    os.mkfifo(tmp_path / "pipe.json")
    with pytest.raises(InputError) as err:
        read_json(tmp_path / "pipe.json")
    assert str(err.value) == (f"{tmp_path / 'pipe.json'}: not a regular file (a pipe, socket or device); save what it "
                              "gives to a file, and give that")


def test_atomic_write_leaves_nothing_on_failure_and_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    write_json_atomic(target, {"v": 1})
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("partial")
            raise RuntimeError("crash")
    assert target.read_bytes() == b'{"v":1}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_atomic_write_uses_the_umask_not_0600(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_json_atomic(tmp_path / "a.json", [1])
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.json").stat().st_mode) == 0o644


def test_a_binary_file_is_named_by_its_kind(tmp_path: Path) -> None:
    # a substitutions.parquet passed as --pred used to be "not UTF-8 text ...; save it as UTF-8"
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = tmp_path / "pred.json"
    pq.write_table(pa.table({"a": [1]}), p)
    with pytest.raises(InputError) as err:
        read_json(p, what="prediction JSON file")
    assert str(err.value) == f"{p}: a Parquet file, not a prediction JSON file; pass the prediction JSON file (JSON)"
    p.write_bytes(b"%PDF-1.7\n\xe2\xe3\xcf\xd3\n")
    with pytest.raises(InputError, match="a PDF file, not a JSON file"):
        read_json(p)


def test_a_byte_that_is_not_utf8_is_named_by_its_offset(tmp_path: Path) -> None:
    """Issue 17 #19: a 0xFF byte was reported as "line 1 column 1 (char 0)"."""
    bad = tmp_path / "docs.json"
    bad.write_bytes(b'[{"title": "ok"},\n {"title": "a\xff"}]')
    with pytest.raises(InputError) as err:
        read_json(bad, what="DocRED JSON file")
    assert str(err.value) == (f"{bad}: not UTF-8 text: byte 31 (0xFF, line 2) is not valid UTF-8; save the "
                              "DocRED JSON file as UTF-8, or re-download it")
    packed = tmp_path / "docs.json.gz"
    packed.write_bytes(gzip.compress(bad.read_bytes()))
    with pytest.raises(InputError, match=r": not UTF-8 text: decompressed byte 31 \(0xFF, line 2\)"):
        read_json(packed, what="DocRED JSON file")
    bad.write_bytes(b'[{"title": 1,}]')  # valid UTF-8, invalid JSON: the JSON position
    with pytest.raises(InputError, match=r"not a valid DocRED JSON file \(trailing comma is not allowed: line 1"):
        read_json(bad, what="DocRED JSON file")


def test_read_json_goes_by_the_magic_bytes(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 17 #20: a gzip file named .json.bz2 is read as gzip, with a warning that says so."""
    p = tmp_path / "docs.json.bz2"
    p.write_bytes(gzip.compress(b'[{"title": "x"}]'))
    with caplog.at_level("WARNING", logger="etl.io"):
        assert read_json(p) == [{"title": "x"}]
    assert caplog.messages == [f"{p} is gz-compressed (by its first bytes) although its name ends in .bz2; "
                               "reading it as gz"]


def test_read_json_from_compressed_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    class Stdin:
        buffer = io.BytesIO(gzip.compress(b'{"a": 1}'))

    monkeypatch.setattr(sys, "stdin", Stdin)
    assert read_json("-") == {"a": 1}


def test_a_full_disk_names_the_file_being_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 17 #23: write() errors carry no file name; the atomic writer adds the target's."""
    import errno

    from etl.io import is_no_space

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError) as err:
        write_json_atomic(tmp_path / "out.json", {"v": 1})
    assert err.value.errno == errno.ENOSPC and err.value.filename == str(tmp_path / "out.json")
    assert list(tmp_path.iterdir()) == []
    assert is_no_space(err.value) and is_no_space(RuntimeError('IO Error: Could not write "x": No space left on device'))
    assert not is_no_space(OSError(errno.EACCES, "Permission denied"))


def test_a_signal_right_after_the_temporary_file_is_made_leaves_nothing(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # mkstemp made the file and returned into the try only then: a SIGTERM there left ".out.json.*.tmp"
    real_open = os.open

    def interrupted(path, flags, mode=0o777, *args, **kwargs):
        fd = real_open(path, flags, mode, *args, **kwargs)
        if str(path).endswith(".tmp"):
            os.close(fd)
            raise KeyboardInterrupt  # as the signal handler would, at the next bytecode
        return fd

    monkeypatch.setattr(os, "open", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_json_atomic(tmp_path / "out.json", {"a": 1})
    assert list(tmp_path.iterdir()) == []


def test_an_empty_path_option_is_refused_with_what_to_give() -> None:
    from etl.io import require_path

    require_path("runs/demo", "--out", "the demo folder", "--out runs/demo")  # a path: nothing to say
    for empty in ("", "  "):
        with pytest.raises(InputError, match=r"^--out is empty; give the demo folder, e\.g\. --out runs/demo$"):
            require_path(empty, "--out", "the demo folder", "--out runs/demo")
