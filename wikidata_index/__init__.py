"""The Wikidata dump -> Parquet tables ingest (with a compiled extractor), the table schema, name folding,
and a read-only query API."""

from wikidata_index.names import fold

__all__ = ["fold", "WikidataIndex"]


def __getattr__(name: str):  # lazy so that importing the package stays cheap
    if name == "WikidataIndex":
        from wikidata_index.index import WikidataIndex

        return WikidataIndex
    raise AttributeError(name)
