"""A small, resumable client for OpenAI-compatible chat-completions servers (vLLM, Ollama, llama.cpp, OpenAI).

Standard library only (urllib + threads). Every answer is cached on disk under the sha256 of
(model, messages, sampling parameters), written atomically with its token usage and latency, so a
rerun costs no request, an interrupted run resumes where it stopped, and the accounting in
OUT/run.json covers every answer, cached or new. A document that still fails after the retries is
recorded in OUT/failures.json (with the server's full error text) and answered with ``null`` in
OUT/answers.json; the parser turns it into an empty prediction, so it stays in the recall denominator.

Ctrl-C (SIGINT) stops a run within a fraction of a second: requests in flight are abandoned (their
threads are daemons), answers cached so far stay, nothing else is written, and ``RunInterrupted``
says how to resume.
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envbench.core.errors import EnvbenchError
from envbench.core.seeding import stable_uniform
from etl.io import dumps_json, read_json, sha256_bytes, write_json_atomic
from icl.prompts import CHARS_PER_TOKEN, read_index, read_prompt
from icl.util import median, plural, quantile

RETRY_STATUS = frozenset({408, 409, 425, 429}) | frozenset(range(500, 600))
FATAL_STATUS = {
    401: "the server refused the API key; export the key in the variable named by --api-key-env",
    403: "the server refused the API key; export the key in the variable named by --api-key-env",
    404: "no chat-completions endpoint there; check --base-url (e.g. http://localhost:8000/v1) and --model",
}
RUN_FORMAT = "envbench-icl-run/1"
ERROR_TEXT_LIMIT = 20_000  # characters of a server's error body kept in failures.json (an HTML page can be huge)
LONG_WAIT_S = 5.0  # waits at least this long are announced (what for, and for how long)
# phrases servers use when a prompt does not fit: vLLM, llama.cpp, llama-cpp-python, OpenAI, Ollama
_CONTEXT_WORDS = ("context length", "context window", "maximum context", "context size", "too long",
                  "exceeds the", "exceed context", "n_ctx", "max_model_len", "prompt is too long")


class RetryableError(Exception):
    """A failure worth another try (429, 5xx, timeout, dropped connection, cut or garbled reply)."""

    def __init__(self, message: str, retry_after: float | None = None, cause: str = "other") -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.cause = cause  # the key under which run.json counts the retry


class RequestFailed(Exception):
    """A failure of one document that retrying will not fix (e.g. 400: prompt too long), or the last retry."""

    def __init__(self, message: str, reason: str = "http", attempts: int = 1,
                 retries: list[str] | None = None) -> None:
        super().__init__(message)
        self.reason = reason  # "context", "http", "no_content" or "retries_exhausted"
        self.attempts = attempts
        self.retries = retries or []


class FatalError(EnvbenchError):
    """A failure every document would share (bad key, wrong URL): the run stops."""


class Stopped(Exception):
    """The run was stopped (Ctrl-C, or a fatal error elsewhere) while this request waited."""


class RunInterrupted(EnvbenchError):
    """Ctrl-C: the message says what was kept and how to resume."""


def endpoint_url(base_url: str) -> str:
    """The chat-completions URL: ``.../v1`` gets ``/chat/completions``; a bare host gets ``/v1/chat/completions``."""
    url = base_url.rstrip("/")
    if url.endswith("/chat/completions"):
        return url
    if urllib.parse.urlsplit(url).path in ("", "/"):
        return url + "/v1/chat/completions"
    return url + "/chat/completions"


def models_url(base_url: str) -> str:
    """The model list beside the chat-completions endpoint (``.../v1/models``)."""
    return endpoint_url(base_url)[: -len("/chat/completions")] + "/models"


@dataclass(frozen=True)
class Completion:
    content: str
    finish_reason: str | None
    usage: dict[str, Any]
    latency_s: float = 0.0  # seconds from sending the request to the whole reply (queue time included)


@dataclass(frozen=True)
class Reply:
    """A completion and what it took: attempts, and the cause of each retry."""

    completion: Completion
    attempts: int
    retries: list[str]


@dataclass
class ChatClient:
    """Posts chat-completion requests with retries, exponential backoff and deterministic jitter."""

    base_url: str
    model: str
    api_key: str | None = None
    temperature: float = 0.0
    max_tokens: int = 2048
    timeout: float = 120.0  # seconds of silence per request (socket reads); a queued request counts too
    retries: int = 6  # further tries after the first
    backoff: float = 1.0  # first delay in seconds; doubles each retry
    max_wait: float = 60.0  # the longest single wait before a retry, Retry-After included
    stop: list[str] | None = None  # stop sequences (part of the cache key)
    seed: int | None = None  # sampling seed (part of the cache key)
    sleep: Callable[[float], None] | None = None  # replaced in tests; None waits on ``cancel``
    notify: Callable[[str], None] | None = None  # where "waiting N s for ..." lines go
    extra: dict[str, Any] = field(default_factory=dict)  # more request fields; a None value removes a field
    reached: bool = field(default=False, repr=False)  # set once any HTTP reply came back
    cancel: threading.Event = field(default_factory=threading.Event, repr=False)  # set: stop waiting and sending

    @property
    def params(self) -> dict[str, Any]:
        """The sampling parameters that decide an answer (part of the cache key)."""
        params: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.stop:  # only when set, so the keys of earlier answers stay valid
            params["stop"] = list(self.stop)
        if self.seed is not None:
            params["seed"] = self.seed
        if self.extra:
            params["extra"] = self.extra
        return params

    def body(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages,
                                "temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.stop:
            body["stop"] = list(self.stop)
        if self.seed is not None:
            body["seed"] = self.seed
        for k, v in self.extra.items():
            if v is None:
                body.pop(k, None)
            else:
                body[k] = v
        return body

    def cache_key(self, messages: list[dict[str, str]]) -> str:
        return sha256_bytes(dumps_json({"model": self.model, "messages": messages, "params": self.params}))

    def delay(self, key: str, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry ``attempt`` (1-based): doubling backoff times a jitter in [0.5, 1),
        or the server's Retry-After when longer; never more than ``max_wait``."""
        base = min(self.max_wait, self.backoff * 2 ** (attempt - 1))
        wait_s = base * (0.5 + 0.5 * stable_uniform(key, attempt))
        if retry_after is not None:
            wait_s = max(wait_s, min(retry_after, self.max_wait))
        return wait_s

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def post_once(self, messages: list[dict[str, str]]) -> Completion:
        body = self.body(messages)
        req = urllib.request.Request(endpoint_url(self.base_url), data=json.dumps(body).encode("utf-8"),
                                     headers=self._headers(), method="POST")
        start = time.monotonic()
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
            self.reached = True
        except urllib.error.HTTPError as exc:
            self.reached = True
            detail = _error_detail(exc)
            if exc.code in FATAL_STATUS:
                raise FatalError(
                    f"HTTP {exc.code} from {endpoint_url(self.base_url)}{detail}; {FATAL_STATUS[exc.code]}"
                ) from None
            if exc.code in RETRY_STATUS:
                cause = "http_429" if exc.code == 429 else "http_5xx" if exc.code >= 500 else f"http_{exc.code}"
                raise RetryableError(f"HTTP {exc.code}{detail}", _retry_after(exc), cause) from None
            if exc.code in (400, 413, 422) and any(w in detail.lower() for w in _CONTEXT_WORDS):
                raise RequestFailed(
                    f"HTTP {exc.code}{detail} (the prompt and --max-tokens {self.max_tokens} do not fit the model's "
                    "context; use fewer --shots, --max-demo-tokens, a lower --max-tokens, or a longer context)",
                    reason="context") from None
            raise RequestFailed(f"HTTP {exc.code}{detail}") from None
        except TimeoutError:
            raise RetryableError(f"timed out after {self.timeout:g} s without a reply (time spent waiting in "
                                 "the server's queue counts)", cause="timeout") from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise RetryableError(f"timed out after {self.timeout:g} s without a reply (time spent waiting "
                                     "in the server's queue counts)", cause="timeout") from None
            if isinstance(exc.reason, ConnectionRefusedError) and not self.reached:
                # nothing listens there: retrying every document for minutes would only hide that
                raise FatalError(
                    f"cannot connect to {endpoint_url(self.base_url)} ({exc.reason.strerror or exc.reason}); "
                    "start the server or fix --base-url"
                ) from None
            raise RetryableError(f"connection failed: {exc.reason}", cause="connection") from None
        except http.client.IncompleteRead as exc:  # the reply stopped short of its Content-Length
            raise RetryableError(f"reply cut short: {len(exc.partial):,} bytes of "
                                 f"{len(exc.partial) + (exc.expected or 0):,} arrived", cause="incomplete_reply") from None
        except (ConnectionError, http.client.HTTPException, OSError) as exc:  # reset, closed or garbled mid-response
            raise RetryableError(f"connection failed: {type(exc).__name__}: {exc}", cause="connection") from None
        latency = time.monotonic() - start
        try:
            data = json.loads(raw)
            choice = data["choices"][0]
            content = choice["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise RetryableError(f"reply is not a chat completion: {_clip(raw.decode('utf-8', 'replace'))!r}",
                                 cause="not_a_completion") from None
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        finish = choice.get("finish_reason") if isinstance(choice, dict) else None
        if content is None and finish == "length":
            # a reasoning model spent --max-tokens thinking: an empty answer, counted as cut off
            return Completion("", finish, usage, latency)
        if not isinstance(content, str):
            # at temperature 0 the same prompt gets the same reply: asking again only wastes the backoff
            raise RequestFailed(f"reply has no text content (finish_reason {finish!r})", reason="no_content")
        return Completion(content, finish, usage, latency)

    def _wait(self, seconds: float) -> None:
        if self.sleep is not None:
            self.sleep(seconds)
        elif self.cancel.wait(seconds):
            raise Stopped()
        if self.cancel.is_set():
            raise Stopped()

    def complete(self, messages: list[dict[str, str]], key: str | None = None, label: str = "") -> Reply:
        """The completion, its attempts and retry causes; raises RequestFailed after the last retry."""
        key = key or self.cache_key(messages)
        attempt = 0
        causes: list[str] = []
        while True:
            attempt += 1
            if self.cancel.is_set():
                raise Stopped()
            try:
                return Reply(self.post_once(messages), attempt, causes)
            except RetryableError as exc:
                if attempt > self.retries:
                    raise RequestFailed(f"{exc} (gave up after {plural(attempt, 'attempt')})", "retries_exhausted",
                                        attempt, causes) from None
                causes.append(exc.cause)
                wait_s = self.delay(key, attempt, exc.retry_after)
                if wait_s >= LONG_WAIT_S and self.notify is not None:
                    asked = ""
                    if exc.retry_after is not None and exc.retry_after > self.max_wait:
                        asked = f"; the server asked for {exc.retry_after:g} s (Retry-After), capped by --max-wait"
                    self.notify(f"waiting {wait_s:.0f} s before retry {attempt} of {self.retries} for "
                                f"{label or key[:12]} ({exc}{asked})")
                self._wait(wait_s)
            except RequestFailed as exc:
                exc.attempts, exc.retries = attempt, causes
                exc.args = (f"{exc} (attempt {attempt}; not retried)",)
                raise


