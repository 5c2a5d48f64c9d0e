"""The main job end to end on the built-in sample world, offline (``make demo``).

    envbench demo --out runs/demo

1. make-sample: a small synthetic Wikidata dump plus DocRED-format documents and gold links;
2. ingest-dump: the dump -> Parquet index tables;
3. generate --seeds 5 on the sample test split;

then a summary (time per step; entity slots, that is entities x seeds, renamed per type; why the others
kept their names), three original sentences beside their renamed copies, where the files are, and the
`envbench explore` command that shows every document.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import click

from envbench.cli._options import progress_option
from envbench.core.types import COARSE_TYPES
from etl.io import read_json, require_path

DEMO_PAIRS = 3  # original/renamed sentence pairs the demo ends with
PAIR_CHARS = 150  # a longer sentence is cut there (with "...")
_NO_SPACE_BEFORE = re.compile(r" ([,.;:!?%)\]}]|'s\b|n't\b)")
_NO_SPACE_AFTER = re.compile(r"([(\[{$]) ")


def sentence_text(tokens: list[str]) -> str:
    """A tokenised sentence as text to read: no space before a comma or after an opening bracket."""
    text = _NO_SPACE_AFTER.sub(r"\1", _NO_SPACE_BEFORE.sub(r"\1", " ".join(tokens)))
    return text if len(text) <= PAIR_CHARS else text[: PAIR_CHARS - 3].rstrip() + "..."


def sentence_pairs(originals: list[dict], renamed: list[dict], n: int = DEMO_PAIRS) -> list[tuple[str, str, str]]:
    """``(title, original sentence, renamed sentence)`` for the first ``n`` source documents, in file order,
    each from its first renamed copy: the sentence of that copy where most PER/ORG/LOC/MISC mentions took a
    new name (the first of the best), so a pair shows names, not only numbers and dates, changing."""
    copies = {d["title"]: d for d in renamed}
    out: list[tuple[str, str, str]] = []
    for src in originals:
        twin = copies.get(f"{src['title']}-1")
        if twin is None:
            continue
        changed: dict[int, int] = {}
        for e_src, e_new in zip(src["vertexSet"], twin["vertexSet"]):
            if e_src[0]["type"] in ("NUM", "TIME"):
                continue
            for m_src, m_new in zip(e_src, e_new):
                if m_src["name"] != m_new["name"]:
                    changed[m_src["sent_id"]] = changed.get(m_src["sent_id"], 0) + 1
        if not changed:
            continue
        best = min(changed, key=lambda k: (-changed[k], k))
        out.append((src["title"], sentence_text(src["sents"][best]), sentence_text(twin["sents"][best])))
        if len(out) == n:
            break
    return out


def run_demo(out: str | Path, *, seeds: int = 5, force: bool = False, progress: bool = True) -> str:
    """Run the three steps under ``out`` and return the printed summary."""
    from envbench.core.checks import check_seeds
    from envbench.core.reasons import KeptReason
    from envbench.core.text import name_tokenizer
    from envbench.rename.generate import generate
    from envbench.worlds.sample import make_sample
    from etl.step import check_writable
    from wikidata_index.ingest import ingest_dump

    # checked before the first step, so a bad option never leaves a half-built demo behind
    check_seeds(seeds)
    require_path(out, "--out", "the demo folder", "--out runs/demo")
    check_writable(out, "--out", folder=True)
    out = Path(out)
    timings: list[tuple[str, float]] = []
    t = time.perf_counter()
    sample = make_sample(out / "sample")
    timings.append(("make-sample", time.perf_counter() - t))
    t = time.perf_counter()
    ingest_dump(sample.dump, out / "index", force=force, progress=progress, tokenizer=name_tokenizer())
    timings.append(("ingest-dump", time.perf_counter() - t))
    t = time.perf_counter()
    docs = out / "sample" / "docs"
    # a model of the sample world trains on train.json and stops early on dev.json: the new names avoid both
    result = generate(docs / "test.json", out / "index", out / "env", links=sample.links, seeds=seeds, force=force,
                      progress=progress, exclude_names_from=[docs / "train.json", docs / "dev.json"])
    timings.append(("generate", time.perf_counter() - t))
    stats = result.stats or read_json(out / "env" / "stats.json", what="stats file")  # empty when up to date
    env_file = out / "env" / "test_env.json"

    lines = ["", "envbench demo: Env benchmark of the sample world's test split", ""]
    lines.append(f"{'step':<14}{'seconds':>9}")
    lines += [f"{name:<14}{sec:>9.2f}" for name, sec in timings]
    lines.append("")
    k = stats["seeds"]
    lines.append(f"documents: {stats['documents']} source x {k} seeds = {stats['output_documents']} renamed documents")
    lines.append(f"counts are entity slots: an entity counts once per seed ({k} slots); renamed: given a new name")
    lines.append(f"{'type':<7}{'renamed':>9}{'slots':>8}{'rate':>8}")
    for ty in (*COARSE_TYPES, "total"):
        c = stats["renamed"][ty]
        lines.append(f"{ty:<7}{c['renamed']:>9}{c['entities']:>8}{stats['substitution_rate'][ty]:>8.3f}")
    if stats["kept_reasons"]:
        lines.append("kept their names (slots, why):")
        for reason, n in stats["kept_reasons"].items():
            lines.append(f"  {reason:<15}{n:>5}  {KeptReason(reason).short}")
    audit = stats["audit"]["total"]
    lines.append(f"audit: {audit['held_after']} of {audit['held_before']} type-constraint checks still hold")
    seen = stats["names_seen"]
    lines.append(f"new names seen in train.json or dev.json: {seen['renamed']['in_excluded']} of "
                 f"{seen['renamed']['mentions']} renamed mentions (kept off them by --exclude-names-from)")
    if result.up_to_date:
        lines.append("(generate: outputs were up to date; nothing regenerated)")
    originals = read_json(docs / "test.json", what="documents")
    pairs = sentence_pairs(originals, read_json(env_file, what="Env documents"))
    if pairs:
        lines += ["", f"{len(pairs)} sentences and their first renamed copy (seed 1):"]
        for title, before, after in pairs:
            lines += [f"  [{title}]", f"    original: {before}", f"    renamed:  {after}"]
    lines.append("")
    lines.append(f"sample world: {out / 'sample'}")
    lines.append(f"index:        {out / 'index'}")
    lines.append(f"benchmark:    {env_file}")
    lines.append(f"details:      {out / 'env' / 'substitutions.parquet'}, {out / 'env' / 'stats.json'}")
    lines.append("")
    lines.append("every document beside its renamed copies, each substitution and kept reason:")
    lines.append(f"  {explore_command(out)}")
    lines.append(f"  then open {out / 'explore' / 'index.html'} in a browser")
    return "\n".join(lines)


def explore_command(out: Path) -> str:
    """The `envbench explore` command that shows the demo's benchmark (pinned by the demo's test)."""
    return (f"envbench explore --env-gold {out / 'env' / 'test_env.json'} --original-gold "
            f"{out / 'sample' / 'docs' / 'test.json'} --index {out / 'index'} --out {out / 'explore'}")


@click.command("demo")
@click.option("--out", default="runs/demo", show_default=True,
              help="Directory for the sample world, its index and the benchmark.")
@click.option("--seeds", type=int, default=5, show_default=True, help="Renamed copies per document.")
@click.option("--force", is_flag=True, help="Redo every step, even those whose outputs are up to date.")
@progress_option
def demo(out: str, seeds: int, force: bool, progress: bool) -> None:
    """Run the main job end to end on the built-in sample world, offline, in a few seconds.

    make-sample writes a small synthetic Wikidata dump with DocRED-format documents and gold links;
    ingest-dump turns the dump into index tables; generate --seeds 5 renames the test split, its new
    names kept off the train and dev splits (--exclude-names-from). The summary shows the time per
    step, the entity slots (entities x seeds) renamed per type, why the others kept their names,
    three sentences beside their renamed copies, and the `envbench explore` command for the rest.

    \b
    Example:
      envbench demo --out runs/demo
    """
    click.echo(run_demo(out, seeds=seeds, force=force, progress=progress))
