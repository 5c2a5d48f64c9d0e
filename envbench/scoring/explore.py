"""``envbench explore``: a static, browsable site of original and renamed documents.

The site answers three questions before anyone trusts an Env benchmark: does the renamed text read
right, which entities kept their names and why, and which facts a model got right on the original
but lost on a renamed twin. It is plain HTML, CSS and JavaScript (no library, no CDN, no server):
``index.html`` opened from disk works in a current browser.

Layout of ``OUT``::

    index.html, app.js, style.css      the page (copied from envbench/data/explore/)
    data/index.js                      the document list and the summary (small; loaded at once)
    data/docs/<nnnn>.js                one source document with all its twins (loaded on demand)
    plots/*.png                        the plots of an `envbench report` folder, when given
    manifest.json                      inputs, parameters and output hashes (etl.step)

Data files are JavaScript that assigns JSON (``window.ENVBENCH_DATA = ...``) rather than ``.json``:
browsers refuse ``fetch`` of ``file://`` URLs, but load ``<script src>`` from disk.

What each document's predictions are split into, per twin k (entity indices are the same in a
source document and its twins, so a fact is the same ``(h, t, r)`` on both sides):

- **lost**: correct on the original, wrong (missed) on twin k;
- **gained**: correct on twin k only;
- **both**: correct on both;
- **false positives**: predicted but not gold, on the original and on twin k.

F1 per document is the plain triple F1 of that document (no Ign variant; the official scorer's
corpus-level numbers come from ``envbench evaluate``). A document "has consistency failures" when a
twin loses or gains a fact. The consistency rate of a relation is, over the facts of that relation
predicted correctly on the original, the share still predicted correctly on a twin (pooled over
twins).
"""

from __future__ import annotations

import os
import shutil
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from envbench.core.errors import DataError
from envbench.core.reasons import KeptReason
from envbench.core.relations import RELATIONS
from envbench.core.types import COARSE_TYPES
from envbench.formats.docred import Doc, entity_type, read_docs
from envbench.formats.predictions import Fact, check_predictions, load_predictions
from envbench.scoring.evaluate import split_seed
from etl.io import dumps_json
from etl.progress import Stages
from etl.step import Step

ASSETS = ("index.html", "app.js", "style.css")
Triple = tuple[int, int, str]


@dataclass
class ExploreResult:
    out: Path
    documents: int
    twins: int
    seeds: list[int]
    bytes: int
    unknown_prediction_titles: dict[str, int] = field(default_factory=dict)
    plots: int = 0
    up_to_date: bool = False

    def summary(self) -> str:
        if self.up_to_date:
            return f"{self.out} is up to date (same inputs and parameters); nothing to do. Pass --force to rebuild."
        lines = [f"{self.documents} source documents, {self.twins} renamed twins (seeds "
                 f"{', '.join(map(str, self.seeds))}); site {self.bytes / 1e6:.1f} MB"]
        for which, n in sorted(self.unknown_prediction_titles.items()):
            if n:
                what = "prediction names a title" if n == 1 else "predictions name titles"
                lines.append(f"warning: {n} {what} not in the gold file of {which}; ignored")
        if self.plots:
            lines.append(f"{self.plots} report plot{'s' if self.plots != 1 else ''} copied")
        lines.append(f"open {self.out / 'index.html'} in a browser")
        return "\n".join(lines)


def _read_predictions(path: str | os.PathLike[str], option: str, gold: Sequence[Doc]) -> list[Fact]:
    """Unique facts of an official-format prediction file, checked against the gold entity counts."""
    counts = {d["title"]: len(d["vertexSet"]) for d in gold}
    return check_predictions(load_predictions(path), counts, source=f"{option} {path}").facts


def _by_title(facts: Iterable[Fact], titles: set[str]) -> tuple[dict[str, set[Triple]], int]:
    out: dict[str, set[Triple]] = {}
    unknown = 0
    for title, h, t, r in facts:
        if title not in titles:
            unknown += 1
            continue
        out.setdefault(title, set()).add((h, t, r))
    return out, unknown


def _gold(doc: Doc) -> set[Triple]:
    return {(int(lab["h"]), int(lab["t"]), str(lab["r"])) for lab in doc.get("labels", []) or []}


def _f1(gold: set[Triple], pred: set[Triple]) -> float | None:
    """Triple F1 of one document; None when it has neither gold nor predicted facts."""
    if not gold and not pred:
        return None
    return round(2 * len(gold & pred) / (len(gold) + len(pred)), 4)


