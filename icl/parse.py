"""Turn LLM answers into official DocRED predictions ``[{title, h_idx, t_idx, r}]``.

Tolerant by design: triples may sit inside ``<...>``, ``(...)``, ``[...]`` or no brackets at all,
behind bullets or numbering, among other text, with any spacing; entities may be written ``3``,
``[3]``, ``e3``, ``#3``, ``Entity 3``, ``<e3>name</e3>``, ``3 (name)``, or with the paper template's
marking copied from the prompt, around the name (``[3] name [3]``), before it (``[3] name``) or
after it (``name [3]``), or by an unambiguous mention name; relation names match
case-insensitively (underscores read as spaces; property ids like P17 work too).
``<think>...</think>`` blocks of reasoning models are ignored.

Only text shaped like a triple counts as one: a bracketed ``<a; b; c>`` (more fields are
"malformed"), or a whole line of exactly three ``;``-separated fields; either way no field longer
than ``MAX_FIELD_WORDS`` words. A line of prose, or the prompt's list of relation names echoed
back, is an ignored line, and so is the prompt's own answer-form placeholder
``<subject entity number; relation type; object entity number>``. Triples that cannot be used are
dropped and counted by reason; the stats file quotes each such line whole.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envbench.core.errors import EnvbenchError
from envbench.core.relations import NAME_TO_ID, RELATIONS
from envbench.formats.predictions import read_covers
from etl.io import compression_of, dumps_json, read_json
from etl.step import Step, manifest_beside
from icl.prompts import read_index, read_prompt
from icl.run_folder import RUN_FORMAT
from icl.util import plural

DROP_REASONS = ("malformed", "bad_entity", "entity_out_of_range", "unknown_relation", "self_pair", "duplicate")
EXAMPLES_PER_DOCUMENT = 5  # dropped triples quoted per document in the stats file
MAX_DROPPED_CHARS = 300  # characters of a dropped line kept in the stats file

# A triple inside one kind of bracket; the fields hold no bracket of that kind and no newline.
_BRACKETED = [
    re.compile(r"<([^<>\n]*;[^<>\n]*;[^<>\n]*)>"),
    re.compile(r"\(([^()\n]*;[^()\n]*;[^()\n]*)\)"),
    re.compile(r"\[([^\[\]\n]*;[^\[\]\n]*;[^\[\]\n]*)\]"),
    re.compile(r"\{([^{}\n]*;[^{}\n]*;[^{}\n]*)\}"),
]
MAX_FIELD_WORDS = 12  # a bare line's fields: longer is prose (the longest relation name has 6 words)
_PLACEHOLDER = "subject entity number; relation type; object entity number"  # the answer form, as the prompt says it
_BULLET = re.compile(r"^\s*(?:[-*+•·>]+|\(?\d+[.)]|\d+:)\s+")
_STRIP = " \t\"'`*_.,:"
_TAG_NUMBER = re.compile(r"^<e(\d+)>", re.IGNORECASE)
_PLAIN_NUMBER = re.compile(r"^(?:entity|ent|e)?\s*#?\s*(\d+)$", re.IGNORECASE)
_LEADING_NUMBER = re.compile(r"^(?:entity|ent|e)?\s*#?\s*(\d+)\s*[:=(\-\s]", re.IGNORECASE)
_TAGS = re.compile(r"</?e\d+>", re.IGNORECASE)
# the paper template's marking: "[3] name [3]", "[3] name", "name [3]"
_ENCLOSED = re.compile(r"^\[\s*(\d+)\s*\]\s*(.*?)\s*\[\s*(\d+)\s*\]$")
_NUMBER_FIRST = re.compile(r"^\[\s*(\d+)\s*\]\s*(\S.*)$")
_NUMBER_LAST = re.compile(r"^(.*\S)\s*\[\s*(\d+)\s*\]$")
_BRACKETS = "<>()[]{}"
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)
_NONE_ANSWERS = {"none", "none.", "no relations", "no relations.", "n/a"}


@dataclass
class ParsedAnswer:
    """Triples as (head number, tail number, relation id), 1-based, de-duplicated, in answer order."""

    triples: list[tuple[int, int, str]] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    dropped: list[tuple[str, str]] = field(default_factory=list)  # (reason, the line it came from), in answer order


def relation_id(text: str) -> str | None:
    """The property id of a relation name (any case and spacing) or of an id such as ``p17``."""
    name = " ".join(text.replace("_", " ").strip(_STRIP + _BRACKETS).split()).casefold()
    if name in NAME_TO_ID:
        return NAME_TO_ID[name]
    if re.fullmatch(r"p\d+", name) and name.upper() in RELATIONS:
        return name.upper()
    return None


# A number longer than this is no entity of any document (they have tens); it reads as TOO_LARGE, which is
# out of range for every document, since int() refuses a string of more than 4,300 digits (ValueError).
MAX_NUMBER_DIGITS = 9
TOO_LARGE = 10**MAX_NUMBER_DIGITS


def entity_number(text: str, names: list[list[str]]) -> int | None:
    """The 1-based entity number a field denotes, or None when it names no entity (unresolved); a number
    of more than ``MAX_NUMBER_DIGITS`` digits reads as ``TOO_LARGE`` (out of range)."""
    return _entity(text, names)[0]


def _number(digits: str) -> int:
    significant = digits.lstrip("0")
    return int(significant or "0") if len(significant) <= MAX_NUMBER_DIGITS else TOO_LARGE


def _entity(text: str, names: list[list[str]]) -> tuple[int | None, bool]:
    """(number, found by name)."""
    field_ = text.strip(_STRIP)
    m = _TAG_NUMBER.match(field_)
    if m:
        return _number(m.group(1)), False
    m = _ENCLOSED.match(field_)
    if m:  # "[3] name [3]" (or "[3] [3]"); two different numbers say nothing sure
        return (_number(m.group(1)), False) if m.group(1) == m.group(3) else (None, False)
    m = _NUMBER_FIRST.match(field_) or _NUMBER_LAST.match(field_)
    if m and not _PLAIN_NUMBER.match(field_.strip(_STRIP + _BRACKETS)):
        return _number(m.group(1) if m.re is _NUMBER_FIRST else m.group(2)), False
    bare = field_.strip(_STRIP + _BRACKETS)
    m = _PLAIN_NUMBER.match(bare)
    if m:
        return _number(m.group(1)), False
    # a name may itself end in a bracket ("Beta (band)"), so try it before and after stripping them
    wanted = {" ".join(_TAGS.sub("", f).split()).casefold() for f in (field_, bare)} - {""}
    hits = [n for n, ns in enumerate(names, start=1) if any(" ".join(x.split()).casefold() in wanted for x in ns)]
    if len(hits) == 1:  # a name such as "3 Doors Down" beats reading "3 (...)" as a number
        return hits[0], True
    m = _LEADING_NUMBER.match(bare)
    if m:
        return _number(m.group(1)), False
    return None, False


def _candidates(line: str) -> list[str]:
    """The triple bodies of one line: bracketed ones in order of position, else the bare line."""
    spans = sorted(
        ((m.start(), -m.end(), m.group(1)) for pattern in _BRACKETED for m in pattern.finditer(line)),
    )
    found: list[str] = []
    end = -1
    for start, neg_end, body in spans:
        if start >= end:  # a match inside an earlier, longer one is part of it
            found.append(body)
            end = -neg_end
    if found:
        return found
    body = _unwrap(_BULLET.sub("", line).strip())
    fields = body.split(";")
    if len(fields) != 3 or any(len(f.split()) > MAX_FIELD_WORDS for f in fields):
        return []  # prose, or the relation list echoed: not shaped like a triple
    return [body]


_PAIRS = {"<": ">", "(": ")", "[": "]", "{": "}"}


def _unwrap(body: str) -> str:
    """``body`` less brackets that enclose all of it: "(<1; country; 3>)" -> "1; country; 3", while
    "[1] Alpha [1]; country; [2]" and "<e1>Alpha</e1>; ...; <e2>Beta</e2>" keep their marks."""
    while len(body) >= 2 and body[0] in _PAIRS and body[-1] == _PAIRS[body[0]]:
        depth, closes_at = 0, -1
        for pos, ch in enumerate(body):
            depth += (ch == body[0]) - (ch == body[-1])
            if depth == 0:
                closes_at = pos
                break
        if closes_at != len(body) - 1:  # the first bracket closes before the end: it encloses a mark, not the line
            return body
        body = body[1:-1].strip()
    return body


def parse_answer(text: str, names: list[list[str]]) -> ParsedAnswer:
    """Parse one answer; ``names[N-1]`` are the mention names of entity N (for name-written entities)."""
    out = ParsedAnswer()
    n_entities = len(names)
    seen: set[tuple[int, int, str]] = set()
    text, n_think = _THINK.subn("", text)  # reasoning models think aloud first; only the answer counts
    if n_think:
        out.counts["thinking_removed"] += n_think
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        cands = _candidates(stripped)
        if not cands:
            if stripped.strip(_STRIP).casefold() not in _NONE_ANSWERS:
                out.counts["ignored_lines"] += 1
            continue
        # the prompt's own answer form echoed, or prose in brackets, is no triple
        cands = [c for c in cands if " ".join(c.split()).casefold() != _PLACEHOLDER
                 and all(len(f.split()) <= MAX_FIELD_WORDS for f in c.split(";"))]
        if not cands:
            out.counts["ignored_lines"] += 1
            continue
        for cand in cands:
            out.counts["triples_found"] += 1
            parts = cand.split(";")
            reason = None
            if len(parts) != 3:
                reason = "malformed"
            else:
                (h, h_by_name), (t, t_by_name) = _entity(parts[0], names), _entity(parts[2], names)
                out.counts["resolved_by_name"] += int(h_by_name) + int(t_by_name)
                r = relation_id(parts[1])
                if h is None or t is None:
                    reason = "bad_entity"
                elif not (1 <= h <= n_entities and 1 <= t <= n_entities):
                    reason = "entity_out_of_range"
                elif r is None:
                    reason = "unknown_relation"
                elif h == t:
                    reason = "self_pair"
                elif (h, t, r) in seen:
                    reason = "duplicate"
                else:
                    seen.add((h, t, r))
                    out.triples.append((h, t, r))
                    out.counts["kept"] += 1
            if reason is not None:
                out.counts[f"dropped_{reason}"] += 1
                # the line: the context of what was dropped (cut short: one runaway answer line of 4 MB
                # made a 19 MB stats file)
                out.dropped.append((reason, stripped if len(stripped) <= MAX_DROPPED_CHARS
                                    else stripped[:MAX_DROPPED_CHARS] + "..."))
    return out


@dataclass
class ParseResult:
    """What ``parse_run`` wrote (or found up to date)."""

    out: Path
    stats_path: Path
    stats: dict[str, int]
    up_to_date: bool = False

    def summary(self) -> str:
        s = self.stats
        drops = ", ".join(f"{k[len('dropped_'):]} {v:,}" for k, v in sorted(s.items()) if k.startswith("dropped_") and v)
        verb = "up to date:" if self.up_to_date else "wrote"
        return (
            f"{verb} {plural(s['predictions'], 'prediction')} for {plural(s['documents'], 'document')} "
            f"({s['failed_documents']:,} failed, scored as empty) in {self.out}; triples found "
            f"{s['triples_found']:,}, kept {s['kept']:,}" + (f", dropped: {drops}" if drops else "")
            + f"; per-document counts in {self.stats_path}"
        )


def parse_run(
    prompts_dir: str | os.PathLike[str],
    run_dir: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    stats_path: str | os.PathLike[str] | None = None,
    force: bool = False,
) -> ParseResult:
    """Parse RUN/answers.json against the prompts' entity maps; write predictions, their stats, and
    OUT.manifest.json last (through ``etl.step.Step``: a rerun with the same inputs writes nothing).

    The manifest's ``covers`` names the documents the predictions are for (every prompt, failed
    ones included, which count as empty), the --docs file they came from, and --limit, so a scorer
    can score only those documents.
    """
    out_path = Path(out)
    stats_file = Path(stats_path) if stats_path is not None else out_path.with_name(out_path.stem + ".stats.json")
    if stats_file.resolve() == out_path.resolve():
        raise EnvbenchError(f"--stats and --out are the same file ({out}); give the counts another name")
    for path in (out_path, stats_file):
        if compression_of(path):
            raise EnvbenchError(f"{path}: predictions and counts are written uncompressed; give a .json name")
    index = read_index(prompts_dir)
    answers_path = Path(run_dir) / "answers.json"
    if not answers_path.exists():
        raise EnvbenchError(
            f"no answers at {answers_path}; run `envbench icl run --prompts {prompts_dir} --base-url URL "
            f"--model NAME --out {run_dir}` first (an interrupted run resumes from its cache)"
        )
    index_path = Path(prompts_dir) / "index.json"
    # a --stats given names itself in the step's messages; the default one, named after --out, is --out's
    output_options = {stats_file: "--stats"} if stats_path is not None else {}
    for read in (index_path, answers_path):  # the step would blame --out for the file --stats names
        if stats_path is not None and stats_file.resolve() == read.resolve():
            raise EnvbenchError(f"--stats {stats_path}: the input {read} would be overwritten by this step's output "
                                f"{stats_file}; choose another --stats")
    # force_flag=None: `icl parse` has no --force, so no message offers one (``force`` is the library's)
    with Step("icl-parse", manifest=manifest_beside(out_path), outputs=[out_path, stats_file],
              inputs=[index_path, answers_path], option="--out", force=force, force_flag=None,
              output_options=output_options) as step:
        if step.up_to_date:
            stats = read_json(stats_file, what="parse stats")
            return ParseResult(out_path, stats_file, {k: v for k, v in stats.items() if isinstance(v, int)},
                               up_to_date=True)
        preds, totals, per_document, failed_titles = _parse(index, prompts_dir, run_dir, answers_path)
        step.path(out_path).write_bytes(dumps_json(preds))
        step.path(stats_file).write_bytes(dumps_json({**totals, "per_document": per_document}, indent=True))
        params = index["params"]
        step.info = {"covers": {
            "docs": params.get("docs"), "docs_sha256": (index.get("inputs") or {}).get("docs_sha256"),
            "docs_documents": index.get("docs_documents"), "limit": params.get("limit"),
            "subset": index.get("subset", False), "documents": len(index["documents"]),
            "titles": [e["title"] for e in index["documents"]], "failed_titles": failed_titles,
        }}
    return ParseResult(out_path, stats_file, totals)


def covered_titles(pred_path: str | os.PathLike[str]) -> list[str] | None:
    """The titles an ``icl parse`` prediction file covers (from its manifest), or None when unknown
    (no manifest, or one that describes an earlier version of the file)."""
    covers = read_covers(pred_path)
    return list(covers.titles) if covers is not None and covers.matches else None


def _parse(index: dict[str, Any], prompts_dir: str | os.PathLike[str], run_dir: str | os.PathLike[str],
           answers_path: Path) -> tuple[list[dict[str, Any]], dict[str, int], list[dict[str, Any]], list[str]]:
    run = read_json(answers_path, what="ICL answers file")
    if not isinstance(run, dict) or run.get("format") != RUN_FORMAT:
        raise EnvbenchError(f"{answers_path} is not an envbench ICL answers file; rerun `envbench icl run`")
    answers = run.get("answers")
    if not isinstance(answers, list) or not all(
            isinstance(a, dict) and isinstance(a.get("file"), str) and "answer" in a
            and isinstance(a["answer"], (str, type(None)))
            for a in answers):
        raise EnvbenchError(f"{answers_path}: answers is not a list of {{file, answer}} records with a text or null "
                            "answer; rerun `envbench icl run` (cached answers are reused)")
    by_file = {a["file"]: a for a in answers}
    stats: Counter[str] = Counter({k: 0 for k in ("kept", "triples_found", "ignored_lines", "resolved_by_name")})
    for reason in DROP_REASONS:
        stats[f"dropped_{reason}"] += 0
    preds: list[dict[str, Any]] = []
    per_document: list[dict[str, Any]] = []
    failed_titles: list[str] = []
    for entry in index["documents"]:
        ans = by_file.get(entry["file"])
        if ans is None:
            raise EnvbenchError(
                f"{answers_path} has no answer for {entry['file']} ({entry['title']!r}); it was made from other "
                f"prompts; rerun `envbench icl run --prompts {prompts_dir} ... --out {run_dir}`"
            )
        if ans.get("prompt_sha256") != entry["prompt_sha256"]:
            raise EnvbenchError(
                f"{answers_path}: the answer for {entry['file']} was made from a different prompt; "
                f"rerun `envbench icl run --prompts {prompts_dir} ... --out {run_dir}` (cached answers are reused)"
            )
        doc = {"file": entry["file"], "title": entry["title"]}
        if ans["answer"] is None:
            failed_titles.append(entry["title"])  # no triples: the document's gold still counts against recall
            per_document.append({**doc, "failed": True, "error": ans.get("error")})
            continue
        rec = read_prompt(prompts_dir, entry["file"], entry["title"])
        parsed = parse_answer(ans["answer"], rec["entity_names"])
        stats.update(parsed.counts)
        emap = rec["entity_map"]
        doc_preds = {(emap[h - 1], emap[t - 1], r) for h, t, r in parsed.triples}
        preds.extend({"title": rec["title"], "h_idx": h, "t_idx": t, "r": r} for h, t, r in sorted(doc_preds))
        per_document.append({
            **doc, "failed": False, "finish_reason": ans.get("finish_reason"),
            **{k: v for k, v in sorted(parsed.counts.items())},
            "dropped": [{"reason": r, "text": t} for r, t in parsed.dropped[:EXAMPLES_PER_DOCUMENT]],
        })
    totals = dict(sorted(stats.items()))
    totals.update(documents=len(index["documents"]), failed_documents=len(failed_titles), predictions=len(preds))
    return preds, totals, per_document, failed_titles
