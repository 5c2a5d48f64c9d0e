"""Imports go one way only.

Between packages: etl <- wikidata_index <- envbench <- {icl, models}; icl and models never import
each other, and only models may import torch. Inside envbench, one folder per job:
core <- formats <- {worlds, rename, scoring} <- cli, and the three jobs in the middle do not import
each other. Inside a folder, the modules import each other without a circle (a circle means one of
them holds what both need, in the wrong place).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LAYERS = ["etl", "wikidata_index", "envbench", "icl", "models"]
# package -> top-level packages it must not import
FORBIDDEN: dict[str, set[str]] = {
    "etl": {"wikidata_index", "envbench", "icl", "models"},
    "wikidata_index": {"envbench", "icl", "models"},
    "envbench": {"icl", "models"},
    "icl": {"models", "torch", "transformers"},
    "models": {"icl"},
}
# envbench sub-package -> envbench sub-packages it may import (besides itself)
ENVBENCH_ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "formats": {"core"},
    "worlds": {"core", "formats"},
    "rename": {"core", "formats"},
    "scoring": {"core", "formats"},
    "cli": {"core", "formats", "worlds", "rename", "scoring"},
}


def _imports(path: Path) -> set[str]:
    """Every absolute module name imported by the file, at any depth (lazy imports count)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def _top_levels(path: Path) -> set[str]:
    return {m.split(".")[0] for m in _imports(path)}


def test_imports_point_one_way() -> None:
    bad = []
    for layer, forbidden in FORBIDDEN.items():
        for path in sorted((REPO / layer).rglob("*.py")):
            hits = _top_levels(path) & forbidden
            if hits:
                bad.append(f"{path.relative_to(REPO)} imports {sorted(hits)}")
    assert not bad, "layering broken:\n" + "\n".join(bad)


def test_envbench_folders_are_jobs() -> None:
    """Each envbench folder imports only the folders below it (formats imports nothing of rename...)."""
    root = REPO / "envbench"
    subs = {p.name for p in root.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert subs <= set(ENVBENCH_ALLOWED) | {"data"}, f"new envbench folder without a rule: {subs - set(ENVBENCH_ALLOWED)}"
    loose = sorted(p.name for p in root.glob("*.py") if p.name not in {"__init__.py", "__main__.py"})
    assert not loose, f"modules outside the job folders: {loose}"
    bad = []
    for sub, allowed in ENVBENCH_ALLOWED.items():
        for path in sorted((root / sub).rglob("*.py")):
            used = {m.split(".")[1] for m in _imports(path) if m.startswith("envbench.") and m.count(".") >= 1}
            hits = used - allowed - {sub}
            if hits:
                bad.append(f"{path.relative_to(REPO)} imports envbench.{sorted(hits)}")
    assert not bad, "envbench layering broken:\n" + "\n".join(bad)


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sibling_imports(path: Path, names: dict[str, Path]) -> set[str]:
    """The modules of ``names`` the file imports, at any depth: ``from pkg import mod`` imports the
    module ``pkg.mod`` (the package's ``__init__`` only where a name of its own is taken)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                if f"{node.module}.{a.name}" in names:
                    out.add(f"{node.module}.{a.name}")
                elif node.module in names:
                    out.add(node.module)
    return out


def _circles(root: Path, folder: Path) -> list[list[str]]:
    """The import circles among the modules of one folder (lazy imports count), each as a path
    a -> b -> ... -> a, found by a depth-first walk; a package's ``__init__`` counts as a module only
    where it is imported by name (``from pkg import x``)."""
    names = {_module_name(p, root): p for p in sorted(folder.glob("*.py"))}
    edges = {}
    for name, path in names.items():
        edges[name] = sorted(m for m in _sibling_imports(path, names) if m != name)
    circles: list[list[str]] = []
    done: set[str] = set()

    def walk(node: str, trail: list[str]) -> None:
        if node in trail:
            circles.append([*trail[trail.index(node):], node])
            return
        if node in done:
            return
        for nxt in edges[node]:
            walk(nxt, [*trail, node])
        done.add(node)

    for name in sorted(names):
        walk(name, [])
    return circles


def test_no_import_circle_inside_a_folder() -> None:
    bad = []
    for layer in LAYERS:
        for folder in sorted({p.parent for p in (REPO / layer).rglob("*.py")}):
            bad += [" -> ".join(c) for c in _circles(REPO, folder)]
    assert not bad, "import circles (move what both modules need into a module both can import):\n" + "\n".join(bad)


def test_the_circle_rule_can_fail(tmp_path: Path) -> None:
    """A planted circle, one side lazy (as generate and link had it), is reported; a one-way pair is not."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.b import f\n")
    (pkg / "b.py").write_text("def f():\n    from pkg.a import g\n")
    (pkg / "c.py").write_text("from pkg import a\n")
    assert _circles(tmp_path, pkg) == [["pkg.a", "pkg.b", "pkg.a"]]
    (pkg / "b.py").write_text("def f():\n    return 1\n")
    assert _circles(tmp_path, pkg) == []
    # through the package: its __init__ imports a module that takes a name of the __init__'s own
    (pkg / "__init__.py").write_text("from pkg.a import g\nVALUE = 1\n")
    (pkg / "a.py").write_text("def g():\n    import pkg as p\n    from pkg import VALUE\n")
    assert _circles(tmp_path, pkg) == [["pkg", "pkg.a", "pkg"]]


