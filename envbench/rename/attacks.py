"""The attacks of ``envbench generate --attack``: each a renaming with another choice of names.

Env renaming asks one question: how much F1 falls when every name changes to a novel one of the
same fine type. The attacks ask the neighbouring ones on the same documents, scored the same way
(``envbench report`` with several Env folders sets them side by side):

* ``rename`` (the default, the Env benchmark): the engine's renaming (``engine``). With ``--rate P``
  only a share P of the entities it renames keep their new names (:func:`apply_rate`): the entities
  of a document fall into *units* that must change together (every TIME entity of a document, whose
  dates move by one shift; two numbers of a pair; "the X" and the "X" nested in it; entities of one
  item), and a unit is renamed when ``stable_uniform(seed, title, "rate", first entity) < P``. The
  draw does not depend on P, so the entities renamed at 0.2 are among those renamed at 0.4, and each
  renamed entity has the very name it has at 1.0: a rate curve differs only in how much is renamed.
  ``--popularity low|high`` draws candidates from the lower or upper quartile of popularity in their
  fine-type class (``core.attacks.POPULARITY_BINS``).
* ``mask``: every mention of an entity becomes its type placeholder ("Person 3", "Organization 1";
  ``envbench/core/placeholders.py``, the one definition the names-only baseline of ``envbench train``
  also reads), a distinct one per entity, numbered per type by first mention. Mask does not depend on
  the seed: one seed is enough.
* ``shuffle``: the names move among the document's entities of one coarse type, so they stay real
  names of the document but land on another entity (:func:`shuffle_partners`). An entity never keeps
  its own name where another entity of its type has other names (unless one group of entities sharing
  names is more than half of the type, where no permutation can move them all).
* ``type-swap``: every PER, ORG, LOC and MISC entity takes the names of an item drawn from a class
  of another coarse type ("Marie Curie" may read "Lake Baikal"). A **negative control**: it breaks
  what the labels assume of their arguments (a place cannot be born), so its fall is an upper bound
  on what names alone can cost, not a robustness figure. NUM and TIME stay (``not_attacked``).

Every attack keeps the labels, the evidence and the entity order, rewrites positions through
``substitute.apply_plan``, and gives each distinct mention name one new name, the same at every
mention (the alias-wise rule; mask gives all names of an entity its one placeholder). Entities whose
mentions overlap keep their names under every attack (the overlap policy), as do "the X" and "X"
pairs, whose one span cannot take two placeholders. All choices come from hashing stable keys
(``core.seeding``), so every attack is deterministic per seed; ``stats.json`` and the manifest record
it (:meth:`Attack.record`), and the default run (``rename`` at rate 1.0, any popularity) writes
nothing new, so the Env benchmark's bytes do not change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from envbench.core.attacks import Attack
from envbench.core.errors import EnvbenchError
from envbench.core.placeholders import numbered
from envbench.core.reasons import KeptReason
from envbench.core.seeding import derive_seed, stable_shuffle, stable_uniform
from envbench.core.types import LINKED_TYPES
from envbench.formats.docred import Doc, distinct_names, entity_type
from envbench.rename.candidates import (
    MAX_WINDOWS,
    CandidateSource,
    ItemNames,
    Slot,
    item_names,
    window_bounds,
)
from envbench.rename.engine import DocInfo, Row, Run, keep
from envbench.rename.fine_types import is_catch_all
from envbench.rename.substitute import (
    NewName,
    apply_plan,
    clash_keys,
    overlapping_entities,
    pair_names,
    self_overlapping_entities,
    text_key,
)

SWAP_TYPES = LINKED_TYPES  # the coarse types type-swap renames (from one another)


# --------------------------------------------------------------------------- rename at a rate
def rate_units(info: DocInfo) -> list[tuple[int, ...]]:
    """The entities of a document that ``--rate`` renames or keeps together, each unit in entity order.

    Every TIME entity (one date shift moves them all, and a date kept beside a moved one could put
    a death before a birth), the two ends of a number pair ("one to five years"), "the X" and the "X"
    nested in it, the entities of one item (``DocInfo.same_item``), and a name built on other names with
    those names (``DocInfo.built_on``: "USS Lyndon B. Johnson" and "Lyndon B. Johnson") are one unit; every
    other entity is a unit of its own.
    """
    n = len(info.coarse)
    parent = list(range(n))

    def root(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    def join(a: int, b: int) -> None:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    times = [ei for ei, c in enumerate(info.coarse) if c == "TIME"]
    for ei in times[1:]:
        join(times[0], ei)
    for f, lead in info.followers.items():
        join(f, lead)
    for later, lead in info.same_item.items():
        join(later, lead)
    for builder, by_name in info.built_on.items():  # a name built on another follows it (``rename.built_on``)
        for runs in by_name.values():
            for r in runs:
                join(builder, r.leader)
    for pairs in info.number_pairs.values():
        for a, _, b, _, _ in pairs:
            join(a, b)
    units: dict[int, list[int]] = {}
    for ei in range(n):
        units.setdefault(root(ei), []).append(ei)
    return [tuple(u) for _, u in sorted(units.items())]


def unit_draw(seed: int, title: str, unit: Sequence[int]) -> float:
    """The unit's number in [0, 1): it is renamed at every rate above it (so rates nest)."""
    return stable_uniform(seed, title, "rate", unit[0])


