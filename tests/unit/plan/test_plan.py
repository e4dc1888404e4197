"""Plans: every problem reported once with a clear message; files round-trip."""

import json
import re

import pytest

from dprelease.accounting.accountants.registry import check_plan
from dprelease.errors import PlanError
from dprelease.plan.parse import dumps_plan, load_plan, loads_plan, parse_plan, save_plan
from helpers.cli import run
from helpers.plans import plan_dict


def problems_of(raw) -> list[str]:
    """The plan's problems: parsing's, else its accountant's (the registry checks the
    `budget.accounting` text and what it rules, once the plan is parsed: issue 26)."""
    with pytest.raises(PlanError) as caught:
        check_plan(parse_plan(raw))
    return caught.value.problems


def test_round_trip_yaml_and_json(tmp_path):
    plan = parse_plan(plan_dict())
    for name in ("p.yaml", "p.json"):
        save_plan(plan, tmp_path / name)
        again = load_plan(tmp_path / name)
        assert again.schema == plan.schema and again.tables == plan.tables
        assert again.budget == plan.budget


def test_bins_labels_keep_plan_spelling():
    plan = parse_plan(plan_dict())
    labels = plan.schema["age"].labels
    assert labels[0] == "[0, 18)" and labels[-1] == "[85, 120]"
    raw = plan_dict()
    raw["columns"]["age"]["bins"] = [0.5, 18, 2e3]
    assert parse_plan(raw).schema["age"].labels == ("[0.5, 18)", "[18, 2000.0]")


def test_bins_shorthand_and_domain_range():
    raw = plan_dict()
    raw["columns"]["age"] = {"kind": "numeric", "bins": {"start": 0, "stop": 100, "width": 25}}
    raw["columns"]["size"] = {"kind": "categorical", "domain": {"range": [1, 7]}}
    plan = parse_plan(raw)
    assert plan.schema["age"].edges == (0, 25, 50, 75, 100)
    assert plan.schema["size"].labels == ("1", "2", "3", "4", "5", "6", "7")


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            lambda r: r["tables"].append({"name": "x", "by": ["rcae"]}),
            "column 'rcae'.*Did you mean 'race'",
        ),
        (lambda r: r["columns"]["sex"].update(domain=[]), "empty domain"),
        (lambda r: r["columns"]["sex"].update(domain=["F", "F"]), "duplicate domain values: F"),
        (lambda r: r["columns"]["age"].update(bins=[0, 18, 18, 30]), "strictly increasing"),
        (lambda r: r["budget"].update(epsilon=0), "greater than 0"),
        (lambda r: r["budget"].update(epsilon=float("nan")), "finite"),
        (lambda r: r["budget"].update(epsilon=1e308), "too large to be meaningful"),
        (lambda r: r["budget"].update(epsilon="one"), "must be a number"),
        (lambda r: r["budget"].update(delta=1.0), "above 0 and at most 0.001"),
        (lambda r: r["budget"].update(delta=0), "above 0 and at most 0.001"),
        (lambda r: r["budget"].pop("delta"), "delta is required"),
        (lambda r: r["tables"][0].update(weight=-1), "weight must be"),
        (lambda r: r.update(postprocss={}), "Unknown key 'postprocss'.*Did you mean 'postprocess'"),
        (lambda r: r["budget"].update(acounting="zcdp"), "Did you mean 'accounting'"),
        (lambda r: r["budget"].update(accounting="moments"), "accounting must be one of"),
        (lambda r: r["tables"].append({"name": "sex", "by": ["race"]}), "used twice"),
        (lambda r: r["tables"].append({"name": "../evil", "by": []}), "not allowed"),
        (lambda r: r["columns"]["race"].update(other="Unknown"), "other label"),
        (lambda r: r.update(neighbors="swap"), "neighbors must be"),
        (lambda r: r.update(tables=[]), "no tables"),
        (lambda r: r["budget"].update(confidence=1.5), "confidence"),
        (lambda r: r.update(version=2), "version"),
        # found in review
        (lambda r: r.update(postprocess={"clamp": [float("nan"), None]}), "finite numbers"),
        (lambda r: r.update(postprocess={"clamp": [0, float("inf")]}), "finite numbers"),
        (lambda r: r.update(postprocess={"clamp": [1e20, None]}), "finite numbers"),
        (lambda r: r["tables"][0].update(target={"moe": 1e308}), "too large"),
        (lambda r: r["columns"]["sex"].update(domain=[1, 1.0]), "equal as numbers"),
        (lambda r: r["columns"].update(count={"domain": ["a"]}), "may not be called 'count'"),
        (lambda r: r.update(unit={"kind": "id", "column": [1], "max_rows": 2}), "unit.column"),
        (lambda r: r.update(version=True), "version"),
    ],
)
def test_each_problem_has_a_clear_message(mutate, expected):
    raw = plan_dict()
    mutate(raw)
    assert any(re.search(expected, p) for p in problems_of(raw)), problems_of(raw)


