"""The typed workspace of one browser session, kept in `st.session_state` only.

Private data (the uploaded bytes, the parsed table, previews with true counts) lives here and
nowhere else: never in `st.cache_data` (shared by every user of the server), never in a
module-level variable, never on disk (only what the public bundled sample and its plan give is
shared between sessions: `ui/sample_memo.py`).
The plan is kept as the plan file's mapping, so a half-finished plan survives every rerun and
every error, and saving it gives the CLI's format;
the plan alone (public) is also kept on the server under this browser's token
(`dprelease/ledger/plans.py`, see `ui/session.py`), so that it survives a reload or a
restart.
"""

from __future__ import annotations

import functools
import hashlib
import json
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import streamlit as st

from dprelease.accounting.tradeoffs import MoeCurve
from dprelease.admission import DataSize
from dprelease.data.coverage import PlanCoverage, plan_coverage
from dprelease.data.engines.registry import ENGINE_CHOICES
from dprelease.data.fingerprint import RecordFingerprint, fingerprint_table
from dprelease.data.read import read_data
from dprelease.errors import DPReleaseError
from dprelease.ledger.plans import Offer, new_token
from dprelease.ledger.store import Ledger
from dprelease.limits import MAX_CELLS
from dprelease.plan.edit import PlanDict
from dprelease.plan.model import Plan
from dprelease.plan.parse import load_plan, parse_plan, plan_to_dict, with_budget
from dprelease.release.admitted import admit_plan
from dprelease.release.draw import Preview
from dprelease.release.publish import Account
from dprelease.release.service import UploadData, open_ledger
from dprelease.release.service import ledger_account as service_account
from dprelease.release.suggest import Suggestion
from dprelease.stats.allocation import PlanAllocation, allocate
from ui.sample_memo import shared

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DATA = ROOT / "data" / "census_sample.csv"
SAMPLE_PLAN = ROOT / "data" / "census_sample.plan.yaml"
_KEY = "workspace"


@dataclass(frozen=True)
class Upload:
    """The data set: CONFIDENTIAL bytes, the name that decides the format, and its SHA-256
    (the key of the budget ledger)."""

    name: str
    data: bytes = field(repr=False)
    sha256: str
    is_sample: bool

    @classmethod
    def of(cls, name: str, data: bytes, is_sample: bool = False) -> Upload:
        return cls(name, data, hashlib.sha256(data).hexdigest(), is_sample)


@dataclass(frozen=True)
class ReleaseResult:
    """A finished release: the zip the user downloads and the report shown in the page,
    kept for the whole session (the user paid for it)."""

    release_id: str
    zip_bytes: bytes = field(repr=False)
    report_html: str = field(repr=False)
    epsilon: float | None = None
    delta: float | None = None
    created: str = ""  # UTC time, for the list of the session's releases
    plan_key: str = ""  # the plan's exact text, so the page knows whether it was released
    data_name: str = ""


_Checked = tuple[Plan | None, PlanAllocation | None, str | None]


