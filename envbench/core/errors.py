"""Errors that the CLI prints as one line, without a traceback.

Every message names the file, document, entity or option at fault and says what to do.
"""

from __future__ import annotations

from etl.io import InputError, shorten

__all__ = ["DataError", "EnvbenchError", "first_line", "shorten"]


class EnvbenchError(InputError):
    """A user-facing error."""


class DataError(EnvbenchError):
    """Input data that does not match the expected format."""


def first_line(exc: BaseException, default: str = "") -> str:
    """An exception's message cut to its first line (pyarrow's and the OS's run over several), or
    ``default``, else the exception's class name, when it has none."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else default or type(exc).__name__
