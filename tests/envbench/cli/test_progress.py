"""Progress bars (etl.progress): every long command draws one on a terminal, and nothing at all into a pipe
or a log file; ``--no-progress`` is the one switch that quiets every command.

Each command runs as users run it, in a subprocess of its own, once with stderr a pipe (what a log file
or CI sees) and, for a few commands, once with stderr a pseudo-terminal, which shows that the pipe checks
could fail: the same command does draw there.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from tests.envbench.cli.invoke import run
from tests.envbench.index_fixture import sample_world

pytestmark = pytest.mark.slow

# What a tqdm bar leaves in a stream: the carriage returns it redraws with, and its clock "[00:01" or
# rate "it/s". None of it may reach a pipe.
BAR_MARKS = re.compile(r"\r|\[\d\d:\d\d|/s\]|\x1b\[")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A benchmark of the sample world with predictions, a report and a lock: the inputs of every command."""
    w = sample_world()
    root = tmp_path_factory.mktemp("progress")
    env = root / "env"
    code, out = run("generate", w.test, "--index", w.index, "--links", w.links, "--seeds", "2",
                    "--exclude-names-from", w.train, "--out", env, "--no-progress")
    assert code == 0, out
    for name, docs in (("pred.json", w.test), ("env_pred.json", env / "test_env.json")):
        gold = json.loads(Path(docs).read_text())
        (root / name).write_text(json.dumps([{"title": d["title"], "h_idx": lab["h"], "t_idx": lab["t"],
                                              "r": lab["r"]} for d in gold for lab in d["labels"][::2]]))
    code, out = run("lock", env, "--index", w.index, "--no-progress")
    assert code == 0, out
    return {"root": root, "env": env, "pred": root / "pred.json", "env_pred": root / "env_pred.json",
            "test": w.test, "train": w.train, "index": w.index, "links": w.links,
            "dump": w.sample / "wikidata-sample.json.gz", "lock": env / "test_env.lock.json"}


def commands(f: dict[str, Path], out: Path) -> dict[str, list[object]]:
    """Every command that can take more than a moment on real data, writing under ``out``."""
    env_gold = f["env"] / "test_env.json"
    return {
        "demo": ["demo", "--out", out / "demo", "--seeds", "1"],
        "ingest-dump": ["ingest-dump", f["dump"], "--out", out / "index", "--workers", "1"],
        "kb-from-corpus": ["kb-from-corpus", f["test"], "--out", out / "kb.json.gz", "--links", out / "links.json"],
        "link": ["link", f["test"], "--index", f["index"], "--out", out / "test.links.json"],
        "generate": ["generate", f["test"], "--index", f["index"], "--links", f["links"], "--seeds", "1",
                     "--exclude-names-from", f["train"], "--out", out / "env"],
        "lock": ["lock", f["env"], "--index", f["index"], "--out", out / "env.lock.json"],
        "verify": ["verify", f["lock"], "--docs", f["test"], "--index", f["index"], "--links", f["links"],
                   "--exclude-names-from", f["train"]],
        "export": ["export", f["env"], "--docs", f["test"], "--out", out / "hf"],
        "evaluate": ["evaluate", "--gold", env_gold, "--pred", f["env_pred"], "--train", f["train"]],
        "report": ["report", "--original-gold", f["test"], "--original-pred", f["pred"], "--env-gold", env_gold,
                   "--env-pred", f["env_pred"], "--index", f["index"], "--train", f["train"], "--out", out / "report"],
        "explore": ["explore", "--env-gold", env_gold, "--original-gold", f["test"], "--original-pred", f["pred"],
                    "--env-pred", f["env_pred"], "--index", f["index"], "--out", out / "site"],
    }


COMMANDS = ("demo", "ingest-dump", "kb-from-corpus", "link", "generate", "lock", "verify", "export", "evaluate",
            "report", "explore")


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "100"}


def run_piped(args: list[object]) -> tuple[int, str, str]:
    """``envbench ARGS`` in a subprocess with stdout and stderr pipes."""
    res = subprocess.run([sys.executable, "-m", "envbench", *map(str, args)], capture_output=True, text=True,
                         env=_env(), timeout=600)
    return res.returncode, res.stdout, res.stderr


def run_on_terminal(args: list[object]) -> tuple[int, str]:
    """``envbench ARGS`` with stderr a pseudo-terminal: its exit code and what the terminal received."""
    leader, follower = pty.openpty()
    # a terminal of 24 x 100 characters (a new pty is 0 x 0, where tqdm fits its bar into no columns)
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    try:
        proc = subprocess.Popen([sys.executable, "-m", "envbench", *map(str, args)], stdout=subprocess.DEVNULL,
                                stderr=follower, env=_env())
    finally:
        os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the command ended and closed its side
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return proc.wait(timeout=600), b"".join(chunks).decode("utf-8", "replace")


def test_commands_cover_the_registry() -> None:
    """A command added to the list of long commands is tested here (the list and the dict agree)."""
    assert set(commands({k: Path(k) for k in ("env", "pred", "env_pred", "test", "train", "index", "links",
                                              "dump", "lock")}, Path("o"))) == set(COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_no_bar_into_a_pipe(name: str, inputs: dict[str, Path], tmp_path: Path) -> None:
    code, out, err = run_piped(commands(inputs, tmp_path)[name])
    assert code == 0, (out, err)
    assert not BAR_MARKS.search(err), f"{name} wrote a progress bar into a pipe: {err!r}"


@pytest.mark.parametrize("name", ["generate", "evaluate", "report", "explore", "export"])
def test_a_bar_on_a_terminal(name: str, inputs: dict[str, Path], tmp_path: Path) -> None:
    """The same commands do draw on a terminal, so the pipe test above could fail."""
    code, seen = run_on_terminal(commands(inputs, tmp_path)[name])
    assert code == 0, seen
    assert "\r" in seen and name in seen, f"{name} drew no progress on a terminal: {seen!r}"


@pytest.mark.parametrize("name", ["generate", "evaluate", "report"])
def test_no_progress_quiets_a_terminal(name: str, inputs: dict[str, Path], tmp_path: Path) -> None:
    code, seen = run_on_terminal([*commands(inputs, tmp_path)[name], "--no-progress"])
    assert code == 0, seen
    assert not BAR_MARKS.search(seen), f"{name} --no-progress drew on a terminal: {seen!r}"
