"""dprelease dashboard: page config, the navigation over `pages/`, the budget meter, and the
session's plan kept on the server (offered back after a reload, see `ui/session.py`).

Run with `streamlit run app.py`. It opens on the bundled sample data and plan.
"""

import streamlit as st

from ui.heap import freeze_new_imports
from ui.session import browser_guard, keep_plan, resume_offer, start_session
from ui.sidebar import budget_meter
from ui.state import workspace

st.set_page_config(page_title="dprelease", page_icon=":material/lock:", layout="wide")

PAGES = [
    st.Page("pages/data.py", title="1 · Data", icon=":material/description:", default=True),
    st.Page("pages/tables.py", title="2 · Tables", icon=":material/table_chart:"),
    st.Page("pages/budget.py", title="3 · Budget", icon=":material/balance:"),
    st.Page("pages/preview.py", title="4 · Preview", icon=":material/visibility:"),
    st.Page("pages/release.py", title="5 · Release", icon=":material/inventory_2:"),
    st.Page("pages/local_dp.py", title="Local DP", icon=":material/groups:"),
    st.Page("pages/risk.py", title="Risk (confidential)", icon=":material/policy:"),
]
ws = workspace()
start_session(ws)
page = st.navigation(PAGES)
browser_guard(ws)
if resume_offer(ws):  # until answered, the offer is the page: it shows no sample's figures
    st.stop()
budget_meter()
try:
    page.run()
finally:  # also after a page's st.stop() or st.rerun(): the plan is kept as it now is
    keep_plan(ws)
    freeze_new_imports()  # Streamlit's full collection after each run then skips the imports
