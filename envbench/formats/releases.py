"""The official releases of the corpora envbench reads, known by size and sha256.

Users of DocRED and Re-DocRED lose days to a wrong file version (a re-saved copy, an older release, a
file of another corpus under the same name). ``envbench validate`` says whether a file is one of these,
byte for byte, or else that it is a modified or unknown version. Each entry was hashed from the file its
project publishes: Re-DocRED's ``data/`` folder (github.com/tonytan48/Re-DocRED) and DocRED's Google
Drive folder named in its README (github.com/thunlp/DocRED).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from etl.io import sha256_file


@dataclass(frozen=True)
class Release:
    corpus: str  # "Re-DocRED", "DocRED"
    split: str  # as the corpus names the file's split
    file: str  # the file name it is published under
    bytes: int
    sha256: str

    def describe(self) -> str:
        return f"{self.corpus} {self.split} ({self.file}, {self.bytes:,} bytes)"


RELEASES: tuple[Release, ...] = (
    Release("Re-DocRED", "train", "train_revised.json", 18_602_933,
            "c40a137a1c57f3e2daaf5ebf511eaa1518f9305ffaa3052d46271921a91826f2"),
    Release("Re-DocRED", "dev", "dev_revised.json", 3_245_588,
            "051ee1d057204a5d08ef5502beacdadf191245b5eaf0e29ec2c607cf002c016f"),
    Release("Re-DocRED", "test", "test_revised.json", 3_207_228,
            "ea673b7ef91e16510d7eb88863d3903e47318dc5653ef361266f27ae3b84723c"),
    Release("DocRED", "train_annotated", "train_annotated.json", 13_029_595,
            "7e706348a02cf91f38bd8c379f934ab61aedadc901fca10d962c1d82ab78e95b"),
    Release("DocRED", "dev", "dev.json", 4_287_303,
            "4554f7487a6fda3bab4d4e59432e065b7485dfb885bd7f05fd60fc7e93ee7e3e"),
)


@dataclass(frozen=True)
class Identified:
    """What a file is: one of ``RELEASES``, or None, with the file's own size and sha256."""

    release: Release | None
    bytes: int
    sha256: str
    name: str  # the file's name, to name the official file it may be a version of

    def line(self) -> str:
        """``release: official Re-DocRED test (...)`` or ``release: not an official release ...``."""
        if self.release is not None:
            return f"release: the official {self.release.describe()}, sha256 {self.sha256[:12]}..."
        named = [r for r in RELEASES if r.file == self.name]
        like = f" (the official {named[0].describe()} has sha256 {named[0].sha256[:12]}...)" if named else ""
        return (f"release: a modified or unknown version ({self.bytes:,} bytes, sha256 {self.sha256[:12]}...), not "
                f"one of the official DocRED or Re-DocRED files{like}; scores on it are not comparable with "
                "published ones")

    def to_dict(self) -> dict[str, object]:
        r = self.release
        return {"official": r is not None, "corpus": r.corpus if r else None, "split": r.split if r else None,
                "bytes": self.bytes, "sha256": self.sha256}


def identify(path: str | os.PathLike[str]) -> Identified:
    """Which official release ``path`` is (by size, then sha256), or none."""
    p = Path(path)
    size = p.stat().st_size
    digest = sha256_file(p)
    match = next((r for r in RELEASES if r.bytes == size and r.sha256 == digest), None)
    return Identified(match, size, digest, p.name)


__all__ = ["Identified", "RELEASES", "Release", "identify"]
