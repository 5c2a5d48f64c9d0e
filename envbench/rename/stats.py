"""``stats.json`` of a generate run, tallied chunk by chunk so no document has to stay in memory.

| key | meaning |
| --- | --- |
| documents, seeds, output_documents | source documents, K, renamed documents written |
| substitution_rate, renamed | per coarse type and in total: renamed / entities over all runs |
| kept_reasons | kept entities per ``KeptReason`` value |
| token_length | mean tokens per source and per output document, and the change |
| links | linked entities among those a link can exist for (NUM and TIME are renamed by rule) |
| overlap_policy | entities (and documents with any) kept because their mentions overlap |
| audit | ``audit.Auditor.summary()``: type-constraint checks before and after |
| validation | documents skipped by ``--skip-invalid``, and validation warnings |
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from envbench.core.types import COARSE_TYPES
from envbench.formats.docred import Doc
from envbench.rename.engine import DocInfo, Run
from envbench.rename.numtime import RENAMERS


def _tokens(doc: Doc) -> int:
    return sum(len(s) for s in doc["sents"])


class StatsTally:
    """Counts over source documents (:meth:`add_source`) and renamed runs (:meth:`add_run`)."""

    def __init__(self, seeds: int) -> None:
        self.seeds = seeds
        self.counts: dict[str, Counter[str]] = {t: Counter() for t in (*COARSE_TYPES, "total")}
        self.reasons: Counter[str] = Counter()
        self.documents = self.outputs = 0
        self.source_tokens = self.output_tokens = 0
        self.linkable = self.linked = 0
        self.overlap_entities = self.overlap_documents = 0

    def add_source(self, info: DocInfo) -> None:
        self.documents += 1
        self.source_tokens += _tokens(info.doc)
        linkable = [q for q, c in zip(info.qids, info.coarse) if c not in RENAMERS]
        self.linkable += len(linkable)
        self.linked += sum(q is not None for q in linkable)
        self.overlap_entities += len(info.overlap)
        self.overlap_documents += bool(info.overlap)

    def add_run(self, run: Run, output: Doc) -> None:
        self.outputs += 1
        self.output_tokens += _tokens(output)
        for r in run.rows:
            t = r.coarse if r.coarse in self.counts else "MISC"
            renamed = r.kind != "kept"
            for key in (t, "total"):
                self.counts[key]["entities"] += 1
                self.counts[key]["renamed"] += renamed
            if not renamed and r.reason is not None:
                self.reasons[r.reason.value] += 1

    def as_dict(self, audit: dict[str, Any]) -> dict[str, Any]:
        """Every key of the table above but ``validation``, which the step knows."""
        src_mean = self.source_tokens / self.documents if self.documents else 0.0
        out_mean = self.output_tokens / self.outputs if self.outputs else 0.0
        return {
            "documents": self.documents,
            "seeds": self.seeds,
            "output_documents": self.outputs,
            "substitution_rate": {t: (c["renamed"] / c["entities"] if c["entities"] else 0.0)
                                  for t, c in self.counts.items()},
            "renamed": {t: {"renamed": c["renamed"], "entities": c["entities"]} for t, c in self.counts.items()},
            "kept_reasons": dict(sorted(self.reasons.items())),
            "token_length": {
                "source_mean": round(src_mean, 4),
                "output_mean": round(out_mean, 4),
                "mean_change": round(out_mean - src_mean, 4),
                "relative_change": round((out_mean - src_mean) / src_mean, 6) if src_mean else 0.0,
            },
            "links": {"linked": self.linked, "entities": self.linkable,
                      "coverage": round(self.linked / self.linkable, 6) if self.linkable else 0.0},
            "overlap_policy": {"entities": self.overlap_entities, "documents": self.overlap_documents},
            "audit": audit,
        }


__all__ = ["StatsTally"]