def _clip(text: str, limit: int = ERROR_TEXT_LIMIT) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text) - limit:,} more characters)"


def _error_detail(exc: urllib.error.HTTPError) -> str:
    try:
        text = exc.read().decode("utf-8", "replace").strip()
    except Exception:  # noqa: BLE001 - the status alone must still be reported
        text = ""
    return f": {_clip(text)}" if text else ""


def _retry_after(exc: urllib.error.HTTPError) -> float | None:
    value = exc.headers.get("Retry-After") if exc.headers else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:  # an HTTP date: the backoff decides
        return None


@dataclass
class ServerInfo:
    """What the server says about itself, where it says it (None: not offered)."""

    models: list[str] | None = None
    context: int | None = None  # tokens, from /v1/models (vLLM: max_model_len) or /props (llama.cpp)
    context_source: str | None = None
    slots: int | None = None  # parallel slots (llama.cpp /props total_slots)


def _get_json(url: str, headers: dict[str, str], timeout: float) -> Any:
    req = urllib.request.Request(url, headers=headers, method="GET")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.loads(resp.read())
    except (OSError, ValueError, http.client.HTTPException):  # not offered, or not JSON: nothing learnt
        return None


def probe_server(client: ChatClient, timeout: float = 10.0) -> ServerInfo:
    """Ask ``/v1/models`` (and llama.cpp's ``/props``) for model names, context length and parallel slots."""
    info = ServerInfo()
    headers = {k: v for k, v in client._headers().items() if k != "Content-Type"}
    wait = min(timeout, client.timeout)
    data = _get_json(models_url(client.base_url), headers, wait)
    entries = data.get("data") if isinstance(data, dict) else None
    if isinstance(entries, list):
        info.models = [e["id"] for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str)]
        for e in entries:
            if isinstance(e, dict) and e.get("id") == client.model:
                for key in ("max_model_len", "context_length", "context_window"):
                    if isinstance(e.get(key), int) and e[key] > 0:
                        info.context, info.context_source = e[key], f"/v1/models {key}"
                        break
    parts = urllib.parse.urlsplit(client.base_url)
    props = _get_json(f"{parts.scheme}://{parts.netloc}/props", headers, wait)
    if isinstance(props, dict):
        if isinstance(props.get("total_slots"), int):
            info.slots = props["total_slots"]
        settings = props.get("default_generation_settings")
        n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
        if info.context is None and isinstance(n_ctx, int) and n_ctx > 0:
            info.context, info.context_source = n_ctx, "/props n_ctx"
    return info


