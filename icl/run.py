"""`icl run`: answer every prompt of a prompts folder, through the answer cache, into a run folder.

``run_prompts`` holds OUT (``icl.run_folder``), answers what the cache holds from it, asks the server about itself
(``icl.server``) only when some prompt is not cached, sends the rest with ``concurrency`` daemon threads through
the ``ChatClient`` (``icl.client``), caches each answer as it comes (``icl.cache``), and writes OUT/answers.json,
OUT/failures.json and OUT/run.json. The accounting in run.json covers every answer, cached or new. A document that
still fails after the retries is recorded in failures.json (with the server's full error text) and answered with
``null`` in answers.json; the parser turns it into an empty prediction, so it stays in the recall denominator.

Ctrl-C (SIGINT) stops a run within a fraction of a second: requests in flight are abandoned (their
threads are daemons), answers cached so far stay, nothing else is written, and ``RunInterrupted``
says how to resume. A run stops sending once ``DEAD_AFTER`` requests in a row could not reach the
server, listing the rest as not attempted.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envbench.core.errors import EnvbenchError
from etl.io import dumps_json, sha256_bytes, write_json_atomic
from icl.cache import AnswerCache
from icl.client import ChatClient, RequestFailed, Stopped
from icl.openai_format import models_url, server_count, usage_counts
from icl.prompts import read_index, read_prompt
from icl.run_folder import RUN_FORMAT, check_out, check_places, hold_out, last_server, remove_empty
from icl.server import ServerInfo, TokenCounts, count_prompt_tokens, probe_server
from icl.util import median, plural, quantile

# Threads in flight at most (hosted APIs take 8-32); recorded in run.json, whose JSON writer stores 64-bit integers
# only: --concurrency 10**20 failed there after the answers were written.
MAX_CONCURRENCY = 1024


class RunInterrupted(EnvbenchError):
    """Ctrl-C: the message says what was kept and how to resume."""


@dataclass
class RunResult:
    """What ``run_prompts`` did: totals over every answer, and what this run itself sent."""

    out: Path
    documents: int
    answered: int  # documents answered by the server in this run
    cache_hits: int
    requests: int = 0  # HTTP requests sent in this run, retries included
    failed: list[dict[str, Any]] = field(default_factory=list)
    truncated: int = 0  # answers (cached or new) cut off by --max-tokens (finish_reason "length")
    usage: dict[str, int] = field(default_factory=dict)  # summed over every answer, cached or new
    retries: dict[str, int] = field(default_factory=dict)  # retries in this run, by cause
    latencies: list[float] = field(default_factory=list)  # seconds per answered request of this run
    seconds: float = 0.0
    cache_only: bool = False
    warnings: list[str] = field(default_factory=list)  # said before sending (context, model name, slots)
    context: int | None = None  # the context the prompts were checked against, and where it came from
    context_source: str | None = None
    max_tokens: int = 0
    tokens_source: str | None = None  # how prompt_tokens were found
    prompt_tokens: dict[str, int] = field(default_factory=dict)  # prompt file -> tokens, for the prompts sent
    server_down: str | None = None  # the last connection error, when the run stopped sending because of it

    def by_reason(self, *reasons: str) -> list[dict[str, Any]]:
        return [f for f in self.failed if f.get("reason") in reasons]

    def summary(self) -> str:
        retries = sum(self.retries.values())
        causes = ", ".join(f"{k} {v}" for k, v in sorted(self.retries.items()))
        parts = [f"{plural(self.documents, 'document')}: {self.cache_hits:,} from cache, {self.answered:,} answered "
                 f"now, {len(self.failed):,} failed",
                 f"{plural(self.requests, 'request')}, {plural(retries, 'retry', 'retries')}"
                 + (f" ({causes})" if causes else "")]
        if self.usage:
            parts.append(f"tokens {self.usage.get('prompt_tokens', 0):,} in + {self.usage.get('completion_tokens', 0):,} "
                         "out over all answers")
        if self.latencies:
            parts.append(f"latency median {median(self.latencies):.2f} s, p95 {quantile(self.latencies, 0.95):.2f} s")
        parts.append(f"{self.seconds:.1f} s; answers in {self.out / 'answers.json'}")
        lines = ["; ".join(parts)]
        if self.truncated:
            lines.append(f"warning: {plural(self.truncated, 'answer')} stopped at --max-tokens; raise it to get all "
                         "triples")
        missing = self.by_reason("not_cached")
        context = self.by_reason("context")
        unsent = self.by_reason("not_attempted")
        other = len(self.failed) - len(missing) - len(context) - len(unsent)
        listed = self.out / "failures.json"
        if missing:
            are = "is" if len(missing) == 1 else "are"
            lines.append(f"warning: {plural(len(missing), 'document')} {are} not in the cache (--cache-only) and "
                         f"scored as empty; run without --cache-only to ask the server for "
                         f"{'it' if len(missing) == 1 else 'them'}")
        if context:
            does = "does" if len(context) == 1 else "do"
            lines.append(f"warning: {plural(len(context), 'document')} {does} not fit the model's context (reason "
                         f"context in {listed}) and {'is' if len(context) == 1 else 'are'} scored as empty; a rerun "
                         "cannot help: use fewer --shots, --max-demo-tokens, a lower --max-tokens, or a longer "
                         "context")
        if self.server_down is not None:
            lines.append(f"warning: the server stopped answering ({self.server_down}); "
                         f"{plural(len(unsent), 'document')} not attempted (reason not_attempted in {listed}); "
                         "start the server and rerun the same command to ask only for the unanswered ones")
        if other:
            one = other == 1
            lines.append(
                f"warning: {plural(other, 'document')} failed (listed in {listed}); "
                f"{'it is scored as an empty prediction' if one else 'they are scored as empty predictions'}; "
                f"rerun the same command to retry only {'it' if one else 'them'}"
            )
        return "\n".join(lines)


def _sum_usage(total: dict[str, int], usage: Any) -> None:
    if isinstance(usage, dict):
        for k, v in usage.items():
            # a count the server cannot mean (-10 tokens) is unknown, not added: a cache entry written before
            # replies were checked may hold one
            if server_count(v) is not None:
                total[k] = total.get(k, 0) + v


def _context_warning(over: list[tuple[str, int]], sent: int, context: int, source: str, max_tokens: int,
                     tokens_source: str) -> str:
    shown = ", ".join(f"{f} {t:,} tokens" for f, t in over[:3]) + (", ..." if len(over) > 3 else "")
    return (f"warning: {plural(len(over), 'prompt')} of the {sent:,} to send may not fit the context of {context:,} "
            f"tokens ({source}) with --max-tokens {max_tokens:,} ({tokens_source}): {shown}; they are sent "
            "anyway: a server that refuses them lists them in failures.json with its reason, one that cuts them "
            "(Ollama) answers from a truncated prompt")


def run_prompts(
    prompts_dir: str | os.PathLike[str],
    out: str | os.PathLike[str],
    client: ChatClient,
    *,
    concurrency: int = 1,
    cache_dir: str | os.PathLike[str] | None = None,
    cache_only: bool = False,
    progress: bool = True,
    context: int | None = None,
    notify: Callable[[str], None] | None = None,
) -> RunResult:
    """Answer every prompt in PROMPTS/index.json; write OUT/answers.json, OUT/failures.json, OUT/run.json.

    Before sending, and only when some prompt is not in the cache: asks the server for its models,
    context and slots (where it tells), counts the tokens of the prompts to send (with the server's
    tokenizer where it has one) and warns through ``notify`` about an unlisted ``--model``, prompts
    that may not fit ``context`` (or the server's), and more requests in flight than the server has
    slots. After ``client.dead_after`` requests in a row that cannot reach the server it stops
    sending and lists the rest as not attempted. Holds OUT for the whole run (a second run into it is
    refused), and refuses, before sending, an OUT inside PROMPTS or holding files no run wrote
    (``icl.run_folder``). Ctrl-C raises RunInterrupted.
    """
    if concurrency < 1:
        raise EnvbenchError(f"--concurrency must be at least 1, got {concurrency}")
    say = notify or (lambda _msg: None)
    index = read_index(prompts_dir)
    out_dir = Path(out)
    cache_root = Path(cache_dir) if cache_dir is not None else out_dir / "cache"
    cache = AnswerCache(cache_root)
    records = [read_prompt(prompts_dir, e["file"], e["title"]) for e in index["documents"]]
    for entry, rec in zip(index["documents"], records):
        if sha256_bytes(dumps_json(rec["messages"])) != entry["prompt_sha256"]:
            raise EnvbenchError(
                f"{Path(prompts_dir) / entry['file']} was changed after index.json was written; "
                "rebuild the prompts with `envbench icl prompts`"
            )
    check_places(prompts_dir, out_dir, cache_root)
    made = [f for f in (out_dir, cache_root) if not f.exists()]  # what a run stopped early leaves empty is removed
    held = hold_out(out_dir)
    try:
        check_out(out_dir, cache_root)
        return _run_held(index, records, prompts_dir, out_dir, client, cache, cache_root, concurrency, cache_only,
                         progress, context, say)
    except BaseException:
        remove_empty(made)
        raise
    finally:
        os.close(held)


@dataclass
class _Before:
    """What was learnt before sending: the server's facts, the context the prompts are checked against, the
    prompts' token counts, those over the context, and the lines said about them."""

    server: ServerInfo
    context: int | None
    context_source: str | None
    counts: TokenCounts = field(default_factory=lambda: TokenCounts({}, "", False))
    over: list[tuple[str, int]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _run_held(index: dict[str, Any], records: list[dict[str, Any]], prompts_dir: str | os.PathLike[str],
              out_dir: Path, client: ChatClient, cache: AnswerCache, cache_root: Path, concurrency: int,
              cache_only: bool, progress: bool, context: int | None, say: Callable[[str], None]) -> RunResult:
    start = time.monotonic()
    stop = client.cancel
    stop.clear()
    client.down.clear()
    # only the prompts to send are worth a question to the server, a token count or a warning
    pending = [] if cache_only else [i for i, rec in enumerate(records)
                                      if cache.get(client.cache_key(rec["messages"])) is None]
    try:
        before = _before_sending(index, records, pending, out_dir, client, concurrency, context)
        for w in before.warnings:
            say(w)
        answers, stats = _run(index, records, client, cache, concurrency, cache_only, progress, stop)
    except KeyboardInterrupt:
        stop.set()
        raise _interrupted(index, records, client, cache, cache_root) from None
    return _write_records(index, records, prompts_dir, out_dir, client, answers, stats, before, concurrency,
                          cache_only, time.monotonic() - start)


def _before_sending(index: dict[str, Any], records: list[dict[str, Any]], pending: list[int], out_dir: Path,
                    client: ChatClient, concurrency: int, context: int | None) -> _Before:
    """Ask the server about itself when some prompt is to be sent (``pending``), and say what may go wrong: an
    unlisted --model, more requests in flight than slots, prompts that may not fit the context."""
    last = last_server(out_dir)
    before = _Before(ServerInfo(models=last.get("models"), slots=last.get("slots")), context,
                     "--context" if context is not None else None)
    if not pending:
        return before
    server, warnings = before.server, before.warnings
    probed = probe_server(client)
    if probed.silent:
        warnings.append(f"note: {' and '.join(probed.silent)} gave no reply within {probed.waited:g} s (a busy "
                        "server?); what it would tell (model names, context, slots) was not checked")
    server.models = probed.models if probed.models is not None else server.models
    server.slots = probed.slots if probed.slots is not None else server.slots
    if probed.models is not None and client.model not in probed.models:
        warnings.append(f"warning: --model {client.model} is not among the models {models_url(client.base_url)} "
                        f"lists ({', '.join(probed.models[:10]) or 'none'}); check the name")
    if probed.slots is not None and concurrency > probed.slots:
        warnings.append(f"warning: --concurrency {concurrency} but the server has {plural(probed.slots, 'slot')}; "
                        "the other requests wait in its queue, and that wait counts against --timeout")
    if before.context is None and probed.context is not None:
        before.context, before.context_source = probed.context, probed.context_source
    if before.context is None and probed.answered:
        warnings.append("note: the server reports no context size (asked /v1/models and /props); pass "
                        "--context N to have prompts that may not fit named before sending")
    elif before.context is not None:
        before.counts = counts = count_prompt_tokens(client, records, pending, index["params"].get("template", ""))
        before.over = [(index["documents"][i]["file"], counts.tokens[i]) for i in pending
                       if counts.tokens[i] + client.max_tokens > before.context]
        if before.over:
            warnings.append(_context_warning(before.over, len(pending), before.context, before.context_source or "",
                                             client.max_tokens, counts.source))
    return before


def _write_records(index: dict[str, Any], records: list[dict[str, Any]], prompts_dir: str | os.PathLike[str],
                   out_dir: Path, client: ChatClient, answers: list[dict[str, Any] | None], stats: dict[str, Any],
                   before: _Before, concurrency: int, cache_only: bool, seconds: float) -> RunResult:
    """Write OUT/answers.json, OUT/failures.json and OUT/run.json, in that order; the result says the same."""
    counts = before.counts
    final = [a for a in answers if a is not None]
    failures = [{"file": a["file"], "title": a["title"], "reason": a["reason"], "error": a["error"]}
                for a in final if a["answer"] is None]
    tokens_by_file = {index["documents"][i]["file"]: n for i, n in counts.tokens.items()}
    for f in failures:
        if f["file"] in tokens_by_file:
            f["prompt_tokens"] = tokens_by_file[f["file"]]
    usage: dict[str, int] = {}
    chars = prompt_tokens = 0
    for a, rec in zip(final, records):
        _sum_usage(usage, a.get("usage"))
        if isinstance(a.get("usage"), dict) and server_count(a["usage"].get("prompt_tokens"), least=1) is not None:
            chars += sum(len(m["content"]) for m in rec["messages"])
            prompt_tokens += a["usage"]["prompt_tokens"]
    truncated = sum(1 for a in final if a["finish_reason"] == "length")
    for a in final:  # answers.json depends only on the answers, so a rerun from cache rewrites it byte for byte
        a.pop("reason", None)
    # answers.json first: it carries the format marker by which a rerun knows the folder for a run's
    # (failures.json has none), so a run stopped between the writes leaves a folder it may write into again
    write_json_atomic(out_dir / "answers.json", {"format": RUN_FORMAT, "model": client.model,
                                                 "params": client.params, "answers": final}, indent=True)
    write_json_atomic(out_dir / "failures.json", failures, indent=True)
    down = stats["server_down"]
    res = RunResult(out_dir, len(final), stats["answered"], stats["hits"], stats["requests"], failures, truncated,
                    usage, dict(sorted(stats["retries"].items())), stats["latencies"], seconds, cache_only,
                    before.warnings, before.context, before.context_source, client.max_tokens, counts.source or None,
                    tokens_by_file, down)
    lat = stats["latencies"]
    measured = sorted(counts.tokens.values())
    write_json_atomic(out_dir / "run.json", {
        "format": RUN_FORMAT, "prompts": str(prompts_dir), "model": client.model,
        "base_url": client.base_url, "params": client.params, "documents": res.documents,
        "answered": res.documents - len(failures), "failed": len(failures), "truncated": truncated,
        "usage": usage,  # over every answer, cached or new
        "chars_per_prompt_token": round(chars / prompt_tokens, 3) if prompt_tokens else None,
        "this_run": {
            "cache_hits": res.cache_hits, "answered": res.answered, "requests": res.requests,
            "retries": res.retries, "failed": len(failures), "cache_only": cache_only,
            "not_attempted": len(res.by_reason("not_attempted")), "server_down": down,
            "concurrency": concurrency, "seconds": round(seconds, 3),
            "latency_s": {"median": round(median(lat), 3), "p95": round(quantile(lat, 0.95), 3),
                          "max": round(max(lat, default=0.0), 3)} if lat else None,
        },
        "context": {"tokens": before.context, "source": before.context_source, "prompts_over": len(before.over),
                    "prompt_tokens": {"source": counts.source, "measured": counts.measured,
                                      "min": measured[0], "median": round(median(measured)),
                                      "max": measured[-1]} if measured else None},
        "server": {"models": before.server.models, "slots": before.server.slots},
    }, indent=True)
    return res


def _run(index: dict[str, Any], records: list[dict[str, Any]], client: ChatClient,
         cache: AnswerCache, concurrency: int, cache_only: bool, progress: bool,
         stop: threading.Event) -> tuple[list[dict[str, Any] | None], dict[str, Any]]:
    """Answer the records with ``concurrency`` daemon threads; the main thread only collects."""
    answers: list[dict[str, Any] | None] = [None] * len(records)
    stats: dict[str, Any] = {"requests": 0, "hits": 0, "answered": 0, "retries": Counter(), "latencies": [],
                             "server_down": None}

    def work(i: int) -> dict[str, Any] | None:
        rec = records[i]
        file = index["documents"][i]["file"]
        key = client.cache_key(rec["messages"])
        base = {"file": file, "title": rec["title"], "key": key, "prompt_sha256": rec["prompt_sha256"]}
        hit = cache.get(key)
        if hit is not None:
            finish = hit.get("finish_reason")
            return {**base, "answer": hit["content"], "finish_reason": finish if isinstance(finish, str) else None,
                    "usage": usage_counts(hit.get("usage")) or None, "error": None, "cached": True, "attempts": 0, "retries": []}
        if cache_only:
            return {**base, "answer": None, "finish_reason": None, "usage": None, "reason": "not_cached",
                    "error": "not in the cache (--cache-only)", "cached": False, "attempts": 0, "retries": []}
        if stop.is_set():
            return None
        if client.down.is_set():  # the server is gone: list the document rather than knock again
            return {**base, "answer": None, "finish_reason": None, "usage": None, "reason": "not_attempted",
                    "error": "not sent: the server had stopped answering", "cached": False, "attempts": 0,
                    "retries": []}
        try:
            reply = client.complete(rec["messages"], key, label=file)
        except Stopped:
            return None
        except RequestFailed as exc:
            return {**base, "answer": None, "finish_reason": None, "usage": None, "reason": exc.reason,
                    "error": str(exc), "cached": False, "attempts": exc.attempts, "retries": exc.retries}
        comp = reply.completion
        cache.put(key, {"key": key, "model": client.model, "params": client.params, "messages": rec["messages"],
                        "content": comp.content, "finish_reason": comp.finish_reason, "usage": comp.usage,
                        "latency_s": round(comp.latency_s, 3), "attempts": reply.attempts})
        return {**base, "answer": comp.content, "finish_reason": comp.finish_reason, "usage": comp.usage or None,
                "error": None, "cached": False, "attempts": reply.attempts, "retries": reply.retries,
                "latency_s": comp.latency_s}

    jobs: queue.Queue[int] = queue.Queue()
    for i in range(len(records)):
        jobs.put(i)
    done: queue.Queue[tuple[int, dict[str, Any] | None, BaseException | None]] = queue.Queue()

    def worker() -> None:
        while not stop.is_set():
            try:
                i = jobs.get_nowait()
            except queue.Empty:
                return
            try:
                done.put((i, work(i), None))
            except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which raises it
                stop.set()  # at once: every other document would fail the same way, so send nothing more
                done.put((i, None, exc))
                return

    bar = _progress(len(records), progress)
    # daemon threads: a request in flight never holds the process once the main thread has stopped
    threads = [threading.Thread(target=worker, name=f"icl-{n}", daemon=True)
               for n in range(min(concurrency, max(len(records), 1)))]
    for t in threads:
        t.start()
    try:
        received = 0
        while received < len(records):
            try:
                i, res, exc = done.get(timeout=0.1)  # a timed wait: Ctrl-C is seen within 0.1 s
            except queue.Empty:
                if not any(t.is_alive() for t in threads) and done.empty():
                    break  # every worker ended early (stopped): nothing more will come
                continue
            received += 1
            if exc is not None:
                stop.set()  # every other document would fail the same way: send nothing more
                raise exc
            if res is None:
                continue
            answers[i] = res
            stats["requests"] += res.pop("attempts")
            stats["retries"].update(res.pop("retries"))
            if "latency_s" in res:
                stats["latencies"].append(res.pop("latency_s"))
            if res.pop("cached"):
                stats["hits"] += 1
            elif res["answer"] is not None:
                stats["answered"] += 1
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    if client.down.is_set():
        stats["server_down"] = (f"{plural(client.dead_after, 'request')} in a row could not connect, the last: "
                                f"{client.last_connection_error}")
    return answers, stats


def _interrupted(index: dict[str, Any], records: list[dict[str, Any]], client: ChatClient, cache: AnswerCache,
                 cache_root: Path) -> RunInterrupted:
    cached = sum(1 for rec in records if cache.path(client.cache_key(rec["messages"])).exists())
    return RunInterrupted(
        f"interrupted: the cache {cache_root} holds answers for {cached:,} of the {plural(len(records), 'document')}; "
        "answers.json, failures.json and run.json were not written; rerun the same command to resume "
        "(cached answers are not asked again)"
    )


def _progress(total: int, enabled: bool) -> Any:
    if not enabled:
        return None
    from etl.progress import bar

    return bar(total=total, desc="icl run", unit="doc", enabled=enabled)


__all__ = ["MAX_CONCURRENCY", "RunInterrupted", "RunResult", "run_prompts"]
