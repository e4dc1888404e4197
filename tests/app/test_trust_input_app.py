"""Issue 11 in the dashboard: markdown injection, `domain_source: data` kept, the plan-size
limit and YAML aliases on plan upload, public numbers only on the Budget page, and the
wording next to accuracy simulated from a preview. Driven through the real controls."""

from __future__ import annotations

import csv
import io
import re

import pytest
from streamlit.testing.v1 import AppTest

from dprelease.limits import MAX_CELLS
from helpers.app import go, keyed, open_app, submit, upload_small_csv, workspace
from helpers.rendered import MARKDOWN, assert_no_live_markdown, rendered_markdown
from helpers.trust_input import alias_bomb, wide_plan

IMAGE = "![x](http://leak.example/leak.png)"
LINK = "[y](http://leak.example/)"


def planted_csv() -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([IMAGE, LINK, "<http://leak.example/auto>", "age"])
    for i in range(60):
        writer.writerow([IMAGE if i % 2 else LINK, "a", "b", i])
    return out.getvalue().encode()


def test_names_and_values_never_render_as_images_or_links():
    app = open_app()
    app.file_uploader(key="data_upload").upload("![f](http://leak.example/f).csv", planted_csv())
    app.run()
    assert not app.exception
    seen = assert_no_live_markdown(app)
    assert seen >= 4  # the names are shown (escaped): expanders, caption, first rows
    # a plan that declares the planted names, one of them missing from the data
    plan = (
        f"columns:\n  '{IMAGE}': {{domain: [a]}}\n  '{LINK}': {{domain: [a]}}\n"
        f"  '![z](http://leak.example/z)': {{domain: [a]}}\n"
        f"tables: [{{name: t, by: ['{IMAGE}', '{LINK}']}}]\n"
        "budget: {accounting: pure, epsilon: 1}\n"
    )
    app.file_uploader(key="plan_upload").upload("p.yaml", plan.encode(), "text/yaml")
    app.run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert any("not in the data" in w.value for w in app.warning)  # names the missing column
    assert_no_live_markdown(app)
    keyed(app.text_area, f"domain_{IMAGE}_").set_value("")  # an error that quotes the name
    submit(app, f"cat_form_{IMAGE}_")
    assert app.error
    assert_no_live_markdown(app)
    for page in ("pages/tables.py", "pages/budget.py", "pages/preview.py", "pages/release.py"):
        go(app, page)
        assert_no_live_markdown(app)
    go(app, "pages/preview.py").button(key="draw_preview").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert_no_live_markdown(app)


def test_an_escaped_name_reads_as_written():
    from ui.markdown import md

    texts = (IMAGE, LINK, "a_b*c*", ":red[x]", "$x$", "<b>", "1. x", "2) y", "- z", "# h", "é")
    for text in (*texts, "a\\b", "x &amp; y", "`code`", "| a | b |", "+ p", "~~s~~"):
        html = MARKDOWN.render(md(text))
        assert re.sub(r"</?p>\n?", "", html) == (
            text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        ), (text, html)


# --- Medium 6: "Fill from data" then "Apply" keeps domain_source: data --------------------


def test_applying_a_filled_domain_keeps_it_marked_as_from_the_data():
    app = upload_small_csv(open_app())
    keyed(app.selectbox, "kind_region_").set_value("categorical").run()
    keyed(app.checkbox, "leak_ok_region_").check().run()
    keyed(app.button, "fill_region_").click().run()
    assert workspace(app).plan["columns"]["region"]["domain_source"] == "data"
    keyed(app.text_input, "other_region_").set_value("north")  # an edit, then Apply domain
    submit(app, "cat_form_region_")
    assert not app.error, [e.value for e in app.error]
    column = workspace(app).plan["columns"]["region"]
    assert column["other"] == "north" and column["domain_source"] == "data"
    assert any("from the data" in c.value for c in app.caption)

    keyed(app.selectbox, "kind_age_").set_value("numeric").run()
    keyed(app.checkbox, "leak_ok_age_").check().run()
    keyed(app.button, "fill_age_").click().run()
    assert workspace(app).plan["columns"]["age"]["domain_source"] == "data"
    submit(app, "num_form_age_")
    assert workspace(app).plan["columns"]["age"]["domain_source"] == "data"


def test_a_domain_typed_in_is_from_the_plan():
    app = upload_small_csv(open_app())
    keyed(app.selectbox, "kind_region_").set_value("categorical").run()
    keyed(app.text_area, "domain_region_").set_value("north, south")
    submit(app, "cat_form_region_")
    assert "domain_source" not in workspace(app).plan["columns"]["region"]


# --- High 3 and Medium 7 on plan upload ----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "piece"),
    [
        (alias_bomb(), "YAML alias"),
        (wide_plan(30), f"at most {MAX_CELLS:,} are allowed"),
    ],
    ids=["alias bomb", "30 million values"],
)
def test_a_plan_upload_that_would_expand_is_refused_at_once(text: str, piece: str):
    app = open_app()
    before = workspace(app).plan
    app.file_uploader(key="plan_upload").upload("plan.yaml", text.encode(), "text/yaml")
    app.run(timeout=20)  # the bomb took minutes and gigabytes before
    assert not app.exception
    assert len(app.error) == 1 and piece in app.error[0].value, [e.value for e in app.error]
    assert workspace(app).plan == before


# --- Low 10 and 11: public numbers on public pages -----------------------------------------


def _page_text(app: AppTest) -> str:
    return "\n".join(rendered_markdown(app))


def test_the_budget_page_shows_nothing_derived_from_the_row_count():
    app = open_app()  # the sample: 10,000 rows; its delta and its county cells give advice
    rows = workspace(app).table
    go(app, "pages/budget.py")
    text = _page_text(app)
    assert "average cell" not in text and "row count" not in text and "1/n" not in text
    assert "Nothing here touches the data" in text
    go(app, "pages/preview.py")
    text = _page_text(app)
    assert "average cell" in text or rows is None  # the advice moved here
    assert "confidential" in text.lower()


def test_simulated_accuracy_of_a_preview_is_not_called_safe_to_share():
    app = go(open_app(), "pages/preview.py")
    app.button(key="draw_preview").click().run()
    text = _page_text(app)
    assert "Expected accuracy" in text
    assert "safe to share" not in text.lower()
