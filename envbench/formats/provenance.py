"""What a benchmark's names come from, in words, with their licence: from the index's ``provenance``
(``wikidata_index.provenance``), which ``generate`` copies into ``stats.json``; ``export``'s card and
``report`` say it from there.

- a Wikidata dump: the new names are Wikidata labels and aliases, CC0 1.0;
- a knowledge base made by ``kb-from-corpus``: the new names are mention names of those documents (other
  entities of the corpus), under the corpus's licence (DocRED and Re-DocRED: MIT); nothing comes from Wikidata;
- the sample world: synthetic names envbench made up, CC0 1.0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from envbench.formats.releases import RELEASES

CC0 = "cc0-1.0"
MIT = "mit"
CORPUS_LICENCES = {"Re-DocRED": MIT, "DocRED": MIT}  # both repositories' LICENSE files: MIT


def index_provenance(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The index manifest's ``provenance``, or ``{"kind": "unknown"}`` for an index ingested before it was recorded."""
    prov = manifest.get("provenance")
    return dict(prov) if isinstance(prov, Mapping) and prov.get("kind") else {"kind": "unknown"}


def corpora_of(documents: list[Mapping[str, Any]]) -> list[str]:
    """The corpora (``Re-DocRED dev``) the documents are official releases of, by sha256; unknown ones left out."""
    by_sha = {r.sha256: r for r in RELEASES}
    return [f"{by_sha[d['sha256']].corpus} {by_sha[d['sha256']].split}" for d in documents
            if isinstance(d, Mapping) and d.get("sha256") in by_sha]


def licence_of(prov: Mapping[str, Any]) -> str | None:
    """The Hub licence id of the new names, or None when it cannot be told (a KB from unknown documents)."""
    kind = prov.get("kind")
    if kind in ("wikidata_dump", "sample_world"):
        return CC0
    if kind == "corpus_kb":
        docs = prov.get("documents") or []
        corpora = corpora_of(docs)
        licences = {CORPUS_LICENCES[c.split()[0]] for c in corpora}
        return licences.pop() if docs and len(corpora) == len(docs) and len(licences) == 1 else None
    return None


def describe(prov: Mapping[str, Any]) -> dict[str, Any]:
    """``{kind, source, names, licence, ...}``: the index's provenance with two sentences, ``source`` (what the
    index was made from) and ``names`` (where the new names come from, and their licence)."""
    kind = prov.get("kind")
    out: dict[str, Any] = dict(prov)
    if kind == "corpus_kb":
        docs = [str(d.get("name")) for d in prov.get("documents") or [] if isinstance(d, Mapping)]
        corpora = corpora_of(prov.get("documents") or [])
        known = f" ({', '.join(corpora)}, official releases)" if corpora else ""
        licence = licence_of(prov)
        out["source"] = (f"a knowledge base made by `envbench kb-from-corpus` from the documents "
                         f"{', '.join(docs) or '(unnamed)'}{known}; no Wikidata dump")
        out["names"] = ("the new names are mention names of those documents (other entities of the corpus), "
                        + (f"under the corpus's licence ({licence.upper()})" if licence
                           else "under those documents' licence"))
    elif kind == "wikidata_dump":
        files = ", ".join(prov.get("files") or []) or "(unnamed)"
        date = f"dated {prov['date']} by its name" if prov.get("date") else "of a date its name does not give"
        out["source"] = f"the Wikidata JSON dump {files}, {date}"
        out["names"] = "the new names are Wikidata labels and aliases, under Wikidata's CC0 1.0"
    elif kind == "sample_world":
        out["source"] = f"envbench's synthetic sample world (`envbench make-sample`, seed {prov.get('seed')})"
        out["names"] = "the new names are synthetic names the sample world made up (CC0 1.0)"
    else:
        out["source"] = "an index whose source was not recorded (ingested by an older envbench; re-ingest to record it)"
        out["names"] = "where the new names come from, and their licence, was not recorded"
    out["licence"] = licence_of(prov)
    return out


__all__ = ["CC0", "MIT", "corpora_of", "describe", "index_provenance", "licence_of"]
