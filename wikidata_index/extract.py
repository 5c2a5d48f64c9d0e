"""Entity JSON (the current Wikibase JSON format) -> rows for the index tables.

The extraction reads only what the tables need. It works on any mapping-like object, so the
same code runs over pysimdjson's lazy proxies (fast: nothing that is not read becomes a Python
object) and over plain dicts from orjson (the fallback when pysimdjson is missing).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from wikidata_index.names import fold
from wikidata_index.schema import (
    DEMONYM_FORM_QUALIFIER,
    DEMONYM_LANGUAGE,
    DEMONYM_PROPERTY,
    EXTRACTED_TABLES,
    GENDER_PROPERTY,
    TABLES,
)

try:  # pragma: no branch - pysimdjson is a core dependency, orjson the fallback
    import simdjson

    HAVE_SIMDJSON = True
    _LazyObject: type = simdjson.Object
    _LazyArray: type = simdjson.Array
except ImportError:  # pragma: no cover
    simdjson = None
    HAVE_SIMDJSON = False
    _LazyObject = _LazyArray = type(None)

try:  # the compiled fast path (wikidata_index/_fastextract.c); optional at install time
    from wikidata_index import _fastextract
except ImportError:  # pragma: no cover - depends on whether a C compiler was there
    _fastextract = None

P_INSTANCE_OF = "P31"
P_SUBCLASS_OF = "P279"
P_CONSTRAINT = "P2302"
P_CONSTRAINT_CLASS = "P2308"
P_CONSTRAINT_RELATION = "P2309"
DEMONYM_DATATYPE = "monolingualtext"
LABEL_LANGUAGE = "en"
# Wikidata's language-neutral label ("mul", since 2024) stands in when an item has no English one.
FALLBACK_LABEL_LANGUAGE = "mul"
KEPT_TYPES = ("item", "property")
MAX_ID_DIGITS = 15  # Wikidata is near Q135,000,000; kb-from-corpus's items are 13 digits; _fastextract.c agrees
_NUMBER = re.compile(f"[1-9][0-9]{{0,{MAX_ID_DIGITS - 1}}}")  # ASCII digits, no leading zero: "Q007" is no id
# Prefixes for entity-id values written the old way: {"entity-type": ..., "numeric-id": ...}, no "id".
_ID_PREFIX = {"item": "Q", "property": "P", "lexeme": "L"}


class Malformed(Exception):
    """One record that is not a valid entity; ``reason`` is a stats key, the message says why."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class Skipped(Exception):
    """A valid record that the index does not hold (lexeme, mediainfo, redirect, missing)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_STAGED_COLUMNS: dict[str, list[str]] = {
    t: [f.name for f in TABLES[t] if f.name != "popularity"] for t in EXTRACTED_TABLES
}


class Rows:
    """Row tuples per table, in schema column order (entities without popularity)."""

    def __init__(self) -> None:
        self.tables: dict[str, list[tuple]] = {t: [] for t in EXTRACTED_TABLES}

    def add(self, table: str, *values: Any) -> None:
        self.tables[table].append(values)

    def count(self, table: str) -> int:
        return len(self.tables[table])

    @property
    def columns(self) -> dict[str, dict[str, list[Any]]]:
        """Column lists per table (for writing Arrow tables, and for tests)."""
        out = {}
        for table, names in _STAGED_COLUMNS.items():
            rows = self.tables[table]
            cols = list(zip(*rows)) if rows else [() for _ in names]
            out[table] = {name: list(col) for name, col in zip(names, cols)}
        return out


def _kind(value: Any) -> str:
    """A JSON kind for messages (never str() of a pysimdjson proxy: it embeds a memory address)."""
    if hasattr(value, "get"):
        return "an object"
    if isinstance(value, (list, _LazyArray)):
        return "an array"
    # JSON's names for the rest: "a rank is a number", never Python's "a int"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string"}.get(type(value), "a value")


def _string(value: Any, eid: str, what: str) -> str | None:
    """``value`` if it is a string or null; anything else would reach a string column."""
    if value is None or isinstance(value, str):
        return value
    raise Malformed("bad_structure", f"{eid}: {what} is {_kind(value)}, not a string")


def entity_id_of(value: Any) -> str | None:
    """The id of a wikibase-entityid value, from "id" or, in older JSON, from entity-type + numeric-id."""
    vid = value.get("id")
    if vid is not None:
        return str(vid)
    etype = value.get("entity-type")
    num = value.get("numeric-id")
    prefix = _ID_PREFIX.get(str(etype)) if etype is not None else None
    if prefix is None or num is None:
        return None
    return f"{prefix}{int(num)}"


def _snak_item(snak: Any, stats: dict[str, int]) -> str | None:
    """The item id of a value snak, or None for novalue/somevalue and non-item values.

    novalue/somevalue are counted in stats (for the item-valued properties and qualifiers read;
    a demonym's own novalue/somevalue is not counted)."""
    snaktype = snak.get("snaktype")
    if snaktype != "value":
        if snaktype in ("novalue", "somevalue"):
            stats[f"snaks_{snaktype}"] = stats.get(f"snaks_{snaktype}", 0) + 1
            return None
        shown = repr(snaktype) if snaktype is None or isinstance(snaktype, str) else f"that is {_kind(snaktype)}"
        raise Malformed("bad_snak", f"snak has snaktype {shown}")
    dv = snak.get("datavalue")
    if dv is None or dv.get("type") != "wikibase-entityid":
        return None
    value = dv.get("value")
    if value is None:
        raise Malformed("bad_snak", "wikibase-entityid datavalue without a value")
    vid = entity_id_of(value)
    if vid is None or not vid.startswith("Q"):
        return None  # properties, lexemes, forms and senses are not items
    return vid


# Objects up to this many keys are searched by walking their keys (about 40 ns a key).
_SCAN_KEYS = 48


def _get(obj: Any, key: str) -> Any:
    """``obj.get(key)``, minus pysimdjson's costly miss.

    A pysimdjson lookup of an absent key throws a C++ exception (about 2 us, as long as parsing
    the whole 10 KB entity takes three times over), and absent keys are the rule here: most
    items have no English aliases, many no English description and no enwiki sitelink. Walking
    the keys of a small object finds the same first match without the exception.
    """
    if type(obj) is _LazyObject and len(obj) <= _SCAN_KEYS:
        for k in obj:
            if k == key:
                return obj[key]
        return None
    return obj.get(key)


def _text(obj: Any, lang: str) -> str | None:
    if obj is None or len(obj) == 0:
        return None
    entry = _get(obj, lang)
    if entry is None:
        return None
    value = entry.get("value")
    if value is None or isinstance(value, str):
        return value
    # str() of a simdjson proxy embeds a memory address; refuse rather than write unstable bytes
    raise Malformed("bad_term", f"{lang} term value is a {type(value).__name__}, not a string")


def _check_unusual(record: Any) -> None:
    if "redirect" in record:  # {"entity": "Q1", "redirect": "Q2"} and {"id":..., "redirect": ...}
        raise Skipped("redirect")
    if "missing" in record:  # wbgetentities answer for a deleted or unknown id
        raise Skipped("missing")
    if "entity" in record and ("label" in record or "links" in record or "claims" in record):
        raise Malformed(
            "legacy_format",
            "legacy 2014 Wikibase serialization (keys label/entity/links, claims as a list); "
            "use a current Wikidata JSON dump",
        )


def extract_entity(record: Any, languages: Sequence[str], out: Rows, stats: dict[str, int]) -> str:
    """Append one entity's rows to ``out``; return its type. Raises Malformed or Skipped.

    Lookups of absent keys scan the whole object in pysimdjson, so the rare shapes (redirects,
    missing ids, the legacy format) are only looked for when a usual key is absent.
    """
    if not hasattr(record, "get") or isinstance(record, (str, bytes)):
        raise Malformed("not_object", "record is not a JSON object")
    eid = record.get("id")
    etype = record.get("type")
    if eid is None or etype is None or "labels" not in record:
        _check_unusual(record)
    if eid is None or not isinstance(eid, str):
        raise Malformed("no_id", "entity has no string 'id'")
    if etype is None:
        raise Malformed("no_type", f"{eid}: entity has no 'type'")
    if etype not in KEPT_TYPES:
        if not isinstance(etype, str):  # str() of a pysimdjson proxy would embed a memory address
            raise Malformed("no_type", f"{eid}: 'type' is {_kind(etype)}, not a string")
        raise Skipped(etype)
    expected = "Q" if etype == "item" else "P"
    if not eid.startswith(expected) or not _NUMBER.fullmatch(eid, 1):
        raise Malformed("bad_id", f"{eid[:40]}: id does not fit type {etype!r}")

    labels = record.get("labels")
    aliases = record.get("aliases")
    descriptions = record.get("descriptions")
    en_label = _text(labels, LABEL_LANGUAGE)
    label = en_label or _text(labels, FALLBACK_LABEL_LANGUAGE)
    description = _text(descriptions, LABEL_LANGUAGE)
    sitelinks = record.get("sitelinks")
    n_sitelinks = 0 if sitelinks is None else len(sitelinks)
    enwiki = None
    if n_sitelinks:
        link = _get(sitelinks, "enwiki")
        if link is not None:
            enwiki = _string(link.get("title"), eid, "the enwiki title")
    names: list[tuple] = []
    for lang in languages:
        seen: set[str] = set()
        lab = en_label if lang == LABEL_LANGUAGE else _text(labels, lang)
        if lab:
            seen.add(lab)
            names.append((eid, lang, lab, True, fold(lab)))
        if aliases is not None and len(aliases):
            entries = _get(aliases, lang)
            if entries is not None:
                for entry in entries:
                    name = _string(entry.get("value"), eid, f"a {lang} alias")
                    if not name or name in seen:
                        continue
                    seen.add(name)
                    names.append((eid, lang, name, False, fold(name)))

    types: list[tuple] = []
    subclasses: list[tuple] = []
    edges: list[tuple] = []
    constraints: list[tuple] = []
    demonyms: list[tuple] = []
    genders: list[tuple] = []  # P21 values with rank, like types
    claims = record.get("claims")
    if claims is not None and not hasattr(claims, "get"):
        if len(claims) == 0:
            claims = None  # PHP serialises an empty object as []
        else:
            raise Malformed("bad_claims", f"{eid}: 'claims' is not an object")
    if claims is not None:
        lazy = type(claims) is _LazyObject
        constraint_owner = etype == "property"
        for pid in claims:
            statements = claims[pid]
            if lazy and type(statements) is _LazyArray and len(statements):
                # Every statement of a property has its datatype: one pointer lookup tells whether
                # the group holds items; most are external ids, strings, times, quantities.
                try:
                    datatype = statements.at_pointer("/0/mainsnak/datatype")
                except (KeyError, IndexError, TypeError, ValueError):
                    datatype = None  # an odd first statement: the general loop reports it
                if type(datatype) is str:
                    if datatype == "wikibase-item":
                        _item_statements(eid, pid, statements, constraint_owner, types, subclasses, edges,
                                         constraints, stats, genders)
                        continue
                    if datatype == DEMONYM_DATATYPE and pid == DEMONYM_PROPERTY:
                        _demonym_statements(eid, statements, languages, demonyms, stats)
                        continue
                    if pid != P_CONSTRAINT:
                        continue
            _statements(eid, etype, pid, statements, lazy, types, subclasses, edges, constraints, stats,
                        languages, demonyms, genders)
    datatype = _string(record.get("datatype"), eid, "'datatype'") if etype == "property" else None
    # Appended only now, so a record that fails half-way adds nothing.
    t = out.tables
    t["entities"].append((eid, etype, label, description, n_sitelinks, enwiki))
    if etype == "property":
        t["properties"].append((eid, datatype, label))
    t["names"] += names
    t["types"] += types
    t["subclasses"] += subclasses
    t["edges"] += edges
    t["property_constraints"] += constraints
    t["demonyms"] += demonyms
    t["genders"] += genders
    return str(etype)


def _item_statements(eid: str, pid: str, statements: Any, constraint_owner: bool, types: list[tuple],
                     subclasses: list[tuple], edges: list[tuple], constraints: list[tuple],
                     stats: dict[str, int], genders: list[tuple]) -> None:
    """Rows of one pysimdjson group whose first main snak is item-valued (the hot loop)."""
    is_constraint = constraint_owner and pid == P_CONSTRAINT
    target = (types if pid == P_INSTANCE_OF else subclasses if pid == P_SUBCLASS_OF
              else genders if pid == GENDER_PROPERTY else None)
    if len(statements) == 1 and not is_constraint:
        # The common single statement: two pointer lookups from the group, no statement proxy.
        try:
            rank = _string(statements.at_pointer("/0/rank"), eid, "a rank") or "normal"
            obj = statements.at_pointer("/0/mainsnak/datavalue/value/id")
        except KeyError:
            pass  # no rank, novalue/somevalue, an old value without "id": the loop below
        else:
            if type(obj) is str and obj[:1] == "Q":
                if target is not None:
                    target.append((eid, obj, rank))
                if rank != "deprecated":
                    edges.append((eid, pid, obj))
                return
    for st in statements:
        rank = _string(st.get("rank"), eid, "a rank") or "normal"
        try:  # one call reaches the value id
            obj = st.at_pointer("/mainsnak/datavalue/value/id")
        except KeyError:  # novalue/somevalue, or an old value without "id"
            obj = _snak_item(st["mainsnak"], stats)
        if obj is not None and obj[0] != "Q":
            obj = None
        if is_constraint and rank != "deprecated":
            _constraint_rows(eid, st, obj, constraints, stats)
        if obj is None:
            continue
        if target is not None:
            target.append((eid, obj, rank))
        if rank != "deprecated":
            edges.append((eid, pid, obj))


def _statements(eid: str, etype: str, pid: str, statements: Any, lazy: bool, types: list[tuple],
                subclasses: list[tuple], edges: list[tuple], constraints: list[tuple],
                stats: dict[str, int], languages: Sequence[str], demonyms: list[tuple],
                genders: list[tuple]) -> None:
    """Rows of one claim group, any shape (plain dicts from orjson, or unusual groups)."""
    first = True
    fast = False
    for st in statements:
        if first:
            first = False
            # Every statement of a property has its datatype: skip non-item properties whole.
            datatype = st["mainsnak"].get("datatype")
            if datatype == DEMONYM_DATATYPE and pid == DEMONYM_PROPERTY:
                _demonym_statements(eid, statements, languages, demonyms, stats)
                return
            if pid != P_CONSTRAINT and datatype is not None and datatype != "wikibase-item":
                break
            fast = lazy and datatype == "wikibase-item"
        rank = _string(st.get("rank"), eid, "a rank") or "normal"
        if fast:
            try:
                obj = st.at_pointer("/mainsnak/datavalue/value/id")
            except KeyError:
                obj = _snak_item(st["mainsnak"], stats)
        else:
            snak = st["mainsnak"]
            obj = None
            if snak.get("snaktype") == "value":
                dv = snak.get("datavalue")
                if dv is not None and dv.get("type") == "wikibase-entityid":
                    obj = dv["value"].get("id")
            if obj is None:
                obj = _snak_item(snak, stats)
        if obj is not None and obj[0] != "Q":
            obj = None
        if pid == P_CONSTRAINT and etype == "property" and rank != "deprecated":
            _constraint_rows(eid, st, obj, constraints, stats)
        if obj is None:
            continue
        if pid == P_INSTANCE_OF:
            types.append((eid, obj, rank))
        elif pid == P_SUBCLASS_OF:
            subclasses.append((eid, obj, rank))
        elif pid == GENDER_PROPERTY:
            genders.append((eid, obj, rank))
        if rank != "deprecated":
            edges.append((eid, pid, obj))


def _demonym_statements(eid: str, statements: Any, languages: Sequence[str], out: list[tuple],
                        stats: dict[str, int]) -> None:
    """Rows of a P1549 (demonym) group whose first main snak is monolingual text.

    A statement gives a row when it is not deprecated and its main snak is a monolingual-text value
    with a non-empty text in English or a requested language. Anything else in a statement (a
    novalue, another value type, a value without text) gives no row rather than a malformed
    record: the demonym is extra, and the record's other rows stand. A rank that is not a string
    is malformed, as it is for every statement the index reads."""
    for st in statements:
        rank = _string(st.get("rank"), eid, "a rank") or "normal"
        if rank == "deprecated":
            continue
        snak = st["mainsnak"]
        if snak.get("snaktype") != "value":
            continue
        dv = snak.get("datavalue")
        if dv is None or dv.get("type") != DEMONYM_DATATYPE:
            continue
        value = dv.get("value")
        if not hasattr(value, "get"):
            continue
        text = value.get("text")
        lang = value.get("language")
        if type(text) is not str or not text or type(lang) is not str:
            continue
        if lang != DEMONYM_LANGUAGE and lang not in languages:
            continue
        form = None
        quals = st.get("qualifiers")
        if quals is not None and hasattr(quals, "get"):
            for q in quals.get(DEMONYM_FORM_QUALIFIER) or ():
                form = _snak_item(q, stats)
                if form is not None:
                    break  # as for P2309: later snaks are not read
        out.append((eid, lang, text, rank, form, fold(text)))


def _constraint_rows(pid: str, st: Any, ctype: str | None, out: list[tuple], stats: dict[str, int]) -> None:
    if ctype is None:
        return
    quals = st.get("qualifiers")
    classes: list[str] = []
    relation = None
    if quals is not None and hasattr(quals, "get"):
        for snak in quals.get(P_CONSTRAINT_CLASS) or ():
            cls = _snak_item(snak, stats)
            if cls is not None:
                classes.append(cls)
        for snak in quals.get(P_CONSTRAINT_RELATION) or ():
            rel = _snak_item(snak, stats)
            if rel is not None:
                relation = rel
                break
    for cls in classes or [None]:
        out.append((pid, ctype, cls, relation))


class EntityParser:
    """Parses one record (bytes) at a time; pysimdjson when present, else orjson."""

    def __init__(self, use_simdjson: bool | None = None) -> None:
        self.use_simdjson = HAVE_SIMDJSON if use_simdjson is None else use_simdjson and HAVE_SIMDJSON
        self._parser = simdjson.Parser() if self.use_simdjson else None

    def parse(self, data: bytes) -> Any:
        """The parsed record; ValueError when it is not valid JSON."""
        if self._parser is None:
            return orjson.loads(data)
        try:
            return self._parser.parse(data)
        except RuntimeError:
            # A proxy from the previous document is still alive (e.g. held by a traceback).
            self._parser = simdjson.Parser()
        try:
            return self._parser.parse(data)
        except RuntimeError as exc:
            # simdjson raises RuntimeError for some invalid input too (BIGINT_ERROR: an integer
            # past 64 bits); it is a malformed record, not a reason to stop the chunk.
            raise ValueError(str(exc)) from None


def iter_envelope(record: Any) -> Iterable[Any] | None:
    """Entities inside a {"entities": {...}} (Special:EntityData, wbgetentities) record, or the
    elements of a JSON array of entities (a small dump written on one line: its first element has an
    "id" or a "type"), else None."""
    if _is_array(record):
        items = list(record)
        first = items[0] if items else None
        return items if hasattr(first, "get") and ("id" in first or "type" in first) else None
    if hasattr(record, "get") and "id" not in record and "entities" in record:
        ents = record["entities"]
        if hasattr(ents, "values"):
            return list(ents.values())
        return list(ents)
    return None


def _is_array(value: Any) -> bool:
    """Whether a parsed value is a JSON array (a list from orjson, an Array proxy from pysimdjson)."""
    return isinstance(value, list) or (HAVE_SIMDJSON and isinstance(value, simdjson.Array))
