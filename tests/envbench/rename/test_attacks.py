"""The attacks of ``generate --attack``: mask, shuffle, type-swap and rename at a rate (envbench/rename/attacks.py)."""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envbench.core.errors import EnvbenchError
from envbench.core.placeholders import PLACEHOLDER_WORDS
from envbench.core.reasons import KeptReason
from envbench.core.types import COARSE_TYPES
from envbench.formats.docred import entity_type, validate_document
from envbench.rename import attacks
from envbench.rename import generate as generate_module
from envbench.rename.attacks import (
    SWAP_TYPES,
    apply_rate,
    kept_apart,
    mask_document,
    mask_runs,
    name_groups,
    rate_units,
    selected,
    shuffle_partners,
    shuffle_runs,
    swap_runs,
)
from envbench.rename.audit import Auditor
from envbench.rename.engine import DocInfo, Renamer, Run
from envbench.rename.fine_types import fine_types
from envbench.rename.generate import generate
from envbench.rename.substitute import NewName, apply_plan, clash_keys, text_key
from tests.envbench.index_fixture import mention, sample_world

WORDS = ("Alder", "Birch", "Cedar", "Dale", "Elm", "Fen")


@st.composite
def documents(draw: Any) -> dict[str, Any]:
    """A document of 1-7 entities of any type, each with 1-2 names of 1-3 words (names may repeat across
    entities, as Re-DocRED's split entities do), mentioned in sentences without overlapping spans."""
    n = draw(st.integers(1, 7))
    types = [draw(st.sampled_from(COARSE_TYPES)) for _ in range(n)]
    words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(tuple)
    names = [draw(st.lists(words, min_size=1, max_size=2, unique=True)) for _ in range(n)]
    refs = [(e, k) for e in range(n) for k in range(len(names[e]))]
    refs += [(e % n, k) for e, k in draw(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 1)), max_size=4))
             if k < len(names[e % n])]
    refs = draw(st.permutations(refs))
    n_sents = draw(st.integers(1, 3))
    sents: list[list[str]] = [["So"] for _ in range(n_sents)]
    vertex_set: list[list[dict[str, Any]]] = [[] for _ in range(n)]
    for i, (e, k) in enumerate(refs):
        sid = i % n_sents
        toks = list(names[e][k])
        start = len(sents[sid])
        sents[sid] += [*toks, "and"]
        vertex_set[e].append(mention(" ".join(toks), sid, [start, start + len(toks)], types[e]))
    for s in sents:
        s.append(".")
    labels = [{"h": h, "t": t, "r": "P17", "evidence": [0]} for h in range(n) for t in range(n) if h != t][:5]
    return {"title": "Doc", "sents": sents, "vertexSet": vertex_set, "labels": labels}


def _info(doc: dict[str, Any]) -> DocInfo:
    return DocInfo(0, doc, [None] * len(doc["vertexSet"]), {})


def _as_given(name: str) -> str:
    """A written new name as the plan gave it: without the "the" a place's name takes in a sentence ("held in
    the United Arab Emirates") and the capital a sentence's first word takes (``substitute.apply_plan``)."""
    if name.startswith(("The ", "the ")):
        name = name[4:]
    return name[:1].lower() + name[1:]


def _alias_map(src: dict[str, Any], out: dict[str, Any]) -> dict[tuple[int, str], set[str]]:
    """(entity, old name) -> the new names its mentions carry (as the plan gave them, :func:`_as_given`)."""
    got: dict[tuple[int, str], set[str]] = {}
    for ei, (old, new) in enumerate(zip(src["vertexSet"], out["vertexSet"], strict=True)):
        for a, b in zip(old, new, strict=True):
            got.setdefault((ei, a["name"]), set()).add(_as_given(b["name"]))
    return got


def _check_kept_structure(src: dict[str, Any], out: dict[str, Any]) -> None:
    """Labels, entities, mention types and sentences kept; every mention's tokens spell its name (spaces
    aside: a name may be written "Lankel: Part One" over the tokens "Lankel" ":" "Part" "One")."""
    assert out["labels"] == src["labels"]
    assert len(out["sents"]) == len(src["sents"])
    assert [[m["type"] for m in e] for e in out["vertexSet"]] == [[m["type"] for m in e] for e in src["vertexSet"]]
    assert not [p for p in validate_document(out, 0) if p.severity == "error"]
    for e in out["vertexSet"]:
        for m in e:
            written = "".join(out["sents"][m["sent_id"]][m["pos"][0]:m["pos"][1]])
            assert written == m["name"].replace(" ", ""), (written, m["name"])


