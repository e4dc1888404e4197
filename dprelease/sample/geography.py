"""The fixed tables behind the synthetic sample: columns, domains, published facts, weights.

The facts are typed in from published tables and rounded (no data file or code was copied).
One row per state and DC: the 2020 Census resident population (thousands), the number of
counties or county equivalents (boroughs and census areas in Alaska, independent cities in
Virginia, Maryland, Missouri and Nevada; Connecticut's eight historical counties), and rough
2020 Census shares of the population (percent) that is Hispanic, and non-Hispanic Black, Asian
and American Indian/Alaska Native alone. National shares (age, household size, education,
race of Hispanic persons, income) follow. `dprelease.sample.generator` turns these into synthetic
households and persons; nothing here describes a real person. The weights derived from the
facts are computed once and cached read-only.
"""

from __future__ import annotations

import functools
from statistics import NormalDist
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


class StateFacts(NamedTuple):
    """Rounded published facts about one state (2020 Census)."""

    fips: str
    usps: str
    population_k: int  # resident population, thousands
    counties: int  # counties or county equivalents
    hispanic: float  # percent of the population, any race
    black: float  # percent, non-Hispanic Black alone
    asian: float  # percent, non-Hispanic Asian alone
    aian: float  # percent, non-Hispanic American Indian/Alaska Native alone


STATE_FACTS: tuple[StateFacts, ...] = (
    StateFacts("01", "AL", 5024, 67, 5.3, 25.8, 1.5, 0.5),
    StateFacts("02", "AK", 733, 30, 7.1, 2.8, 6.4, 14.8),
    StateFacts("04", "AZ", 7152, 15, 30.7, 4.4, 3.5, 3.7),
    StateFacts("05", "AR", 3012, 75, 8.5, 14.9, 1.7, 0.7),
    StateFacts("06", "CA", 39538, 58, 39.4, 5.4, 15.1, 0.4),
    StateFacts("08", "CO", 5774, 64, 21.9, 3.8, 3.5, 0.6),
    StateFacts("09", "CT", 3606, 8, 17.3, 10.0, 4.8, 0.2),
    StateFacts("10", "DE", 990, 3, 10.5, 21.7, 4.2, 0.3),
    StateFacts("11", "DC", 690, 1, 11.3, 40.9, 4.8, 0.2),
    StateFacts("12", "FL", 21538, 67, 26.5, 14.5, 2.9, 0.2),
    StateFacts("13", "GA", 10712, 159, 10.5, 31.0, 4.4, 0.2),
    StateFacts("15", "HI", 1455, 5, 11.1, 1.6, 36.8, 0.1),
    StateFacts("16", "ID", 1839, 44, 13.0, 0.7, 1.4, 1.0),
    StateFacts("17", "IL", 12812, 102, 18.2, 13.6, 5.9, 0.1),
    StateFacts("18", "IN", 6786, 92, 8.2, 9.4, 2.6, 0.2),
    StateFacts("19", "IA", 3190, 99, 6.8, 4.1, 2.5, 0.3),
    StateFacts("20", "KS", 2938, 105, 13.0, 5.4, 3.0, 0.8),
    StateFacts("21", "KY", 4506, 120, 4.6, 7.9, 1.6, 0.2),
    StateFacts("22", "LA", 4658, 64, 6.9, 31.2, 1.8, 0.6),
    StateFacts("23", "ME", 1362, 16, 1.9, 1.8, 1.2, 0.6),
    StateFacts("24", "MD", 6177, 24, 11.8, 29.1, 6.7, 0.2),
    StateFacts("25", "MA", 7030, 14, 12.6, 6.5, 7.2, 0.1),
    StateFacts("26", "MI", 10077, 83, 5.6, 13.5, 3.4, 0.5),
    StateFacts("27", "MN", 5706, 87, 6.1, 6.9, 5.2, 0.9),
    StateFacts("28", "MS", 2961, 82, 3.6, 36.4, 1.1, 0.5),
    StateFacts("29", "MO", 6155, 115, 4.8, 11.2, 2.2, 0.4),
    StateFacts("30", "MT", 1084, 56, 4.4, 0.4, 0.8, 6.0),
    StateFacts("31", "NE", 1962, 93, 12.0, 4.7, 2.7, 0.8),
    StateFacts("32", "NV", 3105, 17, 28.7, 9.3, 8.7, 0.9),
    StateFacts("33", "NH", 1377, 10, 4.3, 1.4, 2.6, 0.1),
    StateFacts("34", "NJ", 9289, 21, 21.6, 12.4, 10.1, 0.1),
    StateFacts("35", "NM", 2117, 33, 47.7, 1.8, 1.7, 8.9),
    StateFacts("36", "NY", 20201, 62, 19.5, 13.9, 9.6, 0.2),
    StateFacts("37", "NC", 10439, 100, 10.7, 20.2, 3.3, 1.0),
    StateFacts("38", "ND", 779, 53, 4.3, 3.4, 1.6, 4.8),
    StateFacts("39", "OH", 11799, 88, 4.4, 12.4, 2.5, 0.2),
    StateFacts("40", "OK", 3959, 77, 11.9, 7.0, 2.3, 7.4),
    StateFacts("41", "OR", 4237, 36, 13.9, 1.9, 4.7, 1.0),
    StateFacts("42", "PA", 13003, 67, 8.1, 10.3, 3.9, 0.1),
    StateFacts("44", "RI", 1097, 5, 16.6, 5.1, 3.6, 0.4),
    StateFacts("45", "SC", 5118, 46, 6.9, 24.8, 1.8, 0.3),
    StateFacts("46", "SD", 887, 66, 4.5, 2.0, 1.5, 8.4),
    StateFacts("47", "TN", 6911, 95, 6.9, 15.8, 2.0, 0.2),
    StateFacts("48", "TX", 29146, 254, 39.3, 11.8, 5.4, 0.2),
    StateFacts("49", "UT", 3272, 29, 15.1, 1.1, 2.5, 0.9),
    StateFacts("50", "VT", 643, 14, 2.4, 1.3, 1.8, 0.3),
    StateFacts("51", "VA", 8631, 133, 10.5, 18.3, 7.1, 0.2),
    StateFacts("53", "WA", 7705, 39, 13.7, 3.9, 9.4, 1.2),
    StateFacts("54", "WV", 1794, 55, 1.9, 3.6, 0.8, 0.2),
    StateFacts("55", "WI", 5894, 72, 7.6, 6.2, 3.0, 0.8),
    StateFacts("56", "WY", 577, 23, 10.2, 0.8, 0.9, 2.1),
)

