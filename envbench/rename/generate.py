"""Env-DocRED / Env-Re-DocRED construction: rename every entity of every document K times.

``generate`` links (or reads links), types each linked entity finely, draws same-type
replacements for all (document, seed, entity) slots in batched SQL over the index, substitutes
alias-wise, renames NUM and TIME entities by rule, audits that type constraints met by the gold
triples still hold, and writes::

    OUT/<stem>_env.json        K renamed copies per source document, titled "<title>-k"
    OUT/<stem>_twins.json      with twins=True instead: one renamed twin per document, same title
    OUT/substitutions.parquet  one row per (output title, seed, entity)
    OUT/stats.json             substitution rates, kept reasons, token lengths, audit, overlaps
    OUT/manifest.json          input and output sha256, parameters, package version

Same inputs, index and seeds give byte-identical files. A rerun whose inputs and parameters match
the manifest, with outputs untouched, does nothing unless ``force``.
"""

from __future__ import annotations

import gc
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envbench.core.errors import EnvbenchError
from envbench.core.types import COARSE_TYPES
from envbench.formats.docred import Doc, DocSet, distinct_names, entity_type, read_docs
from envbench.formats.links import read_links
from envbench.formats.substitutions import COLUMNS as SUBSTITUTION_COLUMNS
from envbench.formats.substitutions import write_substitutions
from envbench.rename.audit import Auditor
from envbench.rename.candidates import (
    MAX_WINDOWS,
    POOLS,
    WINDOW,
    CandidateSource,
    ItemNames,
    Slot,
    item_names,
    names_in_pool,
    window_bounds,
)
from envbench.rename.fine_types import fine_types
from envbench.rename.numtime import RENAMERS, TEMPORAL_PAIRS, DateValue, date_value, order_kept, rename_times
from envbench.rename.substitute import (
    NewName,
    apply_plan,
    mention_tokens,
    name_key,
    overlapping_entities,
    pair_names,
    self_overlapping_entities,
)
from etl.io import COMPRESSED_SUFFIXES, dumps_json, read_json, sha256_bytes, sha256_file
from etl.manifest import build_manifest, describe_file
from wikidata_index.names import fold
from wikidata_index.schema import TABLES

NUMTIME_ATTEMPTS = 50
CHUNK_RUNS = 25_000  # (document, seed) runs drawn together; bounds memory, not results
DERIVED_DIR = "derived"  # inside the index: the candidate numbering cache (see candidates.CandidateSource)
INDEX_TABLES = ("entities", "names", "types", "subclasses", "property_constraints")

# Why an entity kept its names (the substitutions.parquet "reason" column).
REASONS = {
    "overlap": "a mention overlaps a mention of another entity (overlap policy)",
    "unlinked": "no Wikidata item (no link, or the linker abstained)",
    "no_type": "the item has no P31 value in the index",
    "no_candidate": "no eligible same-type item passed the checks",
    "no_rule": "no NUM/TIME rule applies to the written value",
    "no_valid_value": "every rule-based value clashed with the document or the temporal order",
}


@dataclass
class GenerateResult:
    out: Path
    files: list[Path]
    documents: int
    seeds: int
    stats: dict[str, Any]
    up_to_date: bool = False
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage (not written to files)

    def summary(self) -> str:
        if self.up_to_date:
            return (f"{self.out} is up to date (same inputs, index and parameters); nothing to do. "
                    "Pass --force to regenerate.")
        rate = self.stats["substitution_rate"]
        renamed = self.stats["renamed"]
        lines = [
            f"{self.documents} documents x {self.seeds} seeds -> {self.stats['output_documents']} documents "
            f"in {self.seconds:.1f} s",
            "type   renamed / entities   rate",
        ]
        for t in (*COARSE_TYPES, "total"):
            n = renamed[t]
            lines.append(f"{t:<6} {n['renamed']:>7} / {n['entities']:<10} {rate[t]:.3f}")
        if self.stats["kept_reasons"]:
            kept = ", ".join(f"{k} {v}" for k, v in sorted(self.stats["kept_reasons"].items()))
            lines.append(f"kept: {kept}")
        audit = self.stats["audit"]["total"]
        lines.append(f"audit: {audit['held_after']}/{audit['held_before']} constraint checks preserved, "
                     f"{audit['rejected']} candidates rejected and redrawn")
        lines.extend(f"wrote {p}" for p in self.files)
        return "\n".join(lines)


