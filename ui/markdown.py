"""Text from users (names, file names, values, error messages that quote them) as Markdown
that Streamlit shows literally.

Streamlit renders labels, alerts, captions, expander and tab labels, radio options and
`st.table` cells as Markdown: a column called ``![x](http://host/x.png)`` would make every
viewer's browser fetch that address. `md` escapes it; every page and helper that puts a
user-supplied string into Markdown goes through it, and every static table is drawn by
`static_table`, which escapes each header and text cell (no page calls `st.table` itself).
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import streamlit as st

from dprelease.errors import DPReleaseError

# What starts Markdown or Streamlit syntax anywhere in a line: links and images ([ ] !),
# autolinks and HTML (< > &), emphasis and code (* _ ~ `), tables (|), math ($), directives
# and icons (:), escapes themselves (\\), and braces. Plain prose punctuation (' " , . ; ( ) -)
# stays as it is, so messages read the same in the source.
_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|~$:!&+])")
_LINE_START = re.compile(r"^(\s*\d*)([-=.)])")  # "- ", "1. ", "2) ": lists; "=": a heading line
_LINE_BREAKS = re.compile(r"[\r\n]+")


def md(text: object) -> str:
    """`text` as literal Markdown: the characters that start Markdown or Streamlit syntax are
    backslash-escaped (CommonMark shows an escaped character as itself), line breaks become
    spaces, and a leading list or heading marker is escaped.

    That disarms links, images, autolinks, HTML, emphasis, code, tables, headings, lists, and
    Streamlit's own `:color[...]`, `:material/...:` and `$math$` directives.
    """
    flat = _SPECIAL.sub(r"\\\1", _LINE_BREAKS.sub(" ", str(text)))
    return _LINE_START.sub(r"\1\\\2", flat)


def md_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A frame for `st.table`, which renders every cell and header as Markdown: headers and
    text cells escaped (numbers and missing values stay as they are, and are shown as such)."""
    out = frame.astype(object).map(_md_cell)  # a categorical would map its whole dictionary
    out.columns = [md(name) for name in frame.columns]
    return out


def _md_cell(value: object) -> object:
    if value is None or isinstance(value, numbers.Number | np.bool_):  # NaN is a float
        return value
    return md(value)


def static_table(data: pd.DataFrame | Sequence[Mapping[str, object]]) -> None:
    """`st.table` (static: no download button) with every header and text cell escaped; the
    one way a page draws a static table."""
    frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame(list(data))
    st.table(md_frame(frame))


def md_problems(problems: Sequence[str], then: str = "") -> str:
    """Every problem as literal Markdown: one line, or a list (never "and N more"), followed
    by `then` (e.g. "Nothing was changed.")."""
    if len(problems) == 1:
        return f"{md(problems[0])} {then}".strip()
    lines = "\n".join(f"- {md(problem)}" for problem in problems)
    return f"{len(problems)} problems. {then}".strip() + "\n\n" + lines


def md_error(error: DPReleaseError, then: str = "") -> str:
    """A refusal with every problem it found."""
    return md_problems(error.problems if len(error.problems) > 1 else [str(error)], then)


def md_lines(text: str, then: str = "") -> str:
    """Problems given one per line (`ui.state.current_plan`'s message)."""
    return md_problems(text.splitlines() or [text], then)
