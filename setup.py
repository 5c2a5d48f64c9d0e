"""The ingest's compiled extractor; everything else about the package is in pyproject.toml.

A setup.py because setuptools' pyproject form of ext-modules is still experimental.
"""

from setuptools import Extension, setup

# optional: without a C compiler the install still succeeds, and the ingest runs its Python
# extraction (pysimdjson), which gives the same tables, slower.
setup(ext_modules=[Extension("wikidata_index._fastextract", ["wikidata_index/_fastextract.c"], optional=True)])
