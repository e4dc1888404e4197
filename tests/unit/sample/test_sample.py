"""The synthetic sample: reproducible, inside its public domains, census-like, and planned."""

from __future__ import annotations

import csv
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
import yaml

from dprelease.errors import DataError
from dprelease.plan.parse import load_plan, parse_plan, plan_to_dict
from dprelease.plan.schema import CategoricalColumn
from dprelease.sample.generator import (
    COUNTIES,
    COUNTY_PARENT,
    EDUCATION,
    HISPANIC,
    RACES,
    SAMPLE_COLUMNS,
    SEXES,
    STATE_NAMES,
    STATES,
    TENURES,
    _draw_by_group,
    generate_sample,
    sample_plan_dict,
    write_sample,
    write_sample_plan,
)
from dprelease.sample.geography import EDUCATION_SHARES, STATE_FACTS

DATA = Path(__file__).resolve().parents[3] / "data"
TEXT_DOMAINS = {
    "state": STATES,
    "county": COUNTIES,
    "sex": SEXES,
    "race": RACES,
    "hispanic": HISPANIC,
    "education": EDUCATION,
    "tenure": TENURES,
}


@pytest.fixture(scope="module")
def sample() -> pa.Table:
    """One large sample shared by the statistical checks (also shows 200,000 rows are quick)."""
    return generate_sample(200_000, seed=12345)


def column(table: pa.Table, name: str) -> np.ndarray:
    return np.asarray(table.column(name).to_numpy(zero_copy_only=False))


def households(table: pa.Table) -> pa.Table:
    """One row per household: its first member, the householder."""
    ids = column(table, "household_id")
    first = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    return table.take(pa.array(first))


# --- reproducibility and shape --------------------------------------------------------------


def test_same_seed_same_sample_and_different_seeds_differ() -> None:
    assert generate_sample(3_000, seed=7).equals(generate_sample(3_000, seed=7))
    assert not generate_sample(3_000, seed=7).equals(generate_sample(3_000, seed=8))
    assert not generate_sample(3_000).equals(generate_sample(3_000))  # fresh entropy


@pytest.mark.parametrize("rows", [1, 2, 3, 7, 1_000, 12_345])
def test_exact_row_count_columns_and_types(rows: int) -> None:
    table = generate_sample(rows, seed=1)
    assert table.num_rows == rows
    assert tuple(table.column_names) == SAMPLE_COLUMNS
    numbers = {"age", "household_size", "income"}
    for name in SAMPLE_COLUMNS:
        assert table.schema.field(name).type == (pa.int64() if name in numbers else pa.string())
    assert table.column("household_id")[0].as_py() == "H0000001"


@pytest.mark.parametrize("rows", [0, -5, 20_000_001])
def test_rows_out_of_range_is_a_data_error(rows: int, tmp_path: Path) -> None:
    with pytest.raises(DataError, match="between 1 and 20,000,000 rows") as error:
        write_sample(tmp_path / "out.csv", rows, seed=1)
    assert "\n" not in str(error.value)
    assert not (tmp_path / "out.csv").exists()


