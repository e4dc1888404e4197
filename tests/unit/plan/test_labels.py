"""Codebook labels: `labels: {code: label}` parsed and checked, written back, kept by edits,
read from a codebook CSV, carried by the released CSVs as `C_label`, listed in the report."""

import csv
import io
import json
import re

import pytest
import yaml

from dprelease.data.count import count, load_data
from dprelease.errors import PlanError
from dprelease.limits import MAX_VALUE_LABEL
from dprelease.plan.codebook_csv import parse_codebook, read_codebook
from dprelease.plan.edit import (
    check_column,
    empty_plan,
    kept_labels,
    labels_text,
    parse_labels_text,
    set_categorical,
)
from dprelease.plan.parse import dumps_plan, loads_plan, parse_plan, plan_to_dict
from dprelease.release.draw import draw_release
from dprelease.release.export import release_files, with_labels
from dprelease.release.report_domains import FOLDED_AFTER, domains_html

STATES = {"01": "Alabama", "06": "California", "N": "not applicable"}


def coded_plan(**columns) -> dict:
    """A plan on codebook-coded columns: text codes with leading zeros and 'N', number codes."""
    raw = {
        "version": 1,
        "columns": {
            "state": {"kind": "categorical", "domain": ["01", "06", "08", "N"], "labels": STATES},
            "sex": {"kind": "categorical", "domain": [1, 2], "labels": {1: "Male", 2: "Female"}},
            "age": {"kind": "numeric", "bins": [0, 18, 65, 120]},
            **columns,
        },
        "tables": [
            {"name": "state", "by": ["state"]},
            {"name": "state_by_sex_by_age", "by": ["state", "sex", "age"]},
            {"name": "total", "by": []},
        ],
        "budget": {"accounting": "zcdp", "epsilon": 1.0, "delta": 1e-10},
    }
    return raw


def problems_of(raw) -> str:
    with pytest.raises(PlanError) as caught:
        parse_plan(raw)
    return " | ".join(caught.value.problems)


def test_labels_are_read_by_code_text_and_shown_as_label_and_code():
    schema = parse_plan(coded_plan()).schema
    state, sex = schema["state"], schema["sex"]
    assert state.value_labels == STATES
    assert sex.value_labels == {"1": "Male", "2": "Female"}  # YAML's number keys as their text
    assert state.display_labels == ("Alabama (01)", "California (06)", "08", "not applicable (N)")
    assert sex.display_labels == ("Male (1)", "Female (2)")
    assert schema["age"].display_labels == ("[0, 18)", "[18, 65)", "[65, 120]")
    assert state.label_of("08") == "" and state.labels == ("01", "06", "08", "N")


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ({"1": "Alabama"}, r"labels name 1 code\(s\) not in its domain \('1'\)"),
        ({1: "Alabama", "6": "California"}, r"not in its domain \('1', '6'\).*quote codes"),
        ({"01": 5}, r"label of code '01' must be non-empty text, got 5"),
        ({"01": "  "}, "must be non-empty text"),
        ({"01": "a\nb"}, "one printable line"),
        ({"01": "x" * (MAX_VALUE_LABEL + 1)}, f"at most {MAX_VALUE_LABEL} characters"),
        (["01", "Alabama"], r"labels must map codes to their labels"),
        ({None: "x"}, "a labelled code must be text or a number"),
    ],
)
def test_bad_labels_are_refused_with_one_clear_line(labels, expected):
    raw = coded_plan()
    raw["columns"]["state"]["labels"] = labels
    message = problems_of(raw)
    assert message.startswith("Column 'state'")
    assert re.search(expected, message), message


def test_labels_of_a_numeric_column_are_a_list_and_may_not_clash_with_a_label_column():
    raw = coded_plan()
    raw["columns"]["age"]["labels"] = {"0": "child"}
    # a numeric column's labels are a list, one per bin (tests/unit/plan/test_bin_labels.py)
    assert "Column 'age': labels of bins are a list, one label per bin" in problems_of(raw)
    clash = coded_plan(state_label={"kind": "categorical", "domain": ["a"]})
    assert "Column 'state_label' has the name of the label column" in problems_of(clash)
    unlabelled = coded_plan(state_label={"kind": "categorical", "domain": ["a"]})
    del unlabelled["columns"]["state"]["labels"]
    parse_plan(unlabelled)  # without labels on `state` the name is free