def stem_of(path: str | os.PathLike[str]) -> str:
    name = Path(path).name
    for suffix in COMPRESSED_SUFFIXES:
        name = name.removesuffix(suffix)
    return name.removesuffix(".json")


def respell(name: str, old: list[str], new: list[str]) -> str:
    """The new tokens written with the old name's spacing ("7%" -> "1%", not "1 %").

    Falls back to the tokens joined by spaces when the old tokens cannot be found in order in the
    name (a name that does not spell its tokens).
    """
    if len(old) != len(new):
        return " ".join(new)
    parts: list[str] = []
    pos = 0
    for o, n in zip(old, new):
        start = name.find(o, pos)
        if start < 0 or name[pos:start].strip():
            return " ".join(new)
        parts += [name[pos:start], n]
        pos = start + len(o)
    if name[pos:].strip():
        return " ".join(new)
    return "".join(parts) + name[pos:]


# ---------------------------------------------------------------------------- per-document state
class _DocInfo:
    """What every seed of one source document shares."""

    def __init__(self, order: int, doc: Doc, qids: list[str | None], ftypes: dict[str, str]) -> None:
        self.order = order
        self.doc = doc
        self.title = doc["title"]
        self.overlap = overlapping_entities(doc) | self_overlapping_entities(doc)
        self.qids = qids
        self.ftypes = ftypes
        self.coarse = [entity_type(e) for e in doc["vertexSet"]]
        self.names = [distinct_names(e) for e in doc["vertexSet"]]
        self.tokens = [mention_tokens(doc, e) for e in doc["vertexSet"]]
        self._ngrams: dict[int, set[tuple[str, ...]]] = {}
        self._folded = [[name_key([t])[0] for t in s] for s in doc["sents"]]
        # (start entity, end entity) pairs whose order must survive (same head, TEMPORAL_PAIRS)
        by_head: dict[tuple[int, str], set[int]] = {}
        for lab in doc.get("labels", []) or []:
            by_head.setdefault((lab["h"], lab["r"]), set()).add(lab["t"])
        self.order_pairs: list[tuple[int, int]] = sorted(
            (a, b)
            for (h, r), ts in by_head.items()
            for start, end in TEMPORAL_PAIRS
            if r == start
            for a in ts
            for b in by_head.get((h, end), ())
            if a != b
        )

    def occurs(self, key: tuple[str, ...]) -> bool:
        """Whether the token sequence occurs anywhere in the source document (folded)."""
        n = len(key)
        grams = self._ngrams.get(n)
        if grams is None:
            grams = {tuple(s[i:i + n]) for s in self._folded for i in range(len(s) - n + 1)}
            self._ngrams[n] = grams
        return key in grams

    def date(self, ei: int, tokens: dict[str, list[str]] | None = None) -> DateValue | None:
        toks = tokens if tokens is not None else self.tokens[ei]
        values = [v for t in toks.values() if (v := date_value(t)) is not None]
        return max(values, key=lambda v: len(v.parts())) if values else None


@dataclass
class _Row:
    entity: int
    coarse: str
    kind: str
    reason: str | None
    qid: str | None
    fine_type: str | None
    new_qid: str | None
    old_names: list[str]
    new_names: list[str]


@dataclass
class _Run:
    """One (source document, seed): entities are settled in index order."""

    info: _DocInfo
    seed: int
    title: str
    slots: dict[int, int]  # entity -> slot index
    cursor: int = 0
    window: int = 0  # window number being read for the current entity
    taken: set[tuple[str, ...]] = field(default_factory=set)
    plan: dict[int, dict[str, NewName]] = field(default_factory=dict)
    new_tokens: dict[int, dict[str, list[str]]] = field(default_factory=dict)
    rows: list[_Row] = field(default_factory=list)
    new_items: dict[int, str] = field(default_factory=dict)
    times_done: bool = False  # TIME entities are settled together, before the others


