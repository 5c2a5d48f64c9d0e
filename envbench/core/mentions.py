"""Which tokens of a DocRED-format document the entity mentions cover: one definition for every rule that asks
whether a word beside a mention is the sentence's own ("the" before "Graz", a lower-case word outside every
mention, the runs of a name left outside the mentions)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def mention_mask(doc: Mapping[str, Any]) -> list[bytearray]:
    """Per sentence, one byte per token: 1 where a mention of some entity covers it, else 0."""
    out = [bytearray(len(s)) for s in doc["sents"]]
    for ent in doc["vertexSet"]:
        for m in ent:
            a, b = m["pos"]
            out[m["sent_id"]][a:b] = b"\x01" * (b - a)
    return out


__all__ = ["mention_mask"]
