"""WikidataIndex over a small hand-made index and the real samples."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from etl.io import InputError
from tests.conftest import shared_path
from tests.wikidata_index.test_ingest import _dump_bytes, _item, _sample_entities, _write
from wikidata_index import WikidataIndex
from wikidata_index.index import index_info
from wikidata_index.ingest import ingest_dump, write_tables

B = 900000  # hand-made ids far from the real samples' ids


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("ix")
    ents = [
        _item(B + 1, [B + 10], label="Mediaș", aliases=["Medias", "Mediasch"]),
        _item(B + 2, [B + 10, B + 11], label="MEDIAS"),
        _item(B + 3, [B + 11], label="Other", aliases=["Mediaș"]),
        _item(B + 10, [], [B + 11], label="town"),
        _item(B + 11, [], [B + 12], label="settlement"),
        _item(B + 12, [], [B + 10], label="place"),  # a cycle 10 -> 11 -> 12 -> 10
        _item(B + 13, [], [B + 14], label="x"),
    ]
    ents[1]["claims"]["P31"][1]["rank"] = "deprecated"
    ents[6]["claims"]["P279"][0]["rank"] = "deprecated"
    ents.append({"type": "property", "id": "P900017", "datatype": "wikibase-item",
                 "labels": {"en": {"language": "en", "value": "country"}}, "claims": {"P2302": [
                     {"rank": "normal", "mainsnak": {"snaktype": "value", "property": "P2302", "datavalue": {
                         "type": "wikibase-entityid", "value": {"entity-type": "item", "id": "Q21510865"}}},
                      "qualifiers": {"P2308": [{"snaktype": "value", "property": "P2308", "datavalue": {
                          "type": "wikibase-entityid", "value": {"entity-type": "item", "id": "Q6256"}}}]}}]}})
    ents += _sample_entities()
    ingest_dump(_write(tmp / "d.json", _dump_bytes(ents)), tmp / "index", workers=1, progress=False)
    return tmp / "index"


def test_lookups(index: Path) -> None:
    with WikidataIndex(index) as ix:
        assert ix.entity("Q900001")["label"] == "Mediaș"
        assert ix.entity("Q999") is None
        assert ix.labels_of(["Q900001", "Q999", "Q900001"]) == {"Q900001": "Mediaș"}  # unknown ids left out
        assert ix.labels_of([]) == {}
        assert ix.names("Q900001") == ["Mediaș", "Medias", "Mediasch"]
        assert ix.names("Q900001", lang="de") == []
        assert ix.types("Q900002") == ["Q900010"]  # deprecated Q11 ignored
        assert ix.superclasses("Q900010") == ["Q900010", "Q900011", "Q900012"]  # cycle terminates
        assert ix.superclasses("Q900013") == []
        assert ix.constraints("P900017") == [{"constraint_type": "Q21510865", "class": "Q6256", "relation": None}]
        assert ix.popularity("Q900010") == ix.entity("Q900010")["popularity"] > 0
        assert set(ix.tables()) >= {"entities", "names", "types"}
        assert ix.con.execute("SELECT count(*) FROM edges").fetchone()[0] > 0


def test_find_exact_then_folded_by_popularity(index: Path) -> None:
    with WikidataIndex(index) as ix:
        pops = {q: ix.popularity(q) for q in ("Q900001", "Q900002", "Q900003")}
        exact = sorted(["Q900001", "Q900003"], key=lambda q: (-pops[q], q))
        assert ix.find("Mediaș") == exact + ["Q900002"]
        assert ix.find("medias") == sorted(["Q900001", "Q900002", "Q900003"], key=lambda q: (-pops[q], q))
        assert ix.find("Douglas Adams") == ["Q42"]
        assert ix.find("nothing like this") == []


def test_real_sample_facts(index: Path) -> None:
    doc = orjson.loads(shared_path("wikidata-samples", "syvb-wikidata", "Q45.json").read_bytes())["entities"]["Q45"]
    with WikidataIndex(index) as ix:
        e = ix.entity("Q45")
        assert e["label"] == "Portugal" and e["sitelinks"] == len(doc["sitelinks"]) and e["enwiki"] == "Portugal"
        aliases = sorted({a["value"] for a in doc["aliases"]["en"]} - {"Portugal"})
        assert ix.names("Q45") == ["Portugal"] + aliases


def test_missing_index_and_table(tmp_path: Path, index: Path) -> None:
    with pytest.raises(InputError) as exc:
        WikidataIndex(tmp_path / "none")
    assert str(exc.value) == f"no index at {tmp_path / 'none'}; run `envbench ingest-dump DUMP --out {tmp_path / 'none'}` first"
    # Issue 17 #15: a table that the manifest lists and that is gone is named, not silently absent.
    partial = tmp_path / "partial"
    shutil.copytree(index, partial)
    shutil.rmtree(partial / "subclasses")
    with pytest.raises(InputError) as exc:
        WikidataIndex(partial)
    assert str(exc.value) == (f"index at {partial} has no table 'subclasses'; "
                              f"rerun `envbench ingest-dump DUMP --out {partial} --force`")
    # A table the index never had (a hand-made index) is named when a lookup needs it.
    lean = write_tables(tmp_path / "lean", {"entities": [{"id": "Q1", "type": "item", "label": "One"}],
                                            "names": [{"id": "Q1", "lang": "en", "name": "One", "is_label": True,
                                                       "folded": "one"}]})
    with WikidataIndex(lean) as ix:
        assert ix.names("Q1") == ["One"] and ix.tables() == ["entities", "names"]
        with pytest.raises(InputError) as exc:
            ix.superclasses("Q1")
    assert str(exc.value) == (f"index at {lean} has no table 'subclasses'; "
                              f"rerun `envbench ingest-dump DUMP --out {lean} --force`")


def test_materialize_gives_the_same_answers(index: Path) -> None:
    with WikidataIndex(index) as views, WikidataIndex(index) as mem:
        mem.materialize()
        mem.materialize("names")  # again: idempotent
        for q in ("Q900001", "Q900002", "Q42", "Q45"):
            assert mem.entity(q) == views.entity(q) and mem.names(q) == views.names(q)
            assert mem.superclasses(q) == views.superclasses(q)
            assert mem.demonyms(q) == views.demonyms(q)
        assert mem.find("medias") == views.find("medias")
        assert mem.find_demonym("portuguese") == views.find_demonym("portuguese") == ["Q45"]


def test_demonyms_of_the_real_sample(index: Path) -> None:
    with WikidataIndex(index) as ix:
        assert ix.demonyms("Q45") == ["Portuguese"] and ix.demonyms("Q45", "fr") == []  # only en ingested
        (d,) = ix.demonyms_of(["Q45", "Q42", "Q900001"])["Q45"]
        assert (d.text, d.rank, d.form, d.folded) == ("Portuguese", "normal", None, "portuguese")
        assert ix.find_demonym("PORTUGUESE") == ["Q45"] and ix.find_demonym("Portugal") == []
        assert ix.card("Q45")["demonyms"] == ["Portuguese"] and ix.card("Q42")["demonyms"] == []


def _without_demonyms(index: Path, out: Path, tables: tuple[str, ...] = ("demonyms", "name_tokens")) -> Path:
    """The index as an ingest before these tables wrote it: no folder, no manifest entry."""
    shutil.copytree(index, out)
    man = orjson.loads((out / "manifest.json").read_bytes())
    for table in tables:
        shutil.rmtree(out / table)
        man["outputs"] = [o for o in man["outputs"] if not o["name"].startswith(f"{table}/")]
        del man["rows"][table]
    man.pop("name_tokens", None)
    (out / "manifest.json").write_bytes(orjson.dumps(man))
    return out


def test_an_index_made_before_name_tokens_reads_as_none_stored(tmp_path: Path, index: Path) -> None:
    from wikidata_index.index import name_tokens_of

    old = _without_demonyms(index, tmp_path / "old", ("name_tokens",))
    with WikidataIndex(old) as ix:
        assert not ix.has("name_tokens") and ix.name_tokenizer() is None
        assert name_tokens_of(ix.con, ["Mediaș", "Other"]) == {}
        assert ix.con.execute("SELECT tokens FROM name_tokens").fetchall() == []
    assert index_info(old).notes == [f"no name_tokens table (the index was made before it existed); re-ingest: "
                                     f"envbench ingest-dump DUMP --out {old} --force to add it"]


def test_an_index_made_before_demonyms_reads_as_none_known(tmp_path: Path, index: Path) -> None:
    """Not a new index format: an older index is read, with an empty demonyms view (generate keeps
    working on it, with no demonyms known), and `index info` says how to add the table."""
    old = _without_demonyms(index, tmp_path / "old")
    with WikidataIndex(old) as ix:
        assert not ix.has("demonyms") and "demonyms" not in ix.tables() and ix.has("names")
        assert ix.demonyms("Q45") == [] and ix.demonyms_of(["Q45"]) == {} and ix.find_demonym("Portuguese") == []
        assert ix.con.execute("SELECT count(*) FROM demonyms d JOIN entities e USING (id)").fetchone() == (0,)
        assert ix.card("Q45")["demonyms"] == [] and "demonyms" not in ix.counts()
        ix.materialize()
        ix.materialize("demonyms")
        assert ix.demonyms("Q45") == [] and ix.names("Q45")[0] == "Portugal"
        with pytest.raises(InputError, match=f"^index at {old} has no table 'demonyms'; rerun"):
            ix.require("demonyms")
        assert len(ix.fingerprint()) == 64
    notes = index_info(old).notes
    assert notes == [f"no {t} table (the index was made before it existed); re-ingest: envbench ingest-dump "
                     f"DUMP --out {old} --force to add it" for t in ("demonyms", "name_tokens")]
    with WikidataIndex(index) as ix:
        assert ix.has("demonyms") and ix.counts()["demonyms"] == 1
    assert index_info(index).notes == []


def _copy(index: Path, tmp_path: Path, name: str = "copy") -> Path:
    out = tmp_path / name
    shutil.copytree(index, out)
    return out


def _xor(path: Path, start: int, stop: int) -> None:
    data = bytearray(path.read_bytes())
    for i in range(start, min(stop, len(data))):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


def test_card_and_search_are_what_the_cli_prints(index: Path) -> None:
    with WikidataIndex(index) as ix:
        card = ix.card("Q900001")
        assert card["label"] == "Mediaș" and card["aliases"] == ["Medias", "Mediasch"]
        assert card["types"] == ["Q900010"] and card["demonyms"] == [] and card["p21"] == [] and set(card) == {
            "id", "type", "label", "description", "aliases", "demonyms", "p21", "types", "sitelinks", "enwiki",
            "popularity"}
        with pytest.raises(InputError, match=f"^'Q999' is not in the index at {index}; check the id"):
            ix.card("Q999")
        hits = ix.search("medias", limit=2)
        assert [h["id"] for h in hits] == ix.find("medias")[:2] and hits[0]["label"] in ("Mediaș", "MEDIAS", "Other")


def test_manifest_missing_not_an_object_or_of_another_format(tmp_path: Path, index: Path,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    """Issue 17 #15 and #5: an index without a valid manifest of this format is refused by name."""
    from wikidata_index.index import index_fingerprint, index_info

    ix = _copy(index, tmp_path)
    man = ix / "manifest.json"
    good = man.read_bytes()
    man.unlink()
    with pytest.raises(InputError) as exc:
        WikidataIndex(ix)
    assert str(exc.value) == (f"index at {ix} is incomplete: it has no manifest.json (an ingest was stopped while "
                              "publishing, or the file was removed); rerun the ingest-dump command that wrote it, "
                              f"or re-ingest: envbench ingest-dump DUMP --out {ix} --force")
    man.write_text("[1, 2]")
    for fn in (WikidataIndex, index_fingerprint, index_info):
        with pytest.raises(InputError) as exc:
            fn(ix)
        assert str(exc.value) == (f"{man}: not a valid index manifest (a JSON list, not an object); "
                                  f"re-ingest: envbench ingest-dump DUMP --out {ix} --force")
    data = orjson.loads(good)
    man.write_bytes(orjson.dumps({**data, "index_format": 99, "package_version": "9.9"}))
    with pytest.raises(InputError) as exc:
        WikidataIndex(ix)
    assert str(exc.value).startswith(f"index at {ix} has format 99 (made by envbench 9.9); envbench ")
    assert str(exc.value).endswith(f" reads format 1; re-ingest: envbench ingest-dump DUMP --out {ix} --force")
    man.write_bytes(orjson.dumps({**data, "package_version": "0.0.1"}))  # same format, older version: a warning
    with caplog.at_level("WARNING", logger="wikidata_index"), WikidataIndex(ix) as opened:
        assert opened.counts()["entities"] > 0
    assert [m for m in caplog.messages if "was made by envbench 0.0.1" in m]
    assert index_info(ix).notes[0].startswith("made by envbench 0.0.1; this is envbench ")
    man.write_bytes(orjson.dumps({"step": "generate", "outputs": [{"name": "stats.json", "bytes": 1, "sha256": "x"}]}))
    with pytest.raises(InputError) as exc:
        WikidataIndex(ix)
    assert str(exc.value) == (f"{man}: not an index manifest (it lists no table files; step 'generate'); give the "
                              "folder that `envbench ingest-dump` wrote")