@dataclass
class Memo:
    """Derived values kept between reruns, each written by the one place named beside it."""

    # `current_plan`: the last few plans' SHA-256 → parsed, allocated (public; oldest first)
    checked: dict[str, _Checked] = field(default_factory=dict)
    # `records_fingerprint`: (upload SHA-256, the fingerprint of its records)
    records: tuple[str, RecordFingerprint] | None = None
    curve: tuple[str, MoeCurve] | None = None  # Budget page: (plan text, MoE against ε)
    editing_column: str | None = None  # column editor: the expander kept open while edited
    budget_error: str | None = None  # budget inputs: why the last typed value was refused
    dataset_name_error: str | None = None  # Release page: the refused `dataset:` name
    upload_id: str | None = None  # Data page: the last uploaded file handled
    plan_id: str | None = None  # Data page: the last plan file handled
    flash: str | None = None  # Data page: a success message shown once after a rerun
    risk_attack: dict[str, Any] | None = None  # Risk page: the last reconstruction attack
    risk_inputs: dict[str, Any] = field(default_factory=dict)  # Risk page: widget key → choice
    coverage: tuple[str, str, PlanCoverage] | None = None  # `coverage`: (SHA, plan, figures)
    resume: list[Offer] = field(default_factory=list)  # `ui/session.py`: plans offered, in turn
    saved_plan: str | None = None  # `ui/session.py`: plan and scenarios last kept on the server
    store_error: str | None = None  # `ui/session.py`: why the plan could not be kept
    confirm_another: bool = False  # Release page: "Prepare another" asked for confirmation
    upload_error: str | None = None  # Data page: why the last file was refused, shown once
    uploader_version: int = 0  # Data page: raised to empty the uploader after a refusal
    typed_columns: list[str] = field(default_factory=list)  # Data page: names typed, no data
    codebook_added: bool = False  # `ui/plan_without_data.py`: reset the parent box next run
    quick_columns: list[str] = field(default_factory=list)  # Tables page: the quick-add choice
    wanted_data: str | None = None  # `ui/session.py`: the data file a resumed plan was made for
    plan_slot: Any = None  # `ui/sidebar.py`: the sidebar's slot for the plan's figures (this run's)
    declared: tuple[str, Any] | None = None  # `ui/declared_labels.py`: (SHA, the file's labels)
    parsed: tuple[str, Plan] | None = None  # `_checked`: the last plan's text but budget, parse


@dataclass
class Workspace:
    plan: PlanDict
    upload: Upload | None  # None: a plan without data (a codebook, or a plan resumed)
    table: pa.Table | None = field(default=None, repr=False)  # CONFIDENTIAL parsed upload
    preview: Preview | None = field(default=None, repr=False)  # CONFIDENTIAL
    suggestion: Suggestion | None = None  # the sparse vector's charged answer (issue 16)
    release: ReleaseResult | None = None  # the release of the current attempt, once made
    releases: list[ReleaseResult] = field(default_factory=list)  # every release this session
    attempt_id: str = field(default_factory=lambda: secrets.token_hex(16))
    scenarios: dict[str, PlanDict] = field(default_factory=dict)
    token: str = field(default_factory=new_token)  # finds this browser's kept plan
    memo: Memo = field(default_factory=Memo)

    def new_attempt(self) -> None:
        """A fresh id for the next release; the ledger charges each id at most once. The
        releases made so far stay in `releases`, downloadable until the session ends."""
        self.attempt_id = secrets.token_hex(16)
        self.release = None

    def add_release(self, result: ReleaseResult) -> None:
        self.release = result
        self.releases.append(result)

    def set_data(self, upload: Upload | None, table: pa.Table | None = None) -> None:
        """Another data set (None: none): nothing derived from the old one is kept."""
        self.upload = upload
        self.table = table
        self.preview = None
        self.memo.coverage = None
        self.new_attempt()


@functools.cache
def _sample_plan_json() -> str:
    """The bundled sample plan, parsed once per server: it is public, and parsing its YAML on
    every run cost a noticeable share of the server's time under load."""
    plan = plan_to_dict(load_plan(SAMPLE_PLAN))
    plan.pop("data", None)  # the data is whatever the Data page holds
    return json.dumps(plan)


@functools.cache
def _sample_plan_key() -> str:
    return json.dumps(json.loads(_sample_plan_json()), sort_keys=True)


def _is_the_sample_plan(key: str) -> bool:
    """Whether a plan's key (`plan_key`) is the bundled sample plan's, unchanged."""
    return key == _sample_plan_key()


def sample_plan_dict() -> PlanDict:
    """A fresh copy of the sample plan (callers may edit it)."""
    plan: PlanDict = json.loads(_sample_plan_json())
    return plan


def sample_upload() -> Upload:
    return Upload.of(SAMPLE_DATA.name, SAMPLE_DATA.read_bytes(), is_sample=True)


def workspace() -> Workspace:
    """This session's workspace, opened on the bundled sample the first time (a plan kept
    for this browser is then offered back, see `ui/session.py`)."""
    if _KEY not in st.session_state:
        st.session_state[_KEY] = Workspace(plan=sample_plan_dict(), upload=sample_upload())
    ws: Workspace = st.session_state[_KEY]
    return ws


