"""Issue 11, input holes: YAML alias bombs, domain-size amplification, quoted values bounded
before they are formatted, header cells that may be records, and report.html escaping.

Each test here failed before its fix (checked by running it against the code before).
"""

from __future__ import annotations

import csv
import resource
import subprocess
import sys
import time
from html import escape
from pathlib import Path

import pytest

from dprelease import cli
from dprelease.accounting.accountants.registry import check_plan as check_accounting
from dprelease.data.count import count, load_data
from dprelease.errors import DataError, PlanError, quote
from dprelease.limits import MAX_CELLS
from dprelease.plan.parse import load_plan, loads_plan, parse_plan
from dprelease.plan.size import column_size, table_cells
from dprelease.release.draw import draw_release
from dprelease.release.report import report_html
from helpers.cli import child_env
from helpers.trust_input import ROOT, TAIL, alias_bomb, wide_plan


def limited_run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`python -m dprelease ...` with 2 GB of address space: a bomb fails fast, not the box."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    return subprocess.run(
        [sys.executable, "-m", "dprelease", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=child_env(),
        timeout=timeout,
        preexec_fn=limit,
    )


def one_error_line(result: subprocess.CompletedProcess[str], piece: str) -> str:
    assert result.returncode == 2, result.stderr[-2000:]
    lines = result.stderr.splitlines()
    assert lines and all(line.startswith("error: ") for line in lines), lines
    assert piece in lines[0], lines[0]
    return lines[0]


# --- High 3: YAML aliases ------------------------------------------------------------------


def test_the_908_byte_alias_bomb_is_refused_at_once_by_the_cli(tmp_path: Path) -> None:
    plan = tmp_path / "bomb.yaml"
    plan.write_text(alias_bomb())
    assert len(plan.read_bytes()) < 1000  # 9 levels of 9: 387,420,489 strings once expanded
    started = time.perf_counter()
    for command in ("plan", "validate"):
        line = one_error_line(limited_run(command, str(plan)), "alias")
        assert "at line " in line  # where a repeated value is defined
    assert time.perf_counter() - started < 30  # two interpreter starts; it took 96 s before


@pytest.mark.parametrize(
    "text",
    [
        "columns:\n  a: {kind: categorical, domain: &d [x, y]}\n  b: {kind: categorical, "
        "domain: *d}\n" + TAIL,
        "defaults: &b {accounting: pure, epsilon: 1}\ncolumns: {a: {domain: [x]}}\n"
        "tables: [{name: t, by: [a]}]\nbudget: {<<: *b}\n",  # a merge key is an alias too
        "columns: &c {a: {domain: [x]}, b: *c}\n" + TAIL,  # a recursive alias
    ],
    ids=["plain alias", "merge key", "recursive"],
)
def test_every_yaml_alias_is_refused(text: str) -> None:
    with pytest.raises(PlanError, match=r"YAML alias \(\*name\); plans may not use aliases"):
        loads_plan(text, "yaml")


def test_an_anchor_without_an_alias_is_harmless() -> None:
    plan = loads_plan("columns: {a: {domain: &d [x, y]}}\n" + TAIL, "yaml")
    assert plan.schema["a"].size == 2


# --- High 3: quoted values are bounded before they are formatted ---------------------------


def test_quote_reads_as_repr_for_short_values_and_stays_short_for_huge_ones() -> None:
    for value in ("sex", "it's", "a\nb", 1.5, 7, None, True, [1, "x"]):
        assert quote(value) == repr(value)
    assert quote("x" * 10**7) == "'" + "x" * 37 + "..." + "x" * 38 + "'"
    assert quote(list(range(10**6))) == "[0, 1, 2, 3, 4, 5, ...]"
    assert quote([[[[["deep"]]]]]) == "[[[[...]]]]"
    assert quote(10**4000) == "<a whole number of about 4,000 digits>"  # repr would raise
    assert len(quote({"k" * 10**6: "v" * 10**6})) < 200


@pytest.mark.parametrize(
    ("mutate", "where"),
    [
        (lambda raw: raw["columns"]["a"].update(domain=[list(range(10**6))]), "domain values"),
        (lambda raw: raw["columns"]["a"].update(kind="k" * 10**6), "kind must be"),
        (lambda raw: raw["budget"].update(epsilon=["e"] * 10**6), "must be a number"),
        (lambda raw: raw["budget"].update(accounting="a" * 10**6), "budget.accounting"),
        (lambda raw: raw.update({"x" * 10**6: 1}), "Unknown key"),
        (lambda raw: raw["tables"].append({"name": "n" * 10**6, "by": ["a"]}), "Table name"),
        (lambda raw: raw["budget"].update(epsilon=10**4000), "is too large"),  # was a crash
    ],
    ids=["nested domain", "kind", "epsilon list", "accounting", "key", "table name", "huge int"],
)
def test_a_huge_value_is_quoted_in_a_few_characters(mutate, where: str) -> None:
    raw = {
        "columns": {"a": {"kind": "categorical", "domain": ["x", "y"]}},
        "tables": [{"name": "t", "by": ["a"]}],
        "budget": {"accounting": "pure", "epsilon": 1},
    }
    mutate(raw)
    with pytest.raises(PlanError) as error:
        # as the CLI and the dashboard read a plan: parsed, then its accountant's rules
        check_accounting(parse_plan(raw))
    problems = [p for p in error.value.problems if where in p]
    assert problems, error.value.problems
    assert all(len(p) < 400 for p in error.value.problems), [len(p) for p in error.value.problems]


