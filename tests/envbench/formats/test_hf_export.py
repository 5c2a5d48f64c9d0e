"""`envbench export` as a library step: the folder, the card, and loading it with Hugging Face `datasets`."""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from envbench.core.errors import EnvbenchError
from envbench.formats import hf
from envbench.formats.docred import read_docs
from envbench.formats.hf_export import export_hf, to_yaml
from etl.io import sha256_file
from tests.envbench.formats.test_hf import docred_view
from tests.envbench.index_fixture import sample_env, sample_world


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample benchmark (generate --seeds 5, as the demo), with its lock beside it."""
    from envbench.rename.lock import write_lock

    out = sample_env(tmp_path_factory.mktemp("export") / "env")
    write_lock(out, sample_world().index, None)
    return out


@pytest.fixture(scope="module")
def exported(env: Path) -> Path:
    out = env.parent / "hf"
    export_hf(env, out, docs=sample_world().test)
    return out


def hf_extra(module: str) -> Any:
    """A module of the [hf] extra: skip without it, fail in CI (ENVBENCH_REQUIRE_HF=1, .ci/run)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        msg = f"{module} is not installed; loading needs the [hf] extra (pip install 'envbench[hf]')"
        if os.environ.get("ENVBENCH_REQUIRE_HF") == "1":
            pytest.fail(msg)
        pytest.skip(msg)


