"""Run manifests: what went in, with which parameters, and what came out."""

from __future__ import annotations

import functools
import hashlib
import os
import platform
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from etl.io import sha256_file, write_json_atomic


def package_version() -> str:
    try:
        return metadata.version("envbench")
    except metadata.PackageNotFoundError:  # running from a source tree
        return "0+unknown"


_CODE_SUFFIXES = {".py", ".c", ".json", ".tsv", ".gz", ".toml", ".js", ".css", ".html"}


@functools.cache
def code_fingerprint() -> str:
    """sha256 over the source and data files of envbench's packages (etl, wikidata_index, envbench,
    icl, models), so a step rerun after the code changed is not "up to date" (the package version
    does not change with every edit). Compiled files, caches and tests do not count."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for pkg in ("etl", "wikidata_index", "envbench", "icl", "models"):
        base = root / pkg
        if not base.is_dir():
            continue
        for f in sorted(base.rglob("*")):
            if f.is_file() and f.suffix in _CODE_SUFFIXES and "__pycache__" not in f.parts:
                h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def describe_file(path: str | os.PathLike[str], *, relative_to: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    p = Path(path)
    name = str(p.relative_to(relative_to)) if relative_to is not None else p.name
    return {"name": name, "bytes": p.stat().st_size, "sha256": sha256_file(p)}


def build_manifest(
    *,
    step: str,
    inputs: Iterable[str | os.PathLike[str]],
    parameters: Mapping[str, Any],
    outputs: Iterable[str | os.PathLike[str]] = (),
    output_root: str | os.PathLike[str] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A manifest dict; timings and machine facts go in ``extra`` so the hashed parts stay stable."""
    manifest: dict[str, Any] = {
        "step": step,
        "package_version": package_version(),
        "code_sha256": code_fingerprint(),
        "python": platform.python_version(),
        "inputs": [describe_file(p) for p in inputs if str(p) != "-"],
        "parameters": dict(parameters),
        "outputs": [describe_file(p, relative_to=output_root) for p in sorted(map(str, outputs))],
    }
    if extra:
        manifest.update(extra)
    return manifest


def write_manifest(path: str | os.PathLike[str], manifest: Mapping[str, Any]) -> None:
    write_json_atomic(path, dict(manifest), indent=True)
