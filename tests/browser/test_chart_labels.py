"""Charts that hold real labels (issue 24, point 8), drawn by Plotly in Debian's Chromium at a
1400 px window: a heatmap of 31 long PUMA names, small multiples with nine race labels, and
the columns of the Local DP chart. What Plotly drew is measured in the page (the bounding boxes
of plots, colour bars, titles and tick labels): nothing overlaps, nothing is cut off, and every
panel keeps its height per row.

The figures come from `ui/charts.py` as the pages make them, each in a box as wide as the
dashboard's main column at that window (and as the whole window). With DPRELEASE_SCREENSHOTS=1
the pictures go to docs/screenshots/8-chart-*.png.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import streamlit  # noqa: F401  (sets plotly's default template to the one the app draws with)

from helpers.browser import BROWSER_TEST, CHROMIUM_FLAGS, SCREENSHOTS, chromium_path
from ui import charts

playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = BROWSER_TEST

WINDOW = {"width": 1400, "height": 900}
BOX_WIDTHS = (1050, 1400)  # the main column with the sidebar open, and the whole window
PLACES = [
    "Los Angeles County (Central)--LA City (Central/Westlake & East Hollywood)",
    "Maricopa County (North Central)--Phoenix City (North Mountain Village)",
    "Cook County (Southwest)--Chicago City (Garfield Ridge, Clearing & West Lawn)",
    "Harris County (West)--Houston City (Memorial & Spring Branch)",
    "King County (Northwest)--Seattle City (Northwest)",
]
PUMAS = [f"{PLACES[i % 5]} PUMA ({3700 + i:05d})" for i in range(31)]
RACES = [
    "White alone (1)",
    "Black or African American alone (2)",
    "American Indian alone (3)",
    "Alaska Native alone (4)",
    "American Indian and Alaska Native tribes specified (5)",
    "Asian alone (6)",
    "Native Hawaiian and Other Pacific Islander alone (7)",
    "Some Other Race alone (8)",
    "Two or More Races (9)",
]
SEXES = ["Male (1)", "Female (2)"]
AGES = ["0–17", "18–24", "25–44", "45–64", "65 and over"]


def _figures():
    rng = np.random.default_rng(7)
    true = rng.poisson(40, size=(2, 31)).astype(float)
    released = true + rng.normal(0, 3, size=true.shape)
    heatmap = charts.heatmaps(
        SEXES,
        PUMAS,
        {"true": true, "released": released, "error (released − true)": released - true},
        "puma_by_sex: SEX × PUMA",
    )
    facets = [f"{age} / {sex}" for age in AGES for sex in SEXES][:9]
    multiples = charts.small_multiples(
        facets,
        SEXES,
        RACES,
        rng.normal(0, 3, size=(len(facets), 2, 9)),
        "age_by_sex_by_race: error (released − true) by AGEP / SEX",
    )
    bars = charts.one_way(
        RACES,
        {name: rng.poisson(50, size=9).astype(float) for name in ("true", "raw", "projected")},
        "RAC1P at ε = 1: estimates against the truth",
    )
    return {"heatmap": (heatmap, 31), "multiples": (multiples, 2), "ldp": (bars, None)}


MEASURE = """() => {
  const box = (e) => { const r = e.getBoundingClientRect();
    return {x: r.left, y: r.top, w: r.width, h: r.height}; };
  const all = (sel) => Array.from(document.querySelectorAll(sel))
    .filter((e) => e.getBoundingClientRect().width > 0 && e.textContent !== undefined);
  return {
    paper: box(document.querySelector('.main-svg')),
    panels: all('.draglayer .nsewdrag').map(box),
    bars: all('g.colorbar').map(box),
    titles: all('g.annotation').map(box).concat(all('g.g-gtitle text').map(box)),
    xticks: all('g.xtick text').filter((e) => e.textContent.length).map(box),
    yticks: all('g.ytick text').filter((e) => e.textContent.length).map(box),
  };
}"""


def _overlap(a, b, slack=1.0) -> bool:
    return (
        a["x"] + slack < b["x"] + b["w"]
        and b["x"] + slack < a["x"] + a["w"]
        and a["y"] + slack < b["y"] + b["h"]
        and b["y"] + slack < a["y"] + a["h"]
    )


def _pairs(boxes):
    return [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :]]


def _check(drawn, rows: int | None) -> None:
    paper, panels, bars, titles = drawn["paper"], drawn["panels"], drawn["bars"], drawn["titles"]
    ticks = drawn["xticks"] + drawn["yticks"]
    assert panels and ticks
    blocks = panels + bars + titles
    clashes = [(a, b) for a, b in _pairs(blocks) if _overlap(a, b)]
    assert not clashes, clashes  # plots, colour bars and titles never meet
    hits = [(t, b) for t in ticks for b in blocks if _overlap(t, b)]
    assert not hits, hits  # no tick label over a plot, a colour bar or a title
    for kind in ("xticks", "yticks"):
        same = [(a, b) for a, b in _pairs(drawn[kind]) if _overlap(a, b)]
        assert not same, same  # tick labels never run together
    for item in ticks + bars + titles:  # nothing cut off at the figure's edges
        assert item["x"] >= paper["x"] - 1 and item["x"] + item["w"] <= paper["x"] + paper["w"] + 1
        assert item["y"] >= paper["y"] - 1 and item["y"] + item["h"] <= paper["y"] + paper["h"] + 1
    if rows is not None:  # every panel keeps its height per row, whatever the labels
        assert min(p["h"] for p in panels) >= 0.9 * charts.ROW_HEIGHT * max(rows, 9)


def _settled(page) -> dict:
    """The drawn boxes once Plotly has finished laying out: its automargin redraws after the
    first paint, later on a loaded machine, so measure until two readings agree."""
    drawn = page.evaluate(MEASURE)
    for _ in range(50):  # at most ~10 s
        page.wait_for_timeout(200)
        again = page.evaluate(MEASURE)
        if again == drawn:
            return again
        drawn = again
    return drawn


@pytest.mark.parametrize("width", BOX_WIDTHS)
def test_charts_with_long_labels_hold_them_without_overlap(tmp_path, width):
    with playwright_api.sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        page = chromium.new_page(viewport=WINDOW)
        for name, (figure, rows) in _figures().items():
            html = tmp_path / f"{name}.html"
            figure.write_html(html, include_plotlyjs=True, full_html=True, default_width="100%")
            text = html.read_text().replace("<body>", f'<body style="width:{width}px;margin:0">')
            html.write_text(text)
            page.goto(html.as_uri())
            page.wait_for_selector(".draglayer .nsewdrag")
            drawn = _settled(page)
            if os.environ.get("DPRELEASE_SCREENSHOTS") == "1" and width == BOX_WIDTHS[0]:
                SCREENSHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SCREENSHOTS / f"8-chart-{name}.png"), full_page=True)
            _check(drawn, rows)
        chromium.close()
