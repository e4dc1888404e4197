"""`risk` and `reconstruct` on the command line: confidential first line, JSON keys, one-line
errors with exit 2, and the attack on a real release's tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dprelease.cli import main
from helpers import ROOT

DATA = str(ROOT / "data" / "census_sample.csv")
SMALL_AREAS = str(ROOT / "data" / "census_small_areas.plan.yaml")
KEYS = {
    "rows",
    "classes",
    "k",
    "unique",
    "below_k",
    "l_distinct",
    "l_entropy",
    "recursive_cl",
    "t_closeness",
}


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_risk_json_has_the_contract_keys(capsys, tmp_path):
    path = tmp_path / "hospital.csv"
    path.write_text(
        "zip,age,disease\n476**,2*,Heart\n476**,2*,Heart\n476**,2*,Heart\n"
        "4790*,>=40,Flu\n4790*,>=40,Heart\n4790*,>=40,Cancer\n"
    )
    code, out, err = run(
        capsys,
        "risk",
        str(path),
        "--qi",
        "zip",
        "age",
        "--sensitive",
        "disease",
        "--k",
        "3",
        "--l",
        "3",
        "--json",
    )
    assert code == 0 and err.startswith("CONFIDENTIAL")  # stdout holds the JSON alone
    result = json.loads(out)
    assert set(result) >= KEYS
    assert (result["rows"], result["classes"], result["k"], result["unique"]) == (6, 2, 3, 0)
    assert (result["below_k"], result["l_distinct"], result["recursive_cl"]) == (0, 1, False)
    assert result["t_closeness"] == pytest.approx(1 / 3)  # ½(1/3 + 1/6 + 1/6)


def test_risk_text_on_the_sample_with_plan_suggestions(capsys):
    code, out, _ = run(
        capsys,
        "risk",
        DATA,
        "--qi",
        "county",
        "age",
        "sex",
        "--sensitive",
        "education",
        "--plan",
        str(ROOT / "data" / "census_sample.plan.yaml"),
    )
    assert code == 0
    assert out.splitlines()[0].startswith("CONFIDENTIAL")
    assert "generalisations reaching k = 5" in out and "county: state" in out


@pytest.mark.parametrize(
    ("args", "pattern"),
    [
        (("--qi", "county", "nope", "--sensitive", "education"), "no column 'nope'"),
        (("--qi", "county", "--sensitive", "county"), "both a quasi-identifier"),
        (("--qi", "county", "--sensitive", "education", "--k", "0"), "at least 1"),
        (("--qi", "county", "--sensitive", "education", "--c", "-1"), "positive"),
    ],
)
def test_risk_errors_are_one_line_and_exit_2(capsys, args, pattern):
    try:
        code = main(["risk", DATA, *args])
    except SystemExit as exit:  # argparse refuses a bad --k or --c before running
        code = exit.code
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1 and pattern in err


def test_reconstruct_prints_the_side_by_side_figures(capsys):
    code, out, err = run(capsys, "reconstruct", SMALL_AREAS, "--max-areas", "20", "--json")
    assert code == 0 and "CONFIDENTIAL" in err
    result = json.loads(out)  # stdout holds the JSON alone
    assert result["exact"]["share_reproduced"] > result["dp"]["share_reproduced"]
    assert "preview" in result["dp"]["tables"] and result["areas_tried"] == 20


def test_reconstruct_reads_a_real_release(capsys, tmp_path):
    out_dir = tmp_path / "release"
    assert main(["release", SMALL_AREAS, "--out", str(out_dir)]) == 0
    capsys.readouterr()
    code, out, _ = run(
        capsys, "reconstruct", SMALL_AREAS, "--max-areas", "10", "--epsilon-release", str(out_dir)
    )
    assert code == 0 and out.startswith("CONFIDENTIAL")
    assert "DP release 'release' at ε = 1" in out
    assert "tables not used" in out and "state_by_sex" in out


def test_reconstruct_errors(capsys, tmp_path):
    code, _, err = run(capsys, "reconstruct", SMALL_AREAS, "--level", "income")
    assert code == 2 and err.startswith("error: No table of the plan is published per 'income'")
    code, _, err = run(capsys, "reconstruct", SMALL_AREAS, "--epsilon-release", str(tmp_path))
    assert code == 2 and "not a release folder" in err


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_reconstruct_with_no_area_small_enough_attacks_nothing_and_says_so(capsys, json_flag):
    """Issue 37: every state has more than 50 people, so nothing can be attacked. Before, the
    command printed both attacks as "0 of 0 records reproduced, share 0.0%" (and the JSON rates
    of 0) and exited 0; a rate of 0 must never stand for "not run"."""
    args = ("reconstruct", SMALL_AREAS, "--level", "state", "--max-people", "50", *json_flag)
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: Nothing was attacked: no 'state' area")
    assert "--level (such as 'county')" in err and "--max-people" in err
    assert "0.0%" not in err


def _plan_with_a_statistic(tmp_path: Path) -> str:
    """The small-areas plan plus a median income per sex (a statistic, issue 24 point 1)."""
    import yaml

    raw = yaml.safe_load(Path(SMALL_AREAS).read_text(encoding="utf-8"))
    raw["data"] = DATA
    raw["tables"].append(
        {
            "name": "median_income",
            "by": ["sex"],
            "stat": {"quantile": 0.5, "column": "income", "bounds": [0, 500000]},
        }
    )
    path = tmp_path / "with_statistic.plan.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("per_area", [False, True])
def test_reconstruct_with_a_statistic_in_the_plan(capsys, tmp_path, per_area):
    plan = _plan_with_a_statistic(tmp_path)
    extra = ["--per-area"] if per_area else []
    code, out, err = run(
        capsys,
        "reconstruct",
        plan,
        "--max-areas",
        "5",
        "--seconds-per-area",
        "0.5",
        *extra,
        "--json",
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["dp"]["epsilon"] == pytest.approx(1.0, rel=1e-6)  # the whole plan's ε
    assert "median_income" not in result["tables"]


def _codes(tmp_path: Path) -> tuple[str, str]:
    """Race as codes 1..9 (numbers, declared categorical) and a plan that says so."""
    data = tmp_path / "codes.csv"
    data.write_text("zip,race\na,1\na,1\na,2\na,2\nb,9\nb,9\nb,2\nb,2\n", encoding="utf-8")
    plan = tmp_path / "codes.plan.json"
    plan.write_text(
        json.dumps(
            {
                "version": 1,
                "columns": {"race": {"kind": "categorical", "domain": list("123456789")}},
                "tables": [{"name": "race", "by": ["race"]}],
                "budget": {"accounting": "pure", "epsilon": 1.0},
            }
        ),
        encoding="utf-8",
    )
    return str(data), str(plan)


def test_risk_json_writes_one_json_object_and_nothing_else(capsys, tmp_path):
    data, plan = _codes(tmp_path)
    code, out, err = run(
        capsys, "risk", data, "--qi", "zip", "--sensitive", "race", "--plan", plan, "--json"
    )
    assert code == 0
    result = json.loads(out)  # the whole of stdout
    assert result["confidential"] is True and "CONFIDENTIAL" in err
    assert result["t_ground_distance"] == "equal"  # declared categorical: nominal
    assert result["t_closeness"] == pytest.approx(0.25)


def test_risk_ordered_makes_a_column_ordered(capsys, tmp_path):
    data, plan = _codes(tmp_path)
    args = ["risk", data, "--qi", "zip", "--sensitive", "race", "--json"]
    code, out, _ = run(capsys, *args, "--plan", plan, "--ordered", "race")
    assert code == 0 and json.loads(out)["t_ground_distance"] == "ordered"
    code, out, _ = run(capsys, *args)  # no plan: numbers are ordered
    assert code == 0 and json.loads(out)["t_ground_distance"] == "ordered"
    code, _, err = run(capsys, *args, "--ordered", "nope")
    assert code == 2 and err.startswith("error: ") and "nope" in err and err.count("\n") == 1


def test_risk_l_is_its_own_choice(capsys, tmp_path):
    data, _ = _codes(tmp_path)
    args = ["risk", data, "--qi", "zip", "--sensitive", "race", "--k", "4", "--json"]
    code, out, _ = run(capsys, *args, "--l", "2", "--c", "3")
    result = json.loads(out)
    assert code == 0 and (result["l"], result["chosen_k"], result["recursive_cl"]) == (2, 4, True)
    code, out, _ = run(capsys, *args)
    assert json.loads(out)["l"] == 2  # the default, whatever k is
    code, out, _ = run(capsys, "risk", data, "--qi", "zip", "--sensitive", "race")
    assert "recursive (2, 2)" in out


def test_reconstruct_refuses_a_discovered_domain_in_one_line(capsys, tmp_path):
    """A domain discovered from the data is not in the plan: the attack cannot lay out the
    records, and says so (it used to fail as an internal error)."""
    plan = tmp_path / "discover.plan.json"
    plan.write_text(
        json.dumps(
            {
                "version": 1,
                "data": DATA,
                "columns": {
                    "state": {"kind": "categorical", "domain": {"discover": {"min_count": 20}}},
                    "sex": {"kind": "categorical", "domain": ["Female", "Male"]},
                },
                "tables": [{"name": "state_by_sex", "by": ["state", "sex"]}],
                "budget": {"accounting": "zcdp", "epsilon": 1.0, "delta": 1e-9},
            }
        ),
        encoding="utf-8",
    )
    code, _, err = run(capsys, "reconstruct", str(plan), "--level", "state", "--max-areas", "3")
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1
    assert "discovered" in err and "state" in err
