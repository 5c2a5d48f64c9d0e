"""Small builders for entities in the Wikidata JSON format, and a deterministic dump writer.

The output follows the official JSON dumps (``latest-all.json``): an array with one entity per
line, lines ending in a comma except the last. Statements carry ids of the form
``Q42$XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX`` (derived from stable keys here, so reruns give the same
bytes) and snaks carry ``datatype`` as real dumps do.
"""

from __future__ import annotations

import gzip
import io
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import orjson

from envbench.core.seeding import stable_hash_hex
from etl.io import atomic_path

Entity = dict[str, Any]
Statement = dict[str, Any]

# Gregorian calendar, as on nearly every Wikidata time value.
GREGORIAN = "http://www.wikidata.org/entity/Q1985727"
PRECISION = {"decade": 8, "year": 9, "month": 10, "day": 11}


def numeric(entity_id: str) -> int:
    return int(entity_id[1:])


def entity_value(entity_id: str) -> dict[str, Any]:
    """A ``wikibase-entityid`` datavalue for an item (Q...) or property (P...)."""
    kind = "property" if entity_id.startswith("P") else "item"
    return {"value": {"entity-type": kind, "numeric-id": numeric(entity_id), "id": entity_id}, "type": "wikibase-entityid"}


def time_value(year: int, month: int = 0, day: int = 0, precision: int = 11) -> dict[str, Any]:
    """A ``time`` datavalue; unknown month/day are 00 as Wikidata writes them for coarse precision."""
    sign = "+" if year >= 0 else "-"
    return {
        "value": {
            "time": f"{sign}{abs(year):04d}-{month:02d}-{day:02d}T00:00:00Z",
            "timezone": 0,
            "before": 0,
            "after": 0,
            "precision": precision,
            "calendarmodel": GREGORIAN,
        },
        "type": "time",
    }


def quantity_value(amount: str, unit: str = "1") -> dict[str, Any]:
    """A ``quantity`` datavalue; ``amount`` is a signed decimal string such as "+4.7"."""
    if not amount.startswith(("+", "-")):
        amount = "+" + amount
    return {"value": {"amount": amount, "unit": unit}, "type": "quantity"}


def string_value(text: str) -> dict[str, Any]:
    return {"value": text, "type": "string"}


def snak(prop: str, datavalue: dict[str, Any] | None, datatype: str, snaktype: str = "value") -> dict[str, Any]:
    """A snak; ``datavalue`` is None for ``novalue`` and ``somevalue``."""
    out: dict[str, Any] = {"snaktype": snaktype, "property": prop}
    if snaktype == "value":
        if datavalue is None:
            raise ValueError(f"a value snak for {prop} needs a datavalue")
        out["datavalue"] = datavalue
    out["datatype"] = datatype
    return out


def statement_id(subject: str, *keys: object) -> str:
    """A GUID-shaped statement id, stable for the same subject and keys."""
    h = stable_hash_hex("statement", subject, *keys).upper()
    return f"{subject}${h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def statement(
    subject: str,
    prop: str,
    datavalue: dict[str, Any] | None,
    datatype: str,
    *,
    rank: str = "normal",
    snaktype: str = "value",
    qualifiers: list[dict[str, Any]] | None = None,
    key: object = 0,
) -> Statement:
    """A full statement with a stable id; ``key`` distinguishes statements of the same property."""
    st: Statement = {"mainsnak": snak(prop, datavalue, datatype, snaktype), "type": "statement"}
    if qualifiers:
        quals: dict[str, list[dict[str, Any]]] = {}
        for q in qualifiers:
            quals.setdefault(q["property"], []).append(q)
        st["qualifiers"] = quals
        st["qualifiers-order"] = list(quals)
    st["id"] = statement_id(subject, prop, key)
    st["rank"] = rank
    return st


def item_statement(subject: str, prop: str, target: str, *, rank: str = "normal", key: object = None) -> Statement:
    """An item-valued statement ``subject prop target``."""
    return statement(subject, prop, entity_value(target), "wikibase-item", rank=rank, key=key if key is not None else target)


def demonym_statement(subject: str, text: str, language: str = "en") -> Statement:
    """A P1549 (demonym) statement as in the official dumps: a monolingual-text value."""
    value = {"value": {"text": text, "language": language}, "type": "monolingualtext"}
    return statement(subject, "P1549", value, "monolingualtext", key=(language, text))


def type_constraint(prop: str, constraint_type: str, classes: Iterable[str], relation: str, key: object) -> Statement:
    """A P2302 statement such as a subject-type (Q21503250) or value-type (Q21510865) constraint.

    Classes go in P2308 qualifiers and the relation (instance of / subclass of) in P2309, as on
    the property pages of Wikidata.
    """
    quals = [snak("P2308", entity_value(c), "wikibase-item") for c in classes]
    quals.append(snak("P2309", entity_value(relation), "wikibase-item"))
    return statement(prop, "P2302", entity_value(constraint_type), "wikibase-item", qualifiers=quals, key=key)


def lang_map(values: dict[str, str]) -> dict[str, dict[str, str]]:
    return {lang: {"language": lang, "value": v} for lang, v in values.items()}


def item(
    qid: str,
    *,
    labels: dict[str, str],
    descriptions: dict[str, str] | None = None,
    aliases: dict[str, list[str]] | None = None,
    claims: dict[str, list[Statement]] | None = None,
    sitelinks: dict[str, str] | None = None,
) -> Entity:
    """An item entity; ``sitelinks`` maps site ids (e.g. "enwiki") to page titles."""
    return {
        "type": "item",
        "id": qid,
        "labels": lang_map(labels),
        "descriptions": lang_map(descriptions or {}),
        "aliases": {lang: [{"language": lang, "value": a} for a in names] for lang, names in (aliases or {}).items() if names},
        "claims": claims or {},
        "sitelinks": {site: {"site": site, "title": title, "badges": []} for site, title in (sitelinks or {}).items()},
    }