# --------------------------------------------------------------------------- mask
@settings(max_examples=60, deadline=None)
@given(documents())
def test_mask_keeps_labels_and_gives_every_entity_a_distinct_placeholder(doc: dict[str, Any]) -> None:
    info = _info(doc)
    runs = mask_runs([info], [1, 2])
    outs = [apply_plan(doc, run.plan, run.title) for run in runs]
    assert outs[0]["sents"] == outs[1]["sents"]  # mask does not depend on the seed
    out = outs[0]
    _check_kept_structure(doc, out)
    per_entity = [{m["name"] for m in e} for e in out["vertexSet"]]
    assert all(len(names) == 1 for names in per_entity)  # every mention of an entity: its one placeholder
    written = [next(iter(names)) for names in per_entity]
    assert len(set(written)) == len(written)  # distinct across entities
    for ei, name in enumerate(written):
        word, number = name.split()
        assert word == PLACEHOLDER_WORDS[info.coarse[ei]] and int(number) >= 1
    assert all(len(v) == 1 for v in _alias_map(doc, out).values())
    assert {r.kind for r in runs[0].rows} == {"mask"}


def test_mask_numbers_each_type_by_first_mention_and_leaves_overlaps() -> None:
    doc = {"title": "T", "sents": [["Ann", "met", "Bo", "of", "New", "York", "in", "York", "."],
                                   ["Bo", "and", "Ann", "left", "."]],
           "vertexSet": [[mention("Bo", 0, [2, 3], "PER"), mention("Bo", 1, [0, 1], "PER")],
                         [mention("Ann", 0, [0, 1], "PER"), mention("Ann", 1, [2, 3], "PER")],
                         [mention("New York", 0, [4, 6], "LOC")], [mention("York", 0, [5, 6], "LOC")],
                         [mention("York", 0, [7, 8], "LOC")]],
           "labels": []}
    out = mask_document(doc)
    assert out["sents"] == [["Person", "1", "met", "Person", "2", "of", "New", "York", "in", "Location", "1", "."],
                            ["Person", "2", "and", "Person", "1", "left", "."]]
    assert [[m["name"] for m in e] for e in out["vertexSet"]] == [
        ["Person 2", "Person 2"], ["Person 1", "Person 1"], ["New York"], ["York"], ["Location 1"]]


# --------------------------------------------------------------------------- shuffle
@settings(max_examples=80, deadline=None)
@given(documents(), st.integers(1, 5))
def test_shuffle_moves_names_within_a_type_and_never_back_to_their_entity(doc: dict[str, Any], seed: int) -> None:
    info = _info(doc)
    run = shuffle_runs([info], [seed])[0]
    out = apply_plan(doc, run.plan, run.title)
    _check_kept_structure(doc, out)
    assert all(len(v) == 1 for v in _alias_map(doc, out).values())  # one new name per (entity, name)
    rows = {r.entity: r for r in run.rows}
    by_type: dict[str, list[int]] = {}
    for ei, c in enumerate(info.coarse):
        by_type.setdefault(c, []).append(ei)
    for coarse, ents in by_type.items():
        group = name_groups({ei: info.names[ei] for ei in ents})
        sizes = Counter(group.values())
        for ei in ents:
            new = {m["name"] for m in out["vertexSet"][ei]}
            # names stay real names of the document, of another entity of the type
            assert new <= {nm for other in ents for nm in info.names[other]}
            if len(sizes) >= 2 and max(sizes.values()) * 2 <= len(ents):
                # a partner with other names exists and no name group holds over half: no name comes back
                assert rows[ei].kind == "shuffle"
                assert not {text_key(n) for n in new} & {text_key(n) for n in info.names[ei]}, (coarse, ei)
            elif len(sizes) < 2:
                assert rows[ei].reason is not None and rows[ei].reason.value == "no_partner"


def test_shuffle_partners_is_a_permutation_that_leaves_every_group() -> None:
    ents = list(range(7))
    group = {0: 0, 1: 0, 2: 0, 3: 3, 4: 4, 5: 4, 6: 6}  # largest group 3 of 7
    for seed in range(20):
        p = shuffle_partners(ents, group, seed, "T", "PER")
        assert sorted(p.values()) == ents
        assert all(group[a] != group[b] for a, b in p.items())


