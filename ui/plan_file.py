"""The Data page's plan file: load a plan (YAML or JSON, every problem said at once; the data
stay whatever the page holds) or save this one, with `data:` the data file's name."""

from __future__ import annotations

import json
from pathlib import Path

import streamlit as st

from dprelease.accounting.accountants.registry import check_plan as check_accounting
from dprelease.errors import DPReleaseError
from dprelease.limits import MAX_CELLS
from dprelease.plan.parse import loads_plan, plan_format, plan_to_dict
from dprelease.plan.yaml_text import plan_yaml
from ui.markdown import md, md_error
from ui.plan_without_data import plan_with_data_name
from ui.state import Workspace


def plan_file_section(ws: Workspace) -> None:
    st.subheader("Plan file")
    st.write("Load a plan saved earlier (or made for the command line), or save this one.")
    load_col, yaml_col, json_col = st.columns([2, 1, 1])
    with load_col:
        plan_file = st.file_uploader(
            "Load a plan (YAML or JSON)", type=["yaml", "yml", "json"], key="plan_upload"
        )
    if plan_file is not None and ws.memo.plan_id != plan_file.file_id:
        ws.memo.plan_id = plan_file.file_id
        try:
            text = plan_file.getvalue().decode("utf-8-sig")
            fmt = plan_format(Path(plan_file.name))
            parsed = loads_plan(text, fmt, max_cells=MAX_CELLS)
            check_accounting(parsed)  # the accountant and what it rules, as the CLI refuses them
            loaded = plan_to_dict(parsed)
        except UnicodeDecodeError:
            st.error("The plan file is not UTF-8 text; save it as UTF-8. Your plan is unchanged.")
        except DPReleaseError as error:
            st.error(md_error(error, "Your plan is unchanged."))
        else:
            loaded.pop("data", None)  # the data are whatever this page holds
            ws.plan = loaded
            ws.memo.flash = f"Loaded the plan from {md(plan_file.name)}."
            st.rerun()  # so the sidebar shows the loaded plan's figures at once
    plan_now = plan_with_data_name(ws)  # written out only when a button is clicked
    yaml_col.download_button(
        "Save plan (YAML)",
        lambda: plan_yaml(plan_now),
        file_name="plan.yaml",
        key="save_yaml",
        mime="application/yaml",
    )
    json_col.download_button(
        "Save plan (JSON)",
        lambda: json.dumps(plan_now, indent=2, ensure_ascii=False) + "\n",
        file_name="plan.json",
        key="save_json",
        mime="application/json",
    )
