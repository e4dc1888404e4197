"""Cells as 128-bit hashes of their canonical value, whole columns at a time (pyarrow compute
and numpy; no Python per value), for the ledger's record key (`dprelease.data.fingerprint`).

Canonical value of a cell, the same whatever format or engine read it:

- missing: null, NaN, "", white space only, or "nan" in any case;
- a number: int, float and decimal columns, and text that is a plain decimal number once
  trimmed (`34`, ` 34 `, `34.0`, `3.4e1`, `+34`) — hashed as its float64 value, so a Parquet
  int 34 and the text `34.0` are one value, and `0.5` is `5e-1` (−0.0 is 0.0);
- otherwise text: Unicode NFC, surrounding white space removed, hashed from its UTF-8 bytes.
  Booleans are the text `true`/`false`; dates and times arrow's text of them; infinities
  `inf`/`-inf`.

Normalising can only merge two data sets into one account (codes `01` and `1` are one number),
never split one: the direction that cannot under-count a lifetime budget.

A hash has two 64-bit lanes (SplitMix64's finaliser mixes each step). Text is hashed eight
bytes at a time, gathered straight from arrow's value buffer: a string of L bytes costs
⌈L/8⌉ vectorised steps, each over only the strings that long.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

NUMBER = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"
_SEED = {  # per kind and lane, so that a number and a text never share a hash by design
    "missing": (0x6A09E667F3BCC908, 0xBB67AE8584CAA73B),
    "number": (0x3C6EF372FE94F82B, 0xA54FF53A5F1D36F1),
    "text": (0x510E527FADE682D1, 0x9B05688C2B3E6C1F),
}


def mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser on a uint64 array (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    mixed: np.ndarray = z ^ (z >> np.uint64(31))
    return mixed


def _seeded(kind: str, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a, b = (np.uint64(seed) for seed in _SEED[kind])
    return mix(values ^ a), mix(mix(values ^ b) ^ a)


def _numbers(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lanes of finite float64 values (−0.0 becomes 0.0)."""
    canonical = np.ascontiguousarray(values, dtype=np.float64) + 0.0
    return _seeded("number", canonical.view(np.uint64))


LONG_TEXT = 256
"""Longer strings are hashed one by one (BLAKE2b in C): the vectorised loop takes a step per
eight bytes of the longest string, and one 50 MB cell would take six million steps."""


def _texts(strings: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Lanes of the UTF-8 bytes of each (non-null) string of a string array."""
    strings = strings.cast(pa.large_string()) if pa.types.is_string(strings.type) else strings
    n = len(strings)
    offsets_buffer, data_buffer = strings.buffers()[1:3]
    offsets = np.frombuffer(offsets_buffer, dtype=np.int64)[strings.offset : strings.offset + n + 1]
    lengths = (offsets[1:] - offsets[:-1]).astype(np.int64)
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0)
    a, b = _seeded("text", lengths.astype(np.uint64))
    long = np.flatnonzero(lengths > LONG_TEXT)
    for index in long.tolist():
        digest = hashlib.blake2b(
            data[offsets[index] : offsets[index + 1]].tobytes(), digest_size=16, person=b"dpr-text"
        ).digest()
        low, high = np.frombuffer(digest, dtype="<u8")
        a[index], b[index] = mix(a[index : index + 1] ^ low)[0], mix(b[index : index + 1] ^ high)[0]
    short = lengths <= LONG_TEXT
    first, last = int(offsets[0]), int(offsets[-1])
    padded = np.zeros(last - first + 8, dtype=np.uint8)  # eight spare bytes for the last word
    padded[: last - first] = data[first:last]
    start = offsets[:-1] - first
    chunk = 0
    active = np.flatnonzero(short & (lengths > 0))
    while active.size:
        where = start[active] + 8 * chunk
        words = padded[where[:, None] + np.arange(8)].view("<u8").ravel()
        left = lengths[active] - 8 * chunk
        keep = np.minimum(left, 8).astype(np.uint64) * np.uint64(8)
        mask = np.where(keep >= 64, np.uint64(0xFFFFFFFFFFFFFFFF), (np.uint64(1) << keep) - 1)
        word = words & mask
        step = np.uint64((0x9E3779B97F4A7C15 * (chunk + 1)) % 2**64)
        a[active] = mix(a[active] ^ word ^ step)
        with np.errstate(over="ignore"):
            b[active] = mix(b[active] + (word ^ a[active]))
        chunk += 1
        active = active[left > 8]
    return a, b


def _bits(array: pa.Array, buffer: int = 1) -> np.ndarray:
    """A boolean array's values (or, with buffer=0, any array's validity) as numpy bools, read
    from arrow's bitmap: pyarrow's own to_numpy (and any Python scalar handed to a compute
    function) imports pandas, a second of start-up for every charged CLI release."""
    bitmap = array.buffers()[buffer]
    if bitmap is None:  # no validity bitmap: every value is valid
        return np.ones(len(array), dtype=bool)
    bits = np.unpackbits(np.frombuffer(bitmap, dtype=np.uint8), bitorder="little")
    return bits[array.offset : array.offset + len(array)].astype(bool)


def _values(array: pa.Array) -> np.ndarray:
    """A boolean array's true values (null is false)."""
    values: np.ndarray = _bits(array) & _bits(array, 0)
    return values


