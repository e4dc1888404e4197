"""Survey-weighted data and plans (issue 37.8): a generated file with person weights, awkward
weights included (missing, `NA`, halves, negatives, above the bound), and its true weighted
totals computed here independently of the library (clamp, round half to even, 0 if missing)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

SEXES = ("F", "M")
AGE_BINS = (0, 18, 65, 120)
BOUND = 100

PLAN = """version: 1
data: {data}
columns:
  sex: {{kind: categorical, domain: [F, M]}}
  age: {{kind: numeric, bins: [0, 18, 65, 120]}}
tables:
  - {{name: sex, by: [sex]}}
  - {{name: w_sex_age, by: [sex, age], survey_weight: {{column: PWGTP, bounds: [0, {bound}]}}}}
  - {{name: w_sex, by: [sex], survey_weight: {{column: PWGTP, bounds: [0, {bound}]}}}}
budget: {{accounting: {accounting}, epsilon: {epsilon}{delta}}}
"""


def weighted_plan(
    data: Path, *, bound: int = BOUND, accounting: str = "pure", epsilon: float = 1.0
) -> str:
    delta = ", delta: 1.0e-9" if accounting != "pure" else ""
    return PLAN.format(
        data=data.name, bound=bound, accounting=accounting, epsilon=epsilon, delta=delta
    )


def weight_texts(rng: np.random.Generator, rows: int) -> list[str]:
    """Mostly whole weights 1..149 (some above the bound), and every awkward kind."""
    weights = rng.integers(1, 150, size=rows)
    texts = [str(w) for w in weights]
    kinds = rng.random(rows)
    for i in range(rows):
        if kinds[i] < 0.01:
            texts[i] = ""
        elif kinds[i] < 0.02:
            texts[i] = "NA"
        elif kinds[i] < 0.03:
            texts[i] = f"{weights[i]}.5"
        elif kinds[i] < 0.04:
            texts[i] = str(-weights[i])
    return texts


def write_weighted(path: Path, rows: int = 3000, seed: int = 0) -> dict[str, np.ndarray]:
    """Write the CSV; return the true weighted totals of `w_sex_age` and `w_sex` at BOUND."""
    rng = np.random.default_rng(seed)
    sexes = rng.choice(SEXES, size=rows)
    ages = rng.integers(0, 100, size=rows)
    texts = weight_texts(rng, rows)
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["sex", "age", "PWGTP"])
        writer.writerows(zip(sexes, ages, texts, strict=True))
    return true_totals(sexes, ages, texts, BOUND)


def true_totals(
    sexes: np.ndarray, ages: np.ndarray, texts: list[str], bound: int
) -> dict[str, np.ndarray]:
    totals = np.zeros((len(SEXES), len(AGE_BINS) - 1))
    for sex, age, text in zip(sexes, ages, texts, strict=True):
        try:
            weight = float(text)
        except ValueError:
            continue  # missing or not a number: weight 0
        unit = float(np.rint(min(max(weight, 0.0), bound)))
        band = int(np.searchsorted(AGE_BINS, age, side="right")) - 1
        totals[SEXES.index(sex), min(band, len(AGE_BINS) - 2)] += unit
    return {"w_sex_age": totals.reshape(-1), "w_sex": totals.sum(axis=1)}