def selected(info: DocInfo, seed: int, rate: float) -> set[int]:
    """The entities of a run that ``--rate`` lets keep their new names."""
    if rate >= 1:
        return set(range(len(info.coarse)))
    return {ei for unit in rate_units(info) if unit_draw(seed, info.title, unit) < rate for ei in unit}


def apply_rate(run: Run, rate: float) -> None:
    """Undo the renaming of the entities ``--rate`` leaves out: kept, as ``not_selected``."""
    if rate >= 1:
        return
    chosen = selected(run.info, run.seed, rate)
    undone: set[str] = set()  # where an entity left out had its name written outside every mention
    for i, r in enumerate(run.rows):
        if r.kind == "kept" or r.entity in chosen:
            continue
        undone.update(r.unannotated)
        run.rows[i] = Row(r.entity, r.coarse, "kept", KeptReason.NOT_SELECTED, r.qid, r.fine_type, None,
                          r.old_names, list(r.old_names), gender=r.gender, gender_from=r.gender_from,
                          value_rule=r.value_rule)
        run.plan.pop(r.entity, None)
        run.new_items.pop(r.entity, None)
        run.new_tokens.pop(r.entity, None)
    if undone:
        run.outside = [o for o in run.outside if f"{o[0]}:{o[1]}-{o[2]}" not in undone]


# --------------------------------------------------------------------------- shared by the attacks
def kept_apart(info: DocInfo) -> set[int]:
    """The entities every attack leaves as they are: overlapping mentions, and "the X" around "X"."""
    return set(info.overlap) | set(info.followers) | set(info.leaders)


def _new_run(info: DocInfo, seed: int) -> Run:
    return Run(info, seed, f"{info.title}-{seed}", {})


def _done(runs: list[Run], bar: Any) -> list[Run]:
    for run in runs:
        run.rows.sort(key=lambda r: r.entity)
        if bar is not None:
            bar.update(1)
    return runs


# --------------------------------------------------------------------------- mask
def mask_plan(doc: Doc, coarse: Sequence[str], skip: Iterable[int] = ()) -> dict[int, dict[str, NewName]]:
    """Every name of each entity (less ``skip``) -> its placeholder ("Person 3"), numbered per type by first mention."""
    left = set(skip)
    tokens = numbered(doc["vertexSet"], coarse, [ei for ei in range(len(coarse)) if ei not in left])
    return {ei: {nm: NewName(" ".join(toks), toks) for nm in distinct_names(doc["vertexSet"][ei])}
            for ei, toks in tokens.items()}


def mask_document(doc: Doc) -> Doc:
    """``doc`` with every mention replaced by its entity's type placeholder, same title: the names-only
    view (``names_only`` of ``envbench train``). Entities whose mentions overlap keep their names."""
    coarse = [entity_type(e) for e in doc["vertexSet"]]
    skip = overlapping_entities(doc) | self_overlapping_entities(doc)
    return apply_plan(doc, mask_plan(doc, coarse, skip), doc["title"])