class _Generator:
    def __init__(self, con: Any, infos: list[_DocInfo], seeds: list[int], pool: str, twins: bool,
                 cache_dir: Path | None = None, fingerprint: str | None = None) -> None:
        self.con = con
        self.infos = infos
        self.auditor = Auditor.for_docs(con, [i.doc for i in infos])
        self.slots: list[Slot] = []
        self.runs: list[_Run] = []
        for info in infos:
            for k in seeds:
                slots: dict[int, int] = {}
                for ei, q in enumerate(info.qids):
                    if q is None or ei in info.overlap or info.coarse[ei] in RENAMERS or q not in info.ftypes:
                        continue
                    slots[ei] = len(self.slots)
                    self.slots.append(Slot(info.ftypes[q], len(info.names[ei]), pool, q, k, info.title, ei))
                title = info.title if twins else f"{info.title}-{k}"
                self.runs.append(_Run(info, k, title, slots))
        self.source = CandidateSource(con, self.slots, cache_dir=cache_dir, fingerprint=fingerprint)
        self.pool = pool
        self.eval_names: set[str] = set()  # folded names of eval-pool items (train pool only)
        self.cache: dict[tuple[int, int], list[str]] = {}
        self.item_names: dict[str, ItemNames] = {}
        originals = sorted({q for i in infos for q in i.qids if q is not None})
        self.auditor.prepare(originals)
        self.required: dict[tuple[int, int], list[tuple[str, str]]] = {}

    def fetch(self, requests: list[tuple[int, int]]) -> None:
        # a slot that needs a second window is likely a hard one: fetch all its remaining windows
        # at once, so a document costs at most one extra round per hard entity
        wanted = [(si, v) for si, w in requests for v in ([w] if w == 0 else range(w, MAX_WINDOWS))]
        got = self.source.windows(wanted)
        new_qids = sorted({q for lst in got.values() for q in lst} - self.item_names.keys())
        fetched = item_names(self.con, new_qids)
        self.item_names.update(fetched)
        if self.pool == "train":
            names = {n for v in fetched.values() for n in (v.label, *v.aliases)}
            self.eval_names |= names_in_pool(self.con, names, "eval")
        self.auditor.prepare(new_qids)
        self.cache.update(got)

    def run_all(self, progress: bool) -> None:
        from tqdm import tqdm

        bar = tqdm(total=len(self.runs), desc="generate", unit="doc", disable=not progress, file=sys.stderr)
        # Runs never depend on each other, so they go in chunks that bound the memory held for
        # candidates (DocRED's distant training set has 100k documents); results do not depend on it.
        for start in range(0, len(self.runs), CHUNK_RUNS):
            active = self.runs[start:start + CHUNK_RUNS]
            self.fetch([(si, 0) for run in active for si in run.slots.values()])
            while active:
                requests: list[tuple[int, int]] = []
                still: list[_Run] = []
                for run in active:
                    req = self.advance(run)
                    if req is None:
                        bar.update(1)
                    else:
                        requests.append(req)
                        still.append(run)
                if requests:
                    self.fetch(requests)
                active = still
            self.cache.clear()
            self.item_names.clear()
        bar.close()

    # ------------------------------------------------------------------ one entity at a time
    def advance(self, run: _Run) -> tuple[int, int] | None:
        """Settle entities until a window is missing (returned) or the run is done (None)."""
        info = run.info
        n = len(info.doc["vertexSet"])
        if not run.times_done:
            self.settle_times(run)
            run.times_done = True
        while run.cursor < n:
            ei = run.cursor
            if ei in run.slots:
                need = self.settle_linked(run, ei)
                if need is not None:
                    return need
            elif info.coarse[ei] != "TIME" or ei in info.overlap:
                self.settle_other(run, ei)
            run.cursor += 1
            run.window = 0
        return None

    def _keep(self, run: _Run, ei: int, reason: str) -> None:
        info = run.info
        q = info.qids[ei]
        run.rows.append(_Row(ei, info.coarse[ei], "kept", reason, q,
                             info.ftypes.get(q) if q else None, None, info.names[ei], info.names[ei]))

    def settle_other(self, run: _Run, ei: int) -> None:
        info = run.info
        coarse = info.coarse[ei]
        if ei in info.overlap:
            return self._keep(run, ei, "overlap")
        renamer = RENAMERS.get(coarse)
        if renamer is None:
            q = info.qids[ei]
            return self._keep(run, ei, "unlinked" if q is None else "no_type")
        old = info.tokens[ei]
        any_rule = False
        for attempt in range(NUMTIME_ATTEMPTS):
            new = renamer(old, run.seed, info.title, ei, attempt)
            if new is None:
                break
            any_rule = True
            keys = [name_key(t) for nm, t in new.items() if t != old[nm]]
            if len(set(keys)) != len(keys) or any(k in run.taken or info.occurs(k) for k in keys):
                continue
            plan = {nm: NewName(respell(nm, old[nm], t), tuple(t)) for nm, t in new.items() if t != old[nm]}
            run.plan[ei] = plan
            run.new_tokens[ei] = new
            run.taken.update(keys)
            names = [plan[nm].name if nm in plan else nm for nm in info.names[ei]]
            run.rows.append(_Row(ei, coarse, coarse.lower(), None, None, None, None, info.names[ei], names))
            return None
        return self._keep(run, ei, "no_valid_value" if any_rule else "no_rule")

    def settle_times(self, run: _Run) -> None:
        """Rename every TIME entity of the run with one document-level shift (numtime.rename_times).

        Attempts redraw the shift until no new name clashes (with the source document, another
        entity's new name, or itself) and no temporal pair is reversed. When every attempt fails,
        the attempt with the fewest failing entities is used and those keep their names.
        """
        info = run.info
        todo = {ei: info.tokens[ei] for ei, c in enumerate(info.coarse) if c == "TIME" and ei not in info.overlap}
        if not todo:
            return
        best: tuple[dict[int, dict[str, list[str]] | None], set[int]] | None = None
        for attempt in range(NUMTIME_ATTEMPTS):
            renamed = rename_times(todo, run.seed, info.title, attempt)
            failed = self._time_failures(run, renamed)
            if best is None or len(failed) < len(best[1]):
                best = (renamed, failed)
            if not failed:
                break
        assert best is not None
        renamed, failed = best
        for ei in todo:
            new = renamed[ei]
            if new is None:
                self._keep(run, ei, "no_rule")
            elif ei in failed:
                self._keep(run, ei, "no_valid_value")
            else:
                old = todo[ei]
                plan = {nm: NewName(respell(nm, old[nm], t), tuple(t)) for nm, t in new.items() if t != old[nm]}
                run.plan[ei] = plan
                run.new_tokens[ei] = new
                run.taken.update(name_key(p.tokens) for p in plan.values())
                names = [plan[nm].name if nm in plan else nm for nm in info.names[ei]]
                run.rows.append(_Row(ei, "TIME", "time", None, None, None, None, info.names[ei], names))

    def _time_failures(self, run: _Run, renamed: dict[int, dict[str, list[str]] | None]) -> set[int]:
        """TIME entities whose new names clash; then, keeping those, entities that reverse a pair."""
        info = run.info
        # new name -> (old name, entity): two names (of one entity or two) may share a new value only
        # when they shared the old one (the same date written twice), which the shared shift keeps equal
        owner: dict[tuple[str, ...], tuple[tuple[str, ...], int]] = {}
        failed: set[int] = set()
        for ei, new in renamed.items():
            if new is None:
                continue
            pairs = [(name_key(info.tokens[ei][nm]), name_key(t)) for nm, t in new.items() if t != info.tokens[ei][nm]]
            if any(k in run.taken or info.occurs(k) for _, k in pairs):
                failed.add(ei)
            for old_key, k in pairs:
                first = owner.setdefault(k, (old_key, ei))
                if first[0] != old_key:
                    failed.update((ei, first[1]))

        def value(e: int) -> DateValue | None:
            new = renamed.get(e)
            return info.date(e, new if new is not None and e not in failed else None)

        while True:  # a kept entity keeps its old date, which its partner's new date must respect
            more = {b if b in renamed and b not in failed else a
                    for a, b in info.order_pairs
                    if not order_kept(info.date(a), info.date(b), value(a), value(b))}
            more -= failed
            if not more:
                return failed
            failed |= more

    def settle_linked(self, run: _Run, ei: int) -> tuple[int, int] | None:
        info = run.info
        si = run.slots[ei]
        slot = self.slots[si]
        q = info.qids[ei]
        assert q is not None
        key = (info.order, ei)
        if key not in self.required:
            self.required[key] = self.auditor.required(q, self.auditor.entity_checks(info.doc, ei))
        required = self.required[key]
        total = self.source.total(slot)
        while run.window < MAX_WINDOWS and window_bounds(run.window)[0] < total:
            window = self.cache.get((si, run.window))
            if window is None:
                return (si, run.window)
            for cand in window:
                names = self.item_names.get(cand)
                if names is None:
                    continue
                mapping = pair_names(info.names[ei], names.label, names.aliases)
                if mapping is None:
                    continue
                keys = [name_key(nn.tokens) for nn in mapping.values()]
                if any(k in run.taken or info.occurs(k) for k in keys):
                    continue
                if self.eval_names and any(fold(nn.name) in self.eval_names for nn in mapping.values()):
                    continue  # a benchmark item has this name: training twins must not use it
                failed = self.auditor.first_failure(cand, required)
                if failed is not None:
                    self.auditor.reject(failed[0])
                    continue
                run.plan[ei] = mapping
                run.taken.update(keys)
                run.new_items[ei] = cand
                run.rows.append(_Row(ei, info.coarse[ei], "linked", None, q, slot.fine_type, cand,
                                     info.names[ei], [mapping[nm].name for nm in info.names[ei]]))
                return None
            run.window += 1
        self._keep(run, ei, "no_candidate")
        return None


