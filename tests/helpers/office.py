"""A small codebook-coded person file, its codebook and its plan: the cross-feature matrix's
data set (issue 24). Every feature on one plan: codes with leading zeros, `N` for "not
applicable", a PUMA → STATE hierarchy, code labels and bin labels, a median income by state,
a discovered domain and a household id unit.

Seeded numpy, 3,000 rows by default (fast enough to run through every engine and format).
The columns imitate an ACS person file:

| column   | what                                                              |
|----------|-------------------------------------------------------------------|
| SERIALNO | household id (1 to 5 persons); the plan's `unit: {kind: id}`       |
| STATE    | FIPS codes with leading zeros ('01', '06', ...), labelled          |
| PUMA     | 7-digit state + PUMA codes, nested in STATE through `parent_map`   |
| SEX      | 1 / 2, labelled                                                    |
| RAC1P    | 1 … 9, labelled                                                    |
| ESR      | 1 … 6 or N (under 16: not applicable), labelled                    |
| AGEP     | age 0 … 94, numeric, binned, each bin labelled                     |
| PINCP    | person income, or N (under 15: not applicable); the median's column |
| LANP     | language code; its domain is discovered (`domain: {discover:}`)   |
"""

from __future__ import annotations

import csv
import io
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from dprelease.plan.yaml_text import plan_yaml

STATES = {"01": "Alabama", "06": "California", "13": "Georgia", "36": "New York", "48": "Texas"}
PUMAS = {  # PUMA code -> (state, label)
    "0100100": ("01", "Mobile County (South)"),
    "0100200": ("01", "Birmingham City"),
    "0603701": ("06", "Los Angeles County (Central)"),
    "0603702": ("06", "Los Angeles County (West)"),
    "0607500": ("06", "San Francisco County"),
    "1301100": ("13", "Atlanta City"),
    "1304600": ("13", "Savannah City"),
    "3603801": ("36", "NYC-Manhattan District 1"),
    "3603802": ("36", "NYC-Manhattan District 2"),
    "4804601": ("48", "Houston City (North)"),
    "4804602": ("48", "Houston City (South)"),
    "4804800": ("48", "Austin City"),
}
SEXES = {"1": "Male", "2": "Female"}
RACES = {
    "1": "White alone",
    "2": "Black or African American alone",
    "3": "American Indian alone",
    "4": "Alaska Native alone",
    "5": "American Indian and Alaska Native tribes specified",
    "6": "Asian alone",
    "7": "Native Hawaiian and Other Pacific Islander alone",
    "8": "Some Other Race alone",
    "9": "Two or More Races",
}
ESRS = {
    "1": "Civilian employed, at work",
    "2": "Civilian employed, with a job but not at work",
    "3": "Unemployed",
    "4": "Armed forces, at work",
    "5": "Armed forces, with a job but not at work",
    "6": "Not in labor force",
    "N": "N/A (less than 16 years old)",
}
AGE_BINS = [0, 18, 35, 65, 100]
AGE_LABELS = ["Under 18", "18 to 34", "35 to 64", "65 and over"]
LANGUAGES = ["1200", "1210", "1970", "2050", "2270", "2920", "4500", "7300"]
INCOME_BOUNDS = [0, 300000]
MAX_ROWS = 4  # rows per household counted (the unit cap); households have 1 to 5 persons
CODE_LABELLED = ("STATE", "PUMA", "SEX", "RAC1P", "ESR")
"""The plan's columns with code labels: each is followed by `C_label` in every released CSV
(and AGEP too, when its bins are labelled)."""
LABELLED = (*CODE_LABELLED, "AGEP")
"""Every labelled column of `office_plan()`: codes and AGEP's bins."""
AGE_BIN_LABELS = {
    f"[{a}, {b})" if b != AGE_BINS[-1] else f"[{a}, {b}]": label
    for (a, b), label in zip(pairwise(AGE_BINS), AGE_LABELS, strict=True)
}
"""AGEP's bin codes (as released) and their labels."""
DISCOVERED = "LANP"
STATISTIC = "median_income_by_state"