def reset_to_sample(ws: Workspace) -> None:
    """The bundled sample and its plan; the releases of the session stay downloadable."""
    ws.plan = sample_plan_dict()
    ws.set_data(sample_upload())


NO_DATA = (
    "No data are loaded: this plan was made without them. Upload the data on the Data page, "
    "or release where the data live with "
    f"`dprelease release PLAN.yaml --data DATA --engine {'|'.join(ENGINE_CHOICES)}` "
    "(save the plan on the Data page)."
)


def require_upload(ws: Workspace) -> Upload:
    """The data set, or (a plan without data) say how to get one and stop the page."""
    if ws.upload is None:
        st.info(NO_DATA)
        st.stop()
    return ws.upload


def upload_size(ws: Workspace) -> DataSize:
    """What admission knows of the upload (issue 35): its bytes and, once parsed, its rows."""
    upload = require_upload(ws)
    rows = None if ws.table is None else ws.table.num_rows
    return DataSize(rows=rows, bytes=len(upload.data))


def parsed_table(ws: Workspace) -> pa.Table:
    """The upload parsed once per session (all columns as text) for the Data page."""
    upload = require_upload(ws)
    if ws.table is None:
        if upload.is_sample:  # public: parsed once per server (ui/sample_memo.py)
            ws.table = shared("table", upload.sha256, lambda: _parsed(upload))
        else:
            ws.table = _parsed(upload)
    return ws.table


def _parsed(upload: Upload) -> pa.Table:
    return read_data(upload.data, filename=upload.name)


def coverage(ws: Workspace) -> PlanCoverage | None:
    """CONFIDENTIAL: rows the plan's tables and statistics leave out of this upload, or None (no
    data, or no valid plan), remembered for the upload and the plan's exact text."""
    plan, _ = current_plan(ws)
    if ws.upload is None or plan is None or not (plan.tables or plan.statistics):
        return None
    key = (ws.upload.sha256, plan_key(ws))
    remembered = ws.memo.coverage
    if remembered is not None and remembered[:2] == key:
        return remembered[2]

    def figures_of_the_plan() -> PlanCoverage | None:
        try:
            return plan_coverage(parsed_table(ws), plan)
        except DPReleaseError:
            return None

    if ws.upload.is_sample and _is_the_sample_plan(key[1]):  # public: once per server
        figures = shared("coverage", ws.upload.sha256, figures_of_the_plan)
    else:
        figures = figures_of_the_plan()
    if figures is not None:
        ws.memo.coverage = (*key, figures)
    return figures


def plan_key(ws: Workspace) -> str:
    """The plan's exact text, the key of everything remembered for one version of it."""
    return json.dumps(ws.plan, sort_keys=True)


def consent_key(ws: Workspace, name: str) -> str:
    """The widget key of a release confirmation, bound to what it confirms: this attempt,
    these data and this plan's exact text (its cost). A consent is given once for one release:
    a new upload or data set, an edited plan, a new session, the next release each draw a new,
    unticked box (issue 37: a box ticked for ε = 1 stayed ticked when the plan changed)."""
    data = ws.upload.sha256 if ws.upload is not None else ""
    scope = hashlib.sha256(f"{ws.attempt_id}\0{data}\0{plan_key(ws)}".encode()).hexdigest()
    return f"{name}_{scope[:24]}"


def current_plan(ws: Workspace) -> tuple[Plan | None, str | None]:
    """The workspace's plan, or every problem of why it is not valid, one per line."""
    plan, _, problem = _checked(ws)
    if plan is None:
        return None, problem
    return plan, None


def current_allocation(ws: Workspace) -> tuple[Plan | None, PlanAllocation | None, str | None]:
    return _checked(ws)


RECENT_PLANS = 8  # plans whose allocation a session keeps: an ε what-if back is instant


