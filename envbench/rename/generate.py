"""Env-DocRED / Env-Re-DocRED construction: rename every entity of every document K times.

``generate`` links (or reads links), types each linked entity finely, draws same-type
replacements in batched SQL over the index, substitutes alias-wise, renames NUM and TIME entities
by rule, audits that type constraints met by the gold triples still hold (the per-entity rule is
``engine``'s), and writes::

    OUT/<stem>_env.json        K renamed copies per source document, titled "<title>-k"
    OUT/<stem>_twins.json      with twins=True instead: one renamed twin per document, same title
    OUT/substitutions.parquet  one row per (output title, seed, entity)
    OUT/stats.json             substitution rates, kept reasons, token lengths, audit, overlaps, names seen
                               (Table 5: new names that occur in the excluded or source documents; ``stats``)
    OUT/manifest.json          inputs, parameters, index fingerprint (``identity``), output sha256s

Same inputs, index and seeds give byte-identical files. The outputs go through ``etl.step.Step``:
OUT is locked for the run, no input may be one of its outputs, a rerun whose inputs, parameters
and index match the manifest (outputs untouched) does nothing unless ``force``, and the files are
staged and published together, the manifest last. Documents are renamed in chunks of about
``CHUNK_RUNS`` runs and written as they are done, so memory stays bounded by the chunk, not by the
input; chunking never changes a byte of the outputs. ``exclude_names_from`` (inputs of the step,
hashed into the manifest) keeps new names off the mention names of other documents, such as a
model's training split (``novelty``); twins require it: the documents a model trained on them is
scored on (the test file and its Env version), whose names no twin may take.
"""

from __future__ import annotations

import contextlib
import gc
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from envbench.core.attacks import Attack, make_attack
from envbench.core.checks import check_choice, check_seeds
from envbench.core.errors import EnvbenchError
from envbench.core.text import tokenizer_version, use_stored_tokens, warm_up
from envbench.core.types import COARSE_TYPES, LINKED_TYPES
from envbench.formats.docred import Doc, entity_type, read_docs, require_documents
from envbench.formats.files import JsonListWriter, stem_of
from envbench.formats.links import read_link_file
from envbench.formats.provenance import describe as describe_provenance
from envbench.formats.provenance import index_provenance
from envbench.formats.substitutions import FILE_NAME as SUBSTITUTIONS
from envbench.formats.substitutions import write_substitutions
from envbench.rename.articles import written_bare
from envbench.rename.attacks import require_popularity, settle
from envbench.rename.audit import Auditor
from envbench.rename.candidates import MAX_WINDOWS, POOLS, WINDOW
from envbench.rename.common_words import written_common
from envbench.rename.engine import DocInfo, Renamer, progress_bar, substitution_table
from envbench.rename.fine_types import fine_types
from envbench.rename.link import check_links_against_index
from envbench.rename.novelty import excluded_names, mention_keys
from envbench.rename.stats import StatsTally
from envbench.rename.substitute import apply_plan
from etl.io import dumps_json
from etl.step import MANIFEST, Step, check_writable

