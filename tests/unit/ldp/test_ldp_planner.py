"""The local-DP planner, post-processing, simulation and the `ldp` command line."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dprelease.accounting.mechanisms import Noise
from dprelease.data.read import read_data
from dprelease.ldp import (
    PROTOCOLS,
    LdpError,
    compare_attribute_schemes,
    encode_column,
    plan_ldp,
    project_to_simplex,
    respondents_needed,
    simulate,
    simulate_schemes,
)
from helpers import ROOT
from helpers.cli import run as run_in_process

SAMPLE = ROOT / "data" / "census_sample.csv"


def test_seed_randomized_response_worked_example():
    """ORACLES: p = 3/4 (ε = ln 3), 65 of 100 say yes → (65 − 100/4)/(1/2) = 80."""
    grr = PROTOCOLS["GRR"].probabilities(math.log(3), 2)
    assert grr.p == pytest.approx(0.75) and grr.q == pytest.approx(0.25)
    assert grr.estimate(np.array([65, 35]), 100) == pytest.approx([80, 20])


def test_seed_grr_table_and_unary_example():
    """The seed's table truncates p = e^ε/(e^ε + d − 1) to two digits (ε = 1, d = 8:
    0.2797 → 0.27), and its d = 128 column is off by a little (ε = 2: the formula gives
    0.0550, the table 0.057), so the table is checked to within 0.01."""
    assert PROTOCOLS["GRR"].probabilities(1, 8).p == pytest.approx(math.e / (math.e + 7))
    assert math.floor(PROTOCOLS["GRR"].probabilities(1, 8).p * 100) / 100 == 0.27
    assert PROTOCOLS["GRR"].probabilities(2, 128).p == pytest.approx(0.057, abs=0.01)
    assert PROTOCOLS["GRR"].probabilities(2, 128).p == pytest.approx(0.05498, abs=1e-5)
    # Basic RAPPOR with p = 4/5, q = 1/5 (ε = 2 ln 4): column sums [1, 3, 2, 1] of 5 reports
    sue = PROTOCOLS["SUE"].probabilities(2 * math.log(4), 4)
    assert (sue.p, sue.q) == pytest.approx((0.8, 0.2))
    assert sue.estimate(np.array([1, 3, 2, 1]), 5) == pytest.approx([0, 10 / 3, 5 / 3, 0])


def test_central_alternative_is_the_projects_discrete_laplace():
    plan = plan_ldp(1.0, 10, 1000)
    assert plan.central.mechanism == "discrete_laplace"
    assert plan.central.moe == pytest.approx(3.3756177665957137, rel=1e-4)  # ORACLES
    assert plan.central.variance == pytest.approx(Noise("discrete_laplace", 1.0).variance)


def test_the_issue_example_87_times_more_respondents():
    plan = plan_ldp(1.0, 100, 70)
    assert plan.best == "OUE"
    assert round(plan.ratio_n) == 87
    assert plan.answer().startswith("With OUE at ε = 1 you need 87× more respondents")
    # ratio_n is what it says: n·ratio_n respondents give OUE central DP's MoE on a share
    oue_moe_big = plan_ldp(1.0, 100, round(70 * plan.ratio_n)).best_protocol.moe
    assert oue_moe_big / round(70 * plan.ratio_n) == pytest.approx(plan.central.moe / 70, 1e-3)


@pytest.mark.parametrize("epsilon", np.linspace(0.05, 6, 25))
def test_planner_choice_matches_the_grr_ue_crossover(epsilon):
    """GRR wins exactly when d < 3e^ε + 2; otherwise OUE (OLH with a whole g never beats it)."""
    for d in range(2, 1300, 7):
        boundary = 3 * math.exp(epsilon) + 2
        if abs(d - boundary) < 1e-6:
            continue
        plan = plan_ldp(float(epsilon), d, 10_000)
        assert plan.best == ("GRR" if d < boundary else "OUE"), (epsilon, d)
        olh = next(p for p in plan.protocols if p.name == "OLH")
        oue = next(p for p in plan.protocols if p.name == "OUE")
        assert olh.variance >= oue.variance * (1 - 1e-12)


def test_olh_equals_oue_when_e_to_epsilon_is_whole():
    plan = plan_ldp(math.log(3), 50, 1000)
    variances = {p.name: p.variance for p in plan.protocols}
    assert variances["OLH"] == pytest.approx(variances["OUE"], rel=1e-12)
    assert plan.to_dict()["protocols"][2] == {
        "name": "OLH",
        "variance": variances["OLH"],
        "moe": pytest.approx(1.959963984540054 * math.sqrt(variances["OLH"])),
        "g": 4,
    }


def test_plan_dict_has_the_contract_shape():
    out = plan_ldp(2.0, 20, 5000).to_dict()
    assert {"protocols", "best", "central", "ratio_n"} <= set(out)
    assert [p["name"] for p in out["protocols"]] == ["GRR", "OUE", "OLH", "SUE", "BLH", "HR"]
    for p in out["protocols"]:
        assert set(p) == (
            {"name", "variance", "moe", "g"} if p["name"] == "OLH" else {"name", "variance", "moe"}
        )
    assert set(out["central"]) == {"mechanism", "variance", "moe"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0.0, 5, 10), "epsilon"),
        ((-1.0, 5, 10), "epsilon"),
        ((math.inf, 5, 10), "epsilon"),
        ((1.0, 1, 10), "domain size"),
        ((1.0, 5, 0), "respondents"),
    ],
)
def test_planner_refuses_bad_input(args, message):
    with pytest.raises(LdpError, match=message):
        plan_ldp(*args)


def test_respondents_needed_meets_the_target():
    needed = respondents_needed(1.0, 30, [0.01, 0.05])
    for name in PROTOCOLS:
        n = math.ceil(needed[name][0])
        assert (
            plan_ldp(1.0, 30, n).to_dict()["protocols"][list(PROTOCOLS).index(name)]["moe"] / n
            <= 0.01 + 1e-12
        )
    assert needed["central"][1] == pytest.approx(3.3756177665957137 / 0.05, rel=1e-4)


def test_attribute_schemes_sampling_wins_at_small_epsilon_and_split_at_large():
    assert compare_attribute_schemes(0.5, [2, 7, 14], 10_000).better == "sample"
    assert compare_attribute_schemes(20.0, [2, 7, 14], 10_000).better == "split"
    with pytest.raises(LdpError):
        compare_attribute_schemes(1.0, [5], 100)


def norm_sub(estimates: np.ndarray, total: float) -> np.ndarray:
    """Wang et al.'s Norm-Sub as published: max(ĉ − δ, 0) with δ found so the sum is n,
    here by bisection (independent of the sort-based code)."""
    low, high = float(estimates.min()) - total, float(estimates.max())
    for _ in range(200):
        middle = (low + high) / 2
        if np.maximum(estimates - middle, 0).sum() > total:
            low = middle
        else:
            high = middle
    return np.maximum(estimates - (low + high) / 2, 0)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(-1e4, 1e4), min_size=2, max_size=30),
    st.floats(1, 1e5),
)
def test_projection_is_nonnegative_sums_to_n_and_equals_norm_sub(values, total):
    estimates = np.array(values)
    projected = project_to_simplex(estimates, total)
    assert np.all(projected >= 0)
    assert projected.sum() == pytest.approx(total, rel=1e-9)
    assert np.allclose(projected, norm_sub(estimates, total), atol=1e-6 * total)
    assert np.allclose(project_to_simplex(projected, total), projected, atol=1e-6 * total)


def test_simulation_on_the_sample_estimates_close_to_the_truth():
    table = read_data(SAMPLE, columns=["race", "age"])
    encoded = encode_column(table, "race")
    result = simulate(encoded, "grr", 3.0, rng=np.random.default_rng(1))
    assert result.n == 50_000 and result.true_counts.sum() == 50_000
    assert result.projected.sum() == pytest.approx(50_000)
    assert np.all(result.clamped >= 0)
    assert np.max(np.abs(result.estimated - result.true_counts)) < 5 * result.moe
    errors = result.errors()
    assert errors["projected (sum = n)"].rmse <= errors["raw estimate"].rmse * 1.5
    assert "true_counts" not in repr(result) or "array" not in repr(result)


def test_simulation_refuses_unknown_column_and_protocol():
    table = read_data(SAMPLE, columns=["race"])
    with pytest.raises(LdpError, match="no column 'nope'"):
        encode_column(table, "nope")
    with pytest.raises(LdpError, match="Unknown protocol"):
        simulate(encode_column(table, "race"), "XYZ", 1.0)


def test_scheme_simulation_agrees_with_the_planner():
    table = read_data(SAMPLE, columns=["race", "sex", "education"])
    columns = [encode_column(table, c) for c in ("race", "sex", "education")]
    rmse = simulate_schemes(columns, "GRR", 1.0, rng=np.random.default_rng(2))
    assert sum(rmse["sample"]) < sum(rmse["split"])
    sizes = [c.domain_size for c in columns]
    assert compare_attribute_schemes(1.0, sizes, 50_000).better == "sample"


# --- the command line ---------------------------------------------------------------------


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return run_in_process("ldp", *args)


def test_cli_plan_json_shape_and_values():
    result = run("plan", "--epsilon", "1", "--domain-size", "100", "--n", "70", "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["best"] == "OUE" and round(out["ratio_n"]) == 87
    assert out["central"]["mechanism"] == "discrete_laplace"
    assert next(p for p in out["protocols"] if p["name"] == "OLH")["g"] == 4
    assert out == json.loads(json.dumps(plan_ldp(1.0, 100, 70).to_dict()))


def test_cli_plan_text_gives_the_answer():
    result = run("plan", "--epsilon", "1", "--domain-size", "100", "--n", "70")
    assert result.returncode == 0
    assert "you need 87× more respondents" in result.stdout


def test_cli_simulate_json_is_labelled_confidential():
    result = run(
        "simulate", str(SAMPLE), "--column", "sex", "--protocol", "OUE", "--epsilon", "2", "--json"
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["confidential"] is True and out["protocol"] == "OUE"
    assert sum(c["true"] for c in out["cells"]) == out["n"]
    text = run(
        "simulate",
        str(SAMPLE),
        "--column",
        "age",
        "--protocol",
        "hr",
        "--epsilon",
        "2",
        "--plan",
        str(ROOT / "data" / "census_sample.plan.yaml"),
    )
    assert text.returncode == 0 and text.stdout.startswith("CONFIDENTIAL")
    assert "[0, 5)" in text.stdout


@pytest.mark.parametrize(
    ("args", "pattern"),
    [
        (("plan", "--epsilon", "0", "--domain-size", "5", "--n", "10"), "epsilon"),
        (("plan", "--epsilon", "-2", "--domain-size", "5", "--n", "10"), "epsilon"),
        (("plan", "--epsilon", "1", "--domain-size", "1", "--n", "10"), "domain size"),
        (("plan", "--epsilon", "1", "--domain-size", "5", "--n", "0"), "respondents"),
        (("plan", "--epsilon", "x", "--domain-size", "5", "--n", "10"), "--epsilon"),
        (
            ("simulate", str(SAMPLE), "--column", "race", "--protocol", "RAPPOR", "--epsilon", "1"),
            "Unknown protocol",
        ),
        (
            ("simulate", str(SAMPLE), "--column", "nope", "--protocol", "OUE", "--epsilon", "1"),
            "no column",
        ),
        (
            ("simulate", str(SAMPLE), "--column", "race", "--protocol", "OUE", "--epsilon", "0"),
            "epsilon",
        ),
        (
            ("simulate", "missing.csv", "--column", "race", "--protocol", "OUE", "--epsilon", "1"),
            "does not exist",
        ),
    ],
)
def test_cli_errors_are_one_line_exit_2(args, pattern):
    result = run(*args)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and pattern in lines[0]
    assert "Traceback" not in result.stderr


def test_building_the_cli_parser_does_not_load_the_ldp_modules():
    code = (
        "import sys, dprelease.cli; dprelease.cli._parser(); "
        "print(sorted(m for m in sys.modules if m.startswith(('dprelease.ldp.', 'pyarrow'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout
    assert out.strip() == "['dprelease.ldp.command']"
