"""``envbench export``: a generate output folder as a Hugging Face ``datasets`` folder with a dataset card.

    export_hf("data/env", "data/env-hf", docs="data/sample/docs/test.json")

writes the folder :mod:`envbench.formats.hf` describes (pyarrow only; ``datasets`` is needed to load
it, not to write it), as a step (:mod:`etl.step`): paths checked first, nothing written when up to
date, files staged and published atomically, ``manifest.json`` last. Its inputs are checked before any
work: ENV_DIR's files are the ones its ``manifest.json`` lists (by sha256), ``docs`` is the file
generate read, and a lock, when given or found in ENV_DIR, pins this very Env file.

The card's YAML header gives what the Hub reads (license, task categories, ``configs`` with
``data_files``, ``dataset_info`` with features and sizes); its body says what the benchmark is, how it
was built (from ENV_DIR's manifest and the lock), the rates of ``stats.json``, the known limits, the
citations and the ``envbench verify`` command that regenerates it.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envbench.core.errors import DataError, EnvbenchError, shorten
from envbench.core.types import COARSE_TYPES
from envbench.formats import hf
from envbench.formats.docred import read_docs
from envbench.formats.provenance import describe as describe_provenance
from envbench.formats.substitutions import FILE_NAME as SUBSTITUTIONS_FILE
from etl.io import plain_file_name, sha256_file
from etl.manifest import package_version
from etl.progress import Stages
from etl.step import MANIFEST, Step, read_manifest

FORMATS = ("hf",)
README = "README.md"
ENV_SUFFIXES = ("_env.json", "_twins.json")  # the documents file generate writes (see rename/generate.py)
LOCK_SUFFIX = ".lock.json"  # as envbench.rename.lock names its locks

CITATIONS = """\
@inproceedings{meng2024robustness,
  title     = {On the Robustness of Document-Level Relation Extraction Models to Entity Name Variations},
  author    = {Meng, Shiao and Hu, Xuming and Liu, Aiwei and Ma, Fukun and Yang, Yawen and Li, Shuang and Wen, Lijie},
  booktitle = {Findings of the Association for Computational Linguistics: ACL 2024},
  year      = {2024}
}

@inproceedings{yao2019DocRED,
  title     = {{DocRED}: A Large-Scale Document-Level Relation Extraction Dataset},
  author    = {Yao, Yuan and Ye, Deming and Li, Peng and Han, Xu and Lin, Yankai and Liu, Zhenghao and Liu, Zhiyuan and Huang, Lixin and Zhou, Jie and Sun, Maosong},
  booktitle = {Proceedings of ACL 2019},
  year      = {2019}
}

@inproceedings{tan2022revisiting,
  title     = {Revisiting {DocRED} -- Addressing the False Negative Problem in Relation Extraction},
  author    = {Tan, Qingyu and Xu, Lu and Bing, Lidong and Ng, Hwee Tou and Aljunied, Sharifah Mahani},
  booktitle = {Proceedings of EMNLP 2022},
  year      = {2022}
}
"""

# What bench/RESULTS.md measured and the card must say (the figures are Env-Re-DocRED test's).
KNOWN_LIMITS = (
    "Without a Wikidata dump (an index made by `envbench kb-from-corpus`) the fine types are guessed from "
    "the corpus, and fewer non-person substitutions keep the real type than with a dump (bench/RESULTS.md, "
    "\"Typing the offline KB\"); with a dump the type is the item's P31 class.",
    "A new name may be a name that a model met in training; `--exclude-names-from` keeps the names of the "
    "files it is given out (the names-seen figure under Substitution rates, above, says how many renamed "
    "mentions carry a name of the source documents or of those files).",
    "New names are tokenised as the corpus tokenises them (spaCy's blank English rules): on Env-Re-DocRED "
    "test 99.93% of renamed mentions whose name is a corpus mention name carry exactly the corpus's tokens.",
    "Labels and evidence are the source document's; the renaming keeps every type constraint of the relations "
    "that the original items met (the audit under Substitution rates, above), not the truth of each fact for the "
    "new items.",
    "Some entities keep their names (the kept reasons under Substitution rates, above), so a renamed copy is not "
    "renamed throughout.",
    "The Parquet rows carry the DocRED features only: mention fields such as Re-DocRED's `global_pos` and "
    "`index`, and label fields such as DocRED-HWE's `keywords`, are in the JSON files envbench writes, not here.",
)


# --------------------------------------------------------------------------- a small YAML writer
_PLAIN = re.compile(r"^[A-Za-z_./*][A-Za-z0-9_ ./*<>()+-]*$")
_RESERVED = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    text = str(value)
    if _PLAIN.match(text) and not text.endswith(" ") and text.lower() not in _RESERVED:
        return text
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a YAML double-quoted scalar


def _leaf(value: Any) -> str:
    """A scalar, or an empty mapping or list in flow style."""
    if isinstance(value, Mapping):
        return "{}"
    return "[]" if isinstance(value, list) else _scalar(value)


def to_yaml(value: Any, indent: int = 0) -> list[str]:
    """Block-style YAML lines of dicts, lists, strings, ints and bools (the card header needs no more)."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(item, (Mapping, list)) and item:
                lines.append(f"{pad}{key}:")
                lines.extend(to_yaml(item, indent + (0 if isinstance(item, list) else 2)))
            else:
                lines.append(f"{pad}{key}: {_leaf(item)}")
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, (Mapping, list)) and item:
                inner = to_yaml(item, indent + 2)
                lines.append(f"{pad}- {inner[0].lstrip()}")
                lines.extend(inner[1:])
            else:
                lines.append(f"{pad}- {_leaf(item)}")
    else:
        lines.append(f"{pad}{_leaf(value)}")
    return lines


