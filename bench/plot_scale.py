"""Draw rows vs time and peak memory from bench_scale.py's results as one SVG (no plotting
library needed). Usage: python bench/plot_scale.py [RESULTS.jsonl] [OUT.svg]"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

WIDTH, HEIGHT, PAD = 420, 300, 50
COLOURS = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
]  # fmt: skip


def panel(series: dict[str, list[tuple[float, float]]], x0: int, title: str, unit: str) -> str:
    points = [p for values in series.values() for p in values]
    xs = [math.log10(x) for x, _ in points]
    ys = [math.log10(max(y, 1e-3)) for _, y in points]
    lo_x, hi_x = math.floor(min(xs)), math.ceil(max(xs))
    lo_y, hi_y = math.floor(min(ys)), math.ceil(max(ys))

    def at(x: float, y: float) -> tuple[float, float]:
        px = x0 + PAD + (math.log10(x) - lo_x) / max(hi_x - lo_x, 1) * (WIDTH - 2 * PAD)
        py = (
            HEIGHT
            - PAD
            - (math.log10(max(y, 1e-3)) - lo_y) / max(hi_y - lo_y, 1) * (HEIGHT - 2 * PAD)
        )
        return px, py

    out = [f'<text x="{x0 + WIDTH / 2}" y="20" text-anchor="middle">{title}</text>']
    out.append(
        f'<rect x="{x0 + PAD}" y="{PAD}" width="{WIDTH - 2 * PAD}" height="{HEIGHT - 2 * PAD}" '
        'fill="none" stroke="#999"/>'
    )
    for e in range(lo_x, hi_x + 1):
        px, _ = at(10**e, 10**lo_y)
        out.append(f'<text x="{px}" y="{HEIGHT - PAD + 15}" text-anchor="middle">1e{e}</text>')
    for e in range(lo_y, hi_y + 1):
        _, py = at(10**lo_x, 10**e)
        out.append(f'<text x="{x0 + PAD - 5}" y="{py + 4}" text-anchor="end">{10**e:g}</text>')
    out.append(
        f'<text x="{x0 + WIDTH / 2}" y="{HEIGHT - 10}" text-anchor="middle">rows ({unit})</text>'
    )
    for values, colour in zip(series.values(), COLOURS, strict=False):
        coords = [at(x, y) for x, y in sorted(values)]
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py in coords)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        out += [f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{colour}"/>' for px, py in coords]
    return "\n".join(out)


def main() -> None:
    results = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/dprelease-scale/results.jsonl")
    out = Path(sys.argv[2] if len(sys.argv) > 2 else "docs/scale.svg")
    rows = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    latest: dict[tuple[int, str, str], dict] = {}
    for r in rows:
        latest[(r["rows"], r["format"], r["engine"])] = r  # the last run of each
    time: dict[str, list[tuple[float, float]]] = {}
    memory: dict[str, list[tuple[float, float]]] = {}
    for (count, fmt, engine), r in sorted(latest.items()):
        fmt = "parquet" if fmt == "parts" else fmt
        time.setdefault(f"release {engine} {fmt}", []).append((count, r["release_s"]))
        memory.setdefault(f"release {engine} {fmt}", []).append((count, r["release_mb"]))
        time.setdefault(f"duckdb query {fmt}", []).append((count, r["duckdb_s"]))
        memory.setdefault(f"duckdb query {fmt}", []).append((count, r["duckdb_mb"]))
    for series in (time, memory):
        for name in series:
            series[name] = sorted(dict(series[name]).items())
    legend = "\n".join(
        f'<text x="{2 * WIDTH + 10}" y="{60 + 18 * i}" fill="{c}">{name}</text>'
        for i, (name, c) in enumerate(zip(time, COLOURS, strict=False))
    )
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * WIDTH + 220}" height="{HEIGHT}" '
        'font-family="sans-serif" font-size="11">\n'
        + panel(time, 0, "whole process, seconds", "log")
        + "\n"
        + panel(memory, WIDTH, "peak RSS, MB", "log")
        + "\n"
        + legend
        + "\n</svg>\n"
    )
    out.write_text(svg)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