def test_writing_imports_neither_pandas_nor_scipy(tmp_path: Path) -> None:
    """The CLI must start fast: pyarrow's `pa.array` would pull in pandas."""
    code = (
        "import sys; from dprelease.sample.generator import write_sample, write_sample_plan; "
        f"write_sample({str(tmp_path / 's.csv')!r}, 500, seed=1); "
        f"write_sample_plan({str(tmp_path / 's.yaml')!r}); "
        "print(sorted({'pandas', 'scipy'} & set(sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=DATA.parent
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_negative_seed_is_a_data_error() -> None:
    with pytest.raises(DataError, match="seed"):
        generate_sample(10, seed=-1)


# --- domains --------------------------------------------------------------------------------


def test_domain_constants() -> None:
    assert len(STATES) == 51 and list(STATES) == sorted(STATES)
    assert set(STATE_NAMES) == set(STATES) and STATE_NAMES["11"] == "DC"
    assert len(COUNTIES) == 3_143 and list(COUNTIES) == sorted(COUNTIES)
    assert all(len(c) == 5 and int(c[2:]) % 2 == 1 for c in COUNTIES)
    per_state = Counter(COUNTY_PARENT[c] for c in COUNTIES)
    assert per_state == {s.fips: s.counties for s in STATE_FACTS}
    assert per_state["48"] == 254 and per_state["10"] == 3 and per_state["11"] == 1


def test_every_value_in_its_domain(sample: pa.Table) -> None:
    for name, domain in TEXT_DOMAINS.items():
        assert set(pc.unique(sample.column(name)).to_pylist()) <= set(domain), name
    assert set(np.unique(column(sample, "household_size"))) <= set(range(1, 8))
    age = column(sample, "age")
    assert age.min() >= 0 and age.max() <= 100
    assert column(sample, "income").min() >= 0
    education = column(sample, "education")
    assert np.array_equal(education == "Under 25", age < 25)


def test_counties_lie_in_their_state(sample: pa.Table) -> None:
    parents = np.array([COUNTY_PARENT[c] for c in column(sample, "county")])
    assert np.array_equal(parents, column(sample, "state"))


def test_csv_keeps_leading_zeros(tmp_path: Path) -> None:
    path = tmp_path / "sample.csv"
    write_sample(path, 2_000, seed=3)
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 2_000 and tuple(rows[0]) == SAMPLE_COLUMNS
    assert all(r["state"] in STATES and r["county"] in COUNTIES for r in rows)
    assert all(r["county"].startswith(r["state"]) for r in rows)
    assert any(r["state"].startswith("0") for r in rows)  # e.g. "06", not 6


# --- households -----------------------------------------------------------------------------


def test_members_share_their_household(sample: pa.Table) -> None:
    ids = column(sample, "household_id")
    assert np.all(ids[1:] >= ids[:-1])  # members are consecutive
    shared = ("state", "county", "household_size", "tenure", "income")
    distinct = sample.group_by("household_id").aggregate(
        [(name, "count_distinct") for name in shared]
    )
    for name in shared:
        assert pc.max(distinct.column(f"{name}_count_distinct")).as_py() == 1, name


def test_household_sizes_and_adults(sample: pa.Table) -> None:
    ids = column(sample, "household_id")
    _, first, members = np.unique(ids, return_index=True, return_counts=True)
    size = column(sample, "household_size")[first]
    complete = slice(0, -1)  # the last household may be cut short
    assert np.all(np.where(size < 7, members == size, members >= 7)[complete])
    assert np.all(column(sample, "age")[first] >= 18)  # the householder is an adult
    assert 2.3 < members.mean() < 2.7


# --- census-like marginals ------------------------------------------------------------------


def share(table: pa.Table, name: str, value: object) -> float:
    return float(np.mean(column(table, name) == value))


def test_person_shares(sample: pa.Table) -> None:
    assert abs(share(sample, "sex", "Female") - 0.5) < 0.02
    assert 0.15 < share(sample, "hispanic", "Hispanic") < 0.23
    assert 0.55 < share(sample, "race", "White") < 0.68
    assert 0.10 < share(sample, "race", "Black") < 0.15
    assert 0.55 < share(sample, "tenure", "Owner") < 0.75
    age = column(sample, "age")
    assert 36 < age.mean() < 42
    assert 0.18 < np.mean(age < 18) < 0.27
    assert 0.13 < np.mean(age >= 65) < 0.20
    assert 0.10 < share(sample, "state", "06") < 0.14  # California
    assert share(sample, "state", "11") < 0.005  # DC


def test_race_and_origin_are_correlated(sample: pa.Table) -> None:
    race = column(sample, "race")
    hispanic = column(sample, "hispanic") == "Hispanic"
    assert hispanic[race == "Some other race"].mean() > 0.8
    assert hispanic[race == "Two or more races"].mean() > 0.4
    assert hispanic[race == "White"].mean() < 0.1
    new_mexico = column(sample, "state") == "35"
    assert hispanic[new_mexico].mean() > 2 * hispanic.mean()


def test_education_shares_among_adults(sample: pa.Table) -> None:
    education = column(sample, "education")[column(sample, "age") >= 25]
    expected = np.asarray(EDUCATION_SHARES) / sum(EDUCATION_SHARES)
    observed = np.array([np.mean(education == label) for label in EDUCATION[1:]])
    assert np.all(np.abs(observed - expected) < 0.02)


def test_income_and_tenure(sample: pa.Table) -> None:
    heads = households(sample)
    income = column(heads, "income")
    owner = column(heads, "tenure") == "Owner"
    assert 65_000 < np.median(income) < 85_000
    assert 0.6 < owner.mean() < 0.7  # of households
    assert np.median(income[owner]) > 1.5 * np.median(income[~owner])
    assert column(heads, "age")[owner].mean() > column(heads, "age")[~owner].mean() + 5
    assert 0.002 < np.mean(income == 0) < 0.03
    graduate = column(sample, "education") == "Graduate degree"
    school = column(sample, "education") == "Less than high school"
    assert np.median(column(sample, "income")[graduate]) > 2 * np.median(
        column(sample, "income")[school]
    )


def test_draw_by_group_respects_zero_probabilities() -> None:
    rng = np.random.default_rng(0)
    probabilities = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.5, 0.0, 0.5]])
    group = np.repeat(np.arange(3), 1_000)
    codes = _draw_by_group(rng, probabilities, group)
    assert set(codes[:1_000]) == {1} and set(codes[1_000:2_000]) == {2}
    assert set(codes[2_000:]) == {0, 2} and abs(np.mean(codes[2_000:] == 0) - 0.5) < 0.06


