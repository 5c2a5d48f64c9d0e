from __future__ import annotations

from pathlib import Path

import pytest

from envbench.formats.files import JsonListWriter, stem_of
from etl.io import dumps_json


def test_stem_of() -> None:
    assert stem_of("data/dev_revised.json") == "dev_revised"
    assert stem_of("x/train_annotated.json.gz") == "train_annotated"
    assert stem_of("a.b.json.zst") == "a.b" and stem_of("noext") == "noext"


@pytest.mark.parametrize("items", [[], [{"b": 1, "a": [1.5, None, "é"]}], [{"t": "x"}, [], 3, {"z": {"y": 2}}]])
def test_written_element_by_element_as_dumps_json_writes_the_list(tmp_path: Path, items: list) -> None:
    with JsonListWriter(tmp_path / "l.json") as out:
        for item in items:
            out.write(item)
    assert (tmp_path / "l.json").read_bytes() == dumps_json(items)
    assert out.count == len(items)
