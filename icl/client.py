"""A small, resumable client for OpenAI-compatible chat-completions servers (vLLM, Ollama, llama.cpp, OpenAI).

Standard library only (http.client + threads; one watchdog per request bounds it whole). Every answer is cached on disk under the sha256 of
(model, messages, sampling parameters), written atomically with its token usage and latency, so a
rerun costs no request, an interrupted run resumes where it stopped, and the accounting in
OUT/run.json covers every answer, cached or new. A document that still fails after the retries is
recorded in OUT/failures.json (with the server's full error text) and answered with ``null`` in
OUT/answers.json; the parser turns it into an empty prediction, so it stays in the recall denominator.

Ctrl-C (SIGINT) stops a run within a fraction of a second: requests in flight are abandoned (their
threads are daemons), answers cached so far stay, nothing else is written, and ``RunInterrupted``
says how to resume. A run holds its output folder (flock) from start to end, and stops sending once
``DEAD_AFTER`` requests in a row could not reach the server, listing the rest as not attempted.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import queue
import re
import socket
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envbench.core.errors import EnvbenchError
from envbench.core.seeding import stable_uniform
from etl.io import dumps_json, listed, read_json, sha256_bytes, write_json_atomic
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
# A whole reply is bounded by this. A chat completion of 1024 tokens is a few kB (100 kB with logprobs); a
# bigger reply is no completion, and reading 200 MB of it took 612 MB of memory.
MAX_REPLY_BYTES = 8 * 2**20
# --timeout's default, for the whole request. On a CPU server (SmolLM2-135M, llama-cpp-python, 2 busy cores)
# a 1-shot Re-DocRED prompt took 65-122 s; a 3-shot +DA +CG prompt is about 4 times longer, and a CPU
# server keeps computing a request the client gave up on, so a retry queues behind it: a timeout that is
# too short costs the work twice. docs/icl.md has the figures.
DEFAULT_TIMEOUT_S = 900.0
DEFAULT_MAX_TOKENS = 1024  # the reference code's value (THU-BPM/Env-DocRE icl/inference.py)
DEAD_AFTER = 3  # requests in a row that could not connect: the server is gone, stop sending
LONG_WAIT_S = 5.0  # waits at least this long are announced (what for, and for how long)
# The largest count of tokens (context, prompt, answer) or slots a server is believed. Contexts reach a few
# million tokens today; a larger number, a negative one, a bool or no integer at all is a broken reply, and
# taken as is it did harm: a max_model_len of 10**30 made run.json unwritable (orjson stores integers of 64
# bits only) after answers.json had been written, and a usage of -10 tokens was added up.
MAX_SERVER_COUNT = 10**9
# Bounds of the run's options (icl/cli.py), each recorded in run.json, whose JSON writer stores 64-bit integers only:
# --concurrency 10**20 and a --seed past 64 bits failed there after the answers were written. Threads in flight at
# most (hosted APIs take 8-32); further tries at most (the backoff doubles: 2**1024 is no float); seconds at most
# for --timeout, --backoff and --max-wait (a day; 1e300 s overflowed the clock).
MAX_CONCURRENCY = 1024
MAX_RETRIES = 100
MAX_WAIT_S = 86_400.0
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


# Request fields the harness sets itself. The first two are the run (run.json records --model, the prompts' messages):
# --extra-body may neither set nor remove them (`{"model": "other"}` asked another model under --model's name). The
# sampling fields come from options, which run.json records: where the harness sends one (temperature and max_tokens
# always, stop and seed when given), --extra-body may remove it (null: OpenAI reasoning models refuse max_tokens and
# a temperature other than 1) but not replace its value.
OWN_FIELDS = {"model": "--model", "messages": "the prompts folder"}
OPTION_FIELDS = {"temperature": "--temperature", "max_tokens": "--max-tokens", "stop": "--stop", "seed": "--seed"}


def check_extra_body(extra: dict[str, Any], sent: Collection[str] = tuple(OPTION_FIELDS)) -> None:
    """Refuse --extra-body fields that would replace what the harness sends (and records) itself; ``sent``: the
    sampling fields the request carries from their options."""
    for key, value in extra.items():
        if key in OWN_FIELDS:
            raise EnvbenchError(f"--extra-body sets {key!r}, which the harness sends from {OWN_FIELDS[key]} (and "
                                f"run.json records); leave {key!r} out of --extra-body")
        if key in sent and value is not None:
            raise EnvbenchError(f"--extra-body sets {key!r}, which {OPTION_FIELDS[key]} gives (and run.json "
                                f"records); pass {OPTION_FIELDS[key]} instead ({key!r}: null, which removes the "
                                "field, is allowed)")


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
    max_tokens: int = DEFAULT_MAX_TOKENS
    timeout: float = DEFAULT_TIMEOUT_S  # seconds for a whole request, connect to last byte; queue time counts
    retries: int = 6  # further tries after the first
    backoff: float = 1.0  # first delay in seconds; doubles each retry
    max_wait: float = 60.0  # the longest single wait before a retry, Retry-After included
    stop: list[str] | None = None  # stop sequences (part of the cache key)
    seed: int | None = None  # sampling seed (part of the cache key)
    sleep: Callable[[float], None] | None = None  # replaced in tests; None waits on ``cancel``
    notify: Callable[[str], None] | None = None  # where "waiting N s for ..." lines go
    extra: dict[str, Any] = field(default_factory=dict)  # more request fields; a None value removes a field
    dead_after: int = DEAD_AFTER  # requests in a row that cannot reach the server before the run stops sending
    reached: bool = field(default=False, repr=False)  # set once any HTTP reply came back
    cancel: threading.Event = field(default_factory=threading.Event, repr=False)  # set: stop waiting and sending
    down: threading.Event = field(default_factory=threading.Event, repr=False)  # set: the server stopped answering
    _failed_connects: int = field(default=0, repr=False)  # requests in a row that could not reach the server
    last_connection_error: str = field(default="", repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if not self.model.strip():  # an empty "model" reached the server, which answered under its default
            raise EnvbenchError("--model is empty; give the model name as the server knows it, e.g. --model "
                                "Qwen2.5-7B-Instruct")
        check_extra_body(self.extra, [k for k in OPTION_FIELDS if k in self._own_body([])])
        if self.api_key:
            check_api_key(self.api_key)

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

    def _own_body(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        """The request as the harness makes it, before --extra-body."""
        body: dict[str, Any] = {"model": self.model, "messages": messages,
                                "temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.stop:
            body["stop"] = list(self.stop)
        if self.seed is not None:
            body["seed"] = self.seed
        return body

    def body(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        body = self._own_body(messages)
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
        """One request. ``timeout`` bounds the whole exchange, from connecting to the last byte of the
        reply: a server that sends one byte now and then cannot hold a request past it."""
        url = endpoint_url(self.base_url)
        data = json.dumps(self.body(messages)).encode("utf-8")
        start = time.monotonic()
        try:
            status, headers, raw = _exchange("POST", url, data, self._headers(), self.timeout, MAX_REPLY_BYTES)
        except _TimedOut:
            raise RetryableError(f"timed out: no whole reply within {self.timeout:g} s (time spent waiting in the "
                                 "server's queue counts)", cause="timeout") from None
        except _TooLarge as exc:
            # at temperature 0 the same request gets the same reply: asking again only costs the transfer
            raise RequestFailed(f"the reply exceeds {MAX_REPLY_BYTES // 2**20} MiB ({exc}); a chat completion of "
                                f"--max-tokens {self.max_tokens} is far smaller: check that {url} is a "
                                "chat-completions server", reason="too_large") from None
        except _CutShort as exc:
            raise RetryableError(f"reply cut short: {exc.got:,} bytes of {exc.expected:,} arrived",
                                 cause="incomplete_reply") from None
        except ConnectionRefusedError as exc:
            if not self.reached:
                # nothing listens there: retrying every document for minutes would only hide that
                raise FatalError(f"cannot connect to {url} ({exc.strerror or exc}); start the server or fix "
                                 "--base-url") from None
            self._connection_failed(f"connection failed: {exc.strerror or exc}")
            raise RetryableError(f"connection failed: {exc.strerror or exc}", cause="connection") from None
        except (OSError, http.client.HTTPException) as exc:  # reset, closed, unreachable or garbled
            reason = getattr(exc, "strerror", None) or f"{type(exc).__name__}: {exc}"
            self._connection_failed(f"connection failed: {reason}")
            raise RetryableError(f"connection failed: {reason}", cause="connection") from None
        with self._lock:
            self.reached, self._failed_connects = True, 0  # the server answered: it is alive
        latency = time.monotonic() - start
        if status >= 300:
            self._raise_for_status(url, status, headers, raw)
        return _completion(raw, latency)

    def _raise_for_status(self, url: str, status: int, headers: dict[str, str], raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").strip()
        detail = f": {_clip(text)}" if text else ""
        if 300 <= status < 400:
            target = headers.get("location")
            where = f"redirects to {target}" if target else "redirects without naming where (no Location header)"
            raise FatalError(f"HTTP {status} from {url}: the server {where}; give that address as --base-url (a "
                             "redirect is not followed, since it would turn the POST into a GET)")
        if status in FATAL_STATUS:
            raise FatalError(f"HTTP {status} from {url}{detail}; {FATAL_STATUS[status]}")
        if status in RETRY_STATUS:
            cause = "http_429" if status == 429 else "http_5xx" if status >= 500 else f"http_{status}"
            raise RetryableError(f"HTTP {status}{detail}", _retry_after(headers.get("retry-after")), cause)
        if status in (400, 413, 422) and any(w in detail.lower() for w in _CONTEXT_WORDS):
            raise RequestFailed(
                f"HTTP {status}{detail} (the prompt and --max-tokens {self.max_tokens} do not fit the model's "
                "context; use fewer --shots, --max-demo-tokens, a lower --max-tokens, or a longer context)",
                reason="context")
        raise RequestFailed(f"HTTP {status}{detail}")

    def _connection_failed(self, text: str) -> None:
        with self._lock:
            self.last_connection_error = text
            self._failed_connects += 1
            if self._failed_connects >= self.dead_after:
                self.down.set()

    def _wait(self, seconds: float) -> None:
        if self.sleep is not None:
            self.sleep(seconds)
        elif self.cancel.wait(seconds):
            raise Stopped()
        if self.cancel.is_set():
            raise Stopped()

    def complete(self, messages: list[dict[str, str]], key: str | None = None, label: str = "") -> Reply:
        """The completion, its attempts and retry causes; raises RequestFailed after the last retry, or at
        once (reason "server_down") once ``dead_after`` requests in a row could not reach the server."""
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
                if self.down.is_set():
                    raise RequestFailed(f"{exc} (gave up after {plural(attempt, 'attempt')}: the server stopped "
                                        f"answering, {plural(self.dead_after, 'connection failure')} in a row)",
                                        "server_down", attempt, causes) from None
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


class _TimedOut(Exception):
    pass


class _TooLarge(Exception):
    pass


class _CutShort(Exception):
    def __init__(self, got: int, expected: int) -> None:
        super().__init__(f"{got} of {expected}")
        self.got, self.expected = got, expected


def _exchange(method: str, url: str, data: bytes | None, headers: dict[str, str], timeout: float,
              limit: int) -> tuple[int, dict[str, str], bytes]:
    """(status, lower-cased headers, body) of one HTTP exchange, redirects not followed.

    A watchdog shuts the socket at ``timeout`` seconds from the start, whatever phase the exchange is
    in (a socket timeout alone bounds each read, so a byte every few seconds would never end it);
    a body past ``limit`` bytes, announced or arriving, raises _TooLarge before it is all read.
    """
    parts = urllib.parse.urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    conn_type = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = conn_type(host, timeout=timeout)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    expired = threading.Event()
    sockets: list[socket.socket] = []

    def cut() -> None:
        expired.set()
        for s in sockets:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    watchdog = threading.Timer(timeout, cut)
    watchdog.daemon = True
    watchdog.start()
    try:
        conn.connect()
        if conn.sock is not None:
            sockets.append(conn.sock)
            if expired.is_set():
                cut()
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        announced = resp.getheader("Content-Length")
        if announced is not None and announced.isdigit() and int(announced) > limit:
            raise _TooLarge(f"it announces {int(announced):,} bytes")
        chunks: list[bytes] = []
        got = 0
        while True:
            chunk = resp.read1(1 << 16)
            if not chunk:
                break
            got += len(chunk)
            if got > limit:
                raise _TooLarge(f"more than {limit:,} bytes arrived")
            chunks.append(chunk)
        if expired.is_set():  # the watchdog's shutdown reads as the end of the reply
            raise _TimedOut()
        if resp.length:  # the connection closed before the announced length arrived
            raise _CutShort(got, got + resp.length)
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, b"".join(chunks)
    except (OSError, http.client.HTTPException) as exc:
        if expired.is_set() or isinstance(exc, TimeoutError):
            raise _TimedOut() from None
        raise
    finally:
        watchdog.cancel()
        conn.close()


def _completion(raw: bytes, latency: float) -> Completion:
    try:
        data = json.loads(raw)
        choice = data["choices"][0]
        content = choice["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError, RecursionError):  # RecursionError: absurdly deep JSON
        raise RetryableError(f"the reply is not a chat completion: {_clip(raw.decode('utf-8', 'replace'), 200)!r}",
                             cause="not_a_completion") from None
    usage = _usage(data.get("usage"))
    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
    finish = finish if isinstance(finish, str) else None  # it is cached: a number there could be any size
    if content is None and finish == "length":
        # a reasoning model spent --max-tokens thinking: an empty answer, counted as cut off
        return Completion("", finish, usage, latency)
    if not isinstance(content, str):
        # at temperature 0 the same prompt gets the same reply: asking again only wastes the backoff
        raise RequestFailed(f"reply has no text content (finish_reason {finish!r})", reason="no_content")
    return Completion(content, finish, usage, latency)


def server_count(value: Any, least: int = 0) -> int | None:
    """``value`` when it is a count a server can mean (an int, not a bool, from ``least`` to
    ``MAX_SERVER_COUNT``), else None: unknown, as if the server had not said it."""
    return value if type(value) is int and least <= value <= MAX_SERVER_COUNT else None


def _usage(value: Any) -> dict[str, Any]:
    """A reply's token usage with only the counts it can mean, one level of details deep
    (``prompt_tokens_details``); an implausible count is left out, i.e. unknown, never added up."""
    if not isinstance(value, dict):
        return {}
    out: dict[str, Any] = {}
    for k, v in value.items():
        if isinstance(v, dict):
            out[k] = {dk: dv for dk, dv in v.items() if server_count(dv) is not None}
        elif server_count(v) is not None:
            out[k] = v
    return out


def check_api_key(key: str, where: str = "the API key") -> None:
    """Refuse a key that an HTTP header cannot carry, naming ``where`` it came from but never the key."""
    if "\r" in key or "\n" in key:
        what = "a line break (CR or LF)"
    elif any(ord(c) < 32 or ord(c) == 127 for c in key):
        what = "a control character"
    elif not key.isascii():
        what = "a character that is not ASCII"
    else:
        return
    raise EnvbenchError(f"{where} holds {what}, which an HTTP header cannot carry; export the key alone, as the "
                        "provider shows it")


def _clip(text: str, limit: int = ERROR_TEXT_LIMIT) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text) - limit:,} more characters)"


def _retry_after(value: str | None) -> float | None:
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
    silent: list[str] = field(default_factory=list)  # URLs that gave no reply in time (a busy server)
    answered: bool = False  # whether any question got an HTTP reply (no: nothing listens, or it hangs)


PROBE_TIMEOUT_S = 10.0  # for each question about the server (model list, /props, one tokenize)


def _call_json(url: str, headers: dict[str, str], timeout: float, body: Any = None) -> tuple[Any, str]:
    """(the JSON reply or None, "answered" | "timeout" | "unreachable"): a GET, or a POST of ``body``."""
    data = None if body is None else json.dumps(body).encode("utf-8")
    if data is not None:
        headers = {**headers, "Content-Type": "application/json"}
    try:
        status, _, raw = _exchange("GET" if data is None else "POST", url, data, headers, timeout, MAX_REPLY_BYTES)
    except _TimedOut:
        return None, "timeout"
    except (OSError, http.client.HTTPException, _TooLarge, _CutShort):
        return None, "unreachable"
    try:
        return (json.loads(raw) if status == 200 else None), "answered"
    except (ValueError, RecursionError):  # not JSON: nothing learnt
        return None, "answered"


def server_root(client: ChatClient) -> str:
    parts = urllib.parse.urlsplit(client.base_url)
    return f"{parts.scheme}://{parts.netloc}"


def probe_server(client: ChatClient, timeout: float | None = None) -> ServerInfo:
    """Ask ``/v1/models`` (and llama.cpp's ``/props``) for model names, context length and parallel slots."""
    info = ServerInfo()
    headers = {k: v for k, v in client._headers().items() if k != "Content-Type"}
    wait = min(PROBE_TIMEOUT_S if timeout is None else timeout, client.timeout)
    data, state = _call_json(models_url(client.base_url), headers, wait)
    info.answered |= state == "answered"
    if state == "timeout":
        info.silent.append(models_url(client.base_url))
    entries = data.get("data") if isinstance(data, dict) else None
    if isinstance(entries, list):
        info.models = [e["id"] for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str)]
        for e in entries:
            if isinstance(e, dict) and e.get("id") == client.model:
                for key in ("max_model_len", "context_length", "context_window"):
                    if server_count(e.get(key), least=1) is not None:
                        info.context, info.context_source = e[key], f"/v1/models {key}"
                        break
    props, state = _call_json(f"{server_root(client)}/props", headers, wait)
    info.answered |= state == "answered"
    if state == "timeout":
        info.silent.append(f"{server_root(client)}/props")
    if isinstance(props, dict):
        info.slots = server_count(props.get("total_slots"), least=1)
        settings = props.get("default_generation_settings")
        n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
        if info.context is None and server_count(n_ctx, least=1) is not None:
            info.context, info.context_source = n_ctx, "/props n_ctx"
    return info


