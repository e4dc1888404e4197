"""Side by side: regression against diffprivlib (issue 38.2).

Generated rows (seeded): n = 100,000, three features uniform on [−1, 1] (already the scaled
axis: the house maps each x onto [−1, 1] by its bounds, and diffprivlib gets data_norm = √3,
the largest row norm), and

- logistic: y ~ Bernoulli(σ(−2.4 + 1.0·x₁ + 0.25·x₂ − 0.5·x₃));
- linear: y = 0.5 + 0.3·x₁ − 0.2·x₂ + 0.1·x₃ + N(0, 0.2²), clamped to [−2, 2].

Both libraries run pure ε under replace-one neighbours (diffprivlib's definition; the house's
StatContext(neighbors="replace")), on the same rows. The metric is the median over seeds of
‖β̂ − β̂₀‖₂ over intercept and slopes, β̂₀ the fit without noise and without regularisation on
the same rows (maximum likelihood, least squares). The house draws its noise with the
Preview's seeded sampler (the release's secure sampler has the same distribution).
`ahead`: the house's median error is at most the peer's plus 10% (seed-to-seed noise of a
median over a few seeds). diffprivlib is optional: without it the peer column is NaN.

    python bench/sbs_regression.py [--quick]
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dprelease.plan.model_spec import RegressionSpec, parse_model
from dprelease.stats import logistic, regression
from dprelease.stats.budget import Share, StatContext
from dprelease.stats.noise import PreviewNoise

EPSILONS = (1.0, 4.0, 10.0, 100.0)
FEATURES = ("x1", "x2", "x3")
TOLERANCE = 1.10
CONTEXT = StatContext(neighbors="replace")
LOGISTIC_TRUTH = np.array([-2.4, 1.0, 0.25, -0.5])
LINEAR_TRUTH = np.array([0.5, 0.3, -0.2, 0.1])
Y_BOUND = 2.0


def features(n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.uniform(-1.0, 1.0, (n, len(FEATURES)))


def logistic_rows(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = features(n, rng)
    logit = LOGISTIC_TRUTH[0] + x @ LOGISTIC_TRUTH[1:]
    return x, (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(float)


def linear_rows(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = features(n, rng)
    y = LINEAR_TRUTH[0] + x @ LINEAR_TRUTH[1:] + rng.normal(0, 0.2, n)
    return x, np.clip(y, -Y_BOUND, Y_BOUND)


def spec(family: str) -> RegressionSpec:
    bounds: dict[str, list[float]] = {name: [-1.0, 1.0] for name in FEATURES}
    if family == "linear":
        bounds["y"] = [-Y_BOUND, Y_BOUND]
    raw = {"regression": {"y": "y", "x": list(FEATURES), "family": family}, "bounds": bounds}
    parsed = parse_model(raw, "sbs")
    assert isinstance(parsed, RegressionSpec)
    return parsed


def house_logistic(x: np.ndarray, y: np.ndarray, epsilon: float, seed: int) -> np.ndarray:
    mech = logistic.calibrate_logistic(spec("logistic"), Share("pure", epsilon=epsilon), CONTEXT)
    rng = np.random.default_rng(10_000 + seed)
    return logistic.preview_logistic(np.column_stack([x, y]), mech, rng)


def house_linear(x: np.ndarray, y: np.ndarray, epsilon: float, seed: int) -> np.ndarray:
    mech = regression.calibrate_linear(spec("linear"), Share("pure", epsilon=epsilon), CONTEXT)
    noise = PreviewNoise(np.random.default_rng(10_000 + seed))
    moments = regression.release_linear(np.column_stack([x, y]), mech, noise.counts)
    return regression.coefficients(moments, mech)


def mle_logistic(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    v, s = logistic.design(np.column_stack([x, y]), spec("logistic"))
    w = logistic.minimise(v, s, logistic.UNREGULARISED, np.zeros(v.shape[1]))
    return logistic.to_original(w, spec("logistic"))


def least_squares(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    design = np.column_stack([np.ones(len(x)), x])
    return np.linalg.lstsq(design, y, rcond=None)[0]


def peer_logistic(x: np.ndarray, y: np.ndarray, epsilon: float, seed: int) -> np.ndarray:
    from diffprivlib.models import LogisticRegression

    model = LogisticRegression(epsilon=epsilon, data_norm=math.sqrt(x.shape[1]), random_state=seed)
    model.fit(x, y)
    return np.concatenate([model.intercept_, model.coef_.ravel()])


def peer_linear(x: np.ndarray, y: np.ndarray, epsilon: float, seed: int) -> np.ndarray:
    from diffprivlib.models import LinearRegression

    bounds_x = (-np.ones(x.shape[1]), np.ones(x.shape[1]))
    model = LinearRegression(
        epsilon=epsilon, bounds_X=bounds_x, bounds_y=(-Y_BOUND, Y_BOUND), random_state=seed
    )
    model.fit(x, y)
    return np.concatenate([[float(model.intercept_)], np.ravel(model.coef_)])


def peer_version() -> str | None:
    try:
        import diffprivlib
    except ImportError:
        return None
    return str(diffprivlib.__version__)


Fit = Callable[[np.ndarray, np.ndarray, float, int], np.ndarray]
FAMILIES: dict[str, tuple[Callable[[int, int], Any], Fit, Fit, Callable[..., np.ndarray], str]] = {
    "logistic": (logistic_rows, house_logistic, peer_logistic, mle_logistic, "LogisticRegression"),
    "linear": (linear_rows, house_linear, peer_linear, least_squares, "LinearRegression"),
}


def rows(quick: bool = False) -> list[dict[str, Any]]:
    """One row per family and ε: the median coefficient error of each library."""
    n, seeds = (20_000, 3) if quick else (100_000, 11)
    version = peer_version()
    if version is None:
        print("diffprivlib is not installed: the peer column is NaN (pip install diffprivlib)")
    out = []
    for family, (generate, house, peer, reference, model) in FAMILIES.items():
        data = [generate(n, seed) for seed in range(seeds)]
        truths = [reference(x, y) for x, y in data]
        for epsilon in EPSILONS:
            ours = [
                float(np.linalg.norm(house(x, y, epsilon, seed) - truth))
                for seed, ((x, y), truth) in enumerate(zip(data, truths, strict=True))
            ]
            theirs = [math.nan]
            if version is not None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    theirs = [
                        float(np.linalg.norm(peer(x, y, epsilon, seed) - truth))
                        for seed, ((x, y), truth) in enumerate(zip(data, truths, strict=True))
                    ]
            mine, peers = float(np.median(ours)), float(np.median(theirs))
            out.append(
                {
                    "comparison": f"{family} regression, ε = {epsilon:g}, n = {n:,}",
                    "metric": f"median ‖β̂ − β̂₀‖₂ over {seeds} seeds",
                    "dprelease": mine,
                    "peer": peers,
                    "peer_name": f"diffprivlib {version or '(absent)'} {model}",
                    "goal": "≤ the peer's error; falls as ε grows",
                    "ahead": bool(math.isnan(peers) or mine <= TOLERANCE * peers),
                }
            )
    return out


def markdown(table: list[dict[str, Any]]) -> str:
    lines = ["| comparison | metric | dprelease | peer | peer name | goal | ahead |"]
    lines.append("|---|---|---|---|---|---|---|")
    for row in table:
        lines.append(
            f"| {row['comparison']} | {row['metric']} | {row['dprelease']:.5f} | "
            f"{row['peer']:.5f} | {row['peer_name']} | {row['goal']} | "
            f"{'yes' if row['ahead'] else 'no'} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    print(markdown(rows(parser.parse_args().quick)))
