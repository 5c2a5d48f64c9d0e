"""Errors that the CLI prints as one line, without a traceback.

Every message names the file, document, entity or option at fault and says what to do.
"""

from __future__ import annotations

from etl.io import InputError


class EnvbenchError(InputError):
    """A user-facing error."""


class DataError(EnvbenchError):
    """Input data that does not match the expected format."""
