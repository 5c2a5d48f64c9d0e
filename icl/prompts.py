"""Few-shot DocRE prompts after the paper's Appendix A, with demonstration augmentation and consistency guidance.

Layout of one prompt (a single user message):

1. the instruction: the task, the mention marking, the 96 relation names, the output format;
2. with CG, the consistency paragraph;
3. the demonstrations ("Example 1", ...; with DA "Example 1a" and its renamed twin "Example 1b"),
   each followed by its gold triples, one ``<h; relation name; t>`` line each;
4. the test document, ending with ``Relations:`` for the model to continue.

Entities are numbered 1, 2, ... in order of first mention (sentence, start token; a longer span
first when two start together; vertexSet index breaks ties), and every mention is enclosed as
``<eN>tokens</eN>``. Because that numbering differs from the vertexSet order, each prompt file
carries ``entity_map``: ``entity_map[N-1]`` is the vertexSet index of entity N.
"""

from __future__ import annotations

import heapq
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envbench.core.errors import DataError, EnvbenchError
from envbench.core.relations import RELATIONS
from envbench.core.seeding import derive_seed
from envbench.formats.docred import Doc, distinct_names
from envbench.formats.linked_docred import read_documents
from etl.io import dumps_json, read_json, sha256_bytes, sha256_file, write_json_atomic

TEMPLATE_VERSION = 1
INDEX_FORMAT = "envbench-icl-prompts/1"
MARKING = "<eN>mention</eN>"

INSTRUCTION = (
    "Task: document-level relation extraction. Read the document and list the relations that hold "
    "between its entities.\n"
    "The entities are numbered 1, 2, 3, ... in order of their first mention, and every mention of an "
    "entity is enclosed in tags carrying its number: <e1>Willi Schneider</e1> ... <e1>Schneider</e1> "
    "are two mentions of entity 1.\n"
    "Use only these {n} relation types:\n{relations}\n"
    "Write one relation per line in the form <head entity number; relation type; tail entity number>, "
    "for example <1; country of citizenship; 2>. List every relation the document states or implies, "
    "and write nothing else. If no relation holds, write None."
)

CG_PARAGRAPH = (
    "The examples come in pairs (a and b). The two documents of a pair differ only in the names of "
    "their entities, and therefore their relations are exactly the same. Your output must not depend on "
    "entity names either: base every relation on what the context says, not on the entities themselves "
    "or on what you know about them."
)

_SEED_SUFFIX = re.compile(r"-\d+$")
_PROMPT_FILE = re.compile(r"^\d{4,}\.(?:json|txt)$")


def entity_order(doc: Doc) -> list[int]:
    """vertexSet indices in order of first mention: entity number N is ``entity_order(doc)[N-1]``."""
    keys = []
    for i, entity in enumerate(doc["vertexSet"]):
        first = min((m["sent_id"], m["pos"][0], -m["pos"][1]) for m in entity)
        keys.append((first, i))
    return [i for _, i in sorted(keys)]


def render_document(doc: Doc, order: list[int]) -> str:
    """The document's tokens joined by spaces, each mention enclosed as ``<eN>...</eN>``."""
    number_of = {v: n for n, v in enumerate(order, start=1)}
    # per sentence: opens[token] and closes[token] (a close at token j comes after token j-1)
    spans: dict[int, set[tuple[int, int, int]]] = {}
    for v, entity in enumerate(doc["vertexSet"]):
        for m in entity:
            spans.setdefault(m["sent_id"], set()).add((m["pos"][0], m["pos"][1], number_of[v]))
    out: list[str] = []
    for sid, sent in enumerate(doc["sents"]):
        opens: dict[int, list[tuple[int, int, int]]] = {}
        closes: dict[int, list[tuple[int, int, int]]] = {}
        for s, e, n in spans.get(sid, ()):
            opens.setdefault(s, []).append((s, e, n))
            closes.setdefault(e, []).append((s, e, n))
        for j, tok in enumerate(sent):
            # outer spans open first and close last, so nested mentions stay properly nested
            pre = "".join(f"<e{n}>" for _, _, n in sorted(opens.get(j, ()), key=lambda x: (-x[1], x[2])))
            post = "".join(f"</e{n}>" for _, _, n in sorted(closes.get(j + 1, ()), key=lambda x: (-x[0], -x[2])))
            out.append(f"{pre}{tok}{post}")
    return " ".join(out)


