"""envbench: entity-renaming robustness benchmarks and training for document-level relation extraction."""

__version__ = "0.1.0"