# --------------------------------------------------------------------------- inputs
@dataclass(frozen=True)
class EnvFolder:
    """What generate left in ENV_DIR, checked against its manifest."""

    root: Path
    manifest: dict[str, Any]
    documents: Path  # <stem>_env.json or <stem>_twins.json
    substitutions: Path
    stats: Path

    @property
    def split(self) -> str:
        return hf.split_name(self.documents.name)


def read_env_folder(env_dir: str | Path) -> EnvFolder:
    """ENV_DIR's manifest and outputs; every listed output present with its sha256."""
    root = Path(env_dir)
    manifest = read_manifest(root / MANIFEST)
    if manifest is None or manifest.get("step") != "generate":
        what = ("no manifest.json" if not (root / MANIFEST).is_file() else
                "a manifest.json that is not a JSON object" if manifest is None else
                f"the manifest.json of `{manifest['step']}`" if isinstance(manifest.get("step"), str) else
                "a manifest.json that names no step")
        raise EnvbenchError(f"{root}: {what}, not one of `envbench generate`; pass the --out folder of a generate "
                            "run (it holds <stem>_env.json, substitutions.parquet, stats.json)")
    listed = {o["name"]: o for o in manifest.get("outputs") or [] if isinstance(o, dict) and "name" in o}
    for name in listed:
        # generate writes plain files into its folder; a name leading elsewhere ("../../../etc/passwd") is
        # an edited manifest, and export would read and hash what it names
        if not plain_file_name(name):
            raise EnvbenchError(f"{root / MANIFEST}: lists an output {shorten(repr(name))} outside its folder; "
                                "regenerate with `envbench generate`")
    docs = [n for n in listed if n.endswith(ENV_SUFFIXES)]
    if len(docs) != 1 or SUBSTITUTIONS_FILE not in listed or "stats.json" not in listed:
        raise EnvbenchError(f"{root / MANIFEST}: lists {', '.join(sorted(listed)) or 'no outputs'}, not one "
                            f"<stem>_env.json with {SUBSTITUTIONS_FILE} and stats.json; regenerate with `envbench generate`")
    for name, entry in sorted(listed.items()):
        path = root / name
        if not path.is_file() or sha256_file(path) != entry.get("sha256"):
            raise EnvbenchError(f"{path}: {'missing' if not path.is_file() else 'changed since generate wrote it'} "
                                f"(manifest.json lists its sha256); regenerate with `envbench generate --force`")
    return EnvFolder(root, manifest, root / docs[0], root / SUBSTITUTIONS_FILE, root / "stats.json")


def check_source(env: EnvFolder, docs: Path) -> None:
    """``docs`` is the file generate read (the first input of its manifest)."""
    inputs = [i for i in env.manifest.get("inputs") or [] if isinstance(i, dict)]
    if not inputs:
        raise EnvbenchError(f"{env.root / MANIFEST}: lists no inputs; regenerate with `envbench generate`")
    if sha256_file(docs) != inputs[0].get("sha256"):
        raise EnvbenchError(f"--docs {docs}: not the documents {env.root} was generated from (sha256 differs from "
                            f"{inputs[0].get('name')} in its manifest.json); pass that file")


