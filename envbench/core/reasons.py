"""Why an entity kept its names, and by which rule a NUM or TIME value was kept, derived or drawn: the
one lists, read by generation, the substitution table and reports.

A :class:`KeptReason` value is what ``substitutions.parquet`` stores in its ``reason`` column and
``stats.json`` counts under ``kept_reasons``; a :class:`ValueRule` value is what it stores in its
``value_rule`` column for every NUM and TIME entity (``envbench.rename.coherence`` decides it). Code
names a reason or a rule only through these enums, so neither can be spelled two ways.
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
    BUILT_ON = "built_on"
    KIND_NOUN = "kind_noun"
    CHECKED = "checked"
    FIXED_FORM = "fixed_form"
    PLACE = "place"
    REFERENT = "referent"
    TEXT_LANGUAGE = "text_language"
    NOT_A_PERSON = "not_a_person"
    # the attacks of ``envbench generate --attack`` (``envbench/rename/attacks.py``)
    NOT_SELECTED = "not_selected"
    NO_PARTNER = "no_partner"
    NOT_ATTACKED = "not_attacked"

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self]

    @property
    def short(self) -> str:
        """The reason in a few words, for a summary line ("no item to draw from")."""
        return _SHORT[self]

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
    KeptReason.BUILT_ON: "its name holds the name of another entity of the document that kept its names, or a kept name holds its name",
    KeptReason.KIND_NOUN: "a noun beside a mention says what kind of thing it is, and no drawn candidate was of that kind",
    KeptReason.CHECKED: "a number the text checks against its dates or a list (an age, an interval, a listed count) "
                        "whose renamed dates leave it as it was, or a century or period the document's years date",
    KeptReason.FIXED_FORM: "a number inside a fixed form a reader knows ('7 \" single', 'Boeing 747', 'two - stroke')",
    KeptReason.PLACE: "a place the gold triples put another place inside, whose item (new or kept) lies in this "
                      "place's own item and in no item it could become ('Düsseldorf , Germany' stays so)",
    KeptReason.REFERENT: "an adjective of a place the document names ('American' beside 'United States') whose place "
                         "kept its names, or the place of such an adjective that kept its own: the two still agree",
    KeptReason.TEXT_LANGUAGE: "a language (or its adjective) that names the language of the words after its colon "
                              "('( Italian : Società Dante Alighieri )'), which stay in that language",
    KeptReason.NOT_A_PERSON: "annotated PER, but the document's gold triples give it a role no person plays (a place's, "
                             "an organisation's) and none that only a person plays ('the former mayor of Muleshoe')",
    KeptReason.NOT_SELECTED: "--rate under 1: the entity was not drawn among the share renamed (it would have been renamed)",
    KeptReason.NO_PARTNER: "shuffle: no other entity of its coarse type in the document has other names to give it",
    KeptReason.NOT_ATTACKED: "the attack leaves entities of this coarse type as they are (type-swap: NUM and TIME)",
}

_SHORT = {
    KeptReason.OVERLAP: "a mention overlaps another entity's",
    KeptReason.UNLINKED: "not linked to an item",
    KeptReason.NO_TYPE: "its item has no type",
    KeptReason.NO_CANDIDATE: "no same-type item passed the checks",
    KeptReason.NO_RULE: "no rule for its number or date",
    KeptReason.NO_VALID_VALUE: "every new value clashed",
    KeptReason.NO_DEMONYM: "no adjectival form to write",
    KeptReason.GENERIC_TYPE: "its type is too general",
    KeptReason.NO_GENDER: "no new name of its gender",
    KeptReason.SAME_ITEM: "another entity of its item kept its names",
    KeptReason.BUILT_ON: "a name inside it, or around it, was kept",
    KeptReason.KIND_NOUN: "no new name of the kind its noun says",
    KeptReason.CHECKED: "a number the text checks (an age, a count)",
    KeptReason.FIXED_FORM: "a number inside a fixed form",
    KeptReason.PLACE: "a place inside it stays inside it",
    KeptReason.REFERENT: "its place or its adjective kept its names",
    KeptReason.TEXT_LANGUAGE: "the language of the words after it",
    KeptReason.NOT_A_PERSON: "annotated a person, but its triples say otherwise",
    KeptReason.NOT_SELECTED: "not drawn at --rate under 1",
    KeptReason.NO_PARTNER: "no other entity to shuffle names with",
    KeptReason.NOT_ATTACKED: "the attack leaves its type alone",
}


class ValueRule(str, Enum):
    """Why a NUM or TIME entity's value is what it is after renaming: the role it plays in its document
    (``envbench.rename.coherence``). A row kept for a :class:`KeptReason` still says the rule it fell under."""

    DATE = "date"
    DRAWN = "drawn"
    AGE = "age"
    INTERVAL = "interval"
    LISTED_COUNT = "listed_count"
    TIED_COUNT = "tied_count"
    FIXED_FORM = "fixed_form"
    SHARE = "share"
    EQUIVALENT = "equivalent"

    @property
    def description(self) -> str:
        return _RULES[self]

    def __str__(self) -> str:
        return self.value


_RULES = {
    ValueRule.DATE: "a date, period or time of day: moved with every date of the document by one shift",
    ValueRule.DRAWN: "a value free to change (a measure, a count nothing checks): drawn anew in its written form",
    ValueRule.AGE: "an age: derived from the renamed birth and event dates (the same value when they moved together)",
    ValueRule.INTERVAL: "an interval or duration: derived from the renamed dates it joins (the same value when they "
                        "moved together)",
    ValueRule.LISTED_COUNT: "a count followed by the list it counts: kept",
    ValueRule.TIED_COUNT: "a count of the same thing as another count of the document: both move by one offset, so "
                          "their difference stays",
    ValueRule.FIXED_FORM: "a number inside a fixed form: kept",
    ValueRule.SHARE: "a share of one whole (a percentage beside another in its sentence; N of the M): kept, since "
                     "shares drawn on their own can add up past their whole",
    ValueRule.EQUIVALENT: "a value written with its equivalent in brackets (another unit or currency, its share of a "
                          "whole): both kept, since values drawn on their own stop converting",
}

__all__ = ["KeptReason", "ValueRule"]
