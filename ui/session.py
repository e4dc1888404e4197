"""Work that survives a reload, a restart and a closed tab.

Each browser holds a random token (in the page's URL as `?plan=…` and in a cookie, so a reload,
a reopened tab and a fresh visit all find it); the server keeps that browser's plan, and only
the plan, under it (`ui/plan_store.py`). A new session that finds a kept plan offers it back
("Resume your plan from 14:02?") before anything overwrites it. The data are never kept: a
resumed plan asks for them again, and coverage checks the plan against them. Leaving the page
with an unreleased plan asks first (the browser's `beforeunload` prompt).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import streamlit as st

from dprelease.errors import DPReleaseError
from ui.markdown import md
from ui.plan_store import PlanStore, StoredPlan, is_token
from ui.state import Workspace, plan_key, sample_plan_dict, sample_upload

TOKEN_PARAM = "plan"
COOKIE = "dprelease_plan"
COOKIE_DAYS = 30


def _browser_token() -> str | None:
    """The token this browser brought: the URL's, else the cookie's."""
    for found in (st.query_params.get(TOKEN_PARAM), _cookie()):
        if is_token(found):
            return found
    return None


def _cookie() -> str | None:
    try:
        return st.context.cookies.get(COOKIE)
    except (AttributeError, RuntimeError):  # no browser (a bare script run)
        return None


def start_session(ws: Workspace, store: PlanStore | None = None) -> None:
    """Once per session: adopt the browser's token and offer its kept plan back."""
    if ws.memo.saved_plan is not None or ws.memo.resume is not None:
        return
    store = store or PlanStore()
    token = _browser_token()
    kept = store.load(token) if token is not None else None
    if token is not None and kept is not None:  # an unknown token is never adopted: a link
        ws.token = token  # cannot make this browser save its plan where a stranger looks
        if kept.plan != ws.plan:
            ws.memo.resume = kept
    ws.memo.saved_plan = plan_key(ws) if ws.memo.resume is None else ""


def resume(ws: Workspace, kept: StoredPlan) -> None:
    """Take the kept plan back. Its data are asked for again (never kept), except the bundled
    sample, which is public."""
    ws.plan = kept.plan
    ws.set_data(sample_upload() if kept.sample else None)
    ws.memo.wanted_data = None if kept.sample else kept.data_name
    ws.memo.resume = None


def decline(ws: Workspace) -> None:
    ws.memo.resume = None


def saved_at(kept: StoredPlan) -> str:
    """When the plan was kept, in the browser's time zone when it says which (else UTC)."""
    zone_name = getattr(st.context, "timezone", None)
    try:
        zone = ZoneInfo(zone_name) if zone_name else UTC
    except (ZoneInfoNotFoundError, ValueError):
        zone = UTC
    local = kept.saved.astimezone(zone)
    today = datetime.now(zone).date()
    text = local.strftime("%H:%M") if local.date() == today else local.strftime("%d %b %Y, %H:%M")
    return text + ("" if zone is not UTC else " UTC")


def resume_offer(ws: Workspace) -> None:
    """The banner that offers a kept plan back, on every page until answered."""
    kept = ws.memo.resume
    if kept is None:
        return
    tables = len(kept.plan.get("tables", []))
    columns = len(kept.plan.get("columns", {}))
    data = f" made for **{md(kept.data_name)}**" if kept.data_name else " made without data"
    with st.container(border=True, key="resume_box"):
        st.markdown(
            f"**Resume your plan from {saved_at(kept)}?** {columns} column(s), {tables} "
            f"table(s),{data}. "
            + ("" if kept.sample else "Its data were not kept: you upload them again.")
        )
        yes, no = st.columns([1, 3])
        yes.button("Resume", key="resume_plan", type="primary", on_click=resume, args=(ws, kept))
        no.button("Start afresh", key="resume_decline", on_click=decline, args=(ws,))


def keep_plan(ws: Workspace, store: PlanStore | None = None) -> None:
    """Keep the plan on the server when it changed (never while a kept plan is still on
    offer: that would overwrite it before the user answered)."""
    if ws.memo.resume is not None:
        return
    text = plan_key(ws)
    if text == ws.memo.saved_plan:
        return
    upload = ws.upload
    try:
        (store or PlanStore()).save(
            ws.token,
            ws.plan,
            data_name=upload.name if upload is not None else None,
            sample=upload is not None and upload.is_sample,
        )
    except DPReleaseError as error:
        ws.memo.store_error = str(error)
    else:
        ws.memo.store_error = None
    ws.memo.saved_plan = text


def unreleased(ws: Workspace) -> bool:
    """Whether leaving would walk away from work: a plan of the user's own with tables, that
    no release of this session was made from."""
    if not ws.plan.get("tables") or ws.plan == sample_plan_dict():
        return False
    return all(result.plan_key != plan_key(ws) for result in ws.releases)


def browser_guard(ws: Workspace) -> None:
    """The token in the URL (a page switch clears the URL's query). The page's own script,
    the cookie and the `beforeunload` prompt, is `guard_script`: the sidebar draws it beside
    the budget figures, so a fragment that changes the plan redraws it too."""
    if st.query_params.get(TOKEN_PARAM) != ws.token:
        st.query_params[TOKEN_PARAM] = ws.token


def guard_script(ws: Workspace) -> None:
    """Script in the page itself: the token's cookie, and the `beforeunload` prompt while the
    plan is unreleased. The snippet changes only when the flag does, so it runs again then."""
    flag = json.dumps(unreleased(ws))
    token = json.dumps(ws.token)  # a URL-safe token: letters, digits, '-' and '_'
    st.html(
        "<script>"
        f"document.cookie = '{COOKIE}=' + {token} + '; path=/; max-age={COOKIE_DAYS * 86400}; "
        "SameSite=Strict';"
        f"window.dpreleaseUnreleased = {flag};"
        "if (!window.dpreleaseGuard) {"
        "  window.dpreleaseGuard = true;"
        "  window.addEventListener('beforeunload', (event) => {"
        "    if (window.dpreleaseUnreleased) { event.preventDefault(); event.returnValue = ''; }"
        "  });"
        "}"
        "</script>",
        unsafe_allow_javascript=True,
    )
