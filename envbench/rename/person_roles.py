"""Entities annotated PER whose gold triples say they are no person: a place or an organisation.

Re-DocRED annotates a few places and organisations as persons ("the former mayor of Muleshoe in Bailey
County", Muleshoe PER, located in Bailey County; "ran for president in the 2006 election on the Avanza País
ticket", Avanza País PER, of which Ulises Humala is a member). Drawn from the persons, as their type says,
they read "the former mayor of Sigmund Romberg" and "on the Desmond Wolfe ticket". The document's own triples
tell them apart (:func:`not_a_person`): a role no person plays (located in or containing a place, on a
continent, a country's capital, the organisation someone is a member of, a parent or subsidiary company,
an organisation's headquarters, or a country's subject) and none that only a person plays (citizenship,
birth and death, family, schooling, employer, party, language spoken). ``generate`` keeps such an entity
(``not_a_person``): no candidate of its coarse type could read right, and its type label must still hold.
A country as subject alone is noisy (Re-DocRED gives persons a P17 beside their P27), so it counts only
where no person's role stands beside it.
"""

from __future__ import annotations

Role = tuple[str, str]  # (relation, "subject" | "value"), as ``plausible.entity_roles`` reads them

NO_PERSON_ROLES: frozenset[Role] = frozenset({
    ("P131", "subject"), ("P131", "value"), ("P150", "subject"), ("P150", "value"), ("P30", "subject"),
    ("P206", "subject"), ("P706", "subject"), ("P36", "value"), ("P1376", "subject"), ("P463", "value"),
    ("P749", "subject"), ("P749", "value"), ("P355", "subject"), ("P355", "value"), ("P159", "subject"),
    ("P17", "subject"),
})
PERSON_ROLES: frozenset[Role] = frozenset({
    ("P27", "subject"), ("P569", "subject"), ("P570", "subject"), ("P19", "subject"), ("P20", "subject"),
    ("P26", "subject"), ("P26", "value"), ("P22", "subject"), ("P22", "value"), ("P25", "subject"),
    ("P25", "value"), ("P40", "subject"), ("P40", "value"), ("P3373", "subject"), ("P3373", "value"),
    ("P69", "subject"), ("P108", "subject"), ("P102", "subject"), ("P1412", "subject"), ("P106", "subject"),
    ("P39", "subject"), ("P54", "subject"),
})


def not_a_person(roles: frozenset[Role]) -> bool:
    """Whether ``roles`` hold a role no person plays and none that only a person plays."""
    return bool(roles & NO_PERSON_ROLES) and not roles & PERSON_ROLES


__all__ = ["NO_PERSON_ROLES", "PERSON_ROLES", "not_a_person"]
