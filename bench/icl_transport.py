"""The transport of `icl run` beside the well-kept clients: what each does against hostile servers, and its speed.

    python bench/icl_transport.py [--rounds 10] [--requests 200] [--out runs/icl-transport/figures.json]
    python bench/icl_transport.py --tests httpx2-deadline   # the ICL client tests with that transport in place

Candidates, each an ``exchange(method, url, data, headers, timeout, limit)`` as ``icl.transport`` has it:

- ``stdlib``: ``icl.transport.exchange`` (http.client, a watchdog shuts the socket at the deadline);
- ``httpx2``: httpx2 (the maintained fork of httpx), sync, one pooled client for all threads, streamed, with its
  own timeout (which bounds each socket operation);
- ``httpx2-deadline``: httpx2 async, the whole exchange inside ``asyncio.wait_for`` (a deadline around the
  request), an event loop and a pooled client per thread;
- ``openai``: the ``openai`` SDK as a whole client, as configured by its options alone (no retries, its timeout;
  behaviour only: it reads completions, not arbitrary replies), when it can be imported (``pip install openai``,
  or ``PYTHONPATH`` to a folder holding it).

The candidates' glue (the size cap while streaming, the exceptions mapped to ``icl.transport``'s) is written here
as it would be in ``icl``, so ``--tests`` can run the ICL client tests with each in place. The server runs in a
child process (127.0.0.1, TCP_NODELAY), so its work does not share the client's interpreter. Behaviour: a
completion of 234 bytes dripped one byte per 0.05 s (12 s) against a 1 s timeout, 64 MiB with and without
Content-Length against the 8 MiB cap, a 302, JSON 100,000 levels deep, an API key with CR LF or outside ASCII,
proxy variables pointing at a trap, and a port where nothing listens. Speed: ms per request of a 1.3 kB
completion, sequential and 8 threads, the candidates interleaved round by round, each ratio to ``stdlib`` paired
by round (median, and a bootstrap 95% interval of the geometric mean over rounds); import time of a fresh
interpreter. Figures go to ``--out`` (JSON) and stdout; docs/icl.md ("The transport") quotes them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import random
import socket
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from icl import transport  # noqa: E402 - after the path, so the script runs from anywhere
from icl.openai_format import NotACompletion, read_completion  # noqa: E402

CAP = transport.MAX_REPLY_BYTES
HUGE = 64 * 2**20
DRIP = json.dumps({"choices": [{"index": 0, "finish_reason": "stop",
                               "message": {"role": "assistant", "content": "<[1]; country; [2]>" * 7}}]}).encode()
COMPLETION = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                         "choices": [{"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant", "content": "<[1]; country; [2]>\n" * 50}}],
                         "usage": {"prompt_tokens": 900, "completion_tokens": 400, "total_tokens": 1300}}).encode()


# ---------------------------------------------------------------------------------------------------- the server
class Handler(BaseHTTPRequestHandler):
    """``/<mode>/v1/chat/completions``: ``ok`` a 1 kB completion; ``drip`` that completion a byte per 0.05 s;
    ``huge``/``huge-announced`` a valid completion padded to 64 MiB, without/with Content-Length; ``nested``
    JSON 100,000 levels deep; ``redirect`` a 302 to ``/elsewhere/...``; ``headers`` the request's headers as the
    answer. ``GET /stats`` counts the requests per path."""

    protocol_version = "HTTP/1.1"
    # the status line and headers go out in one write, the body in another: with Nagle on, a kept-alive connection
    # (the pooled clients) waits for the client's delayed ACK, 40 ms a request, which real servers do not cost
    disable_nagle_algorithm = True
    counts: dict[str, int] = {}

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        if self.path == "/stats":
            return self._send(200, json.dumps(Handler.counts).encode())
        self._answer()

    def do_POST(self) -> None:  # noqa: N802 - http.server API
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._answer()

    def _answer(self) -> None:
        key = f"{self.command} {self.path}"
        Handler.counts[key] = Handler.counts.get(key, 0) + 1
        mode = self.path.strip("/").split("/", 1)[0]
        if mode == "drip":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(DRIP)))
            self.end_headers()
            for b in DRIP:
                try:
                    self.wfile.write(bytes([b]))
                    self.wfile.flush()
                except OSError:
                    return
                time.sleep(0.05)
        elif mode in ("huge", "huge-announced"):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if mode == "huge-announced":
                self.send_header("Content-Length", str(HUGE))
            else:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            pad = b" " * (HUGE - len(COMPLETION))
            try:
                self.wfile.write(COMPLETION[:-1] + pad + COMPLETION[-1:])
            except OSError:
                return
        elif mode == "nested":
            self._send(200, b"[" * 100_000 + b"]" * 100_000)
        elif mode == "redirect":
            self._send(302, b"", {"Location": self.path.replace("/redirect/", "/elsewhere/", 1)})
        elif mode == "headers":
            seen = json.dumps(dict(self.headers))
            body = json.loads(COMPLETION)
            body["choices"][0]["message"]["content"] = seen
            self._send(200, json.dumps(body).encode())
        else:
            self._send(200, COMPLETION)

    def _send(self, code: int, data: bytes, extra: dict[str, str] | None = None) -> None:
        self.send_response(code)
        for k, v in {"Content-Type": "application/json", "Content-Length": str(len(data)), **(extra or {})}.items():
            self.send_header(k, v)
        with contextlib.suppress(OSError):  # the client gave up
            self.end_headers()
            self.wfile.write(data)


def serve() -> None:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.request_queue_size = 128
    print(httpd.server_address[1], flush=True)
    httpd.serve_forever()


class Server:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, __file__, "--serve"], stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.port = int(self.proc.stdout.readline())
        self.root = f"http://127.0.0.1:{self.port}"

    def url(self, mode: str) -> str:
        return f"{self.root}/{mode}/v1/chat/completions"

    def stats(self) -> dict[str, int]:
        return json.loads(transport.exchange("GET", f"{self.root}/stats", None, {}, 5)[2])

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


# ---------------------------------------------------------------------------------------------------- candidates
Exchange = Callable[..., tuple[int, dict[str, str], bytes]]


def _refused_in(exc: BaseException) -> ConnectionRefusedError | None:
    """The ConnectionRefusedError an httpx2 error wraps (the client stops at once on one), if any."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError):  # asyncio words it "Connect call failed (host, port)"
            return ConnectionRefusedError(seen.errno, os.strerror(seen.errno)) if seen.errno else seen
        seen = seen.__cause__ or seen.__context__
    return None