def card_header(folder: Path) -> dict[str, Any]:
    yaml = hf_extra("yaml")  # PyYAML comes with datasets
    text = (folder / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n", 2)[1])


def card_rates(folder: Path) -> dict[str, tuple[int, int, float]]:
    """The card's substitution-rate table: type -> (renamed, entities, rate)."""
    text = (folder / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\w+) \| (\d+) \| (\d+) \| ([0-9.]+) \|$", text, flags=re.M)
    return {t: (int(a), int(b), float(r)) for t, a, b, r in rows}


def check_card_against_stats(folder: Path, env_dir: Path) -> None:
    stats = json.loads((env_dir / "stats.json").read_text())
    rates = card_rates(folder)
    assert set(rates) == set(stats["renamed"])
    for t, (renamed, entities, rate) in rates.items():
        assert (renamed, entities) == (stats["renamed"][t]["renamed"], stats["renamed"][t]["entities"]), t
        assert rate == round(stats["substitution_rate"][t], 4), t
    text = (folder / "README.md").read_text(encoding="utf-8")
    assert (f"{stats['documents']} source documents, {stats['output_documents']} renamed documents" in text)
    audit = stats["audit"]["total"]
    assert f"type-constraint audit: {audit['held_after']} of {audit['held_before']} checks still hold" in text
    kept = ", ".join(f"{k} {v}" for k, v in sorted(stats["kept_reasons"].items()))
    assert f"kept entities by reason: {kept}." in text
    header = card_header(folder)
    default = next(i for i in header["dataset_info"] if i["config_name"] == "default")
    counts = {s["name"]: s["num_examples"] for s in default["splits"]}
    assert counts == {"original": stats["documents"], split_of(env_dir): stats["output_documents"]}


def split_of(env_dir: Path) -> str:
    return next(p.name for p in env_dir.glob("*_env.json")).removesuffix(".json")


def test_the_folder_layout_and_manifest(exported: Path) -> None:
    files = sorted(str(p.relative_to(exported)) for p in exported.rglob("*") if p.is_file())
    assert files == ["README.md", "data/original-00000-of-00001.parquet", "data/test_env-00000-of-00001.parquet",
                     "manifest.json", "substitutions/test_env-00000-of-00001.parquet"]
    manifest = json.loads((exported / "manifest.json").read_text())
    assert manifest["step"] == "export" and manifest["parameters"]["split"] == "test_env"
    assert {o["name"] for o in manifest["outputs"]} == set(files) - {"manifest.json"}


def test_rows_equal_the_json_documents_field_by_field(env: Path, exported: Path) -> None:
    renamed = json.loads((env / "test_env.json").read_text())
    originals = json.loads(sample_world().test.read_text())
    subs = {r["title"]: (r["source_title"], r["seed"])
            for r in pq.read_table(env / "substitutions.parquet").to_pylist()}
    for split, docs in (("original", originals), ("test_env", renamed)):
        table = pq.read_table(exported / "data" / hf.shard_name(split))
        assert table.schema.remove_metadata() == hf.document_schema()
        rows = table.to_pylist()
        assert len(rows) == len(docs)
        for row, doc in zip(rows, docs):
            assert row["title"] == doc["title"] and row["sents"] == doc["sents"]
            assert row["vertexSet"] == [[{k: m[k] for k in hf.MENTION_FIELDS} for m in e] for e in doc["vertexSet"]]
            labels = doc.get("labels") or []
            assert row["labels"]["head"] == [lab["h"] for lab in labels]
            assert row["labels"]["tail"] == [lab["t"] for lab in labels]
            assert row["labels"]["relation_id"] == [lab["r"] for lab in labels]
            assert row["labels"]["evidence"] == [lab["evidence"] for lab in labels]
            expected = (doc["title"], 0) if split == "original" else subs[doc["title"]]
            assert (row["source_title"], row["seed"]) == expected
        assert read_docs(exported / "data" / hf.shard_name(split)).docs == [docred_view(d) for d in docs]
    # the substitutions config is the generate run's file, byte for byte
    assert sha256_file(exported / "substitutions" / hf.shard_name("test_env")) == sha256_file(env / "substitutions.parquet")


def test_card_header_and_figures_equal_stats(env: Path, exported: Path) -> None:
    check_card_against_stats(exported, env)
    header = card_header(exported)
    assert header["license"] == ["mit", "cc0-1.0"]
    assert header["task_categories"] and header["pretty_name"] == "Env benchmark of test.json"
    assert header["configs"] == [
        {"config_name": "default", "default": True,
         "data_files": [{"split": "original", "path": "data/original-*.parquet"},
                        {"split": "test_env", "path": "data/test_env-*.parquet"}]},
        {"config_name": "substitutions",
         "data_files": [{"split": "test_env", "path": "substitutions/test_env-*.parquet"}]}]
    default, subs = header["dataset_info"]
    assert default["features"] == hf.FEATURES_YAML
    assert default["download_size"] == sum((exported / "data" / hf.shard_name(s)).stat().st_size
                                           for s in ("original", "test_env"))
    assert [f["name"] for f in subs["features"]] == pq.read_schema(env / "substitutions.parquet").names
    assert subs["splits"] == [{"name": "test_env", "num_bytes": subs["dataset_size"],
                               "num_examples": pq.read_metadata(env / "substitutions.parquet").num_rows}]
    text = (exported / "README.md").read_text()
    lock = env / "test_env.lock.json"
    assert f"- lock: `test_env.lock.json`, sha256 `{sha256_file(lock)}`" in text
    assert "envbench verify test_env.lock.json --docs test.json --index INDEX \\\n    --links links.json\n" in text
    for cite in ("meng2024robustness", "yao2019DocRED", "tan2022revisiting"):
        assert f"@inproceedings{{{cite}," in text
    assert "## Known limits" in text and "fewer non-person substitutions keep the real type than with a dump" in text


def test_a_rerun_is_up_to_date_and_force_exports_again(env: Path, exported: Path, tmp_path: Path) -> None:
    out = tmp_path / "hf"
    first = export_hf(env, out, docs=sample_world().test)
    card = (out / "README.md").read_bytes()
    assert export_hf(env, out, docs=sample_world().test).up_to_date
    again = export_hf(env, out, docs=sample_world().test, force=True)
    assert not again.up_to_date and (out / "README.md").read_bytes() == card  # deterministic
    assert first.splits == {"original": 20, "test_env": 100, "substitutions": 1610}
    assert (out / "data" / hf.shard_name("test_env")).read_bytes() == \
        (exported / "data" / hf.shard_name("test_env")).read_bytes()


def test_inputs_are_checked_before_any_work(env: Path, tmp_path: Path) -> None:
    w = sample_world()
    with pytest.raises(EnvbenchError) as e:
        export_hf(env, tmp_path / "a", docs=w.train)
    assert str(e.value) == (f"--docs {w.train}: not the documents {env} was generated from (sha256 differs from "
                            "test.json in its manifest.json); pass that file")
    with pytest.raises(EnvbenchError) as e:
        export_hf(tmp_path, tmp_path / "b", docs=w.test)
    assert str(e.value) == (f"{tmp_path}: no manifest.json, not one of `envbench generate`; pass the --out folder "
                            "of a generate run (it holds <stem>_env.json, substitutions.parquet, stats.json)")
    for text, what in (("{", "a manifest.json that is not a JSON object"), ("[]", "a manifest.json that is not a "
                       "JSON object"), ('{"step": "link"}', "the manifest.json of `link`")):
        (tmp_path / "manifest.json").write_text(text)
        with pytest.raises(EnvbenchError) as e:
            export_hf(tmp_path, tmp_path / "b", docs=w.test)
        assert str(e.value).startswith(f"{tmp_path}: {what}, not one of `envbench generate`; ")
    (tmp_path / "manifest.json").unlink()
    other = tmp_path / "other.lock.json"
    other.write_text(json.dumps({"outputs": [{"name": "test_env.json", "sha256": "0" * 64}]}))
    with pytest.raises(EnvbenchError) as e:
        export_hf(env, tmp_path / "c", docs=w.test, lock=other)
    assert str(e.value) == (f"--lock {other}: does not pin {env / 'test_env.json'} (no output of that name with its "
                            "sha256); pass the lock of this benchmark, or leave --lock out")
    stale = tmp_path / "stale"  # a lock an earlier run left in ENV_DIR: the user never passed --lock
    shutil.copytree(env, stale)
    shutil.copy(other, stale / "test_env.lock.json")
    with pytest.raises(EnvbenchError) as e:
        export_hf(stale, tmp_path / "e", docs=w.test)
    assert str(e.value) == (f"{stale / 'test_env.lock.json'}: the lock in {stale} does not pin {stale / 'test_env.json'} "
                            f"(an earlier run's; no output of that name with its sha256); rebuild it with `envbench "
                            f"lock {stale} --index INDEX`, move it out, or pass --lock with this benchmark's lock")
    edited = tmp_path / "edited"
    shutil.copytree(env, edited)
    (edited / "stats.json").write_text("{}")
    with pytest.raises(EnvbenchError) as e:
        export_hf(edited, tmp_path / "d", docs=w.test)
    assert str(e.value) == (f"{edited / 'stats.json'}: changed since generate wrote it (manifest.json lists its "
                            "sha256); regenerate with `envbench generate --force`")
    with pytest.raises(EnvbenchError) as e:
        export_hf(env, env, docs=w.test)
    assert str(e.value) == (f"--out {env}: is ENV_DIR itself, whose manifest.json is generate's; export into another "
                            f"folder, such as {env}-hf")
    assert not any((tmp_path / n).exists() for n in "abcde")


@pytest.mark.parametrize("text", ["plain", "100K<n<1M", "yes", "1.0", "a: b", "#x", "Kraków 'q' \"d\"", "",
                                  "data/test_env-*.parquet", "x ", "@at"])
def test_the_yaml_writer_round_trips(text: str) -> None:
    yaml = hf_extra("yaml")
    value = {"k": [text, {"name": text, "n": 3, "b": True, "l": []}], "e": {}, "nested": [[text, 1], [{}]]}
    assert yaml.safe_load("\n".join(to_yaml(value))) == value


# ----------------------------------------------------------------------------- loading with `datasets`
LOAD = """
import json, sys
import datasets
from datasets import Features, load_dataset
folder, cache, features_yaml, with_rows = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4] == "rows"
docs = load_dataset(folder, cache_dir=cache)
subs = load_dataset(folder, "substitutions", cache_dir=cache)
subs = subs[next(iter(subs))]
declared = Features._from_yaml_list(features_yaml)
print(json.dumps({
    "splits": {k: v.num_rows for k, v in docs.items()},
    "declared": all(docs[k].features == declared for k in docs),
    "arrow": {k: str(docs[k].data.schema.remove_metadata()) for k in docs},
    "rows": {k: docs[k].to_list() for k in docs} if with_rows else None,
    "subs_rows": subs.num_rows,
    "subs_columns": subs.column_names,
}))
"""


def load_with_datasets(folder: Path, tmp_path: Path, *, rows: bool = True) -> dict[str, Any]:
    """datasets.load_dataset in a fresh process: offline, with its cache in a temporary folder."""
    hf_extra("datasets")
    environ = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf-home"),
               "HF_DATASETS_CACHE": str(tmp_path / "cache")}
    res = subprocess.run([sys.executable, "-c", LOAD, str(folder), str(tmp_path / "cache"), json.dumps(hf.FEATURES_YAML),
                          "rows" if rows else "-"],
                         capture_output=True, text=True, env=environ, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_load_dataset_gives_the_json_documents_offline(env: Path, exported: Path, tmp_path: Path) -> None:
    loaded = load_with_datasets(exported, tmp_path)
    assert loaded["splits"] == {"original": 20, "test_env": 100}
    assert loaded["declared"] is True  # the features are the card's, which are FEATURES_YAML
    schema = str(hf.document_schema())
    assert loaded["arrow"] == {"original": schema, "test_env": schema}
    for split, path in (("original", sample_world().test), ("test_env", env / "test_env.json")):
        docs = json.loads(path.read_text())
        assert [hf.from_row(r) for r in loaded["rows"][split]] == [docred_view(d) for d in docs]
        assert [r["relation_text"] for r in (row["labels"] for row in loaded["rows"][split])] == \
            [[hf.RELATIONS[lab["r"]] for lab in d.get("labels") or []] for d in docs]
    assert loaded["subs_rows"] == 1610 and loaded["subs_columns"] == pq.read_schema(env / "substitutions.parquet").names


@pytest.mark.slow
def test_the_re_docred_lock_flow_exports_and_loads(tmp_path: Path) -> None:
    """The Re-DocRED lock's flow (kb-from-corpus dev + test, generate test excluding dev's names; one seed
    here, five in `make lock`): the export's card gives stats.json's figures, and `datasets` loads it."""
    from envbench.rename.generate import generate
    from envbench.rename.lock import write_lock
    from envbench.worlds.kb_from_corpus import kb_from_corpus
    from tests.conftest import shared_path
    from wikidata_index.ingest import ingest_dump

    dev, test = shared_path("re-docred", "dev_revised.json"), shared_path("re-docred", "test_revised.json")
    kb_from_corpus([dev, test], tmp_path / "redocred-kb.json.gz", tmp_path / "links.json")
    ingest_dump(tmp_path / "redocred-kb.json.gz", tmp_path / "index", progress=False)
    generate(test, tmp_path / "index", tmp_path / "env", links=tmp_path / "links.json", seeds=1, progress=False,
             exclude_names_from=[dev])
    write_lock(tmp_path / "env", tmp_path / "index", None)
    result = export_hf(tmp_path / "env", tmp_path / "hf", docs=test)
    assert result.splits["original"] == 500 and result.splits["test_revised_env"] == 500
    check_card_against_stats(tmp_path / "hf", tmp_path / "env")
    text = (tmp_path / "hf" / "README.md").read_text()
    assert "--exclude-names-from dev_revised.json" in text and "dump `redocred-kb.json.gz`" in text
    env_docs = read_docs(tmp_path / "hf").docs
    assert env_docs == [docred_view(d) for d in json.loads((tmp_path / "env" / "test_revised_env.json").read_text())]
    loaded = load_with_datasets(tmp_path / "hf", tmp_path, rows=False)  # last: skips without the [hf] extra
    assert loaded["splits"] == {"original": 500, "test_revised_env": 500} and loaded["declared"] is True


def test_evrt_twins_export_under_their_source_titles(tmp_path: Path) -> None:
    from envbench.rename.generate import generate

    w = sample_world()
    generate(w.train, w.index, tmp_path / "twins", links=w.links, seeds=1, pool="train", twins=True, progress=False,
             exclude_names_from=[w.test])
    result = export_hf(tmp_path / "twins", tmp_path / "hf", docs=w.train)
    assert list(result.splits) == ["original", "train_twins", "substitutions"]
    rows = pq.read_table(tmp_path / "hf" / "data" / hf.shard_name("train_twins")).to_pylist()
    assert all((r["source_title"], r["seed"]) == (r["title"], 1) for r in rows)
    assert "one renamed twin per document under its source title" in (tmp_path / "hf" / "README.md").read_text()
    assert [d["title"] for d in read_docs(tmp_path / "hf").docs] == [r["title"] for r in rows]


def test_the_export_writes_with_pyarrow_alone(env: Path, tmp_path: Path) -> None:
    """The core install writes the folder: `datasets` (the [hf] extra) is never imported by export."""
    code = ("import sys; from envbench.formats.hf_export import export_hf; "
            f"export_hf({str(env)!r}, {str(tmp_path / 'hf')!r}, docs={str(sample_world().test)!r}); "
            "print(sorted(m for m in ('datasets', 'huggingface_hub') if m in sys.modules))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip() == "[]" and (tmp_path / "hf" / "README.md").is_file()


def test_a_folder_missing_a_split_its_manifest_lists_is_refused(exported: Path, tmp_path: Path) -> None:
    """With the Env split deleted, the folder used to read as its only split left: the originals."""
    from envbench.core.errors import DataError
    from envbench.formats.hf import document_files

    copy = tmp_path / "hf"
    shutil.copytree(exported, copy)
    (env_split,) = sorted((copy / "data").glob("test_env-*.parquet"))
    env_split.unlink()
    with pytest.raises(DataError) as err:
        document_files(copy)
    assert str(err.value) == (f"{copy}: data/{env_split.name} is missing, though the folder's manifest lists it; "
                              "copy the whole folder again, or rerun `envbench export`")


def _build_and_export(dump: Path, links: Path | None, tmp_path: Path) -> str:
    """ingest DUMP, generate the sample test split (new names kept off train.json), export: the card."""
    from envbench.rename.generate import generate
    from wikidata_index.ingest import ingest_dump

    w = sample_world()
    ingest_dump(dump, tmp_path / "index", progress=False, workers=1)
    generate(w.test, tmp_path / "index", tmp_path / "env", links=links or w.links, seeds=1, progress=False,
             exclude_names_from=[w.train])
    export_hf(tmp_path / "env", tmp_path / "hf", docs=w.test)
    return (tmp_path / "hf" / "README.md").read_text()


def test_cards_say_where_the_names_come_from_with_their_licence(tmp_path: Path) -> None:
    """A knowledge base made from the corpus is no Wikidata, and its names are the corpus's (no CC0); a
    Wikidata dump's names are CC0 and the card names the dump and its date. The card's pointers to figures
    point where they are: every figure the limits name is in a section before them."""
    from envbench.worlds.kb_from_corpus import kb_from_corpus

    w = sample_world()
    kb_dir = tmp_path / "kb"
    kb_dir.mkdir()
    kb_from_corpus([w.train, w.test], kb_dir / "kb.json.gz", kb_dir / "links.json", min_class_items=1)
    kb = _build_and_export(kb_dir / "kb.json.gz", kb_dir / "links.json", kb_dir)
    assert card_header_text(kb)["license"] == ["mit"]
    assert ("- names from: a knowledge base made by `envbench kb-from-corpus` from the documents train.json, "
            "test.json; no Wikidata dump; the new names are mention names of those documents (other entities of the "
            "corpus), under those documents' licence.\n") in kb
    assert "takes the names of another entity of the same type found in the corpus" in kb
    assert "linked to an item of the knowledge base made from the corpus" in kb
    assert "Wikidata item" not in kb and "CC0" not in kb and "from a Wikidata index" not in kb
    assert ("## License\n\nThe documents are those of the source corpus (license mit). The new names are mention "
            "names of those documents (other entities of the corpus), under those documents' licence.\n") in kb

    dump_dir = tmp_path / "dump"
    dump_dir.mkdir()
    dump = dump_dir / "wikidata-20240101-all.json.gz"  # a dump with no manifest beside it: Wikidata's
    shutil.copyfile(w.sample / "wikidata-sample.json.gz", dump)
    wd = _build_and_export(dump, None, dump_dir)
    assert card_header_text(wd)["license"] == ["mit", "cc0-1.0"]
    assert ("- names from: the Wikidata JSON dump wikidata-20240101-all.json.gz, dated 2024-01-01 by its name; the "
            "new names are Wikidata labels and aliases, under Wikidata's CC0 1.0.\n") in wd
    assert "takes the names of another Wikidata item of the same type" in wd and "linked to a Wikidata item" in wd
    assert ("The documents are those of the source corpus (license mit). The new names are Wikidata labels and "
            "aliases, under Wikidata's CC0 1.0.\n") in wd
    for card in (kb, wd):
        assert " below" not in card
        rates, limits = card.index("## Substitution rates"), card.index("## Known limits")
        assert rates < limits and card.count("under Substitution rates, above") == 3


def card_header_text(text: str) -> dict[str, Any]:
    import yaml

    return yaml.safe_load(text.split("---\n")[1])
