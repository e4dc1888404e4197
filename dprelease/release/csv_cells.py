"""CSV text that a spreadsheet opens as data, never as formulas, whatever its locale.

Two habits make a cell a formula: a leading `=`, `+`, `-`, `@`, tab or carriage return
(`csv_safe` puts a `'` before it), and a separator the writer did not quote: Excel in a locale
whose list separator is `;` splits an unquoted `x;=1+1` into `x` and `=1+1` and evaluates the
second. `csv_bytes` therefore quotes every cell that holds a separator of any common locale
(`,` `;` tab `|`), a quote or a line break, not only the file's own `,`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
NEEDS_QUOTES = frozenset(',;\t|"\r\n')


def csv_safe(text: str) -> str:
    """Text that a spreadsheet will not run as a formula: a leading ' where needed."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def csv_cell(text: str) -> str:
    """One cell, quoted (quotes doubled) when it holds a separator, a quote or a line break."""
    if NEEDS_QUOTES.isdisjoint(text):
        return text
    return '"' + text.replace('"', '""') + '"'


def csv_line(row: Sequence[str]) -> str:
    """One row of already formula-safe cells, `,`-separated (no line break)."""
    line = ",".join(map(csv_cell, row))
    return line if line or len(row) != 1 else '""'  # one empty cell, not no cell


def csv_bytes(rows: Iterable[Sequence[str]]) -> bytes:
    """Rows of already formula-safe cells as UTF-8 CSV text, `,`-separated, one `\\n` a row."""
    lines = [csv_line(row) for row in rows]
    return "".join(line + "\n" for line in lines).encode("utf-8")
