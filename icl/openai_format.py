"""The OpenAI chat-completions format as `icl run` speaks it: where the endpoints are, which request fields the
harness owns, what a reply must hold, and which numbers in a reply a server can mean.

Pure functions of URLs, dicts and bytes: no I/O, no retry policy (``icl.client`` decides what a failure here
costs: a reply that is no completion is asked again, one without text is not).
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from envbench.core.errors import EnvbenchError
from icl.util import clip

# The largest count of tokens (context, prompt, answer) or slots a server is believed. Contexts reach a few
# million tokens today; a larger number, a negative one, a bool or no integer at all is a broken reply, and
# taken as is it did harm: a max_model_len of 10**30 made run.json unwritable (orjson stores integers of 64
# bits only) after answers.json had been written, and a usage of -10 tokens was added up.
MAX_SERVER_COUNT = 10**9

# Request fields the harness sets itself. The first two are the run (run.json records --model, the prompts' messages):
# --extra-body may neither set nor remove them (`{"model": "other"}` asked another model under --model's name). The
# sampling fields come from options, which run.json records: where the harness sends one (temperature and max_tokens
# always, stop and seed when given), --extra-body may remove it (null: OpenAI reasoning models refuse max_tokens and
# a temperature other than 1) but not replace its value.
OWN_FIELDS = {"model": "--model", "messages": "the prompts folder"}
OPTION_FIELDS = {"temperature": "--temperature", "max_tokens": "--max-tokens", "stop": "--stop", "seed": "--seed"}


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


def server_root(base_url: str) -> str:
    """``scheme://host:port`` of the server, where llama.cpp serves ``/props`` and ``/tokenize``."""
    parts = urllib.parse.urlsplit(base_url)
    return f"{parts.scheme}://{parts.netloc}"


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


def server_count(value: Any, least: int = 0) -> int | None:
    """``value`` when it is a count a server can mean (an int, not a bool, from ``least`` to
    ``MAX_SERVER_COUNT``), else None: unknown, as if the server had not said it."""
    return value if type(value) is int and least <= value <= MAX_SERVER_COUNT else None


def usage_counts(value: Any) -> dict[str, Any]:
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


@dataclass(frozen=True)
class Completion:
    content: str
    finish_reason: str | None
    usage: dict[str, Any]
    latency_s: float = 0.0  # seconds from sending the request to the whole reply (queue time included)


class NotACompletion(Exception):
    """The reply is not a chat completion (not JSON, JSON nested too deep to read, no ``choices[0].message``)."""


class NoContent(Exception):
    """A chat completion whose ``content`` is not text (null: a refusal), and not cut off by ``max_tokens``."""


def read_completion(raw: bytes, latency: float) -> Completion:
    """The completion in a reply's body; a null ``content`` with ``finish_reason`` "length" (a reasoning model
    spent ``max_tokens`` thinking) is an empty answer, counted as cut off."""
    try:
        data = json.loads(raw)
        choice = data["choices"][0]
        content = choice["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError, RecursionError):  # RecursionError: absurdly deep JSON
        raise NotACompletion(f"the reply is not a chat completion: {clip(raw.decode('utf-8', 'replace'), 200)!r}") \
            from None
    usage = usage_counts(data.get("usage"))
    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
    finish = finish if isinstance(finish, str) else None  # it is cached: a number there could be any size
    if content is None and finish == "length":
        return Completion("", finish, usage, latency)
    if not isinstance(content, str):
        raise NoContent(f"reply has no text content (finish_reason {finish!r})")
    return Completion(content, finish, usage, latency)


__all__ = ["MAX_SERVER_COUNT", "OPTION_FIELDS", "OWN_FIELDS", "Completion", "NoContent", "NotACompletion",
           "check_extra_body", "endpoint_url", "models_url", "read_completion", "server_count", "server_root",
           "usage_counts"]
