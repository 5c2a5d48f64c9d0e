"""The ``envbench`` command line. Commands are loaded lazily so ``--help`` never imports torch."""

from __future__ import annotations

import errno
import importlib
import signal
import sys

import click

from etl.io import InputError

# name -> "module:attribute"; models.* commands live in the [train]/models package, which
# imports envbench (never the other way round), so they are referenced by name only.
COMMANDS: dict[str, str] = {
    "demo": "envbench.cli.demo:demo",
    "make-sample": "envbench.cli.worlds:make_sample",
    "kb-from-corpus": "envbench.cli.worlds:kb_from_corpus",
    "validate": "envbench.cli.worlds:validate",
    "ingest-dump": "envbench.cli.ingest:ingest_dump",
    "index": "envbench.cli.ingest:index_group",
    "link": "envbench.cli.link:link",
    "generate": "envbench.cli.generate:generate",
    "name-overlap": "envbench.cli.overlap:name_overlap",
    "lock": "envbench.cli.verify:lock",
    "verify": "envbench.cli.verify:verify",
    "export": "envbench.cli.export:export",
    "evaluate": "envbench.cli.evaluate:evaluate",
    "report": "envbench.cli.evaluate:report",
    "compare": "envbench.cli.compare:compare",
    "explore": "envbench.cli.explore:explore",
    "train": "models.cli:train",
    "predict": "models.cli:predict",
    "understand": "models.understand:understand",
    "icl": "icl.cli:icl",
}


# click 8.2+ raises this for a bare group (`envbench`, `envbench index`); 8.1 prints the help itself
_NO_ARGS_IS_HELP = tuple(c for c in (getattr(click.exceptions, "NoArgsIsHelpError", None),) if c is not None)


def _one_line(exc: click.UsageError) -> click.ClickException:
    """A usage error as one line, as every other error: click's usage block and "Try ... for help" would
    precede it ("Invalid value for '--pool': 'bad' is not one of 'eval', 'train'." names the fix)."""
    one = click.ClickException(exc.format_message())
    one.exit_code = exc.exit_code
    return one


class LazyGroup(click.Group):
    """A group whose subcommands are imported only when listed or run."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        module = importlib.import_module(module_name)
        return getattr(module, attr)

    def resolve_command(self, ctx: click.Context, args: list[str]):  # type: ignore[override]
        """A mistyped command names the nearest ones (``envbench generat`` -> did you mean 'generate'?)."""
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in COMMANDS:
            import difflib

            near = difflib.get_close_matches(name, list(COMMANDS), n=3, cutoff=0.6)
            if near:
                fix = " or ".join(filter(None, [", ".join(repr(c) for c in near[:-1]), repr(near[-1])]))
                raise click.UsageError(f"No such command {name!r}. Did you mean {fix}? (`envbench --help` lists "
                                       "them all)", ctx)
            raise click.UsageError(f"No such command {name!r}; `envbench --help` lists the commands", ctx)
        return super().resolve_command(ctx, args)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:  # the group's own options (`envbench --bogus`): one line too
            return super().parse_args(ctx, args)
        except _NO_ARGS_IS_HELP:  # a bare `envbench`: the help itself, as click prints it
            raise
        except click.UsageError as exc:
            raise _one_line(exc) from None

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except InputError as exc:  # library errors carry their own fix; no traceback
            raise click.ClickException(str(exc)) from None
        except _NO_ARGS_IS_HELP:  # a bare `envbench index`: its help, as click prints it
            raise
        except click.UsageError as exc:
            raise _one_line(exc) from None
        except OSError as exc:  # unwritable folder, full disk, ...: one line naming the path
            if exc.errno == errno.EPIPE:  # output piped into `head`: end quietly
                raise
            from envbench.cli._errors import describe_os_error

            raise click.ClickException(describe_os_error(exc)) from None
        except click.ClickException:
            raise
        except Exception as exc:  # a library's own error for a full disk (DuckDB's IOException)
            from envbench.cli._errors import describe_no_space
            from etl.io import is_no_space

            if not is_no_space(exc):
                raise
            raise click.ClickException(describe_no_space(exc)) from None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="envbench")
def cli() -> None:
    """envbench: test and fix how document-level relation extraction copes with entity renaming.

    \b
    The main job, offline, on the built-in sample world:
      envbench make-sample --out data/sample
      envbench ingest-dump data/sample/wikidata-sample.json.gz --out data/index
      envbench generate data/sample/docs/test.json --index data/index \\
          --links data/sample/links.json --exclude-names-from data/sample/docs/train.json \\
          --seeds 5 --out data/env
    """


def _terminated(signum: int, frame: object) -> None:
    # SIGTERM (timeout, CI, systemd) unwinds like Ctrl-C, so every step removes its staging folders
    raise SystemExit(128 + signum)


def main() -> None:
    signal.signal(signal.SIGTERM, _terminated)
    cli(prog_name="envbench")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
