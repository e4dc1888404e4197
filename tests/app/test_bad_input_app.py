"""Bad input, kind by kind, in the dashboard: data uploads, plan-file uploads and budget entries.

The dashboard side of `tests/unit/cli/test_bad_input.py`, driven with Streamlit's AppTest. A
failure is no exception, exactly one `st.error` of a single line that says what to change, and the
session's previous data set and plan unchanged. Text that is only unusual (Latin-1, UTF-16,
formula-like labels) is loaded with no error.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dprelease.limits import EPSILON_LIMIT
from helpers import fuzz
from helpers.app import go, open_app, upload_small_csv, workspace
from helpers.bad_input import (
    CITY_ROWS,
    COLUMNS,
    GOOD_DATA,
    HIERARCHY,
    PURE,
    TABLES,
    random_bytes,
    write_sheet,
    zip_bomb,
)

CSV = "text/csv"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


@dataclass(frozen=True)
class Upload:
    """One kind of uploaded file and its expected outcome."""

    name: str
    filename: str
    content: bytes | Callable[[Path], None]
    expect: str | None  # a piece of the one error line; None: it loads
    mime: str = CSV

    def data(self, tmp_path: Path) -> bytes:
        if isinstance(self.content, bytes):
            return self.content
        path = tmp_path / self.filename
        self.content(path)
        return path.read_bytes()


DATA = [
    Upload("empty file", "data.csv", b"", "is empty"),
    Upload("whitespace only", "data.csv", b"\xef\xbb\xbf \n\n", "is empty"),
    Upload("header only", "data.csv", b"sex,age\n", "no rows"),
    Upload("csv that is an xlsx", "data.csv", write_sheet, "extension .csv"),
    Upload("xlsx that is csv text", "data.xlsx", GOOD_DATA, "extension .xlsx", XLSX),
    Upload("parquet that is text", "d.parquet", GOOD_DATA, "extension .parquet", "application/x"),
    Upload("broken xlsx", "d.xlsx", b"PK\x03\x04" + random_bytes(1, 300), "not a readable", XLSX),
    Upload("binary with NUL bytes", "data.csv", random_bytes(2, 4000), "NUL bytes"),
    Upload("binary without NUL", "data.csv", random_bytes(3, 4000, low=128), "read as CSV"),
    Upload("NUL inside text", "data.csv", b"sex,age\nF\x00,30\n", "NUL bytes"),
    Upload("UTF-16 without BOM", "data.csv", CITY_ROWS.encode("utf-16-le"), "byte-order mark"),
    Upload("duplicate column names", "data.csv", b"sex,age,sex\nF,30,M\n", "duplicate column"),
    Upload("ragged rows", "data.csv", b"sex,age\nF,30\nM,70,5\n", "Line 3"),
    Upload("unclosed quote", "data.csv", b'sex,age\n"F,30\nM,70\n', "check quoting"),
    Upload("only delimiters", "data.csv", b",,,\n,,,\n", "duplicate column names"),
    Upload("broken parquet", "d.parquet", b"PAR1" + bytes(50) + b"PAR1", "not a readable", "x/y"),
    Upload("Excel zip bomb", "data.xlsx", zip_bomb, "unpacks to more than", XLSX),
    Upload(
        "zip bomb with lying sizes",
        "data.xlsx",
        lambda p: zip_bomb(p, lie=True),
        "not a readable .xlsx",
        XLSX,
    ),
    Upload(
        "10,001 columns",  # every column is read for the Data page: refused from the header
        "data.csv",
        (",".join(f"c{i}" for i in range(10_001)) + "\n" + ",".join("x" * 10_001) + "\n").encode(),
        "reading every column is limited to 10,000",
    ),
    Upload(
        "10,001 Parquet columns",
        "data.parquet",
        lambda path: pq.write_table(pa.table({f"c{i}": ["x"] for i in range(10_001)}), path),
        "reading every column is limited to 10,000",
        "application/octet-stream",
    ),
    Upload("one 8 MB line", "data.csv", b"sex,age\n" + b"F" * (8 << 20) + b",30\nM,7\n", None),
    # the plan is not applied on upload: the columns are named F and 30 and shown as such
    Upload("first line is a record", "data.csv", b"F,30\nM,70\n", None),
    Upload(
        "strange column name",
        "data.csv",
        b'sex,"line\nbreak' + b"x" * 5000 + b'"\nF,1\n',
        None,
    ),
    Upload(
        "formula-like labels",
        "data.csv",
        b"label\n=1+1\n+A1\n-2\n@SUM(A1)\nplain\n=HYPERLINK(1)\n",
        None,
    ),
    Upload("Latin-1 text", "data.csv", CITY_ROWS.encode("latin-1"), None),
    Upload("UTF-16 text with BOM", "data.csv", CITY_ROWS.encode("utf-16"), None),
    Upload("inf and NaN", "data.csv", b"sex,age\nF,inf\nM,NaN\nF,-inf\nM,1e400\n", None),
]

PLANS = [
    ("plan is not YAML", "plan.yaml", "columns: {sex: [\n", "not valid YAML"),
    ("plan is not JSON", "plan.json", '{"columns": ', "not valid JSON"),
    ("plan with a Python tag", "plan.yaml", "!!python/object/apply:os.system ['echo']\n", "YAML"),
    ("plan is a list", "plan.yaml", "- 1\n- 2\n", "not a mapping"),
    (
        "unknown key",
        "plan.yaml",
        COLUMNS + TABLES + "budget: {accounting: pure, epsilon: 1, epsilom: 2}\n",
        "Did you mean 'epsilon'",
    ),
    (
        "cycle in the hierarchy",
        "plan.yaml",
        "columns:\n"
        "  state: {kind: categorical, domain: [AL], parent: county, parent_map: {AL: '01001'}}\n"
        "  county: {kind: categorical, domain: ['01001'], parent: state, "
        "parent_map: {'01001': AL}}\n" + HIERARCHY,
        "cycle",
    ),
    (
        "parent_map misses values",
        "plan.yaml",
        "columns:\n"
        "  state: {kind: categorical, domain: [AL, AK]}\n"
        "  county: {kind: categorical, domain: ['01001', '02013'], parent: state, "
        "parent_map: {'01001': AL}}\n" + HIERARCHY,
        "parent_map misses 1 domain value",
    ),
    (
        "epsilon -1",
        "plan.yaml",
        COLUMNS + TABLES + "budget: {accounting: pure, epsilon: -1}\n",
        "greater than 0",
    ),
    (
        "delta 1",
        "plan.yaml",
        COLUMNS + TABLES + "budget: {accounting: zcdp, epsilon: 1, delta: 1}\n",
        "above 0 and at most 0.001",
    ),
    (  # the accountant registry checks the plan's text once the plan is read (issue 26)
        "unknown accountant",
        "plan.yaml",
        COLUMNS + TABLES + "budget: {accounting: moments, epsilon: 1}\n",
        "budget.accounting must be one of auto, pure",
    ),
    (
        "zcdp without delta",
        "plan.yaml",
        COLUMNS + TABLES + "budget: {accounting: zcdp, epsilon: 1}\n",
        "delta is required with zcdp",
    ),
    (
        "key given twice",
        "plan.yaml",
        COLUMNS + TABLES + "budget: {accounting: pure, epsilon: 1, epsilon: 50}\n",
        "twice",
    ),
    ("key given twice in JSON", "plan.json", '{"columns": {}, "columns": {}}', "twice"),
    ("plan not UTF-8", "plan.yaml", "columns: {city: Zürich}\n".encode("latin-1"), "UTF-8"),
    ("several problems", "plan.yaml", "columns: 1\ntables: 2\nbudget: 3\n", "must be"),
]

BUDGET = [
    ("epsilon_box", "0", "greater than 0"),
    ("epsilon_box", "-1", "greater than 0"),
    ("epsilon_box", "nan", "greater than 0"),
    ("epsilon_box", "1e308", f"at most {EPSILON_LIMIT:g}"),
    ("epsilon_box", "101", f"at most {EPSILON_LIMIT:g}"),  # the widget refuses what plans refuse
    ("epsilon_box", "1e-400", "greater than 0"),
    ("epsilon_box", "one", "greater than 0"),
    ("epsilon_box", "", "greater than 0"),
    ("delta_box", "0", "above 0 and at most 0.001"),
    ("delta_box", "-1", "above 0 and at most 0.001"),
    ("delta_box", "1", "above 0 and at most 0.001"),
    ("delta_box", "nan", "above 0 and at most 0.001"),
    ("delta_box", "1e308", "above 0 and at most 0.001"),
    ("delta_box", "1e-400", "above 0 and at most 0.001"),
    ("delta_box", "tiny", "above 0 and at most 0.001"),
    ("delta_box", "0.01", "the chance the guarantee fails outright"),
    ("delta_box", "0.99", "the chance the guarantee fails outright"),
]


def _errors(app) -> list[str]:
    """The error lines as the user reads them (user strings are Markdown-escaped)."""
    return [re.sub(r"\\(.)", r"\1", str(e.value)) for e in app.error]


def _one_line_error(app, piece: str) -> None:
    assert not app.exception, app.exception
    errors = _errors(app)
    assert len(errors) == 1, errors
    assert "Traceback" not in errors[0] and "run `validate`" not in errors[0], errors[0]
    head, _, listed = errors[0].strip().partition("\n\n")
    if listed:  # several problems: a count, then every problem as one list item of one line
        problems = listed.split("\n")
        assert head.startswith(f"{len(problems)} problems."), errors[0]
        assert all(p.startswith("- ") for p in problems), errors[0]
    else:
        assert "\n" not in head, errors[0]
    assert piece in errors[0], errors[0]


def _state(app):
    ws = workspace(app)
    return ws.upload, copy.deepcopy(ws.plan)


@pytest.mark.parametrize("kind", DATA, ids=[k.name for k in DATA])
def test_bad_data_upload(kind: Upload, tmp_path):
    app = upload_small_csv(open_app())
    upload, plan = _state(app)
    app.file_uploader(key="data_upload").upload(kind.filename, kind.data(tmp_path), kind.mime)
    app.run()
    if kind.expect is None:
        assert not app.exception, app.exception
        assert not app.error, _errors(app)
        assert workspace(app).upload.name == kind.filename
        assert any(s.value.startswith("Loaded") for s in app.success)
        return
    _one_line_error(app, kind.expect)
    assert "previous data set is still loaded" in _errors(app)[0]
    assert _state(app) == (upload, plan)
    app.run()  # the next rerun neither repeats the error nor loses the data
    assert not app.exception and not app.error, _errors(app)
    assert _state(app) == (upload, plan)


@pytest.mark.parametrize(
    ("filename", "text", "expect"),
    [p[1:] for p in PLANS],
    ids=[p[0] for p in PLANS],
)
def test_bad_plan_upload(filename: str, text: str | bytes, expect: str):
    app = upload_small_csv(open_app())
    upload, plan = _state(app)
    data = text if isinstance(text, bytes) else text.encode()
    app.file_uploader(key="plan_upload").upload(filename, data, "application/yaml")
    app.run()
    _one_line_error(app, expect)
    assert _state(app) == (upload, plan)


@pytest.mark.parametrize(
    ("box", "text", "expect"), BUDGET, ids=[f"{b}={t!r}" for b, t, _ in BUDGET]
)
def test_bad_budget_entry(box: str, text: str, expect: str):
    app = go(open_app(), "pages/budget.py")
    assert not app.error, _errors(app)
    upload, plan = _state(app)
    app.text_input(key=box).input(text).run()
    _one_line_error(app, expect)
    assert _state(app) == (upload, plan)


def test_a_good_plan_upload_replaces_the_plan():
    app = upload_small_csv(open_app())
    plan = COLUMNS + TABLES + PURE
    app.file_uploader(key="plan_upload").upload("plan.yaml", plan.encode(), "application/yaml")
    app.run()
    assert not app.exception and not app.error, _errors(app)
    assert set(workspace(app).plan["columns"]) == {"sex", "age"}


def test_there_are_at_least_15_kinds_of_bad_data():
    assert len([k for k in DATA if k.expect]) >= 15


PAGES = [
    "pages/tables.py",
    "pages/budget.py",
    "pages/preview.py",
    "pages/release.py",
    "pages/risk.py",
    "pages/local_dp.py",
]


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    choice=st.data(),
    how=st.sampled_from(["replace", "delete", "add"]),
    value=fuzz.values,
    as_json=st.booleans(),
)
def test_a_randomly_broken_plan_upload_never_breaks_a_page(choice, how, value, as_json):
    """Random plans (from the CLI fuzz test) uploaded in the dashboard: each is loaded or
    refused in one line with the plan kept, and then every page still runs without an
    exception, whatever odd but valid plan was loaded."""
    path = choice.draw(st.sampled_from(fuzz.value_paths(fuzz.VALID_PLAN)))
    text = fuzz.dump_plan(fuzz.mutate_plan(fuzz.VALID_PLAN, path, how, value), as_json)
    app = open_app()
    app.file_uploader(key="data_upload").upload("survey.csv", fuzz.VALID_DATA, CSV).run()
    before = _state(app)
    name = "plan.json" if as_json else "plan.yaml"
    app.file_uploader(key="plan_upload").upload(name, text.encode(), "application/yaml").run()
    assert not app.exception, app.exception
    errors = _errors(app)
    if errors:
        assert len(errors) == 1 and "Your plan is unchanged" in errors[0], errors
        assert _state(app) == before
        return  # the pages then run on the plan before, as every other test's
    for page in PAGES:
        go(app, page)  # asserts no exception