def test_labels_round_trip_through_yaml_and_json_and_stay_text():
    plan = parse_plan(coded_plan())
    for fmt in ("yaml", "json"):
        text = dumps_plan(plan, fmt)
        assert loads_plan(text, fmt).schema == plan.schema
    text = dumps_plan(plan, "yaml")
    assert "labels: {'01': Alabama, '06': California, 'N': not applicable}" in text
    # "N" quoted: YAML 1.1 readers other than PyYAML take a bare N for false
    assert yaml.safe_load(text)["columns"]["state"]["domain"] == ["01", "06", "08", "N"]
    assert plan_to_dict(plan)["columns"]["sex"]["labels"] == {"1": "Male", "2": "Female"}
    assert "labels" not in plan_to_dict(plan)["columns"]["age"]


def test_codebook_label_column_with_leading_zeros_and_not_applicable():
    book = read_codebook(
        b"\xef\xbb\xbfcode,Label,parent\n01001,Autauga County,01\n01003,,01\nN,Not applicable,N\n"
    )
    assert book.values == ["01001", "01003", "N"]
    assert book.parents == {"01001": "01", "01003": "01", "N": "N"}
    assert book.labels == {"01001": "Autauga County", "N": "Not applicable"}  # empty: no label
    assert read_codebook(b"value,description\n1,Male\n2,Female\n").labels == {
        "1": "Male",
        "2": "Female",
    }
    assert read_codebook(b"value\n1\n2\n").labels is None
    assert parse_codebook(b"value,label\n1,Male\n") == ([1], None)  # the two-part reading


def test_codebook_labels_reach_the_plan_and_a_bad_one_is_refused_by_check_column():
    book = read_codebook(b"code,label\n01,Alabama\n06,California\n")
    plan = set_categorical(empty_plan(), "state", book.values, labels=book.labels)
    check_column(plan, "state")
    assert plan["columns"]["state"]["labels"] == {"01": "Alabama", "06": "California"}
    bad = set_categorical(empty_plan(), "state", ["01"], labels={"1": "Alabama"})
    with pytest.raises(PlanError, match=r"not in its domain \('1'\)"):
        check_column(bad, "state")


def test_typed_labels_and_a_domain_edit_keep_the_labels_of_codes_still_there():
    typed = parse_labels_text("01 = Alabama\n\n N = not applicable = none \n")
    assert typed == {"01": "Alabama", "N": "not applicable = none"}
    assert parse_labels_text(labels_text(typed)) == typed
    assert parse_labels_text("  \n") is None
    for bad in ("01 Alabama", "= Alabama", "01 ="):
        with pytest.raises(PlanError, match="Label line 1 must read `code = label`"):
            parse_labels_text(bad)
    assert kept_labels({"01": "Alabama", "02": "Alaska", "1": "one"}, ["01", 1]) == {
        "01": "Alabama",
        "1": "one",
    }
    assert kept_labels({"02": "Alaska"}, ["01"]) is None


def test_with_labels_adds_a_label_column_after_each_labelled_code_column():
    schema = parse_plan(coded_plan()).schema
    header, rows = with_labels(
        ["state", "sex", "age", "count", "noise_std"],
        [["08", "2", "[0, 18)", "-3", "4.5"], ["N", "1", "[65, 120]", "7", "4.5"]],
        ["state", "sex", "age"],
        schema,
    )
    assert header == [
        "state",
        "state_label",
        "sex",
        "sex_label",
        "age",
        "count",
        "noise_std",
    ]
    assert list(rows) == [
        ["08", "", "2", "Female", "[0, 18)", "-3", "4.5"],
        ["N", "not applicable", "1", "Male", "[65, 120]", "7", "4.5"],
    ]
    header, rows = with_labels(["age", "count"], [["[0, 18)", "1"]], ["age"], schema)
    assert header == ["age", "count"] and list(rows) == [["[0, 18)", "1"]]