def _doc_view(doc: Doc) -> dict[str, Any]:
    """What the page draws: tokens per sentence, and each entity's mentions and names."""
    return {
        "title": doc["title"],
        "sents": doc["sents"],
        "entities": [{"type": entity_type(e),
                      "mentions": [[m["sent_id"], m["pos"][0], m["pos"][1]] for m in e],
                      "name": e[0]["name"]} for e in doc["vertexSet"]],
    }


def _read_substitution_table(path: Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    try:
        return pq.read_table(path).to_pylist()
    except Exception as exc:  # a bad or foreign file
        raise DataError(f"--substitutions {path}: not a readable substitutions.parquet ({exc}); regenerate it "
                        "with `envbench generate`") from None


def _facts(triples: Iterable[Triple]) -> list[list[Any]]:
    return [[h, t, r] for h, t, r in sorted(triples)]


def build_site(
    env_gold: str | os.PathLike[str],
    original_gold: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    substitutions: str | os.PathLike[str] | None = None,
    original_pred: str | os.PathLike[str] | None = None,
    env_pred: str | os.PathLike[str] | None = None,
    report: str | os.PathLike[str] | None = None,
    index: str | os.PathLike[str] | None = None,
    force: bool = False,
    progress: bool = False,
) -> ExploreResult:
    """Write the site for one Env benchmark; see the module docstring for what it shows.

    ``index``: the index the benchmark was generated with; QIDs and fine types are then shown with
    their labels ("human (Q5)") instead of bare QIDs. ``progress``: the stages on stderr
    (``etl.progress.Stages``, on a terminal only)."""
    with Stages("explore", 4, enabled=progress) as stage:
        return _build_site(Path(env_gold), Path(original_gold), Path(out), substitutions=substitutions,
                           original_pred=original_pred, env_pred=env_pred, report=report, index=index, force=force,
                           stage=stage)


def _build_site(env_gold: Path, original_gold: Path, out: Path, *, substitutions: str | os.PathLike[str] | None,
                original_pred: str | os.PathLike[str] | None, env_pred: str | os.PathLike[str] | None,
                report: str | os.PathLike[str] | None, index: str | os.PathLike[str] | None, force: bool,
                stage: Stages) -> ExploreResult:
    stage("read the documents")
    if substitutions is None and (env_gold.parent / "substitutions.parquet").is_file():
        substitutions = env_gold.parent / "substitutions.parquet"
    originals = read_docs(original_gold, skip_flag=None).docs  # explore has no --skip-invalid to name
    twins = read_docs(env_gold, skip_flag=None).docs
    if not originals:
        raise DataError(f"--original-gold {original_gold}: holds no documents; pass the source file of the benchmark")
    if not twins:
        raise DataError(f"--env-gold {env_gold}: holds no documents; pass the <stem>_env.json of `envbench generate`")
    by_title = {d["title"]: d for d in originals}
    groups: dict[str, dict[int, Doc]] = {}
    orphans: list[str] = []
    for d in twins:
        parts = split_seed(d["title"])
        if parts is None or parts[0] not in by_title:
            orphans.append(d["title"])
            continue
        groups.setdefault(parts[0], {})[parts[1]] = d
    if orphans:
        what = "title matches" if len(orphans) == 1 else "titles match"
        raise DataError(f"--env-gold {env_gold}: {len(orphans)} {what} no "
                        f"document of {original_gold} (first: {orphans[0]!r}); pass the original gold file the "
                        "benchmark was generated from")
    seeds = sorted({k for g in groups.values() for k in g})
    for title, g in groups.items():
        src = by_title[title]
        for twin in g.values():
            if len(twin["vertexSet"]) != len(src["vertexSet"]):
                raise DataError(f"--env-gold {env_gold}: {twin['title']!r} has {len(twin['vertexSet'])} entities but "
                                f"{title!r} has {len(src['vertexSet'])}; a twin keeps its source's entities, so these "
                                "files do not belong together")

    stage("read the predictions and substitutions")
    unknown: dict[str, int] = {}
    orig_pred: dict[str, set[Triple]] | None = None
    twin_pred: dict[str, set[Triple]] | None = None
    if original_pred is not None:
        orig_pred, unknown["--original-pred"] = _by_title(
            _read_predictions(original_pred, "--original-pred", originals), set(by_title))
    if env_pred is not None:
        twin_pred, unknown["--env-pred"] = _by_title(
            _read_predictions(env_pred, "--env-pred", twins), {d["title"] for d in twins})
    subs: dict[str, dict[int, dict[str, Any]]] = {}
    if substitutions is not None:
        for row in _read_substitution_table(Path(substitutions)):
            subs.setdefault(row["title"], {})[int(row["entity"])] = row

    ordered = [d for d in originals if d["title"] in groups]
    plots = report_plots(Path(report)) if report is not None else []
    outputs = [*ASSETS, "data/", *(["plots/"] if plots else [])]
    inputs = [p for p in (env_gold, original_gold, substitutions, original_pred, env_pred) if p is not None]
    if index is not None:
        from wikidata_index.index import MANIFEST, read_index_manifest

        read_index_manifest(index)  # not an index: says so and how to make one, before anything is hashed
        inputs.append(Path(index) / MANIFEST)  # the index's content, by its manifest
    params = {"seeds": seeds, "report_plots": [p.name for p in plots]}
    stage("check the inputs")
    with Step("explore", root=out, outputs=outputs, inputs=[*inputs, *plots], parameters=params,
              force=force) as step:
        if step.up_to_date:
            return ExploreResult(out, len(ordered), len(twins), seeds, 0, up_to_date=True)
        stage("write the pages")
        labels = _labels(index, subs) if index is not None else {}
        data_dir = step.path("data/")
        (data_dir / "docs").mkdir(parents=True)
        rows, summary = _write_documents(data_dir / "docs", ordered, groups, seeds, subs, orig_pred, twin_pred,
                                         labels)
        summary["has_predictions"] = orig_pred is not None and twin_pred is not None
        summary["unknown_prediction_titles"] = unknown
        summary["plots"] = [p.name for p in plots]
        summary["sources"] = {"env_gold": env_gold.name, "original_gold": original_gold.name}
        (data_dir / "index.js").write_bytes(_as_script("index", {"documents": rows, "summary": summary}))
        if plots:
            plot_dir = step.path("plots/")
            plot_dir.mkdir()
            for p in plots:
                shutil.copyfile(p, plot_dir / p.name)
        assets = resources.files("envbench") / "data" / "explore"
        for name in ASSETS:
            step.path(name).write_bytes((assets / name).read_bytes())
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    return ExploreResult(out, len(ordered), len(twins), seeds, size, unknown, len(plots))


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def report_plots(report: Path) -> list[Path]:
    """The PNG plots of an ``envbench report`` folder, sorted. The site is made to be published, so a "*.png" that
    is a symbolic link (``plots/evil.png`` -> ``/etc/shadow`` would be copied into it) or not a PNG image is
    refused, not copied: ``report`` writes plain PNG files only."""
    plots = sorted(report.glob("*.png"))
    for p in plots:
        if p.is_symlink() or not p.is_file():
            raise DataError(f"--report {report}: {p.name} is a symbolic link or not a file; explore copies only the "
                            "plots `envbench report` wrote: remove it, or pass a report folder")
        with open(p, "rb") as fh:
            if fh.read(len(PNG_SIGNATURE)) != PNG_SIGNATURE:
                raise DataError(f"--report {report}: {p.name} is not a PNG image; explore copies only the plots "
                                "`envbench report` wrote: remove it, or pass a report folder")
    return plots


def _labels(index: str | os.PathLike[str], subs: Mapping[str, Mapping[int, Mapping[str, Any]]]) -> dict[str, str]:
    """The index's labels of every QID and fine type in the substitution rows."""
    from wikidata_index.index import WikidataIndex

    qids = {str(row[k]) for rows in subs.values() for row in rows.values()
            for k in ("qid", "new_qid", "fine_type") if row.get(k)}
    qids |= {str(c) for rows in subs.values() for row in rows.values()
             for k in ("drawn_by", "catch_all") for c in row.get(k) or ()}
    with WikidataIndex(index) as ix:
        return ix.labels_of(qids)


def _as_script(key: str, obj: Any) -> bytes:
    # "</" never appears raw, so a name in the data can never close a <script> element
    body = dumps_json(obj).rstrip(b"\n").replace(b"</", b"<\\/")
    return b"window.ENVBENCH_DATA = window.ENVBENCH_DATA || {};\nwindow.ENVBENCH_DATA[" + \
        dumps_json(key).rstrip(b"\n") + b"] = " + body + b";\n"


KEPT_VALUES = frozenset(r.value for r in KeptReason)


def _add(total: list[int], correct: set[Triple], pred: set[Triple], gold: set[Triple]) -> None:
    total[0] += len(correct)
    total[1] += len(pred)
    total[2] += len(gold)


def _micro(c: list[int]) -> dict[str, Any]:
    p = c[0] / c[1] if c[1] else 0.0
    r = c[0] / c[2] if c[2] else 0.0
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(2 * p * r / (p + r), 4) if p + r else 0.0,
            "correct": c[0], "predicted": c[1], "gold": c[2]}