def triple_lines(doc: Doc, order: list[int]) -> list[str]:
    """The gold triples as ``<h; relation name; t>`` lines, sorted by (h, t, relation name)."""
    number_of = {v: n for n, v in enumerate(order, start=1)}
    triples = {(number_of[lab["h"]], number_of[lab["t"]], RELATIONS[lab["r"]]) for lab in doc.get("labels") or []}
    return [f"<{h}; {r}; {t}>" for h, t, r in sorted(triples)]


def demo_key(title: str, same_for_renamed: bool = True) -> str:
    """The key demonstrations are drawn by: the title, less an Env ``-k`` suffix when ``same_for_renamed``."""
    return _SEED_SUFFIX.sub("", title) if same_for_renamed else title


def pick_demos(key: str, candidates: list[str], shots: int, seed: int, exclude: tuple[str, ...] = ()) -> list[str]:
    """``shots`` distinct candidate titles, chosen by hashing (seed, key, candidate); never one in ``exclude``."""
    pool = [c for c in candidates if c not in exclude]
    return [c for _, c in heapq.nsmallest(shots, ((derive_seed(seed, key, c), c) for c in pool))]


def build_prompt_text(
    test: Doc,
    demos: list[Doc],
    twins: list[Doc] | None = None,
    *,
    cg: bool = False,
    cache: dict[tuple[str, bool], tuple[str, str]] | None = None,
) -> tuple[str, list[int]]:
    """The prompt for ``test`` and its entity order; ``twins[i]`` is the renamed twin of ``demos[i]`` (DA).

    ``cache`` keeps rendered demonstrations between calls (a demonstration serves many test documents).
    """
    relations = "\n".join(RELATIONS.values())
    parts = [INSTRUCTION.format(n=len(RELATIONS), relations=relations)]
    if cg:
        parts.append(CG_PARAGRAPH)
    cache = {} if cache is None else cache
    for i, demo in enumerate(demos, start=1):
        for is_twin, doc in ((False, demo), (True, twins[i - 1] if twins is not None else None)):
            if doc is None:
                continue
            if (demo["title"], is_twin) not in cache:
                # the twin keeps the source's numbering so both carry literally the same triples
                order = entity_order(demo)
                cache[(demo["title"], is_twin)] = (render_document(doc, order), "\n".join(triple_lines(doc, order)))
            text, triples = cache[(demo["title"], is_twin)]
            label = f"Example {i}" if twins is None else f"Example {i}{'b' if is_twin else 'a'}"
            parts.append(f"{label}:\nDocument: {text}\nRelations:\n{triples or 'None'}")
    test_order = entity_order(test)
    parts.append(f"Test document:\nDocument: {render_document(test, test_order)}\nRelations:")
    return "\n\n".join(parts), test_order


def _doc_tokens(doc: Doc) -> int:
    return sum(len(s) for s in doc["sents"])


def _check_twin(demo: Doc, twin: Doc, twins_path: str) -> None:
    title = demo["title"]
    if len(twin["vertexSet"]) != len(demo["vertexSet"]):
        raise DataError(
            f"{twins_path}: twin of {title!r} has {len(twin['vertexSet'])} entities, the training document "
            f"has {len(demo['vertexSet'])}; pass the _twins.json generated from the same --train file"
        )
    gold = {(lab["h"], lab["t"], lab["r"]) for lab in demo.get("labels") or []}
    got = {(lab["h"], lab["t"], lab["r"]) for lab in twin.get("labels") or []}
    if gold != got:
        raise DataError(
            f"{twins_path}: twin of {title!r} has different labels from the training document; "
            "pass the _twins.json generated from the same --train file"
        )


