from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envbench.core.errors import EnvbenchError
from envbench.formats.docred import read_docs, validate_document
from envbench.formats.links import read_links
from envbench.rename.candidates import POOL_SQL, pool_of
from envbench.rename.engine import DocInfo
from envbench.rename.generate import generate
from envbench.rename.name_overlap import name_overlap
from envbench.rename.numtime import date_value
from envbench.rename.substitute import name_key
from tests.conftest import shared_path
from tests.envbench.index_fixture import mention, sample_world, tiny_world
from wikidata_index.index import WikidataIndex
from wikidata_index.names import fold

REPO = Path(__file__).resolve().parents[3]


def demo_excludes() -> list[Path]:
    """What the demo and the pinned benchmark keep the new names off: the sample world's train and dev splits."""
    docs = sample_world().sample / "docs"
    return [docs / "train.json", docs / "dev.json"]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    w = sample_world()
    out = tmp_path_factory.mktemp("env")
    generate(w.test, w.index, out, links=w.links, seeds=5, progress=False, exclude_names_from=demo_excludes())
    return out


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_titles_order_and_unchanged_structure(env: Path) -> None:
    src = read_docs(sample_world().test).docs
    out = json.loads((env / "test_env.json").read_text())
    assert [d["title"] for d in out] == [f"{d['title']}-{k}" for d in src for k in range(1, 6)]
    for i, doc in enumerate(out):
        s = src[i // 5]
        assert not [p for p in validate_document(doc, i) if p.severity == "error"]
        assert len(doc["sents"]) == len(s["sents"])
        assert doc["labels"] == s["labels"]
        assert [[m["type"] for m in e] for e in doc["vertexSet"]] == [[m["type"] for m in e] for e in s["vertexSet"]]
        for e in doc["vertexSet"]:
            for m in e:
                assert " ".join(doc["sents"][m["sent_id"]][m["pos"][0]:m["pos"][1]]).replace(" ", "") == \
                    m["name"].replace(" ", "")


def test_substitutions_table(env: Path) -> None:
    src = read_docs(sample_world().test).docs
    subs = pl.read_parquet(env / "substitutions.parquet")
    assert subs.columns == ["title", "source_title", "seed", "entity", "coarse_type", "kind", "reason", "qid",
                            "fine_type", "new_qid", "old_names", "new_names", "drawn_by", "catch_all", "head_noun",
                            "adjectival", "written", "gender", "gender_from", "new_gender", "value_rule", "built_on",
                            "unannotated"]
    assert subs.height == 5 * sum(len(d["vertexSet"]) for d in src)
    assert subs["seed"].dtype == pl.Int32 and subs["entity"].dtype == pl.Int32
    order = {d["title"]: i for i, d in enumerate(src)}
    keys = [(order[t], s, e) for t, s, e in subs.select("source_title", "seed", "entity").iter_rows()]
    assert keys == sorted(keys)
    assert set(subs["kind"].unique()) <= {"linked", "num", "time", "derived", "kept"}
    kept = subs.filter(pl.col("kind") == "kept")
    assert kept["reason"].null_count() == 0
    assert subs.filter(pl.col("kind") != "kept")["reason"].null_count() == subs.height - kept.height
    numbers = subs.filter(pl.col("coarse_type").is_in(["NUM", "TIME"]))
    assert numbers["value_rule"].null_count() == 0 and subs["value_rule"].null_count() == subs.height - numbers.height
    linked = subs.filter(pl.col("kind") == "linked")
    assert all(pool_of(q) == "eval" for q in linked["new_qid"].to_list())
    assert (linked["qid"] != linked["new_qid"]).all()


def test_new_names_are_fresh_and_distinct(env: Path) -> None:
    src = {d["title"]: d for d in read_docs(sample_world().test).docs}
    subs = pl.read_parquet(env / "substitutions.parquet").filter(pl.col("kind") != "kept")
    for (title,), rows in subs.group_by("title", maintain_order=True):
        info = DocInfo(0, src[rows["source_title"][0]], [], {})
        # (two entities the source names alike may share a new name: the album "Northern Lantern" follows
        # its title track's new name, ``rename.built_on``)
        seen: dict[tuple[str, ...], str] = {}
        for old, new in zip(rows["old_names"].to_list(), rows["new_names"].to_list()):
            for o, n in zip(old, new):
                if o == n:
                    continue
                key = name_key(n.split())
                assert not info.occurs(key), (title, n)
                assert seen.setdefault(key, o) == o, (title, n)


def test_temporal_order_kept(tmp_path: Path) -> None:
    # born and died in the same year, weeks apart: a careless month/day mapping would reverse them
    doc = {
        "title": "Person 3",
        "sents": [["Person", "3", "(", "13", "March", "1963", "-", "2", "April", "1963", ")", "was", "a",
                   "singer", ".", "Person", "3", "died", "in", "April", "1963", "."]],
        "vertexSet": [[mention("Person 3", 0, [0, 2], "PER"), mention("Person 3", 0, [15, 17], "PER")],
                      [mention("13 March 1963", 0, [3, 6], "TIME")],
                      [mention("2 April 1963", 0, [7, 10], "TIME"), mention("April 1963", 0, [19, 21], "TIME")]],
        "labels": [{"h": 0, "t": 1, "r": "P569", "evidence": [0]}, {"h": 0, "t": 2, "r": "P570", "evidence": [0]}],
    }
    docs = tmp_path / "docs.json"
    docs.write_text(json.dumps([doc]))
    links = tmp_path / "links.json"
    links.write_text(json.dumps({"Person 3": ["Q103", None, None]}))
    index = tiny_world().write(tmp_path / "index")
    generate(docs, index, tmp_path / "out", links=links, seeds=40, progress=False, allow_training_names=True)
    out = json.loads((tmp_path / "out" / "docs_env.json").read_text())
    assert len(out) == 40
    info = DocInfo(0, doc, [], {})
    assert info.order_pairs == [(1, 2)]
    for d in out:
        born = d["vertexSet"][1][0]
        died = d["vertexSet"][2]
        b_val = date_value(d["sents"][0][born["pos"][0]:born["pos"][1]])
        d_val = date_value(d["sents"][0][died[0]["pos"][0]:died[0]["pos"][1]])
        assert b_val is not None and d_val is not None and b_val.parts() <= d_val.parts(), d["sents"][0]
        assert b_val.parts() != (1963, 3, 13)
        # every mention of the death date got the same new month and year
        short = d["sents"][0][died[1]["pos"][0]:died[1]["pos"][1]]
        assert short == d["sents"][0][died[0]["pos"][0] + 1:died[0]["pos"][1]]


def test_stats(env: Path) -> None:
    stats = json.loads((env / "stats.json").read_text())
    assert stats["documents"] == 20 and stats["seeds"] == 5 and stats["output_documents"] == 100
    assert set(stats["substitution_rate"]) == {"PER", "ORG", "LOC", "MISC", "NUM", "TIME", "total"}
    assert all(0.0 <= v <= 1.0 for v in stats["substitution_rate"].values())
    assert stats["substitution_rate"]["total"] > 0.8
    assert stats["audit"]["preserved"]
    assert set(stats["token_length"]) == {"source_mean", "output_mean", "mean_change", "relative_change"}


def test_byte_identical_rerun_and_up_to_date(env: Path, tmp_path: Path) -> None:
    w = sample_world()
    res = generate(w.test, w.index, tmp_path, links=w.links, seeds=5, progress=False,
                   exclude_names_from=demo_excludes())
    names = ["test_env.json", "substitutions.parquet", "stats.json", "manifest.json"]
    assert {n: _sha(tmp_path / n) for n in names} == {n: _sha(env / n) for n in names}
    assert [p.name for p in res.files] == names
    mtimes = {n: (tmp_path / n).stat().st_mtime_ns for n in names}
    again = generate(w.test, w.index, tmp_path, links=w.links, seeds=5, progress=False,
                   exclude_names_from=demo_excludes())
    assert again.up_to_date and "nothing to do" in again.summary()
    assert {n: (tmp_path / n).stat().st_mtime_ns for n in names} == mtimes
    forced = generate(w.test, w.index, tmp_path, links=w.links, seeds=5, force=True, progress=False,
                   exclude_names_from=demo_excludes())
    assert not forced.up_to_date and _sha(tmp_path / "test_env.json") == _sha(env / "test_env.json")
    changed = generate(w.test, w.index, tmp_path, links=w.links, seeds=2, progress=False,
                   exclude_names_from=demo_excludes())
    assert not changed.up_to_date and changed.stats["output_documents"] == 40
    assert not list(tmp_path.glob(".generate-*")) and not list(tmp_path.glob(".staging-*"))


def test_a_users_folders_stay_and_a_claim_left_by_a_kill_goes(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # _lifecycle removed every .generate-* and the step every .staging-generate-*, by name alone; and a kill
    # after the manifest was written left .manifest.json.publishing, which an up-to-date rerun never removed
    from etl.step import mark_staging

    w = sample_world()
    out = tmp_path / "o"
    for mine in (".generate-backup", ".staging-generate-mine"):
        (out / mine).mkdir(parents=True)
        (out / mine / "keep.txt").write_text("precious")
    killed = out / ".staging-generate-0badc0de"  # a killed run's: it holds the step's marker
    killed.mkdir()
    mark_staging(killed, "generate")
    real = Path.unlink

    def killed_at_the_claim(self: Path, *args: Any, **kwargs: Any) -> None:
        if self.name == ".manifest.json.publishing":
            raise KeyboardInterrupt  # what a SIGKILL there leaves: the manifest, and the claim beside it
        real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "unlink", killed_at_the_claim)
    with pytest.raises(KeyboardInterrupt):
        generate(w.test, w.index, out, links=w.links, seeds=1, progress=False, allow_training_names=True)
    monkeypatch.undo()
    outputs = ["manifest.json", "stats.json", "substitutions.parquet", "test_env.json"]
    assert sorted(p.name for p in out.iterdir()) == [".generate-backup", ".manifest.json.publishing",
                                                      ".staging-generate-mine", *outputs]
    assert generate(w.test, w.index, out, links=w.links, seeds=1, progress=False, allow_training_names=True).up_to_date
    assert sorted(p.name for p in out.iterdir()) == [".generate-backup", ".staging-generate-mine", *outputs]
    assert [(out / m / "keep.txt").read_text() for m in (".generate-backup", ".staging-generate-mine")] == \
        ["precious"] * 2


def test_another_source_into_the_same_folder_needs_force(env: Path, tmp_path: Path) -> None:
    # the step would remove test_env.json, the earlier benchmark: a mistaken --out more often than a wish
    w = sample_world()
    out = tmp_path / "env"
    shutil.copytree(env, out)
    before = _sha(out / "test_env.json")
    with pytest.raises(EnvbenchError) as e:
        generate(w.train, w.index, out, links=w.links, seeds=1, progress=False, allow_training_names=True)
    assert str(e.value) == (f"--out {out}: holds test_env.json, the benchmark an earlier `generate` made of "
                            "test.json; this run writes train_env.json and would remove it: choose another --out, "
                            "or pass --force to replace it")
    assert _sha(out / "test_env.json") == before and not (out / "train_env.json").exists()
    generate(w.train, w.index, out, links=w.links, seeds=1, force=True, progress=False, allow_training_names=True)
    assert (out / "train_env.json").is_file() and not (out / "test_env.json").exists()


def test_a_link_to_an_item_of_another_kind_is_warned_of(tmp_path: Path) -> None:
    # a person linked to a place's item (a swapped or stale link file) is renamed by the item's classes,
    # so the user is told which link to check
    w = sample_world()
    docs = json.loads(w.test.read_text())
    links = json.loads(w.links.read_text())
    doc = docs[0]
    types = [e[0]["type"] for e in doc["vertexSet"]]
    per, loc = types.index("PER"), types.index("LOC")
    links[doc["title"]][per] = links[doc["title"]][loc]
    swapped = tmp_path / "swapped.json"
    swapped.write_text(json.dumps(links))
    res = generate(w.test, w.index, tmp_path / "env", links=swapped, seeds=1, progress=False, allow_training_names=True)
    assert (f"{swapped}: 1 linked entity has an item with no class of its DocRED type (first: "
            f"{doc['title']!r} entity {per}, PER, linked to {links[doc['title']][loc]}); it is renamed by the "
            "item's own classes: check that link, or the entity's type") in res.notes
    assert not any("no class of their DocRED type" in n
                   for n in generate(w.test, w.index, tmp_path / "ok", links=w.links, seeds=1, progress=False, allow_training_names=True).notes)


def test_manifest_records_inputs_parameters_and_the_index(env: Path) -> None:
    from envbench.rename.generate import index_fingerprint

    w = sample_world()
    man = json.loads((env / "manifest.json").read_text())
    assert man["step"] == "generate"
    assert [(i["name"], i["sha256"]) for i in man["inputs"]] == \
        [(p.name, _sha(p)) for p in (w.test, w.links, *demo_excludes())]
    assert man["parameters"] == {"seeds": 5, "pool": "eval", "twins": False, "skip_invalid": False, "links": "file",
                                 "window": 4, "max_windows": 4, "exclude_names_from": ["train.json", "dev.json"],
                                 "allow_training_names": False}
    assert man["identity"] == {"index": {"tables_sha256": index_fingerprint(w.index)}}
    assert [(o["name"], o["sha256"]) for o in man["outputs"]] == \
        [(n, _sha(env / n)) for n in ("stats.json", "substitutions.parquet", "test_env.json")]


def test_twins_use_the_train_pool(env: Path, tmp_path: Path) -> None:
    w = sample_world()
    res = generate(w.train, w.index, tmp_path, links=w.links, seeds=1, pool="train", twins=True, progress=False,
                   exclude_names_from=[w.test, env / "test_env.json"])
    src = read_docs(w.train).docs
    twins = json.loads((tmp_path / "train_twins.json").read_text())
    assert [d["title"] for d in twins] == [d["title"] for d in src]
    assert all(t["labels"] == s["labels"] and len(t["vertexSet"]) == len(s["vertexSet"]) for t, s in zip(twins, src))
    subs = pl.read_parquet(tmp_path / "substitutions.parquet")
    train_items = set(subs["new_qid"].drop_nulls().to_list())
    eval_items = set(pl.read_parquet(env / "substitutions.parquet")["new_qid"].drop_nulls().to_list())
    assert train_items and all(pool_of(q) == "train" for q in train_items) and not train_items & eval_items
    with WikidataIndex(w.index) as ix:
        eval_names = {r[0] for r in ix.con.execute(
            f"SELECT folded FROM names WHERE {POOL_SQL.format(col='id')} = 'eval'").fetchall()}
    linked = subs.filter(pl.col("kind") == "linked")["new_names"].to_list()
    assert linked and not {fold(n) for names in linked for n in names} & eval_names
    assert res.stats["substitution_rate"]["total"] > 0.7
    # no twin takes a name of the scored documents: test and its Env copies (issue 60)
    overlap = name_overlap(twins=tmp_path / "train_twins.json", twins_source=w.train, env=env / "test_env.json",
                           env_source=w.test)
    assert overlap.ok and [r.key for r in overlap.rows] == ["twins_in_test", "twins_in_env"]
    assert res.stats["names_seen"]["renamed"]["in_excluded"] == 0


def test_twins_need_the_documents_they_must_not_name(env: Path, tmp_path: Path) -> None:
    # regression (issue 60): twins drawn from a KB of dev and test took 1,690 names of the test documents, which
    # the EVRT arm then saw in training and the vanilla arm did not; left free, 41 of the sample twins' do
    w = sample_world()
    with pytest.raises(EnvbenchError, match=r"^--twins: pass the documents the models trained on these twins are "
                                            r"scored on as --exclude-names-from \(the test file and its Env version\), "
                                            "so that no twin takes one of their names$"):
        generate(w.train, w.index, tmp_path / "t", links=w.links, seeds=1, pool="train", twins=True, progress=False)
    generate(w.train, w.index, tmp_path / "free", links=w.links, seeds=1, pool="train", twins=True, progress=False,
             exclude_names_from=[w.train])  # a file that holds back none of the test's names
    free = name_overlap(twins=tmp_path / "free" / "train_twins.json", twins_source=w.train,
                        env=env / "test_env.json", env_source=w.test)
    assert not free.ok and free.rows[0].shared > 0


def test_without_links_the_offline_linker_is_used(tmp_path: Path) -> None:
    w = sample_world()
    res = generate(w.test, w.index, tmp_path, seeds=1, progress=False, allow_training_names=True)
    gold = read_links(w.links, read_docs(w.test).docs)
    linked_gold = sum(q is not None for v in gold.values() for q in v)
    assert res.stats["links"]["linked"] >= 0.9 * linked_gold
    assert json.loads((tmp_path / "manifest.json").read_text())["parameters"]["links"] == "envbench link"


def test_committed_sha256_of_the_sample_benchmark(env: Path) -> None:
    """CI regeneration check: the sample world's Env benchmark must not change by accident.

    If a deliberate change to the sample world or the generation rules changes it, update
    tests/envbench/data/sample_env.sha256 with the printed value.
    """
    expected = (REPO / "tests" / "envbench" / "data" / "sample_env.sha256").read_text().split()[0]
    assert _sha(env / "test_env.json") == expected


@pytest.mark.slow
def test_real_re_docred_through_kb_from_corpus(tmp_path: Path) -> None:
    """The offline Re-DocRED flow: kb-from-corpus -> ingest-dump -> link + generate (one seed)."""
    from envbench.rename.link import link_documents
    from envbench.worlds.kb_from_corpus import kb_from_corpus
    from wikidata_index.ingest import ingest_dump

    test = shared_path("re-docred", "test_revised.json")
    kb_from_corpus([test], tmp_path / "kb.json.gz", tmp_path / "links.json")
    ingest_dump(tmp_path / "kb.json.gz", tmp_path / "index", progress=False)
    res = generate(test, tmp_path / "index", tmp_path / "env", links=tmp_path / "links.json", seeds=1,
                   progress=False, allow_training_names=True)
    # 0.969 on 2026-12-01, since a NUM "one" that counts the noun after it is kept. Since issue 31 an
    # entity whose item has only a catch-all class is kept (generic_type) rather than renamed across
    # kinds, and a head-noun class may find no candidate that passes: 0.848 (2026-12-02), issue 31 asks
    # >= 0.85 on the README flow (KB from dev + test); the rest is renamed as before
    # Since issue 57 a NUM or TIME figure the text checks (an age, an interval, a listed count, a century
    # beside years) or a fixed form keeps its value (checked, fixed_form): counted with the renamed here, so
    # every other entity is held to the rate it had. Since issue 58 a city drawn inside its country's own item
    # leaves that country its names (place: "Alcoy , Oman" now reads "Kassel , Germany"), counted with the
    # entities kept to protect the text
    total = res.stats["renamed"]["total"]
    kept = res.stats["kept_reasons"]
    generic = kept["generic_type"] + kept.get("built_on", 0) + kept.get("place", 0)  # (issue 58: a name built on a kept name, kept too)
    checked = kept.get("checked", 0) + kept.get("fixed_form", 0)
    assert (total["renamed"] + checked) / total["entities"] > 0.84
    assert (total["renamed"] + checked + generic) / total["entities"] > 0.96
    assert res.stats["audit"]["preserved"]
    src = read_docs(test).docs
    out = read_docs(tmp_path / "env" / "test_revised_env.json").docs  # validates every document
    assert len(out) == len(src)
    for s, o in zip(src, out):
        assert o["labels"] == s["labels"] and len(o["sents"]) == len(s["sents"])
        for es, eo in zip(s["vertexSet"], o["vertexSet"]):
            for ms, mo in zip(es, eo):
                assert mo["global_pos"][0] == sum(len(x) for x in o["sents"][:mo["sent_id"]]) + mo["pos"][0]
                assert ms["index"] == mo["index"]
    gold = read_links(tmp_path / "links.json", src)
    with WikidataIndex(tmp_path / "index") as ix:
        report = link_documents(src, ix.con, gold=gold).report
    assert report["accuracy"]["accuracy"] > 0.95 and report["coverage"]["total"]["coverage"] > 0.95
    _assert_demonyms_stay_adjectival(tmp_path / "env", {d["title"]: d for d in src})
    _assert_spellings_share_a_new_name(tmp_path / "env")
    assert res.stats["written_names"]["second_draw"] > 0  # short names written by a second draw


def _assert_spellings_share_a_new_name(env: Path) -> None:
    """On real text: the names of an entity that spell one name ("US" and "U.S.", "Cine-Allianz" and
    "Cine - Allianz") took one new name (up to an acronym's dots and a "the"; adjectival names, which take
    demonyms, aside), and every name the row says was written is one of its new names."""
    import pyarrow.parquet as pq

    from envbench.rename.substitute import nested_key as key

    groups = 0
    for r in pq.read_table(env / "substitutions.parquet").to_pylist():
        if r["kind"] != "linked":
            continue
        assert set(r["written"]) <= set(r["new_names"]), r
        by_key: dict[str, list[str]] = {}
        for old, new in zip(r["old_names"], r["new_names"], strict=True):
            if new not in r["adjectival"]:
                by_key.setdefault(key(old), []).append(new)
        for news in by_key.values():
            if len(news) > 1:
                groups += 1
                assert len({key(n) for n in news}) == 1, r
    assert groups > 10, groups  # renamed entities with a name spelled two ways: 17 on 2026-12-03 (one seed)


def _assert_demonyms_stay_adjectival(env: Path, docs: dict[str, Any]) -> None:
    """Issue 13's target on real text: at most 2% of renamed mentions whose old name is an adjectival form
    of the lexicon ("American", "Catholic") get a name that is neither an adjectival form nor a language
    (bench/demonyms.py prints the same measure for any output)."""
    import pyarrow.parquet as pq

    from envbench.worlds.gazetteers import load_gazetteer

    gz = load_gazetteer()
    counts: Counter[str] = Counter()
    for r in pq.read_table(env / "substitutions.parquet").to_pylist():
        if r["kind"] != "linked" or not r["new_qid"]:
            continue
        per_name = Counter(m["name"] for m in docs[r["source_title"]]["vertexSet"][r["entity"]])
        for old, new in zip(r["old_names"], r["new_names"], strict=True):
            if gz.adjectival_for(old):
                ok = gz.reads_as_adjective(new) or r["fine_type"] == "Q34770"  # or the entity is a language
                counts["kept" if ok else "noun"] += per_name[old]
    assert sum(counts.values()) > 300, counts  # Re-DocRED test has about 600 such mentions per seed
    assert counts["noun"] <= 0.02 * sum(counts.values()), counts


def test_chunking_does_not_change_the_output(env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import envbench.rename.generate as gen

    monkeypatch.setattr(gen, "CHUNK_RUNS", 7)
    w = sample_world()
    generate(w.test, w.index, tmp_path, links=w.links, seeds=5, progress=False,
                   exclude_names_from=demo_excludes())
    assert _sha(tmp_path / "test_env.json") == _sha(env / "test_env.json")
    assert _sha(tmp_path / "substitutions.parquet") == _sha(env / "substitutions.parquet")


def test_time_entities_of_a_document_share_one_shift(tmp_path: Path) -> None:
    # "a 1975 drama film ... opened on 25 March 1975 ... from July 1931 to July 1937": with one shift
    # per entity the film's year and its release year parted and the range could reverse
    sent = ["Film", "1", "is", "a", "1975", "drama", "film", "that", "opened", "on", "25", "March", "1975", ",",
            "made", "from", "July", "1931", "to", "July", "1937", "and", "shown", "on", "25", "March", "1975", "."]
    doc = {
        "title": "Film 1",
        "sents": [sent],
        "vertexSet": [[mention("Film 1", 0, [0, 2], "MISC")], [mention("1975", 0, [4, 5], "TIME")],
                      [mention("25 March 1975", 0, [10, 13], "TIME")], [mention("July 1931", 0, [16, 18], "TIME")],
                      [mention("July 1937", 0, [19, 21], "TIME")],
                      [mention("25 March 1975", 0, [24, 27], "TIME")]],  # the same date as a second entity
        "labels": [],
    }
    docs = tmp_path / "docs.json"
    docs.write_text(json.dumps([doc]))
    links = tmp_path / "links.json"
    links.write_text(json.dumps({"Film 1": [None] * 6}))
    index = tiny_world().write(tmp_path / "index")
    res = generate(docs, index, tmp_path / "out", links=links, seeds=20, progress=False, allow_training_names=True)
    assert res.stats["renamed"]["TIME"] == {"renamed": 100, "entities": 100}
    for d in json.loads((tmp_path / "out" / "docs_env.json").read_text()):
        s = d["sents"][0]
        year, (day, month, year2), (m1, y1), (m2, y2), again = (
            [s[p] for p in range(*e[0]["pos"])] for e in d["vertexSet"][1:])
        assert year == [year2] and again == [day, month, year2] and year2 != "1975"
        assert m1 == m2 and int(y2) - int(y1) == 6 and int(year2) - int(y1) == 44, s


def test_corrupt_index_manifest_names_the_file(tmp_path: Path) -> None:
    from envbench.rename.generate import index_fingerprint
    from etl.io import InputError

    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(InputError, match="manifest.json: not a valid index manifest"):
        index_fingerprint(tmp_path)


_NO_SPACY_CHILD = """
import sys
from envbench.rename.generate import generate
from envbench.rename.name_overlap import name_overlap
generate(*sys.argv[1:4], links=sys.argv[4], seeds=5, progress=False, exclude_names_from=sys.argv[5:])
print("spacy" in sys.modules)
"""


def test_stored_name_tokens_give_the_same_benchmark_without_spacy(env: Path, tmp_path: Path) -> None:
    """An index ingested with DocRED's tokens of its names (as `envbench ingest-dump` does) holds
    tokenize's tokens for every name that needs spaCy, and generate on it writes the same bytes as on
    an index without them, in a process that never loads spaCy (about 3 s of a run)."""
    from envbench.core.text import name_tokenizer, tokenize
    from wikidata_index.ingest import ingest_dump

    w = sample_world()
    res = ingest_dump(w.sample / "wikidata-sample.json.gz", tmp_path / "index", progress=False,
                      tokenizer=name_tokenizer())
    with WikidataIndex(tmp_path / "index") as ix:
        rows = ix.con.execute("SELECT name, tokens FROM name_tokens ORDER BY name").fetchall()
        names = [n for (n,) in ix.con.execute("SELECT DISTINCT name FROM names WHERE lang = 'en'").fetchall()]
    assert len(rows) == res.rows["name_tokens"] > 100
    assert [(n, list(t)) for n, t in rows] == [(n, tokenize(" ".join(n.split()))) for n, _ in rows]
    stored = {n for n, _ in rows}
    assert all(tokenize(n) == n.split() for n in names if n not in stored)
    out = tmp_path / "env"
    proc = subprocess.run([sys.executable, "-c", _NO_SPACY_CHILD, str(w.test), str(tmp_path / "index"), str(out),
                           str(w.links), *map(str, demo_excludes())], capture_output=True, text=True, check=True, cwd=REPO)
    assert proc.stdout.split() == ["False"]
    assert _sha(out / "test_env.json") == _sha(env / "test_env.json")
    assert _sha(out / "substitutions.parquet") == _sha(env / "substitutions.parquet")


def test_name_tokens_of_another_tokenizer_are_not_used_and_say_so(env: Path, tmp_path: Path) -> None:
    """An index whose name_tokens were stored under another spaCy is read as one without them (spaCy
    tokenises; the same bytes), and generate warns once, naming the index, both versions and the fix."""
    import dataclasses

    from envbench.core.text import name_tokenizer, tokenizer_version
    from wikidata_index.ingest import ingest_dump

    w = sample_world()
    other = dataclasses.replace(name_tokenizer(), version="spacy 2.0.0 blank en")
    ingest_dump(w.sample / "wikidata-sample.json.gz", tmp_path / "index", progress=False, tokenizer=other)
    res = generate(w.test, tmp_path / "index", tmp_path / "env", links=w.links, seeds=5, progress=False,
                   exclude_names_from=demo_excludes())
    index = tmp_path / "index"
    assert res.notes == [
        f"{index}: its name_tokens table holds the tokens of spacy 2.0.0 blank en, not of this "
        f"{tokenizer_version()}, so names are tokenised with spaCy (same output, a slower start); rerun "
        f"`envbench ingest-dump DUMP --out {index} --force` to store this tokenizer's"]
    assert _sha(tmp_path / "env" / "test_env.json") == _sha(env / "test_env.json")


def test_a_benchmark_that_renamed_little_is_said_to_be_mostly_its_source() -> None:
    # an --exclude-names-from holding every name of the index had kept 229 of 229 entities without a word
    from envbench.rename.generate import low_rate_note

    def stats(done: int, slots: int) -> dict:
        renamed = {t: {"renamed": 0, "entities": 0} for t in ("PER", "ORG", "LOC", "MISC", "NUM", "TIME")}
        renamed["PER"] = {"renamed": done, "entities": slots}
        renamed["NUM"] = {"renamed": 50, "entities": 50}  # NUM and TIME, renamed by rule, do not count
        return {"renamed": renamed, "kept_reasons": {"no_candidate": 7, "no_gender": 2, "overlap": 1, "x": 1}}

    assert low_rate_note(stats(60, 100), excludes=True) is None
    assert low_rate_note(stats(0, 0), excludes=False) is None
    assert low_rate_note(stats(10, 100), excludes=True) == (
        "only 10 of 100 PER/ORG/LOC/MISC entity slots were renamed (10%; kept: no_candidate 7, no_gender 2, "
        "overlap 1); the benchmark is mostly its source's names: --exclude-names-from may hold most of the index's "
        "names, check --links and the index")
    assert "--exclude-names-from" not in low_rate_note(stats(10, 100), excludes=False)


def test_two_entities_of_one_item_take_one_new_item_where_it_fits(tmp_path: Path) -> None:
    # Re-DocRED splits "City 3" and "the city C3" of one article into two entities (and may type them
    # differently); gold links give both one item. The second takes the item the first became, so the text
    # names one city, as the original did; a person named once, then as an entity of three names, takes the first's item only when that
    # item has three names to give (else it draws its own, as before).
    sents = [["Person", "3", "was", "born", "in", "City", "3", "."],
             ["He", "left", "C3", "for", "City", "7", "."],
             ["Person", "3", "(", "P.", "3", ",", "Per", "3", ")", "was", "a", "singer", "."]]
    doc = {"title": "Person 3", "sents": sents, "labels": [{"h": 0, "t": 1, "r": "P19", "evidence": [0]}],
           "vertexSet": [[mention("Person 3", 0, [0, 2], "PER")], [mention("City 3", 0, [5, 7], "LOC")],
                         [mention("C3", 1, [2, 3], "MISC")], [mention("City 7", 1, [4, 6], "LOC")],
                         [mention("Person 3", 2, [0, 2], "PER"), mention("P. 3", 2, [3, 5], "PER"),
                          mention("Per 3", 2, [6, 8], "PER")]]}
    docs = tmp_path / "docs.json"
    docs.write_text(json.dumps([doc]))
    links = tmp_path / "links.json"
    links.write_text(json.dumps({"Person 3": ["Q103", "Q203", "Q203", "Q207", "Q103"]}))
    index = tiny_world().write(tmp_path / "index")
    generate(docs, index, tmp_path / "out", links=links, seeds=30, progress=False, allow_training_names=True)
    rows = pl.read_parquet(tmp_path / "out" / "substitutions.parquet")
    n_names = {f"Q{100 + k}": 3 - k % 3 for k in range(40)}  # tiny_world: "Person k", "P. k", "Per k" for k % 3 == 0
    shared = drew_own = 0
    for seed in range(1, 31):
        by = {r["entity"]: r for r in rows.filter(pl.col("seed") == seed).to_dicts()}
        assert all(by[e]["kind"] == "linked" for e in range(5)), by
        assert by[1]["new_qid"] == by[2]["new_qid"] != by[3]["new_qid"]  # one city twice, another city once
        if n_names[by[0]["new_qid"]] >= 3:  # the first person's item can name the second too
            assert by[4]["new_qid"] == by[0]["new_qid"]
            assert by[4]["new_names"][0] == by[0]["new_names"][0]
            shared += 1
        else:
            assert n_names[by[4]["new_qid"]] >= 3 and by[4]["new_qid"] != by[0]["new_qid"]
            drew_own += 1
    assert shared and drew_own  # both cases happen
    out = json.loads((tmp_path / "out" / "docs_env.json").read_text())
    for d in out:
        city = d["vertexSet"][1][0]["name"]
        assert d["sents"][0][5:5 + len(city.split())] == city.split()


def test_an_entity_of_an_item_an_earlier_entity_kept_keeps_its_names_too(tmp_path: Path) -> None:
    # the first entity has four names, more than any person of tiny_world: kept (no_candidate); the second,
    # one name of the same item, could draw a person, but is kept with it (same_item), so the text never
    # names the person by its old name in one sentence and by a new one in the next
    sents = [["Person", "3", ",", "Alba", "Rossi", ",", "Cora", "Lind", "or", "Dina", "Moss", ",", "sang", "."],
             ["Person", "3", "died", "."]]
    doc = {"title": "Person 3", "sents": sents, "labels": [],
           "vertexSet": [[mention("Person 3", 0, [0, 2], "PER"), mention("Alba Rossi", 0, [3, 5], "PER"),
                          mention("Cora Lind", 0, [6, 8], "PER"), mention("Dina Moss", 0, [9, 11], "PER")],
                         [mention("Person 3", 1, [0, 2], "PER")]]}
    docs = tmp_path / "docs.json"
    docs.write_text(json.dumps([doc]))
    links = tmp_path / "links.json"
    links.write_text(json.dumps({"Person 3": ["Q103", "Q103"]}))
    index = tiny_world().write(tmp_path / "index")
    generate(docs, index, tmp_path / "out", links=links, seeds=3, progress=False, allow_training_names=True)
    rows = pl.read_parquet(tmp_path / "out" / "substitutions.parquet").sort(["seed", "entity"]).to_dicts()
    assert [(r["entity"], r["kind"], r["reason"]) for r in rows] == [(0, "kept", "no_candidate"),
                                                                    (1, "kept", "same_item")] * 3
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    assert stats["kept_reasons"]["same_item"] == 3


def test_a_surname_entity_of_a_persons_item_takes_the_new_surname(tmp_path: Path) -> None:
    # Re-DocRED gives "Hana Verhesberg" and a later "Verhesberg" two entities; gold links give both the
    # sample world's Hana Verhesberg. The second takes the first's new item and, as a surname, its new
    # last word ("Smith" of "Anna Smith"), not the full name again
    w = sample_world()
    doc = {"title": "Verhesberg", "labels": [],
           "sents": [["Hana", "Verhesberg", "was", "a", "singer", "."], ["Verhesberg", "sang", "."]],
           "vertexSet": [[mention("Hana Verhesberg", 0, [0, 2], "PER")], [mention("Verhesberg", 1, [0, 1], "PER")]]}
    docs = tmp_path / "docs.json"
    docs.write_text(json.dumps([doc]))
    links = tmp_path / "links.json"
    links.write_text(json.dumps({"Verhesberg": ["Q900000682", "Q900000682"]}))
    generate(docs, w.index, tmp_path / "out", links=links, seeds=5, progress=False, allow_training_names=True)
    rows = pl.read_parquet(tmp_path / "out" / "substitutions.parquet").sort(["seed", "entity"]).to_dicts()
    for full, short in zip(rows[::2], rows[1::2]):
        assert full["kind"] == short["kind"] == "linked" and short["new_qid"] == full["new_qid"]
        assert len(full["new_names"][0].split()) == 2  # the sample world's persons: first name and surname
        assert short["new_names"] == [full["new_names"][0].split()[-1]], (full, short)
        assert short["written"] == short["new_names"]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from([1, 2, 3]), st.lists(st.booleans(), min_size=1, max_size=2, unique=True)),
                min_size=2, max_size=5))
