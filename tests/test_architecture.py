"""Imports go one way only: etl <- wikidata_index <- envbench <- models."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LAYERS = ["etl", "wikidata_index", "envbench", "models"]


def _imported_top_levels(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module.split(".")[0])
    return out


def test_imports_point_one_way() -> None:
    bad = []
    for rank, layer in enumerate(LAYERS):
        forbidden = set(LAYERS[rank + 1 :])
        for path in sorted((REPO / layer).rglob("*.py")):
            hits = _imported_top_levels(path) & forbidden
            if hits:
                bad.append(f"{path.relative_to(REPO)} imports {sorted(hits)}")
    assert not bad, "layering broken:\n" + "\n".join(bad)


def test_core_packages_do_not_import_torch() -> None:
    for layer in LAYERS[:3]:
        for path in sorted((REPO / layer).rglob("*.py")):
            assert not _imported_top_levels(path) & {"torch", "transformers"}, path


def test_help_works_without_importing_torch() -> None:
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from envbench.cli import cli\n"
        "r = CliRunner().invoke(cli, ['--help'])\n"
        "assert r.exit_code == 0, r.output\n"
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules\n"
        "print(r.output)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stderr
    for name in ("ingest-dump", "make-sample", "generate", "evaluate", "train", "icl"):
        assert name in out.stdout
