"""Cells as 64-bit hashes of their canonical value, whole columns at a time (pyarrow compute
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

A hash is 64 bits (SplitMix64's finaliser mixes each step): two different cells share one
with probability 2^-64, and a shared hash could only merge two accounts, never split one.
Text columns are dictionary-encoded first (arrow's hash table, in C++), so each distinct text
is hashed once; text is hashed eight
bytes at a time, read straight from arrow's value buffer as overlapping 64-bit words: a string
of L bytes costs ⌈L/8⌉ vectorised steps, each over only the strings that long.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

NUMBER = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"
_SEED = {  # per kind, so that a number and a text never share a hash by design
    "number": np.uint64(0x3C6EF372FE94F82B),
    "text": np.uint64(0x510E527FADE682D1),
}
MISSING = np.uint64(0x6A09E667F3BCC908)  # the hash of every missing cell


def mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser on a uint64 array (wrapping arithmetic), into a new array."""
    return mix_in_place(z.copy())


MIX_BLOCK = 1 << 14
"""`mix_in_place` works in blocks this long: the block and one scratch array stay in the
CPU's cache through the five steps (measured 30% faster than whole-array steps at 1 M)."""


def mix_in_place(z: np.ndarray) -> np.ndarray:
    """`mix` on an array of our own (a temporary): no copy."""
    scratch = np.empty(min(len(z), MIX_BLOCK), dtype=np.uint64)
    for begin in range(0, len(z), MIX_BLOCK):
        block = z[begin : begin + MIX_BLOCK]
        spare = scratch[: len(block)]
        np.right_shift(block, np.uint64(30), out=spare)
        block ^= spare
        np.multiply(block, np.uint64(0xBF58476D1CE4E5B9), out=block)
        np.right_shift(block, np.uint64(27), out=spare)
        block ^= spare
        np.multiply(block, np.uint64(0x94D049BB133111EB), out=block)
        np.right_shift(block, np.uint64(31), out=spare)
        block ^= spare
    return z


def _numbers(values: np.ndarray) -> np.ndarray:
    """Hashes of finite float64 values (−0.0 becomes 0.0)."""
    canonical = np.ascontiguousarray(values, dtype=np.float64) + 0.0  # a new array
    bits = canonical.view(np.uint64)
    bits ^= _SEED["number"]
    return mix_in_place(bits)


LONG_TEXT = 256
"""Longer strings are hashed one by one (BLAKE2b in C): the vectorised loop takes a step per
eight bytes of the longest string, and one 50 MB cell would take six million steps."""


def _texts(strings: pa.Array, offsets: np.ndarray | None = None) -> np.ndarray:
    """Hashes of the UTF-8 bytes of each (non-null) string of a string array (`offsets`: its
    `_offsets`, when the caller has them).

    A string of L bytes is ⌈L/8⌉ steps: step c adds the little-endian word of bytes 8c..8c+7
    (the last one cut to the string's own bytes) plus a constant of c, xors the hash so far
    and mixes. Strings are taken a length at a time, so that each step is one vectorised pass
    over the strings of that length with no per-step masks (identifiers are one length)."""
    if offsets is None:
        offsets = _offsets(strings)
    data_buffer = strings.buffers()[2]
    lengths = offsets[1:] - offsets[:-1]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0)
    a: np.ndarray = lengths.astype(np.uint64)
    a ^= _SEED["text"]
    mix_in_place(a)
    shortest, longest = (int(lengths.min()), int(lengths.max())) if len(lengths) else (0, 0)
    for index in np.flatnonzero(lengths > LONG_TEXT).tolist() if longest > LONG_TEXT else ():
        digest = hashlib.blake2b(
            data[offsets[index] : offsets[index + 1]].tobytes(), digest_size=8, person=b"dpr-text"
        ).digest()
        a[index] = mix(a[index : index + 1] ^ np.frombuffer(digest, dtype="<u8"))[0]
    first, last = int(offsets[0]), int(offsets[-1])
    padded = np.zeros(last - first + 8, dtype=np.uint8)  # eight spare bytes for the last word
    padded[: last - first] = data[first:last]
    # Every byte offset as the start of a little-endian 64-bit word (overlapping, unaligned).
    words_at = np.ndarray((last - first + 1,), dtype="<u8", buffer=padded, strides=(1,))
    start = offsets[:-1] - first if first else offsets[:-1]
    if shortest == longest:  # one length (identifiers): no grouping by length
        if 0 < shortest <= LONG_TEXT:
            a = _steps(a, words_at, start, shortest)
        return a
    counts = np.bincount(np.minimum(lengths, LONG_TEXT + 1), minlength=LONG_TEXT + 2)
    for length in np.flatnonzero(counts[1 : LONG_TEXT + 1]).tolist():
        length += 1
        rows = np.flatnonzero(lengths == length)
        a[rows] = _steps(a[rows], words_at, start[rows], length)
    return a


