from __future__ import annotations

from pathlib import Path

from envbench.rename.candidates import (
    M_MAX,
    POOL_SQL,
    CandidateSource,
    Slot,
    article_twins_dropped,
    candidate_forms,
    folded_forms,
    item_names,
    names_in_pool,
    number_candidates,
    pool_of,
    spellings,
    window_bounds,
)
from tests.envbench.index_fixture import connect, tiny_world


def test_pool_split_agrees_between_sql_and_python(tmp_path: Path) -> None:
    con = connect(tiny_world().write(tmp_path))
    rows = con.execute(f"SELECT id, {POOL_SQL.format(col='id')} FROM entities ORDER BY id").fetchall()
    assert rows and all(pool_of(q) == p for q, p in rows)
    assert {p for _, p in rows} == {"eval", "train"}


def _all(src: CandidateSource, si: int) -> list[str]:
    out: list[str] = []
    w = 0
    while window_bounds(w)[0] < src.total(src.slots[si]):
        out += src.windows([(si, w)])[(si, w)]
        w += 1
    assert len(out) == len(set(out))
    return out


def test_eligibility_type_names_pool_and_own_item(tmp_path: Path) -> None:
    con = connect(tiny_world().write(tmp_path))
    slots = [
        Slot("Q5", 1, "eval", "Q100", 1, "Doc", 0),
        Slot("Q5", 3, "eval", "Q100", 1, "Doc", 0),
        Slot("Q5", 1, "train", "Q101", 1, "Doc", 1),
        Slot("Q515", 2, "eval", "Q200", 2, "Doc", 2),
    ]
    src = CandidateSource(con, slots)
    humans = [f"Q{100 + k}" for k in range(40)] + ["Q402"]  # Q402: P31 human (normal rank) still counts
    one = _all(src, 0)
    assert sorted(one) == sorted(q for q in humans if pool_of(q) == "eval" and q != "Q100")
    three = _all(src, 1)  # 3 names: label + 2 aliases, i.e. persons 0, 3, 6, ...
    assert sorted(three) == sorted(q for q in humans[:40] if pool_of(q) == "eval" and q != "Q100"
                                   and (int(q[1:]) - 100) % 3 == 0)
    train = _all(src, 2)
    assert train and all(pool_of(q) == "train" for q in train) and not set(train) & set(one)
    cities = _all(src, 3)
    assert "Q400" not in cities and "Q200" not in cities  # no label; own item
    assert all(pool_of(q) == "eval" for q in cities)


def test_draw_is_deterministic_and_seeded(tmp_path: Path) -> None:
    root = tiny_world().write(tmp_path)
    slots = [Slot("Q5", 1, "eval", "Q100", s, "Doc", 0) for s in range(1, 6)]
    first = CandidateSource(connect(root), slots).windows([(i, 0) for i in range(5)] + [(0, 1)])
    again = CandidateSource(connect(root), slots).windows([(i, 0) for i in range(5)] + [(0, 1)])
    assert first == again
    assert len({w[0] for w in first.values()}) > 1  # different seeds start elsewhere


def test_item_names_label_first(tmp_path: Path) -> None:
    con = connect(tiny_world().write(tmp_path))
    got = item_names(con, ["Q100", "Q400"])
    assert got["Q100"].label == "Person 0" and got["Q100"].aliases == ("P. 0", "Per 0")
    assert "Q400" not in got


def test_names_in_pool(tmp_path: Path) -> None:
    con = connect(tiny_world().write(tmp_path))
    evals = [f"Person {k}" for k in range(40) if pool_of(f"Q{100 + k}") == "eval"]
    trains = [f"Person {k}" for k in range(40) if pool_of(f"Q{100 + k}") == "train"]
    assert names_in_pool(con, ["PERSON " + evals[0][7:], trains[0], "nobody"], "eval") == {evals[0].lower()}


def _pooled(label: str, pool: str, start: int = 500) -> str:
    """The first QID from ``start`` up whose pool is ``pool`` (the split hashes the QID)."""
    return next(f"Q{k}" for k in range(start, start + 100) if pool_of(f"Q{k}") == pool)


def test_names_in_pool_compares_demonyms_adjectival_labels_and_spellings(tmp_path: Path) -> None:
    # regression (issue 60): pools split by item only let a twin take "Qatari", the demonym of an eval-pool
    # item, that Env test had given for "American"; 12 such names, mostly demonyms
    b = tiny_world()
    qatar, vili, malo, brown = (_pooled(x, "eval", s) for x, s in (("q", 500), ("v", 600), ("m", 700), ("b", 800)))
    other = _pooled("t", "train", 900)
    b.item(qatar, "Qatar", p31=("Q6256",)).item(vili, "Vili people", p31=("Q6256",))
    b.item(malo, "Saint - Malo", p31=("Q515",)).item(brown, "The Crazy World of Arthur Brown", p31=("Q515",))
    b.item(other, "Qatari", p31=("Q515",))  # a train-pool item named like the eval item's demonym
    b.rows["demonyms"] = [{"id": qatar, "lang": "en", "text": t, "rank": "normal", "form": f, "folded": t.lower()}
                          for t, f in (("Qatari", None), ("Qataris", "Q146786"))]
    con = connect(b.write(tmp_path))
    asked = ["Qatari", "QATARIS", "Vili", "Saint-Malo", "Saint Malo", "Crazy World of Arthur Brown", "Kurdish",
             "Qatar people"]
    # "Saint Malo" is not matched: where a space stood for the hyphen, no spelling of it gives "saint - malo"
    assert names_in_pool(con, asked, "eval") == {"qatari", "qataris", "vili", "saint-malo",
                                                 "crazy world of arthur brown"}
    assert names_in_pool(con, ["Qatari", "Vili"], "train") == {"qatari"}  # the train item's own name
    assert names_in_pool(connect(tiny_world().write(tmp_path / "bare")), ["Qatari"], "eval") == set()


