"""Numeric limits shared by the plan parser, the ledger, the dashboard's widgets and the tests.

One place for each limit, so that the CLI, the dashboard and the ledger cannot disagree.
"""

from __future__ import annotations

# --- data size (issue 11, part 4): checked from file metadata before anything is decoded ---

MAX_DATA_MB = 2048
"""The largest data a command reads, in MB (10^6 bytes), by default: the larger of the bytes on
disk and the decoded size the file's metadata announces (Parquet rows × columns × 8 bytes;
xlsx cells × their shared strings' length). `--max-data-mb` sets another limit."""

MAX_ROWS = 100_000_000
"""The most rows a command reads by default, counted from metadata before reading (Parquet
row groups, the xlsx sheet's rows) and while streaming (CSV). `--max-rows` sets another
limit: a census of 330 M persons passes `--max-rows 400000000`."""

DECODED_BYTES_PER_VALUE = 8
"""The least a decoded value costs in memory (a float64 or an offset + index): the lower
bound of a Parquet file's decoded size is rows × columns read × this."""