class AnswerCache:
    """CACHE/<key[:2]>/<key>.json, one file per answer, each written atomically."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        p = self.path(key)
        if not p.exists():
            return None
        try:
            entry = read_json(p, what="cache entry")
        except Exception:  # noqa: BLE001 - a damaged entry is simply asked again
            return None
        return entry if isinstance(entry, dict) and isinstance(entry.get("content"), str) else None

    def put(self, key: str, entry: dict[str, Any]) -> None:
        write_json_atomic(self.path(key), entry, indent=True)


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
        missing = [f for f in self.failed if f.get("reason") == "not_cached"]
        other = len(self.failed) - len(missing)
        if missing:
            are = "is" if len(missing) == 1 else "are"
            lines.append(f"warning: {plural(len(missing), 'document')} {are} not in the cache (--cache-only) and "
                         f"scored as empty; run without --cache-only to ask the server for "
                         f"{'it' if len(missing) == 1 else 'them'}")
        if other:
            one = other == 1
            lines.append(
                f"warning: {plural(other, 'document')} failed (listed in {self.out / 'failures.json'}); "
                f"{'it is scored as an empty prediction' if one else 'they are scored as empty predictions'}; "
                f"rerun the same command to retry only {'it' if one else 'them'}"
            )
        return "\n".join(lines)


def _sum_usage(total: dict[str, int], usage: Any) -> None:
    if isinstance(usage, dict):
        for k, v in usage.items():
            if isinstance(v, int) and not isinstance(v, bool):
                total[k] = total.get(k, 0) + v


def _context_warning(index: dict[str, Any], records: list[dict[str, Any]], context: int, source: str,
                     max_tokens: int) -> tuple[str | None, int]:
    ratio = CHARS_PER_TOKEN.get(index["params"].get("template", ""), min(CHARS_PER_TOKEN.values()))
    over = []
    for entry, rec in zip(index["documents"], records):
        est = round(sum(len(m["content"]) for m in rec["messages"]) / ratio)
        if est + max_tokens > context:
            over.append((entry["file"], est))
    if not over:
        return None, 0
    shown = ", ".join(f"{f} ~{t:,}" for f, t in over[:3]) + (", ..." if len(over) > 3 else "")
    return (f"warning: {plural(len(over), 'prompt')} of {len(records):,} may not fit the context of {context:,} tokens "
            f"({source}) with --max-tokens {max_tokens:,}: estimated at {ratio} chars per token, {shown}; they are "
            "sent anyway: a server that refuses them lists them in failures.json with its reason, one that cuts "
            "them (Ollama) answers from a truncated prompt"), len(over)


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

    Before sending: asks the server for its models, context and slots (where it tells) and warns
    through ``notify`` about an unlisted ``--model``, prompts that may not fit ``context`` (or the
    server's), and more requests in flight than the server has slots. Ctrl-C raises RunInterrupted.
    """
    if concurrency < 1:
        raise EnvbenchError(f"--concurrency must be at least 1, got {concurrency}")
    say = notify or (lambda _msg: None)
    index = read_index(prompts_dir)
    out_dir = Path(out)
    cache_root = Path(cache_dir) if cache_dir is not None else out_dir / "cache"
    cache = AnswerCache(cache_root)
    records = [read_prompt(prompts_dir, e["file"]) for e in index["documents"]]
    for entry, rec in zip(index["documents"], records):
        if sha256_bytes(dumps_json(rec["messages"])) != entry["prompt_sha256"]:
            raise EnvbenchError(
                f"{Path(prompts_dir) / entry['file']} was changed after index.json was written; "
                "rebuild the prompts with `envbench icl prompts`"
            )
    start = time.monotonic()
    stop = client.cancel
    stop.clear()
    warnings: list[str] = []
    server = ServerInfo()
    context_source = "--context" if context is not None else None
    try:
        if not cache_only:
            server = probe_server(client)
            if server.models is not None and client.model not in server.models:
                warnings.append(f"warning: --model {client.model} is not among the models {models_url(client.base_url)} "
                                f"lists ({', '.join(server.models[:10]) or 'none'}); check the name")
            if server.slots is not None and concurrency > server.slots:
                warnings.append(f"warning: --concurrency {concurrency} but the server has {plural(server.slots, 'slot')}; "
                                "the other requests wait in its queue, and that wait counts against --timeout")
            if context is None and server.context is not None:
                context, context_source = server.context, server.context_source
        over = 0
        if context is not None and not cache_only:
            text, over = _context_warning(index, records, context, context_source or "", client.max_tokens)
            if text:
                warnings.append(text)
        for w in warnings:
            say(w)
        result = _run(index, records, out_dir, client, cache, concurrency, cache_only, progress, stop)
    except KeyboardInterrupt:
        stop.set()
        raise _interrupted(index, records, client, cache, cache_root) from None
    answers, stats = result
    final = [a for a in answers if a is not None]
    failures = [{"file": a["file"], "title": a["title"], "reason": a["reason"], "error": a["error"]}
                for a in final if a["answer"] is None]
    usage: dict[str, int] = {}
    chars = prompt_tokens = 0
    for a, rec in zip(final, records):
        _sum_usage(usage, a.get("usage"))
        if isinstance(a.get("usage"), dict) and isinstance(a["usage"].get("prompt_tokens"), int):
            chars += sum(len(m["content"]) for m in rec["messages"])
            prompt_tokens += a["usage"]["prompt_tokens"]
    truncated = sum(1 for a in final if a["finish_reason"] == "length")
    for a in final:  # answers.json depends only on the answers, so a rerun from cache rewrites it byte for byte
        a.pop("reason", None)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out_dir / "failures.json", failures, indent=True)
    write_json_atomic(out_dir / "answers.json", {"format": RUN_FORMAT, "model": client.model,
                                                 "params": client.params, "answers": final}, indent=True)
    seconds = time.monotonic() - start
    res = RunResult(out_dir, len(final), stats["answered"], stats["hits"], stats["requests"], failures, truncated,
                    usage, dict(sorted(stats["retries"].items())), stats["latencies"], seconds, cache_only, warnings)
    lat = stats["latencies"]
    write_json_atomic(out_dir / "run.json", {
        "format": RUN_FORMAT, "prompts": str(prompts_dir), "model": client.model,
        "base_url": client.base_url, "params": client.params, "documents": res.documents,
        "answered": res.documents - len(failures), "failed": len(failures), "truncated": truncated,
        "usage": usage,  # over every answer, cached or new
        "chars_per_prompt_token": round(chars / prompt_tokens, 3) if prompt_tokens else None,
        "this_run": {
            "cache_hits": res.cache_hits, "answered": res.answered, "requests": res.requests,
            "retries": res.retries, "failed": len(failures), "cache_only": cache_only,
            "concurrency": concurrency, "seconds": round(seconds, 3),
            "latency_s": {"median": round(median(lat), 3), "p95": round(quantile(lat, 0.95), 3),
                          "max": round(max(lat, default=0.0), 3)} if lat else None,
        },
        "context": {"tokens": context, "source": context_source, "prompts_over_estimate": over},
        "server": {"models": server.models, "slots": server.slots},
    }, indent=True)
    return res


