"""Dashboard edits of the draft plan: add a regression or a PCA (issue 28.4).

Like `dprelease.plan.statistic_edit`, it takes the plan mapping and returns a changed copy;
the new `stat:` is checked by its parser (`model_spec.parse_model`) before it is kept.
"""

from __future__ import annotations

import copy
from typing import Any

from dprelease.errors import PlanError, quote
from dprelease.plan.edit import PlanDict
from dprelease.plan.model_spec import FAMILIES, parse_model

MODEL_KINDS = (*(f"{family} regression" for family in FAMILIES), "pca")
"""The dashboard's model choices: a regression of each family (`model_spec.FAMILIES`), a PCA."""


def parse_names(text: str) -> list[str]:
    """'age, hours' as column names."""
    return [part.strip() for part in text.replace(";", ",").split(",") if part.strip()]


def parse_bounds(text: str) -> dict[str, list[float]]:
    """One column per line, 'age: 16, 95' (or 'age 16 95'), as `bounds:`."""
    bounds: dict[str, list[float]] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        name, _, rest = line.partition(":") if ":" in line else line.strip().partition(" ")
        parts = rest.replace(",", " ").replace("[", " ").replace("]", " ").split()
        try:
            numbers = [float(p) for p in parts]
        except ValueError:
            numbers = []
        if not name.strip() or len(numbers) != 2:
            raise PlanError(
                f"Bounds are one column per line, as 'age: 16, 95'; got {quote(line.strip())}."
            )
        bounds[name.strip()] = [int(v) if v.is_integer() else v for v in numbers]
    return bounds


def model_stat(kind: str, y: str, x: str, columns: str, k: int, bounds: str) -> dict[str, Any]:
    """The `stat:` mapping of the dashboard's form (not yet checked)."""
    if kind not in MODEL_KINDS:
        raise PlanError(f"A model is one of {', '.join(MODEL_KINDS)}, got {quote(kind)}.")
    if kind == "pca":
        return {"pca": parse_names(columns), "k": k, "bounds": parse_bounds(bounds)}
    family = kind.split()[0]
    body = {"y": y.strip(), "x": parse_names(x), "family": family}
    return {"regression": body, "bounds": parse_bounds(bounds)}


def add_model(plan: PlanDict, stat: dict[str, Any], *, name: str | None = None) -> PlanDict:
    """Add a table holding one regression or PCA (no `by`), checked before it is kept."""
    spec = parse_model(stat, "stat")
    out = copy.deepcopy(plan)
    out.setdefault("tables", [])
    taken = [t.get("name", "") for t in out["tables"]]
    if name is None:
        stem = "pca" if spec.kind == "pca" else f"regression_{spec.column}"
        name, i = stem, 2
        while name in taken:
            name, i = f"{stem}_{i}", i + 1
    if name in taken:
        raise PlanError(f"There is already a table called {quote(name)}; pick another name.")
    out["tables"].append({"name": name, "by": [], "stat": stat})
    return out
