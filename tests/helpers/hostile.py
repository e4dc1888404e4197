"""Hostile names, codebook labels, record values and a file name (issue 25.4): each one a
Markdown image, a link or an HTML tag that points to another host. A page that shows any of
them unescaped makes the viewer's browser fetch that host."""

from __future__ import annotations

import csv
import io

import yaml

HOST = "evil.example"
COLUMNS = {  # column name → its values (codes); every name and most values are hostile
    f"![c](http://{HOST}/column.png)": [f"![v](http://{HOST}/value.png)", "plain", "other"],
    f"[c](http://{HOST}/column)": [f"<img src=http://{HOST}/value-html.png>", "b"],
    f"<img src=http://{HOST}/column-html.png>": [f"[v](http://{HOST}/value-link)", "y"],
}
LABELS = {  # the codebook's labels of the first column's codes
    "plain": f"![l](http://{HOST}/label.png)",
    "other": f"<img src=http://{HOST}/label-html.png>",
}
FILE_NAME = f"![f](http___{HOST}_file.png).csv"
PLAN_NAME = f"[p](http___{HOST}_plan).yaml"


def hostile_csv(rows: int = 120) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    names = list(COLUMNS)
    writer.writerow([*names, "age"])
    for i in range(rows):
        writer.writerow([*(COLUMNS[n][i % len(COLUMNS[n])] for n in names), 18 + i % 60])
    return out.getvalue().encode()


def hostile_plan() -> bytes:
    """The plan of `hostile_csv`: every column declared, the first one labelled, a table of
    each column and one of two, and a `dataset:` name."""
    names = list(COLUMNS)
    columns: dict[str, object] = {
        name: {"kind": "categorical", "domain": values} for name, values in COLUMNS.items()
    }
    columns[names[0]] = {**columns[names[0]], "labels": LABELS}  # type: ignore[dict-item]
    columns["age"] = {"kind": "numeric", "bins": [0, 40, 120]}
    plan = {
        "version": 1,
        "dataset": f"![d](http://{HOST}/dataset.png)",
        "columns": columns,
        "tables": [
            *({"name": f"t{i}", "by": [name]} for i, name in enumerate(names)),
            {"name": "pair", "by": names[:2]},
        ],
        "budget": {"accounting": "pure", "epsilon": 1.0},
    }
    return yaml.safe_dump(plan, allow_unicode=True).encode()