def find_lock(env: EnvFolder, lock: str | Path | None) -> tuple[Path, dict[str, Any]] | None:
    """The lock given, or the one lock file in ENV_DIR; it must pin this Env file (same sha256)."""
    found_here = lock is None
    if lock is None:
        found = sorted(env.root.glob(f"*{LOCK_SUFFIX}"))
        if len(found) != 1:
            return None
        lock = found[0]
    path = Path(lock)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EnvbenchError(f"--lock {path}: not a readable lock ({exc}); pass the file `envbench lock` wrote") from None
    outputs = {o.get("name"): o for o in data.get("outputs") or [] if isinstance(o, dict)} if isinstance(data, dict) else {}
    entry = outputs.get(env.documents.name)
    if entry is None or entry.get("sha256") != sha256_file(env.documents):
        if found_here:  # a lock of an earlier generate into the same folder: the user never named it
            raise EnvbenchError(f"{path}: the lock in {env.root} does not pin {env.documents} (an earlier run's; no "
                                f"output of that name with its sha256); rebuild it with `envbench lock {env.root} "
                                f"--index INDEX`, move it out, or pass --lock with this benchmark's lock")
        raise EnvbenchError(f"--lock {path}: does not pin {env.documents} (no output of that name with its sha256); "
                            f"pass the lock of this benchmark, or leave --lock out")
    return path, data


# --------------------------------------------------------------------------- the card
def size_category(n: int) -> str:
    """The Hub's size category of a dataset with ``n`` rows."""
    for bound, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                         (1_000_000, "100K<n<1M")):
        if n < bound:
            return label
    return "n>1M"


_DTYPES = {"double": "float64", "float": "float32", "halffloat": "float16"}  # Arrow's names -> the Hub's


def arrow_features(schema: Any) -> list[dict[str, Any]]:
    """Card features of a flat Arrow schema (scalars and lists of scalars, as substitutions.parquet has)."""
    import pyarrow as pa

    out: list[dict[str, Any]] = []
    for f in schema:
        if pa.types.is_list(f.type) or pa.types.is_large_list(f.type):
            inner = str(f.type.value_type)
            out.append({"name": f.name, "sequence": _DTYPES.get(inner, inner)})
        else:
            out.append({"name": f.name, "dtype": _DTYPES.get(str(f.type), str(f.type))})
    return out


@dataclass
class SplitInfo:
    name: str
    rows: int
    num_bytes: int  # Arrow size in memory, as the Hub's dataset_info reports it
    file: str  # relative to the output folder
    file_bytes: int


def card_header(*, pretty_name: str, licenses: Sequence[str], documents: Sequence[SplitInfo],
                substitutions: SplitInfo, substitution_schema: Any) -> dict[str, Any]:
    """The YAML header as a dict (``to_yaml`` writes it)."""
    def info(config: str, features: list[dict[str, Any]], splits: Sequence[SplitInfo]) -> dict[str, Any]:
        return {"config_name": config, "features": features,
                "splits": [{"name": s.name, "num_bytes": s.num_bytes, "num_examples": s.rows} for s in splits],
                "download_size": sum(s.file_bytes for s in splits),
                "dataset_size": sum(s.num_bytes for s in splits)}

    def files(splits: Sequence[SplitInfo]) -> list[dict[str, str]]:
        return [{"split": s.name, "path": f"{Path(s.file).parent.as_posix()}/{s.name}-*.parquet"} for s in splits]

    return {
        "pretty_name": pretty_name,
        "language": ["en"],
        "license": list(licenses),
        "multilinguality": ["monolingual"],
        "size_categories": [size_category(sum(s.rows for s in documents))],
        "task_categories": ["text-classification", "token-classification"],
        "tags": ["relation-extraction", "document-level-relation-extraction", "docred", "robustness",
                 "entity-renaming"],
        "configs": [
            {"config_name": "default", "default": True, "data_files": files(documents)},
            {"config_name": hf.SUBSTITUTIONS_CONFIG, "data_files": files([substitutions])},
        ],
        "dataset_info": [info("default", hf.FEATURES_YAML, documents),
                         info(hf.SUBSTITUTIONS_CONFIG, arrow_features(substitution_schema), [substitutions])],
    }


def _share(x: Any) -> str:
    return f"{x:.2%}" if isinstance(x, (int, float)) else "n/a"