# Tokens a chat template adds around each message ("<|im_start|>user\n" ... "<|im_end|>\n") and before the
# answer ("<|im_start|>assistant\n"); a tokenize endpoint sees the contents only.
CHAT_TOKENS_PER_MESSAGE = 6
CHAT_TOKENS_PER_PROMPT = 4
# Where servers count tokens: llama-cpp-python, then llama.cpp (and vLLM, which answers "count" there too)
_TOKENIZE = (("/extras/tokenize/count", lambda text, model: {"input": text}, lambda r: r.get("count")),
             ("/tokenize", lambda text, model: {"content": text, "prompt": text, "model": model},
              lambda r: r.get("count") if isinstance(r.get("count"), int) else
              len(r["tokens"]) if isinstance(r.get("tokens"), list) else None))


@dataclass
class TokenCounts:
    """Prompt tokens per record index, and how they were found."""

    tokens: dict[int, int]
    source: str  # "the server's tokenizer (URL)" or "estimated at R chars per token"
    measured: bool


def count_prompt_tokens(client: ChatClient, records: list[dict[str, Any]], which: list[int], template: str,
                        timeout: float | None = None) -> TokenCounts:
    """Tokens of ``records[i]`` for each i in ``which``: by the server's tokenize endpoint where it has one
    (the message contents, plus the chat template's few tokens), else by the template's chars-per-token
    estimate, which errs long."""
    headers = {k: v for k, v in client._headers().items() if k != "Content-Type"}
    wait = min(PROBE_TIMEOUT_S if timeout is None else timeout, client.timeout)

    def texts(i: int) -> list[str]:
        return [m["content"] for m in records[i]["messages"]]

    if which:
        for path, body, read in _TOKENIZE:
            url = server_root(client) + path
            first, _ = _call_json(url, headers, wait, body(texts(which[0])[0], client.model))
            if not isinstance(first, dict) or server_count(read(first)) is None:
                continue
            counts: dict[int, int] = {}
            for i in which:
                total = CHAT_TOKENS_PER_PROMPT
                for text in texts(i):
                    reply, _ = _call_json(url, headers, wait, body(text, client.model))
                    n = server_count(read(reply)) if isinstance(reply, dict) else None
                    if n is None:
                        break  # the endpoint stopped answering: the estimate for all, rather than a mix
                    total += n + CHAT_TOKENS_PER_MESSAGE
                else:
                    counts[i] = total
                    continue
                break
            else:
                return TokenCounts(counts, f"counted by the server's tokenizer ({url})", True)
    ratio = CHARS_PER_TOKEN.get(template, min(CHARS_PER_TOKEN.values()))
    return TokenCounts({i: round(sum(len(t) for t in texts(i)) / ratio) for i in which},
                       f"estimated at {ratio} chars per token (the server offers no tokenizer)", False)


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


