"""The offline recipe of docs/pipeline.md, run as written on the real Re-DocRED files: it builds the
benchmark `make lock` pins, and no renamed mention carries a name of the training split unless the
opt-out is given, and then the outputs record it."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from envbench.rename.novelty import excluded_names, keys_of, seen
from tests.conftest import shared_path
from tests.envbench.cli.invoke import run

REPO = Path(__file__).resolve().parents[3]


def offline_recipe() -> list[list[str]]:
    """The commands of the bash block after "**Without a Wikidata dump**" in docs/pipeline.md, each split."""
    text = (REPO / "docs" / "pipeline.md").read_text(encoding="utf-8")
    block = text.split("**Without a Wikidata dump**", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    return [shlex.split(line) for line in block.replace("\\\n", " ").splitlines() if line.strip()]


def make_lock_generate() -> list[str]:
    """The `generate` of the Makefile's lock target, split, with the Makefile's variables left as they are."""
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    block = text.split("\nlock: lock-inputs\n", 1)[1].split("\n\n", 1)[0].replace("\\\n", " ")
    line = next(x for x in block.splitlines() if " generate " in x)
    return shlex.split(line.split(">")[0])


def _options(args: list[str]) -> dict[str, list[str]]:
    """option -> its values, in order (a flag has none); the command's positional arguments under ''."""
    out: dict[str, list[str]] = {}
    key = ""
    for a in args:
        if a.startswith("--"):
            key = a
            out.setdefault(key, [])
        else:
            out.setdefault(key, []).append(a)
            key = ""
    return out


def test_the_docs_recipe_is_what_make_lock_runs() -> None:
    recipe = offline_recipe()
    assert [c[:2] for c in recipe] == [["envbench", "kb-from-corpus"], ["envbench", "ingest-dump"],
                                       ["envbench", "generate"]]
    doc, made = _options(recipe[2][2:]), _options(make_lock_generate()[2:])
    names = {k: [Path(v).name for v in vs] for k, vs in doc.items()}
    lock = {k: [Path(v).name for v in vs] for k, vs in made.items() if k not in ("--force", "--no-progress")}
    # the same documents, links, excluded files and seeds; the folders are each one's own
    assert {k: v for k, v in names.items() if k not in ("--index", "--out")} == \
        {k: v for k, v in lock.items() if k not in ("--index", "--out")}
    assert names["--exclude-names-from"] == ["dev_revised.json"]


def _as_here(args: list[str], data: Path, shared: Path) -> list[str]:
    return [re.sub(r"^\.\./shared/data/", f"{shared}/", re.sub(r"^data/", f"{data}/", a)) for a in args]


@pytest.mark.slow
def test_the_docs_offline_recipe_as_written_keeps_training_names_out(tmp_path: Path) -> None:
    dev = shared_path("re-docred", "dev_revised.json")
    shared = dev.parents[1]
    data = tmp_path / "data"
    for command in offline_recipe():
        code, out = run(*_as_here(command, data, shared)[1:], "--no-progress")
        assert code == 0, (command, out)
    env = data / "env-redocred-offline"
    training = excluded_names([dev])
    docs = json.loads((env / "test_revised_env.json").read_text())
    subs = {(r["title"], r["entity"]) for r in _rows(env) if r["kind"] == "linked"}
    renamed = [keys_of(d, m) for d in docs for ei, e in enumerate(d["vertexSet"]) if (d["title"], ei) in subs
               for m in e]
    assert len(renamed) > 30_000 and not [k for k in renamed if seen(k, training)]
    stats = json.loads((env / "stats.json").read_text())["names_seen"]
    assert (stats["training_names"], stats["renamed"]["in_excluded"]) == ("excluded", 0)
    assert stats["source"]["in_excluded_share"] > 0.2  # the originals do carry dev names: the check could fail

    # without the training documents the same command is refused; the opt-out builds it and says so
    generate = [a for a in _as_here(offline_recipe()[2], data, shared)[1:]]
    at = generate.index("--exclude-names-from")
    plain = generate[:at] + generate[at + 2:]
    plain[plain.index("--seeds") + 1] = "1"
    code, out = run(*plain[:-1], str(data / "plain"), "--no-progress")
    assert code == 1 and out.startswith("Error: --pool eval builds a benchmark of names novel to the models"), out
    code, out = run(*plain[:-1], str(data / "allowed"), "--allow-training-names", "--no-progress")
    assert code == 0 and "warning: --allow-training-names: no new name was kept off" in out, out
    allowed = json.loads((data / "allowed" / "stats.json").read_text())["names_seen"]
    assert allowed["training_names"] == "allowed" and allowed["exclude_names_from"] == []
    assert json.loads((data / "allowed" / "manifest.json").read_text())["parameters"]["allow_training_names"] is True


def _rows(env: Path) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(env / "substitutions.parquet", columns=["title", "entity", "kind"]).to_pylist()
