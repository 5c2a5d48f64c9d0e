"""Few-shot DocRE prompts, with demonstration augmentation (DA) and consistency guidance (CG).

Layout of one prompt (``--template paper``, the default, the paper's Appendix A word for word;
``icl/templates.py`` has the wording and what the appendix leaves open):

1. the instruction: the task, the 96 relation names separated by semicolons, how entities are
   numbered and marked, that examples come first, and the answer form;
2. with CG, the consistency paragraph the paper quotes;
3. the demonstrations, each "Example document:", the document, "All relation triples extracted from
   the document:" and its gold triples, one ``<[h]; relation name; [t]>`` line each (with DA every
   demonstration is followed by its renamed twin, carrying the same triples);
4. "Test document:" and the test document, ending in the answer header for the model to continue.

Both templates number entities in order of first mention (sentence, start token; a longer span
first when two start together; vertexSet index breaks ties). ``paper`` encloses each mention in its
number, ``[N] tokens [N]``; ``envbench-v1`` in tags, ``<eN>tokens</eN>``. Each prompt file carries
``entity_map``: ``entity_map[N-1]`` is the vertexSet index of entity N, which ``icl parse`` uses to map
answers back.

The step writes OUT/prompts/<nnnn>.json (sent as is) and .txt (to read), OUT/index.json, then
OUT/manifest.json last, through ``etl.step.Step``: a rebuild with the same inputs is skipped, and a
rebuild with fewer documents leaves none of the earlier prompt files behind.
"""

from __future__ import annotations

import heapq
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envbench.core.errors import DataError, EnvbenchError, shorten
from envbench.core.relations import RELATIONS
from envbench.core.seeding import derive_seed
from envbench.formats.docred import Doc, distinct_names, read_docred
from envbench.scoring.evaluate import env_seeds, split_seed
from etl.io import dumps_json, read_json, sha256_bytes, sha256_file
from etl.step import Step
from icl.templates import DEFAULT_TEMPLATE, TEMPLATES, V1_CG_PARAGRAPH, Example, Template
from icl.util import INT64_MAX, INT64_MIN, median, plural, quantile

INDEX_FORMAT = "envbench-icl-prompts/2"  # /2: prompt files under OUT/prompts/, template by name
PROMPTS_DIR = "prompts"
CG_PARAGRAPH = V1_CG_PARAGRAPH  # the envbench-v1 wording (the paper's is in icl.templates)
# Characters per token for length estimates, chosen to err long. Measured with SmolLM2's tokenizer (a 49k
# BPE vocabulary) on the 500 Re-DocRED test documents (dev as demonstrations; bench/icl_smoke.py
# --measure-tokens): paper 1-shot 3.63 overall (lowest prompt 2.76), 3-shot +DA +CG 3.18 (lowest 2.66);
# envbench-v1 1-shot 3.08 (2.55), 3-shot +DA +CG 2.84 (2.36), and 2.11 on one 3-shot +DA +CG prompt with
# real renamed twins. chars/4, used before, was 30-40% short. Bigger vocabularies (Llama 3, Qwen 2.5)
# pack more characters into a token, so these estimates stay on the long side for them too.
CHARS_PER_TOKEN = {"paper": 2.6, "envbench-v1": 2.1}
_SEED_SUFFIX = re.compile(r"-\d+$")


def get_template(name: str) -> Template:
    """The template called ``name``, or an error listing the names."""
    if name not in TEMPLATES:
        raise EnvbenchError(f"--template {name!r} is unknown; choose one of {', '.join(TEMPLATES)}")
    return TEMPLATES[name]


def entity_order(doc: Doc, numbering: str = "first-mention") -> list[int]:
    """vertexSet indices in numbering order: entity number N is ``entity_order(doc)[N-1]``."""
    if numbering == "vertexset":
        return list(range(len(doc["vertexSet"])))
    keys = []
    for i, entity in enumerate(doc["vertexSet"]):
        first = min((m["sent_id"], m["pos"][0], -m["pos"][1]) for m in entity)
        keys.append((first, i))
    return [i for _, i in sorted(keys)]


