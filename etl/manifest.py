"""Run manifests: what went in, with which parameters, and what came out."""

from __future__ import annotations

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