def _rate_table(stats: Mapping[str, Any]) -> list[str]:
    rows = ["| type | renamed | entities | substitution rate |", "| --- | ---: | ---: | ---: |"]
    for t in (*COARSE_TYPES, "total"):
        r = stats["renamed"].get(t)
        if r is not None:
            rows.append(f"| {t} | {r['renamed']} | {r['entities']} | {stats['substitution_rate'][t]:.4f} |")
    return rows


def _built_lines(env: EnvFolder, docs: Path, lock: tuple[Path, dict[str, Any]] | None) -> list[str]:
    m = env.manifest
    params = m.get("parameters") or {}
    inputs = [i for i in m.get("inputs") or [] if isinstance(i, dict)]
    excluded = list(params.get("exclude_names_from") or [])
    lines = [
        f"- envbench {m.get('package_version')} (code sha256 `{m.get('code_sha256')}`), `envbench generate` with "
        f"`--seeds {params.get('seeds')}`, `--pool {params.get('pool')}`"
        + (" `--twins`" if params.get("twins") else "") + (" `--skip-invalid`" if params.get("skip_invalid") else "")
        + "; exported by envbench " + package_version() + ".",
        "- inputs (sha256): " + "; ".join(f"`{i.get('name')}` `{i.get('sha256')}`" for i in inputs) + ".",
        "- `--exclude-names-from`: " + (", ".join(f"`{n}`" for n in excluded) if excluded else "none") + ".",
        f"- links: {'a link file (the second input)' if params.get('links') == 'file' else 'the offline linker'}.",
        f"- index identity (its tables' sha256): `{(m.get('identity') or {}).get('index', {}).get('tables_sha256')}`.",
    ]
    if lock is not None:
        path, data = lock
        index = data.get("index") or {}
        lines.append(f"- lock: `{path.name}`, sha256 `{sha256_file(path)}`; its index: dump `{index.get('dump')}` "
                     f"(sha256 `{index.get('dump_sha256')}`), languages {', '.join(index.get('languages') or [])}.")
    else:
        lines.append("- lock: none was given (`envbench lock` writes one; `envbench export --lock` names it here).")
    return lines


def _verify_command(env: EnvFolder, docs: Path, lock: tuple[Path, dict[str, Any]] | None) -> list[str]:
    params = env.manifest.get("parameters") or {}
    inputs = [i.get("name") for i in env.manifest.get("inputs") or [] if isinstance(i, dict)]
    lock_name = lock[0].name if lock is not None else f"{env.documents.stem}{LOCK_SUFFIX}"
    parts = [f"envbench verify {lock_name} --docs {docs.name} --index INDEX"]
    if params.get("links") == "file" and len(inputs) > 1:
        parts.append(f"--links {inputs[1]}")
    parts += [f"--exclude-names-from {n}" for n in params.get("exclude_names_from") or []]
    lines = ["```bash"]
    if lock is None:
        lines.append(f"envbench lock ENV_DIR --index INDEX   # writes ENV_DIR/{lock_name}")
    lines += [" \\\n    ".join(parts), "```"]
    return lines


def _licence_lines(header: Mapping[str, Any], prov: Mapping[str, Any]) -> list[str]:
    """The card's License section: the corpus's licence for the documents, and the new names' own."""
    corpus = header["license"][0]
    return [f"The documents are those of the source corpus (license {corpus}). {prov['names'][0].upper()}"
            f"{prov['names'][1:]}."]


