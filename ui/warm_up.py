"""Computing ahead, in the background, what a switch to `approx` would wait for (issue 37.9).

`approx` certifies its discrete Gaussians with a privacy loss distribution: the first time in a
server process it imports dp_accounting's PLD code (scipy.signal: 1–4 s on a loaded machine),
and each new set of σ's costs a composition (0.3–3.5 s), cached afterwards by the accountant.
After a page's full run, one daemon thread allocates the session's plan as a switch to
`approx` would make it (`accounting_changes`), so that the switch finds the import done and,
at the plan's ε, the certificate cached. It computes exactly what the switch computes, on the
public plan only (no data), and keeps nothing itself: the page still allocates and shows its
own numbers; the thread only fills the caches that this computation fills anyway.
"""

from __future__ import annotations

import hashlib
import json
import threading

from dprelease.accounting.accountants.base import Accountant
from dprelease.accounting.accountants.registry import first
from dprelease.errors import DPReleaseError
from dprelease.limits import MAX_CELLS
from dprelease.plan.edit import PlanDict, set_budget
from dprelease.plan.parse import parse_plan
from dprelease.release.admitted import admit_plan
from dprelease.stats.allocation import allocate
from ui.budget_inputs import accounting_changes

WARMED_PLANS = 64  # plan texts warmed per server process, at most
_warmed: set[str] = set()
_lock = threading.Lock()
_running = threading.Event()  # one warm-up at a time: it must not crowd out the pages' runs


def warm_approx(plan: PlanDict, *, first_only: bool = False) -> None:
    """Start allocating `plan` under `approx` in the background, once per plan text, unless it
    already uses approx (the page computes that itself) or a warm-up is running. `first_only`:
    only if this process has warmed nothing yet (the import, on the first page a user opens)."""
    budget = plan.get("budget") or {}
    slow = _slow_accountant().name
    if budget.get("accounting") == slow or not plan.get("tables") or _running.is_set():
        return
    if first_only and _warmed:
        return
    switched = set_budget(plan, **accounting_changes(budget, slow))
    key = hashlib.sha256(json.dumps(switched, sort_keys=True, default=str).encode()).hexdigest()
    with _lock:
        if key in _warmed or len(_warmed) >= WARMED_PLANS or _running.is_set():
            return
        _warmed.add(key)
        _running.set()
    threading.Thread(
        target=_allocate, args=(switched,), name="dprelease-warm-approx", daemon=True
    ).start()


def _slow_accountant() -> Accountant:
    """The accountant whose first certificate is slow (approx's PLD), asked of the registry."""
    return first(lambda a: a.slow_first_certificate, "with a slow first certificate")


def _allocate(plan: PlanDict) -> None:
    try:
        parsed = parse_plan(plan, max_cells=MAX_CELLS)
        admit_plan(parsed)  # the same bound as the page's own allocation (ui/state.py)
        allocate(parsed)
    except DPReleaseError:
        pass  # the page says what is wrong when the user switches; a warm-up only fills caches
    finally:
        _running.clear()
