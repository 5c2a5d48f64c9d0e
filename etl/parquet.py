"""Deterministic Parquet writing: the same rows in the same order give byte-identical files.

Fixed compression and level, fixed row-group and file sizes independent of how the rows arrive
(batches are re-cut to exact row-group boundaries), no timestamps; pyarrow's ``created_by`` is
the only version-dependent field.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from etl.io import atomic_path

COMPRESSION = "zstd"
COMPRESSION_LEVEL = 3
ROW_GROUP_SIZE = 1 << 17
ROWS_PER_FILE = 1 << 23


def part_name(n: int) -> str:
    return f"part-{n:05d}.parquet"


def write_table_file(path: str | os.PathLike[str], table: pa.Table, *, row_group_size: int = ROW_GROUP_SIZE,
                     compression: str = COMPRESSION, compression_level: int | None = COMPRESSION_LEVEL) -> None:
    """Write one Parquet file atomically with fixed settings."""
    with atomic_path(path) as tmp:
        pq.write_table(
            table,
            tmp,
            row_group_size=row_group_size,
            compression=compression,
            compression_level=compression_level,
            use_dictionary=True,
            write_statistics=True,
            store_schema=True,
        )


class PartWriter:
    """Writes a stream of record batches into DIR/part-00000.parquet, part-00001.parquet, ...

    Files hold exactly ``rows_per_file`` rows (the last fewer) and row groups exactly
    ``row_group_size`` rows, so output depends only on the rows, not on batch boundaries.
    At least one (possibly empty) file is written so readers always find the schema.
    """

    def __init__(self, out_dir: str | os.PathLike[str], schema: pa.Schema, *, row_group_size: int = ROW_GROUP_SIZE,
                 rows_per_file: int = ROWS_PER_FILE, use_dictionary: bool | list[str] = True) -> None:
        if rows_per_file % row_group_size:
            raise ValueError("rows_per_file must be a multiple of row_group_size")
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.schema = schema
        self.use_dictionary = use_dictionary  # True, or the columns to dictionary-encode
        self.row_group_size = row_group_size
        self.rows_per_file = rows_per_file
        self._pending: list[pa.RecordBatch] = []
        self._pending_rows = 0
        self._file_rows = 0
        self._files = 0
        self._writer: pq.ParquetWriter | None = None
        self._tmp: Path | None = None
        self.rows = 0
        self.paths: list[Path] = []

    def write_batches(self, batches: Iterable[pa.RecordBatch]) -> None:
        for b in batches:
            self.write_batch(b)

    def write_batch(self, batch: pa.RecordBatch | pa.Table) -> None:
        if isinstance(batch, pa.Table):
            for b in batch.to_batches():
                self.write_batch(b)
            return
        if batch.num_rows == 0:
            return
        if batch.schema != self.schema:
            batch = batch.select(self.schema.names).cast(self.schema)
        self._pending.append(batch)
        self._pending_rows += batch.num_rows
        while self._pending_rows >= self.row_group_size:
            self._flush_group(self.row_group_size)

    def _flush_group(self, n: int) -> None:
        table = pa.Table.from_batches(self._pending, schema=self.schema)
        group, rest = table.slice(0, n), table.slice(n)
        self._pending = rest.combine_chunks().to_batches() if rest.num_rows else []
        self._pending_rows = rest.num_rows
        if self._writer is None:
            self._open()
        assert self._writer is not None
        self._writer.write_table(group.combine_chunks(), row_group_size=self.row_group_size)
        self._file_rows += n
        self.rows += n
        if self._file_rows >= self.rows_per_file:
            self._close_file()

    def _open(self) -> None:
        final = self.out_dir / part_name(self._files)
        self._tmp = final.with_name(f".{final.name}.tmp")
        self._writer = pq.ParquetWriter(
            self._tmp,
            self.schema,
            compression=COMPRESSION,
            compression_level=COMPRESSION_LEVEL,
            use_dictionary=self.use_dictionary,
            write_statistics=True,
            store_schema=True,
        )

    def _close_file(self) -> None:
        assert self._writer is not None and self._tmp is not None
        self._writer.close()
        final = self.out_dir / part_name(self._files)
        os.replace(self._tmp, final)
        self.paths.append(final)
        self._writer = None
        self._tmp = None
        self._files += 1
        self._file_rows = 0

    def close(self) -> list[Path]:
        if self._pending_rows:
            self._flush_group(self._pending_rows)
        if self._writer is not None:
            self._close_file()
        if not self.paths:
            self._open()
            self._close_file()
        return self.paths