def render_card(*, env: EnvFolder, docs: Path, stats: Mapping[str, Any], header: Mapping[str, Any],
                documents: Sequence[SplitInfo], substitutions: SplitInfo,
                lock: tuple[Path, dict[str, Any]] | None) -> str:
    """The dataset card: YAML header, then the body the module docstring lists."""
    split = env.split
    seeds = stats.get("seeds")
    copies = ("one renamed twin per document under its source title (`seed` 1), for EVRT training"
              if (env.manifest.get("parameters") or {}).get("twins") else "the renamed copies (titles `<title>-k`, `seed` k)")
    audit = stats["audit"]["total"]
    seen = stats.get("names_seen") or {}
    kept = stats.get("kept_reasons") or {}
    links = stats.get("links") or {}
    prov = stats.get("provenance") or describe_provenance({"kind": "unknown"})
    kb = prov.get("kind") == "corpus_kb"
    drawn = ("another entity of the same type found in the corpus" if kb else
             "another Wikidata item of the same type" if prov.get("kind") == "wikidata_dump" else
             "another item of the same type from the index")
    body = [
        f"# {header['pretty_name']}",
        "",
        f"Renamed copies of the documents of `{docs.name}` for testing how document-level relation extraction "
        "(DocRE) models cope with entity names they have not seen (Meng et al., Findings of ACL 2024): every "
        f"entity of every document takes the names of {drawn} (NUM and TIME "
        f"entities a new value in their written format), {seeds} times per document, while the sentences' other "
        f"words, the labels and the evidence stay. `{split}` holds {copies}, "
        f"`{hf.ORIGINAL_SPLIT}` the source documents (`seed` {hf.ORIGINAL_SEED}), so that one "
        "`load_dataset` gives both sides of the robustness comparison. Made offline by "
        f"envbench from {prov['source']}; the same inputs give the same bytes.",
        "",
        "## Splits and configs",
        "",
        "| config | split | rows | what |",
        "| --- | --- | ---: | --- |",
        *[f"| default | {s.name} | {s.rows} | "
          f"{'source documents' if s.name == hf.ORIGINAL_SPLIT else 'renamed documents'} |" for s in documents],
        f"| {hf.SUBSTITUTIONS_CONFIG} | {substitutions.name} | {substitutions.rows} | one row per renamed document "
        "and entity: `old_names` and `new_names` pair a mention's original name with its new one |",
        "",
        "```python",
        "from datasets import load_dataset",
        f"docs = load_dataset(\"PATH\")  # this folder, or its Hub id; splits {', '.join(s.name for s in documents)}",
        f"subs = load_dataset(\"PATH\", \"{hf.SUBSTITUTIONS_CONFIG}\", split=\"{substitutions.name}\")",
        "```",
        "",
        "## Fields",
        "",
        "The features of Hugging Face's DocRED (`title`, `sents`, `vertexSet` with `name`, `sent_id`, `pos`, "
        "`type`, and `labels` with `head`, `tail`, `relation_id`, `relation_text`, `evidence`; `labels` is a "
        "dict of parallel lists, as on the Hub), plus `source_title` (the document a copy was renamed from) and "
        "`seed`. Differences from the Hub's DocRED: the splits are `original` and the Env split, not "
        "train/validation/test; the two extra columns; mention and label fields beyond DocRED's are not "
        "carried (see the limits). `envbench evaluate`, `train` and `predict` read this folder, or one of its "
        "Parquet files, wherever they take a DocRED JSON file.",
        "",
        "## How it was built",
        "",
        f"- names from: {prov['source']}; {prov['names']}.",
        *_built_lines(env, docs, lock),
        "",
        "## Substitution rates",
        "",
        f"From `stats.json` of the generate run: {stats['documents']} source documents, "
        f"{stats['output_documents']} renamed documents.",
        "",
        *_rate_table(stats),
        "",
        "- kept entities by reason: " + (", ".join(f"{k} {v}" for k, v in sorted(kept.items())) or "none") + ".",
        f"- type-constraint audit: {audit['held_after']} of {audit['held_before']} checks still hold "
        f"({audit['rejected']} candidates rejected and redrawn).",
        f"- links: {links.get('linked')} of {links.get('entities')} PER/ORG/LOC/MISC entities linked to "
        + ("an item of the knowledge base made from the corpus (every entity has one there)" if kb
           else "a Wikidata item" if prov.get("kind") == "wikidata_dump" else "an item of the index")
        + f" (coverage {links.get('coverage')}).",
        f"- names seen: {_share(seen.get('renamed', {}).get('in_source_share'))} of "
        f"{seen.get('renamed', {}).get('mentions')} renamed mentions carry a mention name of the source documents"
        + (f"; {_share(seen['renamed']['in_excluded_share'])} a name of {', '.join(seen['exclude_names_from'])}"
           if seen.get("exclude_names_from") else "") + ".",
        "",
        "## Known limits",
        "",
        *[f"- {limit}" for limit in KNOWN_LIMITS],
        "",
        "## Regenerate and verify",
        "",
        "`envbench verify` regenerates the benchmark from the same inputs in a temporary folder and compares it "
        "with the lock, naming the first differing document:",
        "",
        *_verify_command(env, docs, lock),
        "",
        "## License",
        "",
        *_licence_lines(header, prov),
        "",
        "## Citation",
        "",
        "```bibtex",
        CITATIONS.rstrip("\n"),
        "```",
    ]
    return "\n".join(["---", *to_yaml(header), "---", "", *body, ""])


