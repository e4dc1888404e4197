"""CONFIDENTIAL input of a statistic: each kept row's group (cell) and value.

The data pipeline makes it after encoding and the unit cap: `cells[i]` is row i's flat cell
index over the statistic's by-columns (C order, as `dprelease.data.count` numbers cells; −1
when the row is left out of the table), `values[i]` its value of the statistic's column as a
float (NaN when missing: such a row is left out of the statistic). Nothing here is ever
exported; only the noisy outputs of `quantile`, `sums` and `discovery` leave the library.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from dprelease.errors import InternalError


@dataclass(frozen=True, repr=False)
class StatData:
    """Rows of one statistic: group index and value (CONFIDENTIAL; repr shows sizes only)."""

    cells: np.ndarray
    values: np.ndarray
    n_cells: int

    def __post_init__(self) -> None:
        if self.cells.shape != self.values.shape or self.cells.ndim != 1:
            raise InternalError("cells and values must be 1-d arrays of the same length")
        if self.n_cells < 1 or (self.cells.size and int(self.cells.max()) >= self.n_cells):
            raise InternalError("a cell index lies outside the statistic's cells")

    def __repr__(self) -> str:
        return f"StatData(<{self.cells.size} confidential rows>, n_cells={self.n_cells})"

    @classmethod
    def ungrouped(cls, values: np.ndarray) -> StatData:
        """One group holding every row (a statistic with `by: []`)."""
        values = np.asarray(values, dtype=np.float64)
        return cls(np.zeros(values.size, dtype=np.int64), values, 1)

    def kept(self) -> tuple[np.ndarray, np.ndarray]:
        """(cells, values) of the rows in the statistic: in a cell and with a value."""
        mask = (self.cells >= 0) & ~np.isnan(self.values)
        return self.cells[mask], self.values[mask]

    def groups(self) -> Iterator[np.ndarray]:
        """Each cell's values, in cell order (an empty array for an empty cell)."""
        cells, values = self.kept()
        order = np.argsort(cells, kind="stable")
        bounds = np.searchsorted(cells[order], np.arange(self.n_cells + 1))
        for cell in range(self.n_cells):
            yield values[order[bounds[cell] : bounds[cell + 1]]]