def mask_runs(infos: Sequence[DocInfo], seeds: Sequence[int], bar: Any = None) -> list[Run]:
    runs = []
    for info in infos:
        skip = kept_apart(info)
        plan = mask_plan(info.doc, info.coarse, skip)
        for k in seeds:
            run = _new_run(info, k)
            for ei in range(len(info.coarse)):
                if ei not in plan:
                    keep(run, ei, KeptReason.OVERLAP)
                    continue
                run.plan[ei] = plan[ei]
                names = info.names[ei]
                run.rows.append(Row(ei, info.coarse[ei], "mask", None, info.qids[ei], info.fine_type(ei), None,
                                    names, [plan[ei][nm].name for nm in names]))
            runs.append(run)
    return _done(runs, bar)


# --------------------------------------------------------------------------- shuffle
def name_groups(names: Mapping[int, Sequence[str]]) -> dict[int, int]:
    """Entity -> its group: entities that share a name (by ``substitute.text_key``), directly or through
    others, are one group ("John Smith" / "Smith" and "Smith"), and no entity takes names of its own group."""
    parent = {ei: ei for ei in names}

    def root(a: int) -> int:
        while parent[a] != a:
            a = parent[a]
        return a

    owner: dict[tuple[str, ...], int] = {}
    for ei in sorted(names):
        for nm in names[ei]:
            key = text_key(nm)
            if key in owner:
                ra, rb = root(owner[key]), root(ei)
                if ra != rb:
                    parent[max(ra, rb)] = min(ra, rb)
            else:
                owner[key] = ei
    return {ei: root(ei) for ei in names}


def shuffle_partners(entities: Sequence[int], group: Mapping[int, int], *keys: object) -> dict[int, int]:
    """A permutation of ``entities`` (entity -> the entity whose names it takes) that gives no entity names
    of its own group wherever one can: the entities in a seeded order, grouped (largest group first), each
    taking the names of the entity m places on, m the largest group's size. When m is at most half of them
    no entity meets its own group; otherwise m of them cannot leave it, and they do what they can."""
    order = stable_shuffle(list(entities), *keys)
    members: dict[int, list[int]] = {}
    for ei in order:
        members.setdefault(group[ei], []).append(ei)
    place = {g: i for i, g in enumerate(members)}
    blocks = sorted(members.values(), key=lambda b: (-len(b), place[group[b[0]]]))
    seq = [ei for b in blocks for ei in b]
    n, m = len(seq), len(blocks[0]) if blocks else 0
    return {seq[i]: seq[(i + m) % n] for i in range(n)}


def _nearest(name: str, pool: Sequence[str], tokens: Mapping[str, Sequence[str]]) -> str:
    """The name of ``pool`` closest to ``name`` in token count, then characters (the longer on a tie)."""
    n = len(tokens.get(name, name.split()))
    return min(pool, key=lambda p: (abs(len(tokens.get(p, p.split())) - n), abs(len(p) - len(name)), -len(p), p))


def shuffle_names(info: DocInfo, ei: int, partner: int) -> dict[str, NewName]:
    """Entity ``ei``'s names -> names of ``partner``, as they are tokenised in the document: the alias-wise
    pairing (``substitute.pair_names``, the partner's longest name as the label) where the partner has as
    many names, else each name the partner's name nearest in length ("Barack Obama" / "Obama" -> "Angela
    Merkel" / "Angela Merkel" when the partner has one name)."""
    own, theirs = info.names[ei], info.names[partner]
    tokens = info.tokens[partner]
    ordered = sorted(theirs, key=lambda nm: (-len(tokens[nm]), -len(nm), nm))
    paired = pair_names(own, ordered[0], ordered[1:], info.tokens[ei]) if len(theirs) >= len(own) else None
    by_text = {" ".join(nm.split()): nm for nm in theirs}  # pair_names writes names with single spaces
    out: dict[str, NewName] = {}
    for nm in own:
        got = by_text.get(paired[nm].name) if paired is not None and nm in paired else None
        pick = got if got is not None else _nearest(nm, theirs, {**info.tokens[ei], **tokens})
        out[nm] = NewName(pick, tuple(tokens[pick]))
    return out