def test_truncated_swapped_and_extra_files_are_named(tmp_path: Path, index: Path) -> None:
    """Issue 17 #4 and #15: found at open by the sizes the manifest records, before DuckDB reads."""
    ix = _copy(index, tmp_path)
    names = ix / "names" / "part-00000.parquet"
    whole = names.read_bytes()
    names.write_bytes(whole[:300])
    with pytest.raises(InputError) as exc:
        WikidataIndex(ix)
    assert str(exc.value) == (f"index at {ix}: table 'names' is damaged (names/part-00000.parquet has 300 bytes, "
                              f"manifest.json says {len(whole):,}); re-ingest: envbench ingest-dump DUMP --out {ix} "
                              "--force")
    names.write_bytes(whole)
    types = ix / "types" / "part-00000.parquet"
    tbytes = types.read_bytes()
    types.write_bytes(whole)
    names.write_bytes(tbytes)  # swapped: both sizes are wrong
    with pytest.raises(InputError, match=r"table 'names' is damaged \(names/part-00000.parquet has .* \(and 1 more "
                                         r"problems\); re-ingest"):
        WikidataIndex(ix)
    names.write_bytes(whole)
    types.write_bytes(tbytes)
    (ix / "types" / "part-00009.parquet").write_bytes(tbytes)
    with pytest.raises(InputError) as exc:
        WikidataIndex(ix)
    assert str(exc.value) == (f"index at {ix}: table 'types' has a file that manifest.json does not list "
                              f"(types/part-00009.parquet); re-ingest: envbench ingest-dump DUMP --out {ix} --force")