def test_shuffle_reads_a_document_as_a_reader_sees_it() -> None:
    doc = {"title": "T", "sents": [["Ann", "Lee", "met", "Bo", "Park", "in", "Rome", ";", "Lee", "stayed", "."]],
           "vertexSet": [[mention("Ann Lee", 0, [0, 2], "PER"), mention("Lee", 0, [8, 9], "PER")],
                         [mention("Bo Park", 0, [3, 5], "PER")], [mention("Rome", 0, [6, 7], "LOC")]],
           "labels": [{"h": 0, "t": 1, "r": "P26", "evidence": [0]}]}
    run = shuffle_runs([_info(doc)], [1])[0]
    out = apply_plan(doc, run.plan, run.title)
    # the two persons swap; the one-name partner gives both of Ann Lee's names its one name; Rome has no partner
    assert " ".join(out["sents"][0]) == "Bo Park met Ann Lee in Rome ; Bo Park stayed ."
    assert {r.entity: r.reason.value for r in run.rows if r.reason is not None} == {2: "no_partner"}


# --------------------------------------------------------------------------- rename at a rate
@settings(max_examples=60, deadline=None)
@given(documents(), st.integers(1, 5), st.floats(0.01, 1.0), st.floats(0.01, 1.0))
def test_rates_nest_and_time_entities_move_together(doc: dict[str, Any], seed: int, a: float, b: float) -> None:
    info = _info(doc)
    lo, hi = sorted((a, b))
    low, high = selected(info, seed, lo), selected(info, seed, hi)
    assert low <= high <= set(range(len(doc["vertexSet"])))
    assert selected(info, seed, 1.0) == set(range(len(doc["vertexSet"])))
    times = {ei for ei, c in enumerate(info.coarse) if c == "TIME"}
    assert times <= low or not times & low
    units = rate_units(info)
    assert sorted(ei for u in units for ei in u) == list(range(len(doc["vertexSet"])))


@pytest.fixture(scope="module")
def rated(tmp_path_factory: pytest.TempPathFactory) -> dict[float, Path]:
    w = sample_world()
    out = {}
    for rate in (0.2, 0.4, 1.0):
        out[rate] = tmp_path_factory.mktemp(f"rate{rate}")
        generate(w.test, w.index, out[rate], links=w.links, seeds=3, rate=rate, progress=False, allow_training_names=True)
    return out


def test_renamed_at_a_lower_rate_are_renamed_at_a_higher_one_with_the_same_names(rated: dict[float, Path]) -> None:
    renamed = {}
    for rate, folder in rated.items():
        rows = pl.read_parquet(folder / "substitutions.parquet").to_dicts()
        renamed[rate] = {(r["title"], r["entity"]): (r["new_qid"], tuple(r["new_names"])) for r in rows
                         if r["kind"] != "kept"}
        kept = Counter(r["reason"] for r in rows if r["kind"] == "kept")
        if rate < 1:
            assert kept["not_selected"] > 0
    assert set(renamed[0.2]) < set(renamed[0.4]) < set(renamed[1.0])
    for rate in (0.2, 0.4):
        assert all(renamed[1.0][k] == v for k, v in renamed[rate].items())  # the very names of rate 1.0
    share = {rate: len(renamed[rate]) / len(renamed[1.0]) for rate in (0.2, 0.4)}
    assert 0.1 < share[0.2] < 0.35 and 0.3 < share[0.4] < 0.55, share


def test_rate_one_is_the_env_benchmark_byte_for_byte(rated: dict[float, Path], tmp_path: Path) -> None:
    w = sample_world()
    generate(w.test, w.index, tmp_path, links=w.links, seeds=3, progress=False, allow_training_names=True)  # no attack arguments at all
    for name in ("test_env.json", "substitutions.parquet", "stats.json"):
        assert (tmp_path / name).read_bytes() == (rated[1.0] / name).read_bytes()
    assert "attack" not in json.loads((tmp_path / "stats.json").read_text())
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert "attack" not in manifest["parameters"]
    stats = json.loads((rated[0.4] / "stats.json").read_text())
    assert stats["attack"] == {"name": "rename", "rate": 0.4, "popularity": None, "negative_control": False}
    assert json.loads((rated[0.4] / "manifest.json").read_text())["parameters"]["attack"] == stats["attack"]


