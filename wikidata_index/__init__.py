"""The Wikidata dump -> Parquet tables ingest, the table schema, and a read-only query API."""

from wikidata_index.names import fold

__all__ = ["fold", "WikidataIndex"]


def __getattr__(name: str):  # lazy so that importing the package stays cheap
    if name == "WikidataIndex":
        from wikidata_index.index import WikidataIndex

        return WikidataIndex
    raise AttributeError(name)
