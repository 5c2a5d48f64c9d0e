"""A knowledge base built from DocRED-format documents themselves.

This is how the method applies to corpora that are not linked to Wikidata (Re-DocRED here):

* one item per real-world entity; entities are the same item when their canonical names (most frequent
  mention name, folded, a leading "the" dropped) and coarse types agree, and two entities of one document
  when they share any name so folded and their coarse type (Re-DocRED splits "United States" and "the
  United States" of one article; ``generate`` then renames both as one, as gold links to one Wikidata item
  would have it). An entity written as an adjective and as
  the place it names ("German", "German", "Germany") has the place's name as its canonical one, so it is
  the place's item (a country, whose demonyms its adjectival mentions take) and the entities written only
  as "German" stay an adjectival item of their own;
* label = the most frequent mention name over the cluster written in Latin letters (any name when it has
  none), aliases = its other distinct names;
* P31 = one fine class per cluster from the signals of ``envbench.worlds.fine_typing``: adjectival
  forms, the name's kind word, gazetteers, definition sentences, kind nouns next to mentions (each
  mention's read by ``envbench.core.kind_nouns``), and the
  roles the cluster plays in gold relations through the type table (envbench/data/relation_types.json),
  several relations voting; with ``index=`` a real index's property constraints replace the table's
  classes and decide alone (the other signals name classes the index may not have); the coarse type's
  class is the fallback;
* adjectival clusters ("American", "Catholic") get a KB-made adjectival class, and those of their names
  that are adjectival forms are written as P1549 (demonym) monolingual-text statements in English on their
  own item; items typed as a country, region, continent, subdivision, city or religion whose name the
  lexicon knows get its adjectival forms as P1549 as well (the official statement format:
  ``{"mainsnak": {"snaktype": "value", "property": "P1549", "datavalue": {"value": {"text": "American",
  "language": "en"}, "type": "monolingualtext"}, "datatype": "monolingualtext"}, "type": "statement",
  "id": "Q...$...", "rank": "normal"}``), and the dump has the P1549 property entity (monolingualtext);
* a PER cluster whose documents show its gender (``envbench.core.gender.document_genders``, the counts
  summed over its entities) gets P21 (sex or gender): Q6581097 male or Q6581072 female; a cluster whose
  documents show none, or conflict, gets the gender its first names tell, learned from the clusters whose
  documents decided (``core.gender.first_name_genders``: "John Doe" is male when the Johns of two
  documents are read "he"), else the gender a first-name lexicon of many countries gives them
  (``core.gender.lexicon_genders``: "Benito Mussolini" is male though no other Benito is in the corpus),
  or a one-word name tells there ("Helen"; not a word that ends a longer person's name: "Clinton"),
  and none when they tell none. ``generate`` then draws a person's new name
  among items of its gender (``envbench.rename.gender``), so "her eldest son Edward VII" never becomes
  "her eldest son Barbara Stanwyck";
* the adjectival classes are filled from the lexicon too (:func:`lexicon_clusters`): each religion, ideology,
  party, country, region, ethnic group or place the lexicon has adjectival forms for and that no document
  names becomes an item of its class, named by those forms ("Lutheran", "Whig", "Tokelauan"), so that an
  entity written "Christian" or "Republican" has more to be swapped with than the few forms the corpus
  itself holds; only the classes some entity has are filled;
* item-valued gold triples become claims, so popularity and relation-consistent linking work;
* a city, subdivision, US county or US state whose names the gazetteer places in one country only gets
  P17 (country) claims on the clusters the gazetteer reads as that country (:func:`country_claims`): the
  corpus's own triples place few of its places, and ``generate`` keeps "Kiruna , Sweden" a city in its
  country only where the index knows where the new city lies ("Płock , Bailey County , Lapland" had read so);
* QIDs are hashed and lie in ``KB_QID_RANGE`` (Q1000000000000-Q1999999999999), far above the ids
  Wikidata has handed out (about Q135 million in 2025) and the sample world's Q900000001...

NUM and TIME entities get no item (their links are null): they are renamed by rules.

The dump and the links are written as one step (``etl.step.Step``): both appear together, with
``KB.json.gz.manifest.json`` beside the dump written last; a rerun with the same documents,
index tables and options writes nothing unless ``force``.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from envbench.core.errors import DataError
from envbench.core.gender import (
    P21,
    P21_OF,
    GenderEvidence,
    document_genders,
    first_name_genders,
    name_gender,
    one_word_gender,
    with_lexicon,
)
from envbench.core.kind_nouns import document_kind_nouns
from envbench.core.relations import RELATIONS
from envbench.core.seeding import stable_hash_hex
from envbench.core.text import latin_script
from envbench.core.types import LINKED_TYPES
from envbench.formats.docred import DocSet, distinct_names, entity_type, read_docred
from envbench.worlds import wikidata_json as wj
from envbench.worlds.fine_typing import (
    GENERIC,
    MIN_CLASS_ITEMS,
    SIGNALS,
    Evidence,
    FineTyper,
    MentionContext,
    Typing,
    is_city_class,
    load_fine_classes,
)
from envbench.worlds.gazetteers import Adjectival, Gazetteer, load_gazetteer, name_key
from envbench.worlds.type_table import TypeTable, load_type_table
from etl.io import compression_of, dumps_json
from wikidata_index.names import fold

MAX_CONTEXTS = 40  # mention surroundings kept per cluster for typing
KB_QID_BASE = 10**12
KB_QID_RANGE = (KB_QID_BASE, 2 * KB_QID_BASE - 1)
INDEX_TABLES = ("property_constraints", "subclasses", "entities")  # what ``index=`` is read for


@dataclass
class Cluster:
    key: tuple[str, ...]
    coarse: str
    mention_names: Counter[str] = field(default_factory=Counter)
    first_seen: dict[str, int] = field(default_factory=dict)  # name -> order of first sight
    roles: list[tuple[str, str]] = field(default_factory=list)  # (relation, "subject"|"value")
    members: list[tuple[str, int]] = field(default_factory=list)  # (title, entity index)
    contexts: list[MentionContext] = field(default_factory=list)  # the first mentions' surroundings
    qid: str = ""
    fine: str = ""
    signal: str = ""  # the typing signal that decided ``fine``
    demonyms: list[str] = field(default_factory=list)  # P1549 values of the item
    gender: GenderEvidence = field(default_factory=GenderEvidence)  # its documents' evidence (PER only)
    p21_gender: str | None = None  # the gender written as P21: its documents', else its first names'
    p21_from: str = ""  # "documents", "first name", "lexicon first name" or "lexicon one-word name" (its source)

    def label(self) -> str:
        # an English label is written in Latin letters when the corpus has such a name for the item
        return min(self.mention_names,
                   key=lambda n: (not latin_script(n), -self.mention_names[n], self.first_seen[n]))

    def names(self) -> list[str]:
        """Label first, then the other distinct names in order of first sight."""
        lab = self.label()
        return [lab, *sorted((n for n in self.mention_names if n != lab), key=lambda n: self.first_seen[n])]


@dataclass
class KbResult:
    out_kb: Path
    links: Path
    documents: int
    entities: int  # document entities of PER/ORG/LOC/MISC type
    items: int
    classes: int
    per_type: dict[str, int]  # class label -> items
    finer_items: float  # share of items typed finer than their coarse type
    related_entities: int  # document entities in at least one gold relation
    finer_related: float  # share of those whose item is typed finer than coarse
    alias_histogram: dict[str, int]  # "0", "1", "2", "3", "4+" aliases -> items
    constraint_source: str  # "type table" or "index at DIR"
    seconds: float
    decided_by: dict[str, int] = field(default_factory=dict)  # typing signal -> items it typed
    demonym_items: int = 0  # items with P1549 statements
    untyped_items: int = 0  # non-person items left without P31 (``untyped="keep"``): generate keeps them
    lexicon_items: int = 0  # adjectival items of the lexicon that no document names (``lexicon_clusters``)
    gendered_items: dict[str, int] = field(default_factory=dict)  # person items with P21: "male (documents)" -> n, ...
    notes: list[str] = field(default_factory=list)  # printed after the report (skipped documents)
    up_to_date: bool = False

    REPORTED = ("documents", "entities", "items", "classes", "per_type", "finer_items", "related_entities",
                "finer_related", "alias_histogram", "constraint_source", "decided_by", "demonym_items",
                "untyped_items", "gendered_items", "lexicon_items")

    def summary(self, verbose: bool = False) -> str:
        """A short report: the largest ``SUMMARY_TYPES`` classes; ``verbose`` lists every class (all of them are
        in the manifest's ``report.per_type`` either way)."""
        if self.up_to_date:
            return (f"{self.out_kb} and {self.links} are up to date (same documents, index and options); "
                    "nothing to do. Pass --force to build them again.")
        lines = [
            f"wrote {self.out_kb} ({self.items} items, {self.classes} classes) and {self.links} "
            f"from {self.documents} documents ({self.entities} PER/ORG/LOC/MISC entities) in {self.seconds:.1f} s",
            f"types from the {self.constraint_source}; items per inferred type"
            + (":" if verbose or len(self.per_type) <= SUMMARY_TYPES else f", the {SUMMARY_TYPES} largest:"),
        ]
        ranked = sorted(self.per_type.items(), key=lambda kv: (-kv[1], kv[0]))
        for label, n in ranked if verbose else ranked[:SUMMARY_TYPES]:
            lines.append(f"  {label:<40} {n:>7}")
        if not verbose and len(ranked) > SUMMARY_TYPES:
            rest = ranked[SUMMARY_TYPES:]
            lines.append(f"  ... and {len(rest)} more classes of {sum(n for _, n in rest)} items (every class: "
                         f"--verbose, or report.per_type in {self.out_kb}.manifest.json)")
        lines.append(f"typed finer than coarse: {self.finer_items:.1%} of items; "
                     f"{self.finer_related:.1%} of the {self.related_entities} entities that take part in a relation")
        hist = ", ".join(f"{k}: {v}" for k, v in self.alias_histogram.items())
        lines.append(f"aliases per item: {hist}")
        if self.decided_by:
            by = ", ".join(f"{k} {v}" for k, v in sorted(self.decided_by.items(), key=lambda kv: (-kv[1], kv[0])))
            lines.append(f"typed by: {by}; {self.demonym_items} items carry demonyms (P1549)")
        if self.lexicon_items:
            lines.append(f"{self.lexicon_items} of the items are adjectival forms of the lexicon that no document "
                         "names (\"Lutheran\", \"Whig\"): candidates for the entities written as one")
        if self.gendered_items:
            lines.append("person items with P21 (from their documents' pronouns and nouns, their first names in "
                         "the corpus, or in the first-name lexicon): " + ", ".join(f"{g} {n}" for g, n in self.gendered_items.items()))
        if self.untyped_items:
            lines.append(f"{self.untyped_items} ORG/LOC/MISC items got no P31 (no signal named their kind): "
                         "generate keeps their entities (no_type) rather than risk a change of type")
        lines.extend(self.notes)
        return "\n".join(lines)

    def report(self) -> dict[str, Any]:
        """The reported numbers, as kept in the manifest."""
        d = asdict(self)
        return {k: d[k] for k in self.REPORTED}


def _constraints_from_index(index: str | os.PathLike[str], table: TypeTable) -> tuple[
        dict[tuple[str, str], tuple[str, ...]], dict[str, str], dict[str, tuple[str, str | None]]]:
    """(relation, role) -> classes from a real index, coarse types of the new classes, and their labels/parents."""
    from wikidata_index.index import WikidataIndex
    from wikidata_index.schema import SUBJECT_TYPE_CONSTRAINT, VALUE_TYPE_CONSTRAINT

    overrides: dict[tuple[str, str], tuple[str, ...]] = {}
    coarse: dict[str, str] = {}
    info: dict[str, tuple[str, str | None]] = {}
    with WikidataIndex(index) as ix:
        ix.require("property_constraints")
        for pid in RELATIONS:
            rows = ix.constraints(pid)
            for role, ctype in (("subject", SUBJECT_TYPE_CONSTRAINT), ("value", VALUE_TYPE_CONSTRAINT)):
                classes = sorted({r["class"] for r in rows if r["constraint_type"] == ctype and r["class"]},
                                 key=lambda c: (_table_rank(table, pid, role, c), int(c[1:])))
                if classes:
                    overrides[(pid, role)] = tuple(classes)
        for classes in overrides.values():
            for c in classes:
                if c in coarse or table.coarse_of(c):
                    continue
                supers = ix.superclasses(c)
                known = [s for s in supers if table.coarse_of(s)]
                if known:
                    best = max(known, key=lambda s: (len(table.ancestors(s)), -int(s[1:])))
                    coarse[c] = table.coarse_of(best) or "MISC"
                ent = ix.entity(c) or {}
                direct = [s for s in supers if s in table.classes]
                info[c] = (ent.get("label") or c, max(direct, key=lambda s: len(table.ancestors(s))) if direct else None)
    return overrides, coarse, info


def _table_rank(table: TypeTable, pid: str, role: str, c: str) -> int:
    lst = table.role_classes(pid, role)
    return lst.index(c) if c in lst else len(lst)


def _check_paths(docs_paths: Sequence[str | os.PathLike[str]], out_kb: str | os.PathLike[str],
                 links_out: str | os.PathLike[str]) -> None:
    """Refuse inputs given twice and outputs that would overwrite an input or each other."""
    seen: dict[Path, str] = {}
    for p in docs_paths:
        key = Path(p).resolve()
        if key in seen:
            also = "" if seen[key] == str(p) else f" (also as {seen[key]})"
            raise DataError(f"{p} is given twice{also}; pass each DocRED file once")
        seen[key] = str(p)
    if Path(out_kb).resolve() == Path(links_out).resolve():
        raise DataError(f"--out and --links are the same file ({out_kb}); give the dump and the links "
                        "different names, e.g. --out kb.json.gz --links links.json")
    for opt, o in (("--out", out_kb), ("--links", links_out)):
        if Path(o).resolve() in seen:
            raise DataError(f"{opt} {o} is also an input document file; choose another output path, or the "
                            "documents would be overwritten")
    if compression_of(out_kb) not in (None, "gz"):
        raise DataError(f"--out {out_kb}: the dump is written as .json or .json.gz; give one of those names, "
                        "e.g. --out kb.json.gz")
    if compression_of(links_out):
        raise DataError(f"--links {links_out}: the links are written as plain JSON; give a .json name, "
                        "e.g. --links links.json")


def _assign_qids(clusters: list[Cluster], taken: set[int] | None = None) -> None:
    """A QID in ``KB_QID_RANGE`` for each cluster, hashed from its key, none of ``taken``."""
    taken = set() if taken is None else taken
    for cl in sorted(clusters, key=lambda c: c.key):
        n = KB_QID_BASE + int(stable_hash_hex("kb-from-corpus", *cl.key)[:15], 16) % KB_QID_BASE
        while n in taken:  # linear probing, in sorted key order: deterministic
            n = KB_QID_BASE + (n - KB_QID_BASE + 1) % KB_QID_BASE
        taken.add(n)
        cl.qid = f"Q{n}"


LEXICON_SIGNAL = "lexicon item"  # the ``signal`` of the items ``lexicon_clusters`` makes


def lexicon_clusters(clusters: Sequence[Cluster], adjectival: Mapping[str, Sequence[Adjectival]],
                     class_of_kind: Mapping[str, str]) -> list[Cluster]:
    """Items for the adjectival forms of the lexicon (``worlds.gazetteers``) that the corpus never names.

    An entity written only as an adjective ("Christian", "Republican", "Jamaican") is typed an adjectival
    class and swapped only with items of that class, which the corpus alone fills thinly: on Re-DocRED,
    once the names of dev are excluded, every religion's adjective became "Shia" and every ideology's
    "Fascist". So each (kind, referent) of the lexicon becomes an item of its kind's class, named by its
    forms ("Lutheran"; "Anglican" with "Anglicans" in their own kinds), with those forms as P1549 so that
    ``generate`` writes them in adjectival mentions, unless the corpus names the referent or one of its
    forms (then the corpus's own item stands for it, and a second item of that name would clash). A form
    two referents share goes to the first. The items have no members, no claims and no gender; their QIDs
    are hashed from their keys ("lexicon", kind, referent) after the corpus items' have been given.
    ``class_of_kind`` names the kinds to make items for (``generate`` needs them only for the classes the
    corpus's entities have)."""
    named = {name_key(n) for cl in clusters for n in cl.mention_names}
    groups: dict[tuple[str, str], list[str]] = {}
    for forms in adjectival.values():
        for a in forms:
            if a.kind in class_of_kind:
                groups.setdefault((a.kind, a.refers_to), [])
                if a.form not in groups[(a.kind, a.refers_to)]:
                    groups[(a.kind, a.refers_to)].append(a.form)
    out: list[Cluster] = []
    taken: set[str] = set()
    for (kind, referent), forms in sorted(groups.items()):
        keys = [name_key(f) for f in forms]
        if name_key(referent) in named or any(k in named for k in keys):
            continue
        forms = [f for f, k in zip(forms, keys) if k not in taken]
        if not forms:
            continue
        taken.update(name_key(f) for f in forms)
        cl = Cluster(("lexicon", kind, referent), "MISC", Counter(dict.fromkeys(forms, 1)),
                     {f: i for i, f in enumerate(forms)}, fine=class_of_kind[kind], signal=LEXICON_SIGNAL,
                     demonyms=list(forms))
        out.append(cl)
    return out


def kb_from_corpus(
    docs_paths: Sequence[str | os.PathLike[str]] | str | os.PathLike[str],
    out_kb: str | os.PathLike[str],
    links_out: str | os.PathLike[str],
    *,
    index: str | os.PathLike[str] | None = None,
    skip_invalid: bool = False,
    force: bool = False,
    signals: Sequence[str] = SIGNALS,
    min_class_items: int = MIN_CLASS_ITEMS,
    untyped: str = "coarse",
    progress: bool = False,
) -> KbResult:
    """Build a Wikidata-format dump and a linking ``{title: [QID or null]}`` from DocRED-format files.

    ``signals`` names the typing signals used (all by default; ``bench/kb_types.py`` measures each one's
    share by leaving it out); a class with fewer than ``min_class_items`` items hands them to its superclass
    (1 keeps every class, for small test corpora).

    ``untyped`` says what an ORG, LOC or MISC item gets when no signal votes for any class (it would get its
    coarse type's class: organization, geographic location, entity): ``"coarse"`` (the default) writes that
    class, a catch-all (``core.types.CATCH_ALL_CLASSES``) whose entities ``generate`` keeps (reason
    ``generic_type``) rather than swap them across kinds ("NBC News" -> "Royal Court"); ``"keep"`` writes
    no P31, so ``generate`` keeps them as ``no_type``. The substitution rate this gives Env-Re-DocRED test
    (KB from dev + test) is in bench/RESULTS.md ("Renaming on real data and the lock"). Persons are always
    typed human. ``progress``: the stages on stderr (``etl.progress.Stages``, on a terminal only).
    """
    from etl.progress import Stages

    with Stages("kb-from-corpus", 4, enabled=progress) as stage:
        return _kb_from_corpus(docs_paths, out_kb, links_out, index=index, skip_invalid=skip_invalid, force=force,
                               signals=signals, min_class_items=min_class_items, untyped=untyped, stage=stage)


def _kb_from_corpus(docs_paths: Sequence[str | os.PathLike[str]] | str | os.PathLike[str],
                    out_kb: str | os.PathLike[str], links_out: str | os.PathLike[str], *,
                    index: str | os.PathLike[str] | None, skip_invalid: bool, force: bool, signals: Sequence[str],
                    min_class_items: int, untyped: str, stage: Any) -> KbResult:
    from etl.step import Step, check_writable, manifest_beside

    t0 = time.perf_counter()
    if isinstance(docs_paths, (str, os.PathLike)):
        docs_paths = [docs_paths]
    if not docs_paths:
        raise DataError("no documents given; pass one or more DocRED-format files, e.g. dev_revised.json")
    _check_paths(docs_paths, out_kb, links_out)
    check_writable(out_kb, "--out")
    check_writable(links_out, "--links")
    stage("read the documents")
    docsets = _read_all(docs_paths, skip_invalid)
    notes = [n for ds in docsets for n in (ds.skip_note(),) if n]
    out_kb, links_out = Path(out_kb), Path(links_out)
    index_files = ([f for t in INDEX_TABLES for f in sorted((Path(index) / t).glob("*.parquet"))]
                   if index is not None else [])
    if untyped not in UNTYPED_POLICIES:
        raise DataError(f"untyped={untyped!r} is not a policy; choose one of {', '.join(UNTYPED_POLICIES)}")
    typer = FineTyper(signals, min_class_items=min_class_items)
    parameters = {"untyped": untyped, "skip_invalid": skip_invalid, "index": index is not None, "signals": sorted(typer.signals),
                  "min_class_items": min_class_items, "gazetteers": typer.gz.versions}
    with Step("kb-from-corpus", manifest=manifest_beside(out_kb), outputs=[out_kb, links_out],
              inputs=[*docs_paths, *index_files], parameters=parameters, force=force,
              protected=[Path(index)] if index is not None else [], output_options={links_out: "--links"}) as step:
        if step.up_to_date:
            from etl.step import read_manifest

            reported = (read_manifest(step.manifest_path) or {}).get("report") or {}
            fields = {k: reported.get(k) for k in KbResult.REPORTED}
            return KbResult(out_kb=out_kb, links=links_out, seconds=time.perf_counter() - t0, notes=notes,
                            up_to_date=True, **fields)  # type: ignore[arg-type]
        result = _build(docsets, index, step.path(out_kb), step.path(links_out), typer, untyped, stage)
        step.info["report"] = result.report()
    result.out_kb, result.links = out_kb, links_out
    result.notes = notes
    result.seconds = time.perf_counter() - t0
    return result


def _read_all(docs_paths: Sequence[str | os.PathLike[str]], skip_invalid: bool) -> list[DocSet]:
    """Every file read and checked before anything is written: titles unique across files, some documents."""
    docsets = []
    title_file: dict[str, str] = {}
    for path in docs_paths:
        docset = read_docred(path, skip_invalid=skip_invalid)
        for doc in docset.docs:
            title = doc["title"]
            if title in title_file:
                raise DataError(f"{path}: document {title!r} is also in {title_file[title]}; "
                                "titles must be unique across the files given (LINKS is keyed by title)")
            title_file[title] = str(path)
        docsets.append(docset)
    if not title_file:
        raise DataError(f"no documents in {', '.join(str(p) for p in docs_paths)}"
                        f"{' (all were invalid and skipped)' if skip_invalid else ''}; "
                        "pass DocRED-format files with documents, e.g. dev_revised.json")
    return docsets


SUMMARY_TYPES = 10  # classes the summary lists without --verbose (Re-DocRED dev + test have 233)


@dataclass
class Corpus:
    """The clusters of a corpus and where its entities fall (before typing)."""

    clusters: list[Cluster]
    slots: dict[str, list[Cluster | None]]  # title -> the cluster of each entity (None for NUM/TIME)
    doc_labels: list[tuple[str, list[dict]]]
    related: list[tuple[str, int]]  # (title, entity) of entities in at least one gold relation
    documents: int
    entities: int


def cluster_name(name: str) -> str:
    """The name part of a cluster key: folded, without a leading "the".

    DocRED writes one entity "the United States" in one document and "United States" in the next; as two
    items, each would be the other's candidate and "United States" could be "renamed" to "the United
    States". Example: cluster_name("The  Beatles") == cluster_name("beatles") == "beatles".
    """
    key = fold(name)
    return key[4:] if key.startswith("the ") and len(key) > 4 else key


def _assign_genders(clusters: Sequence[Cluster]) -> None:
    """Each PER cluster's P21 gender: its documents' decision, else what its first names tell (learned
    from the decided clusters), else what they tell in the first-name lexicon (``core.gender.lexicon_genders``),
    else what a one-word name tells there (``core.gender.one_word_gender``: "Helen", "Manon"; the module docstring)."""
    persons = sorted((cl for cl in clusters if cl.coarse == "PER"), key=lambda c: c.key)
    learned = first_name_genders((sorted(cl.mention_names), cl.gender.gender, sorted({t for t, _ in cl.members}))
                                 for cl in persons)
    lexicon = with_lexicon(learned)  # the lexicon reads the first names the corpus cannot
    # the words that end a longer person's name are surnames here: a person named "Clinton" alone is not read by it
    surnames = frozenset(n.split()[-1].casefold() for cl in persons for n in cl.mention_names if len(n.split()) > 1)
    for cl in persons:
        names = sorted(cl.mention_names)
        if (g := cl.gender.gender) is not None:
            cl.p21_gender, cl.p21_from = g, "documents"
        elif (g := name_gender(names, learned)) is not None:
            cl.p21_gender, cl.p21_from = g, "first name"
        elif (g := name_gender(names, lexicon)) is not None:
            cl.p21_gender, cl.p21_from = g, "lexicon first name"
        elif (g := one_word_gender(names, surnames)) is not None:
            cl.p21_gender, cl.p21_from = g, "lexicon one-word name"


def cluster_corpus(docsets: Sequence[DocSet]) -> Corpus:
    """One cluster per real-world entity (see the module docstring), with names, roles and mention contexts."""
    clusters: dict[tuple[str, ...], Cluster] = {}
    slots: dict[str, list[Cluster | None]] = {}
    gz = load_gazetteer()
    order = 0
    n_docs = n_entities = 0
    related: list[tuple[str, int]] = []
    doc_labels: list[tuple[str, list[dict]]] = []
    for docset in docsets:
        for doc in docset.docs:
            title = doc["title"]
            n_docs += 1
            labels = doc.get("labels") or []
            row: list[Cluster | None] = []
            here: dict[tuple[str, str], Cluster] = {}  # (coarse type, folded name) -> its item in this document
            genders = document_genders(doc)
            kinds_of = document_kind_nouns(doc)
            for ei, ent in enumerate(doc["vertexSet"]):
                coarse = entity_type(ent)
                if coarse not in LINKED_TYPES:
                    row.append(None)
                    continue
                n_entities += 1
                counts = Counter(m["name"] for m in ent)
                names = distinct_names(ent)
                canon = min(names, key=lambda n: (-counts[n], names.index(n)))
                if coarse != "PER" and gz.adjectival_for(canon):  # "German" beside "Germany": Germany's item
                    places = [n for n in names if not gz.adjectival_for(n) and gz.places_for(n)]
                    if places:
                        canon = min(places, key=lambda n: (-counts[n], names.index(n)))
                # two entities of one document that share a name (folded, without "the") are one item too:
                # Re-DocRED splits one thing ("United States" and "the United States" of one article; the
                # title's "Intelligent design | ID" and a later "intelligent design"), and gold links would
                # join them (``generate`` gives both the item the first becomes, ``DocInfo.same_item``)
                key: tuple[str, ...] = (coarse, cluster_name(canon))
                cl = next((here[k] for n in names if (k := (coarse, cluster_name(n))) in here), None)
                if cl is None:
                    cl = clusters.get(key)
                if cl is None:
                    cl = clusters[key] = Cluster(key, coarse)
                for n in names:
                    here.setdefault((coarse, cluster_name(n)), cl)
                sents = doc["sents"]
                kinds = kinds_of[ei]
                for m in ent:
                    cl.mention_names[m["name"]] += 1
                    if m["name"] not in cl.first_seen:
                        cl.first_seen[m["name"]] = order
                        order += 1
                    if len(cl.contexts) < MAX_CONTEXTS:
                        cl.contexts.append(MentionContext.of(sents[m["sent_id"]], m["pos"][0], m["pos"][1], [
                            k for k in kinds if k.sent_id == m["sent_id"] and k.start == m["pos"][0]]))
                cl.members.append((title, ei))
                if ei in genders:
                    cl.gender += genders[ei]
                row.append(cl)
            for lab in labels:
                for end, role in (("h", "subject"), ("t", "value")):
                    cl = row[lab[end]]
                    if cl is not None:
                        cl.roles.append((lab["r"], role))
            in_rel = {lab[e] for lab in labels for e in ("h", "t")}
            related.extend((title, i) for i in sorted(in_rel) if row[i] is not None)
            slots[title] = row
            doc_labels.append((title, labels))
    return Corpus(list(clusters.values()), slots, doc_labels, related, n_docs, n_entities)


def corpus_evidence(corpus: Corpus) -> tuple[list[Cluster], list[Evidence]]:
    """The clusters in the fixed order the typing reads them (the learned signal trains in it), and what is
    known about each, with the clusters gold P131 (located in) and P17 (country) triples put it in, the
    clusters gold P463 (member of) triples make members of it, and the leagues gold P118 triples put it in."""
    ordered = sorted(corpus.clusters, key=lambda c: c.key)
    at = {id(cl): i for i, cl in enumerate(ordered)}
    located: dict[int, set[int]] = {}
    members: dict[int, set[int]] = {}
    leagues: dict[int, set[int]] = {}
    for title, labels in corpus.doc_labels:
        row = corpus.slots[title]
        for lab in labels:
            h, t = row[lab["h"]], row[lab["t"]]
            if h is None or t is None or h is t:
                continue
            if lab["r"] in ("P131", "P17"):
                located.setdefault(at[id(h)], set()).add(at[id(t)])
            elif lab["r"] == "P463":
                members.setdefault(at[id(t)], set()).add(at[id(h)])
            elif lab["r"] == "P118":
                leagues.setdefault(at[id(h)], set()).add(at[id(t)])
    return ordered, [Evidence(cl.coarse, cl.names(), cl.roles, cl.contexts, cl.mention_names,
                              tuple(sorted(located.get(i, ()))), tuple(sorted(members.get(i, ()))),
                              tuple(sorted(leagues.get(i, ()))))
                     for i, cl in enumerate(ordered)]


def _build(docsets: Sequence[DocSet], index: str | os.PathLike[str] | None, out_kb: Path, links_out: Path,
           typer: FineTyper, untyped: str = "coarse", stage: Any = None) -> KbResult:
    """Cluster the entities, type the clusters and write the dump and the links (to staging paths);
    ``stage(name)`` is called as each long part starts (``etl.progress.Stages``)."""
    stage = stage or (lambda name: None)
    table = load_type_table()
    overrides: dict[tuple[str, str], tuple[str, ...]] = {}
    extra_coarse: dict[str, str] = {}
    extra_info: dict[str, tuple[str, str | None]] = {}
    source = "type table (envbench/data/relation_types.json)"
    if index is not None:
        overrides, extra_coarse, extra_info = _constraints_from_index(index, table)
        source = f"index at {index} (type table where it has no constraint)"

    stage("cluster the entities")
    corpus = cluster_corpus(docsets)
    links: dict[str, list[str | None]] = {}
    slots, doc_labels, related = corpus.slots, corpus.doc_labels, corpus.related
    n_docs, n_entities = corpus.documents, corpus.entities
    all_clusters = corpus.clusters
    parents = {c: parent for c, (_, parent) in extra_info.items()}
    _assign_qids(all_clusters)
    _assign_genders(all_clusters)
    stage("type the items")
    ordered, evidences = corpus_evidence(corpus)
    typings = typer.type_all(evidences)
    for cl, t in zip(ordered, typings):
        _type_cluster(cl, t, typer, table, overrides, extra_coarse, parents)
    fine = load_fine_classes()
    used = {cl.fine for cl in all_clusters}  # only the adjectival classes some entity of the corpus has
    lexicon_items = lexicon_clusters(all_clusters, typer.gz.adjectival,
                                     {k: q for k, q in fine.adjectival_by_kind.items() if q in used})
    _assign_qids(lexicon_items, taken={int(cl.qid[1:]) for cl in all_clusters})
    # the KB-made head-noun classes ("council (head noun)") are written like an index's own classes
    extra_info.update({q: (info.label, info.parent) for q, info in typer.head_classes.items()})
    for title, row in slots.items():
        links[title] = [cl.qid if cl else None for cl in row]

    # Item-valued claims from the gold triples.
    claims: dict[str, dict[str, set[str]]] = {}
    for title, labels in doc_labels:
        row = slots[title]
        for lab in labels:
            h, t = row[lab["h"]], row[lab["t"]]
            if h and t and h is not t and lab["r"] not in table.value_kinds and lab["r"] not in ("P31", "P279"):
                claims.setdefault(h.qid, {}).setdefault(lab["r"], set()).add(t.qid)

    for q, countries in country_claims(ordered, typings, typer.gz).items():
        claims.setdefault(q, {}).setdefault("P17", set()).update(countries)

    corpus_clusters = all_clusters
    all_clusters = all_clusters + lexicon_items  # written and counted as items from here on
    class_set: set[str] = set(table.classes)
    needed: set[str] = set()
    for c in {cl.fine for cl in all_clusters}:  # a fine class and the chain up to the type table
        for a in fine.ancestors(c) if c in fine.classes else [c]:
            if a not in class_set:
                needed.add(a)
    new_classes = sorted(needed, key=lambda q: int(q[1:]))
    stage("write the dump and the links")
    with wj.DumpWriter(out_kb) as w:
        for ent in wj.schema_entities(constraints=overrides or None):
            w.write(ent)
        if any(cl.demonyms for cl in all_clusters):
            w.write(wj.property_entity(DEMONYM, label="demonym", datatype="monolingualtext",
                                       description="name for the inhabitants or the adjectival form of a place"))
        for c in new_classes:
            if c in fine.classes:
                info = fine.classes[c]
                label, parent = info.label, info.parent
            else:
                label, parent = extra_info.get(c, (c, None))
            parent = parent or table.coarse_fallback.get(extra_coarse.get(c, "MISC"), "Q35120")
            w.write(wj.item(c, labels={"en": label}, claims={"P279": [wj.item_statement(c, "P279", parent)]}))
        for cl in sorted(all_clusters, key=lambda c: int(c.qid[1:])):
            names = cl.names()
            item_claims: dict[str, list[wj.Statement]] = {}
            if not (untyped == "keep" and is_untyped(cl)):
                item_claims["P31"] = [wj.item_statement(cl.qid, "P31", cl.fine)]
            for pid, objs in sorted(claims.get(cl.qid, {}).items(), key=lambda kv: int(kv[0][1:])):
                item_claims[pid] = [wj.item_statement(cl.qid, pid, o) for o in sorted(objs, key=lambda q: int(q[1:]))]
            if cl.demonyms:
                item_claims[DEMONYM] = [demonym_statement(cl.qid, d) for d in cl.demonyms]
            if cl.coarse == "PER" and (g := cl.p21_gender) is not None:
                item_claims[P21] = [wj.item_statement(cl.qid, P21, P21_OF[g])]
            w.write(wj.item(
                cl.qid,
                labels={"en": names[0]},
                descriptions={"en": f"entity of {len(cl.members)} document(s) ({cl.coarse})" if cl.members
                              else f"adjectival form of the lexicon ({cl.key[1]}), in no document"},
                aliases={"en": names[1:]},
                claims=item_claims,
            ))
    links_out.write_bytes(dumps_json(links))

    label_of = {q: info.label for q, info in table.classes.items()}
    label_of.update({c: fine.classes[c].label if c in fine.classes else extra_info.get(c, (c, None))[0]
                     for c in new_classes})
    per_type = Counter(f"{label_of.get(cl.fine, cl.fine)} ({cl.fine})" for cl in all_clusters)
    finer = [not table.is_fallback(cl.fine) for cl in corpus_clusters]
    by_member = {m: cl for cl in all_clusters for m in cl.members}
    finer_rel = [not table.is_fallback(by_member[m].fine) for m in related]
    hist: Counter[str] = Counter()
    for cl in corpus_clusters:
        k = len(cl.mention_names) - 1
        hist[str(k) if k < 4 else "4+"] += 1
    return KbResult(
        out_kb=out_kb,
        links=links_out,
        documents=n_docs,
        entities=n_entities,
        items=len(all_clusters),
        classes=len(table.classes) + len(new_classes),
        per_type=dict(per_type),
        finer_items=sum(finer) / len(finer) if finer else 0.0,
        related_entities=len(related),
        finer_related=sum(finer_rel) / len(finer_rel) if finer_rel else 0.0,
        alias_histogram={k: hist.get(k, 0) for k in ("0", "1", "2", "3", "4+")},
        constraint_source=source,
        seconds=0.0,
        decided_by=dict(sorted(Counter(cl.signal for cl in all_clusters).items())),
        demonym_items=sum(1 for cl in all_clusters if cl.demonyms),
        untyped_items=sum(1 for cl in all_clusters if is_untyped(cl)) if untyped == "keep" else 0,
        lexicon_items=len(lexicon_items),
        gendered_items=dict(sorted(Counter(f"{cl.p21_gender} ({cl.p21_from})" for cl in all_clusters
                                           if cl.coarse == "PER" and cl.p21_gender is not None).items())),
    )


# gazetteer readings of a place that lies in a country (``gazetteers.Place.kind``), and of a country
PLACED_KINDS = frozenset({"city", "subdivision", "us county", "us state"})
COUNTRY_KIND = "country"


def country_claims(clusters: Sequence[Cluster], typings: Sequence[Typing], gz: Gazetteer) -> dict[str, set[str]]:
    """The P17 (country) claims the gazetteer gives, {item: the country items}: a LOC cluster the typing read
    as a city, subdivision, US county or US state (``Typing.place``) whose every name, in every gazetteer
    reading but a language, lies in one country (by ISO code) lies in each LOC cluster the typing read as
    that country. A name that reads as places of two countries ("Norwich": England and Connecticut;
    "Georgia": a US state and a country) gives none, and nothing lies in itself (Singapore, a city and a
    country)."""
    countries: dict[str, list[str]] = {}
    for cl, t in zip(clusters, typings):
        if cl.coarse == "LOC" and t.place is not None and t.place.kind == COUNTRY_KIND and t.place.country:
            countries.setdefault(t.place.country, []).append(cl.qid)
    out: dict[str, set[str]] = {}
    for cl, t in zip(clusters, typings):
        if cl.coarse != "LOC" or t.place is None or t.place.kind not in PLACED_KINDS:
            continue
        codes = {p.country for n in cl.names() for p in gz.places_for(n) if p.kind != "language"}
        if len(codes) == 1 and (code := next(iter(codes))) in countries:
            if inside := {q for q in countries[code] if q != cl.qid}:
                out[cl.qid] = inside
    return out


UNTYPED_POLICIES = ("keep", "coarse")


def is_untyped(cl: Cluster) -> bool:
    """Whether no signal named the kind of a non-person cluster (its class is a generic one)."""
    return cl.coarse != "PER" and cl.fine in GENERIC and cl.signal == "fallback"


DEMONYM = "P1549"
# fine classes whose items may carry the lexicon's demonyms (countries, regions, subdivisions, cities)
DEMONYM_BEARING = frozenset({"Q6256", "Q3624078", "Q3024240", "Q7275", "Q5107", "Q82794", "Q1620908", "Q35657",
                             "Q5852411", "Q107390", "Q34876", "Q10864048", "Q515", "Q9174"})


demonym_statement = wj.demonym_statement  # the official statement shape (English)


def _type_cluster(cl: Cluster, t: Typing, typer: FineTyper, table: TypeTable,
                  overrides: dict[tuple[str, str], tuple[str, ...]], extra_coarse: dict[str, str],
                  parents: dict[str, str | None]) -> None:
    """Set the cluster's class, the signal that decided it and its demonyms."""
    if overrides:  # an index's constraints name classes of its own: they decide where they apply
        via_index = table.infer(cl.roles, cl.coarse, overrides, extra_coarse, parents)
        if via_index not in table.classes:
            cl.fine, cl.signal = via_index, "index constraints"
            return
    names = cl.names()
    cl.fine, cl.signal = t.qid, t.signal
    if t.adjectival:  # its names that are adjectival forms (a mostly adjectival cluster may have noun aliases)
        cl.demonyms = [n for n in names if typer.gz.adjectival_for(n)]
    elif t.qid in DEMONYM_BEARING or is_city_class(t.qid):
        forms = ((typer.gz.country_demonyms(t.place) if t.place is not None else [])
                 or typer.gz.demonyms_of(names[0]))
        # and its own names the lexicon gives as singular adjectival forms ("British" in an England
        # cluster, "American" beside "US"), so generate knows those mentions for demonyms
        own = [n for n in names if any(not a.kind.endswith("_plural") for a in typer.gz.adjectival_for(n))]
        cl.demonyms = sorted(set(forms) | set(own))


__all__ = ["KB_QID_RANGE", "LEXICON_SIGNAL", "Corpus", "KbResult", "cluster_corpus", "cluster_name", "corpus_evidence",
           "country_claims", "kb_from_corpus", "lexicon_clusters"]