# Non-Hispanic Native Hawaiian/Pacific Islander and "Two or more races" (percent of the
# population), where a state differs clearly from the national default below.
NHPI_DEFAULT = 0.15
NHPI: dict[str, float] = {"15": 9.5, "02": 1.7, "49": 1.0, "32": 0.7, "53": 0.8, "41": 0.5}
MULTIRACE_DEFAULT = 4.2
MULTIRACE: dict[str, float] = {"15": 21.0, "02": 9.5, "40": 9.0, "53": 6.5, "41": 5.8}
SOME_OTHER_NON_HISPANIC = 0.5  # non-Hispanic "Some other race" alone, percent, everywhere

SAMPLE_COLUMNS: tuple[str, ...] = (
    "household_id",
    "state",
    "county",
    "age",
    "sex",
    "race",
    "hispanic",
    "education",
    "household_size",
    "tenure",
    "income",
)

STATES: tuple[str, ...] = tuple(s.fips for s in STATE_FACTS)  # STATE_FACTS is in code order
STATE_NAMES: dict[str, str] = {s.fips: s.usps for s in STATE_FACTS}
# Synthetic counties numbered like real FIPS codes (odd: 001, 003, ...), as many as the state has.
COUNTIES: tuple[str, ...] = tuple(
    sorted(f"{s.fips}{2 * k + 1:03d}" for s in STATE_FACTS for k in range(s.counties))
)
COUNTY_PARENT: dict[str, str] = {county: county[:2] for county in COUNTIES}
SEXES: tuple[str, ...] = ("Female", "Male")
RACES: tuple[str, ...] = (
    "White",
    "Black",
    "American Indian/Alaska Native",
    "Asian",
    "Native Hawaiian/Pacific Islander",
    "Some other race",
    "Two or more races",
)
HISPANIC: tuple[str, ...] = ("Hispanic", "Not Hispanic")
EDUCATION: tuple[str, ...] = (
    "Under 25",
    "Less than high school",
    "High school graduate",
    "Some college",
    "Associate degree",
    "Bachelor's degree",
    "Graduate degree",
)
TENURES: tuple[str, ...] = ("Owner", "Renter")

# --- published shares the marginals imitate (percent, rounded) ------------------------------
# Age pyramid: 0-4, 5-9, ..., 80-84, 85-89, 90-94, 95-99 (2020 Census / ACS 2021), then 100+.
AGE_GROUP_SHARES = (5.7, 6.0, 6.4, 6.6, 6.4, 6.9, 6.8, 6.6, 6.2, 6.1, 6.3, 6.6, 6.4, 5.5, 4.4)
AGE_GROUP_SHARES_OLD = (3.0, 1.9, 1.1, 0.55, 0.2)
AGE_100_SHARE = 0.03
# Households of 1, 2, ..., 6, 7 or more persons (ACS 2021).
HOUSEHOLD_SIZE_SHARES = (28.0, 34.5, 15.5, 12.5, 5.8, 2.3, 1.4)
# Persons 25 and over: less than high school ... graduate degree (ACS 2021 1-year).
EDUCATION_SHARES = (10.9, 26.2, 19.3, 8.7, 21.5, 13.4)
# Race of Hispanic persons, in RACES order (2020 Census: most report "Some other race" or two+).
RACE_OF_HISPANIC = (20.3, 1.9, 2.4, 0.5, 0.1, 42.2, 32.7)
MEDIAN_INCOME = 75_000  # household median, dollars (ACS 2022: about $75,000)
ZERO_INCOME_SHARE = 0.01  # households reporting no income

