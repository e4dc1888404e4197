"""Issue 35, bench finding (plan 23): synthetic microdata from a plan whose only tables are
grand totals (`by: []`) failed with numpy's `multiple indices are not supported for 0d
arrays` in `records._place`; a clique over no column now places its rows and no column."""

from __future__ import annotations

import numpy as np

from dprelease.plan.parse import loads_plan
from dprelease.synthetic.microdata import synthesize

PLAN = """
columns:
  c0: {kind: categorical, domain: [a, b]}
  c2: {kind: categorical, domain: [x, y, z]}
tables:
  - {name: t0, by: []}
  - {name: t1, by: []}
budget: {epsilon: 1}
postprocess: {consistent: false, synthetic: true}
"""


def test_grand_totals_alone_give_that_many_records_of_no_column():
    plan = loads_plan(PLAN, "yaml")
    released = {"t0": np.asarray([37]), "t1": np.asarray([37])}
    microdata = synthesize(plan, released, np.random.default_rng(23))
    assert microdata.rows == 37 and microdata.codes.shape[0] == 37
    assert not microdata.mismatches