def shuffle_runs(infos: Sequence[DocInfo], seeds: Sequence[int], bar: Any = None) -> list[Run]:
    runs = []
    for info in infos:
        skip = kept_apart(info)
        by_type: dict[str, list[int]] = {}
        for ei, c in enumerate(info.coarse):
            if ei not in skip:
                by_type.setdefault(c, []).append(ei)
        for k in seeds:
            run = _new_run(info, k)
            for ei in sorted(skip):
                keep(run, ei, KeptReason.OVERLAP)
            for coarse, ents in sorted(by_type.items()):
                group = name_groups({ei: info.names[ei] for ei in ents})
                if len(set(group.values())) < 2:  # alone, or every other entity shares its names
                    for ei in ents:
                        keep(run, ei, KeptReason.NO_PARTNER)
                    continue
                partners = shuffle_partners(ents, group, k, info.title, "shuffle", coarse)
                for ei in ents:
                    mapping = shuffle_names(info, ei, partners[ei])
                    if all(text_key(nn.name) == text_key(nm) for nm, nn in mapping.items()):
                        keep(run, ei, KeptReason.NO_PARTNER)  # its names came back (a group over half the type)
                        continue
                    run.plan[ei] = mapping
                    if (q := info.qids[partners[ei]]) is not None:
                        run.new_items[ei] = q
                    names = info.names[ei]
                    run.rows.append(Row(ei, coarse, "shuffle", None, info.qids[ei], info.fine_type(ei), q,
                                        names, [mapping[nm].name for nm in names]))
            runs.append(run)
    return _done(runs, bar)


# --------------------------------------------------------------------------- type-swap
def swap_classes(ftypes: Mapping[tuple[str, str], str]) -> dict[str, list[str]]:
    """Per coarse type, the fine types of its linked items (one per item, by QID), catch-alls left out:
    what a type-swapped entity draws a class from, so a class is drawn as often as the corpus uses it."""
    out: dict[str, list[str]] = {t: [] for t in SWAP_TYPES}
    for (_q, coarse), ft in sorted(ftypes.items()):
        if coarse in out and not is_catch_all(ft):
            out[coarse].append(ft)
    return out


def swap_class(classes: Mapping[str, Sequence[str]], coarse: str, seed: int, title: str, ei: int) -> str | None:
    """The class a type-swapped entity draws from: a class of another coarse type (None when the corpus has
    no linked item of another type)."""
    others = [t for t in SWAP_TYPES if t != coarse and classes.get(t)]
    if not others:
        return None
    target = others[derive_seed(seed, title, ei, "type-swap") % len(others)]
    pool = classes[target]
    return pool[derive_seed(seed, title, ei, "type-swap", target) % len(pool)]


@dataclass
class _Swap:
    run: Run
    todo: list[int]  # the entities to swap, in entity order
    slots: dict[int, int]  # entity -> slot index
    cursor: int = 0
    window: int = 0


def swap_runs(infos: Sequence[DocInfo], seeds: Sequence[int], renamer: Any, bar: Any = None) -> list[Run]:
    """Type-swap: each PER/ORG/LOC/MISC entity takes the names of the first item of its draw (as the Env
    draw reads windows of candidates, ``candidates``) from a class of another coarse type whose names pair
    with its names and clash with nothing in the document, nor with the ``--exclude-names-from`` names."""
    con = renamer.con
    classes = swap_classes(infos[0].ftypes) if infos else {}
    slots: list[Slot] = []
    states: list[_Swap] = []
    for info in infos:
        skip = kept_apart(info)
        for k in seeds:
            run = _new_run(info, k)
            todo, run_slots = [], {}
            for ei, coarse in enumerate(info.coarse):
                if ei in skip:
                    keep(run, ei, KeptReason.OVERLAP)
                elif coarse not in SWAP_TYPES:
                    keep(run, ei, KeptReason.NOT_ATTACKED)
                elif (cls := swap_class(classes, coarse, k, info.title, ei)) is None:
                    keep(run, ei, KeptReason.NO_CANDIDATE)
                else:
                    run_slots[ei] = len(slots)
                    slots.append(Slot(cls, len(info.names[ei]), renamer.pool, info.qids[ei] or "", k, info.title, ei))
                    todo.append(ei)
            states.append(_Swap(run, todo, run_slots))
    source = CandidateSource(con, slots, cache_dir=renamer.cache_dir, fingerprint=renamer.fingerprint)
    windows: dict[tuple[int, int], list[str]] = {}
    names: dict[str, ItemNames] = {}
    active = states
    while active:
        wanted: list[tuple[int, int]] = []
        still = []
        for st in active:
            need = _advance_swap(st, slots, source.total, windows, names, renamer.excluded)
            if need is not None:
                wanted.append(need)
                still.append(st)
        if wanted:
            got = source.windows(wanted)
            windows.update(got)
            names.update(item_names(con, sorted({q for lst in got.values() for q in lst} - names.keys())))
        active = still
    return _done([st.run for st in states], bar)