# --------------------------------------------------------------------------- the step
@dataclass
class ExportResult:
    out: Path
    splits: dict[str, int] = field(default_factory=dict)  # split -> rows (documents, then substitutions)
    up_to_date: bool = False
    files: list[Path] = field(default_factory=list)

    def summary(self) -> str:
        if self.up_to_date:
            return f"{self.out} is up to date (same inputs and parameters); nothing to do. Pass --force to export again."
        parts = ", ".join(f"{name} {rows}" for name, rows in self.splits.items())
        return "\n".join([f"exported {parts} rows", *[f"wrote {p}" for p in self.files],
                          f"load it: datasets.load_dataset({str(self.out)!r})"])


def stats_provenance(env: EnvFolder) -> dict[str, Any]:
    """The provenance generate recorded in ENV_DIR's stats.json (``{"kind": "unknown"}`` for an older one)."""
    try:
        stats = json.loads(env.stats.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"kind": "unknown"}
    prov = stats.get("provenance") if isinstance(stats, dict) else None
    return {k: v for k, v in prov.items() if k not in ("source", "names", "licence")} if isinstance(prov, dict) \
        else {"kind": "unknown"}


def _split_info(name: str, table: Any, path: Path, rel: str) -> SplitInfo:
    return SplitInfo(name, table.num_rows, int(table.nbytes), rel, path.stat().st_size)


def export_hf(env_dir: str | Path, out: str | Path, *, docs: str | Path, lock: str | Path | None = None,
              license: str = "mit", name: str | None = None, force: bool = False,
              progress: bool = False) -> ExportResult:
    """Export a generate output folder as a Hugging Face dataset folder (see the module docstring).
    ``progress``: the stages on stderr (``etl.progress.Stages``, on a terminal only)."""
    with Stages("export", 4, enabled=progress) as stage:
        return _export_hf(env_dir, out, docs=docs, lock=lock, license=license, name=name, force=force, stage=stage)


