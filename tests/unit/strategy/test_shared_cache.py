"""`shared_lru_cache`: a release's count and allocation threads ask for the same strategy shape
at the same time; it is computed once, and calls with other arguments are not held up."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from dprelease.strategy.shared_cache import shared_lru_cache

ROOT = Path(__file__).resolve().parents[3]
WAIT = 0.5  # seconds a second call is given to enter the function (it takes microseconds)


def _blocking_function():
    entered: list[threading.Event] = [threading.Event(), threading.Event()]
    release = threading.Event()
    calls: list[int] = []

    @shared_lru_cache(maxsize=8)
    def shape(argument: int) -> tuple[int, int]:
        calls.append(argument)
        entered[len(calls) - 1].set()
        assert release.wait(10)
        return argument, len(calls)

    return shape, entered, release, calls


def _two_calls(first_argument: int, second_argument: int, wait: float):
    """Call `shape(first)` on a thread and, once it is computing, `shape(second)` on another;
    wait up to `wait` s for the second to enter the function, then let both finish. Returns
    whether it entered, the arguments computed, the results, and the function."""
    shape, entered, release, calls = _blocking_function()
    results: list = []
    threads = [threading.Thread(target=lambda: results.append(shape(first_argument)))]
    threads[0].start()
    assert entered[0].wait(10)
    threads.append(threading.Thread(target=lambda: results.append(shape(second_argument))))
    threads[1].start()
    second_entered = entered[1].wait(wait)
    release.set()
    for thread in threads:
        thread.join(10)
    return second_entered, calls, results, shape


def test_equal_concurrent_calls_compute_once_and_share_the_result():
    second_entered, calls, results, shape = _two_calls(7, 7, WAIT)
    assert not second_entered, "the second call computed the shape again"
    assert calls == [7]
    assert results == [(7, 1), (7, 1)]
    assert shape(7) == (7, 1)  # and later calls hit the cache


def test_calls_with_other_arguments_run_side_by_side():
    second_entered, calls, _, _ = _two_calls(1, 2, 10)
    assert second_entered, "a call with other arguments waited for the first"
    assert sorted(calls) == [1, 2]


def test_an_error_is_not_cached():
    attempts: list[int] = []

    @shared_lru_cache(maxsize=8)
    def failing(argument: int) -> int:
        attempts.append(argument)
        raise ValueError("no shape")

    for _ in range(2):
        with pytest.raises(ValueError, match="no shape"):
            failing(3)
    assert attempts == [3, 3]


def test_the_release_counts_and_allocates_the_sample_with_one_strategy_search():
    """As `release` does (`cli/release.py`): the allocation on a thread while the count asks
    which unions to count. Both need the sample plan's pure-DP strategy shape."""
    from dprelease.accounting.counted import counted_tables
    from dprelease.plan.parse import load_plan
    from dprelease.release.background import Background
    from dprelease.stats.allocation import allocate
    from dprelease.strategy import select

    plan = load_plan(ROOT / "data" / "census_sample.plan.yaml")
    select._laplace_free_shape.cache_clear()
    allocating = Background(lambda: allocate(plan))
    counted_tables(plan)  # asks which unions of tables to count (the sample: none)
    allocating.result()
    info = select._laplace_free_shape.cache_info()
    assert info.misses == info.currsize, info  # no shape computed twice
