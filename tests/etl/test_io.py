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


def test_read_json_names_the_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="^no such file: .*nope.json; check the path$"):
        read_json(tmp_path / "nope.json")


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