@pytest.fixture(scope="module")
def coded_release(tmp_path_factory):
    data = tmp_path_factory.mktemp("coded") / "coded.csv"
    data.write_text(
        "state,sex,age\n" + "".join(f"{s},{x},{a}\n" for s, x, a in [("01", 1, 30), ("N", 2, 5)])
    )
    raw = coded_plan()
    raw["columns"]["sex"]["labels"] = {1: "=HYPERLINK(x)", 2: "Female <b>&"}
    plan = parse_plan(raw)
    return plan, release_files(draw_release(plan, count(load_data(data, plan), plan)))


def test_released_tables_and_measurements_carry_the_labels(coded_release):
    _, files = coded_release
    rows = list(csv.reader(io.StringIO(files["tables/state.csv"].decode())))
    assert rows[0] == ["state", "state_label", "count", "moe"]
    assert [r[:2] for r in rows[1:]] == [
        ["01", "Alabama"],
        ["06", "California"],
        ["08", ""],
        ["N", "not applicable"],
    ]
    assert all(r[2].lstrip("-").isdigit() for r in rows[1:])  # counts stay numbers
    wide = list(csv.reader(io.StringIO(files["tables/state_by_sex_by_age.csv"].decode())))
    assert wide[0] == ["state", "state_label", "sex", "sex_label", "age", "count", "moe"]
    assert wide[1][:5] == ["01", "Alabama", "1", "'=HYPERLINK(x)", "[0, 18)"]  # formula-safe
    assert len(wide) == 1 + 4 * 2 * 3
    # what was measured (strategy auto: the 3-way table) carries the labels too
    measured = list(csv.reader(io.StringIO(files["measurements/state_by_sex_by_age.csv"].decode())))
    assert measured[0] == ["state", "state_label", "sex", "sex_label", "age", "count", "noise_std"]
    assert measured[-1][:2] == ["N", "not applicable"]
    total = list(csv.reader(io.StringIO(files["tables/total.csv"].decode())))
    assert total[0] == ["count", "moe"]
    meta = json.loads(files["metadata.json"])
    assert meta["columns"]["state"]["value_labels"] == STATES
    assert "value_labels" not in meta["columns"]["age"]


def test_report_lists_every_released_domain_with_labels_and_bins_escaped(coded_release):
    _, files = coded_release
    report = files["report.html"].decode()
    section = report[report.index("Columns: the public definitions") :]
    for text in (
        "<h3>state</h3>",
        "<td>01</td><td>Alabama</td>",
        "<td>08</td><td></td>",
        "<td>N</td><td>not applicable</td>",
        "<td>2</td><td>Female &lt;b&gt;&amp;</td>",
        "<td>[0, 18)</td>",
        "<td>[65, 120]</td>",
        "rows with a value outside the domain are left out",
    ):
        assert text in section, text
    assert "<b>&" not in report


def test_report_folds_long_domains_and_names_parents_and_the_other_code():
    codes = [f"{i:05d}" for i in range(FOLDED_AFTER + 1)]
    raw = coded_plan(
        county={
            "kind": "categorical",
            "domain": codes,
            "parent": "state",
            # every state code has a county (a parent code without a child is refused)
            "parent_map": {
                **dict.fromkeys(codes, "06"),
                codes[0]: "01",
                codes[1]: "08",
                codes[2]: "N",
            },
            "other": codes[-1],
        }
    )
    raw["tables"].append({"name": "county", "by": ["county"]})
    html = domains_html(parse_plan(raw))
    county = html[html.index("<h3>county</h3>") :]
    assert f"<details><summary>{FOLDED_AFTER + 1:,} codes</summary>" in county
    assert "<th>state</th>" in county and "<td>00003</td><td></td><td>06</td>" in county
    assert f"counted as {codes[-1]}" in county
    assert "<h3>state</h3>" in html and "<details>" not in html[: html.index("<h3>county")]
