"""dpplug's engine is a drop-in for ``pipeline_dp.DPEngine`` (PipelineDP 0.3.1): every public call
without a dpplug spec behaves as PipelineDP's own engine does.

PipelineDP publishes no source distribution on PyPI and its wheel holds no tests, so its own test
suite cannot run here; this is the differential test instead. The same public calls go to both
engines (each with a fresh accountant on the local backend):

- bad calls raise the same exception, with the same message, at the same point (the call itself,
  ``compute_budgets`` or reading the result), and before any dpplug check;
- valid calls without dpplug specs request the same budgets, write the same explain report and
  release the same partitions and metrics (ε = 10⁴, so PipelineDP's noise, which cannot be
  seeded, keeps the two engines' values within 0.5 of each other with overwhelming probability:
  the widest noise is the SUM's, Laplace of scale 24 / 2500 < 0.01 or Gaussian of σ < 0.03, and
  a difference beyond 0.5 has probability below e^-50 per value). The PLD accountant is left to
  the bad calls: its budget search takes minutes at such an ε.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable
from typing import Any

import pytest

pipeline_dp = pytest.importorskip("pipeline_dp")

from pipeline_dp import aggregate_params as ap  # noqa: E402
from pipeline_dp import combiners  # noqa: E402

import dpplug  # noqa: E402
from dpplug.adapters.pipelinedp import DPEngine, partition_selection, sampler  # noqa: E402

Metrics = pipeline_dp.Metrics
NoiseKind = pipeline_dp.NoiseKind
Strategy = pipeline_dp.PartitionSelectionStrategy

#: 40 units, each with 3 rows in one of 4 partitions (value = unit % 5), and 2 rows in "x".
ROWS = [(u, f"p{u % 4}", u % 5) for u in range(40) for _ in range(3)] + [
    (u, "x", 1) for u in range(40) for _ in range(2)
]
EXTRACTORS = pipeline_dp.DataExtractors(
    privacy_id_extractor=operator.itemgetter(0),
    partition_extractor=operator.itemgetter(1),
    value_extractor=operator.itemgetter(2),
)
EPSILON, DELTA = 10_000.0, 1e-2
TOLERANCE = 0.5


def _accountant(kind: str = "naive", epsilon: float = EPSILON) -> Any:
    if kind == "naive":
        return pipeline_dp.NaiveBudgetAccountant(total_epsilon=epsilon, total_delta=DELTA)
    return pipeline_dp.PLDBudgetAccountant(total_epsilon=epsilon, total_delta=DELTA)


def _count(**changes: Any) -> Any:
    params = pipeline_dp.AggregateParams(
        metrics=[Metrics.COUNT], max_partitions_contributed=2, max_contributions_per_partition=3
    )
    for name, value in changes.items():  # after construction: AggregateParams checks too
        setattr(params, name, value)
    return params


@dataclasses.dataclass(frozen=True)
class Call:
    """One public call on an engine, given the engine (the accountant is the engine's)."""

    name: str
    method: str
    args: Callable[[], tuple[Any, ...]]
    kwargs: Callable[[], dict[str, Any]] = dict
    accountant: str = "naive"
    epsilon: float = EPSILON


def _outcome(engine_class: type, call: Call) -> tuple[str, Any]:
    """What the call does: ("raises", stage, type, message) or ("returns", released, budgets,
    report), the released values in canonical (sorted) order."""
    accountant = _accountant(call.accountant, call.epsilon)
    engine = engine_class(accountant, pipeline_dp.LocalBackend())
    stage = "call"
    try:
        result = getattr(engine, call.method)(*call.args(), **call.kwargs())
        stage = "compute_budgets"
        accountant.compute_budgets()
        stage = "read"
        released = sorted(result, key=repr)
        report = engine.explain_computations_report()
    except Exception as exc:  # the outcome compared is any exception
        return "raises", (stage, type(exc), str(exc))
    budgets = sorted(
        (s.name, s.mechanism_type, s.eps, s.delta, s.count)
        for s in (m.mechanism_spec for m in accountant._mechanisms)
    )
    return "returns", (released, budgets, report)


# --------------------------------------------------------------------------- bad calls

SELECT = pipeline_dp.SelectPartitionsParams(max_partitions_contributed=2)
BOUNDS = pipeline_dp.CalculatePrivateContributionBoundsParams(
    aggregation_noise_kind=NoiseKind.LAPLACE,
    aggregation_eps=1,
    aggregation_delta=0,
    # The exponential mechanism picks the best bound (2) unless its score gap, about 1 at ε = 1
    # (where it picks 3 at times), is beaten: at ε = 100 that has probability about e^-100;
    # PipelineDP overflows to NaN at much larger ε.
    calculation_eps=100,
    max_partitions_contributed_upper_bound=4,
)
BAD_CALLS = [
    # select_partitions
    Call("select col None", "select_partitions", lambda: (None, SELECT, EXTRACTORS)),
    Call("select col empty", "select_partitions", lambda: ([], SELECT, EXTRACTORS)),
    Call("select params None", "select_partitions", lambda: (ROWS, None, EXTRACTORS)),
    Call("select AggregateParams", "select_partitions", lambda: (ROWS, _count(), EXTRACTORS)),
    Call(
        "select max_partitions 0",
        "select_partitions",
        lambda: (
            ROWS,
            pipeline_dp.SelectPartitionsParams(max_partitions_contributed=0),
            EXTRACTORS,
        ),
    ),
    Call(
        "select max_partitions str",
        "select_partitions",
        lambda: (
            ROWS,
            pipeline_dp.SelectPartitionsParams(max_partitions_contributed="2"),
            EXTRACTORS,
        ),
    ),
    Call("select extractors None", "select_partitions", lambda: (ROWS, SELECT, None)),
    Call("select extractors wrong", "select_partitions", lambda: (ROWS, SELECT, "extractors")),
    # aggregate
    Call("aggregate col None", "aggregate", lambda: (None, _count(), EXTRACTORS)),
    Call("aggregate col empty", "aggregate", lambda: ([], _count(), EXTRACTORS)),
    Call("aggregate params None", "aggregate", lambda: (ROWS, None, EXTRACTORS)),
    Call("aggregate SelectPartitionsParams", "aggregate", lambda: (ROWS, SELECT, EXTRACTORS)),
    Call("aggregate extractors None", "aggregate", lambda: (ROWS, _count(), None)),
    Call("aggregate extractors wrong", "aggregate", lambda: (ROWS, _count(), 3)),
    Call(
        "aggregate max_contributions with VARIANCE",
        "aggregate",
        lambda: (ROWS, _count(metrics=[Metrics.VARIANCE], max_contributions=2), EXTRACTORS),
    ),
    Call(
        "aggregate PRIVACY_ID_COUNT with bounds enforced",
        "aggregate",
        lambda: (
            ROWS,
            _count(metrics=[Metrics.PRIVACY_ID_COUNT], contribution_bounds_already_enforced=True),
            EXTRACTORS,
        ),
    ),
    Call(
        "aggregate thresholding without PRIVACY_ID_COUNT",
        "aggregate",
        lambda: (ROWS, _count(post_aggregation_thresholding=True), EXTRACTORS),
    ),
    Call(
        "aggregate VECTOR_SUM under PLD",
        "aggregate",
        lambda: (ROWS, _count(metrics=[Metrics.VECTOR_SUM]), EXTRACTORS),
        accountant="pld",
    ),
    Call(
        "aggregate custom combiners under PLD",
        "aggregate",
        lambda: (ROWS, _count(metrics=None, custom_combiners=[_Sum()]), EXTRACTORS),
        accountant="pld",
    ),
    Call(
        "aggregate into something that is not a report",
        "aggregate",
        lambda: (ROWS, _count(), EXTRACTORS),
        kwargs=lambda: {"public_partitions": None, "out_explain_computation_report": 7},
    ),
    # add_dp_noise
    Call("add_dp_noise params None", "add_dp_noise", lambda: ([("a", 1)], None)),
    Call(
        "add_dp_noise without sensitivities",
        "add_dp_noise",
        lambda: ([("a", 1)], pipeline_dp.AddDPNoiseParams(noise_kind=NoiseKind.LAPLACE)),
    ),
    Call(
        "add_dp_noise AggregateParams",
        "add_dp_noise",
        lambda: ([("a", 1)], _count()),
    ),
    # calculate_private_contribution_bounds
    Call(
        "bounds col None",
        "calculate_private_contribution_bounds",
        lambda: (None, BOUNDS, EXTRACTORS, ["p0"]),
    ),
    Call(
        "bounds params None",
        "calculate_private_contribution_bounds",
        lambda: (ROWS, None, EXTRACTORS, ["p0"]),
    ),
    Call(
        "bounds params wrong",
        "calculate_private_contribution_bounds",
        lambda: (ROWS, SELECT, EXTRACTORS, ["p0"]),
    ),
    Call(
        "bounds extractors wrong",
        "calculate_private_contribution_bounds",
        lambda: (ROWS, BOUNDS, "extractors", ["p0"]),
    ),
]


class _Sum(combiners.CustomCombiner):  # type: ignore[misc]
    """A minimal custom combiner (only PipelineDP's checks of custom combiners read it)."""

    def create_accumulator(self, values: Any) -> Any:
        return sum(values)

    def merge_accumulators(self, a: Any, b: Any) -> Any:
        return a + b

    def compute_metrics(self, accumulator: Any) -> Any:
        return accumulator

    def explain_computation(self) -> str:
        return "sum"

    def request_budget(self, budget_accountant: Any) -> None:
        self._budget = budget_accountant.request_budget(ap.MechanismType.LAPLACE)

    def metrics_names(self) -> list[str]:
        return ["sum"]


@pytest.mark.parametrize("call", BAD_CALLS, ids=lambda call: call.name)
def test_bad_calls_raise_what_pipelinedp_raises(call: Call) -> None:
    native = _outcome(pipeline_dp.DPEngine, call)
    ours = _outcome(DPEngine, call)
    assert native[0] == "raises", native
    assert ours == native


def test_the_issue_cases() -> None:
    """The calls of the issue: ``params=None`` is PipelineDP's ValueError (it was an
    AttributeError) and AggregateParams to select_partitions its TypeError (it was BadParameter)."""
    engine = DPEngine(_accountant(), pipeline_dp.LocalBackend())
    with pytest.raises(ValueError, match="SelectPrivatePartitionsParams") as error:
        engine.select_partitions(ROWS, None, EXTRACTORS)
    assert not isinstance(error.value, dpplug.DpplugError)
    with pytest.raises(TypeError, match="SelectPrivatePartitionsParams"):
        engine.select_partitions(ROWS, _count(), EXTRACTORS)


# --------------------------------------------------------------------------- valid calls


def _select(strategy: Any, **more: Any) -> Any:
    return pipeline_dp.SelectPartitionsParams(
        max_partitions_contributed=2, partition_selection_strategy=strategy, **more
    )


def _aggregate(**given: Any) -> Any:
    fields = {"max_partitions_contributed": 2, "max_contributions_per_partition": 3, **given}
    return pipeline_dp.AggregateParams(**fields)


SUMS = {"min_value": 0, "max_value": 4}
VALID_CALLS = [
    *(
        Call(
            f"select {s.name}",
            "select_partitions",
            lambda s=s: (ROWS, _select(s), EXTRACTORS),
            # PipelineDP's weighted Gaussian overflows at ε = 10⁴; at 10 the ten units of each
            # partition (weight 10/√2 against a threshold near 2, σ ≈ 0.4) still keep them all.
            epsilon=10.0 if s.is_weighted_gaussian else EPSILON,
        )
        for s in Strategy
    ),
    Call(
        "select pre_threshold weight",
        "select_partitions",
        lambda: (
            ROWS,
            _select(Strategy.LAPLACE_THRESHOLDING, pre_threshold=3, budget_weight=2),
            EXTRACTORS,
        ),
    ),
    *(
        Call(
            f"aggregate {kind.name}",
            "aggregate",
            lambda kind=kind: (
                ROWS,
                _aggregate(
                    metrics=[Metrics.COUNT, Metrics.PRIVACY_ID_COUNT, Metrics.SUM],
                    noise_kind=kind,
                    output_noise_stddev=True,
                    **SUMS,
                ),
                EXTRACTORS,
            ),
        )
        for kind in NoiseKind
    ),
    Call(
        "aggregate MEAN VARIANCE PERCENTILE",
        "aggregate",
        lambda: (
            ROWS,
            _aggregate(
                metrics=[Metrics.VARIANCE, Metrics.MEAN, Metrics.COUNT, Metrics.PERCENTILE(50)],
                **SUMS,
            ),
            EXTRACTORS,
        ),
    ),
    Call(
        "aggregate public partitions",
        "aggregate",
        lambda: (ROWS, _aggregate(metrics=[Metrics.COUNT, Metrics.SUM], **SUMS), EXTRACTORS),
        kwargs=lambda: {"public_partitions": ["p0", "p1", "absent"]},
    ),
    Call(
        "aggregate max_contributions",
        "aggregate",
        lambda: (
            ROWS,
            pipeline_dp.AggregateParams(
                metrics=[Metrics.COUNT, Metrics.PRIVACY_ID_COUNT], max_contributions=5
            ),
            EXTRACTORS,
        ),
        # private partitions with max_contributions fail inside PipelineDP 0.3.1 itself
        kwargs=lambda: {"public_partitions": ["p0", "x"]},
    ),
    Call(
        "aggregate bounds already enforced",
        "aggregate",
        lambda: (
            ROWS,
            _aggregate(metrics=[Metrics.COUNT], contribution_bounds_already_enforced=True),
            EXTRACTORS,
        ),
    ),
    Call(
        "aggregate post-aggregation thresholding",
        "aggregate",
        lambda: (
            ROWS,
            _aggregate(metrics=[Metrics.PRIVACY_ID_COUNT], post_aggregation_thresholding=True),
            EXTRACTORS,
        ),
    ),
    Call(
        "aggregate pre_threshold Laplace thresholding",
        "aggregate",
        lambda: (
            ROWS,
            _aggregate(
                metrics=[Metrics.COUNT],
                partition_selection_strategy=Strategy.LAPLACE_THRESHOLDING,
                pre_threshold=2,
            ),
            EXTRACTORS,
        ),
    ),
    *(
        Call(
            f"add_dp_noise {kind.name}",
            "add_dp_noise",
            lambda kind=kind: (
                [("a", 10), ("b", 20.5)],
                pipeline_dp.AddDPNoiseParams(
                    noise_kind=kind, l0_sensitivity=1, linf_sensitivity=2, output_noise_stddev=True
                ),
            ),
        )
        for kind in NoiseKind
    ),
    Call(
        "contribution bounds",
        "calculate_private_contribution_bounds",
        lambda: (ROWS, BOUNDS, EXTRACTORS, ["p0", "p1", "p2", "p3", "x"]),
    ),
]


def _close(a: Any, b: Any) -> bool:
    """Equal, up to TOLERANCE for floats, through tuples, lists and dataclasses."""
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= TOLERANCE
    if dataclasses.is_dataclass(a) and type(a) is type(b):
        return _close(dataclasses.astuple(a), dataclasses.astuple(b))  # type: ignore[arg-type]
    if isinstance(a, (tuple, list)) and type(a).__name__ == type(b).__name__:
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b and type(a) is type(b))