def property_entity(
    pid: str,
    *,
    label: str,
    datatype: str,
    description: str = "",
    aliases: list[str] | None = None,
    claims: dict[str, list[Statement]] | None = None,
) -> Entity:
    """A property entity (properties carry ``datatype`` and no sitelinks)."""
    return {
        "type": "property",
        "datatype": datatype,
        "id": pid,
        "labels": lang_map({"en": label}),
        "descriptions": lang_map({"en": description} if description else {}),
        "aliases": {"en": [{"language": "en", "value": a} for a in aliases]} if aliases else {},
        "claims": claims or {},
    }


class DumpWriter:
    """Write entities as an official-format JSON dump (``[``, one entity per line, ``]``).

    ``.gz`` output has mtime 0 and a fixed name in its header, so equal content gives equal bytes;
    the file appears atomically when the writer closes without error.
    """

    def __init__(self, path: str | os.PathLike[str], *, compresslevel: int = 6) -> None:
        self.path = Path(path)
        self.count = 0
        self._atomic = atomic_path(self.path)  # renamed into place by close(ok=True), removed otherwise
        self._tmp = self._atomic.__enter__()
        self._raw: IO[bytes] = open(self._tmp, "wb")  # noqa: SIM115 - closed in close()
        self._fh: IO[bytes]
        if self.path.name.endswith(".gz"):
            inner = self.path.name[: -len(".gz")]
            self._gz = gzip.GzipFile(filename=inner, mode="wb", fileobj=self._raw, mtime=0, compresslevel=compresslevel)
            self._fh = io.BufferedWriter(self._gz, buffer_size=1 << 20)  # type: ignore[arg-type]
        else:
            self._gz = None
            self._fh = self._raw
        self._fh.write(b"[\n")

    def write(self, entity: Entity) -> None:
        if self.count:
            self._fh.write(b",\n")
        self._fh.write(orjson.dumps(entity))
        self.count += 1

    def write_raw(self, lines: bytes, count: int) -> None:
        """Write ``count`` already serialised entities, joined by ",\\n" (no trailing separator)."""
        if not count:
            return
        if self.count:
            self._fh.write(b",\n")
        self._fh.write(lines)
        self.count += count

    def write_all(self, entities: Iterable[Entity]) -> None:
        for e in entities:
            self.write(e)

    def close(self, ok: bool = True) -> None:
        if ok:
            self._fh.write(b"\n]\n")
        self._fh.flush()
        if self._gz is not None:
            self._gz.close()
        self._raw.close()
        if ok:
            self._atomic.__exit__(None, None, None)
        else:
            failed = RuntimeError(f"{self.path}: dump not completed")
            self._atomic.__exit__(RuntimeError, failed, None)

    def __enter__(self) -> DumpWriter:
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.close(ok=et is None)


def iter_dump(path: str | os.PathLike[str]) -> Iterator[Entity]:
    """Read back a dump written in the official line format (for tests and small files)."""
    from etl.io import open_binary

    with open_binary(path) as fh:
        for line in fh:
            line = line.strip()
            if line in (b"[", b"]", b""):
                continue
            yield orjson.loads(line.rstrip(b","))


def schema_entities(
    class_qids: Iterable[str] | None = None,
    constraints: Mapping[tuple[str, str], Sequence[str]] | None = None,
) -> Iterator[Entity]:
    """Class items (with P279) and property entities (with P2302 type constraints) from the type table.

    ``class_qids`` limits the classes written (all of the table's by default). The root class
    "entity" gets a ``novalue`` P279, as on Wikidata. ``constraints`` maps (relation, "subject" |
    "value") to classes that replace the table's for that role (e.g. from a real index).
    """
    from envbench.core.relations import RELATIONS
    from envbench.worlds.type_table import load_type_table
    from wikidata_index.schema import RELATION_INSTANCE_OF, SUBJECT_TYPE_CONSTRAINT, VALUE_TYPE_CONSTRAINT

    table = load_type_table()
    wanted = sorted(set(class_qids) if class_qids is not None else set(table.classes), key=numeric)
    for qid in wanted:
        info = table.classes[qid]
        if info.parent:
            p279 = [item_statement(qid, "P279", info.parent)]
        else:
            p279 = [statement(qid, "P279", None, "wikibase-item", snaktype="novalue")]
        yield item(
            qid,
            labels={"en": info.label},
            descriptions={"en": f"class ({info.coarse})"},
            claims={"P279": p279},
            sitelinks={"enwiki": info.label[:1].upper() + info.label[1:]},
        )
    extra = {"P2302": "property constraint", "P2308": "class", "P2309": "relation"}
    for pid in sorted(set(RELATIONS) | set(extra), key=numeric):
        claims: dict[str, list[Statement]] = {}
        cons = []
        subj = (constraints or {}).get((pid, "subject")) or table.subject.get(pid)
        val = (constraints or {}).get((pid, "value")) or table.value.get(pid)
        if subj:
            cons.append(type_constraint(pid, SUBJECT_TYPE_CONSTRAINT, subj, RELATION_INSTANCE_OF, "subject"))
        if val:
            cons.append(type_constraint(pid, VALUE_TYPE_CONSTRAINT, val, RELATION_INSTANCE_OF, "value"))
        if cons:
            claims["P2302"] = cons
        yield property_entity(
            pid,
            label=RELATIONS.get(pid) or extra[pid],
            datatype=table.datatype(pid) if pid in RELATIONS else "wikibase-item",
            claims=claims,
        )