def _run(index: dict[str, Any], records: list[dict[str, Any]], out_dir: Path, client: ChatClient,
         cache: AnswerCache, concurrency: int, cache_only: bool, progress: bool,
         stop: threading.Event) -> tuple[list[dict[str, Any] | None], dict[str, Any]]:
    """Answer the records with ``concurrency`` daemon threads; the main thread only collects."""
    answers: list[dict[str, Any] | None] = [None] * len(records)
    stats: dict[str, Any] = {"requests": 0, "hits": 0, "answered": 0, "retries": Counter(), "latencies": []}

    def work(i: int) -> dict[str, Any] | None:
        rec = records[i]
        file = index["documents"][i]["file"]
        key = client.cache_key(rec["messages"])
        base = {"file": file, "title": rec["title"], "key": key, "prompt_sha256": rec["prompt_sha256"]}
        hit = cache.get(key)
        if hit is not None:
            return {**base, "answer": hit["content"], "finish_reason": hit.get("finish_reason"),
                    "usage": hit.get("usage") or None, "error": None, "cached": True, "attempts": 0, "retries": []}
        if cache_only:
            return {**base, "answer": None, "finish_reason": None, "usage": None, "reason": "not_cached",
                    "error": "not in the cache (--cache-only)", "cached": False, "attempts": 0, "retries": []}
        if stop.is_set():
            return None
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
    from tqdm import tqdm

    return tqdm(total=total, desc="icl run", unit="doc", disable=None, file=None)
