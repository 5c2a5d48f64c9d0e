"""The compiled extractor (wikidata_index/_fastextract.c) against the Python extraction.

The contract (wikidata_index.ingest.parse_chunk): for any bytes, extractor="c" and extractor="python"
give the same rows per table (as multisets), the same stats, the same error samples and the same
line count, or both raise the same exception type. The C path takes the usual records itself and
hands every other line to the Python path; these tests also check that it really takes the usual
ones (real samples, the sample world), so that they cannot pass by everything falling back.
"""

from __future__ import annotations

import copy
import gzip
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import fast_extractor_or_skip, shared_path
from wikidata_index import extract
from wikidata_index.ingest import STAGE_SCHEMAS, parse_chunk
from wikidata_index.names import fold

try:
    FAST = fast_extractor_or_skip()
except pytest.skip.Exception as exc:
    raise pytest.skip.Exception(str(exc), allow_module_level=True) from None

OFFSET = 1000  # a chunk's byte offset in the stream: error offsets must add it on both paths
LANGS = [("en",), ("en", "de", "mul")]
SAMPLES = "wikidata-samples"
DROP = object()  # a key to leave out


# ----------------------------------------------------------------------------- helpers


class ProxyText(AssertionError):
    """The Python path wrote str() of a pysimdjson proxy (a memory address): output differs run to run."""


def _outcome(data: bytes, languages: Sequence[str], extractor: str) -> Any:
    try:
        return parse_chunk(data, OFFSET, list(languages), extractor)
    except Exception as exc:  # noqa: BLE001 - compared by type below
        return exc


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    return sorted(table.to_pylist(), key=repr)


Result = tuple[dict[str, pa.Table], dict[str, int], list[dict[str, Any]], int]


def both(data: bytes, languages: Sequence[str] = ("en",)) -> Result | None:
    """parse_chunk with extractor "c" and "python": equal results, or the same exception type.

    Returns the C path's result (None when both raised)."""
    c = _outcome(data, languages, "c")
    py = _outcome(data, languages, "python")
    if isinstance(c, Exception) or isinstance(py, Exception):
        assert type(c) is type(py), f"c gave {c!r}, python gave {py!r}"
        return None
    c_tables, c_stats, c_errors, c_lines = c
    py_tables, py_stats, py_errors, py_lines = py
    assert set(c_tables) == set(py_tables) == set(STAGE_SCHEMAS)
    c_rows = {t: _rows(c_tables[t]) for t in STAGE_SCHEMAS}
    py_rows = {t: _rows(py_tables[t]) for t in STAGE_SCHEMAS}
    if "object at 0x" in repr((c_rows, py_rows, c_stats, py_stats, c_errors, py_errors)):
        raise ProxyText("the output holds str() of a pysimdjson proxy (a memory address)")
    for t in STAGE_SCHEMAS:
        c_tables[t].validate(full=True)
        py_tables[t].validate(full=True)
        assert c_tables[t].schema == py_tables[t].schema == STAGE_SCHEMAS[t]
        assert c_rows[t] == py_rows[t], t
    assert c_stats == py_stats
    assert c_errors == py_errors
    assert c_lines == py_lines
    return c


def fallback_lines(data: bytes, languages: Sequence[str] = ("en",)) -> list[int]:
    """Line numbers (from 1) that the C extractor handed back to the Python path."""
    _cols, _stats, spans, _n = FAST.extract_chunk(data, tuple(languages), fold)
    return [line for line, _start, _stop in spans]


def dump_bytes(records: Sequence[dict | bytes]) -> bytes:
    """Dump lines as Wikidata writes them: "[", one record a line ending in ",", the last without, "]"."""
    lines = [r if isinstance(r, bytes) else orjson.dumps(r) for r in records]
    return b"[\n" + b",\n".join(lines) + b"\n]\n"


def _entities_of(doc: Any) -> list[Any]:
    return list(doc["entities"].values()) if isinstance(doc, dict) and "entities" in doc else [doc]


def _numbers(obj: Any) -> list[float | int]:
    if isinstance(obj, dict):
        return [n for v in obj.values() for n in _numbers(v)]
    if isinstance(obj, list):
        return [n for v in obj for n in _numbers(v)]
    return [obj] if isinstance(obj, (int, float)) and not isinstance(obj, bool) else []


def _long_number(obj: Any) -> bool:
    """A number the C path leaves to Python: an integer of more than 18 digits, or a float whose
    integer digits plus exponent pass 300 (or whose exponent has more than 4 digits)."""
    for n in _numbers(obj):
        mantissa, _, exponent = orjson.dumps(n).decode().lower().lstrip("-").partition("e")
        whole = mantissa.split(".")[0]
        int_digits = 0 if whole == "0" else len(whole)
        if isinstance(n, int):
            if int_digits > 18:
                return True
        elif len(exponent.lstrip("+-")) > 4 or int_digits + int(exponent or 0) > 300:
            return True
    return False


def why_python(ent: Any) -> str | None:
    """Why the C path hands this (dump-serialised) record to Python, by the rules of _fastextract.c;
    None for a usual item or property, which the C path must take itself."""
    if not isinstance(ent, dict) or ent.get("type") not in ("item", "property"):
        return "not an item or property"
    if "labels" not in ent:
        return "no labels"
    for group in (ent.get("claims") or {}).values():
        if not group:
            continue
        if "datatype" not in group[0]["mainsnak"]:
            return "first main snak without datatype"
        if group[0]["mainsnak"]["datatype"] == "wikibase-item":
            for statement in group:
                value = (statement["mainsnak"].get("datavalue") or {}).get("value")
                if isinstance(value, dict) and "id" not in value:
                    return "entity-id value without 'id' (entity-type + numeric-id only)"
    if _long_number(ent):
        return "a number that a double might not hold"
    return None