# --- the plan for the bundled sample: bins and a census-style workload ---------------------
AGE_BINS = (0, 5, 10, 15, 18, 20, 25, 30, 35, 45, 55, 65, 75, 85, 100)  # last bin: 85-100
INCOME_BINS = (0, 25_000, 50_000, 75_000, 100_000, 150_000, 200_000, 10_000_000)
# (name, by, weight): headline national tables get twice the weight of the rest.
SAMPLE_TABLES: tuple[tuple[str, tuple[str, ...], int], ...] = (
    ("total", (), 1),
    ("state", ("state",), 2),
    ("sex", ("sex",), 2),
    ("age", ("age",), 2),
    ("race", ("race",), 2),
    ("hispanic", ("hispanic",), 2),
    ("education", ("education",), 2),
    ("tenure", ("tenure",), 2),
    ("age_by_sex", ("age", "sex"), 2),
    ("race_by_hispanic", ("race", "hispanic"), 2),
    ("state_by_sex", ("state", "sex"), 1),
    ("education_by_sex", ("education", "sex"), 1),
    ("tenure_by_household_size", ("tenure", "household_size"), 1),
    ("state_by_race_by_hispanic", ("state", "race", "hispanic"), 1),
    ("county", ("county",), 1),
    ("county_by_sex", ("county", "sex"), 1),
)

# --- weights derived from the facts, computed once ------------------------------------------
GEOGRAPHY_SEED = 20200401  # fixes the synthetic county sizes, the same in every sample


def normalised(weights: npt.ArrayLike) -> Floats:
    """Weights scaled to sum to 1 (published percentages rarely add up exactly)."""
    array = np.asarray(weights, dtype=np.float64)
    shares: Floats = array / array.sum()
    return shares


def _read_only(array: Floats) -> Floats:
    """A cached table that no caller can change by accident."""
    array.setflags(write=False)
    return array


@functools.cache
def age_weights() -> Floats:
    """Weights of single years 0..100, each 5-year share spread evenly over its years."""
    groups = (*AGE_GROUP_SHARES, *AGE_GROUP_SHARES_OLD)
    return _read_only(normalised([*np.repeat(np.asarray(groups) / 5, 5), AGE_100_SHARE]))


@functools.cache
def county_weights() -> Floats:
    """Each county's share of the US population, in COUNTIES order.

    Within a state, county sizes follow Zipf's law (the k-th largest has weight 1/k), the
    ranks shuffled by a fixed seed so that the largest county is not always 001: TX gets a
    county with 16% of the state, as Harris County has, and its smallest get 0.06% each.
    """
    rng = np.random.default_rng(GEOGRAPHY_SEED)
    parts = []
    for state in STATE_FACTS:
        zipf = 1.0 / rng.permutation(np.arange(1, state.counties + 1))
        parts.append(state.population_k * zipf / zipf.sum())
    return _read_only(normalised(np.concatenate(parts)))


@functools.cache
def county_state() -> Ints:
    """The index in STATES of each county's state, in COUNTIES order."""
    index = np.array([STATES.index(COUNTY_PARENT[county]) for county in COUNTIES])
    index.setflags(write=False)
    return index


@functools.cache
def race_probabilities() -> Floats:
    """Race distribution by state and origin: shape (states, [Hispanic, Not Hispanic], races).

    Non-Hispanic shares come from the state's facts (White is what is left); Hispanic persons
    follow the national pattern, so race and origin are correlated as in the 2020 Census.
    """
    table = np.empty((len(STATE_FACTS), 2, len(RACES)))
    for i, state in enumerate(STATE_FACTS):
        shares = [
            state.black,
            state.aian,
            state.asian,
            NHPI.get(state.fips, NHPI_DEFAULT),
            SOME_OTHER_NON_HISPANIC,
            MULTIRACE.get(state.fips, MULTIRACE_DEFAULT),
        ]
        others = np.asarray(shares) / (100 - state.hispanic)
        table[i, 0] = normalised(RACE_OF_HISPANIC)
        table[i, 1] = [1 - others.sum(), *others]
    return _read_only(table)


@functools.cache
def education_cuts() -> Floats:
    """Standard normal quantiles at the cumulative education shares."""
    cumulative = np.cumsum(normalised(EDUCATION_SHARES))[:-1]
    return _read_only(np.array([NormalDist().inv_cdf(float(c)) for c in cumulative]))
