"""Limits on what a plan may ask for, checked before anything is built or read.

One constant each, shared by the parser, the command line, the dashboard and the tests.
"""

from __future__ import annotations

MAX_CELLS = 10_000_000
"""Cells of all the plan's tables together (and values of all its column domains together).

Counted from the domain sizes arithmetically before any domain is expanded: 30 columns of
``{range: [0, 999999]}`` would otherwise cost seconds and gigabytes before being refused.
The sample plan has 10,401 cells; the largest census release we know of is far below this.
"""