CHUNK_RUNS = 5_000  # (document, seed) runs settled together: bounds memory, never changes results
DERIVED_DIR = "derived"  # inside the index: the candidate numbering cache (see candidates.CandidateSource)
INDEX_TABLES = ("entities", "names", "types", "subclasses", "property_constraints")


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
    notes: list[str] = field(default_factory=list)  # warnings: skipped documents

    def summary(self) -> str:
        if self.up_to_date:
            return (f"{self.out} is up to date (same inputs, index and parameters); nothing to do. "
                    "Pass --force to regenerate.")
        rate, renamed = self.stats["substitution_rate"], self.stats["renamed"]
        def n(count: int, word: str) -> str:  # "1 seed", "5 seeds"
            return f"{count} {word}{'' if count == 1 else 's'}"

        lines = [f"{n(self.documents, 'document')} x {n(self.seeds, 'seed')} -> "
                 f"{n(self.stats['output_documents'], 'document')} in {self.seconds:.1f} s"]
        if (attack := self.stats.get("attack")) is not None:
            lines.append(f"attack: {Attack(attack['name'], attack['rate'], attack['popularity']).label()}")
        lines.append("type   renamed / entities   rate")
        for t in (*COARSE_TYPES, "total"):
            lines.append(f"{t:<6} {renamed[t]['renamed']:>7} / {renamed[t]['entities']:<10} {rate[t]:.3f}")
        gender = self.stats.get("gender") or {}
        if gender.get("persons"):
            lines.append(f"persons: gender from P21 {gender['from_p21']}, from the document {gender['from_document']} "
                         f"({gender['document_over_p21']} over P21), from the pronouns near them "
                         f"{gender.get('from_context', 0)}, unknown {gender['unknown']}; "
                         f"{gender['matched']} of {gender['renamed']} renamed matched on gender")
        if self.stats["kept_reasons"]:
            lines.append("kept: " + ", ".join(f"{k} {v}" for k, v in sorted(self.stats["kept_reasons"].items())))
        audit = self.stats["audit"]["total"]
        lines.append(f"audit: {audit['held_after']}/{audit['held_before']} constraint checks preserved, "
                     f"{audit['rejected']} candidates rejected and redrawn")
        seen = self.stats["names_seen"]
        if seen["exclude_names_from"]:
            lines.append(f"names seen in {', '.join(seen['exclude_names_from'])}: "
                         f"{seen['renamed']['in_excluded_share']:.1%} of {seen['renamed']['mentions']} renamed "
                         f"mentions (source mentions: {seen['source']['in_excluded_share']:.1%})")
        lines += [f"warning: {n}" for n in self.notes] + [f"wrote {p}" for p in self.files]
        return "\n".join(lines)