# ---------------------------------------------------------------------------- outputs
def _substitution_columns(rows: list[tuple[_Run, _Row]]) -> dict[str, list[Any]]:
    cols: dict[str, list[Any]] = {name: [] for name, _ in SUBSTITUTION_COLUMNS}
    for run, r in rows:
        for k, v in (("title", run.title), ("source_title", run.info.title), ("seed", run.seed),
                     ("entity", r.entity), ("coarse_type", r.coarse), ("kind", r.kind), ("reason", r.reason),
                     ("qid", r.qid), ("fine_type", r.fine_type), ("new_qid", r.new_qid),
                     ("old_names", r.old_names), ("new_names", r.new_names)):
            cols[k].append(v)
    return cols


def _stats(gen: _Generator, outputs: list[Doc], seeds: int) -> dict[str, Any]:
    counts = {t: Counter() for t in (*COARSE_TYPES, "total")}
    reasons: Counter[str] = Counter()
    for run in gen.runs:
        for r in run.rows:
            t = r.coarse if r.coarse in counts else "MISC"
            renamed = r.kind != "kept"
            for key in (t, "total"):
                counts[key]["entities"] += 1
                counts[key]["renamed"] += renamed
            if not renamed:
                reasons[r.reason or "?"] += 1

    def ntok(d: Doc) -> int:
        return sum(len(s) for s in d["sents"])

    src = [ntok(i.doc) for i in gen.infos]
    out = [ntok(d) for d in outputs]
    src_mean = sum(src) / len(src) if src else 0.0
    out_mean = sum(out) / len(out) if out else 0.0
    # coverage over the entities a link can exist for (NUM and TIME are renamed by rule)
    linkable = [(q, c) for i in gen.infos for q, c in zip(i.qids, i.coarse) if c not in RENAMERS]
    linked = sum(q is not None for q, _ in linkable)
    entities = len(linkable)
    return {
        "documents": len(gen.infos),
        "seeds": seeds,
        "output_documents": len(outputs),
        "substitution_rate": {t: (c["renamed"] / c["entities"] if c["entities"] else 0.0) for t, c in counts.items()},
        "renamed": {t: {"renamed": c["renamed"], "entities": c["entities"]} for t, c in counts.items()},
        "kept_reasons": dict(sorted(reasons.items())),
        "token_length": {
            "source_mean": round(src_mean, 4),
            "output_mean": round(out_mean, 4),
            "mean_change": round(out_mean - src_mean, 4),
            "relative_change": round((out_mean - src_mean) / src_mean, 6) if src_mean else 0.0,
        },
        "links": {"linked": linked, "entities": entities,
                  "coverage": round(linked / entities, 6) if entities else 0.0},
        "overlap_policy": {
            "entities": sum(len(i.overlap) for i in gen.infos),
            "documents": sum(bool(i.overlap) for i in gen.infos),
        },
        "audit": gen.auditor.summary(),
    }