def test_rate_keeps_the_documents_readable(rated: dict[float, Path]) -> None:
    src = {d["title"]: d for d in json.loads(sample_world().test.read_text())}
    for doc in json.loads((rated[0.4] / "test_env.json").read_text()):
        _check_kept_structure(src[doc["title"].rsplit("-", 1)[0]], doc)


# --------------------------------------------------------------------------- every attack through generate
@pytest.fixture(scope="module")
def attacked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    w = sample_world()
    out = {}
    for name in ("mask", "shuffle", "type-swap"):
        out[name] = tmp_path_factory.mktemp(name)
        generate(w.test, w.index, out[name], links=w.links, seeds=2, attack=name, progress=False, allow_training_names=True)
    return out


@pytest.mark.parametrize("name", ["mask", "shuffle", "type-swap"])
def test_each_attack_keeps_labels_positions_and_the_alias_map(attacked: dict[str, Path], name: str) -> None:
    src = {d["title"]: d for d in json.loads(sample_world().test.read_text())}
    out = json.loads((attacked[name] / "test_env.json").read_text())
    assert [d["title"] for d in out] == [f"{t}-{k}" for t in src for k in (1, 2)]
    rows = pl.read_parquet(attacked[name] / "substitutions.parquet")
    assert set(rows["kind"].unique()) <= {{"mask": "mask", "shuffle": "shuffle", "type-swap": "swap"}[name], "kept"}
    for doc in out:
        s = src[doc["title"].rsplit("-", 1)[0]]
        _check_kept_structure(s, doc)
        assert all(len(v) == 1 for v in _alias_map(s, doc).values())
    stats = json.loads((attacked[name] / "stats.json").read_text())
    assert stats["attack"]["name"] == name and stats["attack"]["negative_control"] == (name == "type-swap")


def test_type_swap_draws_names_of_another_coarse_type(attacked: dict[str, Path]) -> None:
    w = sample_world()
    from wikidata_index.index import WikidataIndex

    rows = pl.read_parquet(attacked["type-swap"] / "substitutions.parquet").to_dicts()
    swapped = [r for r in rows if r["kind"] == "swap"]
    assert swapped and all(r["coarse_type"] in ("PER", "ORG", "LOC", "MISC") for r in swapped)
    assert {r["reason"] for r in rows if r["coarse_type"] in ("NUM", "TIME")} == {"not_attacked"}
    # the class each was drawn from is a class the corpus's entities of another coarse type have
    links = json.loads(w.links.read_text())
    docs = json.loads(w.test.read_text())
    with WikidataIndex(w.index) as ix:
        classes_of = {}
        for d in docs:
            for ei, q in enumerate(links[d["title"]]):
                if q is not None:
                    classes_of.setdefault(d["vertexSet"][ei][0]["type"], set()).update(ix.types(q))
    for r in swapped:
        drawn = r["drawn_by"][0]
        assert any(drawn in classes_of.get(t, ()) for t in classes_of if t != r["coarse_type"]), r
    stats = json.loads((attacked["type-swap"] / "stats.json").read_text())
    audit = stats["audit"]["total"]
    assert audit["held_after"] < audit["held_before"]  # the negative control breaks the type constraints


def test_attacks_are_deterministic_and_chunking_changes_no_byte(attacked: dict[str, Path], tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    w = sample_world()
    monkeypatch.setattr(generate_module, "CHUNK_RUNS", 3)
    for name in ("shuffle", "type-swap"):
        generate(w.test, w.index, tmp_path / name, links=w.links, seeds=2, attack=name, progress=False, allow_training_names=True)
        for f in ("test_env.json", "substitutions.parquet", "stats.json"):
            assert (tmp_path / name / f).read_bytes() == (attacked[name] / f).read_bytes(), (name, f)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"attack": "mask", "rate": 0.5}, "--rate 0.5 is for --attack rename (a share of the Env renaming); --attack mask "
                                      "changes every entity it can, so leave --rate out"),
    ({"rate": 0.0}, "--rate 0.0: the share of renamable entities to rename, above 0 and at most 1 (1 renames all of "
                    "them, the Env benchmark)"),
    ({"attack": "shuffle", "popularity": "low"}, "--popularity draws the Env renaming's candidates; --attack shuffle "
                                                 "draws none by popularity, so leave --popularity out"),
    ({"attack": "erase"}, "--attack 'erase': not an attack; use one of rename, mask, shuffle, type-swap"),
])
def test_attack_options_are_checked_before_any_work(tmp_path: Path, kwargs: dict[str, Any], message: str) -> None:
    w = sample_world()
    with pytest.raises(EnvbenchError) as exc:
        generate(w.test, w.index, tmp_path / "o", links=w.links, seeds=1, progress=False, **kwargs)
    assert str(exc.value) == message
    assert not (tmp_path / "o").exists()


