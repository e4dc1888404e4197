"""Random small inputs of the stages that read no plan (issue 35): edge lists for `graph` and
answer files for `ldp`, at most 10,000 rows each, with the commands' arguments. Shared by the
property test (hypothesis draws) and `bench/bench_admission` (a seeded random.Random)."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

MAX_ROWS = 10_000

Integer = Callable[[int, int], int]
Choose = Callable[[Sequence[Any]], Any]


def random_graph(integer: Integer, choose: Choose, path: Path) -> list[list[str]]:
    """An edge list of up to MAX_ROWS edges (a few hubs, repeats in either direction) and
    the `graph` commands to run on it: the k-degree risk and a degree histogram."""
    import numpy as np

    edges, nodes = integer(1, MAX_ROWS), integer(2, 5_000)
    generator = np.random.default_rng(integer(0, 2**31))
    # a heavy tail: a few nodes with many contacts, most with few (as in contact graphs)
    weights = 1.0 / np.arange(1, nodes + 1) ** choose([0.0, 0.8, 1.2])
    ends = generator.choice(nodes, size=(edges, 2), p=weights / weights.sum())
    ends = ends[ends[:, 0] != ends[:, 1]]
    rows = "".join(f"n{a},n{b}\n" for a, b in ends.tolist()) or "n0,n1\n"
    path.write_text("from,to\n" + rows)
    k = choose([2, 5, 20, integer(1, 2_000)])
    out = path.with_name(f"{path.stem}-histogram")  # a new folder: the release's files
    histogram = ["graph", str(path), "--degree-histogram", "--epsilon", "1", "--no-ledger"]
    histogram += ["--out", str(out)]
    histogram += ["--max-degree", str(integer(1, 10_000))]
    if integer(0, 1):
        histogram.append("--node-dp")
    return [["graph", str(path), "--k-degree", str(k)], histogram]


def random_answers(
    integer: Integer, choose: Choose, path: Path, lengths: Sequence[int] = (4, 8, 16)
) -> list[list[str]]:
    """A survey of up to MAX_ROWS respondents: a write-in answer (a few common values and a
    long tail) and a set-valued one (1–30 items of up to 1,000), with the `ldp` commands at
    one of `lengths` (the benchmark adds 32 and 64: each byte is a level of the search)."""
    import numpy as np

    rows = integer(1, MAX_ROWS)
    generator = np.random.default_rng(integer(0, 2**31))
    common = [f"value {i}" for i in range(integer(1, 50))]
    tail = rows // 3
    words = [
        choose(common) if generator.random() < 0.7 or not tail else f"rare {integer(0, tail)}"
        for _ in range(rows)
    ]
    vocabulary = integer(1, 1_000)
    items = [
        ";".join(f"i{v}" for v in generator.integers(0, vocabulary, integer(1, 30)))
        for _ in range(rows)
    ]
    path.write_text(
        "word,items\n" + "".join(f"{w},{i}\n" for w, i in zip(words, items, strict=True))
    )
    epsilon = choose(["0.5", "2", "8"])
    length = str(choose(lengths))
    return [
        ["ldp", "heavy-hitters", str(path), "--column", "word", "--epsilon", epsilon,
         "--max-length", length],
        ["ldp", "itemsets", str(path), "--column", "items", "--epsilon", epsilon,
         "--max-length", length],
        ["ldp", "simulate", str(path), "--column", "word", "--protocol",
         choose(["GRR", "OUE", "OLH", "HR"]), "--epsilon", epsilon],
    ]  # fmt: skip


def cli_in_process(argv: list[str]) -> None:
    """The command as `dprelease ARGV` runs it (admission first), its output discarded;
    a refusal (exit 2) raises DPReleaseError, so that `in_child` reports exit 2."""
    from dprelease.cli import main
    from dprelease.errors import DPReleaseError

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    if code == 2:
        raise DPReleaseError(f"refused: {' '.join(argv[:2])}")
    if code != 0:
        raise RuntimeError(f"exit {code}: {' '.join(argv)}")
