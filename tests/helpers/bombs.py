"""Data files that are tiny on disk and huge decoded: the size limits must refuse them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def constant_parquet(path: Path, rows: int, chunk: int = 4_000_000) -> Path:
    """`rows` identical rows ("F", "01"), written chunk by chunk: RLE makes it tiny on disk."""
    batch = pa.table(
        {
            "sex": pa.DictionaryArray.from_arrays(
                pa.array(np.zeros(chunk, np.int32)), pa.array(["F"])
            ),
            "state": pa.DictionaryArray.from_arrays(
                pa.array(np.zeros(chunk, np.int32)), pa.array(["01"])
            ),
        }
    )
    with pq.ParquetWriter(path, batch.schema, compression="zstd") as writer:
        written = 0
        while written < rows:
            part = batch.slice(0, min(chunk, rows - written))
            writer.write_table(part, row_group_size=chunk)
            written += part.num_rows
    return path
