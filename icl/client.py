"""A small, resumable client for OpenAI-compatible chat-completions servers (vLLM, Ollama, llama.cpp, OpenAI).

Standard library only (urllib + threads). Every answer is cached on disk under the sha256 of
(model, messages, sampling parameters), written atomically, so a rerun costs no request and an
interrupted run resumes where it stopped. A document that still fails after the retries is
recorded in OUT/failures.json and answered with ``null`` in OUT/answers.json; the parser turns it
into an empty prediction, so it stays in the recall denominator.
"""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envbench.core.errors import EnvbenchError
from envbench.core.seeding import stable_uniform
from etl.io import dumps_json, read_json, sha256_bytes, write_json_atomic
from icl.prompts import read_index, read_prompt

RETRY_STATUS = frozenset({408, 409, 425, 429}) | frozenset(range(500, 600))
FATAL_STATUS = {
    401: "the server refused the API key; export the key in the variable named by --api-key-env",
    403: "the server refused the API key; export the key in the variable named by --api-key-env",
    404: "no chat-completions endpoint there; check --base-url (e.g. http://localhost:8000/v1) and --model",
}
RUN_FORMAT = "envbench-icl-run/1"


class RetryableError(Exception):
    """A failure worth another try (429, 5xx, timeout, dropped connection, garbled reply)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class RequestFailed(Exception):
    """A failure of one document that retrying will not fix (e.g. 400: prompt too long)."""


class FatalError(EnvbenchError):
    """A failure every document would share (bad key, wrong URL): the run stops."""


def endpoint_url(base_url: str) -> str:
    """The chat-completions URL: ``.../v1`` gets ``/chat/completions``; a bare host gets ``/v1/chat/completions``."""
    url = base_url.rstrip("/")
    if url.endswith("/chat/completions"):
        return url
    if urllib.parse.urlsplit(url).path in ("", "/"):
        return url + "/v1/chat/completions"
    return url + "/chat/completions"


@dataclass(frozen=True)
class Completion:
    content: str
    finish_reason: str | None
    usage: dict[str, Any]


@dataclass
class ChatClient:
    """Posts chat-completion requests with retries, exponential backoff and deterministic jitter."""

    base_url: str
    model: str
    api_key: str | None = None
    temperature: float = 0.0
    max_tokens: int = 2048
    timeout: float = 120.0  # seconds per request
    retries: int = 6  # further tries after the first
    backoff: float = 1.0  # first delay in seconds; doubles each retry
    max_backoff: float = 60.0
    sleep: Callable[[float], None] = time.sleep  # replaced in tests
    extra: dict[str, Any] = field(default_factory=dict)  # more request fields; a None value removes a field
    reached: bool = field(default=False, repr=False)  # set once any HTTP reply came back

    @property
    def params(self) -> dict[str, Any]:
        """The sampling parameters that decide an answer (part of the cache key)."""
        params: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.extra:
            params["extra"] = self.extra
        return params

    def body(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages,
                                "temperature": self.temperature, "max_tokens": self.max_tokens}
        for k, v in self.extra.items():
            if v is None:
                body.pop(k, None)
            else:
                body[k] = v
        return body

    def cache_key(self, messages: list[dict[str, str]]) -> str:
        return sha256_bytes(dumps_json({"model": self.model, "messages": messages, "params": self.params}))

    def delay(self, key: str, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry ``attempt`` (1-based): doubling backoff times a jitter in [0.5, 1)."""
        base = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
        wait_s = base * (0.5 + 0.5 * stable_uniform(key, attempt))
        if retry_after is not None:
            wait_s = max(wait_s, min(retry_after, self.max_backoff))
        return wait_s

    def post_once(self, messages: list[dict[str, str]]) -> Completion:
        body = self.body(messages)
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(
            endpoint_url(self.base_url), data=json.dumps(body).encode("utf-8"), headers=headers, method="POST"
        )
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
                raise RetryableError(f"HTTP {exc.code}{detail}", _retry_after(exc)) from None
            raise RequestFailed(f"HTTP {exc.code}{detail}") from None
        except TimeoutError:
            raise RetryableError(f"timed out after {self.timeout:g} s") from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise RetryableError(f"timed out after {self.timeout:g} s") from None
            if isinstance(exc.reason, ConnectionRefusedError) and not self.reached:
                # nothing listens there: retrying every document for minutes would only hide that
                raise FatalError(
                    f"cannot connect to {endpoint_url(self.base_url)} ({exc.reason.strerror or exc.reason}); "
                    "start the server or fix --base-url"
                ) from None
            raise RetryableError(f"connection failed: {exc.reason}") from None
        except (ConnectionError, OSError) as exc:  # reset or closed mid-response
            raise RetryableError(f"connection failed: {exc}") from None
        try:
            data = json.loads(raw)
            choice = data["choices"][0]
            content = choice["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise RetryableError(f"reply is not a chat completion: {raw[:200]!r}") from None
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        finish = choice.get("finish_reason") if isinstance(choice, dict) else None
        if content is None and finish == "length":
            # a reasoning model spent --max-tokens thinking: an empty answer, counted as cut off
            return Completion("", finish, usage)
        if not isinstance(content, str):
            # at temperature 0 the same prompt gets the same reply: asking again only wastes the backoff
            raise RequestFailed(f"reply has no text content (finish_reason {finish!r})")
        return Completion(content, finish, usage)

    def complete(self, messages: list[dict[str, str]], key: str | None = None) -> tuple[Completion, int]:
        """The completion and the number of attempts it took; raises RequestFailed after the last retry."""
        key = key or self.cache_key(messages)
        attempt = 0
        while True:
            attempt += 1
            try:
                return self.post_once(messages), attempt
            except RetryableError as exc:
                if attempt > self.retries:
                    raise RequestFailed(f"{exc} (gave up after {attempt} attempts)") from None
                self.sleep(self.delay(key, attempt, exc.retry_after))
            except RequestFailed as exc:
                raise RequestFailed(f"{exc} (attempt {attempt}; not retried)") from None


def _error_detail(exc: urllib.error.HTTPError) -> str:
    try:
        text = exc.read().decode("utf-8", "replace").strip()
    except Exception:  # noqa: BLE001 - the status alone must still be reported
        text = ""
    return f": {text[:200]}" if text else ""


def _retry_after(exc: urllib.error.HTTPError) -> float | None:
    value = exc.headers.get("Retry-After") if exc.headers else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


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
    """What ``run_prompts`` did."""

    out: Path
    documents: int
    requests: int  # documents answered by the server in this run
    cache_hits: int
    failed: list[dict[str, Any]] = field(default_factory=list)
    truncated: int = 0  # answers cut off by --max-tokens (finish_reason "length")
    usage: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def summary(self) -> str:
        lines = [
            f"{self.documents} documents: {self.cache_hits} from cache, {self.requests} requested, "
            f"{len(self.failed)} failed ({self.seconds:.1f} s); answers in {self.out / 'answers.json'}"
        ]
        if self.truncated:
            lines.append(f"warning: {self.truncated} answers stopped at --max-tokens; raise it to get all triples")
        if self.failed:
            lines.append(
                f"warning: {len(self.failed)} documents failed (listed in {self.out / 'failures.json'}); they are "
                "scored as empty predictions; rerun the same command to retry only them"
            )
        return "\n".join(lines)


def run_prompts(
    prompts_dir: str | os.PathLike[str],
    out: str | os.PathLike[str],
    client: ChatClient,
    *,
    concurrency: int = 8,
    cache_dir: str | os.PathLike[str] | None = None,
    cache_only: bool = False,
    progress: bool = True,
) -> RunResult:
    """Answer every prompt in PROMPTS/index.json; write OUT/answers.json, OUT/failures.json, OUT/run.json."""
    if concurrency < 1:
        raise EnvbenchError(f"--concurrency must be at least 1, got {concurrency}")
    index = read_index(prompts_dir)
    out_dir = Path(out)
    cache = AnswerCache(cache_dir if cache_dir is not None else out_dir / "cache")
    records = [read_prompt(prompts_dir, e["file"]) for e in index["documents"]]
    for entry, rec in zip(index["documents"], records):
        if sha256_bytes(dumps_json(rec["messages"])) != entry["prompt_sha256"]:
            raise EnvbenchError(
                f"{Path(prompts_dir) / entry['file']} was changed after index.json was written; "
                "rebuild the prompts with `envbench icl prompts`"
            )
    start = time.monotonic()
    answers: list[dict[str, Any] | None] = [None] * len(records)
    stats = {"requests": 0, "hits": 0, "truncated": 0}
    usage: dict[str, int] = {}
    stop = threading.Event()

    def work(i: int) -> dict[str, Any]:
        rec = records[i]
        key = client.cache_key(rec["messages"])
        base = {"file": index["documents"][i]["file"], "title": rec["title"], "key": key,
                "prompt_sha256": rec["prompt_sha256"]}
        hit = cache.get(key)
        if hit is not None:
            return {**base, "answer": hit["content"], "finish_reason": hit.get("finish_reason"),
                    "cached": True, "error": None, "attempts": 0}
        if cache_only:
            return {**base, "answer": None, "finish_reason": None, "cached": False,
                    "error": "not in the cache (--cache-only)", "attempts": 0}
        if stop.is_set():
            return {**base, "answer": None, "finish_reason": None, "cached": False, "error": "stopped", "attempts": 0}
        try:
            comp, attempts = client.complete(rec["messages"], key)
        except FatalError:
            stop.set()  # every other document would fail the same way: send nothing more
            raise
        except RequestFailed as exc:
            return {**base, "answer": None, "finish_reason": None, "cached": False, "error": str(exc), "attempts": -1}
        cache.put(key, {"key": key, "model": client.model, "params": client.params, "messages": rec["messages"],
                        "content": comp.content, "finish_reason": comp.finish_reason, "usage": comp.usage})
        return {**base, "answer": comp.content, "finish_reason": comp.finish_reason, "cached": False,
                "error": None, "attempts": attempts, "usage": comp.usage}

    bar = _progress(len(records), progress)
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="icl")
    try:
        pending: dict[Future[dict[str, Any]], int] = {pool.submit(work, i): i for i in range(len(records))}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                i = pending.pop(fut)
                res = fut.result()  # FatalError propagates and stops the run
                answers[i] = res
                if res["cached"]:
                    stats["hits"] += 1
                elif res["answer"] is not None:
                    stats["requests"] += 1
                    for k, v in (res.pop("usage", None) or {}).items():
                        if isinstance(v, int):
                            usage[k] = usage.get(k, 0) + v
                if res["finish_reason"] == "length":
                    stats["truncated"] += 1
                if bar is not None:
                    bar.update(1)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        if bar is not None:
            bar.close()
    final = [a for a in answers if a is not None]
    failures = [{"file": a["file"], "title": a["title"], "error": a["error"]} for a in final if a["answer"] is None]
    for a in final:  # answers.json depends only on the answers, so a rerun from cache rewrites it byte for byte
        a.pop("attempts", None)
        a.pop("cached", None)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out_dir / "failures.json", failures, indent=True)
    write_json_atomic(out_dir / "answers.json", {"format": RUN_FORMAT, "model": client.model,
                                                 "params": client.params, "answers": final}, indent=True)
    seconds = time.monotonic() - start
    result = RunResult(out_dir, len(final), stats["requests"], stats["hits"], failures, stats["truncated"],
                       usage, seconds)
    write_json_atomic(out_dir / "run.json", {
        "format": RUN_FORMAT, "prompts": str(prompts_dir), "model": client.model,
        "base_url": client.base_url, "params": client.params, "documents": result.documents,
        "requests": result.requests, "cache_hits": result.cache_hits, "failed": len(failures),
        "truncated": result.truncated, "usage": usage,
    }, indent=True)
    return result


def _progress(total: int, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc="icl run", unit="doc", disable=None, file=None)
