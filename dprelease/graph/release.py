"""A differentially private degree distribution, charged to the ledger like a release.

Under **edge-DP** the histogram of degrees 1 … D ("D or more" in the top bin) has Δ₁ = 4; under
**node-DP** the graph is first projected to degree ≤ D and its histogram has Δ₁ = 2D + 1 (both
derived in `dprelease.graph.degrees`). Every bin gets fresh discrete Laplace noise of scale
b = Δ₁/ε from the release's secure samplers (`dprelease.release.noise.secure_noisy_counts`,
which checks OpenDP's privacy map against ours before it draws): pure ε-DP, δ = 0.

Post-processing (free): a negative count becomes 0, so the release is a valid distribution of
whole non-negative counts; `released_nodes` is their sum (a released number, not the true node
count) and each bin's `share` is its count over that sum. The margin of error (`moe`) is the
exact 95% quantile of the whole-number noise in one bin, before post-processing: the smallest
whole m with P(|noise| ≤ m) ≥ 95% (`exact_margin`). Nothing true (a count, the number of nodes or
edges, a node) is written: the files hold the released counts and public parameters only.

The charge (`charged_degree_release`) is the house's: the noise is drawn inside
`Ledger.charge`, the files are built in memory, and only a committed charge is delivered; an
account whose fingerprint saw none of the edge list's rows is refused first
(`dprelease.release.publish.check_fingerprint`).
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dprelease.accounting.composition import Guarantee
from dprelease.accounting.mechanisms import Noise
from dprelease.accounting.mechanisms.discrete_laplace import laplace_scale
from dprelease.errors import BudgetError, DataError, InternalError, quote
from dprelease.graph.degrees import (
    degree_histogram,
    edge_dp_sensitivity,
    node_dp_sensitivity,
    project,
)
from dprelease.graph.edges import EdgeList
from dprelease.ledger.store import LedgerEntry
from dprelease.limits import EPSILON_LIMIT, GRAPH_MAX_DEGREE_LIMIT
from dprelease.release.noise import secure_noisy_counts
from dprelease.release.publish import Account, check_fingerprint

MOE_ALPHA = 0.05
CSV_NAME = "degree_histogram.csv"


@dataclass(frozen=True)
class DegreeQuery:
    """Public: the degree histogram to release, its privacy unit and its ε."""

    epsilon: float
    max_degree: int
    node_dp: bool = False

    def __post_init__(self) -> None:
        if not (isinstance(self.epsilon, int | float) and 0 < self.epsilon <= EPSILON_LIMIT):
            raise BudgetError(
                f"ε of the degree histogram must be above 0 and at most {EPSILON_LIMIT:g}, got "
                f"{quote(self.epsilon)}."
            )
        if not (
            isinstance(self.max_degree, int) and 1 <= self.max_degree <= GRAPH_MAX_DEGREE_LIMIT
        ):
            raise DataError(
                f"The degree bound D must be a whole number from 1 to {GRAPH_MAX_DEGREE_LIMIT:,}, "
                f"got {quote(self.max_degree)}."
            )

    @property
    def privacy_unit(self) -> str:
        return "node" if self.node_dp else "edge"

    @property
    def sensitivity(self) -> int:
        """Δ₁ of the histogram: 2D + 1 under node-DP, 4 under edge-DP."""
        return node_dp_sensitivity(self.max_degree) if self.node_dp else edge_dp_sensitivity()

    @property
    def noise(self) -> Noise:
        """Discrete Laplace of the smallest scale b with Δ₁/b ≤ ε."""
        return Noise("discrete_laplace", laplace_scale(self.epsilon, self.sensitivity))

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(epsilon=self.epsilon, delta=None)

    @property
    def moe(self) -> int:
        """The exact 95% margin of one bin's noise (`exact_margin`)."""
        return exact_margin(self.noise, MOE_ALPHA)

    @property
    def label(self) -> str:
        return f"degree histogram ({self.privacy_unit}-DP, D = {self.max_degree})"


def exact_margin(noise: Noise, alpha: float) -> int:
    """The smallest whole m with P(|X| ≤ m) ≥ 1 − α for whole-number noise X.

    The mechanism's margin a has P(|X| ≥ a) ≤ α (the discrete Laplace's a solves
    2qᵃ/(1 + q) = α, its tail at whole t; the discrete Gaussian's is the least whole such a),
    so the first whole t with P(|X| ≥ t) ≤ α is ⌈a⌉ and m = ⌈a⌉ − 1. Rounding a up to the
    next whole count instead (the margin before issue 38.7) was one count too wide.
    """
    if not noise.kind.integer:
        raise InternalError(f"an exact whole-number margin needs integer noise, not {noise}")
    return max(0, math.ceil(noise.moe(alpha)) - 1)