def test_attacks_module_names_what_it_exports() -> None:
    assert all(hasattr(attacks, name) for name in attacks.__all__)


def test_generate_command_takes_and_checks_the_attack(tmp_path: Path) -> None:
    from tests.envbench.cli.invoke import run

    w = sample_world()
    base = ["generate", "--allow-training-names", w.test, "--index", w.index, "--links", w.links, "--seeds", "1", "--no-progress"]
    code, out = run(*base, "--attack", "shuffle", "--rate", "0.5", "--out", tmp_path / "o")
    assert (code, out) == (1, "Error: --rate 0.5 is for --attack rename (a share of the Env renaming); --attack "
                              "shuffle changes every entity it can, so leave --rate out\n")
    code, out = run(*base, "--attack", "type-swap", "--out", tmp_path / "swap")
    assert code == 0 and out.splitlines()[1] == "attack: type-swap (negative control)"


def test_a_locked_attack_folder_verifies(attacked: dict[str, Path], tmp_path: Path) -> None:
    # the lock keeps generate's parameters, the attack among them, and verify regenerates with them
    from envbench.rename.lock import read_lock, verify, write_lock

    w = sample_world()
    lock = write_lock(attacked["shuffle"], w.index, tmp_path / "shuffle.lock.json")
    assert read_lock(lock)["parameters"]["attack"]["name"] == "shuffle"
    res = verify(lock, w.test, w.index, links=w.links)
    assert res.ok, res.report()


# --------------------------------------------------------------------------- type-swap and rate, as properties
# (issue 61: each attack keeps the labels and the alias map). Both draw from an index: the sample world's,
# with its linked items as the entities' items and its fine types as the classes type-swap draws from.
@functools.cache
def _sample_items() -> dict[str, list[str]]:
    """Coarse type -> the sample world's items linked as that type (sorted)."""
    w = sample_world()
    links = json.loads(w.links.read_text())
    out: dict[str, set[str]] = {}
    for d in json.loads(w.test.read_text()):
        for ei, q in enumerate(links[d["title"]]):
            if q is not None:
                out.setdefault(entity_type(d["vertexSet"][ei]), set()).add(q)
    return {t: sorted(qs) for t, qs in out.items()}


@pytest.fixture(scope="module")
def drawing() -> Iterator[tuple[Renamer, dict[tuple[str, str], str]]]:
    """A renamer over the sample world's index, and the fine types of its linked items (what type-swap draws
    classes from, and what linked entities are renamed by)."""
    from wikidata_index.index import WikidataIndex

    w = sample_world()
    pairs = sorted({(q, t) for t, qs in _sample_items().items() for q in qs})
    with WikidataIndex(w.index) as ix:
        con = ix.con
        con.execute("SET enable_progress_bar = false")
        renamer = Renamer(con, Auditor.for_docs(con, json.loads(w.test.read_text())), "eval")
        yield renamer, fine_types(con, pairs)


def _respelled(doc: dict[str, Any], tokens_of: Mapping[tuple[int, str], Sequence[str]]) -> dict[str, Any]:
    """``doc`` with the mentions of (entity, name) in ``tokens_of`` written as those tokens, positions moved."""
    out = json.loads(json.dumps(doc))
    for sid, sent in enumerate(doc["sents"]):
        spans = sorted((m["pos"][0], m["pos"][1], ei, mi) for ei, e in enumerate(doc["vertexSet"])
                       for mi, m in enumerate(e) if m["sent_id"] == sid)
        new: list[str] = []
        cursor = 0
        for a, b, ei, mi in spans:
            m = out["vertexSet"][ei][mi]
            toks = list(tokens_of.get((ei, m["name"]), sent[a:b]))
            new += sent[cursor:a]
            m["pos"], m["name"] = [len(new), len(new) + len(toks)], " ".join(toks)
            new += toks
            cursor = b
        out["sents"][sid] = new + sent[cursor:]
    return out


