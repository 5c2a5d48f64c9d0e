"""File names and streamed JSON output shared by the steps that write DocRED-format files.

    stem_of("data/dev_revised.json.gz")      # "dev_revised": OUT/dev_revised_env.json
    with JsonListWriter(path) as out:        # the same bytes as etl.io.dumps_json(list_of_docs),
        for doc in docs:                     # without holding the list
            out.write(doc)
"""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType
from typing import Any

from etl.io import COMPRESSED_SUFFIXES, dumps_json


def stem_of(path: str | os.PathLike[str]) -> str:
    """A DocRED file's name without ``.json`` and a compression suffix."""
    name = Path(path).name
    for suffix in COMPRESSED_SUFFIXES:
        name = name.removesuffix(suffix)
    return name.removesuffix(".json")


class JsonListWriter:
    """Write a JSON list element by element, byte-identical to ``dumps_json`` of the whole list.

    ``dumps_json`` writes a list compactly, so the file is ``[`` + the elements' own serialisations
    joined by ``,`` + ``]`` and a newline; each element is serialised by ``dumps_json`` itself (the
    one place the options live), less its trailing newline.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.count = 0
        self._fh = open(self.path, "wb")  # noqa: SIM115 - closed by close() / the with block

    def write(self, obj: Any) -> None:
        data = dumps_json(obj)
        self._fh.write(b"," if self.count else b"[")
        self._fh.write(memoryview(data)[:-1])
        self.count += 1

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.write(b"]\n" if self.count else b"[]\n")
            self._fh.close()

    def __enter__(self) -> JsonListWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            self.close()
        else:
            self._fh.close()  # a partial file; the caller's staging folder is removed with it


__all__ = ["JsonListWriter", "stem_of"]
