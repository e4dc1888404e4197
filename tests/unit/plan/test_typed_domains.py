"""Domains are saved as typed (issue 24, point 7): a categorical column whose codes are not
all whole numbers is all text ('01', '06', '13', '17'), from pasted text, a codebook, the data
or a plan file; leading zeros are kept, also when a YAML plan writes them unquoted."""

import pyarrow as pa
import yaml

from dprelease.data.domains import domain_from_data
from dprelease.plan.codebook_csv import read_codebook
from dprelease.plan.edit import parse_domain_text
from dprelease.plan.parse import dumps_plan, loads_plan, parse_plan, plan_to_dict


def test_pasted_codes_with_leading_zeros_are_all_text():
    assert parse_domain_text("01\n06\n13\n17") == ["01", "06", "13", "17"]
    assert parse_domain_text("1, 2, 13") == [1, 2, 13]  # whole numbers alone stay numbers
    assert parse_domain_text("13, N") == ["13", "N"]


def test_codebook_codes_with_leading_zeros_are_all_text():
    book = read_codebook(b"code,label\n01,Alabama\n06,California\n13,Georgia\n17,Illinois\n")
    assert book.values == ["01", "06", "13", "17"]
    assert book.labels == {"01": "Alabama", "06": "California", "13": "Georgia", "17": "Illinois"}


def test_a_domain_from_the_data_is_all_text_when_one_code_is_text():
    column = pa.chunked_array([pa.array(["13", "01", "06", "17", "01"])])
    assert domain_from_data(column, "state") == ["01", "06", "13", "17"]


def _plan(domain) -> dict:
    return {
        "version": 1,
        "columns": {"state": {"kind": "categorical", "domain": domain, "other": 13}},
        "tables": [{"name": "state", "by": ["state"]}],
        "budget": {"accounting": "pure", "epsilon": 1.0},
    }


def test_a_mixed_domain_is_read_and_saved_as_text():
    plan = parse_plan(_plan(["01", "06", 13, 17]))
    assert plan.schema["state"].domain == ("01", "06", "13", "17")
    saved = plan_to_dict(plan)["columns"]["state"]
    assert saved["domain"] == ["01", "06", "13", "17"] and saved["other"] == "13"
    text = dumps_plan(plan, "yaml")
    assert yaml.safe_load(text)["columns"]["state"]["domain"] == ["01", "06", "13", "17"]
    assert parse_plan(_plan([1, 2, 13])).schema["state"].domain == (1, 2, 13)


def test_unquoted_codes_with_leading_zeros_in_yaml_stay_text():
    text = (
        "version: 1\ncolumns:\n  state: {kind: categorical, domain: [01, 06, 08, 13],"
        " labels: {01: Alabama}}\ntables: [{name: s, by: [state]}]\n"
        "budget: {accounting: pure, epsilon: 1.0}\n"
    )
    state = loads_plan(text, "yaml").schema["state"]
    assert state.domain == ("01", "06", "08", "13")
    assert state.value_labels == {"01": "Alabama"}


def test_a_declared_domain_and_its_other_code_are_saved_with_one_type():
    from dprelease.plan.edit import empty_plan, set_categorical

    plan = set_categorical(empty_plan(), "state", ["01", "06", 13], other=13)
    assert plan["columns"]["state"]["domain"] == ["01", "06", "13"]
    assert plan["columns"]["state"]["other"] == "13"
    numbers = set_categorical(empty_plan(), "sex", [1, 2], other=2)
    assert numbers["columns"]["sex"] == {"kind": "categorical", "domain": [1, 2], "other": 2}