def test_a_flipped_byte_is_found_by_hash_and_named_instead_of_a_duckdb_error(tmp_path: Path, index: Path) -> None:
    """Issue 17 #4: a damaged file of the right size is found by its sha256 when the index is
    opened; one damaged later, while open, turns DuckDB's error (a 40-line traceback) into one
    line naming the table, in a method and anywhere in a `with` block (generate, link and report
    use ix.con)."""
    from wikidata_index.index import index_fingerprint

    ix = _copy(index, tmp_path)
    names = ix / "names" / "part-00000.parquet"
    good = names.read_bytes()
    _xor(names, 4, 64)  # the first page header: every read of the table fails
    expected = (f"index at {ix}: table 'names' is damaged (names/part-00000.parquet does not match its sha256 "
                f"in manifest.json); re-ingest: envbench ingest-dump DUMP --out {ix} --force")
    for check in (WikidataIndex, index_fingerprint, lambda p: WikidataIndex(p, verify=True)):
        with pytest.raises(InputError) as exc:
            check(ix)
        assert str(exc.value) == expected
    for query in (lambda o: o.find("medias"), lambda o: o.con.execute("SELECT * FROM names").fetchall()):
        names.write_bytes(good)
        with pytest.raises(InputError) as exc, WikidataIndex(ix) as opened:
            _xor(names, 4, 64)
            query(opened)
        assert str(exc.value) == expected
    names.write_bytes(good)
    with WikidataIndex(ix) as opened, pytest.raises(Exception) as exc:  # a query's own mistake is left alone
        opened.con.execute("SELECT nope FROM entities")
    assert "nope" in str(exc.value) and not isinstance(exc.value, InputError)