def _hold(out_dir: Path) -> int:
    """An exclusive flock on OUT for the whole run (as etl.step does for the other steps): two runs into
    one folder would each send every request, and each answer would be paid twice."""
    from etl.io import InputError
    from etl.step import hold_folder

    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        return hold_folder(out_dir)
    except InputError as exc:  # the run's errors are EnvbenchError; the words are the steps' own
        raise EnvbenchError(str(exc)) from None


def _last_server(out_dir: Path) -> dict[str, Any]:
    """The server facts of the last run into OUT, kept when this run learns nothing new."""
    try:
        last = read_json(out_dir / "run.json", what="run record")
    except Exception:  # noqa: BLE001 - no earlier run, or a damaged record: nothing known
        return {}
    server = last.get("server") if isinstance(last, dict) else None
    if not isinstance(server, dict):
        return {}
    models = server.get("models")
    # written back into run.json: only what a server could have said
    return {"models": models if isinstance(models, list) and all(isinstance(m, str) for m in models) else None,
            "slots": server_count(server.get("slots"), least=1)}


_CACHE_SHARD = re.compile(r"[0-9a-f]{2}")
_CACHE_ENTRY = re.compile(r"(\.)?([0-9a-f]{64})\.json(?(1)\.[0-9a-f]{8}\.tmp|)")  # an entry, or a write cut short
_RUN_TEMP = re.compile(r"\.(?:answers|failures|run)\.json\.[0-9a-f]{8}\.tmp")  # a write of a run killed (-9) midway