def modernise(ent: Any) -> Any:
    """A record in today's dump shape: ids on entity-id values, datatypes on main snaks, short floats."""
    ent = copy.deepcopy(ent)

    def walk(obj: Any) -> Any:
        if isinstance(obj, dict):
            if obj.get("type") == "wikibase-entityid" and isinstance(obj.get("value"), dict):
                v = obj["value"]
                if "id" not in v and v.get("entity-type") in extract._ID_PREFIX:
                    v["id"] = f"{extract._ID_PREFIX[v['entity-type']]}{v['numeric-id']}"
            if obj.get("snaktype") in ("value", "novalue", "somevalue") and "property" in obj:
                dv_type = (obj.get("datavalue") or {}).get("type")
                item_valued = dv_type == "wikibase-entityid"
                obj.setdefault("datatype", "wikibase-item" if item_valued else dv_type or "string")
            return {k: walk(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [walk(v) for v in obj]
        if isinstance(obj, float):
            return float(f"{obj:.12g}")
        return obj

    return walk(ent)


# ----------------------------------------------------------------------------- layout


def test_layout_matches_the_stage_schemas() -> None:
    kinds = {pa.string(): "string", pa.int32(): "int32", pa.bool_(): "bool"}
    want = {t: [(f.name, kinds[f.type]) for f in s] for t, s in STAGE_SCHEMAS.items()}
    got = {t: [tuple(c) for c in cols] for t, cols in extract._fastextract.layout().items()}
    assert got == want


# ----------------------------------------------------------------------------- real data


def _sample_files() -> list[Path]:
    root = shared_path(SAMPLES)
    return sorted(p for p in root.rglob("*.json"))


def _sample_ids() -> list[str]:
    from tests.conftest import SHARED

    root = SHARED / SAMPLES
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.json")) if root.is_dir() else ["missing"]


@pytest.mark.parametrize("languages", LANGS, ids=["+".join(x) for x in LANGS])
@pytest.mark.parametrize("name", _sample_ids())
def test_real_samples_agree_and_usual_records_stay_in_c(name: str, languages: tuple[str, ...]) -> None:
    path = shared_path(SAMPLES, name)
    raw = path.read_bytes()
    if name.startswith("wikidata-toolkit/mock-dump"):
        data = raw  # a dump already: "[", one entity a line, "]"
        lines = data.split(b"\n")
        records = {i + 1: orjson.loads(line.rstrip(b","))
                   for i, line in enumerate(lines) if line.startswith(b"{")}
    else:
        doc = orjson.loads(raw)
        ents = _entities_of(doc)
        data = dump_bytes(ents)
        records = {i + 2: e for i, e in enumerate(ents)}
        # the whole file as it is (one document over many lines, or an envelope on one line) and the
        # record once more on one line with its envelope: lines for the Python path
        both(raw, languages)
        both(dump_bytes([doc]), languages)
    res = both(data, languages)
    assert res is not None
    expected = {line for line, ent in records.items() if why_python(ent)}
    assert set(fallback_lines(data, languages)) == expected
    _tables, stats, _errors, n_lines = res
    kept = sum(isinstance(e, dict) and e.get("type") in ("item", "property") for e in records.values())
    assert stats.get("kept_item", 0) + stats.get("kept_property", 0) == kept
    assert n_lines == data.count(b"\n") + (not data.endswith(b"\n"))

    # the same records in today's shape: every item and property is taken by the C path
    modern = [modernise(e) for e in records.values()]
    data = dump_bytes(modern)
    res = both(data, languages)
    assert res is not None
    expected = {i + 2 for i, e in enumerate(modern) if why_python(e)}
    assert {why_python(e) for e in modern} <= {None, "not an item or property", "no labels"}
    assert set(fallback_lines(data, languages)) == expected


def test_current_format_samples_are_taken_by_c() -> None:
    """Guard against a vacuous real-data test: the current-format samples are taken by the C path."""
    taken = set()
    for path in _sample_files():
        if "legacy" in str(path) or "mock-dump" in path.name:
            continue
        ents = [e for e in _entities_of(orjson.loads(path.read_bytes())) if why_python(e) is None]
        if not ents:
            continue
        data = dump_bytes(ents)
        assert fallback_lines(data, LANGS[1]) == []
        taken |= {e["id"] for e in ents}
    assert {"Q42", "Q1299", "Q2112", "P17", "Q34987", "P3467"} <= taken


def _json_demonyms(ent: dict, languages: Sequence[str]) -> list[tuple]:
    """The demonym rows of a real entity, straight from its JSON (every P1549 statement there is a
    plain monolingual-text value)."""
    out = []
    for statement in ent.get("claims", {}).get("P1549", []):
        value = statement["mainsnak"]["datavalue"]["value"]
        if statement["rank"] == "deprecated" or value["language"] not in ("en", *languages):
            continue
        forms = [q["datavalue"]["value"]["id"] for q in statement.get("qualifiers", {}).get("P518", [])]
        out.append((ent["id"], value["language"], value["text"], statement["rank"], (forms or [None])[0]))
    return sorted(out)


@pytest.mark.parametrize("languages", [("en",), ("de",), ("fr", "ru", "pt", "it", "sr")], ids=str)
def test_real_demonyms_of_portugal_are_taken_by_c(languages: tuple[str, ...]) -> None:
    """Q45 (Portugal, 2021) states 30 demonyms in 18 languages, some with P518 forms."""
    (ent,) = _entities_of(orjson.loads(shared_path(SAMPLES, "syvb-wikidata", "Q45.json").read_bytes()))
    data = dump_bytes([ent])
    assert fallback_lines(data, languages) == []
    res = both(data, languages)
    assert res is not None
    got = sorted((r["id"], r["lang"], r["text"], r["rank"], r["form"]) for r in res[0]["demonyms"].to_pylist())
    assert got == _json_demonyms(ent, languages)
    assert ("Q45", "en", "Portuguese", "normal", None) in got
    if "fr" in languages:
        assert ("Q45", "fr", "Portugaise", "normal", "Q47088293") in got and len(got) == 11


@pytest.fixture(scope="module")
def sample_dump(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    from envbench.worlds.sample import make_sample

    res = make_sample(tmp_path_factory.mktemp("sample"))
    return gzip.decompress(res.dump.read_bytes())


@pytest.fixture(scope="module")
def lean_dump(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    from envbench.worlds.sample import make_sample

    res = make_sample(tmp_path_factory.mktemp("lean"), entities=2000, lean=True)
    return gzip.decompress(res.dump.read_bytes())


@pytest.mark.parametrize("languages", LANGS, ids=["+".join(x) for x in LANGS])
@pytest.mark.parametrize("which", ["sample_dump", "lean_dump"])
def test_sample_world_dump_is_taken_by_c(which: str, languages: tuple[str, ...],
                                         request: pytest.FixtureRequest) -> None:
    data = request.getfixturevalue(which)
    assert data.startswith(b"[\n")
    res = both(data, languages)
    assert res is not None
    assert fallback_lines(data, languages) == []
    tables, stats, errors, n_lines = res
    assert errors == [] and stats["malformed"] == 0 and n_lines == data.count(b"\n")
    n_entities = sum(line.startswith(b"{") for line in data.split(b"\n"))
    assert stats["records"] == stats["kept_item"] + stats["kept_property"] == n_entities
    assert tables["entities"].num_rows == n_entities and tables["edges"].num_rows > 0
    # cut into chunks at arbitrary line boundaries, the totals are the same
    lines = data.split(b"\n")
    cut = len(lines) // 3
    parts = [b"\n".join(lines[:cut]) + b"\n", b"\n".join(lines[cut:])]
    assert sum(both(p, languages)[1]["records"] for p in parts) == stats["records"]


# ----------------------------------------------------------------------------- hand-made records


def snak(pid: str, value: Any = "Q5", *, datatype: str | None = "wikibase-item",
         snaktype: str = "value") -> dict:
    s: dict[str, Any] = {"snaktype": snaktype, "property": pid}
    if snaktype == "value":
        if datatype in ("wikibase-item", None):
            v = value if isinstance(value, dict) else {"entity-type": "item", "numeric-id": 5, "id": value}
            s["datavalue"] = {"value": v, "type": "wikibase-entityid"}
        else:
            s["datavalue"] = {"value": value, "type": "string"}
    if datatype is not None:
        s["datatype"] = datatype
    return s


def stmt(pid: str, value: Any = "Q5", *, rank: Any = "normal", qualifiers: Any = None, **kw: Any) -> dict:
    out: dict[str, Any] = {"mainsnak": snak(pid, value, **kw), "type": "statement", "id": f"Q1${pid}"}
    if rank is not DROP:
        out["rank"] = rank
    if qualifiers is not None:
        out["qualifiers"] = qualifiers
        out["qualifiers-order"] = list(qualifiers) if isinstance(qualifiers, dict) else []
    out["references"] = [{"hash": "abc", "snaks": {"P143": [snak("P143", "Q328")]}, "snaks-order": ["P143"]}]
    return out


def term(lang: str, value: Any) -> dict:
    return {"language": lang, "value": value}


def item(qid: str = "Q1", **over: Any) -> dict:
    ent: dict[str, Any] = {
        "type": "item",
        "id": qid,
        "labels": {"en": term("en", "Alpha"), "de": term("de", "Alpha DE"), "fr": term("fr", "Alpha FR")},
        "descriptions": {"en": term("en", "first letter"), "de": term("de", "erster")},
        "aliases": {"en": [term("en", "A"), term("en", "Alef")], "de": [term("de", "Alfa")]},
        "claims": {
            "P31": [stmt("P31", "Q5"), stmt("P31", "Q6", rank="preferred")],
            "P279": [stmt("P279", "Q7", rank="deprecated")],
            "P17": [stmt("P17", "Q183")],
            "P1476": [stmt("P1476", "a title", datatype="monolingualtext")],
        },
        "sitelinks": {"enwiki": {"site": "enwiki", "title": "Alpha", "badges": []},
                      "dewiki": {"site": "dewiki", "title": "Alpha", "badges": []}},
        "lastrevid": 123,
    }
    return _override(ent, over)


def _override(ent: dict, over: dict[str, Any]) -> dict:
    """ent with the keys of ``over`` set, or removed where the value is DROP."""
    for k, v in over.items():
        if v is DROP:
            ent.pop(k, None)
        else:
            ent[k] = v
    return ent


def constraint(ctype: str = "Q21503250", classes: Sequence[Any] = ("Q5",),
               relation: Sequence[Any] = ("Q21503252",), rank: str = "normal",
               qualifiers: Any = None) -> dict:
    quals = qualifiers if qualifiers is not None else {
        "P2308": [c if isinstance(c, dict) else snak("P2308", c) for c in classes],
        "P2309": [r if isinstance(r, dict) else snak("P2309", r) for r in relation],
    }
    return stmt("P2302", ctype, rank=rank, qualifiers=quals)


def prop(pid: str = "P1", **over: Any) -> dict:
    ent = item(pid, type="property", datatype="wikibase-item",
               claims={"P31": [stmt("P31", "Q18616576")], "P2302": [constraint()],
                       "P1628": [stmt("P1628", "http://x", datatype="url")]})
    ent.pop("sitelinks")
    return _override(ent, over)


def IC(claims: Any, **over: Any) -> bytes:  # noqa: N802
    """A dump of one item with these claims."""
    return D(item(claims=claims, **over))


def PC(claims: Any, **over: Any) -> bytes:  # noqa: N802
    """A dump of one property with these claims."""
    return D(prop(claims=claims, **over))


def with_mainsnak(mainsnak: Any, pid: str = "P31") -> dict:
    """A statement with this main snak as it is."""
    return dict(stmt(pid), mainsnak=mainsnak)


def J(obj: Any) -> bytes:  # noqa: N802 - a short name for a JSON line
    return orjson.dumps(obj)


def D(*records: Any) -> bytes:  # noqa: N802
    """A dump of these records (dicts or raw JSON bytes)."""
    return dump_bytes([r if isinstance(r, (dict, bytes)) else J(r) for r in records])


def raw(*members: str, head: str = '"type":"item","id":"Q1"') -> bytes:
    """One record line from JSON text members."""
    return ("{" + ",".join([head, *members]) + "}").encode()


NO = "novalue"
SOME = "somevalue"
MUL = ("en", "de", "mul")

# (id, data, languages, taken): taken True = the C path takes every record line itself; False = it hands
# (at least) one to Python; None = not checked.
CASES: list[Any] = []


def case(case_id: str, data: bytes, languages: Sequence[str] = ("en",), taken: bool | None = None,
         xfail: str | None = None) -> None:
    marks = [pytest.mark.xfail(strict=True, reason=xfail)] if xfail else []
    CASES.append(pytest.param(data, tuple(languages), taken, id=case_id, marks=marks))


# --- usual records, to be taken by C
case("plain-item", D(item()), MUL, True)
case("plain-property", D(prop()), MUL, True)
case("empty-terms-objects", D(item(labels={}, aliases={}, descriptions={}, sitelinks={}, claims={})), MUL,
     True)

# --- escapes in values
for cid, text in [
    ("esc-e-acute", r"Caf\u00e9"), ("esc-surrogate-pair", r"smile \ud83d\ude00"), ("esc-quote", r"a \"b\""),
    ("esc-backslash", r"back\\slash"), ("esc-slash", r"AC\/DC"), ("esc-newline", r"two\nlines"),
    ("esc-nul", r"nul\u0000byte"), ("esc-controls", r"\b\f\r\t x"), ("esc-upper-hex", r"\u00C9COLE"),
    ("esc-unit-sep", r"a\u001cb\u001fc"), ("esc-ascii-letters", r"\u0041\u0062c"),
]:
    lab = f'"labels":{{"en":{{"language":"en","value":"{text}"}},"de":{{"language":"de","value":"{text}"}}}}'
    ali = (f'"aliases":{{"en":[{{"language":"en","value":"{text} alias"}},'
           f'{{"language":"en","value":"{text}"}}]}}')
    rest = [f'"descriptions":{{"en":{{"language":"en","value":"{text}"}}}}',
            f'"sitelinks":{{"enwiki":{{"site":"enwiki","title":"{text}"}}}}']
    case(cid, D(raw(lab, ali, *rest)), MUL, True)
case("esc-in-id-type-rank-datatype", D(raw(
    '"labels":{}',
    '"claims":{"P31":[{"mainsnak":{"snaktype":"value","property":"P31","datatype":"wikibase\\u002ditem",'
    '"datavalue":{"value":{"id":"Q\\u0035"},"type":"wikibase-entityid"}},"rank":"dep\\u0072ecated"},'
    '{"mainsnak":{"snaktype":"value","property":"P31","datatype":"wikibase-item",'
    '"datavalue":{"value":{"id":"\\u00515"},"type":"wikibase-entityid"}},"rank":"pr\\u0065ferred"}]}',
    head='"type":"\\u0069tem","id":"Q\\u0031"')), taken=True)
case("esc-property-datatype", D(raw('"labels":{}', '"datatype":"wikibase-\\u0069tem"',
                                    head='"type":"property","id":"P9"')), taken=True)

# --- escaped keys (C hands them to Python, which decodes them)
case("esc-key-top", D(raw('"l\\u0061bels":{"en":{"value":"X"}}')), taken=False)
case("esc-key-lang", D(raw('"labels":{"\\u0065n":{"value":"X"}}')), taken=False)
case("esc-key-other-lang", D(raw('"labels":{"en":{"value":"X"},"\\u0066r":{"value":"Y"}}')), taken=False)
case("esc-key-value", D(raw('"labels":{"en":{"v\\u0061lue":"X"}}')), taken=False)
case("esc-key-pid", D(raw('"labels":{}', '"claims":{"P\\u00331":[' + J(stmt("P31")).decode() + "]}")),
     taken=False)
case("esc-key-rank", D(raw('"labels":{}', '"claims":{"P31":[' + J(stmt("P31")).decode().replace(
    '"rank"', '"r\\u0061nk"') + "]}")), taken=False)
case("esc-key-unread", D(raw('"labels":{}', '"l\\u0061strevid":5')), taken=False)
case("esc-key-in-references", D(raw('"labels":{}', '"claims":{"P31":[' + J(stmt("P31")).decode().replace(
    '"hash"', '"h\\u0061sh"') + "]}")), taken=True)

# --- duplicate keys
case("dup-labels", D(raw('"labels":{"en":{"value":"First"}}', '"labels":{"en":{"value":"Second"}}')), MUL,
     False)
case("dup-en-label", D(raw('"labels":{"en":{"value":"First"},"en":{"value":"Second"}}')), MUL, False)
case("dup-mul-label", D(raw('"labels":{"mul":{"value":"First"},"mul":{"value":"Second"}}')), MUL, False)
case("dup-fr-label", D(raw('"labels":{"en":{"value":"X"},"fr":{"value":"A"},"fr":{"value":"B"}}')), MUL, True)
case("dup-value-in-term", D(raw('"labels":{"en":{"value":"First","value":"Second"}}')), taken=False)
case("dup-id", D(raw('"labels":{}', '"id":"Q2"')), taken=False)
case("dup-type", D(raw('"labels":{}', '"type":"property"')), taken=False)
case("dup-claim-pid", D(raw('"labels":{}', '"claims":{"P31":[' + J(stmt("P31", "Q5")).decode() + '],"P31":['
                            + J(stmt("P31", "Q6")).decode() + "]}")), taken=False)
case("dup-rank", D(raw('"labels":{}', '"claims":{"P31":['
                       + J(stmt("P31", "Q5", rank="deprecated")).decode()[:-1] + ',"rank":"normal"}]}')),
     taken=False)
case("dup-mainsnak", D(raw('"labels":{}', '"claims":{"P31":[' + J(stmt("P31", "Q5")).decode()[:-1]
                           + ',"mainsnak":' + J(snak("P31", "Q6")).decode() + "}]}")), taken=False)
case("dup-sitelink-keys",
     D(raw('"labels":{}', '"sitelinks":{"dewiki":{"title":"A"},"dewiki":{"title":"B"}}')), taken=True)
case("dup-enwiki", D(raw('"labels":{}', '"sitelinks":{"enwiki":{"title":"A"},"enwiki":{"title":"B"}}')),
     taken=False)
case("dup-title", D(raw('"labels":{}', '"sitelinks":{"enwiki":{"title":"A","title":"B"}}')), taken=False)
case("dup-unread-top-key", D(raw('"labels":{}', '"lastrevid":1', '"lastrevid":2')), taken=True)
case("dup-alias-lang", D(raw('"labels":{}', '"aliases":{"en":[{"value":"a"}],"en":[{"value":"b"}]}')),
     taken=False)
case("dup-datavalue-id", D(raw('"labels":{}', '"claims":{"P31":[{"mainsnak":{"snaktype":"value",'
                               '"datatype":"wikibase-item","datavalue":{"value":{"id":"Q5","id":"Q6"},'
                               '"type":"wikibase-entityid"}}}]}')), taken=False)
DUP_QUALS = J(constraint()).decode().replace('"P2309":', '"P2308":[],"P2309":')
case("dup-qualifier-pid", D(raw('"labels":{}', '"datatype":"string"', f'"claims":{{"P2302":[{DUP_QUALS}]}}',
                                head='"type":"property","id":"P1"')), taken=False)

# --- terms and claims of every JSON type
for key in ("labels", "aliases", "descriptions", "sitelinks", "claims"):
    for vid, value in [("empty-list", []), ("null", None), ("string", "abc"), ("empty-string", ""),
                       ("number", 5), ("zero", 0), ("true", True), ("false", False), ("list", [1]),
                       ("list-of-obj", [{"value": "x"}]), ("empty-obj", {})]:
        case(f"{key}-{vid}", D(item(**{key: value})), MUL, value is None or value == {} or value == [])
case("labels-missing", D(item(labels=DROP)), MUL, False)
case("all-terms-missing",
     D(item(labels=DROP, aliases=DROP, descriptions=DROP, sitelinks=DROP, claims=DROP)), MUL, False)
case("labels-null-others-missing", D({"type": "item", "id": "Q1", "labels": None}), MUL, True)
for vid, value in [("null", None), ("number", 5), ("zero", 0), ("list", []), ("obj", {}), ("empty", ""),
                   ("true", True)]:
    case(f"en-label-value-{vid}", D(item(labels={"en": term("en", value), "mul": term("mul", "M")})), MUL)
    case(f"en-label-entry-{vid}", D(item(labels={"en": value, "mul": term("mul", "M")})), MUL)
    case(f"description-value-{vid}", D(item(descriptions={"en": term("en", value)})))
    case(f"enwiki-title-{vid}", D(item(sitelinks={"enwiki": {"title": value}})))
    case(f"enwiki-entry-{vid}", D(item(sitelinks={"enwiki": value, "frwiki": {"title": "F"}})))
    case(f"alias-list-{vid}", D(item(aliases={"en": value})), MUL)
    case(f"alias-entry-{vid}", D(item(aliases={"en": [term("en", "ok"), value]})), MUL)
    case(f"alias-value-{vid}", D(item(aliases={"en": [term("en", value), term("en", "ok")]})), MUL)
    case(f"mul-label-value-{vid}", D(item(labels={"mul": term("mul", value)})), MUL)
    case(f"de-label-value-{vid}", D(item(labels={"en": term("en", "E"), "de": term("de", value)})), MUL)
    case(f"de-label-unrequested-{vid}", D(item(labels={"en": term("en", "E"), "de": term("de", value)})),
         ("en",))
case("term-without-value", D(item(labels={"en": {"language": "en"}, "mul": term("mul", "M")})), MUL, True)
case("en-empty-with-mul", D(item(labels={"en": term("en", ""), "mul": term("mul", "Mul name")},
                                 aliases={"en": [term("en", "Mul name"), term("en", "")]})), MUL, True)
case("only-mul", D(item(labels={"mul": term("mul", "Only Mul")}, aliases={"mul": [term("mul", "Only Mul")]})),
     ("en", "mul"), True)
case("only-mul-en-requested", D(item(labels={"mul": term("mul", "Only Mul")})), ("en",), True)
case("mul-null-en-null", D(item(labels={"en": None, "mul": None})), MUL, True)
case("aliases-dedupe", D(item(labels={"en": term("en", "Same")}, aliases={"en": [
    term("en", "Same"), term("en", "Other"), term("en", "Other"), term("en", ""), term("en", None),
    {"language": "en"}, term("en", "same"), term("en", "Other ")]})), MUL, True)
case("aliases-numbers", D(item(aliases={"en": [term("en", 5), term("en", "x")]})), MUL, False)
case("aliases-zero", D(item(aliases={"en": [term("en", 0), term("en", "x")]})), MUL, False)
case("aliases-many", D(item(aliases={"en": [term("en", f"a{i % 300}") for i in range(600)]})), MUL, False)
case("aliases-under-limit", D(item(aliases={"en": [term("en", f"a{i % 200}") for i in range(400)]})), MUL,
     True)
case("aliases-requested-twice", D(item()), ("en", "en", "de", "de"), True)
case("language-only-in-aliases", D(item(labels={}, aliases={"xx": [term("xx", "Ix")]})), ("xx", "en"), True)

# --- names that need folding
for cid, name in [("sharp-s", "Straße"), ("dotted-i", "İstanbul"), ("dz-digraph", "Ǆemal"),
                  ("tab-padded", "  Tab\tName  "), ("file-sep", "a\x1cb\x1d c\x1e\x1fd"),
                  ("nbsp", "a\u00a0b"), ("combining", "e\u0301cole"), ("greek-sigma", "ΟΔΟΣ"),
                  ("ligature", "ﬁne ﬂow"), ("fullwidth", "ＡＢＣ"), ("rtl", "שלום עולם"),
                  ("emoji", "😀 Grin"), ("spaces", "   "),
                  ("line-sep", "a\u2028b\u2029c"), ("vertical-tab", "a\x0bb\x0cc"), ("nul", "x\x00y"),
                  ("del", "x\x7fy"), ("nel", "x\x85y"), ("kelvin", "\u212a"), ("upper-ascii", "MiXeD Case")]:
    ent = item(labels={"en": term("en", name), "de": term("de", name + " de")},
               aliases={"en": [term("en", name.upper()), term("en", name.lower()), term("en", name)]})
    case(f"fold-{cid}", D(ent), MUL, True)
    case(f"fold-{cid}-ascii-escaped", json.dumps(ent, ensure_ascii=True).encode() + b"\n", MUL, True)

# --- claims: snaks, ranks, values
case("novalue-somevalue", IC({
    "P31": [stmt("P31", snaktype=NO), stmt("P31", "Q5"), stmt("P31", snaktype=SOME)],
    "P279": [stmt("P279", snaktype=SOME)], "P17": [stmt("P17", snaktype=NO, rank="deprecated")],
    "P50": [stmt("P50", snaktype=NO)], "P18": [stmt("P18", snaktype=NO, datatype="commonsMedia")]}),
     MUL, True)
case("novalue-with-datavalue", IC({"P31": [with_mainsnak(dict(snak("P31", "Q5"), snaktype=NO))]}), taken=True)
case("snaktype-bad", IC({"P31": [with_mainsnak({"snaktype": "other", "datatype": "wikibase-item"})]}),
     taken=False)
case("snaktype-missing", IC({"P31": [with_mainsnak({"property": "P31", "datatype": "wikibase-item"})]}),
     taken=False)
case("snaktype-value-no-datavalue",
     IC({"P31": [with_mainsnak({"snaktype": "value", "datatype": "wikibase-item"})]}))
case("snaktype-object", IC({"P31": [with_mainsnak({"snaktype": {"x": 1}, "datatype": "wikibase-item"})]}),
     taken=False)
for rid, rank in [("deprecated", "deprecated"), ("preferred", "preferred"), ("missing", DROP), ("empty", ""),
                  ("null", None), ("zero", 0), ("false", False), ("other", "weird")]:
    for n in (1, 2):
        case(f"rank-{rid}-x{n}", IC({"P31": [stmt("P31", f"Q{5 + i}", rank=rank) for i in range(n)],
                                     "P279": [stmt("P279", "Q9", rank=rank)]}), taken=rank not in (0, False))
case("rank-number", IC({"P31": [stmt("P31", "Q5", rank=5)]}))
case("rank-list", IC({"P31": [stmt("P31", "Q5", rank=["normal"])]}))
case("old-value-without-id", IC({
    "P31": [stmt("P31", {"entity-type": "item", "numeric-id": 42})],
    "P17": [stmt("P17", {"entity-type": "property", "numeric-id": 4}),
            stmt("P17", {"entity-type": "lexeme", "numeric-id": 4}),
            stmt("P17", {"entity-type": "form", "numeric-id": 4}), stmt("P17", {"numeric-id": 4}),
            stmt("P17", {"entity-type": "item"}), stmt("P17", {"entity-type": "item", "numeric-id": "7"})]}),
     taken=False)
case("old-value-float-id", IC({"P31": [stmt("P31", {"entity-type": "item", "numeric-id": 4.5})]}))
case("value-id-kinds", IC({"P31": [stmt("P31", "P5"), stmt("P31", "L5"), stmt("P31", "Q5-F1"),
                                   stmt("P31", "q5"), stmt("P31", "Q")],
                           "P50": [stmt("P50", "P5")], "P51": [stmt("P51", "Q51")]}), taken=True)
case("value-id-empty", IC({"P31": [stmt("P31", "")]}), taken=False)
case("value-id-empty-second", IC({"P31": [stmt("P31", "Q5"), stmt("P31", "")]}), taken=False)
case("value-id-null", IC({"P31": [stmt("P31", {"id": None, "entity-type": "item", "numeric-id": 3})]}),
     taken=False)
case("value-id-number", IC({"P31": [stmt("P31", {"id": 5})]}), taken=False)
case("value-is-string", IC({"P31": [with_mainsnak({
    "snaktype": "value", "datatype": "wikibase-item", "datavalue": {"value": "Q5", "type": "string"}})]}),
     taken=False)
case("value-type-string-with-id", IC({"P31": [with_mainsnak({
    "snaktype": "value", "datatype": "wikibase-item",
    "datavalue": {"value": {"id": "Q5"}, "type": "string"}})]}), taken=True)
case("datavalue-null", IC({"P31": [with_mainsnak({
    "snaktype": "value", "datatype": "wikibase-item", "datavalue": None})]}), taken=False)
case("datavalue-value-null", IC({"P31": [with_mainsnak({
    "snaktype": "value", "datatype": "wikibase-item",
    "datavalue": {"value": None, "type": "wikibase-entityid"}})]}), taken=False)
STRING_ST = stmt("P18", "x", datatype="string")
case("item-group-with-string-statement", IC({"P31": [stmt("P31", "Q5"), STRING_ST]}))
case("string-group-with-item-statement", IC({"P18": [STRING_ST, stmt("P18", "Q5")]}), taken=True)
case("first-statement-not-object", IC({"P31": [5, stmt("P31", "Q5")]}), taken=False)
case("first-statement-null", IC({"P31": [None]}), taken=False)
case("second-statement-not-object", IC({"P31": [stmt("P31", "Q5"), "x"]}), taken=False)
case("second-statement-not-object-string-group", IC({"P18": [STRING_ST, 5]}), taken=True)
case("claims-group-object", IC({"P31": {"a": stmt("P31", "Q5")}}), taken=False)
case("claims-group-empty-object", IC({"P31": {}}), taken=False)
case("claims-group-empty", IC({"P31": []}), taken=True)
case("claims-group-null", IC({"P31": None}), taken=False)
case("claims-group-string", IC({"P31": "abc"}), taken=False)
case("statement-without-mainsnak", IC({"P31": [{"rank": "normal", "type": "statement"}]}), taken=False)
case("second-without-mainsnak", IC({"P31": [stmt("P31"), {"rank": "normal"}]}), taken=False)
case("string-group-second-without-mainsnak", IC({"P18": [STRING_ST, {"rank": "normal"}]}), taken=True)
case("mainsnak-not-object", IC({"P31": [{"rank": "normal", "mainsnak": "x"}]}), taken=False)
case("datatype-absent-first", IC({"P31": [stmt("P31", "Q5", datatype=None), stmt("P31", "Q6")]}), taken=False)
case("datatype-absent-second", IC({"P31": [stmt("P31", "Q5"), stmt("P31", "Q6", datatype=None)]}), taken=True)
case("datatype-absent-novalue", IC({"P31": [stmt("P31", snaktype=NO, datatype=None)]}), taken=False)
case("datatype-number", IC({"P31": [with_mainsnak(dict(snak("P31"), datatype=5))]}), taken=False)
case("datatype-null", IC({"P31": [with_mainsnak(dict(snak("P31"), datatype=None))]}), taken=False)
case("many-groups", IC({f"P{i}": [stmt(f"P{i}", f"Q{i}")] for i in range(1, 700)}), taken=False)
case("many-groups-under-limit", IC({f"P{i}": [stmt(f"P{i}", f"Q{i}")] for i in range(1, 400)}), taken=True)
case("pid-not-a-pid", IC({"": [stmt("P31")], "X": [stmt("P31")], "P31 ": [stmt("P31")]}), taken=True)

# --- property constraints
ENTITY_ID_DV = {"value": {"id": "Q3"}}
case("constraints", PC({"P2302": [
    constraint(classes=("Q5", "Q6", "Q7"), relation=("Q21503252",)),
    constraint("Q21510865", classes=(), relation=()),
    constraint("Q21510865", classes=("Q8",), relation=(snak("P2309", snaktype=NO), "Q21514624", "Q30208840")),
    constraint(classes=(snak("P2308", snaktype=NO), snak("P2308", snaktype=SOME), "Q9", "P10", "Q9")),
    constraint(classes=("Q11",), rank="deprecated"),
    constraint(classes=("Q12",), rank="preferred"),
    stmt("P2302", snaktype=NO), stmt("P2302", snaktype=SOME, rank="deprecated"),
    constraint(qualifiers={}), constraint(qualifiers={"P2308": None, "P2309": None}),
    constraint(qualifiers={"P2308": [], "P2309": []}),
    constraint(qualifiers={"P2308": [snak("P2308", "x", datatype="string")], "P1": [snak("P1", "Q1")]}),
    constraint(qualifiers={"P2308": [{"snaktype": "value", "property": "P2308"}]}),
    constraint(qualifiers={"P2308": [{"snaktype": "value", "datavalue": None}]}),
    constraint(qualifiers={"P2308": [{"snaktype": "value", "datavalue": ENTITY_ID_DV}]}),
    constraint(qualifiers={"P2308": [{"snaktype": "value", "datavalue": dict(ENTITY_ID_DV, type=5)}]}),
    constraint(qualifiers={"P2308": [snak("P2308", "")]}),
]}), MUL, True)
case("constraint-qualifiers-list", PC({"P2302": [constraint(qualifiers=[])]}), taken=False)
case("constraint-qualifiers-string", PC({"P2302": [constraint(qualifiers="x")]}), taken=False)
case("constraint-p2308-object", PC({"P2302": [constraint(qualifiers={"P2308": {"a": 1}})]}), taken=False)
case("constraint-p2308-empty-object", PC({"P2302": [constraint(qualifiers={"P2308": {}})]}), taken=False)
case("constraint-p2308-zero", PC({"P2302": [constraint(qualifiers={"P2308": 0})]}), taken=False)
case("constraint-p2308-string", PC({"P2302": [constraint(qualifiers={"P2308": ""})]}), taken=False)
case("constraint-qualifier-not-object", PC({"P2302": [constraint(classes=("Q5", 5))]}), taken=False)
case("constraint-qualifier-old-value",
     PC({"P2302": [constraint(classes=({"entity-type": "item", "numeric-id": 5},))]}), taken=False)
case("constraint-qualifier-value-null", PC({"P2302": [constraint(qualifiers={"P2308": [
    {"snaktype": "value", "datavalue": {"type": "wikibase-entityid", "value": None}}]})]}), taken=False)
BAD_SNAK = {"snaktype": "bad"}
case("constraint-qualifier-bad-snaktype", PC({"P2302": [constraint(qualifiers={"P2308": [BAD_SNAK]})]}),
     taken=False)
case("constraint-relation-bad-after-item", PC({"P2302": [constraint(relation=("Q21503252", BAD_SNAK))]}),
     taken=True)
case("constraint-relation-bad-before-item", PC({"P2302": [constraint(relation=(BAD_SNAK, "Q21503252"))]}),
     taken=False)
case("constraint-deprecated-bad-qualifiers", PC({"P2302": [constraint(rank="deprecated", qualifiers="x")]}),
     taken=True)
case("constraint-many-classes", PC({"P2302": [constraint(classes=[f"Q{i}" for i in range(100)])]}),
     taken=False)
case("constraint-single-statement", PC({"P2302": [constraint(classes=("Q5", "Q6"))]}), MUL, True)
case("constraint-string-datatype", PC({"P2302": [stmt("P2302", "x", datatype="string"), constraint()]}),
     taken=False)
case("constraint-datatype-absent", PC({"P2302": [stmt("P2302", "Q5", datatype=None)]}), taken=False)
case("p2302-on-item", IC({"P2302": [constraint(classes=("Q5",)), constraint(rank="deprecated")]}), taken=True)
case("p2302-on-item-string", IC({"P2302": [stmt("P2302", "x", datatype="string")]}), taken=False)
case("property-datatype-missing", D(prop(datatype=DROP)), MUL, True)
case("property-datatype-null", D(prop(datatype=None)), MUL, True)
case("property-datatype-number", D(prop(datatype=5)), MUL, False)
case("property-datatype-object", D(prop(datatype={"a": 1})), taken=False)
case("item-with-datatype", D(item(datatype={"a": 1})), taken=True)

# --- demonyms (P1549, monolingual text)


def mono(text: Any = "Portuguese", lang: Any = "en", *, rank: Any = "normal", forms: Sequence[Any] | None = None,
         quals: Any = None, snaktype: str = "value", datatype: Any = "monolingualtext", pid: str = "P1549") -> dict:
    """A demonym statement as Wikidata writes it; ``forms`` become P518 qualifier snaks (ids or snaks)."""
    s: dict[str, Any] = {"snaktype": snaktype, "property": pid}
    if snaktype == "value":
        s["datavalue"] = {"value": {"text": text, "language": lang}, "type": "monolingualtext"}
    if datatype is not DROP:
        s["datatype"] = datatype
    out: dict[str, Any] = {"mainsnak": s, "type": "statement", "id": f"Q1${pid}"}
    if rank is not DROP:
        out["rank"] = rank
    if forms is not None:
        quals = {"P518": [f if isinstance(f, dict) else snak("P518", f) for f in forms]}
    if quals is not None:
        out["qualifiers"] = quals
        out["qualifiers-order"] = list(quals) if isinstance(quals, dict) else []
    return out


def with_dv(datavalue: Any, **kw: Any) -> dict:
    """A demonym statement whose main snak has this datavalue as it is."""
    st = mono(**kw)
    st["mainsnak"]["datavalue"] = datavalue
    return st


MASC, FEM, PLURAL = "Q499327", "Q1775415", "Q146786"
DEMONYMS_Q45 = [mono("Portuguese"), mono("português", "pt"), mono("Portugais", "fr", forms=[MASC]),
                mono("Portugaise", "fr", forms=[FEM]), mono("португальцы", "ru", forms=[PLURAL]),
                mono("Portugees", "nl")]
FR = ("en", "fr", "ru", "mul")
case("demonym-plain", IC({"P31": [stmt("P31", "Q6256")], "P1549": DEMONYMS_Q45}), FR, True)
case("demonym-plain-en-only", IC({"P1549": DEMONYMS_Q45}), ("en",), True)
case("demonym-english-not-requested", IC({"P1549": DEMONYMS_Q45}), ("de",), True)
case("demonym-on-property", PC({"P1549": DEMONYMS_Q45}), FR, True)
for rid, rank in [("deprecated", "deprecated"), ("preferred", "preferred"), ("missing", DROP), ("empty", ""),
                  ("null", None), ("other", "weird")]:
    case(f"demonym-rank-{rid}", IC({"P1549": [mono(rank=rank), mono("Lusitanian", rank=rank)]}), taken=True)
for rid, rank in [("zero", 0), ("number", 5), ("list", ["normal"]), ("object", {"a": 1})]:
    case(f"demonym-rank-{rid}", IC({"P1549": [mono(rank=rank)]}), taken=False)
case("demonym-deprecated-then-bad-rank", IC({"P1549": [mono(rank="deprecated"), mono(rank=5)]}), taken=False)
case("demonym-same-text-twice", IC({"P1549": [mono(), mono(rank="preferred"), mono(forms=[MASC]), mono()]}),
     taken=True)
case("demonym-novalue-somevalue", IC({"P1549": [mono(snaktype=NO), mono(snaktype=SOME), mono("Luso")]}),
     taken=True)
case("demonym-snaktype-other", IC({"P1549": [dict(mono(), mainsnak=dict(mono()["mainsnak"], snaktype="x"))]}),
     taken=True)
case("demonym-snaktype-missing", IC({"P1549": [dict(mono(), mainsnak={
    k: v for k, v in mono()["mainsnak"].items() if k != "snaktype"})]}), taken=True)
case("demonym-snaktype-number", IC({"P1549": [dict(mono(), mainsnak=dict(mono()["mainsnak"], snaktype=5))]}),
     taken=False)
for vid, dv in [("null", None), ("absent", DROP), ("string", "Portuguese"), ("list", []), ("number", 5),
                ("empty-object", {}), ("type-string", {"value": {"text": "X", "language": "en"}, "type": "string"}),
                ("type-missing", {"value": {"text": "X", "language": "en"}}),
                ("type-null", {"value": {"text": "X", "language": "en"}, "type": None}),
                ("type-number", {"value": {"text": "X", "language": "en"}, "type": 5}),
                ("value-null", {"value": None, "type": "monolingualtext"}),
                ("value-string", {"value": "Portuguese", "type": "monolingualtext"}),
                ("value-list", {"value": ["Portuguese", "en"], "type": "monolingualtext"}),
                ("value-empty", {"value": {}, "type": "monolingualtext"})]:
    statement = with_dv(dv)
    if dv is DROP:
        del statement["mainsnak"]["datavalue"]
    case(f"demonym-datavalue-{vid}", IC({"P1549": [statement, mono("Luso")]}))
for vid, text, lang in [("text-empty", "", "en"), ("text-null", None, "en"), ("text-number", 5, "en"),
                        ("text-object", {"a": 1}, "en"), ("text-spaces", "  Luso  Tuga ", "en"),
                        ("text-non-ascii", "Portuguêse\u00a0ﬁ", "en"), ("text-escapes", "a\"b\\c\nd", "en"),
                        ("lang-null", "X", None), ("lang-number", "X", 5), ("lang-empty", "X", ""),
                        ("lang-unrequested", "X", "xx"), ("lang-variant", "X", "en-gb"),
                        ("lang-upper", "X", "EN"), ("lang-mul", "X", "mul")]:
    case(f"demonym-{vid}", IC({"P1549": [mono(text, lang), mono("Luso")]}), FR)
case("demonym-text-escaped", D(raw('"labels":{}', '"claims":{"P1549":[{"mainsnak":{"snaktype":"value",'
                                   '"datatype":"monolingualtext","datavalue":{"value":{"text":"Portugu\\u00eas",'
                                   '"language":"\\u0065n"},"type":"monolingual\\u0074ext"}},"rank":"n\\u006frmal"}]}')),
     taken=True)
case("demonym-key-escaped", D(raw('"labels":{}', '"claims":{"P1549":[{"mainsnak":{"snaktype":"value",'
                                  '"datatype":"monolingualtext","datavalue":{"value":{"t\\u0065xt":"X",'
                                  '"language":"en"},"type":"monolingualtext"}}}]}')), taken=False)
case("demonym-text-twice", D(raw('"labels":{}', '"claims":{"P1549":[{"mainsnak":{"snaktype":"value",'
                                 '"datatype":"monolingualtext","datavalue":{"value":{"text":"A","text":"B",'
                                 '"language":"en"},"type":"monolingualtext"}}}]}')), taken=False)
for fid, forms in [("none", []), ("two", [MASC, FEM]), ("novalue-first", [snak("P518", snaktype=NO), PLURAL]),
                   ("somevalue-only", [snak("P518", snaktype=SOME)]), ("property-id", ["P5", MASC]),
                   ("string-snak", [snak("P518", "x", datatype="string"), FEM]),
                   ("old-value", [{"snaktype": "value", "property": "P518", "datavalue": {
                       "type": "wikibase-entityid", "value": {"entity-type": "item", "numeric-id": 5}}}]),
                   ("bad-snaktype", [{"snaktype": "bad"}]), ("bad-after-item", [MASC, {"snaktype": "bad"}]),
                   ("not-object", [5]), ("empty-id", [""])]:
    case(f"demonym-form-{fid}", IC({"P1549": [mono(forms=forms)]}), FR)
for qid, quals in [("null", None), ("empty", {}), ("list", []), ("string", "x"), ("p518-null", {"P518": None}),
                   ("p518-object", {"P518": {"a": 1}}), ("p518-string", {"P518": "x"}), ("p518-zero", {"P518": 0}),
                   ("other-qualifier", {"P580": [snak("P580", "x", datatype="time")]})]:
    statement = mono(quals=quals)
    if quals is None:
        statement["qualifiers"] = None
    case(f"demonym-qualifiers-{qid}", IC({"P1549": [statement]}))
case("demonym-deprecated-bad-qualifiers", IC({"P1549": [mono(rank="deprecated", quals="x")]}))
case("demonym-datatype-absent", IC({"P1549": [mono(datatype=DROP), mono("Luso")]}), taken=False)
case("demonym-datatype-absent-second", IC({"P1549": [mono(), mono("Luso", datatype=DROP)]}), taken=True)
case("demonym-datatype-string", IC({"P1549": [mono(datatype="string")]}), taken=True)
case("demonym-datatype-item", IC({"P1549": [mono(datatype="wikibase-item"), stmt("P1549", "Q5")]}), taken=False)
case("demonym-other-property", IC({"P1476": [mono(pid="P1476")], "P1705": [mono(pid="P1705")]}), FR, True)
case("demonym-group-second-not-object", IC({"P1549": [mono(), 5]}), taken=False)
case("demonym-group-second-without-mainsnak", IC({"P1549": [mono(), {"rank": "normal"}]}), taken=False)
case("demonym-deprecated-without-mainsnak", IC({"P1549": [mono(), {"rank": "deprecated"}]}), taken=False)
case("demonym-group-null", IC({"P1549": None}), taken=False)
case("demonym-group-empty", IC({"P1549": []}), taken=True)
case("demonym-many", IC({"P1549": [mono(f"D{i}", ("en", "fr")[i % 2], forms=[MASC] if i % 3 else None)
                                   for i in range(300)]}), FR, True)

# --- other records
lexeme = {"type": "lexeme", "id": "L1", "lemmas": {"en": term("en", "run")}, "lexicalCategory": "Q1084",
          "language": "Q1860", "claims": {}, "forms": [], "senses": []}
mediainfo = {"type": "mediainfo", "id": "M1", "labels": {"en": term("en", "File")}, "statements": {
    "P180": [stmt("P180", "Q5")]}}
case("lexeme", D(lexeme), taken=False)
case("mediainfo", D(mediainfo), taken=False)
case("redirect", D({"entity": "Q8", "redirect": "Q1"}), taken=False)
case("redirect-with-id", D({"id": "Q8", "type": "item", "redirect": "Q1"}), taken=False)
case("redirect-with-labels", D(item(redirect="Q2")), taken=True)
case("missing", D({"id": "Q404", "missing": ""}), taken=False)
case("envelope", D({"entities": {"Q1": item("Q1"), "P1": prop("P1"), "L1": lexeme}}), MUL, False)
case("envelope-list", D({"entities": [item("Q1"), prop("P1")]}), MUL, False)
case("envelope-empty", D({"entities": {}}), taken=False)
case("envelope-with-id", D({"entities": {"Q1": item()}, "id": "Q1"}), taken=False)
case("legacy-2014", D({"label": {"en": "Haaften"}, "entity": ["item", 58404], "links": {},
                       "claims": [{"m": ["value", 31, "wikibase-entityid",
                                         {"entity-type": "item", "numeric-id": 5}],
                                   "q": [], "g": "x", "rank": 1, "refs": []}]}), taken=False)
case("legacy-entity-only", D({"entity": "Q1", "type": "item"}), taken=False)
case("empty-object", D({}), taken=False)
case("not-an-object", D([1, 2], "string", 5, None, True), taken=False)
case("no-id", D(item(id=DROP)), taken=False)
case("no-type", D(item(type=DROP)), taken=False)
case("id-number", D(item(id=5)), taken=False)
case("id-empty", D(item(id="")), taken=False)
case("id-Q", D(item(id="Q")), taken=False)
# canonical ids only: "Q007" was an item that `index get Q7` could not find; both paths now count it malformed
case("id-leading-zero", D(item(id="Q007")), taken=False)
case("id-zero", D(item(id="Q0")), taken=False)
case("id-15-digits", D(item(id="Q" + "9" * 15)), taken=True)
case("id-16-digits", D(item(id="Q1" + "0" * 15)), taken=False)
case("id-arabic-digits", D(item(id="Q٣")), taken=False)
case("id-superscript", D(item(id="Q²")), taken=False)
case("id-letters", D(item(id="Q1a")), taken=False)
case("id-lowercase", D(item(id="q1")), taken=False)
case("id-property-for-item", D(item(id="P1")), taken=False)
case("id-item-for-property", D(prop(id="Q1")), taken=False)
case("type-unknown", D(item(type="form")), taken=False)
case("type-number", D(item(type=5)), taken=False)
case("type-object", D(item(type={"a": 1})), taken=False)

# --- invalid JSON and odd numbers
GOOD = J(item())
case("truncated", D(GOOD[:-10]), taken=False)
case("truncated-in-escape", D(raw('"labels":{"en":{"value":"a\\u00')), taken=False)
case("trailing-garbage", D(GOOD + b"x"), taken=False)
case("trailing-brace", D(GOOD + b"}"), taken=False)
case("two-objects", D(GOOD + GOOD), taken=False)
case("two-objects-comma", D(GOOD + b"," + GOOD), taken=False)
case("garbage-before", D(b"x" + GOOD), taken=False)
for bid, bad in [("ff", b"\xff"), ("overlong", b"\xc0\xaf"), ("overlong-3", b"\xe0\x80\xaf"),
                 ("surrogate", b"\xed\xa0\x80"), ("past-max", b"\xf4\x90\x80\x80"), ("lone-cont", b"\x80"),
                 ("short-seq", b"\xe2\x82"), ("f5", b"\xf5\x80\x80\x80")]:
    case(f"utf8-{bid}-label", D(raw('"labels":{"en":{"value":"a' + "\x00" + 'b"}}').replace(b"\x00", bad)),
         taken=False)
    case(f"utf8-{bid}-unread", D(raw('"labels":{}', '"x":"' + "\x00" + '"').replace(b"\x00", bad)),
         taken=False)
    case(f"utf8-{bid}-key", D(raw('"labels":{"' + "\x00" + '":{"value":"b"}}').replace(b"\x00", bad)),
         taken=False)
    case(f"utf8-{bid}-outside", D(raw('"labels":{}' + "\x00").replace(b"\x00", bad)), taken=False)
for sid, esc in [("high", r"\ud800"), ("low", r"\udc00"), ("high-then-letter", r"\ud800\u0041"),
                 ("high-then-high", r"\ud800\ud800"), ("reversed", r"\ude00\ud83d"),
                 ("high-at-end", r"x\ud83d"), ("bad-hex", r"\u12g4"), ("short-hex", r"\u12"),
                 ("bad-escape", r"\x41"), ("escape-a", r"\a")]:
    case(f"escape-{sid}-label", D(raw(f'"labels":{{"en":{{"value":"{esc}"}}}}')), taken=False)
    case(f"escape-{sid}-unread", D(raw('"labels":{}', f'"x":"{esc}"')), taken=False)
for cid, ch in [("tab", "\t"), ("nul", "\x00"), ("us", "\x1f"), ("cr", "\r")]:
    case(f"raw-control-{cid}", D(raw('"labels":{"en":{"value":"a' + ch + 'b"}}')), taken=False)
    case(f"raw-control-{cid}-unread", D(raw('"labels":{}', '"x":"a' + ch + 'b"')), taken=False)
case("raw-del", D(raw('"labels":{"en":{"value":"a\x7fb"}}')), taken=True)
for nid, num in [("int-17", "12345678901234567"), ("int-18", "123456789012345678"),
                 ("int-20", "12345678901234567890"), ("int-21", "123456789012345678901"),
                 ("neg-21", "-123456789012345678901"),
                 ("uint64-max", "18446744073709551615"), ("int64-min", "-9223372036854775808"),
                 ("float-17", "0.1234567890123456"), ("float-19", "0.1234567890123456789"),
                 ("exp-99", "1e99"), ("exp-308", "1e308"), ("exp-400", "1e400"), ("exp-neg-400", "1e-400"),
                 ("exp-big-mantissa", "1.7976931348623157e308"), ("exp-over", "1.8e308"), ("exp-zero", "0e0"),
                 ("exp-upper", "2E+10"), ("neg-zero", "-0"), ("neg-zero-float", "-0.0"),
                 ("leading-zeros", "007"), ("leading-zero-neg", "-01"), ("dot-end", "1."),
                 ("dot-start", ".5"), ("plus", "+1"), ("minus", "-"),
                 ("exp-empty", "1e"), ("exp-sign-only", "1e+"), ("nan", "NaN"), ("inf", "Infinity"),
                 ("hex", "0x10"), ("number-then-letter", "1x"), ("frac-exp", "1.5e-7"), ("true-x", "truex"),
                 ("nul", "nul"), ("null-upper", "Null")]:
    case(f"number-{nid}", D(raw('"labels":{}', f'"x":{num}')), taken=None)
    case(f"number-{nid}-in-list", D(raw('"labels":{}', f'"x":[{num}, 1]')), taken=None)
case("number-in-claims", D(raw('"labels":{}', '"claims":{"P625":[{"mainsnak":{"snaktype":"value","datatype":'
                               '"globe-coordinate","datavalue":{"value":{"latitude":1e400}}}}]}')),
     taken=False)
case("nesting-200", D(raw('"labels":{}', '"x":' + "[" * 200 + "]" * 200)), taken=False)
case("nesting-200-objects", D(raw('"labels":{}', '"x":' + '{"a":' * 200 + "1" + "}" * 200)), taken=False)
case("nesting-120", D(raw('"labels":{}', '"x":' + "[" * 120 + "]" * 120)), taken=True)
case("nesting-128-levels", D(raw('"labels":{}', '"x":' + "[" * 127 + "]" * 127)), taken=True)
case("nesting-129-levels", D(raw('"labels":{}', '"x":' + "[" * 128 + "]" * 128)), taken=False)
case("nesting-unbalanced", D(raw('"labels":{}', '"x":' + "[" * 200 + "]" * 199)), taken=False)
case("whitespace-inside", D(b'{ "type" : "item" ,\t"id":"Q1" , "labels" : { "en" : { "value" : "X" } } ,'
                            b' "claims" : { "P31" : [ { "mainsnak" : { "snaktype" : "value" , "datatype" :'
                            b' "wikibase-item" , "datavalue" : { "value" : { "id" : "Q5" } } } ,'
                            b' "rank" : "normal" } , { "mainsnak" : { "snaktype" : "novalue" ,'
                            b' "datatype" : "wikibase-item" } } ] } }'),
     MUL, True)
case("whitespace-cr-inside", D(b'{"type":"item",\r"id":"Q1","labels":{}}'), taken=True)
case("formfeed-outside", D(b'{"type":"item",\x0c"id":"Q1","labels":{}}'), taken=False)
case("empty-containers-spaced", D(b'{"type":"item","id":"Q1","labels":[ ],"aliases":[\t],"claims":{ },'
                                  b'"sitelinks":{ },"descriptions":[ ]}'), taken=True)
case("empty-key", D(raw('"labels":{"":{"value":"x"}}', '"":1')), taken=True)

# --- framing and line endings
TWO = [J(item("Q1")), J(prop("P2"))]
case("crlf", b"[\r\n" + b",\r\n".join(TWO) + b"\r\n]\r\n", MUL)
case("lf-then-cr-last", b"[\n" + b",\n".join(TWO) + b"\r\n]\n", MUL)
case("padded", b"  [  \n  " + TWO[0] + b"  ,  \n\t" + TWO[1] + b"\t\n ] \n", MUL)
case("padded-left-only", b"[\n   " + TWO[0] + b",\n" + TWO[1] + b"\n]\n", MUL)
case("no-commas", b"[\n" + b"\n".join(TWO) + b"\n]\n", MUL, True)
case("json-lines", b"\n".join(TWO) + b"\n", MUL, True)
case("no-final-newline", b"\n".join(TWO), MUL, True)
case("no-final-newline-comma", b"[\n" + TWO[0] + b",\n" + TWO[1] + b",", MUL, True)
case("blank-lines", b"\n\n[\n\n" + TWO[0] + b",\n\n\n" + TWO[1] + b"\n\n]\n\n\n", MUL, True)
case("only-framing", b"[\n]\n")
case("empty", b"")
case("only-newlines", b"\n\n\n")
case("framing-with-commas", b"[,\n" + TWO[0] + b",\n],\n", MUL)
case("double-comma", b"[\n" + TWO[0] + b",,\n" + TWO[1] + b"\n]\n", MUL)
case("comma-space", b"[\n" + TWO[0] + b", \n" + TWO[1] + b" ,\n]\n", MUL)
case("array-on-one-line", b"[" + b",".join(TWO) + b"]\n", MUL, False)
case("nul-bytes-line", b"[\n\x00\x00\n" + TWO[0] + b"\n]\n")
case("many-errors", b"[\n" + b"\n".join([b"{bad %d" % i for i in range(30)] + TWO) + b"\n]\n", MUL)
case("mixed", D(item("Q1"), b"{bad", prop("P2"), lexeme, {"entity": "Q3", "redirect": "Q1"},
                {"entities": {"Q4": item("Q4")}}, item("Q5", labels=DROP), item("Q6"),
                b'{"type":"item","id":"Q7","labels":{},"x":1e400}', item("Q8"),
                b"\xff", item("Q9")), MUL)


@pytest.mark.parametrize(("data", "languages", "taken"), CASES)
def test_hand_made(data: bytes, languages: tuple[str, ...], taken: bool | None) -> None:
    both(data, languages)
    if taken is not None:
        spans = fallback_lines(data, languages)
        assert (spans == []) is taken, f"fallback lines {spans}"


def test_c_stats_count_only_its_own_records() -> None:
    data = D(item("Q1", claims={"P31": [stmt("P31", snaktype=NO)]}), lexeme, b"{bad")
    _cols, stats, spans, n_lines = FAST.extract_chunk(data, ("en",), fold)
    assert stats == {"records": 1, "kept_item": 1, "snaks_novalue": 1}
    assert [line for line, _s, _e in spans] == [3, 4] and n_lines == 5
    res = both(data)
    assert res is not None and res[1]["records"] == 3 and res[1]["malformed_invalid_json"] == 1


def test_error_lines_and_offsets_match() -> None:
    data = D(item("Q1"), b"{bad", item("Q2", id=5), lexeme, b"[1]")
    res = both(data)
    assert res is not None
    _tables, _stats, errors, n_lines = res
    assert [(e["line"], e["offset"], e["reason"]) for e in errors] == [
        (3, OFFSET + data.index(b"{bad"), "invalid_json"),
        (4, OFFSET + data.index(b'{"type":"item","id":5'), "no_id"),
        (6, OFFSET + data.index(b"[1]"), "not_object"),
    ]
    assert n_lines == 7


def test_demonym_rows_come_from_c_as_stated() -> None:
    """Not vacuous: the C path itself gives these rows (nothing falls back), and they are what the
    statements say: deprecated dropped, English always, requested languages only, P518 as form."""
    claims = {"P1549": [*DEMONYMS_Q45, mono("Lusitanian", rank="deprecated"), mono("Tuga", rank="preferred"),
                        mono("Portugiese", "de"), mono(snaktype=NO), mono("lusitano", "it", forms=[MASC, FEM])]}
    data = D(item("Q45", claims=claims))
    assert fallback_lines(data, FR) == []
    res = both(data, FR)
    assert res is not None
    rows = sorted((r["lang"], r["text"], r["rank"], r["form"], r["folded"]) for r in res[0]["demonyms"].to_pylist())
    assert rows == [
        ("en", "Portuguese", "normal", None, "portuguese"), ("en", "Tuga", "preferred", None, "tuga"),
        ("fr", "Portugais", "normal", MASC, "portugais"), ("fr", "Portugaise", "normal", FEM, "portugaise"),
        ("ru", "португальцы", "normal", PLURAL, "португальцы")]
    assert {r["id"] for r in res[0]["demonyms"].to_pylist()} == {"Q45"}
    assert res[1].get("snaks_novalue", 0) == 0  # a demonym's novalue is not an item-valued snak
    res = both(data, ("it",))
    assert res is not None
    assert sorted((r["lang"], r["text"], r["form"]) for r in res[0]["demonyms"].to_pylist()) == [
        ("en", "Portuguese", None), ("en", "Tuga", None), ("it", "lusitano", MASC)]


# ----------------------------------------------------------------------------- property test


def _json_values() -> st.SearchStrategy[Any]:
    leaf = (st.none() | st.booleans() | st.integers(-(2**70), 2**70)
            | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8)
            | st.sampled_from(["", "Q5", "P5", "value", "novalue", "somevalue", "wikibase-item", "deprecated",
                               "en", "mul", "item", "property"]))
    return st.recursive(leaf, lambda inner: st.lists(inner, max_size=3)
                        | st.dictionaries(st.sampled_from(["id", "value", "type", "en", "rank", "x", ""])
                                          | st.text(max_size=4), inner, max_size=3), max_leaves=8)


NAME_TEXT = st.text(max_size=12) | st.sampled_from(["Straße", "İstanbul", "Ǆemal", "  Tab\tName  ",
                                                    "a\x1cb", "Alpha", "alpha", "ALPHA", "", " ", "😀"])
TERM_LANGS = ["en", "de", "mul", "fr"]
ITEM_IDS = (st.sampled_from(["Q5", "Q6", "Q21503252", "Q21514624", "P5", "L5", "", "Q"])
            | st.integers(1, 99).map(lambda n: f"Q{n}"))
RANKS = st.sampled_from(["normal", "preferred", "deprecated", "", None, DROP])


@st.composite
def statements(draw: st.DrawFn, pid: str, item_valued: bool) -> dict:
    snaktype = draw(st.sampled_from(["value", "value", "value", NO, SOME]))
    if item_valued:
        value: Any = draw(ITEM_IDS)
        if draw(st.integers(0, 9)) == 0:
            value = {"entity-type": "item", "numeric-id": draw(st.integers(0, 99))}
        out = stmt(pid, value, rank=draw(RANKS), snaktype=snaktype)
    else:
        out = stmt(pid, draw(st.text(max_size=6)), rank=draw(RANKS), snaktype=snaktype,
                   datatype=draw(st.sampled_from(["string", "external-id", "monolingualtext"])))
    if draw(st.booleans()):
        quals = {}
        qpids = st.lists(st.sampled_from(["P2308", "P2309", "P580", "P31"]), max_size=3, unique=True)
        for qpid in draw(qpids):
            snaktypes = st.sampled_from(["value", "value", NO, SOME])
            quals[qpid] = [snak(qpid, draw(ITEM_IDS), snaktype=draw(snaktypes))
                           for _ in range(draw(st.integers(0, 3)))]
        out["qualifiers"] = quals
        out["qualifiers-order"] = list(quals)
    return out


@st.composite
def demonym_statements(draw: st.DrawFn) -> dict:
    snaktype = draw(st.sampled_from(["value", "value", "value", NO, SOME]))
    lang = draw(st.sampled_from(["en", "en", "de", "fr", "mul", "", "en-gb", "xx"]))
    forms = None
    if draw(st.booleans()):
        snaktypes = st.sampled_from(["value", "value", NO, SOME])
        forms = [snak("P518", draw(ITEM_IDS), snaktype=draw(snaktypes)) for _ in range(draw(st.integers(0, 3)))]
    datatype = draw(st.sampled_from(["monolingualtext"] * 8 + ["string", DROP]))
    return mono(draw(NAME_TEXT), lang, rank=draw(RANKS), forms=forms, snaktype=snaktype, datatype=datatype)


@st.composite
def records(draw: st.DrawFn) -> dict:
    is_property = draw(st.booleans())
    eid = ("P" if is_property else "Q") + str(draw(st.integers(1, 10**9)))
    ent: dict[str, Any] = {"type": "property" if is_property else "item", "id": eid}
    if is_property:
        ent["datatype"] = draw(st.sampled_from(["wikibase-item", "string", "external-id"]))
    ent["labels"] = {lang: term(lang, draw(NAME_TEXT)) for lang in draw(st.lists(st.sampled_from(TERM_LANGS),
                                                                                  max_size=4, unique=True))}
    ent["descriptions"] = {lang: term(lang, draw(st.text(max_size=10)))
                           for lang in draw(st.lists(st.sampled_from(TERM_LANGS), max_size=2, unique=True))}
    ent["aliases"] = {lang: [term(lang, draw(NAME_TEXT)) for _ in range(draw(st.integers(0, 4)))]
                      for lang in draw(st.lists(st.sampled_from(TERM_LANGS), max_size=3, unique=True))}
    claims: dict[str, list] = {}
    for pid in draw(st.lists(st.sampled_from(["P31", "P279", "P17", "P2302", "P18", "P1476", "P1549"]),
                             max_size=4, unique=True)):
        item_valued = pid in ("P31", "P279", "P17", "P2302") and draw(st.integers(0, 5)) > 0
        if pid == "P1549":
            group = [draw(demonym_statements()) for _ in range(draw(st.integers(0, 3)))]
        elif pid == "P2302" and is_property and item_valued:
            group = [constraint(draw(ITEM_IDS), classes=draw(st.lists(ITEM_IDS, max_size=3)),
                                relation=draw(st.lists(ITEM_IDS, max_size=2)),
                                rank=draw(st.sampled_from(["normal", "preferred", "deprecated"])))
                     for _ in range(draw(st.integers(1, 3)))]
        else:
            group = [draw(statements(pid, item_valued)) for _ in range(draw(st.integers(0, 3)))]
        claims[pid] = group
    ent["claims"] = claims
    if not is_property:
        ent["sitelinks"] = {site: {"site": site, "title": draw(st.text(max_size=8)), "badges": []}
                            for site in draw(st.lists(st.sampled_from(["enwiki", "dewiki", "frwiki"]),
                                                      max_size=3, unique=True))}
    # break it: replace some subtrees with arbitrary JSON, or delete keys
    for _ in range(draw(st.integers(0, 3))):
        slots = list(_slots(ent))
        parent, key = slots[draw(st.integers(0, len(slots) - 1))]
        if isinstance(parent, dict) and draw(st.integers(0, 3)) == 0:
            del parent[key]
        else:
            parent[key] = draw(_json_values())
    return ent


def _slots(obj: Any) -> Any:
    """(container, key) of every value under obj, in a fixed order."""
    items = obj.items() if isinstance(obj, dict) else enumerate(obj)
    for k, v in list(items):
        yield obj, k
        if isinstance(v, (dict, list)):
            yield from _slots(v)


def _serialise(ent: dict, how: str) -> bytes:
    if how == "orjson":
        try:
            return orjson.dumps(ent)
        except TypeError:  # an integer past 64 bits
            how = "json"
    if how == "ascii":
        return json.dumps(ent, ensure_ascii=True).encode()
    if how == "spaced":
        return json.dumps(ent, ensure_ascii=False, indent=None, separators=(" , ", " : ")).encode()
    return json.dumps(ent, ensure_ascii=False, separators=(",", ":")).encode()


DAMAGE_BYTES = b'{}[]",:\\u0e.-+ \t\x00\x1f\x80\xc3\xed\xff'
OTHER_LINES = [J(lexeme), J(mediainfo), J({"entity": "Q8", "redirect": "Q1"}), b"{bad", b"[1]",
               J({"entities": {"Q4": item("Q4"), "P5": prop("P5")}}), J({"id": "Q404", "missing": ""})]


@st.composite
def chunks(draw: st.DrawFn) -> bytes:
    lines = []
    for ent in draw(st.lists(records(), min_size=1, max_size=4)):
        line = _serialise(ent, draw(st.sampled_from(["orjson", "orjson", "ascii", "spaced", "json"])))
        damage = draw(st.integers(0, 19))
        if damage == 0:  # a truncated line, maybe inside a UTF-8 sequence or an escape
            line = line[: draw(st.integers(0, len(line)))]
        elif damage == 1:  # one byte replaced
            i = draw(st.integers(0, len(line) - 1))
            line = line[:i] + bytes([draw(st.sampled_from(DAMAGE_BYTES))]) + line[i + 1:]
        lines.append(line + draw(st.sampled_from([b",", b",", b",", b"", b" ,", b",\r"])))
    if draw(st.integers(0, 4)) == 0:
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(OTHER_LINES)) + b",")
    if draw(st.booleans()):
        lines = [b"[", *lines, b"]"]
    return b"\n".join(lines) + draw(st.sampled_from([b"\n", b"", b"\n\n"]))


GENERATED_LANGS = [("en",), ("en", "de", "mul"), ("de",), ("mul", "en"), ("fr", "en"), ("", "en", "en")]


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=chunks(), languages=st.sampled_from(GENERATED_LANGS))
def test_extractors_agree_on_generated_records(data: bytes, languages: tuple[str, ...]) -> None:
    both(data, languages)


