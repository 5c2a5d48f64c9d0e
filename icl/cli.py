"""``envbench icl prompts|run|parse``: in-context learning with demonstration augmentation and consistency guidance."""

from __future__ import annotations

import json
import os
import sys
import urllib.parse

import click

from envbench.cli._options import progress_option
from icl.client import DEFAULT_MAX_TOKENS, DEFAULT_TIMEOUT_S, MAX_RETRIES, MAX_WAIT_S
from icl.openai_format import MAX_SERVER_COUNT
from icl.run import MAX_CONCURRENCY
from icl.templates import TEMPLATES as TEMPLATE_NAMES
from icl.util import INT64_MAX, INT64_MIN


@click.group()
def icl() -> None:
    """In-context learning: build few-shot prompts, query an LLM server, parse its answers.

    \b
    Example: the three steps, then scoring
      envbench icl prompts --docs data/env/test_env.json --train data/sample/docs/train.json \\
          --twins data/twins/train_twins.json --shots 3 --da --cg --out runs/icl/prompts
      envbench icl run --prompts runs/icl/prompts --base-url http://localhost:8000/v1 \\
          --model Qwen2.5-7B-Instruct --out runs/icl/qwen
      envbench icl parse --prompts runs/icl/prompts --run runs/icl/qwen --out runs/icl/qwen/pred.json
      envbench evaluate --gold data/env/test_env.json --pred runs/icl/qwen/pred.json
    """


@icl.command("prompts", short_help="Write one few-shot prompt per test document.")
@click.option("--docs", "docs_path", required=True, type=click.Path(dir_okay=False),
              help="Test documents (DocRED JSON); one prompt is written per document.")
@click.option("--train", "train_path", required=True, type=click.Path(dir_okay=False),
              help="Training documents (DocRED JSON) the demonstrations are drawn from (those with labels).")
@click.option("--twins", "twins_path", type=click.Path(dir_okay=False), default=None,
              help="Renamed twins of --train (OUT/<stem>_twins.json of `envbench generate --pool train --twins`); "
                   "needed by --da.")
@click.option("--shots", type=click.IntRange(min=0), default=1, show_default=True,
              help="Demonstrations per prompt (the paper uses 1 and 3).")
@click.option("--da", is_flag=True, help="Demonstration augmentation: follow each demonstration by its renamed twin.")
@click.option("--cg", is_flag=True,
              help="Consistency guidance: say that each demonstration pair differs only in entity names (needs --da).")
@click.option("--seed", type=click.IntRange(min=INT64_MIN, max=INT64_MAX), default=0, show_default=True,
              help="Seed of the demonstration draw (a 64-bit integer, which the manifest records).")
@click.option("--same-demos-for-renamed/--demos-per-title", default=True, show_default=True,
              help="Draw demonstrations by the title less an Env '-k' suffix, so a document and its renamed "
                   "versions get the same demonstrations.")
@click.option("--max-demo-tokens", type=click.IntRange(min=1, max=INT64_MAX), default=None,
              help="Use only training documents of at most this many tokens as demonstrations (shorter prompts).")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="Only the first N test documents (a quick look); of an Env file, the first N source documents "
                   "with all their renamed copies.")
@click.option("--skip-invalid", is_flag=True, help="Skip invalid documents instead of stopping.")
@click.option("--template", type=click.Choice(list(TEMPLATE_NAMES)), default="paper", show_default=True,
              help="paper: the paper's Appendix A word for word (entities numbered in the order of their first "
                   "mention, each mention enclosed as '[N] mention [N]', answers '<[h]; relation; [t]>'; "
                   "icl/templates.py says what the appendix leaves open and what was chosen); envbench-v1: the "
                   "harness's first template ('<eN>mention</eN>', numbered by first mention).")
@click.option("--system", default=None,
              help="System message sent before each prompt. Default: the template's own (paper: the reference "
                   "code's 'You are a helpful assistant.'; envbench-v1: none); '' sends none, so the server's "
                   "chat template may insert its own default.")
