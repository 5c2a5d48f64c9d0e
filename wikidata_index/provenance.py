"""Where an index's data came from, recorded in its manifest (``provenance``) when it is ingested.

Three kinds of dump are ingested, and what a benchmark made from them may say about its names and their
licence differs:

- ``wikidata_dump``: a Wikidata JSON dump (or entity JSON from the API): the file's name, and the dump's
  date when its name carries one (``wikidata-20240101-all.json.gz``, ``latest-all`` carries none);
- ``corpus_kb``: a knowledge base ``envbench kb-from-corpus`` made from DocRED-format documents, known by
  the manifest it writes beside the dump (``KB.json.gz.manifest.json``) naming this very file by sha256:
  the documents, by name and sha256;
- ``sample_world``: envbench's synthetic sample world, known by the ``make-sample`` manifest of the
  folder the dump is in, naming this file by sha256: the world's seed.

A dump whose manifest is gone, or names another file, is taken for a Wikidata dump: the manifest is what
proves where a file came from, and a file name proves nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from etl.step import MANIFEST, read_manifest

WIKIDATA_DUMP, CORPUS_KB, SAMPLE_WORLD = "wikidata_dump", "corpus_kb", "sample_world"
_DATE = re.compile(r"(?<!\d)(20\d\d)(\d\d)(\d\d)(?!\d)")  # wikidata-20240101-all.json.gz


def _names_file(manifest: Mapping[str, Any] | None, name: str, sha256: str) -> bool:
    outputs = (manifest or {}).get("outputs") or []
    return any(isinstance(o, dict) and Path(str(o.get("name", ""))).name == name and o.get("sha256") == sha256
               for o in outputs)


def dump_provenance(inputs: Sequence[Mapping[str, Any]], paths: Sequence[str]) -> dict[str, Any]:
    """The ``provenance`` of an index ingested from ``paths`` (their manifest ``inputs`` entries, with sha256)."""
    if len(paths) == 1 and paths[0] != "-" and inputs and inputs[0].get("sha256"):
        path, sha = Path(paths[0]), str(inputs[0]["sha256"])
        beside = read_manifest(path.with_name(path.name + ".manifest.json"))
        if (beside or {}).get("step") == "kb-from-corpus" and _names_file(beside, path.name, sha):
            docs = [{"name": i.get("name"), "sha256": i.get("sha256")} for i in beside.get("inputs") or []
                    if isinstance(i, dict) and str(i.get("name", "")).endswith((".json", ".gz", ".bz2", ".zst"))]
            return {"kind": CORPUS_KB, "documents": docs}
        world = read_manifest(path.parent / MANIFEST)
        if (world or {}).get("step") == "make-sample" and _names_file(world, path.name, sha):
            return {"kind": SAMPLE_WORLD, "seed": ((world or {}).get("parameters") or {}).get("seed")}
    names = [Path(p).name for p in paths]
    dates = sorted({f"{m[1]}-{m[2]}-{m[3]}" for n in names for m in [_DATE.search(n)] if m})
    return {"kind": WIKIDATA_DUMP, "files": names, "date": dates[-1] if dates else None}


__all__ = ["CORPUS_KB", "SAMPLE_WORLD", "WIKIDATA_DUMP", "dump_provenance"]