@pytest.mark.parametrize("call", VALID_CALLS, ids=lambda call: call.name)
def test_valid_calls_behave_as_pipelinedp(call: Call) -> None:
    native = _outcome(pipeline_dp.DPEngine, call)
    ours = _outcome(DPEngine, call)
    assert native[0] == ours[0] == "returns", (native, ours)
    released, budgets, report = ours[1]
    assert released, "a valid call releases something"
    assert budgets == native[1][1]
    assert report == native[1][2]
    assert _close(released, native[1][0]), (released, native[1][0])


def test_the_differential_test_can_fail() -> None:
    """The comparison sees a different noise kind, a different budget and a dpplug sampler."""
    laplace = Call(
        "l", "aggregate", lambda: (ROWS, _aggregate(metrics=[Metrics.COUNT]), EXTRACTORS)
    )
    gaussian = dataclasses.replace(
        laplace,
        args=lambda: (
            ROWS,
            _aggregate(metrics=[Metrics.COUNT], noise_kind=NoiseKind.GAUSSIAN),
            EXTRACTORS,
        ),
    )
    assert _outcome(DPEngine, laplace)[1][2] != _outcome(pipeline_dp.DPEngine, gaussian)[1][2]
    assert _outcome(DPEngine, laplace)[1][1] != _outcome(pipeline_dp.DPEngine, gaussian)[1][1]
    with_sampler = dataclasses.replace(
        laplace,
        args=lambda: (
            ROWS,
            _aggregate(metrics=[Metrics.COUNT], noise_kind=sampler("discrete-laplace")),
            EXTRACTORS,
        ),
        epsilon=10.0,  # within the sampler's range
    )
    ours = _outcome(DPEngine, with_sampler)
    native = _outcome(pipeline_dp.DPEngine, dataclasses.replace(laplace, epsilon=10.0))
    assert ours[0] == native[0] == "returns"
    assert ours[1][1] != native[1][1] and ours[1][2] != native[1][2]
    assert not _close(1.0, 1.6) and not _close(1, 1.0) and not _close([1.0], [1.0, 2.0])


def test_dpplug_checks_come_after_pipelinedps() -> None:
    """A call that is wrong for PipelineDP and also carries a misplaced dpplug spec raises
    PipelineDP's error, not dpplug's."""
    engine = DPEngine(_accountant(), pipeline_dp.LocalBackend())
    misplaced = _select(sampler("discrete-laplace"))
    misplaced.max_partitions_contributed = 0
    with pytest.raises(ValueError, match="max_partitions_contributed must be set") as error:
        engine.select_partitions(ROWS, misplaced, EXTRACTORS)
    assert not isinstance(error.value, dpplug.DpplugError)
    selector = partition_selection("optimal-partition-selection")
    bad = _aggregate(metrics=[Metrics.COUNT], partition_selection_strategy=selector)
    with pytest.raises(TypeError, match="DataExtractors"):
        engine.aggregate(ROWS, bad, "extractors")