# --- the plan and the bundled files ---------------------------------------------------------


def test_plan_parses_and_fits_the_data(sample: pa.Table) -> None:
    plan = parse_plan(sample_plan_dict())
    assert plan.data == "census_sample.csv"
    assert {name for spec in plan.tables for name in spec.by} <= set(SAMPLE_COLUMNS)
    assert set(plan.schema.names) - set(plan.used_columns) == {"income"}  # defined for users
    county = plan.schema["county"]
    assert isinstance(county, CategoricalColumn) and county.parent == "state"
    assert dict(county.parent_map or {}) == COUNTY_PARENT
    for spec in plan.schema.columns:
        if isinstance(spec, CategoricalColumn):
            values = [str(v) for v in pc.unique(sample.column(spec.name)).to_pylist()]
            assert (spec.codes_for_texts(values) >= 0).all(), spec.name


def test_plan_yaml_round_trips_with_quoted_codes(tmp_path: Path) -> None:
    path = tmp_path / "sample.plan.yaml"
    write_sample_plan(path, data_file="elsewhere.csv")
    text = path.read_text(encoding="utf-8")
    assert "'01'" in text and "'08001'" in text  # text for YAML 1.1 and 1.2 readers alike
    assert len(text.splitlines()) < 2_000
    raw = yaml.safe_load(text)
    assert raw == sample_plan_dict("elsewhere.csv")
    assert plan_to_dict(load_plan(path)) == plan_to_dict(parse_plan(raw))


def test_bundled_files_can_be_regenerated(tmp_path: Path) -> None:
    write_sample(tmp_path / "census_sample.csv", 50_000, seed=2020)
    bundled = (DATA / "census_sample.csv").read_bytes()
    assert bundled.count(b"\n") == 50_001
    assert bundled == (tmp_path / "census_sample.csv").read_bytes()
    write_sample_plan(tmp_path / "census_sample.plan.yaml")
    plan_text = (tmp_path / "census_sample.plan.yaml").read_text(encoding="utf-8")
    assert (DATA / "census_sample.plan.yaml").read_text(encoding="utf-8") == plan_text
