"""k-anonymity, l-diversity and t-closeness against hand-computed values on the seeds'
tables (the hospital and salary examples), and their properties on random tables."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dprelease.errors import DataError
from dprelease.risk.attacks import attacker_view
from dprelease.risk.classes import risk_input
from dprelease.risk.measures import measure_risk

# The 3-anonymous table of the seeds (Zipcode, Age generalised; Gen suppressed).
HOSPITAL_6 = pa.table(
    {
        "zip": ["476**"] * 3 + ["4790*"] * 3,
        "age": ["2*"] * 3 + ["[43,52]"] * 3,
        "disease": [
            "Ovarian Cancer",
            "Ovarian Cancer",
            "Prostate Cancer",
            "Flu",
            "Heart Disease",
            "Heart Disease",
        ],
    }
)
# The 3-anonymous patient table of the homogeneity attack.
HOSPITAL_9 = pa.table(
    {
        "zip": ["476**"] * 3 + ["4790*"] * 3 + ["476**"] * 3,
        "age": ["2*"] * 3 + [">=40"] * 3 + ["3*"] * 3,
        "disease": ["Heart Disease"] * 3
        + ["Flu", "Heart Disease", "Cancer"]
        + ["Heart Disease", "Cancer", "Cancer"],
    }
)
# The 3-diverse table of the similarity attack (salary in K).
SALARY = pa.table(
    {
        "zip": ["476**"] * 3 + ["4790*"] * 3 + ["476**"] * 3,
        "age": ["2*"] * 3 + [">=40"] * 3 + ["3*"] * 3,
        "salary": ["20", "30", "40", "50", "100", "70", "60", "80", "90"],
        "disease": [
            "Gastric Ulcer",
            "Gastritis",
            "Stomach Cancer",
            "Gastritis",
            "Flu",
            "Bronchitis",
            "Bronchitis",
            "Pneumonia",
            "Stomach Cancer",
        ],
    }
)


def measure(table, sensitive, k=3, c=2.0):
    return measure_risk(risk_input(table, ["zip", "age"], sensitive), k=k, c=c)


def test_hospital_six_rows():
    r = measure(HOSPITAL_6, "disease")
    assert (r.k.rows, r.k.classes, r.k.k, r.k.unique, r.k.below_k) == (6, 2, 3, 0, 0)
    assert r.l.l_distinct == 2
    # each class is 2:1, H = ln 3 − (2/3) ln 2
    assert r.l.l_entropy == pytest.approx(math.exp(math.log(3) - 2 / 3 * math.log(2)))
    # overall OC 2/6, PC 1/6, Flu 1/6, HD 2/6; class 1: ½(1/3 + 1/6 + 1/6 + 1/3) = ½
    assert r.t.t == pytest.approx(0.5)
    # recursive (c, 2): r1 = 2 < c · r2 = c: fails at c = 2, holds at c = 3
    assert not measure(HOSPITAL_6, "disease", k=2, c=2).l.recursive_cl
    assert measure(HOSPITAL_6, "disease", k=2, c=3).l.recursive_cl


def test_hospital_homogeneity_attack():
    r = measure(HOSPITAL_9, "disease")
    assert (r.k.k, r.l.l_distinct, r.l.l_entropy) == (3, 1, 1.0)
    # overall HD 5/9, Flu 1/9, Cancer 3/9; the all-HD class: ½(4/9 + 1/9 + 3/9) = 4/9
    assert r.t.t == pytest.approx(4 / 9)
    assert sorted(r.t.emd_per_class) == pytest.approx([2 / 9, 3 / 9, 4 / 9])
    assert (r.attacks.homogeneous_classes, r.attacks.homogeneous_rows) == (1, 3)
    # Bob (476**, 2*) has heart disease for sure
    data = risk_input(HOSPITAL_9, ["zip", "age"], "disease")
    size, shares = attacker_view(data, {"zip": "476**", "age": "2*"})
    assert size == 3 and shares["Heart Disease"] == (1.0, pytest.approx(5 / 9))


def test_salary_ordered_distance_matches_li_li_venkatasubramanian():
    r = measure(SALARY, "salary")
    assert r.t.ground == "ordered"
    # the paper's D[P1,Q] = 0.375 for {20,30,40}K and 0.167 for {50,70,100}K; {60,80,90}K:
    # cumulative gaps 1,2,3,4,2,3,1,1 (/9) → 17/72
    assert sorted(r.t.emd_per_class) == pytest.approx([1 / 6, 17 / 72, 3 / 8])
    assert r.t.t == pytest.approx(0.375)
    assert (r.l.l_distinct, r.l.l_entropy) == (3, pytest.approx(3.0))


def test_salary_disease_equal_distance():
    r = measure(SALARY, "disease")
    assert r.t.ground == "equal"
    assert r.t.emd_per_class == pytest.approx([4 / 9] * 3)


def test_unknown_or_doubled_columns_are_refused():
    with pytest.raises(DataError, match="no column 'nope'"):
        risk_input(SALARY, ["zip", "nope"], "disease")
    with pytest.raises(DataError, match="both a quasi-identifier"):
        risk_input(SALARY, ["zip", "disease"], "disease")


@st.composite
def tables(draw):
    rows = draw(st.integers(1, 60))
    qi = draw(st.integers(1, 3))
    data = {
        f"q{i}": draw(st.lists(st.sampled_from("abc"), min_size=rows, max_size=rows))
        for i in range(qi)
    }
    numeric = draw(st.booleans())
    values = st.sampled_from(["1", "2", "5", "9"] if numeric else ["x", "y", "z", "w"])
    data["s"] = draw(st.lists(values, min_size=rows, max_size=rows))
    return pa.table(data), [f"q{i}" for i in range(qi)]


@settings(max_examples=150, deadline=None)
@given(tables(), st.integers(1, 6), st.floats(0.5, 5))
def test_properties(case, k, c):
    table, qi = case
    r = measure_risk(risk_input(table, qi, "s"), k=k, c=c)
    keys = list(zip(*(table.column(n).to_pylist() for n in qi), strict=True))
    sizes = {key: keys.count(key) for key in keys}
    assert r.k.k == min(sizes.values())
    assert r.k.classes == len(sizes)
    assert r.k.unique == sum(1 for s in sizes.values() if s == 1)
    assert r.k.below_k == sum(s for s in sizes.values() if s < k)
    assert 1 <= r.l.l_distinct <= r.k.k
    assert 1 - 1e-9 <= r.l.l_entropy <= r.l.l_distinct + 1e-9
    assert 0.0 <= r.t.t <= 1.0
    # the dense EMD, computed directly, agrees with the vectorised one
    s = table.column("s").to_pylist()
    labels = sorted(set(s), key=float) if r.t.ground == "ordered" else list(dict.fromkeys(s))
    q = np.array([s.count(v) for v in labels]) / len(s)
    worst = 0.0
    for key in sizes:
        inside = [v for kk, v in zip(keys, s, strict=True) if kk == key]
        p = np.array([inside.count(v) for v in labels]) / len(inside)
        if r.t.ground == "ordered":
            d = np.abs(np.cumsum(p - q)[:-1]).sum() / (len(labels) - 1) if len(labels) > 1 else 0
        else:
            d = 0.5 * np.abs(p - q).sum()
        worst = max(worst, d)
    assert r.t.t == pytest.approx(worst, abs=1e-9)


def test_l_is_chosen_apart_from_k():
    """Issue 24.10: recursive (c, l) uses the l asked for, not k (a 3-valued attribute can
    never be (c, 5)-diverse)."""
    data = risk_input(HOSPITAL_6, ["zip", "age"], "disease")
    r = measure_risk(data, k=5, c=3.0, l=2)
    assert (r.k.chosen_k, r.l.l, r.l.recursive_cl) == (5, 2, True)
    assert r.to_dict()["l"] == 2
    assert not measure_risk(data, k=5, c=3.0, l=3).l.recursive_cl


def _plan(columns):
    from dprelease.plan.parse import parse_plan

    return parse_plan(
        {
            "version": 1,
            "columns": columns,
            "tables": [{"name": "all", "by": []}],
            "budget": {"accounting": "pure", "epsilon": 1.0},
        }
    )


# race codes 1..9 (a code column): numbers, but nominal
CODES = pa.table(
    {
        "zip": ["a"] * 4 + ["b"] * 4,
        "race": ["1", "1", "2", "2", "9", "9", "2", "2"],
        "level": ["low", "low", "low", "mid", "high", "high", "mid", "high"],
    }
)


def test_a_categorical_code_column_is_nominal_and_ordered_on_request():
    categorical = _plan(
        {
            "race": {"kind": "categorical", "domain": [str(i) for i in range(1, 10)]},
            "level": {"kind": "categorical", "domain": ["low", "mid", "high"]},
        }
    )
    assert risk_input(CODES, ["zip"], "race").sensitive.ordered  # numbers, no plan: ordered
    nominal = measure_risk(risk_input(CODES, ["zip"], "race", plan=categorical))
    assert nominal.t.ground == "equal"
    # overall 1: 2/8, 2: 4/8, 9: 2/8; class a = (1/2, 1/2, 0): ½(1/4 + 0 + 1/4) = 1/4
    assert nominal.t.t == pytest.approx(0.25)
    ordered = measure_risk(risk_input(CODES, ["zip"], "race", plan=categorical, ordered=True))
    assert ordered.t.ground == "ordered"
    # values 1 < 2 < 9 at distance 1/2: class a, cumulative gaps 1/4, 1/4 → 1/4
    assert ordered.t.t == pytest.approx(0.25)
    numeric = _plan({"race": {"kind": "numeric", "bins": [0, 5, 10]}})
    assert risk_input(CODES, ["zip"], "race", plan=numeric).sensitive.ordered


def test_an_ordered_categorical_follows_the_plans_domain_order():
    plan = _plan({"level": {"kind": "categorical", "domain": ["low", "mid", "high"]}})
    data = risk_input(CODES, ["zip"], "level", plan=plan, ordered=True)
    assert data.sensitive.labels == ("low", "mid", "high")  # not alphabetical
    # overall low 3/8, mid 2/8, high 3/8; class a = (3/4, 1/4, 0): gaps 3/8, 3/8 → 3/8;
    # class b = (0, 1/4, 3/4): gaps −3/8, −3/8 → 3/8 (alphabetical order would give 3/16)
    r = measure_risk(data)
    assert r.t.emd_per_class == pytest.approx([3 / 8, 3 / 8])