def test_all_problems_are_reported_at_once():
    raw = plan_dict()
    raw["budget"]["epsilon"] = -1
    raw["columns"]["sex"]["domian"] = ["a"]
    raw["tables"].append({"name": "t", "by": ["sexx"]})
    problems = problems_of(raw)
    assert len(problems) >= 3
    with pytest.raises(PlanError, match=r"\(and \d+ more problems: run `validate`\)"):
        parse_plan(raw)


def test_hierarchy_checks():
    raw = plan_dict()
    raw["columns"]["state"] = {"kind": "categorical", "domain": ["01", "02"]}
    raw["columns"]["county"] = {
        "kind": "categorical",
        "domain": ["01001", "02001"],
        "parent": "state",
        "parent_map": {"01001": "01"},
    }
    assert any("parent_map misses 1" in p for p in problems_of(raw))
    raw["columns"]["county"]["parent_map"] = {"01001": "01", "02001": "03"}
    assert any("not in the domain of 'state'" in p for p in problems_of(raw))
    raw["columns"]["county"]["parent_map"] = {"01001": "01", "02001": "02"}
    raw["columns"]["state"].update(parent="county", parent_map={"01": "01001", "02": "02001"})
    assert any("cycle" in p for p in problems_of(raw))


def test_a_parent_code_no_child_maps_to_is_refused_with_the_codes_named():
    """Issue 13: a typo '6' for '06' in the parent's domain silently broke the hierarchy."""
    raw = plan_dict()
    raw["columns"]["state"] = {"kind": "categorical", "domain": ["01", "6", "06"]}
    raw["columns"]["county"] = {
        "kind": "categorical",
        "domain": ["01001", "06001", "06003"],
        "parent": "state",
        "parent_map": {"01001": "01", "06001": "06", "06003": "06"},
    }
    problems = problems_of(raw)
    assert problems == [
        "Column 'state' has codes that no code of its child 'county' maps to ('6'); a typo "
        "such as '6' for '06'? Correct the domain of 'state' or the parent_map."
    ]
    # the child side at the same time: both problems, every code named
    raw["columns"]["county"]["parent_map"] = {"01001": "1", "06001": "06", "06003": "6"}
    problems = problems_of(raw)
    assert len(problems) == 2
    assert "parent codes not in the domain of 'state' ('1')" in problems[0]
    assert "no code of its child 'county' maps to ('01')" in problems[1]
    raw["columns"]["state"]["domain"] = ["01", "06"]
    raw["columns"]["county"]["parent_map"] = {"01001": "01", "06001": "06", "06003": "06"}
    assert parse_plan(raw).schema["state"].labels == ("01", "06")


def test_a_broken_hierarchy_is_refused_by_the_cli(tmp_path):
    raw = plan_dict()
    raw["columns"]["state"] = {"kind": "categorical", "domain": ["01", "6", "06"]}
    raw["columns"]["county"] = {
        "kind": "categorical",
        "domain": ["01001", "06001"],
        "parent": "state",
        "parent_map": {"01001": "01", "06001": "06"},
    }
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(raw))
    result = run("plan", str(path))
    assert result.returncode == 2
    assert "no code of its child 'county' maps to ('6')" in result.stderr


def test_syntax_errors_name_the_line(tmp_path):
    with pytest.raises(PlanError, match=r"not valid YAML.*line \d"):
        loads_plan("version: 1\ncolumns: [a\n", "yaml")
    with pytest.raises(PlanError, match="not valid JSON"):
        loads_plan("{", "json")
    with pytest.raises(PlanError, match="must end in"):
        load_plan(tmp_path / "plan.txt")
    with pytest.raises(PlanError, match="does not exist"):
        load_plan(tmp_path / "missing.yaml")


