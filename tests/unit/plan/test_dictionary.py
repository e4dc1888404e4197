"""Issue 37, point 7: a whole data dictionary at once (JSON or a long CSV), shown before it
is applied: codes, labels, a parent column and bins for every column it names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dprelease.errors import PlanError
from dprelease.plan.dictionary import read_dictionary
from dprelease.plan.edit import empty_plan
from dprelease.plan.parse import parse_plan
from helpers.cli import run

JSON = {
    "state": {"description": "State (FIPS)", "values": {"06": "California", "21": "Kentucky"}},
    "county": {
        "description": "County",
        "values": {"06001": "Alameda", "06003": "Alpine", "21001": "Adair"},
        "parent": "state",
        "parents": {"06001": "06", "06003": "06", "21001": "21"},
    },
    "age": {"description": "Age", "bins": [0, 18, 65, 120], "bin_labels": ["0-17", "18-64", "65+"]},
    "tenure": {"values": ["Owner", "Renter"]},
    "PWGTP": {"description": "Person weight", "values": {"1": "one"}},
}
LONG_CSV = (
    "column,value,label,parent\n"
    "state,06,California,\nstate,21,Kentucky,\n"
    "county,06001,Alameda,06\ncounty,06003,Alpine,06\ncounty,21001,Adair,21\n"
    "tenure,Owner,,\ntenure,Renter,Renting,\n"
)


def _present() -> set[str]:
    return {"state", "county", "age", "tenure"}


def test_a_json_dictionary_is_previewed_then_applied_to_the_columns_the_data_have():
    book = read_dictionary(json.dumps(JSON).encode(), "dictionary.json")
    rows = {r["column"]: r for r in book.preview(_present())}
    assert rows["county"]["sets"] == "categorical, 3 codes, 3 labelled, parent state"
    assert rows["age"]["sets"] == "numeric, 3 bins, labelled"
    assert rows["PWGTP"]["note"] == "not in the data"  # said, and left out
    plan = book.apply(empty_plan(), _present())
    assert set(plan["columns"]) == _present()
    parsed = parse_plan({**plan, "tables": [{"name": "c", "by": ["county"]}]})
    county = parsed.schema["county"]
    assert county.label_of("06003") == "Alpine" and county.parent == "state"  # type: ignore[attr-defined]
    assert parsed.schema["age"].bin_labels == ("0-17", "18-64", "65+")  # type: ignore[attr-defined]
    assert "domain_source" not in plan["columns"]["state"]  # public metadata, as if typed


def test_a_long_csv_gives_the_same_columns_and_finds_the_parent_column():
    book = read_dictionary(LONG_CSV.encode(), "dictionary.csv")
    plan = book.apply(empty_plan(), None)
    assert plan["columns"]["county"]["parent"] == "state"
    assert plan["columns"]["county"]["parent_map"]["21001"] == "21"
    assert plan["columns"]["tenure"]["labels"] == {"Renter": "Renting"}
    parse_plan({**plan, "tables": [{"name": "c", "by": ["county"]}]})


@pytest.mark.parametrize(
    ("data", "name", "message"),
    [
        (b"\xff\xfe", "d.csv", "not UTF-8"),
        (b"{", "d.json", "not valid JSON"),
        (b"[1]", "d.json", "is an object"),
        (b'{"a": {"values": {"x": 1}, "bins": [0, 1]}}', "d.json", "exactly one of"),
        (b'{"a": {"values": ["x", "x"]}}', "d.json", "a code twice"),
        (b'{"a": {"values": {"x": "' + b"y" * 300 + b'"}}}', "d.json", "longer than"),
        (b"name,code\na,1\n", "d.csv", "starts with the header"),
        (b"column,value,label,parent\nc,1,,99\n", "d.csv", "no other column holds"),
    ],
)
def test_bad_dictionaries_are_one_line_errors(data: bytes, name: str, message: str):
    with pytest.raises(PlanError, match=message) as refused:
        read_dictionary(data, name)
    assert "\n" not in str(refused.value)


def test_the_cli_shows_then_writes(tmp_path: Path):
    plan = tmp_path / "p.yaml"
    columns = "\n".join(f"  {c}: {{kind: categorical, domain: [x]}}" for c in ("state", "tenure"))
    plan.write_text(
        f"columns:\n{columns}\ntables:\n  - {{name: s, by: [state]}}\nbudget: {{epsilon: 1}}\n"
    )
    book = tmp_path / "dictionary.json"
    book.write_text(json.dumps(JSON))
    shown = run("codebook", "--dictionary", str(book), "--plan", str(plan))
    assert shown.returncode == 0, shown.stderr
    assert "state: categorical, 2 codes, 2 labelled  — State (FIPS)" in shown.stdout
    assert "county: left out  (not in the data)" in shown.stdout
    assert "nothing written" in shown.stdout and not (tmp_path / "new.yaml").exists()
    written = run("codebook", "--dictionary", str(book), "--plan", str(plan), "--out",
                  str(tmp_path / "new.yaml"))  # fmt: skip
    assert written.returncode == 0, written.stderr
    text = (tmp_path / "new.yaml").read_text()
    assert "California" in text and "Renter" in text and "county" not in text