def _is_run_record(path: Path) -> bool:
    """Whether ``path`` is an answers.json or run.json an `icl run` wrote (both carry RUN_FORMAT)."""
    try:
        data = read_json(path, what="run record")
    except Exception:  # noqa: BLE001 - not JSON, a folder, unreadable: not the run's
        return False
    return isinstance(data, dict) and data.get("format") == RUN_FORMAT


def _check_out(out_dir: Path, cache_root: Path) -> None:
    """Refuse an --out holding files that no `icl run` wrote, before anything is sent or written there.

    A run's folder is known by the format marker of its answers.json or run.json. There, the run rewrites
    only its own files (pred.json and the like, which `icl parse` may put beside them, stay). A folder
    without that marker may hold only the answer cache of an interrupted run: anything else (a user's
    files, another step's output folder) would be overwritten or mixed with the answers.
    """
    names = sorted(p.name for p in out_dir.iterdir())
    if not names:
        return
    marked = [n for n in ("answers.json", "run.json") if n in names and _is_run_record(out_dir / n)]
    strangers = [n for n in ("answers.json", "run.json") if n in names and n not in marked]
    if not marked:
        own_cache = cache_root.resolve() == (out_dir / "cache").resolve()
        is_cache = cache_root.resolve() == out_dir.resolve()  # --cache the same folder as --out
        inside = cache_root.resolve().relative_to(out_dir.resolve()).parts[:1] \
            if cache_root.resolve().is_relative_to(out_dir.resolve()) else ()
        for name in names:
            path = out_dir / name
            if name in ("answers.json", "run.json") or _RUN_TEMP.fullmatch(name):
                continue
            if name == "cache" and own_cache and path.is_dir():
                foreign = _cache_strangers(path)
                if foreign:
                    shown = listed([os.path.relpath(f, out_dir) for f in foreign])
                    raise EnvbenchError(f"--out {out_dir}: cache/ holds files that no `icl-run` run wrote ({shown}); "
                                        "move them out of it, or choose another --out")
                continue
            if (is_cache and _CACHE_SHARD.fullmatch(name) and path.is_dir()) or (inside and name == inside[0]):
                continue  # the answer cache --cache names (the user's choice of folder)
            strangers.append(name + ("/" if path.is_dir() else ""))
    if strangers:
        one = len(strangers) == 1
        raise EnvbenchError(f"--out {out_dir}: {listed(sorted(strangers))} {'is' if one else 'are'} there and no "
                            f"`icl-run` run wrote {'it' if one else 'them'}; move {'it' if one else 'them'}, or "
                            "choose another --out")


