"""What an OpenAI-compatible server says about itself, asked before sending: its model names, its context, its
parallel slots (``probe_server``), and how many tokens each prompt is by its own tokenizer (``count_prompt_tokens``).

Every question waits at most ``PROBE_TIMEOUT_S`` and none is required: a server that does not answer, or answers
a number it cannot mean (``icl.openai_format.server_count``), leaves that fact unknown. Where servers tell it:
vLLM ``/v1/models`` ``max_model_len``; llama.cpp ``/props`` (``n_ctx``, ``total_slots``) and ``/tokenize``;
llama-cpp-python ``/extras/tokenize/count``; OpenAI and llama-cpp-python report no context.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from icl.client import ChatClient
from icl.openai_format import models_url, server_count, server_root
from icl.prompts import CHARS_PER_TOKEN
from icl.transport import call_json

PROBE_TIMEOUT_S = 10.0  # for each question about the server (model list, /props, one tokenize)


@dataclass
class ServerInfo:
    """What the server says about itself, where it says it (None: not offered)."""

    models: list[str] | None = None
    context: int | None = None  # tokens, from /v1/models (vLLM: max_model_len) or /props (llama.cpp)
    context_source: str | None = None
    slots: int | None = None  # parallel slots (llama.cpp /props total_slots)
    silent: list[str] = field(default_factory=list)  # URLs that gave no reply in time (a busy server)
    answered: bool = False  # whether any question got an HTTP reply (no: nothing listens, or it hangs)
    waited: float = 0.0  # seconds each question waited at most


def probe_server(client: ChatClient, timeout: float | None = None) -> ServerInfo:
    """Ask ``/v1/models`` (and llama.cpp's ``/props``) for model names, context length and parallel slots."""
    info = ServerInfo()
    headers = client.auth_headers()
    wait = info.waited = min(PROBE_TIMEOUT_S if timeout is None else timeout, client.timeout)
    data, state = call_json(models_url(client.base_url), headers, wait)
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
    props, state = call_json(f"{server_root(client.base_url)}/props", headers, wait)
    info.answered |= state == "answered"
    if state == "timeout":
        info.silent.append(f"{server_root(client.base_url)}/props")
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
    headers = client.auth_headers()
    wait = min(PROBE_TIMEOUT_S if timeout is None else timeout, client.timeout)

    def texts(i: int) -> list[str]:
        return [m["content"] for m in records[i]["messages"]]

    if which:
        for path, body, read in _TOKENIZE:
            url = server_root(client.base_url) + path
            first, _ = call_json(url, headers, wait, body(texts(which[0])[0], client.model))
            if not isinstance(first, dict) or server_count(read(first)) is None:
                continue
            counts: dict[int, int] = {}
            for i in which:
                total = CHAT_TOKENS_PER_PROMPT
                for text in texts(i):
                    reply, _ = call_json(url, headers, wait, body(text, client.model))
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


__all__ = ["CHAT_TOKENS_PER_MESSAGE", "CHAT_TOKENS_PER_PROMPT", "PROBE_TIMEOUT_S", "ServerInfo", "TokenCounts",
           "count_prompt_tokens", "probe_server"]
