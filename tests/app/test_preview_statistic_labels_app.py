"""The Preview's statistic table names its cells as the count tables do: "label (code)"
where the plan labels the codes (issue 24), the code alone where it does not."""

from __future__ import annotations

from dprelease.plan.yaml_text import plan_yaml
from helpers.app import go, open_app, upload_small_csv

PLAN = {
    "version": 1,
    "columns": {
        "sex": {"kind": "categorical", "domain": ["F", "M"], "labels": {"F": "Female"}},
        "region": {"kind": "categorical", "domain": ["north", "south", "east"]},
    },
    "tables": [
        {"name": "sex", "by": ["sex"]},
        {
            "name": "median_age",
            "by": ["sex", "region"],
            "stat": {"quantile": 0.5, "column": "age", "bounds": [0, 100]},
        },
    ],
    "budget": {"epsilon": 1.0},
}


def test_the_statistic_cells_show_labels() -> None:
    app = upload_small_csv(open_app())
    text = plan_yaml(PLAN).encode()
    app.file_uploader(key="plan_upload").upload("plan.yaml", text, "text/yaml").run()
    go(app, "pages/preview.py")
    app.button(key="draw_preview").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    (frame,) = [t.value for t in app.table if "cell" in t.value.columns]
    assert list(frame["cell"]) == [
        f"{sex} × {region}" for sex in ("Female (F)", "M") for region in ("north", "south", "east")
    ]
