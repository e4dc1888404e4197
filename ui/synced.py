"""Widgets that mirror a plan field: the plan is the truth, the widget shows it.

A keyed widget keeps its Session State across reruns and then ignores its `index=`/`value=`,
so a plan loaded, reset or edited elsewhere would not show in it, and a page that copies the
widget back into the plan would undo the load (a loaded `unit: id` became `unit: row`).
Hence: the plan's value is written into the widget's state before the widget is drawn, the
widget gets no `index=`/`value=` (both at once make Streamlit warn), and the user's change
goes into the plan in the widget's `on_change`, before the next run draws it again.
"""

from __future__ import annotations

import streamlit as st


def synced(key: str, value: object) -> None:
    """Show the plan's `value` in widget `key` (call before drawing the widget)."""
    if st.session_state.get(key) != value:
        st.session_state[key] = value
