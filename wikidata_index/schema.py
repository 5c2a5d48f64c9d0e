"""The index's tables. Every later step joins these; changing one is a format change.

Layout of an index directory::

    DIR/<table>/part-00000.parquet ...   one or more files per table, rows sorted
    DIR/index.duckdb                      a view per table (absolute paths, for the duckdb CLI)
    DIR/manifest.json                     inputs, parameters, row counts, timings, index_format,
                                          and every table file's size and sha256 (written last;
                                          an index without it is refused: wikidata_index.index)
    DIR/.file-hashes.json                 remembered sha256s of unchanged files (a cache)

Conventions: ids are strings ("Q42", "P17"); ``rank`` is one of "preferred", "normal",
"deprecated"; names are per language and deduplicated per (id, lang, name).

Adding a table is not a format change when older indexes can do without it: such a table is in
OPTIONAL_TABLES, an index written before it existed has no folder and no manifest entry for it, and
``WikidataIndex`` shows it as an empty view (``WikidataIndex.has`` tells the two apart).
"""

from __future__ import annotations

import pyarrow as pa

TABLES: dict[str, pa.Schema] = {
    # Items and properties. popularity = item-valued statements with this item as subject or object
    # (the paper's Table 4: relation instances the item takes part in as head or tail); null for every
    # item of a dump that holds no item-valued statement.
    "entities": pa.schema(
        [
            ("id", pa.string()),
            ("type", pa.string()),  # "item" or "property"
            ("label", pa.string()),  # English label, or null
            ("description", pa.string()),  # English description, or null
            ("sitelinks", pa.int32()),  # number of sitelinks
            ("enwiki", pa.string()),  # English Wikipedia title, or null
            ("popularity", pa.int64()),
        ]
    ),
    # Labels and aliases per requested language.
    # folded = wikidata_index.names.fold(name), precomputed so folded lookups are plain joins.
    "names": pa.schema(
        [
            ("id", pa.string()),
            ("lang", pa.string()),
            ("name", pa.string()),
            ("is_label", pa.bool_()),
            ("folded", pa.string()),
        ]
    ),
    # P31 (instance of) values.
    "types": pa.schema([("id", pa.string()), ("class", pa.string()), ("rank", pa.string())]),
    # P279 (subclass of) values.
    "subclasses": pa.schema([("id", pa.string()), ("superclass", pa.string()), ("rank", pa.string())]),
    # Item-valued statements (non-deprecated), for relation-consistent linking and popularity.
    "edges": pa.schema([("subject", pa.string()), ("property", pa.string()), ("object", pa.string())]),
    "properties": pa.schema([("id", pa.string()), ("datatype", pa.string()), ("label", pa.string())]),
    # P2302 statements: constraint_type is e.g. Q21503250 (subject type) or Q21510865 (value type);
    # one row per P2308 class; relation is the P2309 value (Q21503252 instance of, Q21514624 subclass of, ...).
    "property_constraints": pa.schema(
        [
            ("property", pa.string()),
            ("constraint_type", pa.string()),
            ("class", pa.string()),
            ("relation", pa.string()),
        ]
    ),
    # P1549 (demonym) statements, non-deprecated: monolingual texts ("Portuguese"@en) in English and the
    # requested languages. form = the first item of the statement's P518 (applies to part) qualifier,
    # the grammatical form where one is given (Q499327 masculine, Q1775415 feminine, Q146786 plural),
    # else null. One row per (id, lang, text, form), the best rank kept. folded as in names.
    "demonyms": pa.schema(
        [
            ("id", pa.string()),
            ("lang", pa.string()),
            ("text", pa.string()),
            ("rank", pa.string()),  # not "deprecated"
            ("form", pa.string()),
            ("folded", pa.string()),
        ]
    ),
    # P21 (sex or gender) values, every rank: ("Q42", "Q6581097", "normal"). Renaming draws a person's new
    # name among items with the same value (envbench/core/gender.py reads them).
    "genders": pa.schema([("id", pa.string()), ("gender", pa.string()), ("rank", pa.string())]),
    # English names (labels, aliases, demonym texts), each with the tokens of its whitespace-collapsed
    # form under the tokenizer the ingest was given (``names.NameTokenizer``; the manifest's
    # ``name_tokens.tokenizer`` names it), for the names that tokenizer stores: so that a reader gets
    # DocRED's tokens of any index name without loading the tokenizer. Empty when the ingest was given
    # none. One row per name, sorted by name.
    "name_tokens": pa.schema([("name", pa.string()), ("tokens", pa.list_(pa.string()))]),
}

# Tables that an index of this format may lack (it was written before they existed); readers see
# them as empty. Every other table an index was written with is listed in its manifest.
OPTIONAL_TABLES = ("demonyms", "genders", "name_tokens")
# Tables made from the dump's entities; the others are derived from them once they are written.
EXTRACTED_TABLES = tuple(t for t in TABLES if t != "name_tokens")

SUBJECT_TYPE_CONSTRAINT = "Q21503250"
VALUE_TYPE_CONSTRAINT = "Q21510865"
RELATION_INSTANCE_OF = "Q21503252"
RELATION_SUBCLASS_OF = "Q21514624"
RELATION_INSTANCE_OR_SUBCLASS = "Q30208840"
# The demonym property and the qualifier that names a demonym's grammatical form.
DEMONYM_PROPERTY = "P1549"
DEMONYM_FORM_QUALIFIER = "P518"
# The sex-or-gender property, read into the genders table.
GENDER_PROPERTY = "P21"
# Demonyms are always read in this language, beside the requested ones.
DEMONYM_LANGUAGE = "en"