def index_fingerprint(index_path: Path) -> str:
    """sha256 over the index's table files, hashed from the files (remembered per file), so a
    swapped or edited table file is an error, never "up to date": see wikidata_index.index."""
    from wikidata_index.index import index_fingerprint as from_files

    return from_files(index_path)


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
    exclude_names_from: Sequence[str | os.PathLike[str]] = (),
    allow_training_names: bool = False,
    attack: str = "rename",
    rate: float = 1.0,
    popularity: str | None = None,
) -> GenerateResult:
    """Build the Env benchmark (or EVRT twins) of one DocRED-format file; see the module docstring.
    ``attack``, ``rate`` and ``popularity`` choose another attack than the Env renaming (``attacks``).

    A benchmark (``pool="eval"``) measures names a model has not seen, so an attack that draws new names
    (rename, type-swap) needs the documents the models train on (``exclude_names_from``), or
    ``allow_training_names`` to build it without that check, which ``stats.json``
    (``names_seen.training_names``) and the manifest record."""
    t0 = time.perf_counter()
    check_seeds(seeds)
    check_choice(pool, POOLS, "--pool")
    spec = make_attack(attack, rate, popularity, twins=twins)
    if twins and seeds != 1:
        raise EnvbenchError(f"--twins writes one renamed twin per document, so it needs --seeds 1 (got {seeds})")
    if twins and pool != "train":
        # EVRT's twins must share no name with a benchmark (the paper's rule): the eval pool is the benchmarks'
        raise EnvbenchError("--twins draws EVRT training twins, whose names no benchmark may share; pass --pool train")
    if twins and not exclude_names_from:
        # a twin named like a scored document teaches the EVRT arm that name and not the vanilla arm (issue 60)
        raise EnvbenchError("--twins: pass the documents the models trained on these twins are scored on as "
                            "--exclude-names-from (the test file and its Env version), so that no twin takes "
                            "one of their names")
    docs_path, index_path, out = Path(docs_path), Path(index_path), Path(out)
    if links is not None and not Path(links).is_file():
        raise EnvbenchError(f"--links {links}: no such file; check the path, or leave --links out to link "
                            "the entities with `envbench link`'s linker")
    excludes = [Path(p) for p in exclude_names_from]
    check_training_names(pool, excludes, allow_training_names, spec.name)
    for p in excludes:
        if not p.is_file():
            raise EnvbenchError(f"--exclude-names-from {p}: no such file; give a DocRED-format file whose "
                                "mention names the new names must avoid (a model's training split)")
    check_writable(out, "--out", folder=True)
    if out.resolve().is_relative_to(index_path.resolve()):  # the outputs would land among the index's files
        raise EnvbenchError(f"--out {out}: it is the index folder {index_path} or a folder inside it; "
                            "choose an output folder outside the index")
    parameters = {"seeds": seeds, "pool": pool, "twins": twins, "skip_invalid": skip_invalid,
                  "links": "file" if links is not None else "envbench link", "window": WINDOW,
                  "max_windows": MAX_WINDOWS, "exclude_names_from": [p.name for p in excludes],
                  "allow_training_names": allow_training_names}
    if not spec.is_default:  # the Env benchmark's manifest stays as it was
        parameters["attack"] = spec.record()
    main = f"{stem_of(docs_path)}_{'twins' if twins else 'env'}.json"
    inputs = [docs_path, *([Path(links)] if links is not None else []), *excludes]
    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of small objects and no cycles: the cyclic GC would rescan them over and over
    try:
        docs, validation, notes = _read(docs_path, skip_invalid)  # parsing alone makes millions of them
        n_docs = len(docs)
        with _lifecycle(index_path, out, [main, SUBSTITUTIONS, "stats.json"], inputs, parameters,
                        need_edges=links is None, force=force) as (step, index, fingerprint):
            if not force:  # after the step's own checks (an input that is an output is named as such)
                _check_other_benchmark(out, main)
            if step.up_to_date:
                return GenerateResult(out, [], n_docs, seeds, {}, up_to_date=True, seconds=time.perf_counter() - t0)
            if spec.popularity is not None:
                require_popularity(index.con, index_path)
            made = index.name_tokenizer_facts()
            stored_tokens = use_stored_tokens(made)
            if made and not stored_tokens:  # the table is there but not for this spaCy: say why it is slower
                notes.append(stale_tokens_note(index_path, made.get("tokenizer")))
            if not index.has("genders"):  # made before P21 was ingested: persons keep no gender
                notes.append(f"{index_path}: the index has no genders table (P21), so no candidate's gender is "
                             f"known and persons may change gender; rerun `envbench ingest-dump DUMP --out "
                             f"{index_path} --force` to read P21")
            if not stored_tokens:
                # spaCy's tokenizer loads while DuckDB numbers the candidates (not before: a run that is up
                # to date or stops on bad input should not leave a thread importing at exit)
                warm_up()
            clock = _Clock(t0)
            excluded = excluded_names(excludes) if excludes else None
            tally = StatsTally(seeds, excluded=excluded, source_names=frozenset(mention_keys(docs)),
                               excluded_files=[p.name for p in excludes],
                               training_names=training_names(pool, excludes, allow_training_names))
            renamer = Renamer(index.con, Auditor.for_docs(index.con, docs), pool, cache_dir=index_path / DERIVED_DIR,
                              fingerprint=fingerprint, excluded=excluded or frozenset(), stored_tokens=stored_tokens,
                              popularity=spec.popularity, bare=written_bare(docs),
                              common_words=written_common(docs))
            stats = _write(renamer, docs, links, seeds, twins, progress, step, main, clock,
                           tally, notes, index_path, spec)
            stats["validation"] = validation
            stats["provenance"] = describe_provenance(index_provenance(index.manifest()))
            if not spec.is_default:
                stats["attack"] = spec.record()
            if spec.rate == 1 and (low := low_rate_note(stats, bool(excludes))) is not None:
                notes.append(low)
            if allow_training_names and pool == "eval":
                notes.append(ALLOWED_NOTE)
            step.path("stats.json").write_bytes(dumps_json(stats, indent=True))
    finally:
        if gc_was_enabled:
            gc.enable()
    clock.lap("write")
    files = [out / f for f in (main, SUBSTITUTIONS, "stats.json", MANIFEST)]
    return GenerateResult(out, files, n_docs, seeds, stats, seconds=time.perf_counter() - t0,
                          timings=clock.rounded(), notes=notes)