def index_fingerprint(index_path: Path) -> str:
    """sha256 over the index's table files (from its manifest when it lists them, else hashed here).

    The index manifest also carries timings, so hashing the manifest file itself would make two
    ingests of one dump look different.
    """
    man = index_path / "manifest.json"
    listed = read_json(man, what="index manifest").get("outputs") if man.is_file() else None
    if not listed:
        listed = [describe_file(p, relative_to=index_path)
                  for t in sorted(TABLES) for p in sorted((index_path / t).glob("*.parquet"))]
    files = sorted((o["name"], o["sha256"]) for o in listed if str(o["name"]).endswith(".parquet"))
    return sha256_bytes(dumps_json(files))


def require_documents(docset: DocSet) -> None:
    """An empty input is a mistake (a wrong file, or every document invalid), not an empty benchmark."""
    if docset.docs:
        return
    if docset.skipped:
        raise EnvbenchError(f"{docset.path}: all {len(docset.skipped)} documents are invalid and were skipped; "
                            "run without --skip-invalid to see the first problem")
    raise EnvbenchError(f"{docset.path}: holds no documents; give a DocRED-format file with at least one document")


def check_writable(path: str | os.PathLike[str], option: str, *, folder: bool = False) -> None:
    """Fail before any work unless ``path`` (a file, or with ``folder`` a folder) can be written.

    Probes the nearest existing folder with a temporary file, so a long run never ends in an
    error about an unwritable output (and never leaves one output written and another missing).
    """
    target = Path(path)
    if folder and target.exists() and not target.is_dir():
        raise EnvbenchError(f"{option} {path}: a file has that name; choose a folder path")
    if not folder and target.is_dir():
        raise EnvbenchError(f"{option} {path}: a folder has that name; choose a file path")
    base = target if folder else target.parent
    while not base.exists() and base != base.parent:
        base = base.parent
    if not base.is_dir():
        raise EnvbenchError(f"{option} {path}: {base} is a file, not a folder; choose another path")
    try:
        fd, probe = tempfile.mkstemp(prefix=".envbench-probe-", dir=base)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise EnvbenchError(f"{option} {path}: cannot write in {base} ({exc.strerror or exc}); "
                            "choose a location you can write to") from None