def render_document(doc: Doc, order: list[int], marking: str = "tags") -> str:
    """The document's tokens joined by spaces, each mention marked with its entity number.

    ``tags``: ``<eN>...</eN>`` around the mention; ``enclosed``: ``[N] ... [N]`` around it (nested
    mentions stay nested in both); ``brackets``: `` [N]`` after the mention's last token (of several
    mentions ending together, the inner one first).
    """
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
            ending = sorted(closes.get(j + 1, ()), key=lambda x: (-x[0], -x[2]))  # inner (later start) first
            if marking == "brackets":
                out.append(tok + "".join(f" [{n}]" for _, _, n in ending))
                continue
            # outer spans open first and close last, so nested mentions stay properly nested
            opening = [n for _, _, n in sorted(opens.get(j, ()), key=lambda x: (-x[1], x[2]))]
            closing = [n for _, _, n in ending]
            if marking == "enclosed":
                out.append("".join(f"[{n}] " for n in opening) + tok + "".join(f" [{n}]" for n in closing))
            else:
                out.append("".join(f"<e{n}>" for n in opening) + tok + "".join(f"</e{n}>" for n in closing))
    return " ".join(out)


def triple_lines(doc: Doc, order: list[int], template: Template | None = None) -> list[str]:
    """The gold triples as the template writes them, sorted by (h, t, relation name)."""
    write = (template or TEMPLATES["envbench-v1"]).triple
    number_of = {v: n for n, v in enumerate(order, start=1)}
    triples = {(number_of[lab["h"]], number_of[lab["t"]], RELATIONS[lab["r"]]) for lab in doc.get("labels") or []}
    return [write(h, r, t) for h, t, r in sorted(triples)]


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
    template: Template | str = DEFAULT_TEMPLATE,
    cache: dict[tuple[str, bool], tuple[str, list[str]]] | None = None,
) -> tuple[str, list[int]]:
    """The prompt for ``test`` and its entity order; ``twins[i]`` is the renamed twin of ``demos[i]`` (DA).

    ``cache`` keeps rendered demonstrations between calls (a demonstration serves many test documents).
    """
    tpl = get_template(template) if isinstance(template, str) else template
    cache = {} if cache is None else cache
    examples: list[Example] = []
    for i, demo in enumerate(demos, start=1):
        for is_twin, doc in ((False, demo), (True, twins[i - 1] if twins is not None else None)):
            if doc is None:
                continue
            if (demo["title"], is_twin) not in cache:
                # the twin keeps the source's numbering so both carry literally the same triples
                order = entity_order(demo, tpl.numbering)
                cache[(demo["title"], is_twin)] = (render_document(doc, order, tpl.marking),
                                                   triple_lines(doc, order, tpl))
            text, triples = cache[(demo["title"], is_twin)]
            examples.append(Example(text, triples, i, None if twins is None else is_twin))
    test_order = entity_order(test, tpl.numbering)
    return tpl.layout(examples, render_document(test, test_order, tpl.marking), cg), test_order


def _doc_tokens(doc: Doc) -> int:
    return sum(len(s) for s in doc["sents"])


def _check_twin(demo: Doc, twin: Doc, twins_path: str) -> None:
    title = demo["title"]
    if len(twin["vertexSet"]) != len(demo["vertexSet"]):
        raise DataError(
            f"{twins_path}: twin of {title!r} has {len(twin['vertexSet'])} entities, the training document "
            f"has {len(demo['vertexSet'])}; pass the _twins.json generated from the same --train file"
        )
    if twin["sents"] == demo["sents"]:
        # a twin with the original's text would make DA show one document twice, and CG say they differ
        raise DataError(
            f"{twins_path}: the twin of {title!r} has the same text as the training document, so the pair would "
            "not differ in entity names; pass the _twins.json that `envbench generate --pool train --twins` "
            "made, not the --train file itself"
        )
    gold = {(lab["h"], lab["t"], lab["r"]) for lab in demo.get("labels") or []}
    got = {(lab["h"], lab["t"], lab["r"]) for lab in twin.get("labels") or []}
    if gold != got:
        raise DataError(
            f"{twins_path}: twin of {title!r} has different labels from the training document; "
            "pass the _twins.json generated from the same --train file"
        )


def length_stats(chars: list[int], chars_per_token: float) -> dict[str, Any]:
    """The prompt length distribution in characters and in estimated tokens."""
    out: dict[str, Any] = {"chars_per_token": chars_per_token}
    for name, values in (("chars", chars), ("tokens_estimated", [round(c / chars_per_token) for c in chars])):
        out[name] = {"min": min(values, default=0), "median": round(median(values)),
                     "p95": round(quantile(values, 0.95)), "max": max(values, default=0)}
    return out