TRAINING_NAMES = ("excluded", "allowed", "train_pool")  # stats.json's names_seen.training_names
ALLOWED_NOTE = ("--allow-training-names: no new name was kept off a model's training documents, so a renamed "
                "mention may carry a name the model saw (stats.json records it); pass --exclude-names-from "
                "TRAIN.json to build a benchmark of novel names")


DRAWING_ATTACKS = ("rename", "type-swap")  # the attacks whose new names come from the index


def check_training_names(pool: str, excludes: Sequence[Path], allow: bool, attack: str = "rename") -> None:
    """A benchmark for evaluation must say which documents its models train on, or that it does not care.

    Without the training documents, about half the new names of Env-Re-DocRED test (KB from dev + test) were
    mention names of dev, a model's training split there: renaming made names more familiar to the model,
    the opposite of what the benchmark measures (docs/pipeline.md, "Names novel to a trained model")."""
    if allow and excludes:
        raise EnvbenchError("--allow-training-names and --exclude-names-from contradict each other: the second keeps "
                            "the new names off those files; give one of them")
    if pool == "eval" and attack in DRAWING_ATTACKS and not excludes and not allow:
        raise EnvbenchError("--pool eval builds a benchmark of names novel to the models it tests: pass the documents "
                            "they train on with --exclude-names-from TRAIN.json (repeatable: the training split, the "
                            "split for early stopping, EVRT twins), or --allow-training-names to build it without that "
                            "check (recorded in stats.json and manifest.json)")


def training_names(pool: str, excludes: Sequence[Path], allow: bool) -> str:
    """``names_seen.training_names`` of stats.json: "excluded" (--exclude-names-from), "allowed"
    (--allow-training-names) or "train_pool" (EVRT twins, which are training data themselves)."""
    if excludes:
        return "excluded"
    return "allowed" if allow else "train_pool"


LOW_RATE = 0.5  # below this share of linked entity slots renamed, a benchmark is mostly its source


def low_rate_note(stats: Mapping[str, Any], excludes: bool) -> str | None:
    """The warning for a benchmark that renamed under ``LOW_RATE`` of its PER/ORG/LOC/MISC entity slots, or None:
    it would still be written and scored, and a model's "robustness" on it measured on its source's names.
    An --exclude-names-from that holds most of the index's names kept 229 of 229 without a word."""
    renamed = stats["renamed"]
    slots = sum(renamed[t]["entities"] for t in LINKED_TYPES)
    done = sum(renamed[t]["renamed"] for t in LINKED_TYPES)
    if not slots or done >= LOW_RATE * slots:
        return None
    reasons = stats.get("kept_reasons") or {}
    top = ", ".join(f"{k} {v}" for k, v in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))[:3])
    hint = ("--exclude-names-from may hold most of the index's names, " if excludes else "")
    return (f"only {done} of {slots} PER/ORG/LOC/MISC entity slots were renamed ({done / slots:.0%}; kept: {top}); "
            f"the benchmark is mostly its source's names: {hint}check --links and the index")


def _read(docs_path: Path, skip_invalid: bool) -> tuple[list[Doc], dict[str, int], list[str]]:
    """The valid documents, the validation counts and the skip note; the DocSet itself is let go,
    so ``_write`` holds the only reference to each document and frees it with its chunk."""
    docset = read_docs(docs_path, skip_invalid=skip_invalid)
    require_documents(docset)
    note = docset.skip_note()
    return docset.docs, {"skipped_documents": len(docset.skipped), "warnings": len(docset.warnings)}, \
        [note] if note else []