def _same_as_before(out: Path, manifest: dict[str, Any]) -> bool:
    old_path = out / "manifest.json"
    if not old_path.is_file():
        return False
    try:
        import orjson

        old = orjson.loads(old_path.read_bytes())
    except ValueError:
        return False
    for key in ("step", "package_version", "inputs", "parameters", "index"):
        if old.get(key) != manifest.get(key):
            return False
    for o in old.get("outputs", []):
        p = out / o["name"]
        if not p.is_file() or sha256_file(p) != o["sha256"]:
            return False
    return bool(old.get("outputs"))


def generate(
    docs_path: str | os.PathLike[str],
    index_path: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    links: str | os.PathLike[str] | None = None,
    seeds: int = 5,
    pool: str = "eval",
    twins: bool = False,
    force: bool = False,
    progress: bool = True,
    skip_invalid: bool = False,
) -> GenerateResult:
    """Build the Env benchmark (or EVRT twins) of one DocRED-format file; see the module docstring."""
    t0 = time.perf_counter()
    if not isinstance(seeds, int) or seeds < 1:
        raise EnvbenchError(f"--seeds must be at least 1 (got {seeds}); pass --seeds 5 for the Env-DocRED setting")
    if pool not in POOLS:
        raise EnvbenchError(f"--pool must be one of {', '.join(POOLS)} (got {pool!r})")
    if twins and seeds != 1:
        raise EnvbenchError(f"--twins writes one renamed twin per document, so it needs --seeds 1 (got {seeds})")
    docs_path, index_path, out = Path(docs_path), Path(index_path), Path(out)
    if links is not None and not Path(links).is_file():
        raise EnvbenchError(f"--links {links}: no such file; check the path, or leave --links out to link "
                            "the entities with `envbench link`'s linker")
    check_writable(out, "--out", folder=True)
    docset = read_docs(docs_path, skip_invalid=skip_invalid)
    require_documents(docset)

    # Millions of small objects and no cycles: the cyclic GC would rescan them over and over.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _generate(docs_path, index_path, out, docset, links, seeds, pool, twins, force, progress,
                         skip_invalid, t0)
    finally:
        if gc_was_enabled:
            gc.enable()