@dataclass
class PromptsResult:
    """What ``build_prompts`` wrote (or found up to date)."""

    out: Path
    documents: int
    demo_documents: int  # distinct training documents used as demonstrations
    length: dict[str, Any]
    params: dict[str, Any] = field(default_factory=dict)
    up_to_date: bool = False
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        p = self.params
        mode = f"{p['shots']}-shot" + (" +DA" if p["da"] else "") + (" +CG" if p["cg"] else "")
        c, t = self.length["chars"], self.length["tokens_estimated"]
        verb = "up to date:" if self.up_to_date else "wrote"
        line = (
            f"{verb} {plural(self.documents, 'prompt')} ({mode}, template {p['template']}) in {self.out}; "
            f"{plural(self.demo_documents, 'distinct demonstration')}; length in chars median {c['median']:,}, "
            f"p95 {c['p95']:,}, max {c['max']:,} (~{t['median']:,} / {t['p95']:,} / {t['max']:,} tokens at "
            f"{self.length['chars_per_token']} chars per token; plan a context of at least the max plus the answer)"
        )
        return "\n".join([line, *self.notes])


def first_documents(docs: list[Doc], limit: int) -> list[Doc]:
    """The first ``limit`` documents; of an Env file (every title '<title>-k', ``env_seeds``), the first
    ``limit`` source documents with all their renamed copies, so that ``--limit 2`` shows two documents, not
    one document twice, and `evaluate --only-predicted` still scores every seed of each."""
    if env_seeds(docs) is None:
        return docs[:limit]
    keep: list[str] = []
    for d in docs:
        source = split_seed(d["title"])[0]  # type: ignore[index]  # every title splits in an Env file
        if source not in keep:
            if len(keep) == limit:
                continue
            keep.append(source)
    wanted = set(keep)
    return [d for d in docs if split_seed(d["title"])[0] in wanted]  # type: ignore[index]


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
    template: str = DEFAULT_TEMPLATE,
    system: str | None = None,
    force: bool = False,
) -> PromptsResult:
    """Write OUT/prompts/<nnnn>.json and .txt (one prompt per document of ``docs_path``), OUT/index.json.

    ``system``: the system message; None gives the template's own (``paper``: the reference code's
    "You are a helpful assistant."; ``envbench-v1``: none), "" sends none.
    """
    tpl = get_template(template)
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
    # the manifest and index.json record them: past 64 bits the prompts were written, then the manifest failed
    for option, value in (("--seed", seed), ("--limit", limit), ("--max-demo-tokens", max_demo_tokens)):
        if value is not None and not INT64_MIN <= value <= INT64_MAX:
            raise EnvbenchError(f"{option} {value}: out of range (a 64-bit integer, which the manifest records); "
                                "use a smaller number")
    system_text = tpl.system if system is None else (system or None)
    inputs: list[str | os.PathLike[str]] = [docs_path, train_path] + ([twins_path] if da and twins_path else [])
    params: dict[str, Any] = {
        "template": tpl.name,
        "template_sha256": tpl.sha256,
        "numbering": tpl.numbering,
        "marking": tpl.marking,
        "system": system_text,
        "shots": shots,
        "da": da,
        "cg": cg,
        "seed": seed,
        "same_demos_for_renamed": same_demos_for_renamed,
        "max_demo_tokens": max_demo_tokens,
        "limit": limit,
        "docs": str(docs_path),
        "train": str(train_path),
        "twins": str(twins_path) if da else None,
    }
    # read and check every input first: its errors come before any output is touched
    test_set = read_docred(docs_path, skip_invalid=skip_invalid)
    test_docs = test_set.docs
    if not test_docs:
        raise DataError(f"{docs_path}: has no{' valid' if skip_invalid else ''} documents; pass the "
                        "DocRED-format test documents to write prompts for")
    docs_total = len(test_docs)
    if limit is not None:
        test_docs = first_documents(test_docs, limit)
    train_set = read_docred(train_path, skip_invalid=skip_invalid)
    notes = [n for n in (test_set.skip_note(), train_set.skip_note()) if n]
    twin_by_title: dict[str, Doc] = {}
    if da:
        assert twins_path is not None
        twin_set = read_docred(twins_path, skip_invalid=skip_invalid)
        notes += [n for n in (twin_set.skip_note(),) if n]
        twin_by_title = {d["title"]: d for d in twin_set.docs}
    out_dir = Path(out)
    with Step("icl-prompts", root=out_dir, outputs=[f"{PROMPTS_DIR}/", "index.json"], inputs=inputs,
              parameters=params, force=force) as step:
        if step.up_to_date:
            result = _result_from_index(out_dir, up_to_date=True)
            result.notes = notes
            return result
        entries, used = _write_prompt_files(step.path(f"{PROMPTS_DIR}/"), test_docs, train_set.docs, twin_by_title,
                                            tpl, params, system_text, str(train_path), str(twins_path))
        chars = [e["chars"] for e in entries]
        length = length_stats(chars, CHARS_PER_TOKEN[tpl.name])
        index = {
            "format": INDEX_FORMAT,
            "params": params,
            "inputs": {"docs_sha256": sha256_file(docs_path), "train_sha256": sha256_file(train_path),
                       "twins_sha256": sha256_file(twins_path) if da and twins_path else None},
            # what evaluate needs to score only what was asked: the file's size, and the subset taken
            "docs_documents": docs_total,
            "count": len(entries),
            "subset": limit is not None and limit < docs_total,
            "demo_documents": len(used),
            "length": length,
            "documents": entries,
        }
        step.path("index.json").write_bytes(dumps_json(index, indent=True))
        step.info = {"documents": len(entries)}
    return PromptsResult(out_dir, len(entries), len(used), length, params, notes=notes)


