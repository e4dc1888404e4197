"""The speed floor for `dprelease release`: the least a script can do for the same workload.

Reads the CSV with pyarrow (only the workload's columns, as text), dictionary-encodes each
column, bincounts every table of the benchmark workload and adds numpy Laplace noise. No
domains, no accounting, no secure sampler, no files written: the bar a full release is
measured against (bench/bench_release.py). Usage: python bench/floor_release.py DATA.csv
"""

import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pv

WORKLOAD = [
    ["state"], ["age"], ["sex"], ["race"], ["education"],
    ["state", "sex"], ["age", "sex"], ["race", "hispanic"], ["education", "sex"],
    ["state", "race", "hispanic"], ["county", "sex"],
]  # fmt: skip
EPSILON = 1.0


def main(path: str) -> None:
    columns = sorted({c for by in WORKLOAD for c in by})
    table = pv.read_csv(
        path,
        convert_options=pv.ConvertOptions(
            include_columns=columns, column_types={c: pa.string() for c in columns}
        ),
    )
    codes, sizes = {}, {}
    for name in columns:
        encoded = pc.dictionary_encode(table[name]).combine_chunks()
        indices = encoded.indices  # int32, no nulls: read its buffer (to_numpy imports pandas)
        buffer = np.frombuffer(indices.buffers()[1], dtype=np.int32)
        codes[name] = buffer[indices.offset : indices.offset + len(indices)].astype(np.int64)
        sizes[name] = len(encoded.dictionary)
    rng = np.random.default_rng()
    scale = len(WORKLOAD) / EPSILON
    total = 0.0
    for by in WORKLOAD:
        flat = np.zeros(table.num_rows, dtype=np.int64)
        cells = 1
        for name in by:
            flat = flat * sizes[name] + codes[name]
            cells *= sizes[name]
        counts = np.bincount(flat, minlength=cells)
        total += float((counts + rng.laplace(0.0, scale, cells)).sum())
    print(f"{len(WORKLOAD)} tables, checksum {total:.0f}")


if __name__ == "__main__":
    main(sys.argv[1])
