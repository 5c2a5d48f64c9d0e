"""Why an entity kept its names: the one list, read by generation, the substitution table and reports.

The value is what ``substitutions.parquet`` stores in its ``reason`` column and ``stats.json``
counts under ``kept_reasons``; code names a reason only through this enum, so a reason can never be
spelled two ways.
"""

from __future__ import annotations

from enum import Enum


class KeptReason(str, Enum):
    OVERLAP = "overlap"
    UNLINKED = "unlinked"
    NO_TYPE = "no_type"
    NO_CANDIDATE = "no_candidate"
    NO_RULE = "no_rule"
    NO_VALID_VALUE = "no_valid_value"
    NO_DEMONYM = "no_demonym"
    GENERIC_TYPE = "generic_type"
    NO_GENDER = "no_gender"
    SAME_ITEM = "same_item"

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self]

    def __str__(self) -> str:  # f-strings and joins print the stored value
        return self.value


_DESCRIPTIONS = {
    KeptReason.OVERLAP: "a mention overlaps a mention of another entity (overlap policy)",
    KeptReason.UNLINKED: "no Wikidata item (no link, or the linker abstained)",
    KeptReason.NO_TYPE: "the item has no P31 value in the index",
    KeptReason.NO_CANDIDATE: "no eligible same-type item passed the checks",
    KeptReason.NO_RULE: "no NUM/TIME rule applies to the written value",
    KeptReason.NO_VALID_VALUE: "every rule-based value clashed with the document or the temporal order",
    KeptReason.NO_DEMONYM: "a mention is adjectival and no drawn candidate had an adjectival form",
    KeptReason.GENERIC_TYPE: "the item's only classes are catch-alls (entity, organization, ...)",
    KeptReason.NO_GENDER: "the person's gender is known and no drawn candidate of that gender, with a name that reads as it, passed the checks",
    KeptReason.SAME_ITEM: "an earlier entity of the document linked to the same item kept its names, so the text names one thing",
}

__all__ = ["KeptReason"]