def office_rows(rows: int = 3000, seed: int = 24) -> dict[str, list[Any]]:
    """The person file's columns (text codes; AGEP an int; PINCP an int or 'N')."""
    rng = np.random.default_rng(seed)
    sizes: list[int] = []
    while sum(sizes) < rows:
        sizes.append(int(rng.choice([1, 2, 3, 4, 5], p=[0.28, 0.34, 0.16, 0.14, 0.08])))
    sizes[-1] -= sum(sizes) - rows
    puma_codes = list(PUMAS)
    weights = np.linspace(2.0, 1.0, len(puma_codes))  # every PUMA well filled, unequally
    household_puma = rng.choice(puma_codes, size=len(sizes), p=weights / weights.sum())
    household = np.repeat(np.arange(len(sizes)), sizes)
    puma = household_puma[household]
    age = rng.integers(0, 95, size=rows)
    income = np.round(rng.lognormal(10.4, 0.8, size=rows), -2).astype(int)
    esr = rng.choice(
        ["1", "2", "3", "4", "5", "6"], size=rows, p=[0.5, 0.03, 0.05, 0.01, 0.01, 0.4]
    )
    language = rng.choice(LANGUAGES, size=rows, p=[0.5, 0.2, 0.1, 0.08, 0.06, 0.03, 0.02, 0.01])
    return {
        "SERIALNO": [f"2023HU{h:07d}" for h in household.tolist()],
        "STATE": [PUMAS[p][0] for p in puma.tolist()],
        "PUMA": puma.tolist(),
        "SEX": rng.choice(["1", "2"], size=rows).tolist(),
        "RAC1P": rng.choice(
            list(RACES), size=rows, p=[0.6, 0.13, 0.02, 0.01, 0.01, 0.07, 0.01, 0.07, 0.08]
        ).tolist(),
        "ESR": ["N" if a < 16 else e for a, e in zip(age.tolist(), esr.tolist(), strict=True)],
        "AGEP": age.tolist(),
        "PINCP": ["N" if a < 15 else i for a, i in zip(age.tolist(), income.tolist(), strict=True)],
        "LANP": language.tolist(),
    }


def write_csv(columns: dict[str, list[Any]], path: Path) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        writer.writerows(zip(*columns.values(), strict=True))
    return path


def _arrow(columns: dict[str, list[Any]]) -> pa.Table:
    """Codes as text, AGEP as integers, PINCP as text (it holds 'N')."""
    return pa.table(
        {
            name: pa.array(values, pa.int64())
            if name == "AGEP"
            else pa.array([str(v) for v in values], pa.string())
            for name, values in columns.items()
        }
    )


def write_parquet(columns: dict[str, list[Any]], path: Path) -> Path:
    pq.write_table(_arrow(columns), path)
    return path


def write_xlsx(columns: dict[str, list[Any]], path: Path) -> Path:
    """Codes as text cells (so '01' keeps its zero), AGEP and PINCP's incomes as numbers."""
    from openpyxl import Workbook

    book = Workbook(write_only=True)
    sheet = book.create_sheet("persons")
    sheet.append(list(columns))
    for row in zip(*columns.values(), strict=True):
        sheet.append(list(row))
    book.save(path)
    return path


WRITERS = {"csv": write_csv, "parquet": write_parquet, "xlsx": write_xlsx}


def write_data(columns: dict[str, list[Any]], path: Path) -> Path:
    """Write the columns in the format `path`'s suffix names."""
    return WRITERS[path.suffix.lstrip(".")](columns, path)


def codebook_rows() -> list[tuple[str, str, str, str]]:
    """(column, code, label, parent) for every coded column, as a public codebook lists them."""
    rows = [("STATE", code, label, "") for code, label in STATES.items()]
    rows += [("PUMA", code, label, state) for code, (state, label) in PUMAS.items()]
    rows += [("SEX", code, label, "") for code, label in SEXES.items()]
    rows += [("RAC1P", code, label, "") for code, label in RACES.items()]
    rows += [("ESR", code, label, "") for code, label in ESRS.items()]
    rows += [("PINCP", "N", "N/A (less than 15 years old)", "")]
    return rows


