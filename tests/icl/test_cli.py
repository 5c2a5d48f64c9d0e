"""`envbench icl prompts|run|parse` through the real CLI: exit codes, exact error text, the whole pipeline."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from envbench.cli import cli
from tests.icl.test_client import FakeServer
from tests.icl.test_prompts import write_world


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_help_lists_the_three_steps(runner: CliRunner) -> None:
    res = runner.invoke(cli, ["icl", "--help"])
    assert res.exit_code == 0 and "Example:" in res.output
    for name in ("prompts", "run", "parse"):
        assert name in res.output
    for cmd in ("prompts", "run", "parse"):
        res = runner.invoke(cli, ["icl", cmd, "--help"])
        assert res.exit_code == 0 and "Example:" in res.output


def test_pipeline_prompts_run_parse_evaluate(runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = write_world(tmp_path)
    prompts, run, pred = tmp_path / "p", tmp_path / "r", tmp_path / "pred.json"
    res = runner.invoke(cli, ["icl", "prompts", "--docs", str(p["test"]), "--train", str(p["train"]),
                              "--twins", str(p["twins"]), "--shots", "3", "--da", "--cg", "--out", str(prompts)])
    assert res.exit_code == 0, res.output
    assert re.match(rf"wrote 3 prompts \(3-shot \+DA \+CG, template paper\) in {re.escape(str(prompts))}; "
                    r"\d distinct demonstrations; length in chars median [\d,]+, p95 [\d,]+, max [\d,]+ "
                    r"\(~[\d,]+ / [\d,]+ / [\d,]+ tokens at 2\.6 chars per token; ", res.output), res.output
    server = FakeServer()
    monkeypatch.setenv("MY_KEY", "sk-xyz")
    try:
        args = ["icl", "run", "--prompts", str(prompts), "--base-url", server.url, "--model", "m",
                "--out", str(run), "--api-key-env", "MY_KEY", "--no-progress"]
        res = runner.invoke(cli, args)
        assert res.exit_code == 0, res.output
        assert res.stdout.startswith("3 documents: 0 from cache, 3 answered now, 0 failed; 3 requests, 0 retries; "
                                     "tokens 30 in + 15 out over all answers; latency median ")
        assert len(res.stdout.splitlines()) == 1  # one line at the end of the run
        assert res.stderr == ("note: the server reports no context size (asked /v1/models and /props); pass "
                              "--context N to have prompts that may not fit named before sending\n")
        res = runner.invoke(cli, args)
        assert res.stderr == ""  # a run from cache asks the server nothing, so it has nothing to note
        assert res.exit_code == 0 and res.output.startswith(
            "3 documents: 3 from cache, 0 answered now, 0 failed; 0 requests, 0 retries; tokens 30 in + 15 out "
            "over all answers; ")
        assert server.total == 3 and server.headers[0]["Authorization"] == "Bearer sk-xyz"
    finally:
        server.close()
    res = runner.invoke(cli, ["icl", "parse", "--prompts", str(prompts), "--run", str(run), "--out", str(pred)])
    assert res.exit_code == 0, res.output
    assert res.output.startswith(f"wrote 6 predictions for 3 documents (0 failed, scored as empty) in {pred}")
    # the paper template numbers entities by first mention (person, place, country = vertexSet 1, 2, 0):
    # "<1; country of citizenship; 3>" is vertexSet 1 -> 0
    assert json.loads(pred.read_text())[:2] == [{"title": "Test A", "h_idx": 1, "t_idx": 0, "r": "P27"},
                                              {"title": "Test A", "h_idx": 2, "t_idx": 0, "r": "P17"}]
    res = runner.invoke(cli, ["evaluate", "--gold", str(p["test"]), "--pred", str(pred)])
    assert res.exit_code == 0, res.output
    assert re.search(r"^F1\s+\d", res.output, re.MULTILINE)


def test_errors_are_one_line_with_the_fix(runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = write_world(tmp_path)
    base = ["icl", "prompts", "--docs", str(p["test"]), "--train", str(p["train"]), "--out", str(tmp_path / "p")]
    res = runner.invoke(cli, [*base, "--da"])
    assert res.exit_code == 1
    assert res.output == (
        "Error: --da needs --twins FILE, the renamed twins of the training documents; make them with "
        "`envbench generate TRAIN --index DIR --pool train --seeds 1 --twins --out OUT` (OUT/<stem>_twins.json)\n"
    )
    res = runner.invoke(cli, [*base, "--cg"])
    assert res.exit_code == 1
    assert res.output == (
        "Error: --cg says that each demonstration pair differs only in entity names, so it needs --da "
        "(and --twins FILE)\n"
    )
    missing = tmp_path / "nope.json"
    res = runner.invoke(cli, ["icl", "prompts", "--docs", str(missing), "--train", str(p["train"]),
                              "--out", str(tmp_path / "p")])
    assert res.exit_code == 1 and res.output == f"Error: no such file: {missing}; check the path\n"

    empty = tmp_path / "empty"
    res = runner.invoke(cli, ["icl", "run", "--prompts", str(empty), "--base-url", "http://127.0.0.1:9/v1",
                              "--model", "m", "--out", str(tmp_path / "r")])
    assert res.exit_code == 1
    assert res.output == (
        f"Error: no prompts at {empty} ({empty}/index.json is missing); run "
        f"`envbench icl prompts --docs TEST --train TRAIN --shots 1 --out {empty}` first\n"
    )
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    res = runner.invoke(cli, ["icl", "run", "--prompts", str(empty), "--base-url", "http://127.0.0.1:9/v1",
                              "--model", "m", "--out", str(tmp_path / "r"), "--api-key-env", "NO_SUCH_KEY_VAR"])
    assert res.exit_code == 1
    assert res.output == (
        "Error: environment variable NO_SUCH_KEY_VAR is not set; export NO_SUCH_KEY_VAR=YOUR_KEY, "
        "or leave out --api-key-env for a local server\n"
    )
    assert runner.invoke(cli, base).exit_code == 0
    res = runner.invoke(cli, ["icl", "run", "--prompts", str(tmp_path / "p"), "--base-url", "http://127.0.0.1:9/v1",
                              "--model", "m", "--out", str(tmp_path / "r"), "--no-progress"])
    assert res.exit_code == 1
    assert res.output == (
        "Error: cannot connect to http://127.0.0.1:9/v1/chat/completions (Connection refused); "
        "start the server or fix --base-url\n"
    )
    res = runner.invoke(cli, ["icl", "parse", "--prompts", str(tmp_path / "p"), "--run", str(tmp_path / "r"),
                              "--out", str(tmp_path / "pred.json")])
    assert res.exit_code == 1
    assert res.output == (
        f"Error: no answers at {tmp_path / 'r' / 'answers.json'}; run `envbench icl run --prompts "
        f"{tmp_path / 'p'} --base-url URL --model NAME --out {tmp_path / 'r'}` first "
        "(an interrupted run resumes from its cache)\n"
    )


def test_all_documents_failing_exits_1_after_listing_them(runner: CliRunner, tmp_path: Path) -> None:
    p = write_world(tmp_path)
    prompts, run = tmp_path / "p", tmp_path / "r"
    assert runner.invoke(cli, ["icl", "prompts", "--docs", str(p["test"]), "--train", str(p["train"]),
                               "--out", str(prompts)]).exit_code == 0
    server = FakeServer()
    server.faults = {"Hans": [400], "Karl": [400], "Ida": [400]}
    try:
        res = runner.invoke(cli, ["icl", "run", "--prompts", str(prompts), "--base-url", server.url, "--model", "m",
                                  "--out", str(run), "--no-progress"])
    finally:
        server.close()
    assert res.exit_code == 1
    assert res.output.splitlines()[-1].startswith("Error: all 3 documents failed (first error: HTTP 400: ")
    assert res.output.splitlines()[-1].endswith(f"check that {server.url} serves --model m")
    assert len(json.loads((run / "failures.json").read_text())) == 3
    res = runner.invoke(cli, ["icl", "parse", "--prompts", str(prompts), "--run", str(run),
                              "--out", str(tmp_path / "pred.json")])
    assert res.exit_code == 0 and res.output.startswith("wrote 0 predictions for 3 documents (3 failed, scored as empty)")
    assert json.loads((tmp_path / "pred.json").read_text()) == []


def test_extra_body_must_be_a_json_object(runner: CliRunner, tmp_path: Path) -> None:
    args = ["icl", "run", "--prompts", str(tmp_path), "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
            "--out", str(tmp_path / "r")]
    res = runner.invoke(cli, [*args, "--extra-body", "[1]"])
    assert res.exit_code == 1 and res.output == "Error: --extra-body must be a JSON object such as '{\"seed\": 0}'\n"
    res = runner.invoke(cli, [*args, "--extra-body", "{seed"])
    assert res.exit_code == 1
    assert res.output.startswith("Error: --extra-body is not valid JSON (")
    assert res.output.endswith("); pass an object such as '{\"seed\": 0}'\n")


def test_bad_inputs_are_one_line_errors_naming_the_fix(runner: CliRunner, tmp_path: Path) -> None:
    p = write_world(tmp_path)
    pred = tmp_path / "pred.json"
    pred.write_text(json.dumps([{"title": "Hans", "h_idx": 0, "t_idx": 1, "r": "P17"}]))
    res = runner.invoke(cli, ["icl", "prompts", "--docs", str(pred), "--train", str(p["train"]),
                              "--out", str(tmp_path / "p")])
    assert res.exit_code == 1
    assert res.output == (
        f"Error: {pred}: holds predictions (a list of {{title, h_idx, t_idx, r}}), not DocRED documents; give a "
        "DocRED-format file (title, sents, vertexSet) here, and predictions to `envbench evaluate --pred`\n"
    )
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    res = runner.invoke(cli, ["icl", "prompts", "--docs", str(empty), "--train", str(p["train"]),
                              "--out", str(tmp_path / "p")])
    assert res.exit_code == 1
    assert res.output == (f"Error: {empty}: has no documents; pass the DocRED-format test documents to write "
                          "prompts for\n")
    res = runner.invoke(cli, ["icl", "prompts", "--docs", str(p["test"]), "--train", str(p["train"]),
                              "--limit", "-1", "--out", str(tmp_path / "p")])  # used to drop the last document
    assert res.exit_code == 2 and "Invalid value for '--limit': -1 is not in the range x>=1." in res.output
    res = runner.invoke(cli, ["icl", "run", "--prompts", str(tmp_path), "--base-url", "localhost:8000",
                              "--model", "m", "--out", str(tmp_path / "r")])  # used to end in a traceback
    assert res.exit_code == 1
    assert res.output == ("Error: --base-url 'localhost:8000' is not an http(s) URL; give the server's address, "
                          "e.g. http://localhost:8000/v1\n")
    for opt, value in (("--timeout", "0"), ("--concurrency", "0"), ("--max-tokens", "0"), ("--retries", "-1")):
        res = runner.invoke(cli, ["icl", "run", "--prompts", str(tmp_path), "--base-url", "http://127.0.0.1:9/v1",
                                  "--model", "m", "--out", str(tmp_path / "r"), opt, value])
        assert res.exit_code == 2 and f"Invalid value for '{opt}'" in res.output, opt
    blocker = tmp_path / "file"
    blocker.write_text("")
    res = runner.invoke(cli, ["icl", "prompts", "--docs", str(p["test"]), "--train", str(p["train"]),
                              "--out", str(blocker / "p")])
    assert res.exit_code == 1
    assert res.output == f"Error: --out {blocker / 'p'}: {blocker} is a file, not a folder; choose another path\n"


def test_prompts_never_delete_files_they_did_not_write(runner: CliRunner, tmp_path: Path) -> None:
    p = write_world(tmp_path)
    out = tmp_path / "shared"
    out.mkdir()
    (out / "2023.json").write_text("mine")  # named like a prompt file, but not listed in any index.json
    args = ["icl", "prompts", "--docs", str(p["test"]), "--train", str(p["train"]), "--out", str(out)]
    assert runner.invoke(cli, args).exit_code == 0
    assert runner.invoke(cli, [*args, "--limit", "1"]).exit_code == 0
    assert sorted(str(f.relative_to(out)) for f in out.rglob("*")) == [
        "2023.json", "index.json", "manifest.json", "prompts", "prompts/0000.json", "prompts/0000.txt"]


def test_cache_only_with_nothing_cached_exits_1_and_says_what_is_missing(runner: CliRunner, tmp_path: Path) -> None:
    # regression (issue 18): exit 0, and the advice to "rerun the same command", which cannot help
    p = write_world(tmp_path)
    prompts, run = tmp_path / "p", tmp_path / "r"
    assert runner.invoke(cli, ["icl", "prompts", "--docs", str(p["test"]), "--train", str(p["train"]),
                               "--out", str(prompts)]).exit_code == 0
    res = runner.invoke(cli, ["icl", "run", "--prompts", str(prompts), "--base-url", "http://127.0.0.1:9/v1",
                              "--model", "m", "--out", str(run), "--cache-only", "--no-progress"])
    assert res.exit_code == 1
    lines = res.output.splitlines()
    assert lines[1] == ("warning: 3 documents are not in the cache (--cache-only) and scored as empty; run without "
                        "--cache-only to ask the server for them")
    assert lines[-1] == (f"Error: --cache-only: none of the 3 documents has an answer in the cache {run / 'cache'}; "
                         "run without --cache-only to ask the server, or give --cache the folder of the run that "
                         "answered them")
    assert "rerun the same command" not in res.output


def test_run_options_reach_the_request(runner: CliRunner, tmp_path: Path) -> None:
    p = write_world(tmp_path)
    prompts = tmp_path / "p"
    assert runner.invoke(cli, ["icl", "prompts", "--docs", str(p["test"]), "--train", str(p["train"]),
                               "--system", "Be terse.", "--limit", "1", "--out", str(prompts)]).exit_code == 0
    server = FakeServer()
    try:
        res = runner.invoke(cli, ["icl", "run", "--prompts", str(prompts), "--base-url", server.url, "--model", "m",
                                  "--out", str(tmp_path / "r"), "--stop", "</s>", "--stop", "\n\n", "--seed", "3",
                                  "--context", "50", "--max-tokens", "10", "--no-progress"])
    finally:
        server.close()
    assert res.exit_code == 0, res.output
    body = server.bodies[0]
    assert body["messages"][0] == {"role": "system", "content": "Be terse."}
    assert (body["stop"], body["seed"], body["max_tokens"]) == (["</s>", "\n\n"], 3, 10)
    assert "warning: 1 prompt of the 1 to send may not fit the context of 50 tokens (--context) with --max-tokens 10 " \
        "(estimated at 2.6 chars per token (the server offers no tokenizer)): prompts/0000.json " in res.output


def test_prompts_template_choice(runner: CliRunner, tmp_path: Path) -> None:
    p = write_world(tmp_path)
    res = runner.invoke(cli, ["icl", "prompts", "--docs", str(p["test"]), "--train", str(p["train"]),
                              "--template", "envbench-v1", "--out", str(tmp_path / "v1")])
    assert res.exit_code == 0 and "template envbench-v1" in res.output
    rec = json.loads((tmp_path / "v1" / "prompts" / "0000.json").read_text())
    assert [m["role"] for m in rec["messages"]] == ["user"] and "Relations:" in rec["messages"][0]["content"]
    res = runner.invoke(cli, ["icl", "prompts", "--docs", str(p["test"]), "--train", str(p["train"]),
                              "--template", "v2", "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and "Invalid value for '--template': 'v2' is not one of 'paper', 'envbench-v1'." \
        in res.output


def test_limit_then_evaluate_only_predicted_scores_the_asked_documents(runner: CliRunner, tmp_path: Path) -> None:
    p = write_world(tmp_path)
    prompts, run, pred = tmp_path / "p", tmp_path / "r", tmp_path / "pred.json"
    assert runner.invoke(cli, ["icl", "prompts", "--docs", str(p["test"]), "--train", str(p["train"]),
                               "--limit", "2", "--out", str(prompts)]).exit_code == 0
    index = json.loads((prompts / "index.json").read_text())
    assert (index["params"]["limit"], index["subset"], index["docs_documents"], index["count"]) == (2, True, 3, 2)
    server = FakeServer()
    server.faults = {"Karl": [400]}  # the second asked document fails: it was asked, so it still counts
    try:
        res = runner.invoke(cli, ["icl", "run", "--prompts", str(prompts), "--base-url", server.url, "--model", "m",
                                  "--out", str(run), "--no-progress"])
    finally:
        server.close()
    assert res.exit_code == 0, res.output
    assert "warning: 1 document failed (listed in " in res.output
    assert runner.invoke(cli, ["icl", "parse", "--prompts", str(prompts), "--run", str(run),
                               "--out", str(pred)]).exit_code == 0
    assert {x["title"] for x in json.loads(pred.read_text())} == {"Test A"}
    res = runner.invoke(cli, ["evaluate", "--gold", str(p["test"]), "--pred", str(pred)])
    assert res.exit_code == 0
    assert res.stderr.startswith(f"Warning: gold documents without any prediction in {pred}: 1 of 3 "
                                 "(e.g. 'Test B'); ")
    res = runner.invoke(cli, ["evaluate", "--gold", str(p["test"]), "--pred", str(pred), "--only-predicted"])
    assert res.exit_code == 0 and res.stderr == ""
    assert (f"Note: --only-predicted: scored 2 of 3 gold documents, those {pred}.manifest.json says the "
            "predictions cover (1 of them without predictions, their gold facts counted as missed) and those with "
            "a prediction") in res.stdout.splitlines()
    assert re.search(r"^2 documents, \d+ gold facts, ", res.stdout, re.MULTILINE), res.stdout


@pytest.mark.parametrize("key,what", [("sk-1\r\nX-Evil: 1", "a line break (CR or LF)"),
                                      ("sk-ключ", "a character that is not ASCII")])
def test_an_api_key_a_header_cannot_carry_is_one_line_naming_its_variable(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, what: str
) -> None:
    # regression (issue 29): a ValueError or UnicodeEncodeError traceback
    monkeypatch.setenv("MY_KEY", key)
    res = runner.invoke(cli, ["icl", "run", "--prompts", str(tmp_path), "--base-url", "http://127.0.0.1:9/v1",
                              "--model", "m", "--out", str(tmp_path / "r"), "--api-key-env", "MY_KEY"])
    assert res.exit_code == 1
    assert res.output == (f"Error: environment variable MY_KEY holds {what}, which an HTTP header cannot carry; "
                          "export the key alone, as the provider shows it\n")


def run_args(prompts: Path, url: str, out: Path, *more: str) -> list[str]:
    return ["icl", "run", "--prompts", str(prompts), "--base-url", url, "--model", "m", "--out", str(out),
            "--no-progress", *more]


def test_run_refuses_an_out_another_run_is_writing(runner: CliRunner, tmp_path: Path) -> None:
    import os

    from icl.run_folder import hold_out as _hold

    p = write_world(tmp_path)
    assert runner.invoke(cli, ["icl", "prompts", "--docs", str(p["test"]), "--train", str(p["train"]),
                               "--out", str(tmp_path / "p")]).exit_code == 0
    held = _hold(tmp_path / "r")
    try:
        res = runner.invoke(cli, run_args(tmp_path / "p", "http://127.0.0.1:9/v1", tmp_path / "r"))
    finally:
        os.close(held)
    assert res.exit_code == 1
    assert res.output == (f"Error: --out {tmp_path / 'r'}: another run is writing there now; wait for it to end, "
                          "or choose another output location\n")


def test_a_server_that_dies_mid_run_exits_1_with_the_count(runner: CliRunner, tmp_path: Path) -> None:
    p = write_world(tmp_path)
    assert runner.invoke(cli, ["icl", "prompts", "--docs", str(p["test"]), "--train", str(p["train"]),
                               "--out", str(tmp_path / "p")]).exit_code == 0
    server = FakeServer()
    server.faults = {"Karl": ["die"]}
    try:
        res = runner.invoke(cli, run_args(tmp_path / "p", server.url, tmp_path / "r", "--backoff", "0.01"))
    finally:
        server.close()
    assert res.exit_code == 1
    assert res.output.splitlines()[-1] == (
        f"Error: the server at {server.url} stopped answering (3 requests in a row could not connect, the last: "
        "connection failed: Connection refused); 1 of the 3 documents not attempted; start it and rerun the same "
        "command")
    failures = json.loads((tmp_path / "r" / "failures.json").read_text())
    assert [f["reason"] for f in failures] == ["server_down", "not_attempted"]


def test_every_prompt_over_the_context_says_so_with_the_sizes(runner: CliRunner, tmp_path: Path) -> None:
    # regression (issue 33): the message said to check the model name and to rerun the same command
    from tests.icl.test_client import fake_tokens

    p = write_world(tmp_path)
    assert runner.invoke(cli, ["icl", "prompts", "--docs", str(p["test"]), "--train", str(p["train"]),
                               "--out", str(tmp_path / "p")]).exit_code == 0
    sizes = sorted(fake_tokens(json.loads(f.read_text())["messages"]) for f in (tmp_path / "p" / "prompts").glob("*.json"))
    server = FakeServer()
    server.tokenizer, server.n_ctx = "llama-cpp-python", 300
    try:
        res = runner.invoke(cli, run_args(tmp_path / "p", server.url, tmp_path / "r", "--context", "300"))
    finally:
        server.close()
    assert res.exit_code == 1
    assert "rerun the same command" not in res.output and "check that" not in res.output
    assert res.output.splitlines()[-1] == (
        f"Error: all 3 documents failed because the prompt does not fit a context of 300 tokens (--context) with "
        f"--max-tokens 1,024; prompts of {sizes[0]:,} to {sizes[-1]:,} tokens (counted by the server's tokenizer "
        f"({server.url[:-3]}/extras/tokenize/count)); use fewer --shots, --max-demo-tokens, a lower --max-tokens, or a "
        "server with a longer context")
    assert ("warning: 3 documents do not fit the model's context (reason context in "
            f"{tmp_path / 'r' / 'failures.json'}) and are scored as empty; a rerun cannot help") in res.output


def test_a_redirect_stops_the_run_naming_its_target(runner: CliRunner, tmp_path: Path) -> None:
    p = write_world(tmp_path)
    assert runner.invoke(cli, ["icl", "prompts", "--docs", str(p["test"]), "--train", str(p["train"]),
                               "--out", str(tmp_path / "p")]).exit_code == 0
    server = FakeServer()
    server.faults = {"Hans": [("redirect", "http://127.0.0.1:1/v2/chat/completions")]}
    try:
        res = runner.invoke(cli, run_args(tmp_path / "p", server.url, tmp_path / "r"))
    finally:
        server.close()
    assert res.exit_code == 1
    assert res.output.splitlines()[-1] == (
        f"Error: HTTP 302 from {server.url}/chat/completions: the server redirects to "
        "http://127.0.0.1:1/v2/chat/completions; give that address as --base-url (a redirect is not followed, since "
        "it would turn the POST into a GET)")


def test_run_refuses_an_out_it_did_not_write(runner: CliRunner, tmp_path: Path) -> None:
    # regression: a user's answers.json and run.json were replaced, and the prompts folder written into
    p = write_world(tmp_path)
    prompts = tmp_path / "p"
    assert runner.invoke(cli, ["icl", "prompts", "--docs", str(p["test"]), "--train", str(p["train"]),
                               "--out", str(prompts)]).exit_code == 0
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "answers.json").write_text('{"mine": "precious"}')
    (mine / "run.json").write_text("precious")
    # nothing listens at port 9: a request sent would end in "cannot connect"
    res = runner.invoke(cli, run_args(prompts, "http://127.0.0.1:9/v1", mine))
    assert res.exit_code == 1
    assert res.output == (f"Error: --out {mine}: answers.json, run.json are there and no `icl-run` run wrote them; "
                          "move them, or choose another --out\n")
    assert (mine / "answers.json").read_text() == '{"mine": "precious"}' and (mine / "run.json").read_text() == "precious"
    index = tmp_path / "index"  # another step's output folder
    index.mkdir()
    (index / "manifest.json").write_text('{"step": "ingest-dump"}')
    res = runner.invoke(cli, run_args(prompts, "http://127.0.0.1:9/v1", index))
    assert res.exit_code == 1
    assert res.output == (f"Error: --out {index}: manifest.json is there and no `icl-run` run wrote it; move it, or "
                          "choose another --out\n")
    res = runner.invoke(cli, run_args(prompts, "http://127.0.0.1:9/v1", prompts))
    assert res.exit_code == 1
    assert res.output == f"Error: --out {prompts} is the --prompts folder; choose another --out, outside it\n"
    res = runner.invoke(cli, run_args(prompts, "http://127.0.0.1:9/v1", prompts / "prompts" / "r"))
    assert res.exit_code == 1
    assert res.output == (f"Error: --out {prompts / 'prompts' / 'r'} lies inside the --prompts folder {prompts}; "
                          "choose another --out, outside it\n")
    assert not (prompts / "prompts" / "r").exists() and not (prompts / "answers.json").exists()


def test_parse_refuses_a_tampered_prompts_folder(runner: CliRunner, tmp_path: Path) -> None:
    # regression: KeyError and TypeError tracebacks, and entity indices the document lacks written as predictions
    p = write_world(tmp_path)
    prompts, run, pred = tmp_path / "p", tmp_path / "r", tmp_path / "pred.json"
    assert runner.invoke(cli, ["icl", "prompts", "--docs", str(p["test"]), "--train", str(p["train"]),
                               "--out", str(prompts)]).exit_code == 0
    server = FakeServer()
    try:
        assert runner.invoke(cli, run_args(prompts, server.url, run)).exit_code == 0
    finally:
        server.close()
    parse = ["icl", "parse", "--prompts", str(prompts), "--run", str(run), "--out", str(pred)]
    index_path = prompts / "index.json"
    good = json.loads(index_path.read_text())
    entry = good["documents"][0]
    rebuild = "; rebuild it with `envbench icl prompts`\n"
    for index, why in (({k: v for k, v in good.items() if k != "documents"}, "documents is not a list"),
                       ({**good, "documents": "x"}, "documents is not a list"),
                       ({**good, "documents": [5]}, "documents[0] is not an object"),
                       ({**good, "documents": [{k: v for k, v in entry.items() if k != "file"}]},
                        "documents[0] has no file string"),
                       ({**good, "documents": [{k: v for k, v in entry.items() if k != "title"}]},
                        "documents[0] has no title string")):
        index_path.write_text(json.dumps(index))
        res = runner.invoke(cli, parse)
        assert res.exit_code == 1, why
        assert res.output == f"Error: {index_path} is not an envbench ICL prompt index ({why}){rebuild}"
    index_path.write_text(json.dumps(good))
    prompt = prompts / "prompts" / "0000.json"
    record = json.loads(prompt.read_text())
    for emap in ([999, 1, 2], [-1, 1, 2], [0, 0, 2]):
        prompt.write_text(json.dumps({**record, "entity_map": emap}))
        res = runner.invoke(cli, parse)
        assert res.exit_code == 1, emap
        assert res.output == (f"Error: {prompt}: not an envbench prompt file (entity_map is not an order of the "
                              "vertexSet indices 0..2); rebuild the prompts with `envbench icl prompts`\n")
    prompt.write_text(json.dumps({**record, "title": "Test B"}))
    res = runner.invoke(cli, parse)
    assert res.exit_code == 1
    assert res.output == (f"Error: {prompt}: its title 'Test B' is not 'Test A', the title index.json lists for it; "
                          "rebuild the prompts with `envbench icl prompts`\n")
    assert not pred.exists()
    prompt.write_text(json.dumps(record))
    assert runner.invoke(cli, parse).exit_code == 0


def _prompts(runner: CliRunner, tmp_path: Path) -> Path:
    p = write_world(tmp_path)
    prompts = tmp_path / "p"
    assert runner.invoke(cli, ["icl", "prompts", "--docs", str(p["test"]), "--train", str(p["train"]),
                               "--out", str(prompts)]).exit_code == 0
    return prompts


def test_run_refuses_a_cache_in_the_prompts_folder(runner: CliRunner, tmp_path: Path) -> None:
    """`--cache PROMPTS/c` wrote answers into the prompts folder; then `icl prompts` refused to rebuild it."""
    prompts = _prompts(runner, tmp_path)
    before = sorted(p.relative_to(prompts) for p in prompts.rglob("*"))
    server = FakeServer()
    try:
        for cache, where in ((prompts, "is the --prompts folder"),
                             (prompts / "c", f"lies inside the --prompts folder {prompts}"),
                             (prompts / "prompts" / "c", f"lies inside the --prompts folder {prompts}")):
            res = runner.invoke(cli, run_args(prompts, server.url, tmp_path / "r", "--cache", str(cache)))
            assert (res.exit_code, res.output) == (1, f"Error: --cache {cache} {where}; choose another --cache, "
                                                      "outside it\n")
        res = runner.invoke(cli, run_args(prompts, server.url, tmp_path / "r", "--cache", str(tmp_path / "shared")))
        assert res.exit_code == 0, res.output  # a cache of its own, anywhere else, is the documented use
    finally:
        server.close()
    assert server.total == 3
    assert sorted(p.relative_to(prompts) for p in prompts.rglob("*")) == before


@pytest.mark.parametrize("body,message", [
    ('{"messages": null, "model": "other"}', "--extra-body sets 'messages', which the harness sends from the prompts "
                                             "folder (and run.json records); leave 'messages' out of --extra-body"),
    ('{"model": "other"}', "--extra-body sets 'model', which the harness sends from --model (and run.json records); "
                           "leave 'model' out of --extra-body"),
    ('{"model": null}', "--extra-body sets 'model', which the harness sends from --model (and run.json records); "
                        "leave 'model' out of --extra-body"),
    ('{"temperature": 0.7}', "--extra-body sets 'temperature', which --temperature gives (and run.json records); pass "
                             "--temperature instead ('temperature': null, which removes the field, is allowed)"),
    ('{"max_tokens": 99}', "--extra-body sets 'max_tokens', which --max-tokens gives (and run.json records); pass "
                           "--max-tokens instead ('max_tokens': null, which removes the field, is allowed)"),
])
def test_extra_body_may_not_replace_what_the_harness_sends(runner: CliRunner, tmp_path: Path, body: str,
                                                           message: str) -> None:
    """`{"messages": null, "model": "other"}` sent no prompt to another model, while run.json said --model."""
    res = runner.invoke(cli, run_args(tmp_path, "http://127.0.0.1:9/v1", tmp_path / "r", "--extra-body", body))
    assert (res.exit_code, res.output) == (1, f"Error: {message}\n")
    assert not (tmp_path / "r").exists()


def test_run_refuses_an_empty_model_and_keeps_the_documented_extra_body(runner: CliRunner, tmp_path: Path) -> None:
    prompts = _prompts(runner, tmp_path)
    for model in ("", " "):  # an empty "model" reached the server, which answered under its default model
        res = runner.invoke(cli, ["icl", "run", "--prompts", str(prompts), "--base-url", "http://127.0.0.1:9/v1",
                                  "--model", model, "--out", str(tmp_path / "r")])
        assert (res.exit_code, res.output) == (1, "Error: --model is empty; give the model name as the server knows "
                                                  "it, e.g. --model Qwen2.5-7B-Instruct\n")
    server = FakeServer()
    try:  # docs/icl.md's example for OpenAI reasoning models: null removes a field the harness sets
        res = runner.invoke(cli, run_args(prompts, server.url, tmp_path / "r", "--extra-body",
                                          '{"max_tokens": null, "max_completion_tokens": 4096}'))
    finally:
        server.close()
    assert res.exit_code == 0, res.output
    assert "max_tokens" not in server.bodies[0] and server.bodies[0]["max_completion_tokens"] == 4096
    # a seed in the body is the request's own when --seed is not given; beside --seed it would replace it
    res = runner.invoke(cli, run_args(prompts, "http://127.0.0.1:9/v1", tmp_path / "r2", "--seed", "3",
                                      "--extra-body", '{"seed": 0}'))
    assert (res.exit_code, res.output) == (1, "Error: --extra-body sets 'seed', which --seed gives (and run.json "
                                              "records); pass --seed instead ('seed': null, which removes the field, "
                                              "is allowed)\n")


def test_parse_messages_name_the_option_that_was_given(runner: CliRunner, tmp_path: Path) -> None:
    prompts, run = _prompts(runner, tmp_path), tmp_path / "r"
    server = FakeServer()
    try:
        assert runner.invoke(cli, run_args(prompts, server.url, run)).exit_code == 0
    finally:
        server.close()
    parse = ["icl", "parse", "--prompts", str(prompts), "--run", str(run)]
    res = runner.invoke(cli, [*parse, "--out", str(run / "run.json")])  # offered a --force that parse lacks
    assert (res.exit_code, res.output) == (1, f"Error: --out {run / 'run.json'}: run.json is there and no `icl-parse` "
                                              "run wrote it; move it, or choose another --out\n")
    res = runner.invoke(cli, [*parse, "--out", str(run / "pred.json"), "--stats", str(run / "answers.json")])
    assert (res.exit_code, res.output) == (1, f"Error: --stats {run / 'answers.json'}: the input {run / 'answers.json'} "
                                              f"would be overwritten by this step's output {run / 'answers.json'}; "
                                              "choose another --stats\n")  # it blamed --out
    res = runner.invoke(cli, [*parse, "--out", str(run / "pred.json"), "--stats", str(run / "run.json")])
    assert (res.exit_code, res.output) == (1, f"Error: --stats {run / 'run.json'}: run.json is there and no "
                                              "`icl-parse` run wrote it; move it, or choose another --stats\n")
    assert sorted(p.name for p in run.iterdir()) == ["answers.json", "cache", "failures.json", "run.json"]


@pytest.mark.parametrize("command,option,value,bound", [
    ("prompts", "--seed", str(2**63), "-9223372036854775808<=x<=9223372036854775807"),
    ("prompts", "--max-demo-tokens", str(2**64), "1<=x<=9223372036854775807"),
    ("run", "--seed", str(-(2**63) - 1), "-9223372036854775808<=x<=9223372036854775807"),
    ("run", "--max-tokens", str(10**9 + 1), "1<=x<=1000000000"),
    ("run", "--context", str(2**64), "1<=x<=1000000000"),
    ("run", "--concurrency", str(2**64), "1<=x<=1024"),
    ("run", "--retries", "101", "0<=x<=100"),
    ("run", "--timeout", "1e300", "0.0<x<=86400.0"),
    ("run", "--max-wait", "1e300", "0.0<=x<=86400.0"),
])
def test_numbers_past_what_the_records_hold_are_refused(runner: CliRunner, tmp_path: Path, command: str, option: str,
                                                        value: str, bound: str) -> None:
    """Past 64 bits the prompts or answers were written, then the manifest or run.json failed (TypeError); a
    --timeout of 1e300 overflowed the clock."""
    p = write_world(tmp_path)
    args = (["icl", "prompts", "--docs", str(p["test"]), "--train", str(p["train"]), "--out", str(tmp_path / "o")]
            if command == "prompts" else run_args(tmp_path, "http://127.0.0.1:9/v1", tmp_path / "o"))
    res = runner.invoke(cli, [*args, option, value])
    shown = value if option not in ("--timeout", "--max-wait") else "1e+300"
    assert (res.exit_code, res.output.splitlines()[-1]) == (2, f"Error: Invalid value for '{option}': {shown} is not "
                                                               f"in the range {bound}.")
    assert not (tmp_path / "o").exists()


def test_a_limit_past_64_bits_is_refused_before_prompts_are_written(runner: CliRunner, tmp_path: Path) -> None:
    p = write_world(tmp_path)  # wrote the prompts, then failed in the manifest (TypeError)
    res = runner.invoke(cli, ["icl", "prompts", "--docs", str(p["test"]), "--train", str(p["train"]),
                              "--out", str(tmp_path / "o"), "--limit", str(2**64)])
    assert (res.exit_code, res.output) == (1, f"Error: --limit {2**64}: out of range (a 64-bit integer, which the "
                                              "manifest records); use a smaller number\n")
    assert not (tmp_path / "o").exists()
