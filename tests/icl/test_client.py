"""Chat-completions client against a local scripted server: retries, backoff, cache, resume, failures."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from envbench.core.errors import EnvbenchError
from icl.client import ChatClient, FatalError
from icl.openai_format import endpoint_url
from icl.prompts import build_prompts
from icl.run import run_prompts
from tests.icl.test_prompts import write_world

TIMEOUT = 0.3  # client timeout in these tests; the server stalls longer to provoke it


def test_title(body: dict[str, Any]) -> str:
    """The test document a request is about: the first word after 'Test document:' (a given name)."""
    text = body["messages"][-1]["content"].split("Test document:\n", 1)[1].removeprefix("Document: ")
    return re.sub(r"</?e\d+>|\[\d+\]", "", text).split()[0]


test_title.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test


def fake_tokens(messages: list[dict[str, str]]) -> int:
    """The FakeServer's token count of a prompt: a token per word, plus the chat template's tokens as
    icl.server reckons them (so the client's count agrees with the server's)."""
    from icl.server import CHAT_TOKENS_PER_MESSAGE, CHAT_TOKENS_PER_PROMPT

    return CHAT_TOKENS_PER_PROMPT + sum(len(m["content"].split()) + CHAT_TOKENS_PER_MESSAGE for m in messages)


class FakeServer:
    """An OpenAI-style /v1/chat/completions server on 127.0.0.1 with scripted answers and faults.

    ``faults[doc]`` is a list consumed one per request for that document: an HTTP status (500, 429,
    400, 401), "timeout" (stall past the client timeout), "garbage" (a non-JSON 200 reply), "short"
    (a reply shorter than its Content-Length), "context" (llama.cpp's 400 for a prompt too long),
    ("retry-after", seconds) (a 429 asking to wait), ("stall", seconds), ("drip", seconds) (a 200 whose
    body comes one byte per that many seconds), "nested" (a 200 of JSON 100,000 levels deep), ("huge",
    bytes, announced) (a 200 of that many bytes, with or without Content-Length), ("redirect", url) (a
    302) or "die" (the server closes its socket and drops the connection unanswered).

    ``tokenizer`` "llama-cpp-python" or "llama.cpp" serves that server's tokenize endpoint (a token per
    word); ``n_ctx`` refuses, as llama-cpp-python does, a prompt whose tokens plus max_tokens exceed it.
    """

    def __init__(self, answer: Callable[[dict[str, Any]], str] | None = None) -> None:
        self.answer = answer or (lambda body: "<1; country of citizenship; 3>\n<2; country; 3>")
        self.faults: dict[str, list[Any]] = {}
        self.requests: Counter[str] = Counter()
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.models: list[str] | None = None  # served at GET /v1/models when set
        self.model_meta: dict[str, Any] = {}
        self.props: dict[str, Any] | None = None  # served at GET /props when set (llama.cpp)
        self.tokenizer: str | None = None
        self.n_ctx: int | None = None
        self.get_stall = 0.0  # seconds each GET waits (a busy server)
        self.usage: dict[str, Any] = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        self.gets: Counter[str] = Counter()
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server API
                server.gets[self.path] += 1
                time.sleep(server.get_stall)
                if self.path == "/v1/models" and server.models is not None:
                    data = [{"id": m, "object": "model", **server.model_meta} for m in server.models]
                    return self._send(200, json.dumps({"object": "list", "data": data}).encode())
                if self.path == "/props" and server.props is not None:
                    return self._send(200, json.dumps(server.props).encode())
                return self._send(404, b'{"error": "not found"}')

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path == "/extras/tokenize/count" and server.tokenizer == "llama-cpp-python":
                    return self._send(200, json.dumps({"count": len(body["input"].split())}).encode())
                if self.path == "/tokenize" and server.tokenizer == "llama.cpp":
                    return self._send(200, json.dumps({"tokens": list(range(len(body["content"].split())))}).encode())
                if self.path != "/v1/chat/completions":
                    return self._send(404, b'{"error": "not found"}')
                doc = test_title(body)
                if server.n_ctx is not None:
                    tokens = fake_tokens(body["messages"])
                    if tokens + body["max_tokens"] > server.n_ctx:
                        msg = {"error": {"message": f"Requested tokens ({tokens + body['max_tokens']}) exceed "
                                                    f"context window of {server.n_ctx}", "type": "invalid_request_error"}}
                        with server.lock:
                            server.requests[doc] += 1
                        return self._send(400, json.dumps(msg).encode())
                with server.lock:
                    server.requests[doc] += 1
                    server.bodies.append(body)
                    server.headers.append(dict(self.headers))
                    queue = server.faults.get(doc)
                    fault = queue.pop(0) if queue else None
                if fault == "timeout":
                    time.sleep(TIMEOUT * 2)
                    return self._send(200, b"{}")
                if isinstance(fault, tuple) and fault[0] == "stall":
                    time.sleep(fault[1])
                    fault = None
                if fault == "short":  # Content-Length promises more than is sent, then the connection closes
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", "500")
                    self.end_headers()
                    self.wfile.write(b'{"choices": [')
                    self.close_connection = True
                    return None
                if fault == "context":
                    msg = ('{"error": {"code": 400, "message": "the request exceeds the available context size '
                           '(9347 tokens > 8192), try increasing the context size or enable context shift", '
                           '"type": "exceed_context_size_error"}}')
                    return self._send(400, msg.encode())
                if isinstance(fault, tuple) and fault[0] == "retry-after":
                    return self._send(429, b'{"error": "slow down"}', {"Retry-After": str(fault[1])})
                if fault == "garbage":
                    return self._send(200, b"<html>busy</html>")
                if fault == "nested":
                    return self._send(200, b"[" * 100_000 + b"]" * 100_000)
                if fault == "die":  # the server goes away mid-run: no more connections, this one unanswered
                    server.httpd.socket.close()
                    self.close_connection = True
                    return None
                if isinstance(fault, tuple) and fault[0] == "redirect":
                    return self._send(302, b"", {"Location": fault[1]})
                if isinstance(fault, tuple) and fault[0] == "huge":
                    self.send_response(200)
                    if fault[2]:
                        self.send_header("Content-Length", str(fault[1]))
                    self.end_headers()
                    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                        for _ in range(fault[1] // 65536):
                            self.wfile.write(b" " * 65536)
                    self.close_connection = True
                    return None
                if isinstance(fault, tuple) and fault[0] == "drip":
                    data = json.dumps({"choices": [{"finish_reason": "stop", "message": {"content": "late"}}]})
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                        for ch in data.encode():
                            self.wfile.write(bytes([ch]))
                            self.wfile.flush()
                            time.sleep(fault[1])
                    return None
                if fault in ("null", "null-length"):  # no text: a refusal, or all tokens spent thinking
                    reply = {"choices": [{"index": 0, "finish_reason": "length" if fault == "null-length" else "stop",
                                          "message": {"role": "assistant", "content": None}}]}
                    return self._send(200, json.dumps(reply).encode())
                if isinstance(fault, int):
                    extra = {"Retry-After": "0.01"} if fault == 429 else {}
                    return self._send(fault, b'{"error": {"message": "scripted"}}', extra)
                if fault is not None:
                    raise AssertionError(f"unknown fault {fault!r}")
                reply = {
                    "id": "x", "object": "chat.completion", "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": server.answer(body)}}],
                    "usage": server.usage,
                }
                self._send(200, json.dumps(reply).encode())

            def _send(self, code: int, data: bytes, extra: dict[str, str] | None = None) -> None:
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (extra or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def total(self) -> int:
        return sum(self.requests.values())

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[FakeServer]:
    s = FakeServer()
    yield s
    s.close()


@pytest.fixture
def prompts(tmp_path: Path) -> Path:
    p = write_world(tmp_path)
    out = tmp_path / "prompts"
    build_prompts(p["test"], p["train"], out, shots=1)
    return out


def make_client(url: str, sleeps: list[float] | None = None, **kw: Any) -> ChatClient:
    rec = sleeps if sleeps is not None else []
    kw.setdefault("sleep", rec.append)
    kw.setdefault("backoff", 0.01)
    return ChatClient(url, "test-model", timeout=TIMEOUT, retries=3, **kw)


def test_endpoint_url_forms() -> None:
    assert endpoint_url("http://h:8000/v1") == "http://h:8000/v1/chat/completions"
    assert endpoint_url("http://h:8000/v1/") == "http://h:8000/v1/chat/completions"
    assert endpoint_url("http://h:8000") == "http://h:8000/v1/chat/completions"
    assert endpoint_url("https://api.openai.com/v1/chat/completions") == "https://api.openai.com/v1/chat/completions"


def test_backoff_doubles_with_deterministic_jitter() -> None:
    c = ChatClient("http://x", "m", backoff=1.0, max_wait=10.0)
    delays = [c.delay("k", a, None) for a in range(1, 7)]
    assert delays == [c.delay("k", a, None) for a in range(1, 7)]  # same key, same waits
    for a, d in enumerate(delays, start=1):
        base = min(10.0, 2 ** (a - 1))
        assert 0.5 * base <= d < base
    assert c.delay("k", 1, retry_after=7.0) == 7.0  # the server's Retry-After wins when longer
    assert c.delay("k", 1, retry_after=99.0) == 10.0  # but never past max_wait
    assert c.delay("other", 3, None) != delays[2]


def test_run_answers_every_prompt_and_rerun_costs_nothing(server: FakeServer, prompts: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = run_prompts(prompts, out, make_client(server.url), concurrency=3, progress=False)
    assert (res.documents, res.answered, res.requests, res.cache_hits, res.failed) == (3, 3, 3, 0, [])
    assert server.total == 3
    body = server.bodies[0]
    # the reference code's 1024 answer tokens (it was 2048)
    assert body["model"] == "test-model" and body["temperature"] == 0.0 and body["max_tokens"] == 1024
    assert "Authorization" not in server.headers[0]
    answers = json.loads((out / "answers.json").read_text())
    assert [a["title"] for a in answers["answers"]] == ["Test A", "Test A-1", "Test B"]
    assert all(a["answer"].startswith("<1;") for a in answers["answers"])
    assert json.loads((out / "failures.json").read_text()) == []
    run = json.loads((out / "run.json").read_text())
    assert run["usage"]["total_tokens"] == 45 and run["this_run"]["requests"] == 3
    assert run["this_run"]["latency_s"]["median"] > 0 and run["this_run"]["retries"] == {}
    first = (out / "answers.json").read_bytes()

    again = run_prompts(prompts, out, make_client(server.url), concurrency=3, progress=False)
    assert (again.answered, again.requests, again.cache_hits) == (0, 0, 3)
    assert server.total == 3  # zero new requests
    assert (out / "answers.json").read_bytes() == first
    rerun = json.loads((out / "run.json").read_text())
    # regression: a cached rerun reported "usage": {} and counted only this run's answers
    assert rerun["usage"] == run["usage"] and rerun["answered"] == 3
    assert rerun["this_run"]["requests"] == 0 and rerun["this_run"]["latency_s"] is None

    other = run_prompts(prompts, tmp_path / "run2", make_client(server.url, max_tokens=100), progress=False)
    assert other.requests == 3  # max_tokens is part of the cache key


def test_retries_on_500_429_timeout_and_garbage(server: FakeServer, prompts: Path, tmp_path: Path) -> None:
    server.faults = {"Hans": [500, 429], "Karl": ["timeout"], "Ida": ["garbage", 503]}
    sleeps: list[float] = []
    res = run_prompts(prompts, tmp_path / "run", make_client(server.url, sleeps), concurrency=3, progress=False)
    assert res.failed == [] and res.answered == 3 and res.requests == 8
    assert server.requests == Counter({"Hans": 3, "Karl": 2, "Ida": 3})
    assert len(sleeps) == 5
    assert res.retries == {"http_5xx": 2, "http_429": 1, "timeout": 1, "not_a_completion": 1}
    assert json.loads((tmp_path / "run" / "run.json").read_text())["this_run"]["retries"] == res.retries
    assert "8 requests, 5 retries (http_429 1, http_5xx 2, not_a_completion 1, timeout 1)" in res.summary()
    assert any(s >= 0.01 for s in sleeps)  # Retry-After of the 429 honoured


def test_persistent_failure_is_listed_and_rerun_retries_only_it(
    server: FakeServer, prompts: Path, tmp_path: Path
) -> None:
    server.faults = {"Karl": [500] * 4, "Ida": [400]}
    out = tmp_path / "run"
    res = run_prompts(prompts, out, make_client(server.url), concurrency=2, progress=False)
    assert server.requests == Counter({"Hans": 1, "Karl": 4, "Ida": 1})  # 1 + 3 retries; a 400 is not retried
    failures = json.loads((out / "failures.json").read_text())
    assert [(f["file"], f["title"]) for f in failures] == [("prompts/0001.json", "Test A-1"), ("prompts/0002.json", "Test B")]
    assert "HTTP 500" in failures[0]["error"] and "gave up after 4 attempts" in failures[0]["error"]
    assert "HTTP 400" in failures[1]["error"] and "not retried" in failures[1]["error"]
    answers = {a["title"]: a["answer"] for a in json.loads((out / "answers.json").read_text())["answers"]}
    assert answers["Test A-1"] is None and answers["Test B"] is None and answers["Test A"]
    assert "2 documents failed" in res.summary() and "they are scored as empty predictions" in res.summary()
    assert [f["reason"] for f in failures] == ["retries_exhausted", "http"]

    again = run_prompts(prompts, out, make_client(server.url), concurrency=2, progress=False)
    assert (again.answered, again.cache_hits, again.failed) == (2, 1, [])
    assert server.requests == Counter({"Hans": 1, "Karl": 5, "Ida": 2})


def test_fatal_status_stops_the_run_and_the_rerun_resumes(server: FakeServer, prompts: Path, tmp_path: Path) -> None:
    server.faults = {"Karl": [401]}
    out = tmp_path / "run"
    with pytest.raises(FatalError, match=r"^HTTP 401 from http://127\.0\.0\.1:\d+/v1/chat/completions: .*--api-key-env"):
        run_prompts(prompts, out, make_client(server.url), concurrency=1, progress=False)
    assert not (out / "answers.json").exists()  # never a partial answers file
    assert server.requests["Hans"] == 1 and server.requests["Ida"] == 0
    res = run_prompts(prompts, out, make_client(server.url), concurrency=1, progress=False)
    assert (res.cache_hits, res.answered) == (1, 2)  # what was answered before the stop is kept


def test_api_key_header_and_cache_only(server: FakeServer, prompts: Path, tmp_path: Path) -> None:
    res = run_prompts(prompts, tmp_path / "c", make_client(server.url), cache_only=True, progress=False)
    assert server.total == 0 and len(res.failed) == 3
    assert res.failed[0]["error"] == "not in the cache (--cache-only)"
    assert "are not in the cache (--cache-only)" in res.summary() and "rerun the same command" not in res.summary()
    run_prompts(prompts, tmp_path / "k", make_client(server.url, api_key="sk-test"), progress=False)
    assert server.headers[0]["Authorization"] == "Bearer sk-test"


def test_changed_prompt_file_is_refused(server: FakeServer, prompts: Path, tmp_path: Path) -> None:
    rec = json.loads((prompts / "prompts" / "0001.json").read_text())
    rec["messages"][-1]["content"] += " extra"
    (prompts / "prompts" / "0001.json").write_text(json.dumps(rec))
    with pytest.raises(EnvbenchError, match=r"0001\.json was changed after index\.json was written"):
        run_prompts(prompts, tmp_path / "r", make_client(server.url), progress=False)
    assert server.total == 0


def test_extra_body_fields_are_sent_and_keyed(server: FakeServer, prompts: Path, tmp_path: Path) -> None:
    extra = {"max_tokens": None, "max_completion_tokens": 64, "seed": 0}
    client = make_client(server.url, extra=extra)
    assert client.cache_key([{"role": "user", "content": "x"}]) != make_client(server.url).cache_key(
        [{"role": "user", "content": "x"}])
    run_prompts(prompts, tmp_path / "r", client, progress=False)
    body = server.bodies[0]
    assert "max_tokens" not in body and body["max_completion_tokens"] == 64 and body["seed"] == 0


def test_a_reply_without_text_is_not_retried(server: FakeServer, prompts: Path, tmp_path: Path) -> None:
    # regression: content null was retried with backoff (over a minute per document at the defaults)
    server.faults = {"Hans": ["null-length"], "Karl": ["null"]}
    sleeps: list[float] = []
    res = run_prompts(prompts, tmp_path / "run", make_client(server.url, sleeps), concurrency=1, progress=False)
    assert sleeps == [] and server.requests == Counter({"Hans": 1, "Karl": 1, "Ida": 1})
    assert res.truncated == 1 and "stopped at --max-tokens" in res.summary()
    assert [(f["title"], f["error"]) for f in res.failed] == [
        ("Test A-1", "reply has no text content (finish_reason 'stop') (attempt 1; not retried)")]
    assert "1 answer stopped at --max-tokens" in res.summary()
    assert "1 document failed" in res.summary() and "it is scored as an empty prediction" in res.summary()


def test_a_reply_shorter_than_its_content_length_is_retried(server: FakeServer, prompts: Path, tmp_path: Path) -> None:
    # regression (issue 17 #7): http.client.IncompleteRead escaped as a traceback and the run left no files
    server.faults = {"Hans": ["short"], "Karl": ["short"] * 4}
    res = run_prompts(prompts, tmp_path / "run", make_client(server.url), concurrency=1, progress=False)
    assert server.requests == Counter({"Hans": 2, "Karl": 4, "Ida": 1})
    assert res.retries == {"incomplete_reply": 4}
    assert [(f["title"], f["reason"]) for f in res.failed] == [("Test A-1", "retries_exhausted")]
    assert res.failed[0]["error"].startswith("reply cut short: 13 bytes of 500 arrived (gave up after 4 attempts)")
    assert (tmp_path / "run" / "answers.json").exists() and (tmp_path / "run" / "failures.json").exists()


def test_retry_after_is_capped_and_the_wait_is_announced(server: FakeServer, prompts: Path, tmp_path: Path) -> None:
    # regression (issue 17 #8): "Retry-After: 100000" on a 429 was obeyed for hours
    server.faults = {"Hans": [("retry-after", 100000)]}
    said: list[str] = []
    client = make_client(server.url, sleep=None, max_wait=0.2, notify=said.append)
    began = time.monotonic()
    res = run_prompts(prompts, tmp_path / "run", client, concurrency=1, progress=False)
    assert time.monotonic() - began < 5 and res.failed == [] and res.retries == {"http_429": 1}
    assert said == []  # a 0.2 s wait is not worth a line
    assert client.delay("k", 1, 100000.0) == 0.2
    announced: list[str] = []
    slow = ChatClient(server.url, "m", max_wait=6.0, notify=announced.append, sleep=lambda s: None)
    server.faults = {"Hans": [("retry-after", 100000)]}
    slow.complete([{"role": "user", "content": "Test document:\nHans"}], label="prompts/0000.json")
    assert announced == ["waiting 6 s before retry 1 of 6 for prompts/0000.json (HTTP 429: {\"error\": \"slow down\"}; "
                         "the server asked for 100000 s (Retry-After), capped by --max-wait)"]


def test_full_error_text_and_context_reason(server: FakeServer, prompts: Path, tmp_path: Path) -> None:
    server.faults = {"Hans": ["context"]}
    res = run_prompts(prompts, tmp_path / "run", make_client(server.url), progress=False)
    (fail,) = res.failed
    assert fail["reason"] == "context"
    # regression: the server's message was cut at 200 characters, mid-word
    assert fail["error"].startswith('HTTP 400: {"error": {"code": 400, "message": "the request exceeds the available '
                                    'context size (9347 tokens > 8192), try increasing the context size or enable '
                                    'context shift", "type": "exceed_context_size_error"}} (the prompt and '
                                    '--max-tokens 1024 do not fit')
    assert json.loads((tmp_path / "run" / "failures.json").read_text())[0]["error"] == fail["error"]


def test_server_metadata_warnings(server: FakeServer, prompts: Path, tmp_path: Path) -> None:
    server.models = ["qwen2.5-7b"]
    server.model_meta = {"max_model_len": 700}
    said: list[str] = []
    res = run_prompts(prompts, tmp_path / "r1", make_client(server.url), progress=False, notify=said.append)
    assert said == [f"warning: --model test-model is not among the models {server.url}/models lists (qwen2.5-7b); "
                    "check the name",
                    "note: the server reports no context size (asked /v1/models and /props); pass --context N to "
                    "have prompts that may not fit named before sending"]
    assert res.failed == []  # a warning only: some servers answer under any name
    server.models = ["test-model"]
    server.props = {"total_slots": 1}
    said.clear()
    run_prompts(prompts, tmp_path / "r2", make_client(server.url, max_tokens=100), concurrency=2, progress=False,
                notify=said.append)
    assert said[0] == ("warning: --concurrency 2 but the server has 1 slot; the other requests wait in its queue, "
                       "and that wait counts against --timeout")
    assert re.fullmatch(r"warning: 3 prompts of the 3 to send may not fit the context of 700 tokens \(/v1/models "
                        r"max_model_len\) with --max-tokens 100 \(estimated at 2\.6 chars per token \(the server "
                        r"offers no tokenizer\)\): prompts/0000\.json 1,\d\d\d tokens, prompts/0001\.json 1,\d\d\d "
                        r"tokens, prompts/0002\.json 1,\d\d\d tokens; they are sent anyway: .*", said[1]), said[1]
    run = json.loads((tmp_path / "r2" / "run.json").read_text())
    assert run["context"]["tokens"] == 700 and run["context"]["source"] == "/v1/models max_model_len"
    assert run["context"]["prompts_over"] == 3 and run["context"]["prompt_tokens"]["measured"] is False
    assert run["server"] == {"models": ["test-model"], "slots": 1}
    said.clear()
    run_prompts(prompts, tmp_path / "r3", make_client(server.url), context=100_000, progress=False,
                notify=said.append)
    assert said == []  # --context wins over what the server says


def test_stop_and_seed_are_sent_and_keyed(server: FakeServer, prompts: Path, tmp_path: Path) -> None:
    msgs = [{"role": "user", "content": "x"}]
    plain = make_client(server.url)
    assert "stop" not in plain.params and "seed" not in plain.params  # earlier answers keep their keys
    assert make_client(server.url, stop=["\n\n"]).cache_key(msgs) != plain.cache_key(msgs)
    assert make_client(server.url, seed=1).cache_key(msgs) != make_client(server.url, seed=2).cache_key(msgs)
    run_prompts(prompts, tmp_path / "r", make_client(server.url, stop=["</s>", "\n\n"], seed=7), progress=False)
    assert server.bodies[0]["stop"] == ["</s>", "\n\n"] and server.bodies[0]["seed"] == 7


SIGINT_CHILD = "import sys; from envbench.cli import main; sys.exit(main())"


def _ctrl_c_in_flight(server: FakeServer, prompts: Path, out: Path, stalled: str,
                     held: Callable[[], None] = lambda: None) -> tuple[int, str, float]:
    """``icl run`` in a child process, Ctrl-C sent while document ``stalled``'s request hangs (``held``
    runs then, before the signal): the exit status, the output and the seconds from the signal to the exit."""
    import os
    import signal
    import subprocess
    import sys

    args = ["icl", "run", "--prompts", str(prompts), "--base-url", server.url, "--model", "test-model",
            "--out", str(out), "--retries", "0", "--timeout", "60", "--no-progress"]
    child = subprocess.Popen([sys.executable, "-c", SIGINT_CHILD, *args],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             cwd=Path(__file__).resolve().parents[2])
    try:
        deadline = time.monotonic() + 60
        while server.requests[stalled] == 0 and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.05)
        assert server.requests[stalled] == 1, child.communicate()[0]
        held()
        time.sleep(0.2)  # the request is in flight
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        output, _ = child.communicate(timeout=20)
        took = time.monotonic() - sent
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
    return child.returncode, output, took


def test_ctrl_c_stops_at_once_keeps_the_cache_and_says_how_to_resume(
    server: FakeServer, prompts: Path, tmp_path: Path
) -> None:
    # regression (issue 17 #9): Ctrl-C was ignored while a request was in flight; it took SIGKILL
    server.faults = {"Karl": [("stall", 30)]}  # the second document hangs; the first is answered
    out = tmp_path / "run"
    code, output, took = _ctrl_c_in_flight(server, prompts, out, "Karl")
    assert code == 130, output
    assert took < 2.0, f"took {took:.2f} s to stop"  # "within a second", plus slack for a loaded machine
    assert output.strip() == ("note: the server reports no context size (asked /v1/models and /props); pass "
                              "--context N to have prompts that may not fit named before sending\n"
                              f"interrupted: the cache {out / 'cache'} holds answers for 1 of the 3 documents; "
                              "answers.json, failures.json and run.json were not written; rerun the same command "
                              "to resume (cached answers are not asked again)")
    assert not (out / "answers.json").exists()
    server.faults = {}
    res = run_prompts(prompts, out, make_client(server.url), progress=False)
    assert (res.cache_hits, res.answered, res.failed) == (1, 2, [])


def test_ctrl_c_before_any_answer_leaves_no_empty_out(server: FakeServer, prompts: Path, tmp_path: Path) -> None:
    """Interrupted before its first answer, a run left the --out folder it had made, empty."""
    server.faults = {"Hans": [("stall", 30)]}  # the first document hangs: nothing is answered
    out = tmp_path / "new" / "run"

    def held() -> None:
        assert out.is_dir()  # held while the request is in flight

    code, output, _ = _ctrl_c_in_flight(server, prompts, out, "Hans", held)
    assert code == 130, output
    assert output.splitlines()[-1].startswith(f"interrupted: the cache {out / 'cache'} holds answers for 0 of the 3 ")
    assert not out.exists() and (tmp_path / "new").is_dir()  # what the run made goes; what was there stays


def test_a_run_stopped_before_its_first_answer_removes_the_folders_it_made(
    server: FakeServer, prompts: Path, tmp_path: Path
) -> None:
    server.faults = {"Hans": [401]}
    out, cache = tmp_path / "run", tmp_path / "cache"
    with pytest.raises(FatalError):
        run_prompts(prompts, out, make_client(server.url), cache_dir=cache, progress=False)
    assert not out.exists() and not cache.exists()
    out.mkdir()  # a folder of the user's (empty) stays
    server.faults = {"Hans": [401]}
    with pytest.raises(FatalError):
        run_prompts(prompts, out, make_client(server.url), progress=False)
    assert out.is_dir() and list(out.iterdir()) == []


def test_counts_in_messages_agree_with_their_number(server: FakeServer, prompts: Path, tmp_path: Path) -> None:
    # regression: "after 1 attempts", "1 documents failed"
    server.faults = {"Karl": [500]}
    client = ChatClient(server.url, "test-model", timeout=TIMEOUT, retries=0)
    res = run_prompts(prompts, tmp_path / "run", client, progress=False)
    (fail,) = res.failed
    assert fail["error"] == 'HTTP 500: {"error": {"message": "scripted"}} (gave up after 1 attempt)'
    summary = res.summary()
    assert summary.startswith("3 documents: 0 from cache, 2 answered now, 1 failed; 3 requests, 0 retries; ")
    assert "warning: 1 document failed (listed in " in summary and "it is scored as an empty prediction" in summary
    server.faults = {"Karl": [400]}
    res = run_prompts(prompts, tmp_path / "run", make_client(server.url), progress=False)
    assert res.failed[0]["error"].endswith("(attempt 1; not retried)")
    assert res.summary().startswith("3 documents: 2 from cache, 0 answered now, 1 failed; 1 request, 0 retries; ")


# ---------------------------------------------------------------------------- hostile servers (issue 29)
def test_the_timeout_bounds_the_whole_reply_against_a_slow_drip(
    server: FakeServer, prompts: Path, tmp_path: Path
) -> None:
    # regression: a byte every 0.5 s kept a --timeout 3 request alive for 125 s, and the answer was accepted
    server.faults = {"Hans": [("drip", 0.05)] * 2}
    client = ChatClient(server.url, "test-model", timeout=0.5, retries=1, sleep=lambda s: None)
    began = time.monotonic()
    res = run_prompts(prompts, tmp_path / "run", client, progress=False)
    assert time.monotonic() - began < 5  # two bounded attempts, not 2 x ~4 s of dripping
    assert [(f["title"], f["reason"], f["error"]) for f in res.failed] == [
        ("Test A", "retries_exhausted", "timed out: no whole reply within 0.5 s (time spent waiting in the server's "
                                        "queue counts) (gave up after 2 attempts)")]
    assert res.retries == {"timeout": 1}
    assert json.loads((tmp_path / "run" / "failures.json").read_text())[0]["title"] == "Test A"


def test_a_reply_nested_100000_levels_deep_is_not_a_chat_completion(
    server: FakeServer, prompts: Path, tmp_path: Path
) -> None:
    # regression: a 57-line RecursionError traceback, and neither answers.json nor failures.json
    server.faults = {"Hans": ["nested"] * 4}
    res = run_prompts(prompts, tmp_path / "run", make_client(server.url), progress=False)
    assert server.requests["Hans"] == 4 and res.retries == {"not_a_completion": 3}
    (fail,) = res.failed
    assert fail["error"] == ("the reply is not a chat completion: '" + "[" * 200 + "... (199,800 more characters)' "
                             "(gave up after 4 attempts)")
    assert json.loads((tmp_path / "run" / "failures.json").read_text())[0]["error"] == fail["error"]
    assert (tmp_path / "run" / "answers.json").exists()


@pytest.mark.parametrize("announced", [True, False])
def test_a_reply_past_the_size_cap_is_refused_unread(
    server: FakeServer, prompts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, announced: bool
) -> None:
    # regression: a 200 MB completion was accepted and cached, memory peaking at 612 MB
    import icl.transport

    monkeypatch.setattr(icl.transport, "MAX_REPLY_BYTES", 2**20)
    server.faults = {"Hans": [("huge", 4 * 2**20, announced)]}
    res = run_prompts(prompts, tmp_path / "run", make_client(server.url), progress=False)
    (fail,) = res.failed
    how = "it announces 4,194,304 bytes" if announced else "more than 1,048,576 bytes arrived"
    assert fail["reason"] == "too_large" and fail["error"].startswith(
        f"the reply exceeds 1 MiB ({how}"), fail["error"]
    assert fail["error"].endswith(f"); a chat completion of --max-tokens 1024 is far smaller: check that {server.url}"
                                  "/chat/completions is a chat-completions server (attempt 1; not retried)")
    assert server.requests["Hans"] == 1 and not list((tmp_path / "run" / "cache").rglob("*.json"))[2:]


def test_a_redirect_is_named_with_its_target_and_not_followed(
    server: FakeServer, prompts: Path, tmp_path: Path
) -> None:
    # regression: a 302 was followed as a GET and reported as a 404 at the original URL
    server.faults = {"Hans": [("redirect", "https://elsewhere.example/v1/chat/completions")]}
    with pytest.raises(FatalError) as exc:
        run_prompts(prompts, tmp_path / "run", make_client(server.url), progress=False)
    assert str(exc.value) == (f"HTTP 302 from {server.url}/chat/completions: the server redirects to "
                              "https://elsewhere.example/v1/chat/completions; give that address as --base-url (a "
                              "redirect is not followed, since it would turn the POST into a GET)")
    assert server.total == 1


@pytest.mark.parametrize("key,what", [("sk-1\r\nX-Evil: 1", "a line break (CR or LF)"),
                                      ("sk-ключ", "a character that is not ASCII"),
                                      ("sk-\x00", "a control character")])
def test_an_api_key_a_header_cannot_carry_is_refused(key: str, what: str) -> None:
    with pytest.raises(EnvbenchError) as exc:
        ChatClient("http://127.0.0.1:9/v1", "m", api_key=key)
    assert str(exc.value) == (f"the API key holds {what}, which an HTTP header cannot carry; export the key alone, "
                              "as the provider shows it")


def test_a_second_run_into_the_same_out_is_refused(server: FakeServer, prompts: Path, tmp_path: Path) -> None:
    # regression: two runs into one --out both sent every request, so each answer was paid twice
    from icl.run_folder import hold_out as _hold

    out = tmp_path / "run"
    held = _hold(out)  # the other run
    try:
        with pytest.raises(EnvbenchError) as exc:
            run_prompts(prompts, out, make_client(server.url), progress=False)
    finally:
        import os

        os.close(held)
    assert str(exc.value) == (f"--out {out}: another run is writing there now; wait for it to end, or choose another "
                              "output location")
    assert server.total == 0 and not (out / "answers.json").exists()
    assert run_prompts(prompts, out, make_client(server.url), progress=False).answered == 3  # released: it runs


# ---------------------------------------------------------------------------- a CPU server (issue 33)
def test_a_dead_server_stops_the_run_and_lists_the_rest(server: FakeServer, tmp_path: Path) -> None:
    # regression: each document was retried on its own (7 documents took 5.5 minutes) and the run exited 0
    p = write_world(tmp_path)
    docs = json.loads(p["test"].read_text())
    more = [{**docs[2], "title": f"Test C{i}"} for i in range(4)]  # five documents after the one that dies
    p["test"].write_text(json.dumps(docs + more))
    build_prompts(p["test"], p["train"], tmp_path / "prompts", shots=1)
    server.faults = {"Karl": ["die"]}
    sleeps: list[float] = []
    client = ChatClient(server.url, "test-model", timeout=TIMEOUT, sleep=sleeps.append)  # 6 retries by default
    res = run_prompts(tmp_path / "prompts", tmp_path / "run", client, progress=False)
    assert len(sleeps) == 2  # three requests, then it stops: not 6 retries for each of 6 documents
    assert [(f["title"], f["reason"]) for f in res.failed] == [
        ("Test A-1", "server_down"), ("Test B", "not_attempted"), *[(f"Test C{i}", "not_attempted") for i in range(4)]]
    assert res.failed[0]["error"] == (
        "connection failed: Connection refused (gave up after 3 attempts: the server stopped answering, 3 connection "
        "failures in a row)")
    assert res.failed[1]["error"] == "not sent: the server had stopped answering"
    assert res.server_down == "3 requests in a row could not connect, the last: connection failed: Connection refused"
    assert res.summary().splitlines()[-2] == (
        "warning: the server stopped answering (3 requests in a row could not connect, the last: connection failed: "
        f"Connection refused); 5 documents not attempted (reason not_attempted in {tmp_path / 'run' / 'failures.json'}); "
        "start the server and rerun the same command to ask only for the unanswered ones")
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["this_run"]["not_attempted"] == 5 and run["this_run"]["server_down"] == res.server_down
    assert res.cache_hits == 0 and res.answered == 1


def context_world(tmp_path: Path) -> tuple[Path, list[int]]:
    from tests.icl.test_prompts import make_doc

    p = write_world(tmp_path)
    p["test"].write_text(json.dumps([make_doc("Test A", "Hans Meier", "Basel", "Switzerland"),
                                     make_doc("Test A-1", "Karl Vogt", "Zug am Zugersee", "Liechtenstein"),
                                     make_doc("Test B", "Ida Holm", "Odense", "Kingdom of Denmark and Greenland")]))
    build_prompts(p["test"], p["train"], tmp_path / "prompts", shots=1)
    index = json.loads((tmp_path / "prompts" / "index.json").read_text())
    sizes = [fake_tokens(json.loads((tmp_path / "prompts" / e["file"]).read_text())["messages"])
             for e in index["documents"]]
    return tmp_path / "prompts", sizes


@pytest.mark.parametrize("tokenizer,path", [("llama-cpp-python", "/extras/tokenize/count"), ("llama.cpp", "/tokenize")])
def test_the_servers_tokenizer_names_exactly_the_prompts_that_overflow(
    server: FakeServer, tmp_path: Path, tokenizer: str, path: str
) -> None:
    prompts, sizes = context_world(tmp_path)
    assert len(set(sizes)) == 3, sizes  # the demonstrations differ, so the prompts do
    server.tokenizer, server.n_ctx = tokenizer, sorted(sizes)[1] + 10  # the longest prompt does not fit
    said: list[str] = []
    res = run_prompts(prompts, tmp_path / "run", make_client(server.url, max_tokens=10), progress=False,
                      context=server.n_ctx, notify=said.append)
    longest = sizes.index(max(sizes))
    file = f"prompts/{longest:04d}.json"
    assert said == [f"warning: 1 prompt of the 3 to send may not fit the context of {server.n_ctx:,} tokens (--context) "
                    f"with --max-tokens 10 (counted by the server's tokenizer ({server.url[:-3]}{path})): {file} "
                    f"{max(sizes):,} tokens; they are sent anyway: a server that refuses them lists them in "
                    "failures.json with its reason, one that cuts them (Ollama) answers from a truncated prompt"]
    assert [(f["file"], f["reason"], f["prompt_tokens"]) for f in res.failed] == [(file, "context", max(sizes))]
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["context"]["prompt_tokens"] == {"source": f"counted by the server's tokenizer ({server.url[:-3]}{path})",
                                               "measured": True, "min": min(sizes), "median": sorted(sizes)[1],
                                               "max": max(sizes)}
    # a rerun sends only the one that failed; prompts answered from the cache are never named
    said.clear()
    run_prompts(prompts, tmp_path / "run", make_client(server.url, max_tokens=10), progress=False,
                context=server.n_ctx, notify=said.append)
    assert len(said) == 1 and said[0].startswith("warning: 1 prompt of the 1 to send may not fit")
    server.n_ctx = None
    run_prompts(prompts, tmp_path / "run", make_client(server.url, max_tokens=10), progress=False)
    said.clear()
    again = run_prompts(prompts, tmp_path / "run", make_client(server.url, max_tokens=10), progress=False,
                        context=100, notify=said.append)
    assert said == [] and again.cache_hits == 3  # nothing to send: no warning, no "sent anyway"


def test_a_cached_rerun_asks_the_server_nothing_and_keeps_what_it_knew(
    server: FakeServer, prompts: Path, tmp_path: Path
) -> None:
    # regression: a cached rerun against a busy server waited 10 s on /v1/models and wrote "models": null
    server.models, server.props = ["test-model"], {"total_slots": 2}
    run_prompts(prompts, tmp_path / "run", make_client(server.url), progress=False)
    assert server.gets == Counter({"/v1/models": 1, "/props": 1})
    server.get_stall = 5.0
    began = time.monotonic()
    run_prompts(prompts, tmp_path / "run", make_client(server.url), progress=False)
    assert time.monotonic() - began < 2 and sum(server.gets.values()) == 2
    assert json.loads((tmp_path / "run" / "run.json").read_text())["server"] == {"models": ["test-model"], "slots": 2}


def test_a_silent_model_list_is_said_and_the_last_facts_are_kept(
    server: FakeServer, prompts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import icl.server

    server.models, server.props = ["test-model"], {"total_slots": 2}
    run_prompts(prompts, tmp_path / "run", make_client(server.url, max_tokens=7), progress=False)
    monkeypatch.setattr(icl.server, "PROBE_TIMEOUT_S", 0.2)
    server.get_stall = 1.0
    said: list[str] = []
    client = ChatClient(server.url, "test-model", timeout=5.0, sleep=lambda s: None)  # nothing cached for it
    run_prompts(prompts, tmp_path / "run", client, progress=False, notify=said.append)
    assert said == [f"note: {server.url}/models and {server.url[:-3]}/props gave no reply within 0.2 s (a busy "
                    "server?); what it would tell (model names, context, slots) was not checked"]
    assert json.loads((tmp_path / "run" / "run.json").read_text())["server"] == {"models": ["test-model"], "slots": 2}


def test_numbers_a_server_cannot_mean_are_unknown(server: FakeServer, prompts: Path, tmp_path: Path) -> None:
    # regression: a max_model_len of 10**30 ended in "TypeError: Integer exceeds 64-bit range" after answers.json
    # was written and before run.json; a usage of -10 answer tokens was added up ("tokens 0 in + -10 out")
    server.models, server.model_meta = ["test-model"], {"max_model_len": 10**30}
    server.props = {"total_slots": True, "default_generation_settings": {"n_ctx": -5}}
    server.usage = {"prompt_tokens": 10, "completion_tokens": -10, "total_tokens": 10**30,
                    "completion_tokens_details": {"reasoning_tokens": -1, "accepted_prediction_tokens": 2}}
    said: list[str] = []
    res = run_prompts(prompts, tmp_path / "run", make_client(server.url), progress=False, notify=said.append)
    assert said == ["note: the server reports no context size (asked /v1/models and /props); pass --context N to "
                    "have prompts that may not fit named before sending"]
    assert res.usage == {"prompt_tokens": 30} and "tokens 30 in + 0 out over all answers" in res.summary()
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["context"]["tokens"] is None and run["server"] == {"models": ["test-model"], "slots": None}
    assert run["usage"] == {"prompt_tokens": 30}
    answers = json.loads((tmp_path / "run" / "answers.json").read_text())["answers"]
    assert answers[0]["usage"] == {"prompt_tokens": 10, "completion_tokens_details": {"accepted_prediction_tokens": 2}}
    # a cache entry written before replies were checked: its counts are not added up either
    entry = next((tmp_path / "run" / "cache").rglob("*.json"))
    cached = json.loads(entry.read_text())
    entry.write_text(json.dumps({**cached, "usage": {"prompt_tokens": 10**30, "completion_tokens": -10}}))
    again = run_prompts(prompts, tmp_path / "run", make_client(server.url), progress=False)
    assert again.cache_hits == 3 and again.usage == {"prompt_tokens": 20}


def test_server_count_bounds() -> None:
    from icl.openai_format import MAX_SERVER_COUNT, server_count

    assert [server_count(v) for v in (0, 4096, MAX_SERVER_COUNT)] == [0, 4096, MAX_SERVER_COUNT]
    assert [server_count(v) for v in (-1, MAX_SERVER_COUNT + 1, True, 4096.0, "4096", None)] == [None] * 6
    assert server_count(0, least=1) is None


def test_an_out_with_files_no_run_wrote_is_refused_before_sending(server: FakeServer, prompts: Path,
                                                                  tmp_path: Path) -> None:
    # regression: a run replaced a user's answers.json and run.json, and wrote into any folder
    out = tmp_path / "mine"
    out.mkdir()
    (out / "answers.json").write_text('{"mine": "precious"}')
    (out / "run.json").write_text("precious")
    with pytest.raises(EnvbenchError) as exc:
        run_prompts(prompts, out, make_client(server.url), progress=False)
    assert str(exc.value) == (f"--out {out}: answers.json, run.json are there and no `icl-run` run wrote them; move "
                              "them, or choose another --out")
    assert server.total == 0 and sum(server.gets.values()) == 0
    assert (out / "answers.json").read_text() == '{"mine": "precious"}' and (out / "run.json").read_text() == "precious"
    assert sorted(p.name for p in out.iterdir()) == ["answers.json", "run.json"]
    # a run's folder: answers.json carries the run's format; what `icl parse` puts beside it stays
    run = tmp_path / "run"
    run_prompts(prompts, run, make_client(server.url), progress=False)
    (run / "pred.json").write_text("[]")
    assert run_prompts(prompts, run, make_client(server.url), progress=False).cache_hits == 3
    assert (run / "pred.json").read_text() == "[]"
    def refusal(out: Path) -> str:
        with pytest.raises(EnvbenchError) as exc:
            run_prompts(prompts, out, make_client(server.url), progress=False)
        return str(exc.value)

    (run / "run.json").write_text("precious")  # one of the run's names, taken by a file it did not write
    assert refusal(run) == f"--out {run}: run.json is there and no `icl-run` run wrote it; move it, or choose another --out"
    # an interrupted run left only its cache: it resumes; a stranger in that cache is refused
    resumed = tmp_path / "resumed"
    resumed.mkdir()
    shutil.copytree(run / "cache", resumed / "cache")
    assert run_prompts(prompts, resumed, make_client(server.url), progress=False).cache_hits == 3
    (resumed / "answers.json").unlink()
    (resumed / "run.json").unlink()
    (resumed / "cache" / "notes.txt").write_text("mine")
    assert refusal(resumed) == (f"--out {resumed}: cache/ holds files that no `icl-run` run wrote (cache/notes.txt); "
                                "move them out of it, or choose another --out")
    # the answer cache --cache names may lie inside --out
    shared = tmp_path / "shared"
    shared.mkdir()
    shutil.copytree(run / "cache", shared / "answers-cache")
    assert run_prompts(prompts, shared, make_client(server.url), cache_dir=shared / "answers-cache",
                       progress=False).cache_hits == 3


def test_proxy_variables_are_not_used(server: FakeServer, prompts: Path, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # docs/icl.md: the client talks to the server directly. A client that reads HTTPS_PROXY (httpx2 and the openai
    # SDK do by default) sent every request to a dead proxy here: no answer, each document failed as a connection error
    import socket

    trap = socket.socket()
    trap.bind(("127.0.0.1", 0))
    trap.listen(8)
    trap.settimeout(0)
    try:
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            monkeypatch.setenv(name, f"http://127.0.0.1:{trap.getsockname()[1]}")
        for name in ("NO_PROXY", "no_proxy"):
            monkeypatch.delenv(name, raising=False)
        server.models = ["test-model"]
        res = run_prompts(prompts, tmp_path / "run", make_client(server.url), progress=False)
        assert (res.answered, res.failed) == (3, []) and server.total == 3 and server.gets["/v1/models"] == 1
        with pytest.raises(BlockingIOError):
            trap.accept()  # nothing connected to the proxy
    finally:
        trap.close()