def codebook_csv(column: str | None = None) -> str:
    """The codebook (column,code,label,parent), or one column's part of it (code,label,parent:
    the form the Data page's codebook importer reads)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if column is None:
        writer.writerow(["column", "code", "label", "parent"])
        writer.writerows(codebook_rows())
    else:
        writer.writerow(["code", "label", "parent"])
        writer.writerows(row[1:] for row in codebook_rows() if row[0] == column)
    return out.getvalue()


def office_plan(
    data: str = "office.csv", *, epsilon: float = 4.0, bin_labels: bool = True
) -> dict[str, Any]:
    """The plan (the plan file's mapping): every feature at once. `bin_labels=False` leaves
    out AGEP's bin labels (contract §5, new in issue 24), so that the other features can be
    checked on their own until they parse."""

    def book(column: str) -> dict[str, str]:
        return {code: label for name, code, label, _ in codebook_rows() if name == column}

    return {
        "version": 1,
        "data": data,
        "unit": {"kind": "id", "column": "SERIALNO", "max_rows": MAX_ROWS},
        "columns": {
            "STATE": {"kind": "categorical", "domain": list(STATES), "labels": book("STATE")},
            "PUMA": {
                "kind": "categorical",
                "domain": list(PUMAS),
                "parent": "STATE",
                "parent_map": {code: state for code, (state, _) in PUMAS.items()},
                "labels": book("PUMA"),
            },
            "SEX": {"kind": "categorical", "domain": list(SEXES), "labels": book("SEX")},
            "RAC1P": {"kind": "categorical", "domain": list(RACES), "labels": book("RAC1P")},
            "ESR": {"kind": "categorical", "domain": list(ESRS), "labels": book("ESR")},
            "AGEP": {"kind": "numeric", "bins": AGE_BINS}
            | ({"labels": AGE_LABELS} if bin_labels else {}),
            DISCOVERED: {"kind": "categorical", "domain": {"discover": {"min_count": 20}}},
        },
        "tables": [
            {"name": "total", "by": []},
            {"name": "state", "by": ["STATE"]},
            {"name": "puma", "by": ["PUMA"]},  # the hierarchy: PUMA sums to STATE
            {"name": "sex_by_age", "by": ["SEX", "AGEP"]},
            {"name": "state_by_sex_by_race", "by": ["STATE", "SEX", "RAC1P"]},
            {"name": "esr", "by": ["ESR"]},
            {"name": "language", "by": [DISCOVERED]},
            {
                "name": STATISTIC,
                "by": ["STATE"],
                "stat": {"quantile": 0.5, "column": "PINCP", "bounds": INCOME_BOUNDS},
            },
        ],
        "budget": {"accounting": "zcdp", "epsilon": epsilon, "delta": 1e-8},
        "postprocess": {
            "clamp": [0, None],
            "nonnegative": True,
            "integer": True,
            "consistent": True,
        },
    }


def write_plan(plan: dict[str, Any], path: Path) -> Path:
    path.write_text(plan_yaml(plan), encoding="utf-8")
    return path


def write_office(
    folder: Path, fmt: str = "csv", *, rows: int = 3000, bin_labels: bool = True
) -> tuple[Path, Path]:
    """Write the data (in `fmt`) and its plan (YAML) into `folder`; returns (plan, data)."""
    data = write_data(office_rows(rows), folder / f"office.{fmt}")
    plan = office_plan(data.name, bin_labels=bin_labels)
    return write_plan(plan, folder / f"office_{fmt}.plan.yaml"), data


def rows_after_cap(columns: dict[str, list[Any]]) -> int:
    """How many rows the unit cap keeps (every household's first MAX_ROWS): the true grand
    total the release estimates (the cap drops the same number whichever rows it picks)."""
    _, sizes = np.unique(np.array(columns["SERIALNO"]), return_counts=True)
    return int(np.minimum(sizes, MAX_ROWS).sum())


FIPS_STATES = dict(
    line.split(" ", 1)
    for line in """01 Alabama|02 Alaska|04 Arizona|05 Arkansas|06 California|08 Colorado
|09 Connecticut|10 Delaware|11 District of Columbia|12 Florida|13 Georgia|15 Hawaii
|16 Idaho|17 Illinois
|18 Indiana|19 Iowa|20 Kansas|21 Kentucky|22 Louisiana|23 Maine|24 Maryland|25 Massachusetts
|26 Michigan|27 Minnesota|28 Mississippi|29 Missouri|30 Montana|31 Nebraska|32 Nevada
|33 New Hampshire|34 New Jersey|35 New Mexico|36 New York|37 North Carolina|38 North Dakota
|39 Ohio|40 Oklahoma|41 Oregon|42 Pennsylvania|44 Rhode Island|45 South Carolina
|46 South Dakota|47 Tennessee|48 Texas|49 Utah|50 Vermont|51 Virginia|53 Washington
|54 West Virginia|55 Wisconsin|56 Wyoming""".replace("\n", "").split("|")
)
"""The public codebook of the bundled sample's `state` codes (FIPS, leading zeros kept)."""


def state_codebook_csv() -> str:
    """code,label for every FIPS state: the codebook the browser journey imports."""
    return "code,label\n" + "".join(f"{c},{name}\n" for c, name in FIPS_STATES.items())
