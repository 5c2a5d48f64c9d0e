"""docs/cli.md, rendered from the ``--help`` of every command, so the reference cannot drift.

    python -m envbench.cli.reference            # rewrite docs/cli.md (what `make docs` runs)
    python -m envbench.cli.reference --check    # exit 1, naming the fix, when docs/cli.md is stale

The page is built from the live click tree: the root group, each lazy entry of ``COMMANDS`` loaded
as ``envbench CMD --help`` would load it, and the subcommands of groups such as ``index`` and
``icl``, in the order ``--help`` lists them. Help is formatted at a fixed width rather than the
terminal's, so the bytes depend only on the code. Loading a command imports its module only; the
torch commands (``train``, ``predict``) import torch inside their bodies, so rendering never does.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import click

# What a terminal of 100 columns or more shows: the group's max_content_width (100) less the two
# columns click keeps free on the right.
WIDTH = 98
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
REGENERATE = "run `make docs` (or `python -m envbench.cli.reference`) and commit docs/cli.md"
_HEADING = re.compile(r"^#{2,6} `(envbench(?: [^`]+)?)`$", re.MULTILINE)


@dataclass(frozen=True)
class HelpPage:
    """One command's help as ``envbench ... --help`` prints it."""

    path: tuple[str, ...]  # ("envbench", "index", "get")
    short_help: str
    text: str

    @property
    def name(self) -> str:
        return " ".join(self.path)

    @property
    def anchor(self) -> str:
        # GitHub's heading slug: lower case, punctuation other than '-' dropped, spaces to '-'
        return re.sub(r"[^a-z0-9 -]", "", self.name.lower()).replace(" ", "-")


def _context(command: click.Command, name: str, parent: click.Context | None) -> click.Context:
    settings = {**command.context_settings, "terminal_width": WIDTH}
    return click.Context(command, info_name=name, parent=parent, **settings)


def help_pages(root: click.Command | None = None, name: str = "envbench") -> list[HelpPage]:
    """Every command of the tree under ``root`` (default: the ``envbench`` group), depth first."""
    if root is None:
        from envbench.cli import cli as root
    pages: list[HelpPage] = []

    def visit(command: click.Command, path: tuple[str, ...], parent: click.Context | None) -> None:
        ctx = _context(command, path[-1], parent)
        short = command.get_short_help_str(limit=300) if parent is not None else ""
        pages.append(HelpPage(path, short, command.get_help(ctx).rstrip() + "\n"))
        if isinstance(command, click.Group):
            for sub_name in command.list_commands(ctx):
                sub = command.get_command(ctx, sub_name)
                if sub is None:
                    raise click.ClickException(f"`{' '.join(path)} {sub_name}` is listed but cannot be loaded; "
                                               "check its entry in envbench.cli.COMMANDS")
                if not sub.hidden:
                    visit(sub, (*path, sub_name), ctx)

    visit(root, (name,), None)
    return pages


def _fence(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def render(pages: list[HelpPage]) -> str:
    """The markdown page: a table of every command, then each command's help in a text block."""
    lines = [
        "# Command reference",
        "",
        "<!-- Generated from the --help texts by `make docs` (python -m envbench.cli.reference).",
        "     Do not edit: change the command's docstring or option help, then run `make docs`. -->",
        "",
        f"Every `envbench` command's `--help`, as a terminal of {WIDTH + 2} columns shows it. "
        "`tests/envbench/cli/test_reference.py` fails when this page and the code disagree.",
        "",
        "| command | what it does |",
        "| --- | --- |",
    ]
    for page in pages[1:]:
        lines.append(f"| [`{page.name}`](#{page.anchor}) | {page.short_help.replace('|', chr(92) + '|')} |")
    for page in pages:
        fence = _fence(page.text)
        lines += ["", f"{'#' * min(max(2, len(page.path)), 6)} `{page.name}`", "", f"{fence}text",
                  page.text.rstrip("\n"), fence]
    return "\n".join(lines) + "\n"


def documented_commands(markdown: str) -> set[str]:
    """The command names that have a section (a ``## `envbench ...``` heading) in ``markdown``."""
    return set(_HEADING.findall(markdown))


def stale_reason(path: str | Path = DEFAULT_OUT, pages: list[HelpPage] | None = None) -> str | None:
    """Why the page at ``path`` is not what the code renders now, or None when it is current."""
    pages = help_pages() if pages is None else pages
    target = Path(path)
    if not target.is_file():
        return f"{target} is missing; {REGENERATE}"
    current = target.read_text(encoding="utf-8")
    missing = sorted({p.name for p in pages} - documented_commands(current))
    if missing:
        return f"{target} has no section for {', '.join(missing)}; {REGENERATE}"
    if current != render(pages):
        return f"{target} differs from the --help texts; {REGENERATE}"
    return None


def write_reference(path: str | Path = DEFAULT_OUT) -> bool:
    """Write the page to ``path``; True when its bytes changed."""
    target = Path(path)
    text = render(help_pages())
    if target.is_file() and target.read_text(encoding="utf-8") == text:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(target)  # atomic: a reader never sees half a page
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m envbench.cli.reference",
                                     description="Render every envbench command's --help into docs/cli.md.")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="Markdown file to write or check (default: docs/cli.md).")
    parser.add_argument("--check", action="store_true", help="Write nothing; exit 1 when the file is not current.")
    args = parser.parse_args(argv)
    try:
        if args.check:
            reason = stale_reason(args.out)
            if reason:
                print(f"Error: {reason}", file=sys.stderr)
                return 1
            print(f"{args.out} is current")
            return 0
        changed = write_reference(args.out)
    except click.ClickException as exc:
        print(f"Error: {exc.format_message()}", file=sys.stderr)
        return 1
    print(f"{'wrote' if changed else 'unchanged:'} {args.out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