def _floats(array: pa.Array) -> np.ndarray:
    """A float64 array's values, NaN where null, read from its buffers."""
    data = np.frombuffer(array.buffers()[1], dtype=np.float64)[
        array.offset : array.offset + len(array)
    ]
    return np.where(_bits(array, 0), data, np.nan) if array.null_count else data


def _mask(flags: np.ndarray) -> pa.Array:
    """A numpy bool array as an arrow boolean array, built on its packed bits (no pandas)."""
    packed = np.packbits(flags, bitorder="little")
    return pa.Array.from_buffers(pa.bool_(), len(flags), [None, pa.py_buffer(packed)])


def _lengths(text: pa.Array) -> np.ndarray:
    kind = np.int64 if pa.types.is_large_string(text.type) else np.int32
    offsets = np.frombuffer(text.buffers()[1], dtype=kind)[
        text.offset : text.offset + len(text) + 1
    ]
    return np.diff(offsets)


def _text_column(column: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Lanes of a string column: trimmed, NFC, missing and numbers recognised."""
    text = pc.utf8_trim_whitespace(column)
    if not _values(pc.string_is_ascii(text)).all():
        text = pc.utf8_normalize(text, "NFC")
    missing = ~_bits(text, 0) | (_lengths(text) == 0)
    missing |= _values(pc.match_like(text, "nan", ignore_case=True))
    is_number = ~missing & _values(pc.match_substring_regex(text, NUMBER))
    is_text = ~missing & ~is_number
    a, b = _seeded("missing", np.zeros(len(column), dtype=np.uint64))
    if is_number.any():
        where = np.flatnonzero(is_number)
        values = _floats(pc.cast(pc.array_filter(text, _mask(is_number)), pa.float64()))
        finite = np.isfinite(values)  # 1e400 overflows: it stays its text
        a[where[finite]], b[where[finite]] = _numbers(values[finite])
        is_text[where[~finite]] = True
    if is_text.any():
        where = np.flatnonzero(is_text)
        a[where], b[where] = _texts(pc.array_filter(text, _mask(is_text)))
    return a, b


def _constant_texts(words: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Lanes of a few fixed words, from a string array built on numpy buffers."""
    data = "".join(words).encode("utf-8")
    offsets = np.cumsum([0] + [len(w.encode("utf-8")) for w in words], dtype=np.int64)
    array = pa.Array.from_buffers(
        pa.large_string(), len(words), [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )
    return _texts(array)


def _number_column(column: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Lanes of a numeric column: NaN and null are missing, infinities their text."""
    values = _floats(pc.cast(column, pa.float64()))
    a, b = _seeded("missing", np.zeros(len(column), dtype=np.uint64))
    finite = np.isfinite(values)
    a[finite], b[finite] = _numbers(values[finite])
    infinite = np.isinf(values)
    if infinite.any():
        words_a, words_b = _constant_texts(["inf", "-inf"])
        negative = (values[infinite] < 0).astype(np.int64)
        a[infinite], b[infinite] = words_a[negative], words_b[negative]
    return a, b


def _boolean_column(column: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    words_a, words_b = _constant_texts(["false", "true"])
    a, b = _seeded("missing", np.zeros(len(column), dtype=np.uint64))
    valid = _bits(column, 0)
    value = _bits(column).astype(np.int64)
    a[valid], b[valid] = words_a[value[valid]], words_b[value[valid]]
    return a, b


def cell_lanes(column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Two uint64 lanes per row: the hash of each cell's canonical value (no column name)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    kind = column.type
    if pa.types.is_dictionary(kind):
        a, b = cell_lanes(column.dictionary)
        indices = pc.cast(column.indices, pa.int64())
        raw = np.frombuffer(indices.buffers()[1], dtype=np.int64)
        raw = raw[indices.offset : indices.offset + len(indices)]
        valid = _bits(column, 0)
        safe = np.where(valid, raw, 0)
        none_a, none_b = _seeded("missing", np.zeros(1, dtype=np.uint64))
        return np.where(valid, a[safe], none_a[0]), np.where(valid, b[safe], none_b[0])
    if pa.types.is_null(kind):
        return _seeded("missing", np.zeros(len(column), dtype=np.uint64))
    if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind):
        return _number_column(column)
    if pa.types.is_boolean(kind):
        return _boolean_column(column)
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        column = _as_text(column)
    return _text_column(column)


def _as_text(column: pa.Array) -> pa.Array:
    """Arrow's text of a value (dates, times, binary); Python's for what arrow cannot cast."""
    try:
        return column.cast(pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return pa.array([None if v is None else str(v) for v in column.to_pylist()], pa.string())