def _write_prompt_files(
    folder: Path,
    test_docs: list[Doc],
    train_docs: list[Doc],
    twin_by_title: dict[str, Doc],
    tpl: Template,
    params: dict[str, Any],
    system_text: str | None,
    train_path: str,
    twins_path: str,
) -> tuple[list[dict[str, Any]], set[str]]:
    shots, da, seed, max_demo_tokens = params["shots"], params["da"], params["seed"], params["max_demo_tokens"]
    by_title = {d["title"]: d for d in train_docs}
    candidates = [d["title"] for d in train_docs
                  if d.get("labels") and (max_demo_tokens is None or _doc_tokens(d) <= max_demo_tokens)]
    folder.mkdir(parents=True, exist_ok=True)
    width = max(4, len(str(max(len(test_docs) - 1, 0))))
    entries: list[dict[str, Any]] = []
    used: set[str] = set()
    drawn: dict[str, list[str]] = {}
    rendered: dict[tuple[str, bool], tuple[str, list[str]]] = {}
    for i, doc in enumerate(test_docs):
        key = demo_key(doc["title"], params["same_demos_for_renamed"])
        if key not in drawn:  # a document and its renamed versions share one draw
            # one spare, in case the test document itself is among the training candidates
            drawn[key] = pick_demos(key, candidates, shots + 1, seed, exclude=(key,))
        demo_titles = [t for t in drawn[key] if t != doc["title"]][:shots]
        if len(demo_titles) < shots:
            raise DataError(
                f"{train_path}: only {plural(len(demo_titles), 'usable demonstration')} for {doc['title']!r} "
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
                _check_twin(demo, twin, twins_path)
                twins.append(twin)
        text, order = build_prompt_text(doc, demos, twins, cg=params["cg"], template=tpl, cache=rendered)
        used.update(demo_titles)
        messages = ([{"role": "system", "content": system_text}] if system_text else []) + \
            [{"role": "user", "content": text}]
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
        # no fsync per file: the step publishes the folder whole, and index.json pins every prompt's hash
        (folder / f"{stem}.json").write_bytes(dumps_json(record, indent=True))
        table = "\n".join(
            f"  {n:>3} -> vertexSet[{v}]  {' | '.join(record['entity_names'][n - 1])}" for n, v in enumerate(order, 1)
        )
        sent = "\n\n".join(f"[{m['role']}]\n{m['content']}" for m in messages) if system_text else text
        readable = f"{sent}\n\n----- not sent: entity number -> vertexSet index -----\n{table}\n"
        (folder / f"{stem}.txt").write_bytes(readable.encode("utf-8"))
        chars = sum(len(m["content"]) for m in messages)
        entries.append({"file": f"{PROMPTS_DIR}/{stem}.json", "title": doc["title"], "prompt_sha256": prompt_sha,
                        "chars": chars})
    return entries, used


def _result_from_index(out_dir: Path, *, up_to_date: bool) -> PromptsResult:
    index = read_index(out_dir)
    return PromptsResult(out_dir, index["count"], index.get("demo_documents", 0), index["length"], index["params"],
                         up_to_date=up_to_date)


def read_index(prompts_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """OUT/index.json of ``build_prompts``, with a fix-naming error when absent or from an older version."""
    path = Path(prompts_dir) / "index.json"
    if not path.exists():
        raise EnvbenchError(
            f"no prompts at {prompts_dir} ({path} is missing); run "
            f"`envbench icl prompts --docs TEST --train TRAIN --shots 1 --out {prompts_dir}` first"
        )
    index = read_json(path, what="prompt index")
    if isinstance(index, dict) and index.get("format") == "envbench-icl-prompts/1":
        raise EnvbenchError(f"{path} was written by an older envbench (prompt files beside index.json); rebuild "
                            f"it with `envbench icl prompts ... --out {prompts_dir}`")
    if not isinstance(index, dict) or index.get("format") != INDEX_FORMAT:
        raise EnvbenchError(f"{path} is not an envbench ICL prompt index; rebuild it with `envbench icl prompts`")
    problem = _index_problem(index)
    if problem:
        raise EnvbenchError(f"{path} is not an envbench ICL prompt index ({problem}); rebuild it with "
                            "`envbench icl prompts`")
    return index


def _index_problem(index: dict[str, Any]) -> str | None:
    """What makes ``index`` no index of :func:`build_prompts`, or None (the fields `icl run` and `icl parse`
    read: a hand-edited file had ended in a KeyError or TypeError traceback)."""
    if not isinstance(index.get("params"), dict):
        return "params is not an object"
    docs = index.get("documents")
    if not isinstance(docs, list):
        return "documents is not a list"
    for i, entry in enumerate(docs):
        if not isinstance(entry, dict):
            return f"documents[{i}] is not an object"
        for key in ("file", "title", "prompt_sha256"):
            if not isinstance(entry.get(key), str):
                return f"documents[{i}] has no {key} string"
    return None


def read_prompt(prompts_dir: str | os.PathLike[str], file: str, title: str | None = None) -> dict[str, Any]:
    """The prompt record ``file`` (a name from index.json or answers.json) of ``prompts_dir``; a name that
    leads outside the folder ("../../etc/passwd", an absolute path, a link out) is refused unread, and so
    is a record whose title is not ``title`` (index.json's title for it, when given)."""
    path = Path(prompts_dir) / file
    if Path(file).is_absolute() or ".." in Path(file).parts or \
            not path.resolve().is_relative_to(Path(prompts_dir).resolve()):
        raise EnvbenchError(f"{Path(prompts_dir) / 'index.json'}: lists {file!r}, which is not a file inside "
                            f"{prompts_dir}; rebuild the prompts with `envbench icl prompts`")
    if not path.exists():
        raise EnvbenchError(f"{path} is listed in index.json but missing; rebuild with `envbench icl prompts`")
    rec = read_json(path, what="prompt file")
    problem = _prompt_problem(rec)
    if problem:
        raise EnvbenchError(f"{path}: not an envbench prompt file ({problem}); rebuild the prompts with "
                            "`envbench icl prompts`")
    if title is not None and rec["title"] != title:
        # the prompt hash in index.json covers the messages only; the predictions take the record's title
        # and the manifest's covers index.json's, so the two must be the same document
        raise EnvbenchError(f"{path}: its title {shorten(rec['title'])!r} is not {shorten(title)!r}, the title "
                            "index.json lists for it; rebuild the prompts with `envbench icl prompts`")
    return rec


def _prompt_problem(rec: Any) -> str | None:
    """What makes ``rec`` no prompt record of :func:`build_prompts`, or None (the fields later steps read)."""
    if not isinstance(rec, dict):
        return f"a {type(rec).__name__}, not an object"
    messages = rec.get("messages")
    if not isinstance(messages, list) or not all(
            isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
            for m in messages):
        return "messages is not a list of {role, content} strings"
    names = rec.get("entity_names")
    if not isinstance(names, list) or not all(isinstance(n, list) and all(isinstance(x, str) for x in n)
                                              for n in names):
        return "entity_names is not a list of name lists"
    emap = rec.get("entity_map")
    if not isinstance(emap, list) or len(emap) != len(names) or not all(type(i) is int for i in emap):
        return "entity_map is not one entity index per entity"
    if sorted(emap) != list(range(len(emap))):
        # every entity of the document is numbered, so the map is a permutation of its vertexSet indices;
        # an index outside them (999, -1) or twice would be written into the predictions as is
        return f"entity_map is not an order of the vertexSet indices 0..{len(emap) - 1}"
    if not isinstance(rec.get("title"), str):
        return "title is not a string"
    return None
