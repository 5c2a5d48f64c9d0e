"""One HTTP exchange, bounded whole: a deadline from connecting to the last byte, and a cap on the reply's size.

Standard library only (``http.client``), by a measured decision (docs/icl.md, "The transport", from
bench/icl_transport.py): httpx2's timeout, and the ``openai`` SDK's on it, bound each socket operation, not a
request, so the deadline around the whole exchange is ours either way; httpx2 under ``asyncio.wait_for`` passes
the same tests with as much glue as this module, and the SDK fails five of the six behaviours the hostile tests
pin. What the rest of ``icl`` relies on, each pinned by a test of tests/icl/test_client.py:

- ``timeout`` bounds the whole exchange: a watchdog shuts the socket at the deadline, whatever phase it is in, so
  a server sending a byte now and then cannot hold a request past it (``TimedOut``);
- a reply over ``limit`` bytes, announced or arriving, is refused before it is all read (``TooLarge``);
- redirects are not followed: a 3xx comes back as it is, with its ``location`` header, for the caller to name;
- a reply shorter than its ``Content-Length`` is ``CutShort``, not an answer;
- proxy variables (``HTTPS_PROXY``) are not read: the request goes to the host of the URL;
- a reply nested too deep for the JSON parser is the caller's to read (``icl.openai_format.read_completion``);
- headers go out as given; the caller checks what it puts there (``icl.client.check_api_key``).

Other failures to connect or to read come out as ``OSError`` (``ConnectionRefusedError`` among them) or
``http.client.HTTPException``.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
import urllib.parse
from typing import Any

# A whole reply is bounded by this. A chat completion of 1024 tokens is a few kB (100 kB with logprobs); a
# bigger reply is no completion, and reading 200 MB of it took 612 MB of memory.
MAX_REPLY_BYTES = 8 * 2**20


class TimedOut(Exception):
    """No whole reply before the deadline."""


class TooLarge(Exception):
    """The reply announced, or sent, more than the limit; ``limit`` is the cap in bytes."""

    def __init__(self, message: str, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


class CutShort(Exception):
    """The connection closed before the announced length arrived."""

    def __init__(self, got: int, expected: int) -> None:
        super().__init__(f"{got} of {expected}")
        self.got, self.expected = got, expected


def exchange(method: str, url: str, data: bytes | None, headers: dict[str, str], timeout: float,
             limit: int | None = None) -> tuple[int, dict[str, str], bytes]:
    """(status, lower-cased headers, body) of one HTTP exchange, redirects not followed.

    A watchdog shuts the socket at ``timeout`` seconds from the start, whatever phase the exchange is
    in (a socket timeout alone bounds each read, so a byte every few seconds would never end it);
    a body past ``limit`` bytes (default ``MAX_REPLY_BYTES``), announced or arriving, raises TooLarge
    before it is all read.
    """
    limit = MAX_REPLY_BYTES if limit is None else limit
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
            raise TooLarge(f"it announces {int(announced):,} bytes", limit)
        chunks: list[bytes] = []
        got = 0
        while True:
            chunk = resp.read1(1 << 16)
            if not chunk:
                break
            got += len(chunk)
            if got > limit:
                raise TooLarge(f"more than {limit:,} bytes arrived", limit)
            chunks.append(chunk)
        if expired.is_set():  # the watchdog's shutdown reads as the end of the reply
            raise TimedOut()
        if resp.length:  # the connection closed before the announced length arrived
            raise CutShort(got, got + resp.length)
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, b"".join(chunks)
    except (OSError, http.client.HTTPException) as exc:
        if expired.is_set() or isinstance(exc, TimeoutError):
            raise TimedOut() from None
        raise
    finally:
        watchdog.cancel()
        conn.close()


def call_json(url: str, headers: dict[str, str], timeout: float, body: Any = None) -> tuple[Any, str]:
    """(the JSON reply or None, "answered" | "timeout" | "unreachable"): a GET, or a POST of ``body``.

    For questions whose answer is optional (a model list, a token count): every failure is a state, none raises.
    """
    data = None if body is None else json.dumps(body).encode("utf-8")
    if data is not None:
        headers = {**headers, "Content-Type": "application/json"}
    try:
        status, _, raw = exchange("GET" if data is None else "POST", url, data, headers, timeout)
    except TimedOut:
        return None, "timeout"
    except (OSError, http.client.HTTPException, TooLarge, CutShort):
        return None, "unreachable"
    try:
        return (json.loads(raw) if status == 200 else None), "answered"
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth: nothing learnt
        return None, "answered"


__all__ = ["MAX_REPLY_BYTES", "CutShort", "TimedOut", "TooLarge", "call_json", "exchange"]
