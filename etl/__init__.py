"""Batch plumbing: streaming readers, atomic writers, sharded runs and manifests."""
