"""``stats.json`` of a generate run, tallied chunk by chunk so no document has to stay in memory.

| key | meaning |
| --- | --- |
| documents, seeds, output_documents | source documents, K, renamed documents written |
| substitution_rate, renamed | per coarse type and in total: renamed / entities over all runs |
| kept_reasons | kept entities per ``KeptReason`` value |
| token_length | mean tokens per source and per output document, and the change |
| links | linked entities among those a link can exist for (NUM and TIME are renamed by rule) |
| overlap_policy | entities (and documents with any) kept because their mentions overlap |
| p31_overlap | linked substitutes by P31 Jaccard with the entity's item (bins "0", "(0,0.25]" .. "(0.75,1)", "1") and the mean |
| gender | PER entities that were drawn for (renamed, or kept as ``no_candidate``, ``no_demonym``, ``no_gender``): ``persons``, whose gender came ``from_p21``, ``from_document`` (``document_over_p21`` of them against their P21), ``from_context`` (the one gender of the pronouns near it), ``from_name`` (its own given names, read by the lexicon) or is ``unknown``; ``renamed`` of them, ``matched`` (renamed with a known gender and a new item of that gender), and ``kept_no_gender`` (``rename.gender``) |
| demonyms | linked entities, distinct names and mentions paired as demonyms (``demonyms``), and entities kept for want of one (``no_demonym``) |
| written_names | linked entities with new names written from another of their new names (``Row.written``: short names, other spellings, surnames), those names, and the entities renamed by a second draw (``short_names``) |
| audit | ``audit.Auditor.summary()``: type-constraint checks before and after |
| validation | documents skipped by ``--skip-invalid``, and validation warnings |
| names_seen | Table 5 at generation time (below) |

``names_seen`` counts mentions of PER/ORG/LOC/MISC entities, one per mention (not per distinct
name), comparing folded names (``novelty``: either key of a mention): of the renamed mentions
(entities given a new item; NUM and TIME are renamed by rule and left out), how many carry a name
that occurs as a mention name in the ``--exclude-names-from`` documents (``in_excluded``; null
without the option) and in the source documents (``in_source``); and, for comparison, how many of
the source mentions carry a name that occurs in the excluded documents. Shares are the counts over
``mentions``. Each row is given in total and per coarse type (``by_type``). Example: with dev as
the excluded file, ``renamed.in_excluded_share`` 0.05 means 5% of the new names are names a model
trained on dev saw. ``training_names`` says how the run treated training names: ``excluded``
(``--exclude-names-from``), ``allowed`` (``--allow-training-names``: a benchmark built without the check)
or ``train_pool`` (EVRT twins, themselves training data).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from envbench.core.reasons import KeptReason
from envbench.core.types import COARSE_TYPES
from envbench.formats.docred import Doc
from envbench.rename.engine import DocInfo, Row, Run
from envbench.rename.gender import DOCUMENT_OVER_P21, FROM_CONTEXT, FROM_NAME, FROM_P21
from envbench.rename.novelty import NameKey, keys_of
from envbench.rename.numtime import RENAMERS

SEEN_TYPES = ("PER", "ORG", "LOC", "MISC")
# the kept reasons of an entity that was drawn for (a candidate slot), beside the renamed ones
_DRAWN = frozenset({KeptReason.NO_CANDIDATE, KeptReason.NO_DEMONYM, KeptReason.NO_GENDER})  # the entities renamed from the index, as Table 5 counts them


def _tokens(doc: Doc) -> int:
    return sum(len(s) for s in doc["sents"])


P31_BINS = ("0", "(0,0.25]", "(0.25,0.5]", "(0.5,0.75]", "(0.75,1)", "1")


def _p31_bin(j: float) -> str:
    """The P31_BINS label of a Jaccard value."""
    if j <= 0:
        return "0"
    if j >= 1:
        return "1"
    return P31_BINS[1 + min(3, int((j - 1e-12) * 4))]


class StatsTally:
    """Counts over source documents (:meth:`add_source`) and renamed runs (:meth:`add_run`)."""

    def __init__(self, seeds: int, *, excluded: frozenset[NameKey] | None = None,
                 source_names: frozenset[NameKey] = frozenset(), excluded_files: list[str] | None = None,
                 training_names: str | None = None) -> None:
        self.seeds = seeds
        self.excluded, self.source_names = excluded, source_names
        self.excluded_files = excluded_files or []
        self.training_names = training_names or ("excluded" if excluded is not None else "allowed")
        # (row, coarse type) -> mentions, in_excluded, in_source; rows "renamed" and "source"
        self.seen: dict[tuple[str, str], Counter[str]] = {}
        self.counts: dict[str, Counter[str]] = {t: Counter() for t in (*COARSE_TYPES, "total")}
        self.reasons: Counter[str] = Counter()
        self.documents = self.outputs = 0
        self.source_tokens = self.output_tokens = 0
        self.linkable = self.linked = 0
        self.overlap_entities = self.overlap_documents = 0
        self.demonyms: Counter[str] = Counter()
        self.p31: Counter[str] = Counter()
        self.p31_sum = 0.0
        self.gender: Counter[str] = Counter()
        self.written: Counter[str] = Counter()

    def add_source(self, info: DocInfo) -> None:
        self.documents += 1
        self.source_tokens += _tokens(info.doc)
        linkable = [q for q, c in zip(info.qids, info.coarse) if c not in RENAMERS]
        self.linkable += len(linkable)
        self.linked += sum(q is not None for q in linkable)
        self.overlap_entities += len(info.overlap)
        self.overlap_documents += bool(info.overlap)
        for ei, coarse in enumerate(info.coarse):
            if coarse in SEEN_TYPES:
                self._count_mentions("source", coarse, info.doc, info.doc["vertexSet"][ei], with_source=False)

    def _count_mentions(self, row: str, coarse: str, doc: Doc, mentions: list[dict[str, Any]], *,
                        with_source: bool) -> None:
        """Count ``mentions`` of ``doc`` (as written there) in ``names_seen``'s ``row`` for ``coarse``."""
        c = self.seen.get((row, coarse))
        if c is None:  # made once per row and type, not once per call as setdefault would
            c = self.seen[(row, coarse)] = Counter()
        c["mentions"] += len(mentions)
        excluded = self.excluded
        if excluded is None and not with_source:  # nothing to look up: only the count
            return
        # This runs for every mention of every renamed entity of every output document, so the
        # counts are summed here and added once, and the names sets are read inline (``novelty.seen``):
        # Counter updates and calls cost more than the lookups.
        names = self.source_names
        in_excluded = in_source = 0
        for m in mentions:
            span, written = keys_of(doc, m)
            if excluded is not None:
                in_excluded += span in excluded or written in excluded
            if with_source:
                in_source += span in names or written in names
        if excluded is not None:
            c["in_excluded"] += in_excluded
        if with_source:
            c["in_source"] += in_source

    def add_run(self, run: Run, output: Doc) -> None:
        """Count one renamed document: ``output`` is the run's document (``substitute.apply_plan``)."""
        self.outputs += 1
        self.output_tokens += _tokens(output)
        # entities and renamed entities per type, counted over the run and added once per type
        types = [r.coarse if r.coarse in self.counts else "MISC" for r in run.rows]
        renamed_types = [t for t, r in zip(types, run.rows, strict=True) if r.kind != "kept"]
        for field, counted in (("entities", types), ("renamed", renamed_types)):
            for t, n in Counter(counted).items():
                self.counts[t][field] += n
            self.counts["total"][field] += len(counted)
        renamed: dict[str, list[dict[str, Any]]] = {}  # type -> mentions of its renamed linked entities
        for r in run.rows:
            if r.kind == "kept" and r.reason is not None:
                self.reasons[r.reason.value] += 1
            if r.p31_overlap is not None:
                self.p31[_p31_bin(r.p31_overlap)] += 1
                self.p31_sum += r.p31_overlap
            if r.demonym_names:
                names = set(r.demonym_names)
                self.demonyms["entities_paired"] += 1
                self.demonyms["names_paired"] += len(names)
                self.demonyms["mentions_paired"] += sum(m["name"] in names for m in run.info.doc["vertexSet"][r.entity])
            elif r.reason is KeptReason.NO_DEMONYM:
                self.demonyms["entities_kept"] += 1
            if r.written:
                self.written["entities"] += 1
                self.written["names"] += len(r.written)
            if r.second_draw:
                self.written["second_draw"] += 1
            if r.coarse == "PER" and (r.kind == "linked" or r.reason in _DRAWN):
                self._count_gender(r)
            if r.kind == "linked" and r.coarse in SEEN_TYPES:
                renamed.setdefault(r.coarse, []).extend(output["vertexSet"][r.entity])
        for coarse, mentions in renamed.items():  # counted once per type, not once per entity
            self._count_mentions("renamed", coarse, output, mentions, with_source=True)

    def _count_gender(self, r: Row) -> None:
        g = self.gender
        g["persons"] += 1
        if r.gender_from is None:
            g["unknown"] += 1
        else:
            g["from_p21" if r.gender_from == FROM_P21 else "from_context" if r.gender_from == FROM_CONTEXT
              else "from_name" if r.gender_from == FROM_NAME else "from_document"] += 1
            g["document_over_p21"] += r.gender_from == DOCUMENT_OVER_P21
        if r.kind == "linked":
            g["renamed"] += 1
            g["matched"] += r.gender is not None and r.new_gender == r.gender
        g["kept_no_gender"] += r.reason is KeptReason.NO_GENDER

    def names_seen(self) -> dict[str, Any]:
        """``stats.json``'s ``names_seen`` (see the module docstring)."""
        def row(name: str, types: tuple[str, ...]) -> dict[str, Any]:
            total: Counter[str] = Counter()
            for t in types:
                total.update(self.seen.get((name, t), Counter()))
            n = total["mentions"]
            out: dict[str, Any] = {"mentions": n}
            fields = ("in_excluded", "in_source") if name == "renamed" else ("in_excluded",)
            for f in fields:
                known = f == "in_source" or self.excluded is not None
                out[f] = total[f] if known else None
                out[f"{f}_share"] = (round(total[f] / n, 6) if n else 0.0) if known else None
            return out

        return {
            "exclude_names_from": self.excluded_files,
            "training_names": self.training_names,
            "renamed": row("renamed", SEEN_TYPES),
            "source": row("source", SEEN_TYPES),
            "by_type": {t: {"renamed": row("renamed", (t,)), "source": row("source", (t,))} for t in SEEN_TYPES},
        }

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
            "p31_overlap": {"substitutes": sum(self.p31.values()), "bins": {b: self.p31[b] for b in P31_BINS},
                            "mean": round(self.p31_sum / sum(self.p31.values()), 6) if self.p31 else 0.0},
            "demonyms": {k: self.demonyms[k] for k in ("entities_paired", "names_paired", "mentions_paired",
                                                       "entities_kept")},
            "written_names": {k: self.written[k] for k in ("entities", "names", "second_draw")},
            "gender": {k: self.gender[k] for k in ("persons", "from_p21", "from_document", "document_over_p21",
                                                   "from_context", "from_name", "unknown", "renamed", "matched", "kept_no_gender")},
            "audit": audit,
            "names_seen": self.names_seen(),
        }


__all__ = ["P31_BINS", "StatsTally"]