def _write_unsynced(path: Path, data: bytes) -> None:
    """Temp file + rename without fsync: a crash leaves no partial file under the final name, and
    index.json (written last, synced) pins every prompt's hash, so a file lost to power failure is
    detected by `icl run`. A fsync per prompt made builds several times slower on a busy disk."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


@dataclass
class PromptsResult:
    """What ``build_prompts`` wrote."""

    out: Path
    documents: int
    demo_documents: int  # distinct training documents used as demonstrations
    chars_total: int
    chars_max: int
    params: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        mode = f"{self.params['shots']}-shot" + (" +DA" if self.params["da"] else "") + (" +CG" if self.params["cg"] else "")
        return (
            f"wrote {self.documents} prompts ({mode}) to {self.out}; {self.demo_documents} distinct demonstrations; "
            f"prompt length mean {self.chars_total // max(self.documents, 1)} chars "
            f"(~{self.chars_total // max(self.documents, 1) // 4} tokens), max {self.chars_max} chars"
        )


def build_prompts(
    docs_path: str | os.PathLike[str],
    train_path: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    twins_path: str | os.PathLike[str] | None = None,
    shots: int = 1,
    da: bool = False,
    cg: bool = False,
    seed: int = 0,
    same_demos_for_renamed: bool = True,
    max_demo_tokens: int | None = None,
    limit: int | None = None,
    skip_invalid: bool = False,
) -> PromptsResult:
    """Write OUT/<nnnn>.json and .txt (one prompt per document of ``docs_path``) and OUT/index.json."""
    if shots < 0:
        raise EnvbenchError(f"--shots must be at least 0, got {shots}")
    if da and shots == 0:
        raise EnvbenchError("--da adds a renamed twin of each demonstration; it needs --shots 1 or more")
    if da and twins_path is None:
        raise EnvbenchError(
            "--da needs --twins FILE, the renamed twins of the training documents; make them with "
            "`envbench generate TRAIN --index DIR --pool train --seeds 1 --twins --out OUT` (OUT/<stem>_twins.json)"
        )
    if cg and not da:
        raise EnvbenchError(
            "--cg says that each demonstration pair differs only in entity names, so it needs --da (and --twins FILE)"
        )
    if limit is not None and limit < 1:
        raise EnvbenchError(f"--limit must be at least 1, got {limit}")
    test_docs = read_documents(docs_path, skip_invalid=skip_invalid).docs
    if not test_docs:
        raise DataError(f"{docs_path}: has no{' valid' if skip_invalid else ''} documents; pass the DocRED-format "
                        "test documents to write prompts for")
    if limit is not None:
        test_docs = test_docs[:limit]
    train_docs = read_documents(train_path, skip_invalid=skip_invalid).docs
    by_title = {d["title"]: d for d in train_docs}
    candidates = [
        d["title"]
        for d in train_docs
        if d.get("labels") and (max_demo_tokens is None or _doc_tokens(d) <= max_demo_tokens)
    ]
    twin_by_title: dict[str, Doc] = {}
    if da:
        assert twins_path is not None
        twin_by_title = {d["title"]: d for d in read_documents(twins_path, skip_invalid=skip_invalid).docs}

    params: dict[str, Any] = {
        "template": TEMPLATE_VERSION,
        "marking": MARKING,
        "shots": shots,
        "da": da,
        "cg": cg,
        "seed": seed,
        "same_demos_for_renamed": same_demos_for_renamed,
        "max_demo_tokens": max_demo_tokens,
        "docs": str(docs_path),
        "docs_sha256": sha256_file(docs_path),
        "train": str(train_path),
        "train_sha256": sha256_file(train_path),
        "twins": str(twins_path) if da else None,
        "twins_sha256": sha256_file(twins_path) if da and twins_path is not None else None,
    }
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    earlier = _earlier_prompt_files(out_dir)
    width = max(4, len(str(max(len(test_docs) - 1, 0))))
    entries: list[dict[str, Any]] = []
    used: set[str] = set()
    drawn: dict[str, list[str]] = {}
    rendered: dict[tuple[str, bool], tuple[str, str]] = {}
    chars_total = chars_max = 0
    for i, doc in enumerate(test_docs):
        key = demo_key(doc["title"], same_demos_for_renamed)
        if key not in drawn:  # a document and its renamed versions share one draw
            # one spare, in case the test document itself is among the training candidates
            drawn[key] = pick_demos(key, candidates, shots + 1, seed, exclude=(key,))
        demo_titles = [t for t in drawn[key] if t != doc["title"]][:shots]
        if len(demo_titles) < shots:
            raise DataError(
                f"{train_path}: only {len(demo_titles)} usable demonstrations for {doc['title']!r} "
                f"(documents with labels{'' if max_demo_tokens is None else f' and at most {max_demo_tokens} tokens'}), "
                f"{shots} needed; pass a larger --train file or fewer --shots"
            )
        demos = [by_title[t] for t in demo_titles]
        twins = None
        if da:
            twins = []
            for demo in demos:
                twin = twin_by_title.get(demo["title"])
                if twin is None:
                    raise DataError(
                        f"{twins_path}: no twin for demonstration {demo['title']!r}; pass the _twins.json that "
                        "`envbench generate --pool train --twins` made from the same --train file"
                    )
                _check_twin(demo, twin, str(twins_path))
                twins.append(twin)
        text, order = build_prompt_text(doc, demos, twins, cg=cg, cache=rendered)
        used.update(demo_titles)
        messages = [{"role": "user", "content": text}]
        prompt_sha = sha256_bytes(dumps_json(messages))
        stem = f"{i:0{width}d}"
        record = {
            "title": doc["title"],
            "index": i,
            "messages": messages,
            "entity_map": order,
            "entity_names": [distinct_names(doc["vertexSet"][v]) for v in order],
            "demos": demo_titles,
            "params": params,
            "prompt_sha256": prompt_sha,
        }
        _write_unsynced(out_dir / f"{stem}.json", dumps_json(record, indent=True))
        table = "\n".join(
            f"  {n:>3} -> vertexSet[{v}]  {' | '.join(record['entity_names'][n - 1])}" for n, v in enumerate(order, 1)
        )
        readable = f"{text}\n\n----- not sent: entity number -> vertexSet index -----\n{table}\n"
        _write_unsynced(out_dir / f"{stem}.txt", readable.encode("utf-8"))
        entries.append({"file": f"{stem}.json", "title": doc["title"], "prompt_sha256": prompt_sha, "chars": len(text)})
        chars_total += len(text)
        chars_max = max(chars_max, len(text))
    keep = {e["file"] for e in entries} | {e["file"][:-5] + ".txt" for e in entries}
    for name in earlier - keep:  # prompts of an earlier, larger build would otherwise linger
        (out_dir / name).unlink(missing_ok=True)
    write_json_atomic(
        out_dir / "index.json",
        {"format": INDEX_FORMAT, "params": params, "documents": entries, "count": len(entries), "chars_total": chars_total},
        indent=True,
    )
    return PromptsResult(out_dir, len(entries), len(used), chars_total, chars_max, params)


def _earlier_prompt_files(out_dir: Path) -> set[str]:
    """Prompt files an earlier build listed in OUT/index.json; only those may be removed, so pointing
    --out at a folder with other files never deletes them."""
    path = out_dir / "index.json"
    if not path.exists():
        return set()
    try:
        index = read_json(path, what="prompt index")
    except Exception:  # noqa: BLE001 - an unreadable old index just means nothing is known to be ours
        return set()
    if not isinstance(index, dict) or index.get("format") != INDEX_FORMAT:
        return set()
    files = {e.get("file") for e in index.get("documents", []) if isinstance(e, dict)}
    names = {f for f in files if isinstance(f, str) and _PROMPT_FILE.match(f)}
    return names | {f[:-5] + ".txt" for f in names if f.endswith(".json")}


def read_index(prompts_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """OUT/index.json of ``build_prompts``, with a fix-naming error when absent."""
    path = Path(prompts_dir) / "index.json"
    if not path.exists():
        raise EnvbenchError(
            f"no prompts at {prompts_dir} ({path} is missing); run "
            f"`envbench icl prompts --docs TEST --train TRAIN --shots 1 --out {prompts_dir}` first"
        )
    index = read_json(path, what="prompt index")
    if not isinstance(index, dict) or index.get("format") != INDEX_FORMAT:
        raise EnvbenchError(f"{path} is not an envbench ICL prompt index; rebuild it with `envbench icl prompts`")
    return index


def read_prompt(prompts_dir: str | os.PathLike[str], file: str) -> dict[str, Any]:
    path = Path(prompts_dir) / file
    if not path.exists():
        raise EnvbenchError(f"{path} is listed in index.json but missing; rebuild with `envbench icl prompts`")
    return read_json(path, what="prompt file")
