"""The release plan as a value: columns, tables, budget settings, post-processing (contract v1).

Reading and writing plan files is `dprelease.plan.parse`.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from dprelease.errors import PlanError, quote
from dprelease.plan.schema import NumericColumn, Schema
from dprelease.plan.statistic import Discovery, StatisticTable, statistic_problems
from dprelease.plan.survey_weight import SurveyWeight
from dprelease.plan.table_spec import (
    Neighbors,
    TableSpec,
    Unit,
    check_delta,
    check_epsilon,
    check_rho,
)
from dprelease.plan.values_text import is_number
from dprelease.plan.zeros import StructuralZero, constraint_problems

Allocation = Literal["equal", "weighted", "optimal", "targets"]
StrategyKind = Literal["auto", "workload"]
ALLOCATION_LABELS: dict[Allocation, str] = {  # the one list: the plan's words and their texts
    "equal": "equal: every table the same share",
    "weighted": "weighted: shares follow table weights",
    "optimal": "optimal: least weighted error of the published tables",
    "targets": "targets: just enough for each table's accuracy target",
}
STRATEGY_LABELS: dict[StrategyKind, str] = {
    "auto": "auto: measure what makes the tables most accurate",
    "workload": "workload: measure the tables as listed",
}
ALLOCATIONS: tuple[Allocation, ...] = tuple(ALLOCATION_LABELS)
STRATEGIES: tuple[StrategyKind, ...] = tuple(STRATEGY_LABELS)
PLAN_VERSION = 1
CLAMP_LIMIT = 1e15  # counts are whole numbers far below this; beyond it rounding breaks


@dataclass(frozen=True)
class Budget:
    """The total budget and how it is composed and split.

    `accounting` is the plan's text: an accountant's name (`dprelease.accounting.accountants`,
    whose registry checks it and the settings it rules: ρ, δ, table locks) or `auto`, which
    picks at allocation time the accountant whose strategy has the least expected error;
    `strategy: auto` may measure other marginals than the published tables (issue 10);
    `workload` measures the tables as listed.
    """

    accounting: str = "auto"
    epsilon: float | None = None
    delta: float | None = None
    rho: float | None = None
    allocation: Allocation = "optimal"
    confidence: float = 0.95
    strategy: StrategyKind = "auto"

    def __post_init__(self) -> None:
        if not isinstance(self.accounting, str) or not self.accounting:
            raise PlanError(f"budget.accounting must be a name, got {quote(self.accounting)}.")
        if self.allocation not in ALLOCATIONS:
            raise PlanError(
                f"budget.allocation must be one of {', '.join(ALLOCATIONS)}, "
                f"got {quote(self.allocation)}."
            )
        if self.epsilon is not None:
            check_epsilon(self.epsilon, "budget.epsilon")
        if self.strategy not in STRATEGIES:
            raise PlanError(
                f"strategy must be one of {', '.join(STRATEGIES)}, got {quote(self.strategy)}."
            )
        if self.rho is not None:
            check_rho(self.rho, "budget.rho")
        if self.epsilon is None and self.rho is None:
            raise PlanError("budget needs epsilon (or rho under zcdp): the total to spend.")
        if self.epsilon is not None and self.rho is not None:
            raise PlanError("budget gives both epsilon and rho; give one of them.")
        if self.delta is not None:
            check_delta(self.delta, "budget.delta")
        if not is_number(self.confidence) or not 0.5 <= self.confidence < 1:
            raise PlanError(
                f"budget.confidence must be at least 0.5 and below 1 (e.g. 0.95), "
                f"got {quote(self.confidence)}."
            )

    @property
    def total_field(self) -> str:
        """The field the plan gives its total in: `rho` (zCDP's, when given) or `epsilon`."""
        return "epsilon" if self.rho is None else "rho"

    @property
    def total(self) -> float:
        """The plan's total, in `total_field`."""
        value = self.epsilon if self.rho is None else self.rho
        assert value is not None  # __post_init__ requires one of them
        return value

    def with_total(self, value: float) -> Budget:
        """The same budget with another total in the same field (a what-if)."""
        if self.rho is None:
            return dataclasses.replace(self, epsilon=value)
        return dataclasses.replace(self, rho=value)


Estimator = Literal["shrunk", "least_squares", "unbiased"]
ESTIMATORS: tuple[Estimator, ...] = ("shrunk", "least_squares", "unbiased")
DEFAULT_ESTIMATE: Estimator = "least_squares"  # unbiased cells; `shrunk` is one switch away


@dataclass(frozen=True)
class SyntheticShare:
    """`postprocess.synthetic: {budget_share: S}` (issue 38.6): the synthesis takes S of the
    plan's total for its own measurements (every declared column, and 2-way marginals chosen
    privately); the tables share the rest."""

    budget_share: float

    def __post_init__(self) -> None:
        share = self.budget_share
        if not is_number(share) or not 0 < share < 1:
            raise PlanError(
                "postprocess.synthetic.budget_share must be a number between 0 and 1 "
                f"(exclusive), e.g. 0.2, got {quote(share)}."
            )


@dataclass(frozen=True)
class Postprocess:
    """Which post-processing steps run on the noisy counts (they cost no privacy).

    `consistent` is on unless the plan switches it off (issue 24): tables that share a margin
    agree and add up, the same in the CLI and the dashboard. `synthetic` (issue 27) adds
    microdata whose tabulations are the published tables; it implies consistent,
    non-negative, whole counts (`effective`); as a `SyntheticShare` it also has its own
    share of the budget (issue 38.6).

    `estimate` (issue 38.1) says how the consistent tables are estimated: `least_squares`
    (the default) applies the steps to the least-squares estimate; `shrunk` first shrinks each
    table of two or more columns toward what its published sub-tables predict, as far as its
    own noise and departures say it helps (`postprocess.shrinkage`: lower error on sparse
    tables, a bias in their cells, unbiased totals), then applies the steps; `unbiased`
    publishes the least-squares estimate itself (no bounds, no rounding, whatever the other
    switches say)."""

    clamp: tuple[float | None, float | None] = (None, None)
    nonnegative: bool = True
    integer: bool = True
    consistent: bool = True
    synthetic: bool | SyntheticShare = False
    estimate: Estimator = DEFAULT_ESTIMATE

    @property
    def synthetic_share(self) -> float | None:
        """The synthesis' own share of the total (None: no extra budget, `synthetic: true`)."""
        return self.synthetic.budget_share if isinstance(self.synthetic, SyntheticShare) else None

    @property
    def effective(self) -> Postprocess:
        """The steps that run: with `synthetic`, the tables are tabulations of records, so
        they are consistent, non-negative and whole whatever the other switches say."""
        if self.synthetic:
            return dataclasses.replace(self, nonnegative=True, integer=True, consistent=True)
        if self.estimate == "unbiased":  # bounds and rounding would bias the counts
            return dataclasses.replace(self, nonnegative=False, integer=False, clamp=(None, None))
        return self

    def to_dict(self) -> dict[str, Any]:
        """The plan's `postprocess:` section (also in a release's metadata); `synthetic` only
        when on, so that plans without it read and write as before."""
        return {
            "clamp": list(self.clamp),
            "nonnegative": self.nonnegative,
            "integer": self.integer,
            "consistent": self.consistent,
            **({"synthetic": _synthetic_text(self.synthetic)} if self.synthetic else {}),
            **({"estimate": self.estimate} if self.estimate != DEFAULT_ESTIMATE else {}),
        }

    def __post_init__(self) -> None:
        lower, upper = self.clamp
        for bound in (lower, upper):
            if bound is not None and not (is_number(bound) and abs(bound) <= CLAMP_LIMIT):
                raise PlanError(
                    "postprocess.clamp bounds must be null or finite numbers within "
                    f"±{CLAMP_LIMIT:g}, got {quote(bound)}."
                )
        if lower is not None and upper is not None and lower > upper:
            raise PlanError("postprocess.clamp: the lower bound exceeds the upper bound.")
        if self.estimate not in ESTIMATORS:
            raise PlanError(
                f"postprocess.estimate must be one of {', '.join(ESTIMATORS)}, "
                f"got {quote(self.estimate)}."
            )


def _synthetic_text(value: bool | SyntheticShare) -> bool | dict[str, float]:
    return {"budget_share": value.budget_share} if isinstance(value, SyntheticShare) else True


@dataclass(frozen=True)
class Plan:
    """Everything needed to reproduce a release except the randomness."""

    schema: Schema
    tables: tuple[TableSpec, ...]
    budget: Budget
    unit: Unit = field(default_factory=Unit)
    neighbors: Neighbors = "add_remove"
    postprocess: Postprocess = field(default_factory=Postprocess)
    data: str | None = None
    dataset: str | None = None  # the ledger account's name (optional)
    base_dir: Path | None = None  # folder of the plan file, for a relative `data` path
    statistics: tuple[StatisticTable, ...] = ()  # tables with `stat:` (issue 16)
    discoveries: tuple[Discovery, ...] = ()  # columns with `domain: {discover: ...}`
    # issue 27: tables with `invariant: true` (exact, no budget) and impossible cells
    invariants: tuple[TableSpec, ...] = ()
    structural_zeros: tuple[StructuralZero, ...] = ()

    def __post_init__(self) -> None:
        problems = check_plan(self)
        if problems:
            raise PlanError.from_problems(problems)

    def table(self, name: str) -> TableSpec:
        for spec in (*self.tables, *self.invariants):
            if spec.name == name:
                return spec
        raise PlanError(f"The plan has no table {quote(name)}.")

    @property
    def data_path(self) -> Path | None:
        if self.data is None:
            return None
        path = Path(self.data)
        return path if path.is_absolute() or self.base_dir is None else self.base_dir / path

    @property
    def used_columns(self) -> tuple[str, ...]:
        """The plan's columns that some table uses, in plan order; with a synthesis share
        (issue 38.6) every declared column but the unit's id: the synthesis measures them."""
        used = {name for spec in (*self.tables, *self.invariants) for name in spec.by}
        if self.postprocess.synthetic_share is not None:
            used |= {n for n in self.schema.names if n != self.unit.column}
        return tuple(name for name in self.schema.names if name in used)

    @property
    def survey_weights(self) -> tuple[SurveyWeight, ...]:
        """The distinct survey weights of the tables, in table order (issue 37.8)."""
        weights = (spec.survey_weight for spec in self.tables)
        return tuple(dict.fromkeys(w for w in weights if w is not None))

    @property
    def grouping_columns(self) -> tuple[str, ...]:
        """The plan's columns that some count table or statistic groups by, in plan order: the
        columns a release has cells of (and labels for)."""
        used = {name for spec in (*self.tables, *self.invariants) for name in spec.by}
        used |= {name for statistic in self.statistics for name in statistic.by}
        return tuple(name for name in self.schema.names if name in used)


def did_you_mean(word: str, choices: tuple[str, ...] | list[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" Did you mean {quote(close[0])}?" if close else ""


def check_plan(plan: Plan) -> list[str]:
    """Problems that involve several parts of a plan at once."""
    problems: list[str] = []
    if plan.neighbors not in ("add_remove", "replace"):
        problems.append(
            f"neighbors must be 'add_remove' or 'replace', got {quote(plan.neighbors)}."
        )
    if not plan.tables and not plan.statistics and not plan.invariants:
        problems.append("The plan has no tables: add at least one under `tables`.")
    names = [spec.name for spec in (*plan.tables, *plan.invariants)]
    names += [s.name for s in plan.statistics]
    for name in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"Table name {quote(name)} is used twice; table names must be unique.")
    problems.extend(unknown_column_problems(plan.tables + plan.invariants, plan.schema.names))
    stat_tables = tuple(s.table for s in plan.statistics)
    problems.extend(unknown_column_problems(stat_tables, plan.schema.names))
    problems.extend(
        constraint_problems(
            plan.schema,
            plan.structural_zeros,
            plan.tables,
            plan.invariants,
            has_statistics=bool(plan.statistics),
        )
    )
    problems.extend(statistic_problems(plan.statistics, plan.discoveries, plan.schema, plan.unit))
    if plan.unit.kind == "id" and plan.unit.column in plan.used_columns:
        problems.append(
            f"The unit id column {quote(plan.unit.column)} cannot also be a table column."
        )
    problems.extend(survey_weight_problems(plan))
    if plan.budget.allocation == "targets" and not any(s.target for s in plan.tables):
        problems.append(
            "allocation 'targets' needs at least one table with a target, e.g. target: {moe: 25}."
        )
    return problems


def survey_weight_problems(plan: Plan) -> list[str]:
    """A weight column must hold numbers: not a categorical column, not the unit's id."""
    problems = []
    for spec in plan.tables:
        weight = spec.survey_weight
        if weight is None:
            continue
        where = f"Table {quote(spec.name)}: survey_weight.column {quote(weight.column)}"
        declared = plan.schema[weight.column] if weight.column in plan.schema.names else None
        if declared is not None and not isinstance(declared, NumericColumn):
            problems.append(f"{where} is declared categorical; a weight column holds numbers.")
        if plan.unit.kind == "id" and weight.column == plan.unit.column:
            problems.append(f"{where} is the unit id column; weight by a column of weights.")
        if weight.column in spec.by:
            problems.append(f"{where} is also in its `by`; weight by another column.")
    if plan.postprocess.synthetic and any(s.survey_weight for s in plan.tables):
        problems.append(
            "postprocess.synthetic makes records from count tables; it cannot hold the "
            "survey-weighted tables: switch synthetic off or drop their survey_weight."
        )
    return problems


def unknown_column_problems(tables: tuple[TableSpec, ...], defined: tuple[str, ...]) -> list[str]:
    """One problem per table column that the plan does not define."""
    return [
        f"Table {quote(spec.name)} uses column {quote(name)}, which the plan does not define "
        f"(defined: {', '.join(defined) or 'none'})." + did_you_mean(name, defined)
        for spec in tables
        for name in spec.by
        if name not in defined
    ]


def keys_of(value_type: type[Any]) -> tuple[str, ...]:
    """The keys of a plan section: the fields of the value it is parsed into, in their order
    (written once, in the dataclass)."""
    return tuple(f.name for f in dataclasses.fields(value_type))


def default_of(value_type: type[Any], key: str) -> Any:
    """The default of a plan key: the dataclass field's own (written once, in the dataclass)."""
    default = {f.name: f.default for f in dataclasses.fields(value_type)}[key]
    if default is dataclasses.MISSING:
        raise KeyError(f"{value_type.__name__}.{key} has no default")
    return default