def _advance_swap(st: _Swap, slots: Sequence[Slot], total: Callable[[Slot], int],
                  windows: Mapping[tuple[int, int], list[str]], names: Mapping[str, ItemNames],
                  excluded: frozenset[tuple[str, ...]]) -> tuple[int, int] | None:
    """Settle the run's entities until a window is missing (returned) or all are settled (None)."""
    run, info = st.run, st.run.info
    while st.cursor < len(st.todo):
        ei = st.todo[st.cursor]
        si = st.slots[ei]
        n = total(slots[si])
        done = False
        while st.window < MAX_WINDOWS and window_bounds(st.window)[0] < n:
            window = windows.get((si, st.window))
            if window is None:
                return (si, st.window)
            for cand in window:
                item = names.get(cand)
                if item is None:
                    continue
                mapping = pair_names(info.names[ei], item.label, item.aliases, info.tokens[ei])
                if mapping is None:
                    continue
                keys = [k for nn in mapping.values() for k in clash_keys(nn.name)]
                if any(k in run.taken or info.occurs(k) or k in excluded for k in keys):
                    continue
                run.plan[ei] = mapping
                run.taken.update(keys)
                run.new_items[ei] = cand
                names_old = info.names[ei]
                run.rows.append(Row(ei, info.coarse[ei], "swap", None, info.qids[ei], info.fine_type(ei), cand,
                                    names_old, [mapping[nm].name for nm in names_old],
                                    drawn_by=(slots[si].fine_type,)))
                done = True
                break
            if done:
                break
            st.window += 1
        if not done:
            keep(run, ei, KeptReason.NO_CANDIDATE)
        st.cursor += 1
        st.window = 0
    return None


# --------------------------------------------------------------------------- the hook of generate
def require_popularity(con: Any, index: Any) -> None:
    """Refuses ``--popularity`` on an index without popularity (made from a dump with no item-valued statements)."""
    counted = con.execute("SELECT count(popularity) FROM entities").fetchall()[0][0]
    if not counted:
        raise EnvbenchError(f"--popularity: the index {index} has no popularity (its dump holds no item-valued "
                            "statements to count); leave --popularity out, or ingest a dump with statements")


def settle(attack: Attack, renamer: Any, infos: Sequence[DocInfo], seeds: Sequence[int], twins: bool,
           bar: Any = None, lap: Callable[[str], None] | None = None) -> list[Run]:
    """The settled runs of ``infos`` under ``attack`` (document order, then seed), as ``Renamer.rename`` gives
    the Env renaming's."""
    if attack.name == "rename":
        runs = renamer.rename(infos, seeds, twins, bar, lap=lap)
        for run in runs:
            apply_rate(run, attack.rate)
        return runs
    # the audit (generate records each run's type-constraint checks) reads the classes of the entities' own
    # items and of the items whose names they took: both known before a check is made and remembered
    renamer.auditor.prepare(sorted({q for info in infos for q in info.qids if q is not None}))
    if attack.name == "mask":
        runs = mask_runs(infos, seeds, bar)
    elif attack.name == "shuffle":
        runs = shuffle_runs(infos, seeds, bar)
    else:
        runs = swap_runs(infos, seeds, renamer, bar)
    renamer.auditor.prepare(sorted({q for run in runs for q in run.new_items.values()}))
    if lap is not None:
        lap("draw_and_rename")
    return runs


__all__ = ["SWAP_TYPES", "apply_rate", "kept_apart", "mask_document", "mask_plan", "mask_runs", "name_groups",
           "rate_units", "require_popularity", "selected", "settle", "shuffle_names", "shuffle_partners",
           "shuffle_runs", "swap_class", "swap_classes", "swap_runs", "unit_draw"]
