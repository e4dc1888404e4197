"""A binned numeric column's `labels: [one per bin]` (issue 24, point 7): parsed and checked,
written back, carried by released CSVs as `C_label` after the bin column, listed in the
report and the metadata, shown in charts; the bin texts `[a, b)` stay the codes."""

import csv
import io
import json

import pytest

from dprelease.data.count import count, load_data
from dprelease.errors import PlanError
from dprelease.plan.parse import dumps_plan, loads_plan, parse_plan, plan_to_dict
from dprelease.release.draw import draw_release
from dprelease.release.export import release_files, with_labels
from dprelease.release.report_domains import domains_html

AGES = ["0–17", "18–64", "65 and over"]


def binned_plan(labels: object = AGES) -> dict:
    return {
        "version": 1,
        "columns": {
            "sex": {"kind": "categorical", "domain": [1, 2], "labels": {1: "Male", 2: "Female"}},
            "age": {"kind": "numeric", "bins": [0, 18, 65, 120], "labels": labels},
        },
        "tables": [{"name": "age", "by": ["age"]}, {"name": "sex_by_age", "by": ["sex", "age"]}],
        "budget": {"accounting": "zcdp", "epsilon": 1.0, "delta": 1e-10},
    }


def problems_of(raw) -> str:
    with pytest.raises(PlanError) as caught:
        parse_plan(raw)
    return " | ".join(caught.value.problems)


def test_bin_labels_are_kept_and_the_bins_stay_the_codes():
    age = parse_plan(binned_plan()).schema["age"]
    assert age.labels == ("[0, 18)", "[18, 65)", "[65, 120]")  # the codes, as before
    assert age.value_labels == dict(zip(age.labels, AGES, strict=True))
    assert age.label_of("[18, 65)") == "18–64"
    assert age.display_labels == tuple(AGES)  # charts show the labels


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        (["0–17", "18+"], "Column 'age' has 3 bins but 2 labels; give one label per bin"),
        ([*AGES, "x"], "Column 'age' has 3 bins but 4 labels"),
        ({"[0, 18)": "child"}, "Column 'age': labels of bins are a list, one label per bin"),
        (["0–17", 18, "65+"], "Column 'age': the label of bin 2 must be non-empty text"),
        (["0–17", " ", "65+"], "the label of bin 2 must be non-empty text"),
        (["a", "a", "b"], "Column 'age': bin labels must differ; 'a' is given twice"),
        (["a\nb", "c", "d"], "the label of bin 1 must be one printable line"),
    ],
)
def test_a_wrong_list_of_bin_labels_is_one_clear_line(labels, expected):
    message = problems_of(binned_plan(labels))
    assert expected in message, message
    assert "\n" not in message


def test_bin_labels_round_trip_through_yaml_and_json():
    plan = parse_plan(binned_plan())
    for fmt in ("yaml", "json"):
        assert loads_plan(dumps_plan(plan, fmt), fmt).schema == plan.schema
    assert plan_to_dict(plan)["columns"]["age"]["labels"] == AGES


def test_bin_labels_may_not_clash_with_a_column_name():
    raw = binned_plan()
    raw["columns"]["age_label"] = {"kind": "categorical", "domain": ["a"]}
    assert "Column 'age_label' has the name of the label column" in problems_of(raw)


def test_with_labels_puts_a_label_column_after_a_labelled_bin_column():
    schema = parse_plan(binned_plan()).schema
    header, rows = with_labels(
        ["sex", "age", "count"], [["1", "[65, 120]", "3"]], ["sex", "age"], schema
    )
    assert header == ["sex", "sex_label", "age", "age_label", "count"]
    assert list(rows) == [["1", "Male", "[65, 120]", "65 and over", "3"]]


@pytest.fixture(scope="module")
def binned_release(tmp_path_factory):
    data = tmp_path_factory.mktemp("binned") / "people.csv"
    data.write_text("sex,age\n1,3\n2,40\n1,70\n")
    plan = parse_plan(binned_plan())
    return release_files(draw_release(plan, count(load_data(data, plan), plan)))


def test_released_csvs_metadata_and_report_carry_the_bin_labels(binned_release):
    files = binned_release
    rows = list(csv.reader(io.StringIO(files["tables/sex_by_age.csv"].decode())))
    assert rows[0] == ["sex", "sex_label", "age", "age_label", "count", "moe"]
    assert [r[2:4] for r in rows[1:4]] == [
        ["[0, 18)", "0–17"],
        ["[18, 65)", "18–64"],
        ["[65, 120]", "65 and over"],
    ]
    measured = files[next(f for f in files if f.startswith("measurements/"))].decode()
    assert "age_label" in measured.splitlines()[0]
    meta = json.loads(files["metadata.json"])
    assert meta["columns"]["age"]["value_labels"] == {
        "[0, 18)": "0–17",
        "[18, 65)": "18–64",
        "[65, 120]": "65 and over",
    }
    report = files["report.html"].decode()
    assert "<td>[18, 65)</td><td>18–64</td>" in report


def test_report_of_unlabelled_bins_is_unchanged():
    raw = binned_plan()
    del raw["columns"]["age"]["labels"]
    html = domains_html(parse_plan(raw))
    assert "<td>[0, 18)</td></tr>" in html and "<th>label</th>" not in html.split("<h3>age")[1]