def test_entities_of_one_item_are_renamed_as_one_thing(tmp_path_factory: pytest.TempPathFactory,
                                                       entities: list[tuple[int, list[bool]]]) -> None:
    # the same-item rule as a property: in each renamed copy, every entity linked to an item an earlier
    # entity is linked to takes the item that one became, or keeps its names with it; tiny_world's city k
    # is named "City k" and "Ck", so the item always fits, unless the document itself writes one of the
    # new item's names (then the later entity draws its own, as any candidate with such a name is passed over)
    tmp = tmp_path_factory.mktemp("same")
    sents, vertex_set = [], []
    for k, forms in entities:
        mentions = []
        for short in forms:
            nm = f"C{k}" if short else f"City {k}"
            sents.append(["We", "saw", *nm.split(), "."])
            mentions.append(mention(nm, len(sents) - 1, [2, 2 + len(nm.split())], "LOC"))
        vertex_set.append(mentions)
    written = {" ".join(s[2:-1]) for s in sents}
    (tmp / "docs.json").write_text(json.dumps([{"title": "T", "sents": sents, "vertexSet": vertex_set, "labels": []}]))
    (tmp / "links.json").write_text(json.dumps({"T": [f"Q{200 + k}" for k, _ in entities]}))
    index = tiny_world().write(tmp / "index")
    generate(tmp / "docs.json", index, tmp / "out", links=tmp / "links.json", seeds=3, progress=False, allow_training_names=True)
    rows = pl.read_parquet(tmp / "out" / "substitutions.parquet").to_dicts()
    for seed in (1, 2, 3):
        by = {r["entity"]: r for r in rows if r["seed"] == seed}
        first: dict[int, int] = {}
        for ei, (k, _) in enumerate(entities):
            lead = first.setdefault(k, ei)
            if lead == ei:
                continue
            if by[lead]["kind"] == "kept":
                assert by[ei]["kind"] == "kept", (by[lead], by[ei])
                continue
            new_k = int(by[lead]["new_qid"][1:]) - 200
            # a city of two names ("Old Town", one name, may not name a later entity of two)
            if 0 <= new_k < 30 and not {f"City {new_k}", f"C{new_k}"} & written:
                assert by[ei]["kind"] == "linked" and by[ei]["new_qid"] == by[lead]["new_qid"], (by[lead], by[ei])