def _f1_table(totals: Mapping[str, list[int]], seeds: Sequence[int]) -> dict[str, Any]:
    """The summary page's original-against-Env table: micro P/R/F1 of the originals, of each seed's twins, their
    mean, and the drop (the original's F1 minus the seeds' mean). The facts counted are the gold labels of the
    documents shown; `envbench evaluate` gives the official scorer's figures (Ign F1, evidence, ...)."""
    rows = {"original": _micro(totals["original"]), **{f"seed {k}": _micro(totals[str(k)]) for k in seeds}}
    per_seed = [rows[f"seed {k}"]["f1"] for k in seeds]
    mean = round(sum(per_seed) / len(per_seed), 4) if per_seed else None
    return {"rows": rows, "env_mean_f1": mean,
            "drop": round(rows["original"]["f1"] - mean, 4) if mean is not None else None}


def doc_file_name(number: int) -> str:
    return f"{number:04d}.js"


def _write_documents(
    folder: Path,
    ordered: Sequence[Doc],
    groups: Mapping[str, Mapping[int, Doc]],
    seeds: Sequence[int],
    subs: Mapping[str, Mapping[int, Mapping[str, Any]]],
    orig_pred: Mapping[str, set[Triple]] | None,
    twin_pred: Mapping[str, set[Triple]] | None,
    labels: Mapping[str, str],
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    renamed_by_type: dict[str, Counter[str]] = {t: Counter() for t in (*COARSE_TYPES, "total")}
    reasons: Counter[str] = Counter()
    genders: Counter[str] = Counter()  # PER rows by gender source, and substitutions matched on gender
    kept_rel: Counter[str] = Counter()
    held_rel: Counter[str] = Counter()
    fine_types: Counter[str] = Counter()
    with_predictions = orig_pred is not None and twin_pred is not None
    # micro-averaged F1 of the whole file: [correct, predicted, gold] on the originals and per seed on the twins
    totals: dict[str, list[int]] = {"original": [0, 0, 0], **{str(k): [0, 0, 0] for k in seeds}}
    # numbered from 0, as every envbench message numbers documents ("document 0 'Anna'")
    for number, src in enumerate(ordered):
        title = src["title"]
        gold = _gold(src)
        record: dict[str, Any] = {"original": _doc_view(src), "twins": {}}
        doc_types: set[str] = {entity_type(e) for e in src["vertexSet"]}
        doc_fine: set[str] = set()
        doc_reasons: set[str] = set()
        renamed = kept = 0
        f1_twins: list[float] = []
        failures = False
        f1_orig = None
        correct_orig: set[Triple] = set()
        if with_predictions:
            p0 = orig_pred.get(title, set())  # type: ignore[union-attr]
            correct_orig = gold & p0
            f1_orig = _f1(gold, p0)
            _add(totals["original"], correct_orig, p0, gold)
            record["original_fp"] = _facts(p0 - gold)
        for k in seeds:
            twin = groups[title].get(k)
            if twin is None:
                continue
            entry: dict[str, Any] = {"doc": _doc_view(twin), "substitutions": []}
            for ei in range(len(src["vertexSet"])):
                row = subs.get(twin["title"], {}).get(ei)
                if row is None:
                    continue
                entry["substitutions"].append({
                    "entity": ei, "kind": row.get("kind"), "reason": row.get("reason"), "qid": row.get("qid"),
                    "new_qid": row.get("new_qid"), "fine_type": row.get("fine_type"),
                    "old_names": row.get("old_names") or [], "new_names": row.get("new_names") or [],
                    # why it is what it is (a file from before these columns has none)
                    "drawn_by": row.get("drawn_by") or [], "catch_all": row.get("catch_all") or [],
                    "head_noun": row.get("head_noun"), "adjectival": row.get("adjectival") or [],
                    "written": row.get("written") or [],
                    # a person's gender, where it came from, and the new item's (``rename.gender``)
                    "gender": row.get("gender"), "gender_from": row.get("gender_from"),
                    "new_gender": row.get("new_gender"),
                    "labels": {q: labels[q] for k in ("qid", "new_qid", "fine_type")
                               if (q := row.get(k)) and q in labels},
                    "class_labels": {q: labels[q] for k in ("drawn_by", "catch_all") for q in row.get(k) or ()
                                     if q in labels}})
                ty = row.get("coarse_type") or "MISC"
                ty = ty if ty in renamed_by_type else "MISC"
                is_renamed = row.get("kind") != "kept"
                for key in (ty, "total"):
                    renamed_by_type[key]["entities"] += 1
                    renamed_by_type[key]["renamed"] += is_renamed
                if ty == "PER" and (is_renamed or row.get("gender_from")):
                    genders[f"from_{row.get('gender_from') or 'unknown'}"] += 1
                    genders["matched"] += bool(is_renamed and row.get("gender")
                                               and row.get("new_gender") == row.get("gender"))
                if is_renamed:
                    renamed += 1
                else:
                    kept += 1
                    reasons[str(row.get("reason") or "unspecified")] += 1
                    doc_reasons.add(str(row.get("reason") or "unspecified"))
                if row.get("fine_type"):
                    doc_fine.add(str(row["fine_type"]))
            if with_predictions:
                pk = twin_pred.get(twin["title"], set())  # type: ignore[union-attr]
                gold_k = _gold(twin)
                correct_k = gold_k & pk
                f1 = _f1(gold_k, pk)
                _add(totals[str(k)], correct_k, pk, gold_k)
                if f1 is not None:
                    f1_twins.append(f1)
                lost = correct_orig - correct_k
                gained = correct_k - correct_orig
                failures |= bool(lost or gained)
                entry["facts"] = {"lost": _facts(lost), "gained": _facts(gained),
                                  "both": _facts(correct_orig & correct_k), "false_positives": _facts(pk - gold_k)}
                entry["f1"] = f1
                for _, _, r in correct_orig:
                    kept_rel[r] += 1
                for _, _, r in correct_orig & correct_k:
                    held_rel[r] += 1
            record["twins"][str(k)] = entry
        fine_types.update(doc_fine)
        record["f1_original"] = f1_orig
        (folder / doc_file_name(number)).write_bytes(_as_script(f"doc:{number}", record))
        rows.append({
            "n": number, "title": title, "entities": len(src["vertexSet"]), "twins": len(record["twins"]),
            "renamed": renamed, "kept": kept, "types": sorted(doc_types), "fine_types": sorted(doc_fine),
            "reasons": sorted(doc_reasons), "f1_original": f1_orig,
            "f1_twins": round(sum(f1_twins) / len(f1_twins), 4) if f1_twins else None,
            # how much F1 the renaming cost this document (original minus the twins' mean), for sorting
            "f1_drop": round(f1_orig - sum(f1_twins) / len(f1_twins), 4) if f1_twins and f1_orig is not None else None,
            "consistency_failures": failures if with_predictions else None,
        })
    summary = {
        "seeds": list(seeds),
        "substitution_rate": {t: {"renamed": c["renamed"], "entities": c["entities"],
                                  "rate": round(c["renamed"] / c["entities"], 4) if c["entities"] else None}
                              for t, c in renamed_by_type.items()},
        "kept_reasons": dict(sorted(reasons.items())),
        "gender": dict(sorted(genders.items())),
        "relations": RELATIONS,
        "fine_types": [t for t, _ in sorted(fine_types.items(), key=lambda kv: (-kv[1], kv[0]))],
        "fine_type_labels": {t: labels[t] for t in sorted(fine_types) if t in labels},
        "f1": _f1_table(totals, seeds) if with_predictions else None,
        "kept_reason_text": {r: (KeptReason(r).description if r in KEPT_VALUES else r) for r in sorted(reasons)},
        "consistency": {r: {"name": RELATIONS.get(r, r), "correct_on_original": kept_rel[r],
                            "still_correct": held_rel[r], "rate": round(held_rel[r] / kept_rel[r], 4)}
                        for r in sorted(kept_rel)},
    }
    return rows, summary


__all__ = ["ExploreResult", "build_site", "doc_file_name"]