@st.composite
def linked_documents(draw: Any) -> tuple[dict[str, Any], list[str | None]]:
    """A document of :func:`documents` and its links: each PER/ORG/LOC/MISC entity linked or not to an item the
    sample world links as that type (two entities may share one), and, in some documents, TIME entities
    whose names are years (renamed by the date shift) rather than words (which no rule renames)."""
    doc = draw(documents())
    items = _sample_items()
    coarse = [e[0]["type"] for e in doc["vertexSet"]]
    qids = [draw(st.none() | st.sampled_from(items[c])) if c in items else None for c in coarse]
    if draw(st.booleans()):
        years: dict[str, str] = {}
        for ei, c in enumerate(coarse):
            for m in doc["vertexSet"][ei] if c == "TIME" else ():
                years.setdefault(m["name"], str(draw(st.integers(1800, 2020))))
        doc = _respelled(doc, {(ei, m["name"]): [years[m["name"]]] for ei, c in enumerate(coarse) if c == "TIME"
                               for m in doc["vertexSet"][ei]})
    return doc, qids


def _check_positions(src: dict[str, Any], out: dict[str, Any], plan: Mapping[int, Mapping[str, NewName]],
                     outside: Sequence[Any] = ()) -> None:
    """Each mention's pos spans exactly its new name's tokens (the plan's for its old name, "the" before them
    where the sentence needs it; its old tokens where the plan leaves it), and every sentence is the source's
    text between the mentions with those tokens in their place (where no unannotated run was renamed)."""
    touched = {o[0] for o in outside}
    for sid, (old_sent, new_sent) in enumerate(zip(src["sents"], out["sents"], strict=True)):
        spans = sorted((m["pos"][0], m["pos"][1], ei, mi) for ei, e in enumerate(src["vertexSet"])
                       for mi, m in enumerate(e) if m["sent_id"] == sid)
        rebuilt: list[str] = []
        cursor = 0
        for a, b, ei, mi in spans:
            old_m, new_m = src["vertexSet"][ei][mi], out["vertexSet"][ei][mi]
            assert new_m["sent_id"] == sid
            s, e = new_m["pos"]
            toks = new_sent[s:e]
            nn = plan.get(ei, {}).get(old_m["name"])
            if nn is None:
                assert (toks, new_m["name"]) == (old_sent[a:b], old_m["name"]), (ei, old_m, new_m)
            else:
                assert (toks, new_m["name"]) in ((list(nn.tokens), nn.name), (["the", *nn.tokens], f"the {nn.name}")), \
                    (ei, nn, new_m, toks)
            rebuilt += old_sent[cursor:a]
            if sid not in touched:
                assert s == len(rebuilt), (sid, ei, new_m["pos"], len(rebuilt))
            rebuilt += toks
            cursor = b
        if sid not in touched:
            assert rebuilt + old_sent[cursor:] == new_sent, sid


def _occurs(src: dict[str, Any], key: tuple[str, ...]) -> bool:
    """Whether ``key`` (a :func:`text_key`) is a run of words of a sentence of ``src``."""
    for sent in src["sents"]:
        words = [w for tok in sent for w in text_key(tok)]
        if any(tuple(words[i:i + len(key)]) == key for i in range(len(words) - len(key) + 1)):
            return True
    return False


def _new_keys(src: dict[str, Any], out: dict[str, Any], plan: Mapping[int, Mapping[str, NewName]], ei: int
              ) -> set[tuple[str, ...]]:
    """The clash keys of the new names entity ``ei``'s mentions carry (those the plan renamed)."""
    return {k for a, b in zip(src["vertexSet"][ei], out["vertexSet"][ei], strict=True) if a["name"] in plan[ei]
            for k in clash_keys(b["name"])}


def _keys(ent: Sequence[Mapping[str, Any]]) -> set[tuple[str, ...]]:
    return {k for m in ent for k in clash_keys(m["name"])}


