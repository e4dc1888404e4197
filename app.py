"""dprelease dashboard: page config, the navigation over `pages/`, and the budget meter.

Run with `streamlit run app.py`. It opens on the bundled sample data and plan.
"""

import streamlit as st

from ui.sidebar import budget_meter

st.set_page_config(page_title="dprelease", page_icon="🔒", layout="wide")

PAGES = [
    st.Page("pages/data.py", title="1 · Data", icon="📄", default=True),
    st.Page("pages/tables.py", title="2 · Tables", icon="🧮"),
    st.Page("pages/budget.py", title="3 · Budget", icon="⚖️"),
    st.Page("pages/preview.py", title="4 · Preview", icon="👁️"),
    st.Page("pages/release.py", title="5 · Release", icon="📦"),
]
page = st.navigation(PAGES)
budget_meter()
page.run()
