"""Bench: a 1,000,000-row local-DP heavy-hitter simulation (target ≤ 30 s): every row
randomises its value (PEM over local hashing of hashed prefixes), the aggregator extends
prefixes level by level and returns the top values. Zipf-distributed words (s = 1.1 over
10,000 words, 16 bytes read). Prints each run, its precision and recall (from the true
counts of this synthetic data), and the median.

    python bench/bench_ldp_heavy_hitters.py [--runs 5] [--n 1000000] [--epsilon 2] [--top 10]
        [--csv]    (--csv: the whole CLI path, reading a CSV of the words)
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dprelease.ldp.heavy_hitters import heavy_hitters, precision_recall, true_value_counts

ROOT = Path(__file__).resolve().parent.parent


def words_and_codes(n: int, vocabulary: int = 10_000) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(0)
    words = [f"word-{i:05d}" for i in rng.permutation(vocabulary)]
    weights = np.arange(1, vocabulary + 1, dtype=float) ** -1.1
    return words, rng.choice(vocabulary, size=n, p=weights / weights.sum())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--epsilon", type=float, default=2.0)
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--max-length", type=int, default=16)
    parser.add_argument("--csv", action="store_true", help="time the CLI on a CSV instead")
    args = parser.parse_args()
    words, codes = words_and_codes(args.n)
    truth = true_value_counts(words, codes, args.max_length)
    times = []
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "words.csv"
        if args.csv:
            data.write_text("word\n" + "\n".join(words[c] for c in codes) + "\n")
        for run in range(args.runs):
            start = time.perf_counter()
            if args.csv:
                command = [sys.executable, "-m", "dprelease", "ldp", "heavy-hitters", str(data)]
                command += ["--column", "word", "--epsilon", str(args.epsilon), "--json"]
                command += ["--top", str(args.top), "--max-length", str(args.max_length)]
                subprocess.run(command, check=True, capture_output=True, cwd=ROOT)
                times.append(time.perf_counter() - start)
                print(f"run {run + 1}: {times[-1]:.2f} s (CLI, CSV of {args.n:,} rows)")
                continue
            result = heavy_hitters(words, codes, args.epsilon, args.top, args.max_length)
            times.append(time.perf_counter() - start)
            found = [h.value for h in result.top]
            accuracy = precision_recall(found, truth, args.top)
            print(
                f"run {run + 1}: {times[-1]:.2f} s, {len(found)} values, precision "
                f"{accuracy.precision:.0%}, recall {accuracy.recall:.0%}"
            )
    print(
        f"n = {args.n:,}, ε = {args.epsilon:g}, top {args.top}, {args.max_length} bytes: "
        f"median {statistics.median(times):.2f} s over {args.runs} runs"
    )


if __name__ == "__main__":
    main()