def _generate(docs_path: Path, index_path: Path, out: Path, docset: DocSet,
              links: str | os.PathLike[str] | None, seeds: int, pool: str, twins: bool, force: bool,
              progress: bool, skip_invalid: bool, t0: float) -> GenerateResult:
    from wikidata_index.index import WikidataIndex

    docs = docset.docs
    timings: dict[str, float] = {}

    def lap(name: str, since: list[float] = [t0]) -> None:  # noqa: B006 - a running clock
        now = time.perf_counter()
        timings[name] = round(now - since[0], 3)
        since[0] = now

    lap("read")
    with WikidataIndex(index_path) as index:
        index.con.execute("SET enable_progress_bar = false")
        index.require(*INDEX_TABLES)
        if links is None:
            index.require("edges")
        parameters = {"seeds": seeds, "pool": pool, "twins": twins, "skip_invalid": skip_invalid,
                      "links": "file" if links is not None else "envbench link", "window": WINDOW,
                      "max_windows": MAX_WINDOWS}
        inputs = [docs_path, *([Path(links)] if links is not None else [])]
        fingerprint = index_fingerprint(index_path)
        extra = {"index": {"tables_sha256": fingerprint}}
        probe = build_manifest(step="generate", inputs=inputs, parameters=parameters, extra=extra)
        if not force and _same_as_before(out, probe):
            return GenerateResult(out, [], len(docs), seeds, {}, up_to_date=True,
                                  seconds=time.perf_counter() - t0)
        if links is not None:
            link_map = read_links(links, docs)
        else:
            from envbench.rename.link import link_documents

            link_map = link_documents(docs, index.con).links
        lap("links")
        qids = sorted({q for v in link_map.values() for q in v if q is not None})
        ftypes = fine_types(index.con, qids)
        lap("fine_types")
        infos = [_DocInfo(i, d, link_map[d["title"]], ftypes) for i, d in enumerate(docs)]
        seed_list = list(range(1, seeds + 1))
        gen = _Generator(index.con, infos, seed_list, pool, twins, cache_dir=index_path / DERIVED_DIR,
                         fingerprint=fingerprint)
        lap(f"candidate_tables ({gen.source.cache_used})")
        gen.run_all(progress and sys.stderr.isatty())
        lap("draw_and_rename")
        outputs: list[Doc] = []
        rows: list[tuple[_Run, _Row]] = []
        for run in gen.runs:  # runs are in (source order, seed) order already
            doc = apply_plan(run.info.doc, run.plan, run.title)
            outputs.append(doc)
            gen.auditor.record(run.info.doc, {e: q for e, q in enumerate(run.info.qids) if q}, run.new_items)
            rows.extend((run, r) for r in sorted(run.rows, key=lambda r: r.entity))
        stats = _stats(gen, outputs, seeds)
        stats["validation"] = {"skipped_documents": len(docset.skipped), "warnings": len(docset.warnings)}
        table = _substitution_columns(rows)
        lap("substitute")

    out.mkdir(parents=True, exist_ok=True)
    main_name = f"{stem_of(docs_path)}_{'twins' if twins else 'env'}.json"
    files = [main_name, "substitutions.parquet", "stats.json"]
    staging = Path(tempfile.mkdtemp(prefix=".generate-", dir=out))
    try:
        (staging / main_name).write_bytes(dumps_json(outputs))
        write_substitutions(table, staging / "substitutions.parquet")
        (staging / "stats.json").write_bytes(dumps_json(stats, indent=True))
        # the inputs were hashed for the up-to-date probe; only the outputs are new
        manifest = {**probe, "outputs": [describe_file(staging / f, relative_to=staging) for f in sorted(files)]}
        (staging / "manifest.json").write_bytes(dumps_json(manifest, indent=True))
        # the old manifest goes first and the new one last, so a crash in between is never "up to date"
        if (out / "manifest.json").exists():
            (out / "manifest.json").unlink()
        for f in [*files, "manifest.json"]:
            os.replace(staging / f, out / f)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    lap("write")
    paths = [out / f for f in [*files, "manifest.json"]]
    return GenerateResult(out, paths, len(docs), seeds, stats, seconds=time.perf_counter() - t0, timings=timings)


__all__ = ["GenerateResult", "REASONS", "check_writable", "require_documents", "generate", "index_fingerprint", "stem_of"]