def test_the_forms_a_candidate_may_be_written_in() -> None:
    from envbench.rename.candidates import ItemNames
    from wikidata_index.index import Demonym

    names = {"Q1": ItemNames("Estêvão Gomes", ()), "Q2": ItemNames("Vili people", ("Vili",)),
             "Q3": ItemNames("Denmark", ())}
    demonyms = {"Q3": (Demonym("Danish", "normal", None, "danish"), Demonym("Danes", "normal", "Q146786", "danes"))}
    assert candidate_forms(names, demonyms) == {"Estêvão Gomes", "Estêvão", "Gomes", "Vili people", "Vili", "people",
                                                "Denmark", "Danish", "Danes"}
    assert folded_forms("the Qataris") == ("the qataris", "qataris") and folded_forms("Rome") == ("rome",)
    assert spellings("saint-malo") == ("saint-malo", "the saint-malo", "saint - malo", "saint malo")
    assert spellings("the who") == ("the who",)


def test_cached_numbering_equals_the_in_memory_one(tmp_path: Path) -> None:
    root = tiny_world().write(tmp_path / "index")
    slots = [Slot("Q5", n, p, "Q100", s, "Doc", 0) for n in (1, 2, 5) for p in ("eval", "train") for s in (1, 2)]
    slots.append(Slot("Q515", 1, "eval", "Q200", 1, "Doc", 1))
    req = [(i, w) for i in range(len(slots)) for w in range(3)]
    mem = CandidateSource(connect(root), slots)
    built = CandidateSource(connect(root), slots, cache_dir=tmp_path / "cache", fingerprint="f1")
    read = CandidateSource(connect(root), slots, cache_dir=tmp_path / "cache", fingerprint="f1")
    stale = CandidateSource(connect(root), slots, cache_dir=tmp_path / "cache", fingerprint="f2")
    assert (mem.cache_used, built.cache_used, read.cache_used, stale.cache_used) == ("memory", "built", "read", "built")
    assert mem.totals == built.totals == read.totals
    assert mem.windows(req) == built.windows(req) == read.windows(req) == stale.windows(req)


def test_unwritable_cache_falls_back_to_memory(tmp_path: Path) -> None:
    root = tiny_world().write(tmp_path / "index")
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    slots = [Slot("Q5", 1, "eval", "Q100", 1, "Doc", 0)]
    src = CandidateSource(connect(root), slots, cache_dir=blocker / "derived", fingerprint="f")
    assert src.cache_used == "memory"
    assert src.windows([(0, 0)]) == CandidateSource(connect(root), slots).windows([(0, 0)])


def _reference_numbering(con) -> set[tuple[str, str, int, int, str, int]]:  # type: ignore[no-untyped-def]
    """The numbering as the module docstring states it, in plain Python: per (class, pool) and
    threshold m, the items with at least m English names in md5(id) hex order, ranked from 0."""
    import hashlib

    classes = con.execute("SELECT DISTINCT id, class FROM types WHERE rank <> 'deprecated'").fetchall()
    counts = dict(con.execute("SELECT id, count(*) FROM names WHERE lang = 'en' GROUP BY id "
                              "HAVING bool_or(is_label)").fetchall())
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for qid, cls in classes:
        if qid in counts:
            groups.setdefault((cls, pool_of(qid)), []).append((hashlib.md5(qid.encode()).hexdigest(), qid))
    out = set()
    for (cls, pool), items in groups.items():
        for m in range(1, M_MAX + 1):
            eligible = [q for _, q in sorted(items) if counts[q] >= m]
            out |= {(cls, pool, m, r, q, counts[q]) for r, q in enumerate(eligible)}
    return out


def test_numbering_is_the_stated_rule_whatever_the_batch_size(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import envbench.rename.candidates as candidates

    con = connect(tiny_world().write(tmp_path))
    want = _reference_numbering(con)
    assert len({(c, p, m) for c, p, m, *_ in want}) > 4  # several classes, pools and thresholds
    for batch in (1 << 20, 7, 1):  # ranks carried across batches must not restart or skip
        monkeypatch.setattr(candidates, "NUMBERING_BATCH", batch)
        rows = [r for b in number_candidates(con, restrict=False) for r in zip(*(c.to_pylist() for c in b.columns))]
        assert len(rows) == len(set(rows)) and set(rows) == want, batch


def test_a_name_with_and_without_the_is_one_name() -> None:
    # the corpus KB's "Brussels" item had the alias "the Brussels", so "Dahod, Dohad" became "the Brussels,
    # Brussels" ("the Brussels is a small city"): counted once, it is no candidate for two names
    assert article_twins_dropped("Brussels", ("the Brussels",)) == ()
    assert article_twins_dropped("The Who", ("Who",)) == ()
    assert article_twins_dropped("the United States", ("U.S.", "United States", "the U.S.")) == ("U.S.",)
    # no article between them, or no twin: kept
    assert article_twins_dropped("Paris", ("PARIS", "the City of Light")) == ("PARIS", "the City of Light")
    assert article_twins_dropped("Theodore", ("Theo",)) == ("Theo",)