def true_histogram(edges: EdgeList, query: DegreeQuery) -> np.ndarray:
    """CONFIDENTIAL: the histogram the query releases, before noise."""
    degrees = project(edges, query.max_degree) if query.node_dp else edges.degrees()
    return degree_histogram(degrees, query.max_degree)


@dataclass(frozen=True)
class DegreeRelease:
    """Public: the released, post-processed degree histogram (bins 1 … D)."""

    query: DegreeQuery
    counts: np.ndarray = field(repr=False)

    @property
    def released_nodes(self) -> int:
        return int(self.counts.sum())

    @property
    def shares(self) -> np.ndarray:
        total = self.released_nodes
        shares: np.ndarray = self.counts / total if total else np.zeros(self.counts.size)
        return shares

    def rows(self) -> list[dict[str, Any]]:
        """One row per degree: degree, its label, count, share, moe."""
        top, moe = self.query.max_degree, self.query.moe
        return [
            {
                "degree": degree,
                "degree_label": f"{degree} or more"
                if degree == top and not self.query.node_dp
                else str(degree),
                "count": int(count),
                "share": float(share),
                "moe": moe,
            }
            for degree, count, share in zip(
                range(1, top + 1), self.counts.tolist(), self.shares.tolist(), strict=True
            )
        ]

    def csv_bytes(self) -> bytes:
        text = io.StringIO()
        writer = csv.DictWriter(
            text, ["degree", "degree_label", "count", "share", "moe"], lineterminator="\n"
        )
        writer.writeheader()
        for row in self.rows():
            writer.writerow({**row, "share": f"{row['share']:.6g}"})
        return text.getvalue().encode("utf-8")

    def metadata(self, ledger: dict[str, Any] | None) -> dict[str, Any]:
        """Public parameters and released figures only (never a true count)."""
        query = self.query
        projection = (
            f"edge-addition projection to degree ≤ {query.max_degree} in a fixed order of node "
            "pairs (Day, Li & Lyu 2016)"
            if query.node_dp
            else None
        )
        return {
            "kind": "degree_histogram",
            "privacy_unit": query.privacy_unit,
            "epsilon": query.epsilon,
            "delta": None,
            "max_degree": query.max_degree,
            "bins": f"degrees 1 … {query.max_degree}"
            + ("" if query.node_dp else f" (the last: {query.max_degree} or more)"),
            "projection": projection,
            "sensitivity_l1": query.sensitivity,
            "mechanism": "discrete_laplace",
            "noise_scale": query.noise.scale,
            "moe_95": query.moe,
            "released_nodes": self.released_nodes,
            "postprocess": "negative counts set to 0; share = count / released_nodes; "
            "released_nodes is the sum of the released counts, not the true number of nodes",
            "files": [CSV_NAME],
            "ledger": None if ledger is None else dict(ledger),
        }

    def files(self, ledger: dict[str, Any] | None) -> dict[str, bytes]:
        meta = json.dumps(self.metadata(ledger), indent=2, ensure_ascii=False) + "\n"
        return {CSV_NAME: self.csv_bytes(), "metadata.json": meta.encode("utf-8")}


def noisy_histogram(true_counts: np.ndarray, query: DegreeQuery) -> np.ndarray:
    """The true histogram plus fresh secure noise (not yet post-processed)."""
    sens = query.sensitivity
    return secure_noisy_counts(true_counts, query.noise, sens, sens * sens)


def draw_degree_release(true_counts: np.ndarray, query: DegreeQuery) -> DegreeRelease:
    """Noise (secure) and post-processing; charges nothing: call it inside a charge."""
    noisy = noisy_histogram(true_counts, query)
    return DegreeRelease(query, np.maximum(noisy, 0).astype(np.int64))


@dataclass(frozen=True)
class PublishedDegrees:
    release: DegreeRelease
    files: dict[str, bytes] = field(repr=False)
    entry: LedgerEntry | None


def charged_degree_release(
    edges: EdgeList, query: DegreeQuery, account: Account, *, release_id: str
) -> PublishedDegrees:
    """Draw inside the ledger's charge of ε and build the files in memory; return after the
    commit (BudgetError if it does not fit the caps, AlreadyChargedError for a used id)."""
    check_fingerprint(account, len(edges.first))  # the key holds each distinct edge once
    true_counts = true_histogram(edges, query)  # counting spends nothing
    with account.charge(
        release_id, query.guarantee, label=query.label, tables=["degree_histogram"]
    ) as entry:
        release = draw_degree_release(true_counts, query)
        files = release.files({"release_id": release_id, "dataset": account.name})
    return PublishedDegrees(release, files, entry)


def uncharged_degree_release(edges: EdgeList, query: DegreeQuery) -> PublishedDegrees:
    """The release charged to no ledger (the CLI's `--no-ledger`): `"ledger": null`."""
    release = draw_degree_release(true_histogram(edges, query), query)
    return PublishedDegrees(release, release.files(None), None)