def _mapped(exc: BaseException, got: list[int]) -> BaseException:
    """httpx2's error (or the deadline's) as ``icl.transport`` words it; ``got``: bytes arrived, bytes announced."""
    import httpx2

    if isinstance(exc, (asyncio.TimeoutError, httpx2.TimeoutException)):
        return transport.TimedOut()
    if isinstance(exc, httpx2.RemoteProtocolError):
        return transport.CutShort(got[0], got[1]) if got[1] and got[0] < got[1] else ConnectionResetError(str(exc))
    return _refused_in(exc) or OSError(str(exc))


def _read_capped(status: int, headers: dict[str, str], chunks: Any, limit: int) -> tuple[int, dict[str, str], bytes]:
    announced = headers.get("content-length")
    if announced is not None and announced.isdigit() and int(announced) > limit:
        raise transport.TooLarge(f"it announces {int(announced):,} bytes", limit)
    out, got = [], 0
    for chunk in chunks:
        got += len(chunk)
        if got > limit:
            raise transport.TooLarge(f"more than {limit:,} bytes arrived", limit)
        out.append(chunk)
    return status, headers, b"".join(out)


_SHARED: dict[str, Any] = {}  # the sync httpx2 client, one for all threads (its pool is thread-safe)
_PER_THREAD = threading.local()  # an event loop and an AsyncClient per thread, for the deadline candidate


def _sync_client(timeout: float) -> Any:
    import httpx2

    if timeout not in _SHARED:  # one client per timeout, as a run has one --timeout
        _SHARED[timeout] = httpx2.Client(timeout=timeout, trust_env=False, follow_redirects=False)
    return _SHARED[timeout]