def _steps(hashes: np.ndarray, words_at: np.ndarray, start: np.ndarray, length: int) -> np.ndarray:
    """`_texts`'s steps over strings of one length (a new array)."""
    for chunk in range((length + 7) // 8):
        word = words_at[start + 8 * chunk if chunk else start]  # a gather: a new array
        left = length - 8 * chunk
        if left < 8:  # the last word of a string: only its own bytes
            word &= np.uint64((1 << (8 * left)) - 1)
        with np.errstate(over="ignore"):
            word += np.uint64((0x9E3779B97F4A7C15 * (chunk + 1)) % 2**64)
        word ^= hashes
        hashes = mix_in_place(word)
    return hashes


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


def _offsets(text: pa.Array) -> np.ndarray:
    """A string array's value offsets (n + 1 of them) as int64, read from its buffer."""
    kind = np.int64 if pa.types.is_large_string(text.type) else np.int32
    raw = np.frombuffer(text.buffers()[1], dtype=kind)[text.offset : text.offset + len(text) + 1]
    return raw.astype(np.int64, copy=False)


_NUMBER_START = np.zeros(256, dtype=bool)
_NUMBER_START[list(b"0123456789+-.")] = True  # what a plain decimal number can start with


def _first_bytes(text: pa.Array, offsets: np.ndarray) -> np.ndarray:
    """Each string's first byte (0 for an empty one); `offsets` are the array's `_offsets`."""
    data_buffer = text.buffers()[2]
    if data_buffer is None or len(data_buffer) == 0:
        return np.zeros(len(text), dtype=np.uint8)
    data = np.frombuffer(data_buffer, dtype=np.uint8)
    starts = np.minimum(offsets[:-1], len(data) - 1)
    first: np.ndarray = np.where(offsets[1:] > offsets[:-1], data[starts], 0).astype(np.uint8)
    return first


def _byte_range(text: pa.Array, offsets: np.ndarray) -> tuple[int, int]:
    """The smallest and largest byte of a string array's values ((33, 0) when none): all
    ASCII when the largest is below 128 (then NFC changes nothing), no white space anywhere
    when the smallest is above 32 (then trimming, a copy of every value, is skipped).
    `offsets` are the array's `_offsets`."""
    data_buffer = text.buffers()[2]
    if data_buffer is None or offsets[-1] == offsets[0]:
        return 33, 0
    data = np.frombuffer(data_buffer, dtype=np.uint8)[offsets[0] : offsets[-1]]
    return int(data.min()), int(data.max())


def _matches(
    text: pa.Array, candidates: np.ndarray, match: Callable[[pa.Array], pa.Array]
) -> np.ndarray:
    """Where `match` holds, asked only of the candidate strings (a regex costs per value)."""
    found = np.zeros(len(text), dtype=bool)
    if candidates.any():
        found[np.flatnonzero(candidates)] = _values(match(pc.array_filter(text, _mask(candidates))))
    return found


def _text_column(column: pa.Array) -> np.ndarray:
    """Lanes of a string column: trimmed, NFC, missing and numbers recognised."""
    offsets = _offsets(column)  # read once (a copy as int64): the steps below share them
    smallest, largest = _byte_range(column, offsets)
    plain = smallest > 32 and largest < 128
    text = column if plain else pc.utf8_trim_whitespace(column)
    if largest >= 128:
        text = pc.utf8_normalize(text, "NFC")
    if not plain:
        offsets = _offsets(text)
    lengths = offsets[1:] - offsets[:-1]
    missing = ~_bits(text, 0) | (lengths == 0)
    missing |= _matches(
        text, ~missing & (lengths == 3), lambda t: pc.match_like(t, "nan", ignore_case=True)
    )
    candidates = ~missing & _NUMBER_START[_first_bytes(text, offsets)]
    is_number = _matches(text, candidates, lambda t: pc.match_substring_regex(t, NUMBER))
    is_text = ~missing & ~is_number
    hashes = np.full(len(column), MISSING, dtype=np.uint64)
    if is_number.any():
        where = np.flatnonzero(is_number)
        values = _floats(pc.cast(pc.array_filter(text, _mask(is_number)), pa.float64()))
        finite = np.isfinite(values)  # 1e400 overflows: it stays its text
        hashes[where[finite]] = _numbers(values[finite])
        is_text[where[~finite]] = True
    if is_text.all():
        return _texts(text, offsets)
    if is_text.any():
        hashes[is_text] = _texts(pc.array_filter(text, _mask(is_text)))
    return hashes


def _constant_texts(words: list[str]) -> np.ndarray:
    """Hashes of a few fixed words, from a string array built on numpy buffers."""
    data = "".join(words).encode("utf-8")
    offsets = np.cumsum([0] + [len(w.encode("utf-8")) for w in words], dtype=np.int64)
    array = pa.Array.from_buffers(
        pa.large_string(), len(words), [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )
    return _texts(array)


def _number_column(column: pa.Array) -> np.ndarray:
    """Hashes of a numeric column: NaN and null are missing, infinities their text."""
    if pa.types.is_integer(column.type):
        return _integer_column(column)
    values = _floats(pc.cast(column, pa.float64()))
    finite = np.isfinite(values)
    if finite.all():
        return _numbers(values)
    hashes = np.full(len(column), MISSING, dtype=np.uint64)
    hashes[finite] = _numbers(values[finite])
    infinite = np.isinf(values)
    if infinite.any():
        words = _constant_texts(["inf", "-inf"])
        hashes[infinite] = words[(values[infinite] < 0).astype(np.int64)]
    return hashes


def _integer_column(column: pa.Array) -> np.ndarray:
    """Hashes of an integer column, converted to float64 by numpy from arrow's buffer (no
    infinities to look for; −0.0 cannot occur). Beyond 2^53 an integer rounds to the nearest
    float64, as its text does in a CSV: two such neighbours merge into one value (the safe
    direction), where arrow's checked cast would refuse the column."""
    kind = column.type
    dtype = np.dtype(f"{'i' if pa.types.is_signed_integer(kind) else 'u'}{kind.bit_width // 8}")
    raw = np.frombuffer(column.buffers()[1], dtype=dtype)[
        column.offset : column.offset + len(column)
    ]
    canonical = raw.astype(np.float64)  # a new array of our own
    bits = canonical.view(np.uint64)
    bits ^= _SEED["number"]
    hashes = mix_in_place(bits)
    if column.null_count:
        hashes[~_bits(column, 0)] = MISSING
    return hashes


def _boolean_column(column: pa.Array) -> np.ndarray:
    words = _constant_texts(["false", "true"])
    hashes = np.full(len(column), MISSING, dtype=np.uint64)
    valid = _bits(column, 0)
    hashes[valid] = words[_bits(column).astype(np.int64)[valid]]
    return hashes


def cell_hashes(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """A uint64 per row: the hash of each cell's canonical value (no column name)."""
    if isinstance(column, pa.ChunkedArray):
        if column.num_chunks == 0:
            return np.zeros(0, dtype=np.uint64)
        if column.num_chunks <= 4:  # large chunks (row groups): each on its own, no copy
            return np.concatenate([cell_hashes(chunk) for chunk in column.chunks])
        column = column.combine_chunks()  # many small blocks (a CSV's) cost per block
    kind = column.type
    if pa.types.is_dictionary(kind):
        values = column.dictionary
        text = pa.types.is_string(values.type) or pa.types.is_large_string(values.type)
        distinct = _text_column(values) if text else cell_hashes(values)
        indices = column.indices.cast(pa.int64())
        raw = np.frombuffer(indices.buffers()[1], dtype=np.int64)
        raw = raw[indices.offset : indices.offset + len(indices)]
        if not column.null_count:
            return distinct[raw]
        if not len(distinct):  # every value null: nothing to look up
            return np.full(len(column), MISSING, dtype=np.uint64)
        valid = _bits(column, 0)
        return np.where(valid, distinct[np.where(valid, raw, 0)], MISSING)
    if pa.types.is_null(kind):
        return np.full(len(column), MISSING, dtype=np.uint64)
    if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind):
        return _number_column(column)
    if pa.types.is_boolean(kind):
        return _boolean_column(column)
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        column = _as_text(column)
    if _mostly_distinct(column):
        return _text_column(column)
    return cell_hashes(pc.dictionary_encode(column))  # each distinct text hashed once


def _mostly_distinct(column: pa.Array, sample: int = 4096) -> bool:
    """Whether over a quarter of a sample's values are distinct (an identifier, free text):
    then encoding the column first costs more than hashing every value (measured on 1 M
    household ids, 40% distinct: 114 ms hashed directly, 218 ms encoded first)."""
    head = column.slice(0, sample)
    return len(head) >= 64 and len(pc.unique(head)) > len(head) // 4


def _as_text(column: pa.Array) -> pa.Array:
    """Arrow's text of a value (dates, times, binary); Python's for what arrow cannot cast."""
    try:
        return column.cast(pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return pa.array([None if v is None else str(v) for v in column.to_pylist()], pa.string())
