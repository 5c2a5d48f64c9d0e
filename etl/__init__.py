"""Batch plumbing: streaming readers, crash-safe and deterministic Parquet writers, the sharded runner,
manifests, and the one lifecycle of every step that writes files (``step``)."""