# --- Medium 7: domain-size amplification ---------------------------------------------------


def test_thirty_million_value_columns_are_refused_before_any_is_expanded() -> None:
    text = wide_plan(30)
    assert len(text) < 2000
    started = time.perf_counter()
    with pytest.raises(PlanError, match="30,000,000 domain values in all; at most 10,000,000"):
        loads_plan(text, "yaml")
    assert time.perf_counter() - started < 0.5  # 17.8 s and 1.4 GB before


def test_a_table_of_too_many_cells_is_refused_from_the_domain_sizes() -> None:
    # 3 columns of 1,000 values: 3,000 domain values, but one table of 10^9 cells
    with pytest.raises(PlanError, match="tables have 1,000,000,000 cells in all"):
        loads_plan(wide_plan(3, last=999), "yaml")
    with pytest.raises(PlanError, match="tables have more than 1,000,000,000,000,000,000 cells"):
        loads_plan(wide_plan(9, last=999), "yaml")


def test_the_limit_is_the_shared_constant_and_can_be_raised() -> None:
    assert MAX_CELLS == 10_000_000
    text = wide_plan(11, one_table=False)  # 11 one-way tables of 1,000,000 cells
    with pytest.raises(PlanError, match="11,000,000 domain values"):
        loads_plan(text, "yaml")
    plan = loads_plan(wide_plan(2, last=99, one_table=False), "yaml", max_cells=200)
    assert sum(spec.cells(plan.schema) for spec in plan.tables) == 200
    with pytest.raises(PlanError, match="at most 199 are allowed"):
        loads_plan(wide_plan(2, last=99, one_table=False), "yaml", max_cells=199)


@pytest.mark.parametrize(
    ("raw", "size"),
    [
        ({"domain": ["a", "b", "c"]}, 3),
        ({"kind": "categorical", "domain": {"range": [1, 7]}}, 7),
        ({"kind": "numeric", "bins": [0, 18, 65, 120]}, 3),
        ({"bins": {"start": 0, "stop": 120, "width": 5}}, 24),
        ({"bins": {"start": 0, "stop": 100, "width": 30}}, 4),  # 0, 30, 60, 90, 100
        ({"bins": {"start": 0, "stop": 1, "width": 1e-300}}, 10**18),  # capped, not expanded
        ({"domain": {"range": [5, 1]}}, 0),  # malformed: the parser says why
    ],
)
def test_column_sizes_are_counted_as_the_parser_builds_them(raw, size: int) -> None:
    assert column_size(raw) == size
    if 0 < size < 1000:
        plan = parse_plan(
            {
                "columns": {"a": raw},
                "tables": [{"name": "t", "by": ["a"]}],
                "budget": {"accounting": "pure", "epsilon": 1},
            }
        )
        assert plan.schema["a"].size == size


def test_table_cells_of_a_draft_match_the_parsed_plan_and_mark_undeclared_columns() -> None:
    draft = {
        "columns": {
            "sex": {"domain": ["F", "M"]},
            "age": {"kind": "numeric", "bins": {"start": 0, "stop": 100, "width": 10}},
            "year": {"domain": {"range": [2000, 2019]}},
        },
        "tables": [
            {"name": "total"},
            {"name": "sex_age", "by": ["sex", "age"]},
            {"name": "year", "by": "year"},
            {"name": "draft", "by": ["sex", "county"]},  # county is not declared yet
        ],
        "budget": {"accounting": "pure", "epsilon": 1},
    }
    assert table_cells(draft) == [1, 2 * 10, 20, None]
    parsed = parse_plan({**draft, "tables": draft["tables"][:3]})
    assert table_cells(draft)[:3] == [t.cells(parsed.schema) for t in parsed.tables]


