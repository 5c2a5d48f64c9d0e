"""The tiny document that the CLI tests of `link` and `generate` share, and files of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.envbench.index_fixture import mention

DOC = {
    "title": "Anna",
    "sents": [["Anna", "lives", "in", "Rome", "."]],
    "vertexSet": [[mention("Anna", 0, [0, 1], "PER")], [mention("Rome", 0, [3, 4], "LOC")]],
    "labels": [{"h": 0, "t": 1, "r": "P551", "evidence": [0]}],
}


def out_of_range(title: str = "Anna") -> dict[str, Any]:
    """DOC titled ``title``, with Rome's mention at pos [3, 9], past its 5-token sentence."""
    bad = json.loads(json.dumps(DOC))
    bad["title"] = title
    bad["vertexSet"][1][0]["pos"] = [3, 9]
    return bad


def write_docs(path: Path, docs: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(docs))
    return path