@click.option("--force", is_flag=True, help="Rebuild even when OUT is up to date with these inputs and options.")
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="Folder for prompts/<nnnn>.json and .txt, index.json and manifest.json.")
def prompts_cmd(docs_path: str, train_path: str, twins_path: str | None, shots: int, da: bool, cg: bool,
                seed: int, same_demos_for_renamed: bool, max_demo_tokens: int | None, limit: int | None,
                skip_invalid: bool, template: str, system: str | None, force: bool, out: str) -> None:
    """Write one few-shot prompt per test document (JSON for `icl run`, .txt to read).

    Entities are numbered and every mention is marked as the template says; each prompt file
    keeps entity_map (number N -> vertexSet index entity_map[N-1]). The summary gives the length
    distribution in characters and estimated tokens. Rerunning with the same inputs and options
    writes nothing (OUT/manifest.json says it is up to date).

    \b
    Example:
      envbench icl prompts --docs data/sample/docs/test.json --train data/sample/docs/train.json \\
          --shots 3 --out runs/icl/p3
      envbench icl prompts --docs data/sample/docs/test.json --train data/sample/docs/train.json \\
          --twins data/twins/train_twins.json --shots 1 --da --cg --out runs/icl/p1-da-cg
      envbench icl prompts --docs data/sample/docs/test.json --train data/sample/docs/train.json \\
          --template envbench-v1 --system '' --limit 2 --out runs/icl/v1
    """
    from icl.prompts import build_prompts

    result = build_prompts(docs_path, train_path, out, twins_path=twins_path, shots=shots, da=da, cg=cg,
                           seed=seed, same_demos_for_renamed=same_demos_for_renamed,
                           max_demo_tokens=max_demo_tokens, limit=limit, skip_invalid=skip_invalid,
                           template=template, system=system, force=force)
    click.echo(result.summary())


@icl.command("run", short_help="Query a chat-completions server (cached, resumable).")
@click.option("--prompts", "prompts_dir", required=True, type=click.Path(file_okay=False),
              help="Folder written by `envbench icl prompts`.")
@click.option("--base-url", required=True,
              help="OpenAI-compatible server, e.g. http://localhost:8000/v1 (vLLM), http://localhost:11434/v1 "
                   "(Ollama), http://localhost:8080/v1 (llama.cpp) or https://api.openai.com/v1.")
@click.option("--model", required=True, help="Model name as the server knows it.")
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="Folder for answers.json, failures.json, run.json (and cache/ unless --cache is given).")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True,
              help="Environment variable holding the API key; local servers need none (unset is fine).")
@click.option("--max-tokens", type=click.IntRange(min=1, max=MAX_SERVER_COUNT), default=DEFAULT_MAX_TOKENS,
              show_default=True,
              help="Most tokens per answer (1024, as the paper's reference code).")
@click.option("--temperature", type=click.FloatRange(min=0.0), default=0.0, show_default=True, help="Sampling temperature.")
@click.option("--stop", "stop", multiple=True,
              help="A stop sequence (repeat for several); sent as the request's stop field, part of the cache key.")
@click.option("--seed", type=click.IntRange(min=INT64_MIN, max=INT64_MAX), default=None,
              help="Sampling seed (a 64-bit integer) sent as the request's seed field (servers that honour it repeat sampled answers); "
                   "part of the cache key.")
@click.option("--concurrency", type=click.IntRange(min=1, max=MAX_CONCURRENCY), default=1, show_default=True,
              help="Requests in flight at once. A server with fewer parallel slots queues the rest, and queue time "
                   "counts against --timeout: raise it only as far as the server runs requests in parallel "
                   "(llama.cpp --parallel, OLLAMA_NUM_PARALLEL; vLLM and hosted APIs: 8-32).")
@click.option("--timeout", type=click.FloatRange(min=0.0, min_open=True, max=MAX_WAIT_S), default=DEFAULT_TIMEOUT_S,
              show_default=True,
              help="Seconds for one whole request, from connecting to the last byte of the reply, time spent in the "
                   "server's queue included. The default suits a CPU server (docs/icl.md has the measured latencies); "
                   "a CPU server keeps computing a request given up on, so a retry queues behind it.")
@click.option("--retries", type=click.IntRange(min=0, max=MAX_RETRIES), default=6, show_default=True,
              help="Further tries on 429, 5xx, timeouts, dropped connections and cut replies (backoff doubles each time).")
