from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from envbench.core.errors import DataError
from envbench.formats.substitutions import read_substitution_rows, read_substitutions


def test_a_foreign_parquet_file_is_named_with_its_columns(tmp_path: Path) -> None:
    p = tmp_path / "substitutions.parquet"
    pq.write_table(pa.table({"a": [1], "b": ["x"]}), p)
    with pytest.raises(DataError) as e:
        read_substitutions(p)
    assert str(e.value) == (f"{p}: has columns a, b; a substitutions.parquet needs title, entity, old_names, "
                            "new_names; pass the one `envbench generate` wrote beside the Env gold file")


@pytest.mark.parametrize("kind", ["folder", "text"])
def test_what_is_no_parquet_file_is_one_line(tmp_path: Path, kind: str) -> None:
    p = tmp_path / "substitutions.parquet"
    if kind == "folder":
        p.mkdir()
    else:
        p.write_text("not parquet\n")
    for read in (read_substitutions, read_substitution_rows):
        with pytest.raises(DataError) as e:
            read(p)
        msg = str(e.value)
        assert "\n" not in msg and msg.startswith(f"{p}: not a readable substitutions.parquet")
        assert msg.endswith("; regenerate it with `envbench generate`")