def _cache_strangers(cache: Path) -> list[Path]:
    """Files under an answer cache that are not its entries (``<key[:2]>/<key>.json``)."""
    found = []
    for f in sorted(cache.rglob("*")):
        rel = f.relative_to(cache).parts
        if f.is_dir() and len(rel) == 1 and _CACHE_SHARD.fullmatch(rel[0]):
            continue
        m = _CACHE_ENTRY.fullmatch(rel[-1]) if len(rel) == 2 else None
        if m is None or not f.is_file() or not m.group(2).startswith(rel[0]):
            found.append(f)
    return found


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
    (``_check_out``). Ctrl-C raises RunInterrupted.
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
    prompts_real = Path(prompts_dir).resolve()
    for option, folder in (("--out", out_dir), ("--cache", cache_root)):
        if folder.resolve().is_relative_to(prompts_real):
            # said apart from the refusal below, which a first run gets too: answers kept in the prompts' folder
            # mix two steps' outputs, and `icl prompts` refuses to rebuild a prompts/ holding files it did not write
            where = ("is the --prompts folder" if folder.resolve() == prompts_real
                     else f"lies inside the --prompts folder {prompts_dir}")
            raise EnvbenchError(f"{option} {folder} {where}; choose another {option}, outside it")
    made = [f for f in (out_dir, cache_root) if not f.exists()]  # what a run stopped early leaves empty is removed
    held = _hold(out_dir)
    try:
        _check_out(out_dir, cache_root)
        return _run_held(index, records, prompts_dir, out_dir, client, cache, cache_root, concurrency, cache_only,
                         progress, context, say)
    except BaseException:
        _remove_empty(made)
        raise
    finally:
        os.close(held)