@pytest.mark.parametrize("command", ["plan", "validate", "release"])
def test_max_cells_on_the_command_line(tmp_path: Path, command: str) -> None:
    plan = tmp_path / "p.yaml"
    plan.write_text(wide_plan(30))
    data = tmp_path / "d.csv"
    data.write_text("c0,c1\n1,2\n")
    extra = ["--data", str(data), "--out", str(tmp_path / "r.zip")] if command == "release" else []
    line = one_error_line(limited_run(command, str(plan), *extra), "at most 10,000,000")
    assert "--max-cells" in line
    small = tmp_path / "s.yaml"
    small.write_text(wide_plan(2, last=99, one_table=False))
    one_error_line(limited_run(command, str(small), *extra, "--max-cells", "150"), "at most 150")
    assert cli.main([command, str(small), *extra, "--max-cells", "200"]) == 0
    one_error_line(limited_run(command, str(small), "--max-cells", "0"), "at least 1")


# --- Low 9: a header cell may be a record --------------------------------------------------


RECORD = ("Grace", "F", "34", "Ward-Hospice-Room-12")


@pytest.mark.parametrize(
    "columns",
    [
        {"race": {"domain": ["W"]}},  # 'Grace' is close to 'race': no "Did you mean 'Grace'?"
        {"sex": {"domain": ["F"]}, "34": {"domain": ["x"]}},  # one of them is "found"
        {"ward": {"domain": ["x"]}},
    ],
)
def test_a_headerless_file_never_has_its_first_record_quoted(tmp_path: Path, columns) -> None:
    data = tmp_path / "d.csv"
    data.write_text(",".join(RECORD) + "\nAda,M,51,Ward-2\n")
    raw = {
        "columns": columns,
        "tables": [{"name": "t", "by": list(columns)}],
        "budget": {"accounting": "pure", "epsilon": 1},
    }
    with pytest.raises(DataError) as error:
        load_data(data, parse_plan(raw))
    message = str(error.value)
    assert "has no column" in message and "4 column" in message
    assert not [value for value in RECORD if value in message], message


def test_duplicate_header_cells_are_named_by_position() -> None:
    from dprelease.data.read import read_data

    with pytest.raises(DataError) as error:
        read_data(b"Grace,F,F\nAda,M,M\n", filename="d.csv")
    assert str(error.value) == (
        "The data has duplicate column names (columns 2 and 3 have the same name); each name "
        "may appear once."
    )


def test_a_name_equal_up_to_case_is_still_suggested() -> None:
    raw = {
        "columns": {"sex": {"domain": ["F"]}},
        "tables": [{"name": "t", "by": ["sex"]}],
        "budget": {"accounting": "pure", "epsilon": 1},
    }
    with pytest.raises(DataError, match="Did you mean 'SEX'"):
        load_data(b"SEX,age\nF,3\n", parse_plan(raw), filename="d.csv")


# --- report.html escapes every name --------------------------------------------------------


PLANTED = {
    "script": "<script>alert(1)</script>",
    "attribute": '"><img src=x onerror=alert(2)>',
    "entity": "a&b<i>",
}


def test_report_html_escapes_column_names_labels_and_the_unit_column(tmp_path: Path) -> None:
    script, attribute, entity = PLANTED.values()
    raw = {
        "unit": {"kind": "id", "column": entity, "max_rows": 2},
        "columns": {
            script: {"kind": "categorical", "domain": ["<b>x</b>", "y"], "other": "y"},
            attribute: {"kind": "numeric", "bins": [0, 10, 100]},
        },
        "tables": [
            {"name": "both", "by": [script, attribute]},
            {"name": "one", "by": [script]},
        ],
        "budget": {"accounting": "pure", "epsilon": 1},
        "postprocess": {"consistent": True},
    }
    data = tmp_path / "d.csv"
    rows = [(["<b>x</b>", "y"][i % 2], i % 50, i // 2) for i in range(100)]
    with data.open("w", newline="") as file:
        csv.writer(file).writerows([(script, attribute, entity), *rows])
    plan = parse_plan(raw)
    html = report_html(draw_release(plan, count(load_data(data, plan), plan)))
    for planted in (*PLANTED.values(), "<b>x</b>"):
        assert planted not in html
    for name in (script, attribute):
        assert escape(name) in html  # shown, escaped
    assert escape(entity) in html
    assert "<script" not in html.lower() and "<img" not in html.lower()


def test_table_names_cannot_carry_html() -> None:
    with pytest.raises(PlanError, match="Table name '<b>t</b>' is not allowed"):
        parse_plan(
            {
                "columns": {"a": {"domain": ["x"]}},
                "tables": [{"name": "<b>t</b>", "by": ["a"]}],
                "budget": {"accounting": "pure", "epsilon": 1},
            }
        )


def test_the_bundled_plan_still_loads() -> None:
    plan = load_plan(ROOT / "data" / "census_sample.plan.yaml")
    assert sum(spec.cells(plan.schema) for spec in plan.tables) == 10_401