@click.option("--backoff", type=click.FloatRange(min=0.0, max=MAX_WAIT_S), default=1.0, show_default=True,
              help="First retry delay in seconds.")
@click.option("--max-wait", type=click.FloatRange(min=0.0, max=MAX_WAIT_S), default=60.0, show_default=True,
              help="Longest wait before one retry, in seconds, also when the server's Retry-After asks for longer; "
                   "waits of 5 s or more are announced with their reason.")
@click.option("--context", type=click.IntRange(min=1, max=MAX_SERVER_COUNT), default=None,
              help="The model's context in tokens: prompts whose length plus --max-tokens exceed it are named before "
                   "sending, their tokens counted by the server's tokenizer where it has one (llama.cpp /tokenize, "
                   "llama-cpp-python /extras/tokenize/count), else estimated. Default: what the server reports (vLLM "
                   "/v1/models, llama.cpp /props; llama-cpp-python reports none).")
@click.option("--extra-body", default=None,
              help='JSON object merged into each request (part of the cache key); null removes a field, e.g. '
                   '\'{"max_tokens": null, "max_completion_tokens": 4096}\' or '
                   '\'{"chat_template_kwargs": {"enable_thinking": false}}\'. It may not set model or messages, nor '
                   'replace a field an option sends (--temperature, --max-tokens, --stop, --seed).')
@click.option("--cache", "cache_dir", type=click.Path(file_okay=False), default=None,
              help="Answer cache folder (default OUT/cache); share it between runs to never pay twice. Not the "
                   "--prompts folder, nor inside it.")
@click.option("--cache-only", is_flag=True, help="Send no request; documents not in the cache count as failed.")
@progress_option
def run_cmd(prompts_dir: str, base_url: str, model: str, out: str, api_key_env: str, max_tokens: int,
            temperature: float, stop: tuple[str, ...], seed: int | None, concurrency: int, timeout: float,
            retries: int, backoff: float, max_wait: float, context: int | None, extra_body: str | None,
            cache_dir: str | None, cache_only: bool, progress: bool) -> None:
    """Send every prompt to a chat-completions server; cached, resumable, failures listed.

    Answers are cached by sha256 of (model, messages, sampling parameters): rerunning costs
    nothing, an interrupted run (Ctrl-C stops it at once) resumes, and a rerun retries only the
    failed documents. Before sending, the server's /v1/models is asked whether it knows --model.
    After 3 requests in a row that cannot reach the server, the run stops sending, lists the rest
    as not attempted and exits 1. run.json counts every answer (tokens, answers cut at
    --max-tokens), and this run's requests, retries by cause and latency; the last line says the
    same in short. One run at a time writes into --out.

    \b
    Example:
      envbench icl run --prompts runs/icl/p3 --base-url http://localhost:8000/v1 \\
          --model meta-llama/Llama-3.1-8B-Instruct --concurrency 16 --out runs/icl/llama-p3
      envbench icl run --prompts runs/icl/p3 --base-url http://127.0.0.1:8080/v1 --model smollm2 \\
          --context 8192 --max-tokens 1024 --seed 0 --stop '</s>' --out runs/icl/smol-p3
      OPENAI_API_KEY=sk-... envbench icl run --prompts runs/icl/p3 \\
          --base-url https://api.openai.com/v1 --model gpt-4o-mini --out runs/icl/gpt-p3
    """
    from icl.client import ChatClient, check_api_key
    from icl.run import RunInterrupted, run_prompts

    url = urllib.parse.urlsplit(base_url)
    if url.scheme not in ("http", "https") or not url.netloc:
        raise click.ClickException(
            f"--base-url {base_url!r} is not an http(s) URL; give the server's address, e.g. http://localhost:8000/v1"
        )
    if api_key_env != "OPENAI_API_KEY" and not os.environ.get(api_key_env):
        raise click.ClickException(
            f"environment variable {api_key_env} is not set; export {api_key_env}=YOUR_KEY, "
            "or leave out --api-key-env for a local server"
        )
    api_key = os.environ.get(api_key_env) or None
    if api_key is not None:
        check_api_key(api_key, f"environment variable {api_key_env}")
    extra = {}
    if extra_body is not None:
        try:
            extra = json.loads(extra_body)
        except ValueError as exc:
            raise click.ClickException(f"--extra-body is not valid JSON ({exc}); pass an object such as '{{\"seed\": 0}}'") from None
        if not isinstance(extra, dict):
            raise click.ClickException("--extra-body must be a JSON object such as '{\"seed\": 0}'")
    def notify(message: str) -> None:
        click.echo(message, err=True)

    client = ChatClient(base_url, model, api_key=api_key, temperature=temperature,
                        max_tokens=max_tokens, timeout=timeout, retries=retries, backoff=backoff, max_wait=max_wait,
                        stop=list(stop) or None, seed=seed, notify=notify, extra=extra)
    try:
        result = run_prompts(prompts_dir, out, client, concurrency=concurrency, cache_dir=cache_dir,
                             cache_only=cache_only, progress=progress, context=context, notify=notify)
    except RunInterrupted as exc:
        click.echo(str(exc), err=True)
        sys.exit(130)  # the shell's code for "stopped by SIGINT"
    click.echo(result.summary())
    n = result.documents
    if result.server_down is not None:
        unsent = len(result.by_reason("not_attempted"))
        raise click.ClickException(
            f"the server at {base_url} stopped answering ({result.server_down}); "
            f"{unsent:,} of the {n:,} documents not attempted; start it and rerun the same command"
        )
    context_failed = result.by_reason("context")
    if n and len(context_failed) == n:
        sizes = [f["prompt_tokens"] for f in context_failed if isinstance(f.get("prompt_tokens"), int)]
        measured = (f"; prompts of {min(sizes):,} to {max(sizes):,} tokens ({result.tokens_source})"
                    if sizes else f" (the server said: {context_failed[0]['error']})")
        fits = (f"a context of {result.context:,} tokens ({result.context_source})" if result.context is not None
                else "the model's context")
        raise click.ClickException(
            f"{'the only document' if n == 1 else f'all {n:,} documents'} failed because the prompt does not fit "
            f"{fits} with --max-tokens {result.max_tokens:,}{measured}; use fewer --shots, --max-demo-tokens, a "
            "lower --max-tokens, or a server with a longer context"
        )
    if n and len(result.failed) == n:
        if cache_only:
            none = "the only document has" if n == 1 else f"none of the {n:,} documents has"
            raise click.ClickException(
                f"--cache-only: {none} an answer in the cache {cache_dir or os.path.join(out, 'cache')}; run "
                "without --cache-only to ask the server, or give --cache the folder of the run that answered them"
            )
        every = "the only document" if n == 1 else f"all {n:,} documents"
        raise click.ClickException(
            f"{every} failed (first error: {result.failed[0]['error']}); check that {base_url} serves --model {model}"
        )


