"""The chat client: one request per prompt, asked again while that can help, and stopped when it cannot.

``ChatClient`` builds the request (``--model``, the prompt's messages, the sampling options, ``--extra-body``),
keys the answer for the cache, sends it through ``icl.transport`` and reads the reply with ``icl.openai_format``.
What a failure costs is decided here, by three error classes: ``RetryableError`` (429, 5xx, timeout, dropped
connection, a reply cut short or not a completion) waits a doubling backoff with a jitter derived from the prompt
(so reruns wait the same) and tries again; ``RequestFailed`` ends one document (400: the prompt does not fit; the
last retry); ``FatalError`` ends the run (a refused key, a wrong URL, a redirect), since every document would fail
the same way. After ``DEAD_AFTER`` requests in a row that cannot connect the server is taken as gone (``down``).
The sleep is injectable, so tests wait no time.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from envbench.core.errors import EnvbenchError
from envbench.core.seeding import stable_uniform
from etl.io import dumps_json, sha256_bytes
from icl import transport
from icl.openai_format import (
    OPTION_FIELDS,
    Completion,
    NoContent,
    NotACompletion,
    check_extra_body,
    endpoint_url,
    read_completion,
)
from icl.util import clip, plural

RETRY_STATUS = frozenset({408, 409, 425, 429}) | frozenset(range(500, 600))
FATAL_STATUS = {
    401: "the server refused the API key; export the key in the variable named by --api-key-env",
    403: "the server refused the API key; export the key in the variable named by --api-key-env",
    404: "no chat-completions endpoint there; check --base-url (e.g. http://localhost:8000/v1) and --model",
}
ERROR_TEXT_LIMIT = 20_000  # characters of a server's error body kept in failures.json (an HTML page can be huge)
# --timeout's default, for the whole request. On a CPU server (SmolLM2-135M, llama-cpp-python, 2 busy cores)
# a 1-shot Re-DocRED prompt took 65-122 s; a 3-shot +DA +CG prompt is about 4 times longer, and a CPU
# server keeps computing a request the client gave up on, so a retry queues behind it: a timeout that is
# too short costs the work twice. docs/icl.md has the figures.
DEFAULT_TIMEOUT_S = 900.0
DEFAULT_MAX_TOKENS = 1024  # the reference code's value (THU-BPM/Env-DocRE icl/inference.py)
DEAD_AFTER = 3  # requests in a row that could not connect: the server is gone, stop sending
LONG_WAIT_S = 5.0  # waits at least this long are announced (what for, and for how long)
# Bounds of the client's options (icl/cli.py), each recorded in run.json, whose JSON writer stores 64-bit integers
# only: further tries at most (the backoff doubles: 2**1024 is no float); seconds at most for --timeout, --backoff
# and --max-wait (a day; 1e300 s overflowed the clock).
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

    def auth_headers(self) -> dict[str, str]:
        """The headers every request to the server carries: the key, when there is one."""
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def post_once(self, messages: list[dict[str, str]]) -> Completion:
        """One request. ``timeout`` bounds the whole exchange, from connecting to the last byte of the
        reply: a server that sends one byte now and then cannot hold a request past it."""
        url = endpoint_url(self.base_url)
        data = json.dumps(self.body(messages)).encode("utf-8")
        start = time.monotonic()
        try:
            status, headers, raw = transport.exchange("POST", url, data,
                                                      {"Content-Type": "application/json", **self.auth_headers()},
                                                      self.timeout)
        except transport.TimedOut:
            raise RetryableError(f"timed out: no whole reply within {self.timeout:g} s (time spent waiting in the "
                                 "server's queue counts)", cause="timeout") from None
        except transport.TooLarge as exc:
            # at temperature 0 the same request gets the same reply: asking again only costs the transfer
            raise RequestFailed(f"the reply exceeds {exc.limit // 2**20} MiB ({exc}); a chat completion of "
                                f"--max-tokens {self.max_tokens} is far smaller: check that {url} is a "
                                "chat-completions server", reason="too_large") from None
        except transport.CutShort as exc:
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
        try:
            return read_completion(raw, latency)
        except NotACompletion as exc:
            raise RetryableError(str(exc), cause="not_a_completion") from None
        except NoContent as exc:
            # at temperature 0 the same prompt gets the same reply: asking again only wastes the backoff
            raise RequestFailed(str(exc), reason="no_content") from None

    def _raise_for_status(self, url: str, status: int, headers: dict[str, str], raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").strip()
        detail = f": {clip(text, ERROR_TEXT_LIMIT)}" if text else ""
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


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:  # an HTTP date: the backoff decides
        return None


__all__ = ["DEAD_AFTER", "DEFAULT_MAX_TOKENS", "DEFAULT_TIMEOUT_S", "MAX_RETRIES", "MAX_WAIT_S", "ChatClient",
           "FatalError", "Reply", "RequestFailed", "RetryableError", "Stopped", "check_api_key"]
