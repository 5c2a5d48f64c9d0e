"""The command group itself (envbench/cli/__init__.py): usage errors are one line, a bare group prints its help."""

from __future__ import annotations

import pytest

from tests.envbench.cli.invoke import run


@pytest.mark.parametrize(("args", "message"), [
    (["--bogus"], "Error: No such option '--bogus'.\n"),
    (["bogus"], "Error: No such command 'bogus'.\n"),
    (["index", "bogus"], "Error: No such command 'bogus'.\n"),
    (["index", "--bogus"], "Error: No such option '--bogus'.\n"),
])
def test_usage_errors_are_one_line(args: list[str], message: str) -> None:
    assert run(*args) == (2, message)


# CliRunner names the program "cli"
@pytest.mark.parametrize(("args", "usage"), [([], "Usage: cli [OPTIONS] COMMAND"),
                                             (["index"], "Usage: cli index [OPTIONS] COMMAND")])
def test_a_bare_group_prints_its_help_not_an_error(args: list[str], usage: str) -> None:
    code, out = run(*args)
    assert code == 2 and out.startswith(usage) and "Error" not in out and "Commands:" in out
