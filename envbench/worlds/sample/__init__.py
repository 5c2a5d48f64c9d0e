"""A deterministic sample world: a Wikidata-format dump, DocRED-format documents about its items,
the gold linking, and the test documents in the Linked-DocRED format.

Everything downstream (ingest, linking, typing, candidates, renaming, scoring) runs on these files
through the same code paths as on real data. Item names are synthetic; classes and properties are
real Wikidata ids. Item ids start at ``SAMPLE_QID_BASE`` (Q900000001...), above the ids Wikidata has
handed out, so a sample item never collides with a real one.

The modules, in the order a world is made:

* ``rng``: the seeded generator every choice draws from;
* ``names``: word lists and the names of one item;
* ``world``: the items and their claims (``build_world``);
* ``dump``: the world as a Wikidata JSON dump, and lean filler items for scale benchmarks;
* ``builder`` and ``templates``: documents about the items, with gold labels from the claims;
* here: ``make_sample``, which writes it all as one step (``etl.step.Step``: staged, published
  atomically, the manifest last; a rerun with the same parameters writes nothing).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envbench.core.errors import EnvbenchError
from envbench.formats.docred import validate_documents
from envbench.worlds import wikidata_json as wj
from envbench.worlds.sample.dump import item_entity, write_lean
from envbench.worlds.sample.templates import build_docs
from envbench.worlds.sample.world import FINE_CLASSES, SAMPLE_QID_BASE, build_world
from envbench.worlds.type_table import load_type_table
from etl.io import dumps_json

DEFAULT_ENTITIES = 1200
DEFAULT_DOCS = 100
SPLIT_CYCLE = ("train", "dev", "train", "test", "train")  # 60/20/20
SMALL_SPLIT_CYCLE = ("train", "dev", "test", "train")  # under 5 documents: every split gets one
DUMP = "wikidata-sample.json.gz"
LINKS = "links.json"
LINKED_DOCRED = "docs/test.linked-docred.json"
SPLITS = ("train", "dev", "test")
OUTPUTS = (DUMP, *(f"docs/{s}.json" for s in SPLITS), LINKS, LINKED_DOCRED)


@dataclass
class SampleResult:
    out: Path
    dump: Path
    items: int  # items written (world + lean filler)
    classes: int
    properties: int
    docs: dict[str, int]  # split -> documents
    links: Path
    linked_docred: Path
    seconds: float
    docs_requested: int = 0
    up_to_date: bool = False  # the files were there already, from the same parameters

    @property
    def n_docs(self) -> int:
        return sum(self.docs.values())

    def summary(self) -> str:
        if self.up_to_date:
            return (f"{self.out} is up to date (same seed and sizes); nothing to do. "
                    "Pass --force to write it again.")
        docs = ", ".join(f"{k} {v}" for k, v in self.docs.items())
        if self.docs_requested > self.n_docs:
            docs += f" (only {self.n_docs} topics for {self.docs_requested} requested; raise --entities for more)"
        return (f"wrote {self.out}: {self.items} items, {self.classes} classes, {self.properties} properties "
                f"({self.dump.name}); documents {docs}; links {self.links.name}; "
                f"{self.linked_docred.relative_to(self.out)} in {self.seconds:.1f} s")


@dataclass
class _Counts:
    """What the summary reports; kept in the manifest so an up-to-date rerun can report it too."""

    items: int = 0
    classes: int = 0
    properties: int = 0
    docs: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_manifest(cls, manifest: dict[str, Any] | None) -> _Counts:
        data = (manifest or {}).get("counts")
        if not isinstance(data, dict):
            return cls()
        docs = data.get("docs") if isinstance(data.get("docs"), dict) else {}
        return cls(int(data.get("items", 0)), int(data.get("classes", 0)), int(data.get("properties", 0)),
                   {s: int(docs[s]) for s in SPLITS if s in docs})


MAX_FULL_ENTITIES = 2_000_000  # items a world without --lean may have: about 6 GB while it is built


def make_sample(
    out: str | Path,
    *,
    seed: int = 0,
    entities: int | None = None,
    docs: int | None = None,
    lean: bool = False,
    force: bool = False,
) -> SampleResult:
    """Write the sample world to ``out`` (see the module docstring); same seed, same bytes.

    ``entities`` is the number of items. Without ``lean`` all of them get names, claims and
    sitelinks. With ``lean`` the documented world is built at its default size and the remaining
    items are filler with names and P31 only, streamed to the dump (for scale benchmarks).
    ``out/manifest.json`` is written last; when it shows the same parameters and untouched files,
    nothing is written unless ``force``.
    """
    from etl.step import Step, read_manifest

    t0 = time.perf_counter()
    n_items = DEFAULT_ENTITIES if entities is None else entities
    n_docs = DEFAULT_DOCS if docs is None else docs
    if n_items < 60:
        raise EnvbenchError(f"--entities {n_items} is too small; the sample world needs at least 60 items")
    if n_docs < 3:
        raise EnvbenchError(f"--docs {n_docs} is too small; give at least 3 (one per split)")
    if not lean and n_items > MAX_FULL_ENTITIES:
        # a full world is built in memory, about 3 KB an item (200,000 items: 0.56 GB, 21 s on 2 cores):
        # 100,000,000 would have needed some 250 GB and grew silently until the machine ran out
        raise EnvbenchError(f"--entities {n_items:,} is more than a full world of {MAX_FULL_ENTITIES:,} items, which "
                            "is built in memory (about 3 KB an item); pass --lean to stream the items beyond the "
                            "default world")
    out = Path(out)
    parameters = {"seed": seed, "entities": n_items, "docs": n_docs, "lean": lean}
    with Step("make-sample", root=out, outputs=OUTPUTS, parameters=parameters, force=force) as step:
        if step.up_to_date:
            counts = _Counts.from_manifest(read_manifest(step.manifest_path))
        else:
            counts = _write(step, seed, n_items, n_docs, lean)
            step.info["counts"] = {"items": counts.items, "classes": counts.classes,
                                   "properties": counts.properties, "docs": counts.docs}
    return SampleResult(
        out=out,
        dump=out / DUMP,
        items=counts.items,
        classes=counts.classes,
        properties=counts.properties,
        docs=counts.docs,
        docs_requested=n_docs,
        links=out / LINKS,
        linked_docred=out / LINKED_DOCRED,
        seconds=time.perf_counter() - t0,
        up_to_date=step.up_to_date,
    )


def _write(step: Any, seed: int, n_items: int, n_docs: int, lean: bool) -> _Counts:
    """Build the world and write every output into the step's staging paths."""
    from envbench.formats.linked_docred import to_linked_docred

    world_size = min(n_items, DEFAULT_ENTITIES) if lean else n_items
    world = build_world(seed, world_size)
    n_classes = len(load_type_table().classes)
    with wj.DumpWriter(step.path(DUMP), compresslevel=1 if lean else 6) as w:
        n_props = 0
        for ent in wj.schema_entities():
            n_props += ent["type"] == "property"
            w.write(ent)
        for it in world.items.values():
            w.write(item_entity(world, it))
        filler = max(0, n_items - len(world.items)) if lean else 0
        start = SAMPLE_QID_BASE + len(world.items) + 1
        write_lean(w, seed, start, filler)
        total_items = len(world.items) + filler
    all_docs, links = build_docs(world, seed, n_docs)
    validate_documents(all_docs, "<sample world>")  # raises on a generator bug rather than writing bad data
    # Documents are dealt to splits 3:1:1 in build order, so each split gets every kind of document
    # and a larger --docs keeps the earlier documents where they were.
    # Fewer documents than one cycle would leave test (or dev) empty: then deal one to each split first.
    cycle = SPLIT_CYCLE if len(all_docs) >= len(SPLIT_CYCLE) else SMALL_SPLIT_CYCLE
    splits: dict[str, list[dict[str, Any]]] = {s: [] for s in SPLITS}
    for i, doc in enumerate(all_docs):
        splits[cycle[i % len(cycle)]].append(doc)
    for name, part in splits.items():
        step.path(f"docs/{name}.json").write_bytes(dumps_json(part))
    step.path(LINKS).write_bytes(dumps_json(links))
    step.path(LINKED_DOCRED).write_bytes(dumps_json(to_linked_docred(splits["test"], links, world.enwiki)))
    return _Counts(total_items, n_classes, n_props, {k: len(v) for k, v in splits.items()})


__all__ = ["DEFAULT_DOCS", "DEFAULT_ENTITIES", "FINE_CLASSES", "SAMPLE_QID_BASE", "SampleResult", "make_sample"]