def _check_type_swap(info: DocInfo, run: Run, out: dict[str, Any]) -> None:
    """What docs/renaming.md ("Type-swap") promises of one run."""
    src = info.doc
    _check_kept_structure(src, out)  # the labels (triples, entity indices), entities, mention types
    _check_positions(src, out, run.plan)
    assert all(len(v) == 1 for v in _alias_map(src, out).values())  # one new name per (entity, old name)
    rows = {r.entity: r for r in run.rows}
    assert sorted(rows) == list(range(len(src["vertexSet"]))) and len(run.rows) == len(rows)
    skip = kept_apart(info)
    for ei, row in rows.items():
        if ei in skip:
            assert row.reason is KeptReason.OVERLAP
        elif info.coarse[ei] not in SWAP_TYPES:  # NUM and TIME stay
            assert (row.kind, row.reason) == ("kept", KeptReason.NOT_ATTACKED)
        assert (row.kind == "swap") == (ei in run.plan)
    for ei, mapping in run.plan.items():
        assert info.coarse[ei] in SWAP_TYPES and set(mapping) == set(info.names[ei])  # every mention changes
        new = _new_keys(src, out, run.plan, ei)
        # none of its names occurs in the document or is taken by another entity, so no two entities collapse
        # into one name (even two that had one name), and no swapped entity reads as a kept one
        assert not any(_occurs(src, k) for k in new), (ei, new)
        for ej, ent in enumerate(out["vertexSet"]):
            assert ej == ei or not new & _keys(ent), (ei, ej, new)


@settings(max_examples=50, deadline=None)
@given(linked_documents(), st.integers(1, 5))
def test_type_swap_keeps_labels_positions_and_the_alias_map(
        drawing: tuple[Renamer, dict[tuple[str, str], str]], drawn: tuple[dict[str, Any], list[str | None]],
        seed: int) -> None:
    renamer, ftypes = drawing
    doc, qids = drawn
    info = DocInfo(0, doc, qids, ftypes)
    run = swap_runs([info], [seed], renamer)[0]
    assert swap_runs([DocInfo(0, doc, qids, ftypes)], [seed], renamer)[0].plan == run.plan  # by seed alone
    _check_type_swap(info, run, apply_plan(doc, run.plan, run.title))


def _check_rate(full: Run, run: Run, rate: float, out: dict[str, Any]) -> None:
    """What docs/renaming.md ("Rate") promises of one run at ``rate``, against the same run at rate 1 (``full``)."""
    info = run.info
    src = info.doc
    _check_kept_structure(src, out)
    _check_positions(src, out, run.plan, run.outside)
    assert all(len(v) == 1 for v in _alias_map(src, out).values())
    chosen = selected(info, run.seed, rate)
    assert set(run.plan) == set(full.plan) & chosen
    assert all(run.plan[ei] == full.plan[ei] for ei in run.plan)  # the very names it has at rate 1
    rows = {r.entity: r for r in run.rows}
    for ei, ent in enumerate(src["vertexSet"]):
        if ei not in run.plan:  # not renamed: every mention keeps its name and tokens
            assert [m["name"] for m in out["vertexSet"][ei]] == [m["name"] for m in ent]
            assert rows[ei].kind == "kept"
            if ei in full.plan:
                assert rows[ei].reason is KeptReason.NOT_SELECTED
    # no collapse: a renamed mention never reads as a mention of another entity that had another name, unless
    # the two are of one item (same_item) -- a builder's name that is a whole name of its leader follows it
    # ("Names built on other names"), and TIME entities of one year move by one shift, but those shared the name
    pairs = [(ei, set(clash_keys(a["name"])), set(clash_keys(b["name"])))
             for ei, ent in enumerate(src["vertexSet"]) for a, b in zip(ent, out["vertexSet"][ei], strict=True)]
    for ei, old, new in pairs:
        if ei in run.plan:
            for ej, old_j, new_j in pairs:
                if ej != ei and not old & old_j and (info.qids[ei] is None or info.qids[ej] != info.qids[ei]):
                    assert not new & new_j, (ei, ej, old, old_j, new)


@settings(max_examples=50, deadline=None)
@given(linked_documents(), st.integers(1, 5), st.floats(0.01, 1.0))
def test_rate_keeps_positions_the_alias_map_and_the_names_it_leaves(
        drawing: tuple[Renamer, dict[tuple[str, str], str]], drawn: tuple[dict[str, Any], list[str | None]],
        seed: int, rate: float) -> None:
    renamer, ftypes = drawing
    doc, qids = drawn
    full = renamer.rename([DocInfo(0, doc, qids, ftypes)], [seed], False)[0]
    run = renamer.rename([DocInfo(0, doc, qids, ftypes)], [seed], False)[0]
    apply_rate(run, rate)
    _check_rate(full, run, rate, apply_plan(doc, run.plan, run.title, run.outside))
