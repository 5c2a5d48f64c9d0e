"""The command group itself (envbench/cli/__init__.py): usage errors are one line, a bare group prints its help."""

from __future__ import annotations

import pytest

from tests.envbench.cli.invoke import run


@pytest.mark.parametrize(("args", "message"), [
    (["--bogus"], "Error: No such option '--bogus'.\n"),
    (["bogus"], "Error: No such command 'bogus'; `envbench --help` lists the commands\n"),
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


def test_a_mistyped_command_names_the_nearest_ones() -> None:
    from tests.envbench.cli.invoke import run

    assert run("generat", "x") == (2, "Error: No such command 'generat'. Did you mean 'generate'? (`envbench --help` "
                                      "lists them all)\n")
    assert run("explor")[1] == ("Error: No such command 'explor'. Did you mean 'explore', 'export' or 'report'? "
                                "(`envbench --help` lists them all)\n")
    assert run("zzz") == (2, "Error: No such command 'zzz'; `envbench --help` lists the commands\n")
    assert run("index", "inf", "x")[1].startswith("Error: No such command 'inf'. Did you mean 'info'?")