def httpx2_exchange(method: str, url: str, data: bytes | None, headers: dict[str, str], timeout: float,
                    limit: int | None = None) -> tuple[int, dict[str, str], bytes]:
    """httpx2, sync, one pooled client: its timeout bounds each socket operation (connect, each read), not the
    request."""
    import httpx2

    limit = transport.MAX_REPLY_BYTES if limit is None else limit
    got: list[int] = [0, 0]  # bytes arrived, bytes announced
    try:
        with _sync_client(timeout).stream(method, url, content=data, headers=headers) as resp:
            hdrs = {k.lower(): v for k, v in resp.headers.items()}
            got[1] = int(hdrs.get("content-length", "0") or 0)

            def counted() -> Any:
                for chunk in resp.iter_raw():
                    got[0] += len(chunk)
                    yield chunk

            return _read_capped(resp.status_code, hdrs, counted(), limit)
    except httpx2.TransportError as exc:
        raise _mapped(exc, got) from None


def httpx2_deadline_exchange(method: str, url: str, data: bytes | None, headers: dict[str, str], timeout: float,
                             limit: int | None = None) -> tuple[int, dict[str, str], bytes]:
    """httpx2, async, the whole exchange inside ``asyncio.wait_for(timeout)``; each of the run's threads keeps an
    event loop and a pooled AsyncClient of its own (a client belongs to one loop)."""
    import httpx2

    limit = transport.MAX_REPLY_BYTES if limit is None else limit
    got: list[int] = [0, 0]
    if getattr(_PER_THREAD, "loop", None) is None:
        _PER_THREAD.loop = asyncio.new_event_loop()
        _PER_THREAD.clients = {}
    loop = _PER_THREAD.loop
    if timeout not in _PER_THREAD.clients:
        async def make() -> Any:
            return httpx2.AsyncClient(timeout=timeout, trust_env=False, follow_redirects=False)

        _PER_THREAD.clients[timeout] = loop.run_until_complete(make())
    client = _PER_THREAD.clients[timeout]

    async def go() -> tuple[int, dict[str, str], bytes]:
        async with client.stream(method, url, content=data, headers=headers) as resp:
            hdrs = {k.lower(): v for k, v in resp.headers.items()}
            got[1] = int(hdrs.get("content-length", "0") or 0)
            if got[1] > limit:
                raise transport.TooLarge(f"it announces {got[1]:,} bytes", limit)
            chunks = []
            async for chunk in resp.aiter_raw():
                got[0] += len(chunk)
                if got[0] > limit:
                    raise transport.TooLarge(f"more than {limit:,} bytes arrived", limit)
                chunks.append(chunk)
            return resp.status_code, hdrs, b"".join(chunks)

    try:
        return loop.run_until_complete(asyncio.wait_for(go(), timeout))
    except (asyncio.TimeoutError, httpx2.TransportError) as exc:
        raise _mapped(exc, got) from None


CANDIDATES: dict[str, Exchange] = {"stdlib": transport.exchange, "httpx2": httpx2_exchange,
                                   "httpx2-deadline": httpx2_deadline_exchange}


def openai_sdk() -> Any:
    try:
        import openai
    except ImportError:
        return None
    return openai


def sdk_exchange(method: str, url: str, data: bytes | None, headers: dict[str, str], timeout: float,
                 limit: int | None = None) -> tuple[int, dict[str, str], bytes]:
    """The openai SDK asked for a completion as a user of it would (no retries, its timeout); its reply, read by
    the SDK, re-encoded so the checks below read every candidate alike."""
    openai = openai_sdk()
    key = headers.get("Authorization", "Bearer sk-none").removeprefix("Bearer ")
    client = openai.OpenAI(base_url=url.removesuffix("/chat/completions"), api_key=key, max_retries=0,
                           timeout=timeout)
    try:
        comp = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    except openai.APITimeoutError:
        raise transport.TimedOut() from None
    except openai.APIConnectionError as exc:
        raise _refused_in(exc) or OSError(str(exc)) from None
    except openai.APIStatusError as exc:
        return exc.status_code, {k.lower(): v for k, v in exc.response.headers.items()}, exc.response.content
    finally:
        client.close()
    return 200, {}, comp.model_dump_json().encode()


# ---------------------------------------------------------------------------------------------------- behaviour
def outcome(fn: Callable[[], Any]) -> tuple[str, float, float]:
    """(what happened, seconds, peak MiB of Python allocations); said on stderr as it goes."""
    tracemalloc.start()
    began = time.monotonic()
    try:
        res = fn()
        what = res if isinstance(res, str) else "returned"
    except Exception as exc:  # noqa: BLE001 - what each candidate raises is the finding
        what = f"{type(exc).__name__}: {str(exc)[:120]}"
    took = time.monotonic() - began
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    print(f"  {what[:100]} ({took:.2f} s, {peak:.1f} MiB)", file=sys.stderr, flush=True)
    return what, round(took, 2), round(peak, 1)