def _misfit_note(links: Path, docs: Sequence[Doc], link_map: dict[str, list[str | None]],
                 misfits: set[tuple[str, str]]) -> str:
    """One warning for the linked entities whose item has no class of their DocRED type, with the first."""
    hits = [(d["title"], ei, q, entity_type(d["vertexSet"][ei])) for d in docs
            for ei, q in enumerate(link_map[d["title"]]) if q is not None and (q, entity_type(d["vertexSet"][ei])) in misfits]
    title, ei, q, coarse = hits[0]
    if len(hits) == 1:
        what, whose, are, fix = "entity has", "its", "it is", "that link, or the entity's type"
    else:
        what, whose, are, fix = "entities have", "their", "they are", "those links, or the entities' types"
    return (f"{links}: {len(hits)} linked {what} an item with no class of {whose} DocRED type (first: {title!r} "
            f"entity {ei}, {coarse}, linked to {q}); {are} renamed by the item's own classes: check {fix}")


def _check_other_benchmark(out: Path, main: str) -> None:
    """Refuses a run that would remove the benchmark an earlier ``generate`` wrote into ``out`` from other
    documents (``test_env.json`` when this run writes ``dev_env.json``): the step replaces its own
    outputs, and a different source file is more often a mistaken ``--out`` than a wish to drop one."""
    from etl.step import MANIFEST, read_manifest

    old = read_manifest(out / MANIFEST)
    if not old or old.get("step") != "generate":
        return
    names = [o.get("name") for o in old.get("outputs") or [] if isinstance(o, dict)]
    other = [n for n in names if isinstance(n, str) and n.endswith(("_env.json", "_twins.json")) and n != main]
    if other:
        source = next((i.get("name") for i in old.get("inputs") or [] if isinstance(i, dict)), None)
        made = f" made of {source}" if source else ""
        raise EnvbenchError(f"--out {out}: holds {other[0]}, the benchmark an earlier `generate`{made}; this run "
                            f"writes {main} and would remove it: choose another --out, or pass --force to replace it")


@contextlib.contextmanager
def _lifecycle(index_path: Path, out: Path, outputs: list[str], inputs: list[Path], parameters: dict[str, Any],
               *, need_edges: bool, force: bool) -> Iterator[tuple[Step, Any, str]]:
    """The index opened and checked, then OUT's step (lock, input checks, up to date?, staging,
    publishing on a clean exit): yields ``(step, index, index fingerprint)``."""
    from wikidata_index.index import WikidataIndex

    with WikidataIndex(index_path) as index:
        index.con.execute("SET enable_progress_bar = false")
        index.require(*INDEX_TABLES, *(["edges"] if need_edges else []))
        fingerprint = index_fingerprint(index_path)
        # The step removes only staging folders with its marker (etl.step); a ".generate-*" folder, the
        # unmarked staging of versions before etl.step, cannot be told from a user's, so it is left alone.
        with Step("generate", root=out, outputs=outputs, inputs=inputs, parameters=parameters,
                  identity={"index": {"tables_sha256": fingerprint}}, force=force) as step:
            yield step, index, fingerprint


def _chunks(docs: list[Doc], size: int) -> Iterator[tuple[int, list[Doc]]]:
    """(first index, documents) chunks of ``docs``, which is emptied at once.

    The documents are held as their compact JSON bytes (a tenth of their size as objects) and
    parsed back a chunk at a time; the round trip gives equal documents (``apply_plan`` makes the
    same one for its copies), so the outputs do not change.
    """
    packed = [orjson.dumps(d) for d in docs]
    docs.clear()  # the caller's list was the last reference: the objects are freed here
    start = 0
    while packed:
        chunk = [orjson.loads(b) for b in packed[:size]]
        del packed[:size]
        yield start, chunk
        start += len(chunk)