def test_dumped_json_is_the_plan_format():
    text = dumps_plan(parse_plan(plan_dict()), "json")
    assert json.loads(text)["budget"]["accounting"] == "zcdp"


def test_numbers_as_column_names_are_taken_as_text():
    raw = plan_dict()
    raw["columns"]["2020"] = raw["columns"].pop("sex")
    raw["tables"] = [{"name": "t", "by": [2020]}]
    raw["unit"] = {"kind": "id", "column": 17, "max_rows": 2}
    plan = parse_plan(raw)
    assert plan.tables[0].by == ("2020",) and plan.unit.column == "17"


@pytest.mark.parametrize(
    ("text", "fmt"),
    [
        ("budget: {accounting: pure, epsilon: 1, epsilon: 50}", "yaml"),
        ('{"budget": {"accounting": "pure", "epsilon": 1, "epsilon": 50}}', "json"),
    ],
)
def test_a_key_given_twice_is_refused(text, fmt):
    with pytest.raises(PlanError, match="'epsilon' twice"):
        loads_plan(text, fmt)


def test_key_lists_and_defaults_come_from_the_value_types() -> None:
    """Written once, in the dataclasses: the parser's allowed keys (in the order its messages
    list them) and the defaults the parser, the draft plan and the pages fill in."""
    from dprelease.plan.edit import empty_plan
    from dprelease.plan.fields import BUDGET_KEYS, POSTPROCESS_KEYS, TABLE_KEYS, UNIT_KEYS
    from dprelease.plan.model import Budget, Plan, default_of

    assert BUDGET_KEYS == (
        "accounting",
        "epsilon",
        "delta",
        "rho",
        "allocation",
        "confidence",
        "strategy",
    )
    assert TABLE_KEYS == (
        "name",
        "by",
        "weight",
        "epsilon",
        "rho",
        "delta",
        "target",
        "invariant",
        "survey_weight",
        "stat",
    )
    assert POSTPROCESS_KEYS == (
        "clamp",
        "nonnegative",
        "integer",
        "consistent",
        "synthetic",
        "estimate",
    )
    assert UNIT_KEYS == ("kind", "column", "max_rows")
    assert (default_of(Budget, "accounting"), default_of(Budget, "confidence")) == ("auto", 0.95)
    assert default_of(Budget, "strategy") == "auto"
    assert default_of(Plan, "neighbors") == "add_remove"
    with pytest.raises(KeyError):
        default_of(Plan, "schema")  # required: no default
    draft = {**empty_plan(), "columns": {"sex": {"domain": ["F", "M"]}}}
    draft["tables"] = [{"name": "sex", "by": ["sex"]}]
    plan = parse_plan(draft)
    assert (plan.budget.accounting, plan.budget.allocation, plan.budget.confidence) == (
        "auto",
        "optimal",
        0.95,
    )
    assert (plan.unit.kind, plan.unit.max_rows, plan.neighbors) == ("row", 1, "add_remove")
    assert plan.postprocess.to_dict() == {
        "clamp": [None, None],
        "nonnegative": True,
        "integer": True,
        "consistent": True,
    }
    assert empty_plan()["postprocess"] == {
        "clamp": [None, None],
        "nonnegative": True,
        "integer": True,
        "consistent": True,
    }


def test_consistency_is_on_unless_the_plan_says_otherwise() -> None:
    """Issue 24.3 (contract section 5): additive tables by default, in every way a plan is made:
    `postprocess` left out, `consistent` left out, and the dashboard's new plan (which writes it,
    so that the saved plan says so); an explicit `false` is kept."""
    from dprelease.plan.edit import empty_plan

    base = plan_dict()
    base.pop("postprocess", None)
    assert parse_plan(base).postprocess.consistent is True
    assert parse_plan({**base, "postprocess": {"integer": False}}).postprocess.consistent is True
    assert empty_plan()["postprocess"]["consistent"] is True
    off = parse_plan({**base, "postprocess": {"consistent": False}})
    assert off.postprocess.consistent is False
