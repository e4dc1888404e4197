"""A synthetic, census-like person file: seeded, vectorised, and about no real person.

Households come first (a size, a county, a tenure, an income), then their members (a
householder, maybe a partner, children and other adults), so that members share what a
household shares. The marginals imitate rounded published shares (2020 Census, ACS 2021); the
joint structure is a plausible invention, fine for trying out a release, useless for research.
The bundled `data/census_sample.csv` is `write_sample(path, 50_000, seed=2020)`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from dprelease.errors import DataError, quote
from dprelease.sample import geography as facts
from dprelease.sample.geography import (
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
)

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "COUNTIES",
    "COUNTY_PARENT",
    "EDUCATION",
    "HISPANIC",
    "MAX_ROWS",
    "RACES",
    "SAMPLE_COLUMNS",
    "SEXES",
    "STATES",
    "STATE_NAMES",
    "TENURES",
    "generate_sample",
    "sample_plan_dict",
    "write_sample",
    "write_sample_plan",
]

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]

MAX_ROWS = 20_000_000
# Centring constants, tuned once on 2,000,000 rows so that the published shares come out
# without looking at the sample itself (a household's values depend on its own draws only).
OWNER_CUT = -0.21  # tenure score above which a household owns: 65% of households
LOG_INCOME_CENTRE = 0.035  # median of the log-income score
SENIOR_SHARE = 0.23  # share of persons 25+ who are 65+, centres the cohort effect
# Invented structure (no published source): how households are put together.
PARTNER_SHARE = 0.75  # of households of 2+ that have a spouse or partner
CHILD_SHARE = 0.6  # chance that a member other than householder and partner is a child
SAME_ORIGIN_SHARE = 0.85  # chance that a member shares the householder's race and origin
SAME_SEX_COUPLE_SHARE = 0.03

HOUSEHOLDER, PARTNER, CHILD, OTHER_ADULT = 0, 1, 2, 3


def _draw_by_group(rng: np.random.Generator, probabilities: Floats, group: Ints) -> Ints:
    """One category per row from the distribution of its group (a row of `probabilities`).

    Vectorised without a rows × categories matrix: group g's cumulative shares are laid out
    on [g, g + 1), and g + u for a uniform u falls into its category.
    """
    groups, categories = probabilities.shape
    cumulative = np.cumsum(probabilities, axis=1)
    cumulative /= cumulative[:, -1:]
    flat = (np.arange(groups)[:, None] + cumulative).ravel()
    picks = np.searchsorted(flat, group + rng.random(group.size), side="right")
    codes: Ints = np.minimum(picks - group * categories, categories - 1)
    return codes


def _household_sizes(rng: np.random.Generator, rows: int) -> Ints:
    """Member counts of just enough households for `rows` persons (7+ spills over to 8, 9...)."""
    batches: list[Ints] = []
    total = 0
    while total < rows:
        count = int((rows - total) / 2.4) + 16
        sizes = rng.choice(
            np.arange(1, 8), size=count, p=facts.normalised(facts.HOUSEHOLD_SIZE_SHARES)
        )
        sizes = sizes + np.where(sizes == 7, rng.geometric(0.6, size=count) - 1, 0)
        batches.append(sizes.astype(np.int64))
        total += int(sizes.sum())
    sizes = np.concatenate(batches)
    return sizes[: int(np.searchsorted(np.cumsum(sizes), rows)) + 1]


def _roles(rng: np.random.Generator, sizes: Ints, household: Ints, head: Ints) -> Ints:
    """Householder first, then a partner (in most households of 2+), then children/adults."""
    slot = np.arange(household.size) - head
    has_partner = (sizes >= 2) & (rng.random(sizes.size) < PARTNER_SHARE)
    role = np.where(rng.random(household.size) < CHILD_SHARE, CHILD, OTHER_ADULT)
    role[(slot == 1) & has_partner[household]] = PARTNER
    role[slot == 0] = HOUSEHOLDER
    return role.astype(np.int64)


def _ages(rng: np.random.Generator, role: Ints, household: Ints) -> Ints:
    """Ages that fit the roles: parents of an age to have their children, partners close.

    Householders are drawn from the adult pyramid weighted by how often people of that age
    head a household (or, with children, by a bell around 40); children from the pyramid under
    18 and younger than their parent by 16+ years; other adults are mostly grown children.
    """
    years = np.arange(101)
    pyramid = facts.age_weights()
    adult = np.where(years >= 18, pyramid, 0.0)
    # Share of adults of each age who head a household without / with children (invented).
    childless = np.interp(
        years, [18, 25, 30, 40, 50, 60, 85], [0.1, 0.3, 0.25, 0.18, 0.35, 0.55, 0.7]
    )
    parent = np.exp(-0.5 * ((years - 40) / 9) ** 2) * (years >= 19)
    has_child = np.bincount(household, weights=role == CHILD) > 0
    head_age = np.where(
        has_child,
        rng.choice(years, size=has_child.size, p=facts.normalised(adult * parent)),
        rng.choice(years, size=has_child.size, p=facts.normalised(adult * childless)),
    )[household]
    n = role.size
    child_age = rng.choice(years[:18], size=n, p=facts.normalised(pyramid[:18]))
    grown_child = (head_age >= 40) & (rng.random(n) < 0.7)
    other_age = np.where(
        grown_child,
        head_age - 26 + np.rint(rng.normal(0, 5, n)),  # synthetic data: no release or preview noise
        rng.choice(years, size=n, p=facts.normalised(adult)),
    )
    age_gap = rng.normal(-1, 4, n)  # synthetic data: no release or preview noise
    partner_age = head_age + np.rint(age_gap)
    age = np.select(
        [role == HOUSEHOLDER, role == PARTNER, role == CHILD],
        [head_age, partner_age, np.minimum(child_age, head_age - 16)],
        other_age,
    )
    clipped: Ints = np.clip(age, np.where(role == CHILD, 0, 18), 100).astype(np.int64)
    return clipped


def _sexes(rng: np.random.Generator, age: Ints, role: Ints, head: Ints) -> Ints:
    """Codes in SEXES; more women at old ages, partners mostly of the other sex."""
    female_share = np.select([age < 18, age < 65, age < 85], [0.488, 0.5, 0.55], 0.63)
    sex = (rng.random(age.size) >= female_share).astype(np.int64)
    partner = np.flatnonzero(role == PARTNER)
    same = rng.random(partner.size) < SAME_SEX_COUPLE_SHARE
    sex[partner] = np.where(same, sex[head[partner]], 1 - sex[head[partner]])
    return sex


def _origins(rng: np.random.Generator, state: Ints, head: Ints) -> tuple[Ints, Ints]:
    """Codes in RACES and HISPANIC; most members share the householder's, as families do.

    Everyone draws from their state's distribution and most then copy the householder, so
    the marginal shares stay the state's while households stay mostly alike.
    """
    n = state.size
    hispanic_share = np.array([s.hispanic for s in facts.STATE_FACTS]) / 100
    origin = (rng.random(n) >= hispanic_share[state]).astype(np.int64)
    race = _draw_by_group(
        rng, facts.race_probabilities().reshape(-1, len(RACES)), 2 * state + origin
    )
    same = rng.random(n) < SAME_ORIGIN_SHARE
    return np.where(same, race[head], race), np.where(same, origin[head], origin)


def _education(rng: np.random.Generator, age: Ints, standing: Floats) -> Ints:
    """Codes in EDUCATION: 0 under 25; for 25+ the published shares, in expectation.

    A standard normal score mixes the household's standing (shared with tenure and income)
    with personal chance, older cohorts a little lower; it is cut at the normal quantiles of
    the cumulative shares.
    """
    senior = (age >= 65) - SENIOR_SHARE
    score = 0.6 * standing + 0.8 * rng.standard_normal(age.size) - 0.3 * senior
    level = 1 + np.searchsorted(facts.education_cuts(), score)
    return np.where(age >= 25, level, 0).astype(np.int64)


def _owners(rng: np.random.Generator, standing: Floats, head_age: Ints, sizes: Ints) -> Bools:
    """Which households own their home: about 65%, more often the older, larger, better off."""
    score = (
        0.9 * standing
        + 0.045 * (np.clip(head_age, 18, 75) - 45)
        + 0.15 * np.minimum(sizes, 5)
        + rng.logistic(size=sizes.size)
    )
    return score > OWNER_CUT


def _incomes(
    rng: np.random.Generator,
    standing: Floats,
    head_education: Ints,
    owner: Bools,
    head_age: Ints,
    sizes: Ints,
) -> Ints:
    """Household income in dollars: lognormal, higher with standing, schooling, owning, earners.

    Peaks for householders around 50; the median is near the published one; a few households
    report none.
    """
    level = np.where(head_education == 0, 2, head_education)  # under 25: as high school
    log_income = (
        0.4 * standing
        + 0.12 * (level - 3.5)
        + 0.3 * owner
        - 0.0006 * (np.clip(head_age, 18, 90) - 50) ** 2
        + 0.12 * (np.minimum(sizes, 4) - 2)
        + 0.5 * rng.standard_normal(sizes.size)
    )
    income: Floats = facts.MEDIAN_INCOME * np.exp(log_income - LOG_INCOME_CENTRE)
    income[rng.random(sizes.size) < facts.ZERO_INCOME_SHARE] = 0.0
    return np.rint(income).astype(np.int64)


def check_sample_args(rows: int, seed: int | None) -> None:
    """Refuse a bad size or seed with one line the CLI can print, before any work."""
    if isinstance(rows, bool) or not isinstance(rows, int) or not 1 <= rows <= MAX_ROWS:
        raise DataError(f"The sample needs between 1 and {MAX_ROWS:,} rows, got {quote(rows)}.")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise DataError(f"The sample seed must be a whole number 0 or more, got {quote(seed)}.")


def generate_sample(rows: int, seed: int | None = None) -> pa.Table:
    """`rows` synthetic persons in SAMPLE_COLUMNS order; the same seed gives the same table.

    A seed of None draws fresh entropy. The last household may be cut short to give exactly
    `rows` rows (its household_size then exceeds its rows in the table).
    """
    check_sample_args(rows, seed)
    rng = np.random.default_rng(seed)
    sizes = _household_sizes(rng, rows)
    household = np.repeat(np.arange(sizes.size), sizes)
    starts = np.cumsum(sizes) - sizes  # each household's householder, a person index
    head = starts[household]
    county = rng.choice(len(COUNTIES), size=sizes.size, p=facts.county_weights())
    state = facts.county_state()[county]
    standing = rng.standard_normal(sizes.size)  # shared by education, tenure and income
    role = _roles(rng, sizes, household, head)
    age = _ages(rng, role, household)
    sex = _sexes(rng, age, role, head)
    race, origin = _origins(rng, state[household], head)
    education = _education(rng, age, standing[household])
    owner = _owners(rng, standing, age[starts], sizes)
    income = _incomes(rng, standing, education[starts], owner, age[starts], sizes)
    return _arrow_table(
        rows,
        household,
        {
            "state": (STATES, state[household]),
            "county": (COUNTIES, county[household]),
            "age": age,
            "sex": (SEXES, sex),
            "race": (RACES, race),
            "hispanic": (HISPANIC, origin),
            "education": (EDUCATION, education),
            "household_size": np.minimum(sizes, 7)[household],
            "tenure": (TENURES, (~owner).astype(np.int64)[household]),
            "income": income[household],
        },
    )


def _arrow_table(
    rows: int, household: Ints, columns: dict[str, tuple[tuple[str, ...], Ints] | Ints]
) -> pa.Table:
    """The first `rows` persons as an Arrow table: labelled codes as text, numbers as int64.

    Arrays are built from numpy buffers because `pa.array` would import pandas.
    """
    import pyarrow as pa

    arrays = {"household_id": _household_ids(household[:rows] + 1)}
    for name, column in columns.items():
        if isinstance(column, tuple):
            labels, codes = column
            encoded = [label.encode() for label in labels]
            texts = _string_array(b"".join(encoded), np.cumsum([len(e) for e in encoded]))
            arrays[name] = texts.take(_int64_array(codes[:rows]))
        else:
            arrays[name] = _int64_array(column[:rows])
    return pa.Table.from_arrays([arrays[n] for n in SAMPLE_COLUMNS], names=list(SAMPLE_COLUMNS))


def _int64_array(values: Ints) -> pa.Array:
    import pyarrow as pa

    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), values.size, [None, pa.py_buffer(values)])


def _string_array(data: bytes, ends: Ints) -> pa.Array:
    """Arrow text from UTF-8 bytes and the end offset of each string in them."""
    import pyarrow as pa

    offsets = np.concatenate([[0], ends]).astype(np.int32)
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    return pa.Array.from_buffers(pa.string(), ends.size, buffers)


def _household_ids(numbers: Ints) -> pa.Array:
    """ "H0000001"-style ids, zero-padded to 7 digits (more when needed), digit by digit."""
    digits = max(7, len(str(int(numbers.max()))))
    chars = np.empty((numbers.size, digits + 1), dtype=np.uint8)
    chars[:, 0] = ord("H")
    chars[:, 1:] = ord("0") + numbers[:, None] // 10 ** np.arange(digits - 1, -1, -1) % 10
    return _string_array(chars.tobytes(), np.arange(1, numbers.size + 1) * (digits + 1))


def write_sample(path: str | Path, rows: int, seed: int | None = None) -> None:
    """Write the sample as CSV (UTF-8, header, text quoted so "01" stays "01")."""
    import pyarrow.csv

    pyarrow.csv.write_csv(generate_sample(rows, seed), str(path))


# --- the plan for the bundled sample --------------------------------------------------------
def _categorical(domain: tuple[str, ...], **extra: Any) -> dict[str, Any]:
    return {"kind": "categorical", "domain": list(domain), **extra}


def sample_plan_dict(data_file: str = "census_sample.csv") -> dict[str, Any]:
    """The release plan (contract v1) for the sample: public domains, a census-style workload."""
    return {
        "version": 1,
        "data": data_file,
        "unit": {"kind": "row"},
        "neighbors": "add_remove",
        "columns": {
            "state": _categorical(STATES),
            "county": _categorical(COUNTIES, parent="state", parent_map=dict(COUNTY_PARENT)),
            "age": {"kind": "numeric", "bins": list(facts.AGE_BINS)},
            "sex": _categorical(SEXES),
            "race": _categorical(RACES),
            "hispanic": _categorical(HISPANIC),
            "education": _categorical(EDUCATION),
            "household_size": {"kind": "categorical", "domain": {"range": [1, 7]}},
            "tenure": _categorical(TENURES),
            "income": {"kind": "numeric", "bins": list(facts.INCOME_BINS)},
        },
        "tables": [
            {"name": name, "by": list(by), "weight": w} for name, by, w in facts.SAMPLE_TABLES
        ],
        "budget": dict(  # accounting: auto, allocation: optimal, strategy: auto (the defaults)
            epsilon=1.0, delta=1.0e-10, confidence=0.95
        ),
        "postprocess": dict(clamp=[0, None], nonnegative=True, integer=True, consistent=False),
    }


def write_sample_plan(path: str | Path, data_file: str = "census_sample.csv") -> None:
    """Write `sample_plan_dict(data_file)` as YAML (sections and columns as blocks), or as
    JSON when the path ends in .json."""
    plan = sample_plan_dict(data_file)
    if Path(path).suffix.lower() == ".json":
        import json

        Path(path).write_text(json.dumps(plan, indent=2) + "\n", encoding="utf-8")
        return
    from dprelease.plan.yaml_text import plan_yaml

    writer = "dprelease.sample.write_sample_plan"  # its public name
    header = f"# Release plan for the synthetic sample; written by {writer}.\n"
    Path(path).write_text(header + plan_yaml(plan), encoding="utf-8")