def _write(renamer: Renamer, docs: list[Doc], links: str | os.PathLike[str] | None, seeds: int, twins: bool,
           progress: bool, step: Step, main: str, clock: _Clock, tally: StatsTally, notes: list[str],
           index_path: Path, attack: Attack = Attack()) -> dict[str, Any]:
    """Rename ``docs`` chunk by chunk into the step's staging files; returns the stats (less validation).

    A link file's gaps (documents without an entry, Linked-DocRED entities without a usable link,
    misaligned documents) and its QIDs missing from the index become warnings in ``notes``; those
    entities stay unlinked. A file whose links mostly miss the index is refused (made for another)."""
    con, auditor = renamer.con, renamer.auditor
    clock.lap("read")
    if links is not None:
        link_file = read_link_file(links, docs)
        notes.extend(link_file.warnings())
        checked = check_links_against_index(link_file.links, con, path=links, index=index_path)
        link_map = checked.links
        if (missing := checked.note()) is not None:
            notes.append(missing)
    else:
        from envbench.rename.link import link_documents

        link_map = link_documents(docs, con).links
    clock.lap("links")
    # One fine type per (item, coarse type): the coarse type of the entity narrows its item's classes.
    misfits: list[tuple[str, str]] = []
    ftypes = fine_types(con, sorted({(q, entity_type(d["vertexSet"][ei])) for d in docs
                                     for ei, q in enumerate(link_map[d["title"]]) if q is not None}), misfits)
    if misfits and links is not None:  # the linker itself only links items that fit
        notes.append(_misfit_note(links, docs, link_map, set(misfits)))
    clock.lap("fine_types")
    tables: list[Any] = []
    bar = progress_bar(len(docs) * seeds, progress)
    with JsonListWriter(step.path(main)) as writer:
        for start, chunk in _chunks(docs, max(1, CHUNK_RUNS // seeds)):
            infos = [DocInfo(start + i, d, link_map[d["title"]], ftypes) for i, d in enumerate(chunk)]
            runs = settle(attack, renamer, infos, range(1, seeds + 1), twins, bar, lap=clock.lap)
            for run in runs:  # in (source order, seed) order already
                doc = apply_plan(run.info.doc, run.plan, run.title, run.outside)
                auditor.record(run.info.doc, {e: q for e, q in enumerate(run.info.qids) if q}, run.new_items)
                tally.add_run(run, doc)
                clock.lap("substitute")
                writer.write(doc)
                clock.lap("write")
            tables.append(substitution_table(runs))
            for info in infos:
                tally.add_source(info)
            clock.lap("substitute")
    bar.close()
    import pyarrow as pa

    table = pa.concat_tables(tables).combine_chunks()  # one chunk per column: the bytes of a one-go write
    write_substitutions({name: table.column(name) for name in table.column_names}, step.path(SUBSTITUTIONS))
    return tally.as_dict(auditor.summary())


def stale_tokens_note(index: Path, stored: object) -> str:
    """The warning for an index whose ``name_tokens`` table ``generate`` cannot use: made under another
    tokenizer (``stored``), or with a damaged record. The output is the same; spaCy tokenises instead."""
    why = (f"holds the tokens of {stored}, not of this {tokenizer_version()}" if stored != tokenizer_version()
           else "has a damaged record in manifest.json")
    return (f"{index}: its name_tokens table {why}, so names are tokenised with spaCy (same output, a slower "
            f"start); rerun `envbench ingest-dump DUMP --out {index} --force` to store this tokenizer's")


class _Clock:
    """Seconds per stage, summed over chunks, in first-lap order (``GenerateResult.timings``)."""

    def __init__(self, t0: float) -> None:
        self.last, self.seconds = t0, {}

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.seconds[stage] = self.seconds.get(stage, 0.0) + now - self.last
        self.last = now

    def rounded(self) -> dict[str, float]:
        return {k: round(v, 3) for k, v in self.seconds.items()}


__all__ = ["CHUNK_RUNS", "GenerateResult", "generate", "index_fingerprint"]