def _reading_problems(page: str, root: Path) -> list[str]:
    """What is wrong with the newcomer's map (docs/development.md, "A first reading"): more than 6
    entries, a file that does not exist, or a function or class (``Class.method``) the file lacks."""
    section = page.split("### A first reading", 1)[1].split("\n#", 1)[0]
    entries = re.findall(r"^\d+\. `([^`]+)`: `([^`]+)`", section, re.MULTILINE)
    items = re.findall(r"^\d+\. ", section, re.MULTILINE)
    bad = [] if 0 < len(entries) == len(items) <= 6 else [f"{len(items)} entries, {len(entries)} of the form N. `file`: `name`"]
    for file, name in entries:
        path = root / file
        if not path.is_file():
            bad.append(f"{file}: no such file")
            continue
        defined = {f"{c}.{n.name}" if c else n.name
                   for c, n in _definitions(ast.parse(path.read_text(encoding="utf-8")))}
        if name not in defined:
            bad.append(f"{file}: defines no {name}")
    return bad


def _definitions(tree: ast.Module) -> list[tuple[str, ast.AST]]:
    """The module's top-level functions and classes, and the methods of its classes (with the class name)."""
    out: list[tuple[str, ast.AST]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.append(("", node))
        if isinstance(node, ast.ClassDef):
            out += [(node.name, m) for m in node.body if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)]
    return out


def test_the_first_reading_names_what_exists() -> None:
    page = (REPO / "docs" / "development.md").read_text(encoding="utf-8")
    assert not _reading_problems(page, REPO), _reading_problems(page, REPO)


def test_the_first_reading_check_can_fail() -> None:
    page = ("### A first reading\n\n1. `etl/step.py`: `Step`\n2. `etl/nowhere.py`: `f`\n"
            "3. `etl/step.py`: `Step.no_such_method`\n\n## Next\n")
    assert _reading_problems(page, REPO) == ["etl/nowhere.py: no such file", "etl/step.py: defines no Step.no_such_method"]
    seven = "### A first reading\n\n" + "".join(f"{i}. `etl/step.py`: `Step`\n" for i in range(1, 8))
    assert _reading_problems(seven, REPO) == ["7 entries, 7 of the form N. `file`: `name`"]


def test_core_packages_do_not_import_torch() -> None:
    for layer in ("etl", "wikidata_index", "envbench", "icl"):
        for path in sorted((REPO / layer).rglob("*.py")):
            assert not _top_levels(path) & {"torch", "transformers"}, path


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
    for name in ("ingest-dump", "make-sample", "generate", "evaluate", "explore", "train", "understand", "icl"):
        assert name in out.stdout


def test_the_architecture_rule_can_fail(tmp_path: Path) -> None:
    """The checker sees a lazy import inside a function (a rule that cannot fail protects nothing)."""
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from envbench.rename.generate import generate\n")
    assert "envbench.rename.generate" in _imports(f)
