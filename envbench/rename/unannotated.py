"""Renamed names left in the text outside every annotated mention are renamed too.

Re-DocRED misses mentions: "intelligent design" is annotated in some sentences of its article and not
in others, "General Lee" once and not again. Renaming only the annotated mentions leaves the old name
beside the new one ("… intelligent design … trashy science fiction …"). So each run of tokens outside
every mention that spells a name of a renamed entity (token for token, case as written) takes that
name's new name (:func:`unannotated_spans`, then ``substitute.apply_plan``, which moves every position).
Labels and evidence do not change: the text outside mentions is no mention of anything. A run counts
when:

* no token of it is inside a mention, and it names one entity of the document (the names of every
  entity, renamed or not, are looked for, longest first, so "New York City" outside a mention is the
  city's, not "New York"'s; a name two entities share is neither's);
* it is two tokens or more; or one token that is an acronym (two capitals or more: "NHL"), or a
  capitalised word that does not open its sentence and stands beside no other capitalised word but a
  title ("General Lee" counts, "Andrew Johnson" does not count for a "Johnson" of Lyndon B. Johnson, nor
  "Will" opening a sentence for a "Will" of the document);
* its entity is renamed by a draw or derived from other names (``built_on``); NUM and TIME values are
  left to their rules (an unannotated "1990" may be another date).

``substitutions.parquet`` lists where each entity's name was written so (``unannotated``:
"sentence:start-end" of the source document).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from envbench.core.gender import HONORIFICS, TITLE_WORDS
from envbench.core.mentions import mention_mask
from envbench.formats.docred import Doc
from envbench.rename.substitute import NewName, opens_sentence

RULE_TYPES = frozenset({"NUM", "TIME"})


class Unannotated(NamedTuple):
    """A run of tokens outside every mention that spells entity ``entity``'s name ``name``."""

    sent_id: int
    start: int
    end: int
    entity: int
    name: str


def _capitalised(token: str) -> bool:
    return token[:1].isupper()


def _stands_alone(sent: Sequence[str], i: int) -> bool:
    """Whether a one-token run may be a name of its own: an acronym anywhere, or a capitalised word that
    does not open the sentence and has no capitalised neighbour but a title word ("General Lee")."""
    tok = sent[i]
    if sum(ch.isupper() for ch in tok) >= 2:
        return True
    if not _capitalised(tok) or opens_sentence(sent, i):
        return False
    before = sent[i - 1] if i > 0 else ""
    after = sent[i + 1] if i + 1 < len(sent) else ""
    titled = before.casefold() in TITLE_WORDS or before.casefold() in HONORIFICS
    return (not _capitalised(before) or titled) and not _capitalised(after)


def occurrences(doc: Doc, tokens: Sequence[Mapping[str, Sequence[str]]]) -> list[Unannotated]:
    """Every run outside every mention that spells one entity's name (``tokens``: each entity's names and
    their document tokens), longest first and not overlapping, in document order. The seed-independent
    half of the rule; :func:`unannotated_spans` keeps those of renamed entities."""
    by_tokens: dict[tuple[str, ...], set[tuple[int, str]]] = {}
    for ei, names in enumerate(tokens):
        for nm, toks in names.items():
            if toks:
                by_tokens.setdefault(tuple(toks), set()).add((ei, nm))
    if not by_tokens:
        return []
    longest = max(len(k) for k in by_tokens)
    covered = mention_mask(doc)
    out: list[Unannotated] = []
    for sid, sent in enumerate(doc["sents"]):
        cov = covered[sid]
        if all(cov):
            continue
        taken = bytearray(len(sent))
        found: list[Unannotated] = []
        for size in range(min(longest, len(sent)), 0, -1):
            for i in range(len(sent) - size + 1):
                if any(cov[i:i + size]) or any(taken[i:i + size]):
                    continue
                hits = by_tokens.get(tuple(sent[i:i + size]))
                if not hits:
                    continue
                taken[i:i + size] = b"\x01" * size  # a name two entities share blocks the shorter ones too
                if len({e for e, _ in hits}) != 1 or (size == 1 and not _stands_alone(sent, i)):
                    continue
                (ei, nm), = sorted(hits)[:1]
                found.append(Unannotated(sid, i, i + size, ei, nm))
        out += sorted(found, key=lambda u: u.start)
    return out


def unannotated_spans(found: Sequence[Unannotated], coarse: Sequence[str],
                      plan: Mapping[int, Mapping[str, NewName]]) -> list[tuple[Unannotated, NewName]]:
    """The runs of ``found`` (:func:`occurrences`) whose entity the ``plan`` renames (not NUM or TIME), with
    the new name each takes."""
    out: list[tuple[Unannotated, NewName]] = []
    for u in found:
        nn = plan.get(u.entity, {}).get(u.name)
        if nn is not None and coarse[u.entity] not in RULE_TYPES:
            out.append((u, nn))
    return out


__all__ = ["Unannotated", "occurrences", "unannotated_spans"]
