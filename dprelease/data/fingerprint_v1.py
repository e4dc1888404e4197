"""The format-3 (v1) record key, kept to find the accounts of ledgers written before the line-rate
key of format 4 (`dprelease.data.fingerprint`): computed only while a ledger has accounts that
need it (`Ledger.needs_old_keys`).

A record is one row: the normalised text of every column, keyed by the normalised column name.
Each row hashes to 128 bits; the fingerprint is the row count and the sum of the row hashes
modulo 2^128. Normalised text (per cell): Unicode NFC, surrounding white space removed; missing
values (null, "", NaN) are ""; a plain decimal number is written canonically (`34`, `34.0`,
` 34 ` and a Parquet int 34 are all `34`; `0.5` and `5e-1` are `0.5`).

Row hash: each distinct (column, value) pair is hashed once per batch with BLAKE2b-128 (in
Python: about 5 s a million distinct values, which is why format 4 replaced it); a row mixes
its columns' hashes in name order through the SplitMix64 finaliser in two 64-bit lanes.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

_MOD = 1 << 128
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_MISSING = frozenset({"", "nan"})
_LANE_A, _LANE_B = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xD1B54A32D192ED03)


def normalise_text(value: object) -> str:
    """A cell's text as the fingerprint sees it (see the module docstring)."""
    if value is None:
        return ""
    text = unicodedata.normalize("NFC", str(value)).strip()
    if text.lower() in _MISSING:
        return ""
    if _NUMBER.fullmatch(text):
        number = float(text)
        if math.isfinite(number):
            if number.is_integer() and abs(number) < 2**63:
                return str(int(number))
            return repr(number)
    return text


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser on uint64 arrays (wrapping arithmetic)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    mixed: np.ndarray = z ^ (z >> np.uint64(31))
    return mixed


def _cell_hashes(name: str, column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Two uint64 lanes per row: the hash of (column name, normalised cell text)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    encoded = column if pa.types.is_dictionary(column.type) else column.dictionary_encode()
    dictionary = encoded.dictionary
    if not (pa.types.is_string(dictionary.type) or pa.types.is_large_string(dictionary.type)):
        try:
            dictionary = dictionary.cast(pa.string())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            dictionary = pa.array([None if v is None else str(v) for v in dictionary.to_pylist()])
    texts = [normalise_text(v) for v in dictionary.to_pylist()] + [""]  # last: null
    prefix = name.encode("utf-8") + b"\x00"
    digests = b"".join(
        hashlib.blake2b(prefix + text.encode("utf-8"), digest_size=16).digest() for text in texts
    )
    lanes = np.frombuffer(digests, dtype="<u8").reshape(-1, 2)
    indices = _indices(encoded.indices, null_slot=len(texts) - 1)
    return lanes[indices, 0], lanes[indices, 1]


def _indices(raw: pa.Array, null_slot: int) -> np.ndarray:
    """Dictionary indices as int64, a null at `null_slot`; read from the buffers with numpy,
    as pyarrow's fill_null and to_numpy of an array with nulls import pandas (seconds of
    start-up for every charged CLI release, issue 14's budget)."""
    validity, data = raw.buffers()[:2]
    if data is None:  # every value is null
        return np.full(len(raw), null_slot, dtype=np.int64)
    width = raw.type.bit_width // 8
    window = slice(raw.offset, raw.offset + len(raw))
    values = np.frombuffer(data, dtype=f"<i{width}")[window].astype(np.int64)
    if raw.null_count and validity is not None:
        valid = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")
        values = np.where(valid[window].astype(bool), values, null_slot)
    return values


def _lane_sum(lane: np.ndarray) -> int:
    """Σ lane exactly (Python int), summing 32-bit halves so that numpy cannot wrap."""
    low = int(np.sum(lane & np.uint64(0xFFFFFFFF), dtype=np.uint64))
    high = int(np.sum(lane >> np.uint64(32), dtype=np.uint64))
    return low + (high << 32)


@dataclass(frozen=True)
class LegacyFingerprint:
    """The format-3 fingerprint: (rows, Σ row hashes mod 2^128)."""

    rows: int = 0
    total: int = 0

    def add(self, batch: pa.RecordBatch | pa.Table) -> LegacyFingerprint:
        if batch.num_rows == 0:
            return self
        names = [normalise_text(n) for n in batch.schema.names]
        a = np.full(batch.num_rows, _LANE_A, dtype=np.uint64)
        b = np.full(batch.num_rows, _LANE_B, dtype=np.uint64)
        for name, index in sorted((n, i) for i, n in enumerate(names)):
            low, high = _cell_hashes(name, batch.column(index))
            a = _mix(a ^ low)
            b = _mix(b ^ high ^ a)
        total = _lane_sum(a) + (_lane_sum(b) << 64)
        return LegacyFingerprint(self.rows + batch.num_rows, (self.total + total) % _MOD)

    def combine(self, other: LegacyFingerprint) -> LegacyFingerprint:
        return LegacyFingerprint(self.rows + other.rows, (self.total + other.total) % _MOD)

    def key(self) -> str:
        """The format-3 ledger key: 64 hex digits."""
        text = f"dprelease-records-v1:{self.rows}:{self.total:032x}"
        return hashlib.sha256(text.encode("ascii")).hexdigest()
