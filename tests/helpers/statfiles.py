"""Stata, SPSS and SAS transport files written in the test with pyreadstat's writers (issue 36),
beside the CSV of the same records and a plan that counts them."""

from __future__ import annotations

from pathlib import Path

ROWS = 300
SEX = {1: "Male", 2: "Female"}
REGION = {1: "North", 2: "South", 3: "East", 4: "West"}
WRITERS = {"dta": "write_dta", "sav": "write_sav", "xpt": "write_xport"}

PLAN = """\
version: 1
unit: {kind: row}
columns:
  sex: {kind: categorical, domain: [1, 2], labels: {'1': Male, '2': Female},
        domain_source: value_labels}
  region: {kind: categorical, domain: [1, 2, 3, 4]}
  age: {kind: numeric, bins: [0, 18, 65, 120]}
tables:
  - {name: sex_by_region, by: [sex, region]}
  - {name: age, by: [age]}
budget: {epsilon: 1.0}
"""


def survey_frame(rows: int = ROWS):  # -> pandas.DataFrame
    """Codes as Stata and SPSS store them (float64), a float share, text with a blank."""
    import numpy as np
    import pandas as pd

    index = np.arange(rows)
    return pd.DataFrame(
        {
            "sex": (1 + index % 2).astype(np.float64),
            "region": (1 + (index * 7) % 4).astype(np.float64),
            "age": ((index * 13) % 90).astype(np.float64),
            "share": np.where(index % 5 == 0, np.nan, (index % 10) / 10 + 0.25),
            "city": [["Springfield", "", "Zürich"][i % 3] for i in index],
        }
    )


def csv_text(frame) -> bytes:
    """The same records as a statistician's CSV export writes them: 34 not 34.0."""
    lines = [",".join(frame.columns)]
    for row in frame.itertuples(index=False):
        cells = []
        for value in row:
            if isinstance(value, float):
                cells.append("" if value != value else f"{value:g}")
            else:
                cells.append(str(value))
        lines.append(",".join(cells))
    return ("\n".join(lines) + "\n").encode("utf-8")


def write(folder: Path, suffix: str, frame=None) -> Path:
    """The survey in one format (dta, sav, xpt, csv); value labels where the format has them."""
    import pyreadstat

    frame = survey_frame() if frame is None else frame
    path = folder / f"survey.{suffix}"
    if suffix == "csv":
        path.write_bytes(csv_text(frame))
        return path
    options: dict[str, object] = {"column_labels": {"age": "Age in years", "sex": "Sex"}}
    if suffix != "xpt":  # a transport file has no value labels
        options["variable_value_labels"] = {"sex": SEX, "region": REGION}
    getattr(pyreadstat, WRITERS[suffix])(frame, str(path), **options)
    return path