def _export_hf(env_dir: str | Path, out: str | Path, *, docs: str | Path, lock: str | Path | None, license: str,
               name: str | None, force: bool, stage: Stages) -> ExportResult:
    import pyarrow.parquet as pq

    stage("check the inputs")
    env = read_env_folder(env_dir)
    if Path(out).resolve() == env.root.resolve():
        raise EnvbenchError(f"--out {out}: is ENV_DIR itself, whose manifest.json is generate's; export into "
                            f"another folder, such as {env.root}-hf")
    if Path(out).resolve().is_relative_to(env.root.resolve()):  # its files would sit among generate's outputs
        raise EnvbenchError(f"--out {out}: inside ENV_DIR {env.root}, which export reads; export into a folder "
                            f"outside it, such as {env.root}-hf")
    docs_path = Path(docs)
    check_source(env, docs_path)
    found_lock = find_lock(env, lock)
    split = env.split
    if split == hf.ORIGINAL_SPLIT:
        raise EnvbenchError(f"{env.documents}: its split name would be {hf.ORIGINAL_SPLIT!r}, which the source "
                            "documents take; rename the generate input")
    inputs = [env.documents, env.substitutions, env.stats, env.root / MANIFEST, docs_path,
              *([found_lock[0]] if found_lock else [])]
    if not re.fullmatch(r"[a-z0-9][a-z0-9.+-]{0,63}", license):
        # the Hub's license ids are lower-case words, digits, dots and dashes ("mit", "cc-by-4.0", "apache-2.0")
        raise EnvbenchError(f"--license {shorten(repr(license))}: not a Hub license id; give one such as mit, "
                            "cc-by-4.0 or apache-2.0")
    names_licence = describe_provenance(stats_provenance(env)).get("licence")
    licenses = [license] + ([names_licence] if names_licence and names_licence != license else [])
    if name is not None and (not name.strip() or not name.isprintable() or any(c in name for c in "<>`#")):
        # it heads the card's Markdown: a line break there had opened "## Injected <script>" in its body
        raise EnvbenchError(f"--name {shorten(repr(name))}: give one line of plain text (no line breaks, <, >, ` "
                            "or #), e.g. --name 'Env-Re-DocRED test'")
    pretty = name or f"Env benchmark of {docs_path.name}"
    parameters = {"format": "hf", "license": licenses, "name": pretty, "split": split}
    result = ExportResult(Path(out))
    with Step("export", root=out, outputs=[README, f"{hf.DATA_DIR}/", f"{hf.SUBSTITUTIONS_DIR}/"], inputs=inputs,
              parameters=parameters, force=force, own_folder=True) as step:
        if step.up_to_date:
            result.up_to_date = True
            return result
        stage("read the documents")
        skip = bool((env.manifest.get("parameters") or {}).get("skip_invalid"))
        originals = read_docs(docs_path, skip_invalid=skip).docs
        renamed = read_docs(env.documents, skip_flag=None).docs
        if not renamed or pq.ParquetFile(env.substitutions).metadata.num_rows == 0:
            # `datasets` cannot load a split of no rows ("BatchSize must be greater than 0")
            raise EnvbenchError(f"{env.root}: {'no renamed documents' if not renamed else 'no substitution rows'}, "
                                "so the dataset could not be loaded; generate from documents that have entities")
        origin = _origins(env.substitutions, renamed, {d["title"] for d in originals}, env.documents)
        stage("write the splits")
        data_dir, subs_dir = step.path(f"{hf.DATA_DIR}/"), step.path(f"{hf.SUBSTITUTIONS_DIR}/")
        data_dir.mkdir()
        subs_dir.mkdir()
        infos = []
        for split_name, rows in ((hf.ORIGINAL_SPLIT, [hf.to_row(d, source_title=d["title"], seed=hf.ORIGINAL_SEED)
                                                      for d in originals]),
                                 (split, [hf.to_row(d, source_title=origin[d["title"]][0], seed=origin[d["title"]][1])
                                          for d in renamed])):
            path = data_dir / hf.shard_name(split_name)
            table = hf.write_split(rows, path)
            infos.append(_split_info(split_name, table, path, f"{hf.DATA_DIR}/{path.name}"))
        subs_path = subs_dir / hf.shard_name(split)
        shutil.copyfile(env.substitutions, subs_path)
        subs_table = pq.read_table(subs_path)
        subs_info = _split_info(split, subs_table, subs_path, f"{hf.SUBSTITUTIONS_DIR}/{subs_path.name}")
        stage("write the card")
        stats = json.loads(env.stats.read_text(encoding="utf-8"))
        header = card_header(pretty_name=pretty, licenses=licenses, documents=infos, substitutions=subs_info,
                             substitution_schema=subs_table.schema)
        card = render_card(env=env, docs=docs_path, stats=stats, header=header, documents=infos,
                           substitutions=subs_info, lock=found_lock)
        step.path(README).write_text(card, encoding="utf-8")
        step.info = {"rows": {i.name: i.rows for i in infos} | {hf.SUBSTITUTIONS_CONFIG: subs_info.rows}}
    result.splits = {i.name: i.rows for i in infos} | {hf.SUBSTITUTIONS_CONFIG: subs_info.rows}
    result.files = [Path(out) / README, *(Path(out) / i.file for i in infos), Path(out) / subs_info.file]
    return result


def _origins(substitutions: Path, renamed: Sequence[Mapping[str, Any]], source_titles: set[str],
             documents: Path) -> dict[str, tuple[str, int]]:
    """``{renamed title: (source title, seed)}`` from substitutions.parquet's rows; a document without
    entities (no rows) by its title: ``<source>-k``, or a twin's own title (seed 1)."""
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(substitutions, columns=["title", "source_title", "seed"])
    except Exception as exc:  # a damaged or foreign file
        raise DataError(f"{substitutions}: not a readable substitutions.parquet ({exc}); regenerate with "
                        "`envbench generate --force`") from None
    origin = {t: (s, int(k)) for t, s, k in zip(*(table.column(c).to_pylist() for c in ("title", "source_title", "seed")))}
    for doc in renamed:
        title = doc["title"]
        if title in origin:
            continue
        base, _, k = title.rpartition("-")
        if k.isdigit() and base in source_titles:
            origin[title] = (base, int(k))
        elif title in source_titles:
            origin[title] = (title, 1)
        else:
            raise DataError(f"{documents}: document {title!r} has no row in {substitutions.name} and is no copy of a "
                            "source document; regenerate with `envbench generate --force`")
    return origin


__all__ = ["ExportResult", "FORMATS", "export_hf", "read_env_folder", "render_card", "to_yaml"]
