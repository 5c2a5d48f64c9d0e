"""What the CLI tests share: running a command in-process, and running the Example of a command's --help."""

from __future__ import annotations

import shlex

from click.testing import CliRunner

from envbench.cli import cli


def run(*args: object) -> tuple[int, str]:
    """``envbench ARGS`` in this process: its exit code and everything it printed."""
    res = CliRunner().invoke(cli, [str(a) for a in args])
    return res.exit_code, res.output


def run_examples(command: str) -> list[str]:
    """Run, as pasted, every line of the Example block of ``envbench COMMAND --help`` (run it from a
    folder the Example may write into); each must exit 0. The lines run, for the caller's checks."""
    code, out = run(command, "--help")
    assert code == 0 and "Example" in out, out
    block = out.split("Example", 1)[1].split("\nOptions:", 1)[0].split("\n", 1)[1]
    lines = block.replace("\\\n", " ").strip().splitlines()
    assert lines and all(line.split()[0] == "envbench" for line in lines), block
    for line in lines:
        code, res = run(*shlex.split(line)[1:])
        assert code == 0, (line, res)
    return lines
