"""Work that survives a reload, a restart and a closed tab.

Each browser holds a random token in a cookie, and only there: the server keeps that browser's
plan and its saved scenarios, and only those, under it (`dprelease/ledger/plans.py`). A new
session that finds a kept plan offers it back ("Resume your plan from 14:02?") before anything
overwrites it, and until it is answered the offer is the whole page: nothing shows the bundled
sample's figures as if they were the plan's. The data are never kept: a resumed plan asks for
them again, and coverage checks the plan against them. Leaving the page with an unreleased plan
asks first (the browser's `beforeunload` prompt).

A link `?plan=TOKEN` opens that plan as a copy only: taking it gives this browser a fresh
token, so the link's owner never sees what is typed afterwards (issue 25.3), and the browser's
own cookie alone decides where its work is written. The token never appears in the address bar,
which people copy and share.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import streamlit as st

from dprelease.errors import DPReleaseError
from dprelease.ledger.plans import Offer, PlanStore, StoredPlan, is_token, new_token
from ui.markdown import md
from ui.state import Workspace, plan_key, sample_plan_dict, sample_upload

TOKEN_PARAM = "plan"
COOKIE = "dprelease_plan"
COOKIE_DAYS = 30


def _cookie() -> str | None:
    """This browser's own token (its cookie), if it holds one."""
    try:
        found = st.context.cookies.get(COOKIE)
    except (AttributeError, RuntimeError):  # no browser (a bare script run)
        return None
    return found if is_token(found) else None


def _link() -> str | None:
    """The token of a link the page was opened with (`?plan=…`): someone else's, maybe."""
    found = st.query_params.get(TOKEN_PARAM)
    return found if is_token(found) else None


def _client() -> str | None:
    """The connection's network address, for the store's bound on new plans a minute."""
    try:
        address = st.context.ip_address
    except (AttributeError, RuntimeError):
        return None
    return address if isinstance(address, str) else None


def kept_text(ws: Workspace) -> str:
    """What is kept on the server, as text: the plan, the saved scenarios and the name of the
    data it is made for (an upload after the plan was kept is kept too, issue 37.6: else the
    offer back said a plan made with data was "made without data")."""
    upload = ws.upload
    data = None if upload is None else [upload.name, upload.is_sample]
    return json.dumps([ws.plan, ws.scenarios, data], sort_keys=True)


def start_session(ws: Workspace, store: PlanStore | None = None) -> None:
    """Once per session: take the browser's own token (its cookie) and offer back the plan it
    keeps, after the plan of a link if the page was opened with one (as a copy)."""
    if ws.memo.saved_plan is not None:
        return
    store = store or PlanStore()
    own = _cookie()
    if own is not None:
        ws.token = own  # only the cookie chooses where this browser's work is written
    offers: list[Offer] = []
    link = _link()
    if link is not None and link != ws.token and (shared := store.load(link)) is not None:
        offers.append(Offer(shared, from_link=True))
    kept = store.load(ws.token) if own is not None else None
    if kept is not None and (kept.plan != ws.plan or kept.scenarios != ws.scenarios):
        offers.append(Offer(kept))
    ws.memo.resume = offers
    ws.memo.saved_plan = "" if offers else kept_text(ws)


def resume(ws: Workspace, offer: Offer) -> None:
    """Take the offered plan and its scenarios. Its data are asked for again (never kept),
    except the bundled sample, which is public. A link's plan is taken as a copy under a fresh
    token: the link's owner never sees this browser's work."""
    kept = offer.kept
    ws.plan = kept.plan
    ws.scenarios = dict(kept.scenarios)
    ws.set_data(sample_upload() if kept.sample else None)
    ws.memo.wanted_data = None if kept.sample else kept.data_name
    if offer.from_link:
        ws.token = new_token()
    ws.memo.resume = []  # what else was on offer would overwrite the choice


def decline(ws: Workspace) -> None:
    """Not this one: the next offer (the browser's own plan after a link's), if any."""
    ws.memo.resume = ws.memo.resume[1:]


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


def resume_offer(ws: Workspace) -> bool:
    """The banner that offers a kept plan back, in place of the page until answered: True
    while an offer is pending (the caller then draws nothing else)."""
    if not ws.memo.resume:
        return False
    offer = ws.memo.resume[0]
    kept = offer.kept
    tables = len(kept.plan.get("tables", []))
    columns = len(kept.plan.get("columns", {}))
    scenarios = f", {len(kept.scenarios)} saved scenario(s)" if kept.scenarios else ""
    data = f" made for **{md(kept.data_name)}**" if kept.data_name else " made without data"
    with st.container(border=True, key="resume_box"):
        if offer.from_link:
            st.markdown(
                f"**Open the plan from this link (saved {saved_at(kept)})?** {columns} "
                f"column(s), {tables} table(s){scenarios},{data}. It opens as your own copy: "
                "what you change is kept for this browser only, never where the link points."
            )
        else:
            st.markdown(
                f"**Resume your plan from {saved_at(kept)}?** {columns} column(s), {tables} "
                f"table(s){scenarios},{data}. "
                + ("" if kept.sample else "Its data were not kept: you upload them again.")
            )
        yes, no = st.columns([1, 3])
        yes.button(
            "Open a copy" if offer.from_link else "Resume",
            key="resume_plan",
            type="primary",
            on_click=resume,
            args=(ws, offer),
        )
        no.button("Start afresh", key="resume_decline", on_click=decline, args=(ws,))
    st.caption("The page opens once you answer: until then it would show the sample's figures.")
    return True


def keep_plan(ws: Workspace, store: PlanStore | None = None) -> None:
    """Keep the plan and its scenarios on the server when they changed (never while a kept
    plan is still on offer: that would overwrite it before the user answered)."""
    if ws.memo.resume:
        return
    text = kept_text(ws)
    if text == ws.memo.saved_plan:
        return
    upload = ws.upload
    try:
        (store or PlanStore()).save(
            ws.token,
            ws.plan,
            data_name=upload.name if upload is not None else None,
            sample=upload is not None and upload.is_sample,
            scenarios=ws.scenarios,
            client=_client(),
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
    """Once the offers are answered, the link's token leaves the address bar (a link to copy
    from the address bar must not carry it on). The page's own script, the cookie and the
    `beforeunload` prompt, is `guard_script`: the sidebar draws it beside the budget figures,
    so a fragment that changes the plan redraws it too."""
    if not ws.memo.resume and TOKEN_PARAM in st.query_params:
        del st.query_params[TOKEN_PARAM]


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