class ProxyTrap:
    """A port that counts the connections made to it (a proxy a client should not use) and closes them."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.hits = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.hits += 1
            conn.close()


def behaviour(name: str, ex: Exchange, server: Server) -> dict[str, Any]:
    """What the candidate does against each hostile server."""
    found: dict[str, Any] = {}
    print(f"{name}:", file=sys.stderr, flush=True)

    def completion(mode: str, timeout: float = 10.0, headers: dict[str, str] | None = None) -> str:
        status, hdrs, raw = ex("POST", server.url(mode), b'{"model": "m"}', headers or {}, timeout)
        if status >= 300:
            return f"HTTP {status}, location {hdrs.get('location')}"
        try:
            return f"a completion of {len(read_completion(raw, 0.0).content):,} characters ({len(raw):,} bytes)"
        except NotACompletion as exc:
            return f"not a completion: {str(exc)[:60]}"

    found["drip_1s"] = outcome(lambda: completion("drip", timeout=1.0))
    found["huge_unannounced"] = outcome(lambda: completion("huge"))
    found["huge_announced"] = outcome(lambda: completion("huge-announced"))
    before = server.stats().get("POST /elsewhere/v1/chat/completions", 0) + \
        server.stats().get("GET /elsewhere/v1/chat/completions", 0)
    found["redirect"] = outcome(lambda: completion("redirect"))
    after = server.stats().get("POST /elsewhere/v1/chat/completions", 0) + \
        server.stats().get("GET /elsewhere/v1/chat/completions", 0)
    found["redirect_followed"] = after > before
    found["nested"] = outcome(lambda: completion("nested"))
    for label, key in (("key_crlf", "sk-1\r\nX-Evil: 1"), ("key_not_ascii", "sk-ключ")):
        def sent(key: str = key) -> str:
            status, _, raw = ex("POST", server.url("headers"), b"{}", {"Authorization": f"Bearer {key}"}, 10)
            seen = json.loads(read_completion(raw, 0.0).content) if status == 200 else {}
            if "X-Evil" in seen:
                return "sent: the server saw a header X-Evil"
            return f"sent: the server saw Authorization {seen.get('Authorization')!r}"

        found[label] = outcome(sent)
    trap = ProxyTrap()
    saved = {k: os.environ.get(k) for k in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "no_proxy")}
    for k in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        os.environ[k] = f"http://127.0.0.1:{trap.sock.getsockname()[1]}"
    for k in ("NO_PROXY", "no_proxy"):
        os.environ.pop(k, None)
    try:
        found["proxy_env"] = outcome(lambda: completion("ok", timeout=5))
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    found["proxy_used"] = trap.hits > 0
    trap.sock.close()
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    port = dead.getsockname()[1]
    dead.close()
    found["nothing_listens"] = outcome(
        lambda: ex("POST", f"http://127.0.0.1:{port}/v1/chat/completions", b"{}", {}, 5))
    return found


# ---------------------------------------------------------------------------------------------------- speed
def per_request_ms(ex: Exchange, url: str, n: int, threads: int) -> float:
    def one(_: int) -> None:
        status, _, raw = ex("POST", url, b'{"model": "m"}', {"Content-Type": "application/json"}, 30)
        assert status == 200 and read_completion(raw, 0.0).content

    began = time.perf_counter()
    if threads == 1:
        for i in range(n):
            one(i)
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(one, range(n)))
    return 1000 * (time.perf_counter() - began) / n


def ratio_interval(ratios: list[float], seed: int = 0) -> dict[str, float]:
    """Median ratio and a bootstrap 95% interval of the geometric mean over rounds (paired by round)."""
    logs = [math.log(r) for r in ratios]
    rng = random.Random(seed)
    means = sorted(sum(rng.choice(logs) for _ in logs) / len(logs) for _ in range(2000))
    ordered = sorted(ratios)
    mid = ordered[len(ordered) // 2] if len(ordered) % 2 else (ordered[len(ordered) // 2 - 1] + ordered[len(ordered) // 2]) / 2
    return {"median": round(mid, 3), "geo_mean": round(math.exp(sum(logs) / len(logs)), 3),
            "ci95": [round(math.exp(means[49]), 3), round(math.exp(means[1949]), 3)]}


def speed(names: list[str], server: Server, rounds: int, n: int) -> dict[str, Any]:
    url = server.url("ok")
    out: dict[str, Any] = {}
    for threads in (1, 8):
        ms: dict[str, list[float]] = {name: [] for name in names}
        for name in names:  # warm-up: imports, first connections
            per_request_ms(CANDIDATES[name], url, 20, threads)
        for r in range(rounds):
            order = names if r % 2 == 0 else names[::-1]  # A B C, C B A: no candidate always first
            for name in order:
                ms[name].append(per_request_ms(CANDIDATES[name], url, n, threads))
        out[f"threads_{threads}"] = {
            name: {"ms_per_request_median": round(sorted(v)[len(v) // 2], 3),
                   "ms_min_max": [round(min(v), 3), round(max(v), 3)],
                   "ratio_to_stdlib": ratio_interval([a / b for a, b in zip(v, ms["stdlib"])])}
            for name, v in ms.items()}
    return out


def import_ms(module: str, runs: int = 7) -> float:
    """Median wall ms of a fresh interpreter importing ``module`` (minus one importing nothing)."""
    def once(code: str) -> float:
        began = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        return time.perf_counter() - began

    base = sorted(once("pass") for _ in range(runs))[runs // 2]
    return round(1000 * (sorted(once(f"import {module}") for _ in range(runs))[runs // 2] - base), 1)


# ---------------------------------------------------------------------------------------------------- the tests
TESTS = ["tests/icl/test_client.py", "tests/icl/test_cli.py", "tests/icl/test_parse.py"]


def run_tests(name: str) -> dict[str, Any]:
    """The ICL client tests with ``name`` in place of icl.transport.exchange (the two Ctrl-C tests run `icl run` in
    a child process, which keeps the standard library's): how many pass, and which fail."""
    import pytest

    class Count:
        def __init__(self) -> None:
            self.passed, self.failed = 0, []

        def pytest_runtest_logreport(self, report: Any) -> None:
            if report.failed:
                self.failed.append(report.nodeid)
            elif report.when == "call" and report.passed:
                self.passed += 1

    transport.exchange = CANDIDATES[name]  # type: ignore[assignment]
    count = Count()
    pytest.main(["-q", "-p", "no:cacheprovider", *TESTS], plugins=[count])
    return {"transport": name, "passed": count.passed, "failed": count.failed}


def tests_in_child(name: str) -> dict[str, Any]:
    res = subprocess.run([sys.executable, __file__, "--tests", name], capture_output=True, text=True, cwd=REPO)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=10, help="speed rounds per candidate (interleaved)")
    ap.add_argument("--requests", type=int, default=200, help="requests per candidate per round")
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "icl-transport" / "figures.json",
                    help="where the figures go (JSON)")
    ap.add_argument("--tests", choices=sorted(CANDIDATES), help="only run the ICL client tests with this transport")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        return serve()
    if args.tests:
        found = run_tests(args.tests)
        print(json.dumps(found))
        sys.exit(1 if found["failed"] else 0)
    names = list(CANDIDATES)
    if openai_sdk() is not None:
        CANDIDATES["openai"] = sdk_exchange
    server = Server()
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO)
        figures: dict[str, Any] = {"commit": commit.stdout.strip(), "date": time.strftime("%Y-%m-%d"),
                                   "python": sys.version.split()[0], "cpus": os.cpu_count(),
                                   "load_1min": round(os.getloadavg()[0], 2)}
        figures["behaviour"] = {name: behaviour(name, ex, server) for name, ex in CANDIDATES.items()}
        figures["speed"] = speed(names, server, args.rounds, args.requests)
        figures["import_ms"] = {m: import_ms(m) for m in ("icl.transport", "httpx2", "openai")
                                if m != "openai" or "openai" in CANDIDATES}
        figures["tests"] = {name: tests_in_child(name) for name in names}
        figures["load_1min_after"] = round(os.getloadavg()[0], 2)
    finally:
        server.close()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=1, ensure_ascii=False))
    print(json.dumps(figures, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
