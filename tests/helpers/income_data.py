"""A small ACS-like data set whose income column has `N` and empty values (issue 24, point 5):
STATE codes with codebook labels, PINCP numbers, some above 200,000, about 1 in 6 not a number."""

from __future__ import annotations

import re
from typing import Any

ROWS = 3000


def _income(i: int) -> str:
    if i % 7 == 3:
        return "N"  # not applicable, as the ACS writes it
    if i % 13 == 0:
        return ""  # missing
    return str((i * 137) % 260_000)  # some above the bounds' 200,000


def income_rows() -> list[tuple[str, str]]:
    return [(["01", "06"][i % 2], _income(i)) for i in range(ROWS)]


INCOME_CSV = ("STATE,PINCP\n" + "".join(f"{s},{p}\n" for s, p in income_rows())).encode()
NO_NUMBER = sum(1 for _, p in income_rows() if p in ("N", ""))  # rows with no number
ABOVE = sum(1 for _, p in income_rows() if p not in ("N", "") and float(p) > 200_000)
STATE_LABELS = {"01": "Alabama", "06": "California"}


def income_plan(**stat: Any) -> dict[str, Any]:
    """A median of PINCP per STATE (labelled), bounds [0, 200000], plus `stat` keys."""
    return {
        "version": 1,
        "columns": {
            "STATE": {"kind": "categorical", "domain": ["01", "06"], "labels": STATE_LABELS}
        },
        "tables": [
            {
                "name": "median_income",
                "by": ["STATE"],
                "stat": {"quantile": 0.5, "column": "PINCP", "bounds": [0, 200000], **stat},
            }
        ],
        "budget": {"accounting": "pure", "epsilon": 1.0},
    }


def assert_no_count(text: str, *counts: int) -> None:
    """None of these confidential counts appears as a number of its own in a released text
    (written plainly or with thousands separators; digits inside another number do not count)."""
    for count in counts:
        for written in {str(count), f"{count:,}"}:
            assert not re.search(rf"(?<![\d.,]){re.escape(written)}(?![\d]|[.,]\d)", text), count