def _remove_empty(made: list[Path]) -> None:
    """Remove the folders in ``made`` (--out, the cache) that this run created, when they hold nothing: a run
    interrupted (Ctrl-C) or stopped (a fatal error) before its first answer left an empty --out behind. The
    cache's empty shard folders go first; a folder holding anything (an answer, a write cut short) stays."""
    for folder in made:
        if not folder.is_dir() or folder.is_symlink():
            continue
        for shard in sorted(folder.iterdir()):
            if _CACHE_SHARD.fullmatch(shard.name) and shard.is_dir() and not shard.is_symlink():
                with contextlib.suppress(OSError):
                    shard.rmdir()  # only when empty
    for folder in sorted(made, key=lambda f: len(f.parts), reverse=True):  # OUT/cache before OUT
        with contextlib.suppress(OSError):
            folder.rmdir()  # only when empty


def _run_held(index: dict[str, Any], records: list[dict[str, Any]], prompts_dir: str | os.PathLike[str],
              out_dir: Path, client: ChatClient, cache: AnswerCache, cache_root: Path, concurrency: int,
              cache_only: bool, progress: bool, context: int | None, say: Callable[[str], None]) -> RunResult:
    start = time.monotonic()
    stop = client.cancel
    stop.clear()
    client.down.clear()
    warnings: list[str] = []
    last = _last_server(out_dir)
    server = ServerInfo(models=last.get("models"), slots=last.get("slots"))
    context_source = "--context" if context is not None else None
    # only the prompts to send are worth a question to the server, a token count or a warning
    pending = [] if cache_only else [i for i, rec in enumerate(records)
                                      if cache.get(client.cache_key(rec["messages"])) is None]
    counts = TokenCounts({}, "", False)
    over: list[tuple[str, int]] = []
    try:
        if pending:
            probed = probe_server(client)
            if probed.silent:
                warnings.append(f"note: {' and '.join(probed.silent)} gave no reply within "
                                f"{min(PROBE_TIMEOUT_S, client.timeout):g} s (a busy server?); what it would tell "
                                "(model names, context, slots) was not checked")
            server.models = probed.models if probed.models is not None else server.models
            server.slots = probed.slots if probed.slots is not None else server.slots
            if probed.models is not None and client.model not in probed.models:
                warnings.append(f"warning: --model {client.model} is not among the models {models_url(client.base_url)} "
                                f"lists ({', '.join(probed.models[:10]) or 'none'}); check the name")
            if probed.slots is not None and concurrency > probed.slots:
                warnings.append(f"warning: --concurrency {concurrency} but the server has {plural(probed.slots, 'slot')}; "
                                "the other requests wait in its queue, and that wait counts against --timeout")
            if context is None and probed.context is not None:
                context, context_source = probed.context, probed.context_source
            if context is None and probed.answered:
                warnings.append("note: the server reports no context size (asked /v1/models and /props); pass "
                                "--context N to have prompts that may not fit named before sending")
            elif context is not None:
                counts = count_prompt_tokens(client, records, pending, index["params"].get("template", ""))
                over = [(index["documents"][i]["file"], counts.tokens[i]) for i in pending
                        if counts.tokens[i] + client.max_tokens > context]
                if over:
                    warnings.append(_context_warning(over, len(pending), context, context_source or "",
                                                     client.max_tokens, counts.source))
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
    seconds = time.monotonic() - start
    down = stats["server_down"]
    res = RunResult(out_dir, len(final), stats["answered"], stats["hits"], stats["requests"], failures, truncated,
                    usage, dict(sorted(stats["retries"].items())), stats["latencies"], seconds, cache_only, warnings,
                    context, context_source, client.max_tokens, counts.source or None, tokens_by_file, down)
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
        "context": {"tokens": context, "source": context_source, "prompts_over": len(over),
                    "prompt_tokens": {"source": counts.source, "measured": counts.measured,
                                      "min": measured[0], "median": round(median(measured)),
                                      "max": measured[-1]} if measured else None},
        "server": {"models": server.models, "slots": server.slots},
    }, indent=True)
    return res


def _run(index: dict[str, Any], records: list[dict[str, Any]], out_dir: Path, client: ChatClient,
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
                    "usage": _usage(hit.get("usage")) or None, "error": None, "cached": True, "attempts": 0, "retries": []}
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
    from tqdm import tqdm

    return tqdm(total=total, desc="icl run", unit="doc", disable=None, file=None)
