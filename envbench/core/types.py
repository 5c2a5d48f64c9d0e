"""DocRED's coarse entity types: the one definition every module reads.

DocRED tags each mention PER, ORG, LOC, MISC, NUM or TIME. The first four name things that can be
linked to Wikidata and renamed with another item's names; NUM and TIME are values renamed by rule
(``envbench.rename.numtime``). Tables and reports list the types in this order.
"""

from __future__ import annotations

COARSE_TYPES: tuple[str, ...] = ("PER", "ORG", "LOC", "MISC", "NUM", "TIME")
LINKED_TYPES: tuple[str, ...] = ("PER", "ORG", "LOC", "MISC")  # renamed through a Wikidata item
RULE_TYPES: tuple[str, ...] = ("NUM", "TIME")  # renamed by rule, never linked

# Classes that tell a reader nothing of what a thing is. A draw by one of them alone gives "responsibility
# for Continental Europe" the name "Pacific Region - 2 - digit Hydrologic Unit Code - 22" (an item whose
# only class is territorial entity). The rule (``rename.fine_types.choose_fine_type``): such a class is
# never an item's fine type while the item has another class that fits, and an entity whose item has
# only these is kept (``KeptReason.GENERIC_TYPE``). The list: the upper-ontology classes Wikidata's
# LOC/ORG/MISC items carry as a bare P31, which include the classes kb-from-corpus falls back to when
# no signal types a cluster (``relation_types.json`` ``coarse_fallback``: geographic location,
# organization, entity; not person, since a person renamed as a person reads right), and the near-root
# classes of Wikidata's upper ontology that a real dump's items also carry bare (concrete and abstract
# object, occurrence, agent, spatial and geographic entity, ...): an item whose only P31 is "occurrence"
# says as little as one whose only P31 is "entity".
CATCH_ALL_CLASSES: dict[str, str] = {
    "Q35120": "entity",
    "Q488383": "object",
    "Q223557": "physical object",
    "Q151885": "concept",
    "Q1496967": "territorial entity",
    "Q2221906": "geographic location",
    "Q17334923": "location",
    "Q618123": "geographical feature",
    "Q43229": "organization",
    "Q16334295": "group of humans",
    "Q4406616": "concrete object",
    "Q7184903": "abstract object",
    "Q16686022": "natural object",
    "Q16686448": "artificial object",
    "Q99527517": "collective entity",
    "Q1190554": "occurrence",
    "Q24229398": "agent",
    "Q58416391": "spatial entity",
    "Q27096213": "geographic entity",
    "Q1503302": "geographic object",
    "Q874405": "social group",
}

__all__ = ["CATCH_ALL_CLASSES", "COARSE_TYPES", "LINKED_TYPES", "RULE_TYPES"]