def test_the_hashes_of_a_read_only_index_are_remembered_per_user(tmp_path: Path, index: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    import wikidata_index.index as wi

    ix = _copy(index, tmp_path)
    (ix / wi.HASH_CACHE).unlink()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    real_access = os.access
    monkeypatch.setattr(wi.os, "access", lambda p, mode: False if Path(p) == ix else real_access(p, mode))
    wi.index_fingerprint(ix)
    assert not (ix / wi.HASH_CACHE).exists()
    assert len(list((tmp_path / "cache" / "envbench" / "file-hashes").glob("*.json"))) == 1
    monkeypatch.setattr(wi, "sha256_file", lambda p: pytest.fail(f"{p} was hashed again"))
    wi.index_fingerprint(ix)


def test_the_fingerprint_comes_from_the_files_and_is_remembered(tmp_path: Path, index: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 17 #15: the fingerprint was read from the manifest, so swapped files were "up to
    date". It is hashed from the files, equals the value the manifest implies (generate outputs made
    before stay up to date), and unchanged files are not read again."""
    import etl.io
    import wikidata_index.index as wi
    from etl.io import dumps_json, sha256_bytes
    from wikidata_index.index import HASH_CACHE, index_fingerprint

    ix = _copy(index, tmp_path)
    (ix / HASH_CACHE).unlink(missing_ok=True)
    listed = orjson.loads((ix / "manifest.json").read_bytes())["outputs"]
    implied = sha256_bytes(dumps_json(sorted((o["name"], o["sha256"]) for o in listed if o["name"].endswith(".parquet"))))
    assert index_fingerprint(ix) == implied
    read: list[str] = []
    real = etl.io.sha256_file
    monkeypatch.setattr(wi, "sha256_file", lambda p: read.append(Path(p).name) or real(p))
    assert index_fingerprint(ix) == implied and read == []  # remembered
    entities = ix / "entities" / "part-00000.parquet"
    _xor(entities, 100, 101)  # edited in place: same size, new mtime and ctime
    with pytest.raises(InputError, match=f"^index at {ix}: table 'entities' is damaged"):
        index_fingerprint(ix)
    assert read == ["part-00000.parquet"]
    _xor(entities, 100, 101)  # back as it was: passes again
    assert index_fingerprint(ix) == implied


def test_an_ingest_remembers_its_hashes(tmp_path: Path, index: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import wikidata_index.index as wi
    from wikidata_index.index import index_fingerprint

    monkeypatch.setattr(wi, "sha256_file", lambda p: pytest.fail(f"{p} was hashed again"))
    index_fingerprint(index)  # the module fixture's ingest recorded every file's hash


def test_an_empty_path_or_a_file_is_no_index(tmp_path: Path, index: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`index info ""` read the current folder as the index; a file was told to become one with ingest-dump."""
    monkeypatch.chdir(index)  # "" was this folder, and it is an index
    with pytest.raises(InputError) as exc:
        WikidataIndex("")
    assert str(exc.value) == "the index path is empty; give the folder `envbench ingest-dump --out` wrote, e.g. data/index"
    manifest = index / "manifest.json"
    with pytest.raises(InputError) as exc:
        index_info(manifest)
    assert str(exc.value) == f"{manifest} is a file, not an index; give the folder `envbench ingest-dump --out` wrote"


def test_entity_id_capitalises_the_prefix_of_an_id_and_leaves_other_text() -> None:
    from wikidata_index.index import entity_id

    assert [entity_id(t) for t in ("q42", "Q42", " p17 ", "l7", "Q42x", "q0", "douglas", "")] == [
        "Q42", "Q42", "P17", "L7", "Q42x", "q0", "douglas", ""]
