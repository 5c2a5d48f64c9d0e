"""Timings of the ICL steps on the 500 Re-DocRED test documents (dev as the demonstration pool).

    python bench/icl_timings.py [--docs N]

(Not bench/icl.py: run as a script, that name would hide the icl package.)

Measures, with the machine's load printed beside them:
- `icl prompts` at 1-shot, 3-shot and 3-shot +DA +CG (dev as its own "twins", to time the builder),
  and a rerun that the step finds up to date;
- the prompt length distribution (chars, and tokens at the measured chars-per-token ratio);
- `icl run` against a scripted local server (127.0.0.1, answers in no time): fresh, then from cache;
- `icl parse`.
The model's own time is not measured here: `make icl-smoke` runs a real server.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from icl.client import ChatClient
from icl.parse import parse_run
from icl.prompts import build_prompts
from icl.run import run_prompts

REPO = Path(__file__).resolve().parents[1]


class Scripted(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server API
        self.rfile.read(int(self.headers["Content-Length"]))
        body = json.dumps({"choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": "<[1]; country; [2]>"}}],
                           "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def timed(fn: Any) -> tuple[Any, float]:
    began = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - began


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=500, help="test documents (the first N)")
    args = ap.parse_args()
    shared = Path(os.environ.get("ENVBENCH_SHARED", REPO.parent / "shared" / "data")) / "re-docred"
    test, dev = shared / "test_revised.json", shared / "dev_revised.json"
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; {args.docs} documents")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, kw in (("1-shot", {"shots": 1}), ("3-shot", {"shots": 3}),
                         ("3-shot +DA +CG", {"shots": 3, "da": True, "cg": True, "twins_path": dev})):
            folder = work / name.replace(" ", "")
            res, s = timed(lambda kw=kw, folder=folder: build_prompts(test, dev, folder, limit=args.docs, **kw))
            _, again = timed(lambda kw=kw, folder=folder: build_prompts(test, dev, folder, limit=args.docs, **kw))
            c, t = res.length["chars"], res.length["tokens_estimated"]
            print(f"icl prompts {name}: {s:.2f} s (up-to-date rerun {again:.2f} s); chars median {c['median']:,} "
                  f"p95 {c['p95']:,} max {c['max']:,}; tokens at {res.length['chars_per_token']} chars/token "
                  f"median {t['median']:,} p95 {t['p95']:,} max {t['max']:,}")
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
        httpd.daemon_threads = True
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        try:
            for concurrency in (1, 8):
                out = work / f"run{concurrency}"
                client = ChatClient(url, "m")
                fresh, s1 = timed(lambda out=out, client=client, c=concurrency: run_prompts(
                    work / "1-shot", out, client, concurrency=c, progress=False))
                cached, s2 = timed(lambda out=out, client=client, c=concurrency: run_prompts(
                    work / "1-shot", out, client, concurrency=c, progress=False))
                print(f"icl run, scripted server, concurrency {concurrency}: {s1:.2f} s fresh ({fresh.requests} "
                      f"requests), {s2:.2f} s from cache ({cached.requests} requests)")
        finally:
            httpd.shutdown()
        _, s = timed(lambda: parse_run(work / "1-shot", work / "run1", work / "pred.json"))
        print(f"icl parse: {s:.2f} s")


if __name__ == "__main__":
    main()
