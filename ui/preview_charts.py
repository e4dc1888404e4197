"""Pick the right picture for a previewed table: bars (1-way), heatmaps (2-way), small
multiples (3-way and beyond). Codes show as "label (code)" where the plan labels them."""

from __future__ import annotations

import itertools

import plotly.graph_objects as go

from dprelease.release.draw import Preview
from ui import charts

MAX_FACETS = 12


def table_chart(preview: Preview, name: str) -> go.Figure:
    schema = preview.plan.schema
    table = next(t for t in preview.tables if t.name == name)
    spec = table.budget.spec
    true_counts = preview.true_counts.counts[name].astype(float)
    released = table.released_counts.astype(float)
    noisy = table.noisy_counts.astype(float)
    if len(spec.by) <= 1:
        labels = list(schema[spec.by[0]].display_labels) if spec.by else ["total"]
        return charts.one_way(
            labels,
            {"true": true_counts, "noisy": noisy, "released": released},
            f"{name}: true, noisy and released counts (first 60 cells)",
        )
    shape = spec.shape(schema)
    if len(spec.by) == 2:
        rows, columns = (schema[c].display_labels for c in spec.by)
        return charts.heatmaps(
            rows,
            columns,
            {
                "true": true_counts.reshape(shape),
                "released": released.reshape(shape),
                "error (released − true)": (released - true_counts).reshape(shape),
            },
            f"{name}: {spec.by[0]} × {spec.by[1]}",
        )
    # 3-way and beyond: one error panel per combination of the leading columns
    lead = int(true_counts.size // (shape[-1] * shape[-2]))
    cubes = (released - true_counts).reshape(lead, shape[-2], shape[-1])[:MAX_FACETS]
    leading = itertools.product(*(schema[c].display_labels for c in spec.by[:-2]))
    return charts.small_multiples(
        [" / ".join(cell) for cell in itertools.islice(leading, MAX_FACETS)],
        schema[spec.by[-2]].display_labels,
        schema[spec.by[-1]].display_labels,
        cubes,
        f"{name}: error (released − true) by {' / '.join(spec.by[:-2])}"
        + (f" (first {MAX_FACETS})" if lead > MAX_FACETS else ""),
    )