def _checked(ws: Workspace) -> _Checked:
    """The plan parsed and allocated, remembered for the plan's exact text: the sidebar and the
    page both ask on every run, the allocation's accountant search is not free, and a what-if
    often goes back to a total tried a moment ago. Plans and allocations are public; they are
    kept in this session's workspace only, but for the bundled sample plan unchanged, which is
    checked once per server (`ui/sample_memo.py`)."""
    key = plan_key(ws)
    text = hashlib.sha256(key.encode()).hexdigest()  # not 8 copies of a long plan
    recent = ws.memo.checked
    if text in recent:
        recent[text] = recent.pop(text)  # the most recent last
        return recent[text]
    rest = _without_budget(ws.plan, key)  # by text: a part changed in place is seen too
    last = ws.memo.parsed
    if _is_the_sample_plan(key):
        result = shared("checked", text, lambda: _parse_and_allocate(ws.plan))
    elif last is not None and last[0] == rest:
        result = _parse_and_allocate(ws.plan, last[1])  # a what-if: only the budget moved
    else:
        result = _parse_and_allocate(ws.plan)
    if result[0] is not None:
        ws.memo.parsed = (rest, result[0])
    recent[text] = result
    while len(recent) > RECENT_PLANS:
        del recent[next(iter(recent))]
    return result


def _without_budget(plan_dict: PlanDict, key: str) -> str:
    """The plan's text but its budget: equal texts, equal plans but for the budget. Read off
    its text `key` (`plan_key`) when the budget is its first key, as it is in every plan
    (keys are sorted, and no other top-level key sorts before it): no second encoding."""
    first = '{"budget": ' + json.dumps(plan_dict.get("budget"), sort_keys=True)
    if "budget" in plan_dict and key.startswith(first):
        return key[len(first) :]
    return json.dumps({k: v for k, v in plan_dict.items() if k != "budget"}, sort_keys=True)


def _parse_and_allocate(plan_dict: PlanDict, same_but_budget: Plan | None = None) -> _Checked:
    """`same_but_budget`: the plan parsed from `plan_dict` but its budget, if known (only the
    budget is then parsed, and the plan keeps the Schema whose digest keys the allocation's
    caches)."""
    try:
        if same_but_budget is not None:
            plan = with_budget(same_but_budget, plan_dict)
        else:
            plan = parse_plan(plan_dict, max_cells=MAX_CELLS)
    except DPReleaseError as error:
        return None, None, every_problem(error)
    if not plan.tables:
        return plan, None, "The plan has no tables yet: add some on the Tables page."
    try:
        admit_plan(plan)  # issue 35: the allocation's work, from the plan, before it runs
        return plan, allocate(plan), None
    except DPReleaseError as error:
        return plan, None, str(error)


def every_problem(error: DPReleaseError) -> str:
    """All of an error's problems, one per line (not "and N more"; show with `md_lines`)."""
    return "\n".join(error.problems) if len(error.problems) > 1 else str(error)


def ledger() -> Ledger:
    """The budget ledger on disk (DPRELEASE_LEDGER, else ~/.dprelease/ledger.sqlite), the
    same one the CLI charges (`dprelease.release.service`)."""
    return open_ledger()


def records_fingerprint(ws: Workspace) -> RecordFingerprint:
    """The fingerprint of the upload's parsed records, made once per upload and kept in this
    session only (a charged release checks it saw every record it counts)."""
    upload = require_upload(ws)
    remembered = ws.memo.records
    if remembered is None or remembered[0] != upload.sha256:
        if upload.is_sample:  # public: made once per server (ui/sample_memo.py)
            fingerprint = shared(
                "fingerprint", upload.sha256, lambda: fingerprint_table(parsed_table(ws))
            )
        else:
            fingerprint = fingerprint_table(parsed_table(ws))
        remembered = (upload.sha256, fingerprint)
        ws.memo.records = remembered
    return remembered[1]


def records_key(ws: Workspace) -> str:
    """The ledger key of the upload's records."""
    return records_fingerprint(ws).key()


def release_data(ws: Workspace) -> UploadData:
    """The upload as the release service reads it, with its records' fingerprint made once."""
    upload = require_upload(ws)
    return UploadData(upload.data, upload.name, records_fingerprint(ws))


def ledger_account(ws: Workspace, book: Ledger) -> Account:
    """Where a release of this upload is charged (`dprelease.release.service.ledger_account`,
    the CLI's rule too), under the plan's `dataset:` name."""
    name = ws.plan.get("dataset")
    return service_account(book, release_data(ws), name if isinstance(name, str) else None)
