"""DocRED's coarse entity types: the one definition every module reads.

DocRED tags each mention PER, ORG, LOC, MISC, NUM or TIME. The first four name things that can be
linked to Wikidata and renamed with another item's names; NUM and TIME are values renamed by rule
(``envbench.rename.numtime``). Tables and reports list the types in this order.
"""

from __future__ import annotations

COARSE_TYPES: tuple[str, ...] = ("PER", "ORG", "LOC", "MISC", "NUM", "TIME")
LINKED_TYPES: tuple[str, ...] = ("PER", "ORG", "LOC", "MISC")  # renamed through a Wikidata item
RULE_TYPES: tuple[str, ...] = ("NUM", "TIME")  # renamed by rule, never linked

__all__ = ["COARSE_TYPES", "LINKED_TYPES", "RULE_TYPES"]
