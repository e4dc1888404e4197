"""Chart axes: codes are categories (never a numeric axis), long domains stay readable, log
ticks are written out in full."""

import numpy as np
import pytest

from dprelease.accounting.tradeoffs import MoeCurve
from ui import charts
from ui.axes import log_ticks, tick_text


def _categorical(axis) -> bool:
    return axis.type == "category"


def test_codes_that_look_like_numbers_stay_categories():
    states = ["01", "06", "10", "50"]  # Plotly alone makes these a 1–50 number line
    bars = charts.one_way(states, {"released": np.array([3.0, 1, 4, 1])}, "state")
    assert _categorical(bars.layout.xaxis)
    assert list(bars.data[0].x) == states
    maps = charts.heatmaps(
        ["1", "2"], ["1", "2", "3"], {"true": np.ones((2, 3)), "error": np.zeros((2, 3))}, "t"
    )  # SEX × RAC1P: the axes were 0.5–2.5 and 0, 2, 4
    axes = [maps.layout[k] for k in maps.layout if k.startswith(("xaxis", "yaxis"))]
    assert len(axes) == 4 and all(_categorical(a) for a in axes)


def test_a_long_domain_gives_sorted_horizontal_bars_of_the_largest_cells():
    labels = [f"County {i} ({i:05d})" for i in range(3143)]
    released = np.arange(3143, dtype=float) % 997
    figure = charts.one_way(labels, {"true": released, "released": released}, "county")
    bar = figure.data[-1]
    assert bar.orientation == "h" and len(bar.y) == charts.MAX_BARS
    assert list(bar.x) == sorted(bar.x, reverse=True)  # the largest first (on top)
    assert bar.y[0] == labels[996]
    assert figure.layout.yaxis.autorange == "reversed" and _categorical(figure.layout.yaxis)
    assert "the 60 largest of 3,143 by released" in figure.layout.title.text
    assert figure.layout.height >= charts.ROW_HEIGHT * 2 * charts.MAX_BARS  # no overlap


def test_heatmaps_put_the_long_domain_down_the_page_and_share_its_labels():
    pumas = [f"PUMA {i:05d}" for i in range(31)]
    matrix = np.arange(2 * 31, dtype=float).reshape(2, 31)  # sex × puma
    figure = charts.heatmaps(["1", "2"], pumas, {"true": matrix, "error": matrix}, "t")
    first, second = figure.data
    assert list(first.y) == pumas and list(first.x) == ["1", "2"]
    assert np.array_equal(np.asarray(first.z), matrix.T)
    assert second.yaxis == "y" or figure.layout.yaxis2.matches == "y"  # one set of labels
    assert figure.layout.height >= charts.ROW_HEIGHT * 31
    counties = [f"{i:05d}" for i in range(3143)]
    big = charts.heatmaps(counties, ["1", "2"], {"true": np.zeros((3143, 2))}, "t")
    assert len(big.data[0].y) == charts.MAX_HEATMAP_ROWS
    assert f"first {charts.MAX_HEATMAP_ROWS} of 3,143 rows" in big.layout.title.text


def test_small_multiples_are_labelled_and_share_row_labels():
    facets = ["Alabama (01) / Male (1)", "Alabama (01) / Female (2)", "x" * 60]
    figure = charts.small_multiples(
        facets, ["a", "b"], ["1", "2"], np.zeros((3, 2, 2)), "error by state / sex"
    )
    titles = [a.text for a in figure.layout.annotations]
    assert titles[:2] == facets[:2]
    lines = titles[2].split("<br>")  # a long title wraps over two lines that fit its panel
    assert len(lines) == 2 and "".join(lines) == "x" * 60
    assert figure.layout.yaxis2.matches == "y" and figure.layout.yaxis2.showticklabels is False
    assert all(_categorical(figure.layout[k]) for k in figure.layout if k.startswith("xaxis"))


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (100, 300, ["100", "200"]),
        (110, 290, ["110", "290"]),  # within one step: the two ends, never "2" or "3"
        (1, 1000, ["1", "2", "5", "10", "20", "50", "100", "200", "500", "1,000"]),
        (1e-15, 1e-3, ["1e-15", "1e-13", "1e-11", "1e-9", "1e-7", "1e-5", "0.001"]),
        (0.05, 20, ["0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10", "20"]),
    ],
)
def test_log_ticks_are_written_in_full(low, high, expected):
    values, texts = log_ticks([low, (low * high) ** 0.5, high])
    assert texts == expected
    assert all(low / 1.001 <= v <= high * 1.001 for v in values)


def test_tick_text_and_the_budget_curve_use_full_log_ticks():
    assert [tick_text(v) for v in (200, 1500, 0.002, 2e7, 1e-10)] == [
        "200",
        "1,500",
        "0.002",
        "2e7",
        "1e-10",
    ]
    curve = MoeCurve(
        unit="epsilon",
        budgets=(0.1, 0.3, 1.0),
        current=0.3,
        moe={"state": (300.0, 150.0, float("nan")), "sex": (180.0, 120.0, 110.0)},
    )
    figure = charts.moe_against_budget(curve)
    assert figure.layout.yaxis.type == "log"
    assert figure.layout.yaxis.ticktext == ("110", "300")
    assert figure.layout.xaxis.ticktext == ("0.1", "0.2", "0.5", "1")


def test_long_labels_are_shortened_keeping_their_code_and_stay_apart():
    from ui.chart_space import MAX_TICK_CHARS, category_ticks, short

    pumas = [
        f"Los Angeles County (Central)--LA City (Central/Westlake) PUMA ({i:05d})" for i in (1, 2)
    ]
    shown = [short(p) for p in pumas]
    assert shown[0] != shown[1] and all(len(s) == MAX_TICK_CHARS for s in shown)
    assert shown[0].endswith("… (00001)") and shown[0].startswith("Los Angeles County")
    assert short("x" * 60).endswith("…") and len(short("x" * 60)) == MAX_TICK_CHARS
    axis = category_ticks(pumas)  # the full text stays the category (and the hover)
    assert axis["tickvals"] == pumas and axis["ticktext"] == shown


def test_column_labels_lie_flat_when_they_fit_and_get_a_band_when_upright():
    from ui.chart_space import CHAR_PX, column_ticks

    flat, flat_px = column_ticks(["Male (1)", "Female (2)"], panels=3)
    assert flat["tickangle"] == 0
    races = ["Native Hawaiian and Other Pacific Islander alone (7)", "White alone (1)"] * 4
    upright, upright_px = column_ticks(races, panels=4)
    assert upright["tickangle"] == -90 and upright_px >= 40 * CHAR_PX > flat_px


def test_panels_keep_their_height_however_long_the_labels():
    races = [f"Native Hawaiian and Other Pacific Islander alone ({i})" for i in range(9)]
    figure = charts.small_multiples(
        [f"facet {i}" for i in range(8)],
        ["Male (1)", "Female (2)"],
        races,
        np.zeros((8, 2, 9)),
        "t",
    )
    plot_px = figure.layout.height - figure.layout.margin.t - figure.layout.margin.b
    for k in ("yaxis", "yaxis5"):  # one panel of each grid row
        low, high = figure.layout[k].domain
        assert (high - low) * plot_px >= 140  # not a 60 px sliver under 400 px of labels