# ----------------------------------------------------------------------------- languages


@pytest.mark.parametrize("languages", [
    ("mul",), ("de", "en"), ("", "en"), ("zh-hans", "é", "en\x00"), tuple(f"l{i}" for i in range(1000)),
    (), tuple(f"l{i}" for i in range(1001)),
], ids=["mul", "de-en", "empty-code", "odd-codes", "1000", "none", "1001"])
def test_language_tuples(languages: tuple[str, ...]) -> None:
    ent = item(labels={lang: term(lang, f"name {lang}") for lang in ("en", "de", "mul", "", "l999")})
    both(D(ent, prop()), languages)


def test_real_p21_of_douglas_adams_is_taken_by_c_with_its_rank() -> None:
    """Q42 states P21 male (Q6581097): the C and Python extractions give the same genders row."""
    (ent,) = _entities_of(orjson.loads(shared_path(SAMPLES, "syvb-wikidata", "Q42.json").read_bytes()))
    data = dump_bytes([ent])
    assert fallback_lines(data) == []
    res = both(data)
    assert res is not None
    want = sorted((ent["id"], s["mainsnak"]["datavalue"]["value"]["id"], s["rank"]) for s in ent["claims"]["P21"])
    assert want == [("Q42", "Q6581097", "normal")]
    assert sorted((r["id"], r["gender"], r["rank"]) for r in res[0]["genders"].to_pylist()) == want
    # a deprecated value is a row too (genders keeps every rank), unlike edges
    dep = copy.deepcopy(ent)
    dep["claims"]["P21"][0]["rank"] = "deprecated"
    res = both(dump_bytes([dep]))
    assert res is not None and res[0]["genders"].to_pylist() == [{"id": "Q42", "gender": "Q6581097", "rank": "deprecated"}]