@icl.command("parse", short_help="Turn answers into predictions for `envbench evaluate`.")
@click.option("--prompts", "prompts_dir", required=True, type=click.Path(file_okay=False),
              help="Folder written by `envbench icl prompts` (its entity maps are used).")
@click.option("--run", "run_dir", required=True, type=click.Path(file_okay=False),
              help="Folder written by `envbench icl run` (its answers.json is read).")
@click.option("--out", required=True, type=click.Path(dir_okay=False),
              help="Predictions file: JSON list of {title, h_idx, t_idx, r}, ready for `envbench evaluate`.")
@click.option("--stats", "stats_path", type=click.Path(dir_okay=False), default=None,
              help="Where to write parse counts (default: OUT with .stats.json).")
def parse_cmd(prompts_dir: str, run_dir: str, out: str, stats_path: str | None) -> None:
    """Turn answers into official-format predictions; count dropped triples by reason, per document too.

    Failed documents get no predictions, so their gold triples still count as missed. The stats
    file lists, per document, what was kept and what was dropped and why (with the dropped text).
    OUT.manifest.json names the documents the predictions cover (for scoring only those).

    \b
    Example:
      envbench icl parse --prompts runs/icl/p3 --run runs/icl/llama-p3 --out runs/icl/llama-p3/pred.json
      envbench evaluate --gold data/sample/docs/test.json --pred runs/icl/llama-p3/pred.json
    """
    from icl.parse import parse_run

    result = parse_run(prompts_dir, run_dir, out, stats_path=stats_path)
    click.echo(result.summary())
