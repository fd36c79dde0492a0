"""dpplug plugins inside PipelineDP 0.3.1 pipelines, on its local backend, Beam and Spark
(docs/pipelinedp.md).

PipelineDP has no public injection point, so :class:`DPEngine` subclasses ``pipeline_dp.DPEngine``
and overrides three private methods (hence the pin ``pipeline-dp==0.3.1``). It is a drop-in: its
public methods run PipelineDP's own checks first, in PipelineDP's order, so every call PipelineDP
refuses raises what PipelineDP raises, and only then dpplug's checks of dpplug specs. Where a
mechanism enters a pipeline is its kind's :class:`~dpplug.kind.PipelineRole`, never the kind
itself:

- **Partition selection** (``_select_partitions``, ``_select_private_partitions_internal``):
  when ``SelectPartitionsParams`` or ``AggregateParams`` carry a :func:`partition_selection`
  spec in their ``partition_selection_strategy`` field, partitions are kept by that registered
  selector, with PipelineDP's ``pre_threshold`` and ``max_partitions_contributed``. Its budget is
  requested as ``MechanismType.GENERIC`` (ε, δ): PipelineDP's own ``TRUNCATED_GEOMETRIC`` path is
  broken under the PLD accountant (it is left out of the composition or crashes).
  ``select_partitions`` runs as a counting graph: PipelineDP's contribution bounding, the units
  of each partition counted by the backend, and the partitions decided a batch at a time by the
  selector's vectorised ``select`` (:mod:`~dpplug.adapters.pipelinedp_batches`); so does
  ``aggregate`` when dpplug noises every metric (COUNT, PRIVACY_ID_COUNT) and selects the
  partitions, the noise drawn for a batch at once too. Elsewhere (other metrics alongside, public
  partitions) PipelineDP's graph runs and each partition is decided by the selector's
  ``decider`` (grid selectors: one 63-bit draw against their exact keep table). Both draw one
  independent decision per partition with the law the conformance suite checks.
- **Count noise** (``_create_compound_combiner``, ``_add_dp_noise``): with
  ``noise_kind=sampler(name, **params)`` in the params (COUNT and PRIVACY_ID_COUNT only), or
  ``count_noise=sampler(...)`` given to the engine (the other metrics keep PipelineDP's
  ``noise_kind``), COUNT and PRIVACY_ID_COUNT get the registered sampler's exact integer noise,
  and so does ``add_dp_noise`` on pre-aggregated integer values. Their budget is requested as
  pure noise (``MechanismType.LAPLACE``, so no δ is charged) from the Naive accountant, and as
  GENERIC from the others (the PLD accountant composes LAPLACE as continuous Laplace noise,
  whose privacy loss distribution is smaller than an integer sampler's at the same ε: at ε = 1
  its δ(0) is 0.39 against 0.46); a count whose contributions are bounded by ℓ₁ (ℓ₀·ℓ∞, or
  ``max_contributions``) uses the sampler at ε/ℓ₁ per count (group privacy and composition of
  pure DP). Bounded samplers (counts in [0, n]) get the true count clamped to [0, n] first,
  which keeps sensitivity 1. Output stays PipelineDP's ``MetricsTuple``, with the counts floats
  as PipelineDP's own (exact integers up to 2^53) and ``count_noise_stddev`` computed from the
  sampler's exact law or its closed form.
- **Central release** (:meth:`DPEngine.release` with a :func:`central_release` spec; histogram
  releasers and every other kind released from label counts): the engine keeps one row per
  privacy unit and counts rows per label, then folds the nonempty bins with the kind's
  :class:`~dpplug.kind.CentralPlan` (a map-reduce over true counts, distributed) and runs the
  plan's private ``finish`` once, centrally. Its budget is GENERIC (ε, and δ for mechanisms with a
  ``delta`` parameter).

**The budget granted.** Every budget dpplug requests is PipelineDP's ``MechanismSpec`` of the
subclass :class:`GrantedBudget`: when the accountant sets it (``compute_budgets``, on the
driver, before any backend runs the pipeline) the plugin is built at that budget and checked.
A granted ε (or δ) above the range the plugin takes is lowered to the top of the range (the
plugin spends less than it was given); one below it is a :class:`~dpplug.errors.BadParameter`;
a plugin whose declared guarantee is larger than its grant (compared exactly,
:func:`dpplug.guarantee.within_budget`) is a :class:`~dpplug.errors.PluginFault`. Both are
raised by ``compute_budgets``, so nothing runs, and the same check is made again where the
mechanism is built on each worker. Under the PLD accountant with δ > 0 the share of a GENERIC
mechanism is the one the accountant composed, √2/σ_base (PipelineDP 0.3.1 hands it that times
the mechanism's normalised weight, which spent 8 times the budget at ``budget_weight=8``).

Specs are small picklable values (a plugin name, its exact parameters and the registry it comes
from); the mechanisms are built lazily where they run, once per process, from the budget
PipelineDP computed, so nothing unpicklable crosses to Beam or Spark workers and nothing is
monkeypatched. Workers must be able to import dpplug and the plugin's package (install them
there). Bad specs raise dpplug errors when they are made, before any pipeline runs. The explain
report names the plugin and its parameters, its header names the sampler that adds the noise
with its ε per count instead of PipelineDP's ``noise_kind`` line, and a ``dpplug budget`` line
shows the (ε, δ) each dpplug mechanism was granted. PipelineDP's Beam, Spark and DataFrame front
ends reach this engine through :mod:`dpplug.adapters.pipelinedp_frontends`.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import os
import tempfile
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, cast

import numpy as np
import numpy.typing as npt
import pipeline_dp
from pipeline_dp import budget_accounting, combiners, dp_computations, report_generator
from pipeline_dp.aggregate_params import MechanismType, Metrics

from dpplug.adapters import pipelinedp_batches as batches
from dpplug.adapters.budget import Placed, check_granted, place
from dpplug.comparison import BEST, best_named
from dpplug.errors import BadData, BadParameter, NotSupported, PluginFault
from dpplug.kind import CentralPlan, Kind, PipelineRole, check_role
from dpplug.kinds import CountingQuerySampler, PartitionSelector, SetUnionSelector
from dpplug.kinds.set_union_selector import canonical_labels, unit_sets
from dpplug.mechanism import Mechanism
from dpplug.plugin_registry import Entry, Registry, resolve_registry
from dpplug.randomness import process_source

#: Parameters PipelineDP's budget accountant and aggregation parameters supply.
_SELECTOR_BUDGET = ("epsilon", "delta", "max_partitions_contributed", "pre_threshold")
_SAMPLER_BUDGET = ("epsilon",)
_CENTRAL_BUDGET = ("epsilon", "delta")
_UNION_BUDGET = ("epsilon", "delta", "max_partitions_contributed")


@dataclass(frozen=True)
class PluginSpec:
    """A registered plugin, the parameters the user fixed, and the registry it comes from
    (``None``: the default registry of the process that builds it); the budget comes later."""

    name: str
    kind: Kind
    params: tuple[tuple[str, Any], ...]
    registry: Registry | None = None

    def build(self, **budget: Any) -> Mechanism:
        """The mechanism with *budget* added, built once per process."""
        return _build(self, tuple(sorted(budget.items())))

    def takes(self, parameter: str) -> bool:
        """Whether the plugin declares *parameter* (e.g. ``delta``, from the budget)."""
        return any(p.name == parameter for p in self.entry().cls.schema)

    def entry(self) -> Entry:
        return resolve_registry(self.registry).get(self.name)

    def call(self) -> str:
        """The plugin's name and the parameters the user fixed, as a call: ``name(k=v, …)``."""
        given = ", ".join(f"{k}={v}" for k, v in self.params)
        return f"{self.name}({given})"

    def describe(self) -> str:
        return f"dpplug plugin {self.call()}"

    @property
    def value(self) -> str:
        """Read by PipelineDP's parameter report for ``noise_kind`` (a sampler spec there)."""
        return self.describe()

    @property
    def is_weighted_gaussian(self) -> bool:
        """Read by PipelineDP's select_partitions to route its weighted Gaussian strategy."""
        return False


@functools.cache
def _build(spec: PluginSpec, budget: tuple[tuple[str, Any], ...]) -> Mechanism:
    return spec.entry().create(**dict(spec.params), **dict(budget))


def _spec(
    name: str,
    role: PipelineRole,
    reserved: tuple[str, ...],
    trial: dict[str, Any],
    params: dict[str, Any],
    plugins: Registry | None,
    what: str,
) -> PluginSpec:
    fixed = sorted(set(params) & set(reserved))
    if fixed:
        raise BadParameter(
            f"{', '.join(fixed)} come(s) from PipelineDP's budget accountant and "
            f"parameters; leave them out of the {name} spec"
        )
    # A best: name is checked with the mechanism it would choose at the trial budget.
    choice = best_named(name, {**params, **trial}, plugins)
    entry = resolve_registry(plugins).get(choice.name if choice else name)
    check_role(entry.kind, role, what)
    spec = PluginSpec(name, entry.kind, tuple(sorted(params.items())), plugins)
    declared = {p.name for p in entry.cls.schema}
    # Validates the parameters now, before any pipeline runs.
    entry.create(**params, **{k: v for k, v in trial.items() if k in declared})
    return spec


def partition_selection(
    name: str, *, registry: Registry | None = None, **params: Any
) -> PluginSpec:
    """A registered partition selector for ``partition_selection_strategy``.

    ε, δ, ``max_partitions_contributed`` and ``pre_threshold`` come from PipelineDP; *params* are
    the selector's others (e.g. ``replace_one``). The plugin comes from *registry* (the default
    registry when ``None``), on every worker too. *name* ``"best"`` is the selector
    :func:`dpplug.compare.best <dpplug.comparison.Compare.best>` ranks first for the budget and
    ``max_partitions_contributed`` PipelineDP grants (public parameters only), chosen when the
    budget is computed and named in the explain report (:func:`chosen`).
    """
    trial = {"epsilon": 1, "delta": Fraction(1, 10**6)}
    return _spec(
        BEST + "partition-selector" if name == "best" else name,
        PipelineRole.PARTITION_SELECTION,
        _SELECTOR_BUDGET,
        trial,
        params,
        registry,
        "partition_selection",
    )


def sampler(name: str, *, registry: Registry | None = None, **params: Any) -> PluginSpec:
    """A registered pure counting-query sampler for COUNT / PRIVACY_ID_COUNT / add_dp_noise noise.

    ε comes from PipelineDP's budget accountant; *params* are the sampler's others (e.g. ``n``).
    """
    spec = _spec(
        name,
        PipelineRole.COUNT_NOISE,
        _SAMPLER_BUDGET,
        {"epsilon": 1},
        params,
        registry,
        "sampler (count noise)",
    )
    if not spec.build(epsilon=1).guarantee.pure:
        raise BadParameter(
            f"{name} is (ε, δ)-DP; count noise needs a pure sampler "
            "(e.g. discrete-laplace or fixedpoint-geometric)"
        )
    return spec


def central_release(name: str, *, registry: Registry | None = None, **params: Any) -> PluginSpec:
    """A registered mechanism released centrally from label counts, for :meth:`DPEngine.release`
    (histogram releasers, and every kind that enters pipelines as a central release).

    ε (and δ, for mechanisms with a ``delta`` parameter) come from PipelineDP's budget
    accountant; *params* are the mechanism's others, e.g. a releaser's public ``universe`` and
    ``n`` (the most privacy units the data may hold).
    """
    trial = {"epsilon": 1, "delta": Fraction(1, 10**6)}
    return _spec(
        name,
        PipelineRole.CENTRAL_RELEASE,
        _CENTRAL_BUDGET,
        trial,
        params,
        registry,
        "central_release",
    )


#: The budget a set union is built with before PipelineDP grants one: to check its parameters
#: and to lay its rounds out.
_UNION_TRIAL = {"epsilon": 1, "delta": Fraction(1, 10**6)}


def set_union(name: str, *, registry: Registry | None = None, **params: Any) -> PluginSpec:
    """A registered set-union selector for ``partition_selection_strategy`` of
    ``select_partitions`` and ``aggregate``: the engine groups rows by privacy unit, bounds each
    unit to ``max_partitions_contributed`` labels (the mechanism's uniform choice), sums the
    units' weights per partition round by round and keeps partitions by the mechanism's
    decisions, all distributed. ε, δ and ``max_partitions_contributed`` come from PipelineDP;
    *params* are the selector's others (e.g. ``rounds``, ``replace_one``)."""
    return _spec(
        name, PipelineRole.SET_UNION, _UNION_BUDGET, _UNION_TRIAL, params, registry, "set_union"
    )


def _laid_out_rounds(spec: PluginSpec, max_partitions: int) -> int:
    """How many rounds the pipeline of *spec* lays out: ``pipeline_rounds`` of its complete
    parameters (the schema's defaults filled in), read from the set union built at the trial
    budget."""
    budget = {k: v for k, v in _UNION_TRIAL.items() if spec.takes(k)}
    trial = spec.build(**budget, max_partitions_contributed=max_partitions)
    return type(trial).pipeline_rounds(trial.params)  # type: ignore[attr-defined, no-any-return]


def _union(spec: PluginSpec, budget: Any, max_partitions: int) -> SetUnionSelector:
    union = granted(
        spec, _exact(budget.eps), _exact(budget.delta), max_partitions_contributed=max_partitions
    )
    return cast(SetUnionSelector, union)


class _LateBudget:
    """The budget granted to a set union, as its workers read it. Spark serialises a
    pipeline's functions when a shuffle after them is defined, which is before
    ``compute_budgets``; set unions decide labels before later shuffles (DP-SIPS's rounds,
    ``aggregate``'s join with the released partitions), so on Spark the driver also writes the
    grant, when it is made, to a file it adds to the context (``SparkContext.addFile``), and a
    worker whose copy of the budget is empty reads it there (``SparkFiles``). Elsewhere (local,
    Beam: functions are serialised when the pipeline runs) the budget itself is read."""

    def __init__(self, budget: Any, published: str | None) -> None:
        self.budget, self.published = budget, published

    @property
    def eps(self) -> float:
        return self._grant()[0]

    @property
    def delta(self) -> float:
        return self._grant()[1]

    def _grant(self) -> tuple[float, float]:
        try:
            return self.budget.eps, self.budget.delta
        except AssertionError:  # PipelineDP's "budget is not calculated yet"
            if self.published is None:
                raise
        from pyspark import SparkFiles

        with open(SparkFiles.get(self.published), encoding="utf-8") as f:
            eps, delta = json.load(f)
        return float(eps), float(delta)


class _GrantedUnion:
    """The set union granted to a pipeline, as its stages call it: built on first use in each
    process, after ``compute_budgets`` (:class:`_LateBudget`), and kept there; only the spec,
    the lazy budget and Δ₀ are pickled."""

    def __init__(self, spec: PluginSpec, budget: _LateBudget, max_partitions: int) -> None:
        self._args = (spec, budget, max_partitions)
        self._built: SetUnionSelector | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_built": None}

    def __call__(self) -> SetUnionSelector:
        if self._built is None:
            self._built = _union(*self._args)
        return self._built


def _grant_union(
    spec: PluginSpec,
    max_partitions: int,
    rounds: int,
    spark: Any,
    published: str | None,
    budget: Any,
) -> None:
    """Build and check the set union at its grant (on the driver): its rounds must be the
    *rounds* its pipeline laid out; on Spark publish the grant to the workers
    (:class:`_LateBudget`)."""
    union = _union(spec, budget, max_partitions)
    granted_rounds = type(union).pipeline_rounds(union.params)
    if granted_rounds != rounds:
        raise PluginFault(
            f"{spec.call()} takes {granted_rounds} round(s) at the budget PipelineDP granted "
            f"(ε={budget.eps:.6g}, δ={budget.delta:.6g}) but {rounds} at the trial budget its "
            "pipeline was laid out with: a set union's rounds must not depend on its budget"
        )
    if published is not None:
        path = os.path.join(tempfile.mkdtemp(prefix="dpplug-"), published)
        with open(path, "w", encoding="utf-8") as f:
            json.dump([budget.eps, budget.delta], f)
        spark.addFile(path)


def _bound_unit(
    make: Callable[[], SetUnionSelector], unit_rows: tuple[Any, Any]
) -> tuple[Any, Any]:
    """(unit, its distinct labels bounded to Δ₀ by the mechanism's uniform choice)."""
    unit, labels = unit_rows
    sets = unit_sets({unit: list(labels)})
    return unit, make().bound(sets[0][1], process_source()) if sets else ()


def _unit_weights(
    make: Callable[[], SetUnionSelector], round_index: int, unit_labels: tuple[Any, Any]
) -> list[tuple[Any, int]]:
    labels = unit_labels[1]
    if not labels:
        return []
    weight = make().round_weight(round_index, len(labels))
    return [(label, weight) for label in labels]


def _decide(
    make: Callable[[], SetUnionSelector], round_index: int, label_total: tuple[Any, int]
) -> tuple[Any, bool]:
    label, total = label_total
    return label, make().round_keep(round_index, int(total), process_source())


def _is_kept(decided: tuple[Any, bool]) -> bool:
    return decided[1]


def _label_unit(unit_labels: tuple[Any, Any]) -> list[tuple[Any, Any]]:
    """(label, ("unit", unit)) for each label of a unit: the unit side of the join."""
    unit, labels = unit_labels
    return [(label, ("unit", unit)) for label in labels]


def _kept_units(label_values: tuple[Any, Any]) -> list[tuple[Any, Any]]:
    """(unit, label) for each unit of a label that was not released (the decision side of the
    join is the label's (label, bool) row)."""
    label, values = label_values
    values = list(values)
    if any(value is True for value in values):
        return []
    return [(value[1], label) for value in values if isinstance(value, tuple)]


def _remaining_sets(
    backend: Any, spark: Any, sets: Any, decided: Any, released: Any, done: int
) -> Any:
    """The (unit, labels) of *sets* without the labels released in round *done*. Spark carries
    the round's released labels, as one set, to the sets where they are: a cartesian product
    of lists of up to ``BATCH`` units (Spark reads the right side once per element of the left)
    with a one-element RDD made from the persisted decisions. Local and Beam join by label: each
    label with its units and its decision, regrouped by unit."""
    if spark is not None:
        one_set = _once(spark, released.coalesce(1).mapPartitions(_as_one_set))
        return sets.mapPartitions(batches.chunks).cartesian(one_set).flatMap(_without_released)
    exploded = backend.flat_map(sets, _label_unit, f"Labels of units ({done})")
    joined = batches.group_by_key(
        backend,
        backend.flatten((exploded, decided), f"With decisions ({done})"),
        f"Join by label ({done})",
    )
    left = backend.flat_map(joined, _kept_units, f"Unreleased labels ({done})")
    regrouped = batches.group_by_key(backend, left, f"Regroup by unit ({done})")
    return backend.map(regrouped, _as_sorted, f"Remaining sets ({done})")


def _as_one_set(labels: Iterable[Any]) -> list[frozenset[Any]]:
    return [frozenset(labels)]


def _without_released(
    units_released: tuple[list[tuple[Any, tuple[Any, ...]]], frozenset[Any]],
) -> Iterator[tuple[Any, tuple[Any, ...]]]:
    """Units with their labels not in the released set (canonical order kept), leaving out
    units whose labels were all released."""
    units, released = units_released
    for unit, labels in units:
        left = tuple(label for label in labels if label not in released)
        if left:
            yield unit, left


def _under_one_key(unit_labels: tuple[Any, Any]) -> tuple[int, tuple[Any, Any]]:
    return 0, unit_labels


def _select_all(make: Callable[[], SetUnionSelector], keyed: tuple[int, Any]) -> list[Any]:
    """The release of a sequential selector from every (unit, labels) pair at once."""
    return make().select({unit: list(labels) for unit, labels in keyed[1]}, process_source())


def _as_sorted(unit_labels: tuple[Any, Any]) -> tuple[Any, tuple[Any, ...]]:
    unit, labels = unit_labels
    return unit, tuple(canonical_labels(set(labels)))


def _per_bin(plan: CentralPlan, public: Any, label_count: tuple[Any, int]) -> tuple[int, Any]:
    return 0, plan.per_bin(public, *label_count)


def _fold(plan: CentralPlan, a: Any, b: Any) -> Any:
    """The plan's combine, with ``None`` (the marker of :func:`_marker`) as its identity."""
    if a is None:
        return b
    if b is None:
        return a
    return plan.combine(a, b)


def _finish(
    spec: PluginSpec, budget: Any, plan: CentralPlan, public: Any, folded: tuple[int, Any]
) -> Any:
    """The private step, once, with the mechanism built from the budget PipelineDP computed."""
    mechanism = _central(spec, budget)
    return plan.finish(mechanism, public, plan.empty if folded[1] is None else folded[1])


def _central(spec: PluginSpec, budget: Any) -> Mechanism:
    """A central release's mechanism at the (ε, δ) PipelineDP granted it."""
    return granted(spec, _exact(budget.eps), _exact(budget.delta))


def _exact(value: float) -> Fraction:
    return Fraction(value)


def _selector(
    spec: PluginSpec, budget: Any, max_partitions: int, pre_threshold: int | None
) -> PartitionSelector:
    epsilon, delta, fixed = _selection_grant(budget, max_partitions, pre_threshold)
    return cast(PartitionSelector, granted(spec, epsilon, delta, **fixed))


def _selection_grant(
    budget: Any, max_partitions: int, pre_threshold: int | None
) -> tuple[Fraction, Fraction, dict[str, int]]:
    """The budget and fixed parameters a selector is granted: (ε, δ, PipelineDP's bounds)."""
    fixed = {"max_partitions_contributed": max_partitions, "pre_threshold": pre_threshold or 1}
    return _exact(budget.eps), _exact(budget.delta), fixed


@functools.cache
def granted(spec: PluginSpec, epsilon: Fraction, delta: Fraction, **fixed: Any) -> Mechanism:
    """The mechanism of *spec* for the budget (*epsilon*, *delta*) PipelineDP granted it, with the
    *fixed* parameters PipelineDP's params supply; built and checked once per process.

    ε, and δ for plugins with a ``delta`` parameter, are placed in the plugin's range
    (:func:`dpplug.adapters.budget.place`): above it, the top of the range; below it,
    :class:`~dpplug.errors.BadParameter`. The built mechanism's guarantee must be within the
    grant, exactly, or it is refused (:func:`dpplug.adapters.budget.check_granted`). A
    ``best:`` spec is first resolved to the mechanism it chooses for this grant (:func:`chosen`).
    """
    spec = chosen(spec, epsilon, delta, **fixed)[0]
    cls = spec.entry().cls
    given: dict[str, Any] = {}
    for parameter, value in (("epsilon", epsilon), ("delta", delta)):
        if not spec.takes(parameter):
            continue
        placed, where = place(cls, parameter, value)
        if where is Placed.BELOW:
            declared = next(p for p in cls.schema if p.name == parameter)
            raise BadParameter(
                f"PipelineDP's budget accountant granted {spec.call()} {parameter} = "
                f"{float(value):.6g}, below the smallest it takes ({declared.range_text()}); "
                "give it a larger share of the budget (a larger total, or budget_weight)"
            )
        given[parameter] = placed
    mechanism = spec.build(**given, **fixed)
    check_granted(mechanism, epsilon, delta, "PipelineDP's budget accountant")
    return mechanism


@functools.cache
def chosen(
    spec: PluginSpec, epsilon: Fraction, delta: Fraction, **fixed: Any
) -> tuple[PluginSpec, str | None]:
    """*spec*, or for a ``best:KIND`` spec the spec of the mechanism that
    :meth:`dpplug.compare.best <dpplug.comparison.Compare.best>` ranks first at this grant and
    the sentence saying why; a function of public parameters, the same in every process."""
    given = {"epsilon": epsilon, "delta": delta, **fixed}
    choice = best_named(spec.name, {**dict(spec.params), **given}, spec.registry)
    if choice is None:
        return spec, None
    own = {k: v for k, v in choice.params.items() if k not in given}
    return PluginSpec(choice.name, spec.kind, tuple(sorted(own.items())), spec.registry), choice.why


class GrantedBudget(budget_accounting.MechanismSpec):
    """PipelineDP's ``MechanismSpec`` of a budget dpplug requested (see the module docstring).

    When the accountant sets the budget (``compute_budgets``, on the driver), the share of a
    GENERIC mechanism under the PLD accountant with δ > 0 is the one the accountant composed
    (:func:`_pld_share`), and the dpplug mechanism is built at the budget and checked
    (:func:`granted`), so a plugin that cannot run within its grant is refused by
    ``compute_budgets`` itself, before any backend runs the pipeline. The accountant and the
    check are not pickled: workers receive the budget alone.
    """

    def set_eps_delta(self, eps: float, delta: float | None) -> None:
        accountant = self.__dict__.get("_dpplug_accountant")
        super().set_eps_delta(*_pld_share(accountant, self.mechanism_type, eps, delta))
        on_grant = self.__dict__.get("_dpplug")
        if on_grant is None:
            return
        try:
            on_grant(self)
        except BaseException:
            self._eps = self._delta = None  # refused: the budget stays unusable
            raise

    def __getstate__(self) -> dict[str, Any]:
        return {
            k: v for k, v in self.__dict__.items() if k not in ("_dpplug", "_dpplug_accountant")
        }


def _pld_share(
    accountant: Any, mechanism_type: MechanismType, eps: float, delta: float | None
) -> tuple[float, float | None]:
    """The (ε, δ) a GENERIC mechanism gets from PipelineDP 0.3.1's PLD accountant, corrected.

    With δ > 0 the accountant searches the base noise σ for which the composition of every
    mechanism is within the budget, and composes each GENERIC one as (√2/σ, √2/σ·δ/ε) whatever
    its weight; it then sets it to that times its normalised weight (over the sensitivity), so a
    mechanism of weight 8 got 8 times what was composed (and one of weight 1/3 a third). Its
    share is what was composed. Other accountants and mechanism types are left as they are."""
    if (
        isinstance(accountant, pipeline_dp.PLDBudgetAccountant)
        and mechanism_type is MechanismType.GENERIC
        and accountant.total_delta > 0
        and accountant.base_noise_std
    ):
        share = math.sqrt(2) / accountant.base_noise_std
        return share, share / accountant.total_epsilon * accountant.total_delta
    return eps, delta


class _Keep:
    """PipelineDP's filter: the row is (partition key, (row count, accumulators)).

    Picklable (the spec, the lazy budget and the bounds); the decision function is built on
    first use in each process, after ``compute_budgets``, and never pickled.
    """

    def __init__(
        self,
        spec: PluginSpec,
        budget: Any,
        max_partitions: int,
        rows_per_unit: int,
        pre_threshold: int | None,
    ) -> None:
        self._args = (spec, budget, max_partitions, pre_threshold)
        self._rows_per_unit = rows_per_unit
        self._decide: Callable[[int], bool] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_decide": None}

    def __call__(self, row: tuple[Any, Any]) -> bool:
        decide = self._decide
        if decide is None:
            decide = self._decide = _selector(*self._args).decider(process_source())
        return decide(-(-row[1][0] // self._rows_per_unit))


class _KeepBatch:
    """Keep decisions for a batch of partitions at once (:func:`~.pipelinedp_batches.per_batch`):
    the selector's vectorised ``select`` on their unit counts, one draw per partition as the
    scalar :class:`_Keep` makes. Picklable like :class:`_Keep`; the selector is built where it
    runs, after ``compute_budgets``."""

    def __init__(
        self,
        spec: PluginSpec,
        budget: Any,
        max_partitions: int,
        rows_per_unit: int,
        pre_threshold: int | None,
    ) -> None:
        self._args = (spec, budget, max_partitions, pre_threshold)
        self._rows_per_unit = rows_per_unit

    def units(self, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Privacy units from row counts: a conservative ⌈rows / rows per unit⌉, as PipelineDP's
        filter estimates them when the units are not in the data."""
        return rows if self._rows_per_unit == 1 else -(-rows // self._rows_per_unit)

    def keep(self, units: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
        return _selector(*self._args).select(units, process_source()).keep

    def __call__(self, batch: list[tuple[Any, int]]) -> list[Any]:
        """The keys kept of a batch of (partition key, rows)."""
        rows = np.fromiter((r for _, r in batch), dtype=np.int64, count=len(batch))
        kept = self.keep(self.units(rows))
        return [key for (key, _), keep in zip(batch, kept.tolist(), strict=True) if keep]


class _ReleaseCounts:
    """COUNT and PRIVACY_ID_COUNT of a batch of partitions at once: the keep decisions
    (:class:`_KeepBatch`), then each count sampler's noise on the kept partitions' counts (its
    vectorised ``sample``), as PipelineDP's ``MetricsTuple`` in PipelineDP's field order. The
    elements are (key, (rows, privacy units)) after contribution bounding, or (key, rows) when
    the contributions were already bounded (COUNT alone then, as PipelineDP allows; the units
    the selection sees are estimated from the rows)."""

    def __init__(self, keep: _KeepBatch, children: list[Any], with_std: bool) -> None:
        self._keep, self._children, self._with_std = keep, children, with_std
        names = []
        for child in children:
            (name,) = child.metrics_names()
            names += [name, f"{name}_noise_stddev"] if with_std else [name]
        self._names = tuple(names)

    def __call__(self, batch: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
        counted = np.array([value for _, value in batch], dtype=np.int64).reshape(len(batch), -1)
        rows = counted[:, 0]
        units = self._keep.units(rows) if counted.shape[1] == 1 else counted[:, 1]
        kept = np.flatnonzero(self._keep.keep(units))
        columns: list[list[Any]] = []
        for child in self._children:
            counts = units if isinstance(child, PluginPrivacyIdCountCombiner) else rows
            mechanism = child.get_mechanism()
            columns.append(mechanism.add_noise(counts[kept]).tolist())
            if self._with_std:
                columns.append([mechanism.std] * kept.size)
        metrics = combiners._get_or_create_named_tuple("MetricsTuple", self._names)
        keys = [batch[i][0] for i in kept.tolist()]
        rows_out = zip(*columns, strict=True)
        return [(key, metrics(*values)) for key, values in zip(keys, rows_out, strict=True)]


class PluginNoise(dp_computations.AdditiveMechanism):
    """A registered pure sampler as PipelineDP's additive noise for counts of ℓ₁ sensitivity."""

    def __init__(self, spec: PluginSpec, epsilon: float, l1_sensitivity: float) -> None:
        if not 0 < l1_sensitivity < math.inf:  # NaN compares false too
            raise BadParameter(
                f"l1_sensitivity must be a positive finite number, got {l1_sensitivity!r}; "
                "bound the contributions (max_partitions_contributed, "
                "max_contributions_per_partition) to at least 1"
            )
        self._spec, self._l1 = spec, l1_sensitivity
        # Pure group privacy: ℓ₁ steps of (ε/ℓ₁, 0) each; the grant per count is (ε/ℓ₁, 0).
        per_count = _exact(epsilon) / Fraction(l1_sensitivity)
        self._sampler = cast(CountingQuerySampler, granted(spec, per_count, Fraction(0)))
        self._epsilon = Fraction(self._sampler.params["epsilon"])

    def add_noise(self, value: Any) -> Any:
        """Noise on integer-valued counts. Every value is first clamped to the sampler's count
        bounds ([0, n] for bounded samplers, ±2^62 otherwise), in its own dtype, so nothing wraps
        around: clamping is 1-Lipschitz, which keeps the sensitivity (and the guarantee). NaN,
        infinities, non-integers and non-numbers are refused before anything is drawn. The noisy
        counts are floats, as PipelineDP's own noise returns them (its DataFrame API declares
        them DoubleType): exact below 2^53, the nearest float beyond (post-processing)."""
        values = np.asarray(value)
        if values.dtype.kind not in "iuf":
            raise BadData(f"{self._spec.name} adds noise to integer counts, got {value!r}")
        if values.dtype.kind == "f" and not (
            np.all(np.isfinite(values)) and np.all(np.mod(values, 1) == 0)
        ):
            raise BadData(
                f"{self._spec.name} adds noise to integer counts; got {value!r}, which has NaN, "
                "an infinity or a fraction: round or filter the values first"
            )
        low, high = self._sampler.count_bounds
        if values.dtype.kind == "u":
            clamped = np.minimum(values, np.uint64(high)).astype(np.int64)
            counts = np.maximum(clamped, low)
        else:
            counts = np.clip(values, low, high).astype(np.int64)
        noisy = self._sampler.sample(counts, process_source()).astype(np.float64)
        return noisy if isinstance(value, np.ndarray) else float(noisy.reshape(-1)[0])

    @property
    def noise_kind(self) -> Any:
        return pipeline_dp.NoiseKind.LAPLACE  # the closest PipelineDP kind, for its reports

    @property
    def noise_parameter(self) -> float:
        return float(self._epsilon)

    @property
    def std(self) -> float:
        """The noise's standard deviation from the sampler's exact law (at a central count)."""
        return _std(self._spec, self._epsilon)

    @property
    def sensitivity(self) -> float:
        return self._l1

    @property
    def spec(self) -> PluginSpec:
        return self._spec

    @property
    def epsilon(self) -> Fraction:
        """The sampler's ε for one count: the budget's ε over the ℓ₁ sensitivity (lowered to the
        top of the sampler's range when it is above it)."""
        return self._epsilon

    def describe(self) -> str:
        return (
            f"{self._spec.describe()} at ε = {float(self._epsilon):.6g} per count "
            f"(l1_sensitivity={self._l1}), {self._sampler.guarantee.describe()}"
        )


@functools.cache
def _std(spec: PluginSpec, epsilon: Fraction) -> float:
    """The standard deviation of the sampler's output around a central count, computed once per
    process (:meth:`~dpplug.kinds.CountingQuerySampler.noise_std`: closed forms for the built-in
    samplers, so a bound n of 2^40 costs no more than a small one)."""
    sampler = cast(CountingQuerySampler, spec.build(epsilon=epsilon))
    return sampler.noise_std(0 if sampler.n is None else sampler.n // 2)


class _PluginCountMixin:
    def __init__(self, spec: Any, params: Any, noise: PluginSpec) -> None:
        super().__init__(spec, params)  # type: ignore[call-arg]
        self._noise = noise

    def create_mechanism(self) -> PluginNoise:
        spec, sensitivities = self.mechanism_spec(), self.sensitivities()  # type: ignore[attr-defined]
        return PluginNoise(self._noise, spec.eps, sensitivities.l1)


class PluginCountCombiner(_PluginCountMixin, combiners.CountCombiner):
    """PipelineDP's COUNT with a dpplug sampler's noise."""


class PluginPrivacyIdCountCombiner(_PluginCountMixin, combiners.PrivacyIdCountCombiner):
    """PipelineDP's PRIVACY_ID_COUNT with a dpplug sampler's noise."""


_COUNT_COMBINERS = {
    Metrics.COUNT: PluginCountCombiner,
    Metrics.PRIVACY_ID_COUNT: PluginPrivacyIdCountCombiner,
}


class DPEngine(pipeline_dp.DPEngine):
    """``pipeline_dp.DPEngine`` that runs dpplug plugins (see the module docstring)."""

    def __init__(
        self, budget_accountant: Any, backend: Any, count_noise: PluginSpec | None = None
    ) -> None:
        super().__init__(budget_accountant, backend)
        if count_noise is not None and (
            not isinstance(count_noise, PluginSpec)
            or count_noise.kind.pipeline_role is not PipelineRole.COUNT_NOISE
        ):
            raise BadParameter("count_noise must be dpplug.adapters.pipelinedp.sampler(...)")
        self._count_noise = count_noise

    def select_partitions(self, col: Any, params: Any, data_extractors: Any) -> Any:
        """PipelineDP's ``select_partitions``: its own checks first, in its order (so every call
        raises what ``pipeline_dp.DPEngine`` raises), then dpplug's check of the strategy."""
        self._check_select_private_partitions(col, params, data_extractors)
        strategy = params.partition_selection_strategy
        _check_strategy(strategy)
        if _is_union(strategy):
            self._report_generators.append(_Report(params, "select_partitions", False))
            return self._set_union(
                col, strategy, params.max_partitions_contributed, data_extractors
            )
        return super().select_partitions(col=col, params=params, data_extractors=data_extractors)

    def aggregate(
        self,
        col: Any,
        params: Any,
        data_extractors: Any,
        public_partitions: Any = None,
        out_explain_computation_report: Any = None,
    ) -> Any:
        """PipelineDP's ``aggregate``: its own checks first, in its order, then dpplug's checks
        of the strategy and the count noise (``params.noise_kind`` or the engine's)."""
        self._check_aggregate_params(col, params, data_extractors)
        self._check_budget_accountant_compatibility(
            public_partitions is not None, params.metrics, params.custom_combiners is not None
        )
        strategy = params.partition_selection_strategy
        _check_strategy(strategy)
        noise = self._count_noise_for(params)
        if noise is not None:
            _check_count_noise(noise, params)
        if _is_union(strategy):
            if public_partitions is not None:
                raise BadParameter("a set-union strategy selects partitions: give no public ones")
            if isinstance(self._backend, pipeline_dp.LocalBackend):
                raise NotSupported(
                    "PipelineDP's local backend reads public partitions when the pipeline is "
                    "built, before the budget exists: on it, run select_partitions with the "
                    "set-union strategy, compute_budgets, then aggregate with those partitions "
                    "as public_partitions (Beam and Spark take the strategy in aggregate)"
                )
            self._report_generators.append(_Report(params, "set union", False))
            released = self._set_union(
                col, strategy, params.max_partitions_contributed, data_extractors
            )
            default = pipeline_dp.PartitionSelectionStrategy.TRUNCATED_GEOMETRIC
            params = dataclasses.replace(params, partition_selection_strategy=default)
            public_partitions = released
        return super().aggregate(
            col=col,
            params=params,
            data_extractors=data_extractors,
            public_partitions=public_partitions,
            out_explain_computation_report=out_explain_computation_report,
        )

    def _set_union(
        self, col: Any, spec: PluginSpec, max_partitions: int, data_extractors: Any
    ) -> Any:
        """The partitions a set-union selector releases from *col*, distributed: rows grouped by
        privacy unit once, each unit bounded to Δ₀ labels, then per round the units' weights
        summed per label and each label decided on its own; labels released in a round leave
        the units' sets before the next (DP-SIPS). Its budget is requested as GENERIC."""
        backend = self._backend
        spark = getattr(backend, "_sc", None) if _is_spark(backend) else None
        published = None if spark is None else f"dpplug-grant-{uuid.uuid4().hex}.json"
        cls = spec.entry().cls
        rounds = _laid_out_rounds(spec, max_partitions)
        budget = self._request(
            MechanismType.GENERIC,
            f"SetUnion ({spec.name})",
            functools.partial(_grant_union, spec, max_partitions, rounds, spark, published),
        )
        make = _GrantedUnion(spec, _LateBudget(budget, published), max_partitions)
        self._add_report_stage(functools.partial(_union_report, spec, budget, max_partitions))
        pairs = backend.map(
            col, functools.partial(_unit_and_label, data_extractors), "Extract unit and label"
        )
        units = batches.group_by_key(backend, pairs, "Group by privacy unit")
        if cls.sequential:  # type: ignore[attr-defined]
            # A policy takes the units one after the other: all of them go to one worker.
            together = batches.group_by_key(
                backend, backend.map(units, _under_one_key, "Units under one key"), "All units"
            )
            return backend.flat_map(
                together, functools.partial(_select_all, make), "Sequential set union"
            )
        # A round's sets and decisions are read twice (weights or release, and the join before
        # the next round) unless it is the last: only those are persisted.
        sets = backend.map(units, functools.partial(_bound_unit, make), "Bound each unit")
        sets = _once(spark, sets) if rounds > 1 else sets
        released = []
        for r in range(rounds):
            weighted = backend.flat_map(
                sets, functools.partial(_unit_weights, make, r), f"Weights (round {r + 1})"
            )
            totals = batches.sum_per_key(
                backend, weighted, f"Sum weights per partition (round {r + 1})"
            )
            decided = backend.map(
                totals, functools.partial(_decide, make, r), f"Decide (round {r + 1})"
            )
            decided = _once(spark, decided) if r + 1 < rounds else decided
            kept = backend.filter(decided, _is_kept, f"Released (round {r + 1})")
            released.append(backend.keys(kept, f"Released keys (round {r + 1})"))
            if r + 1 < rounds:
                sets = _remaining_sets(backend, spark, sets, decided, released[-1], r + 1)
                sets = _once(spark, sets) if r + 2 < rounds else sets
        if len(released) == 1:
            return released[0]
        return backend.flatten(released, "Released partitions")

    def _count_noise_for(self, params: Any) -> PluginSpec | None:
        """The sampler that noises COUNT and PRIVACY_ID_COUNT (and ``add_dp_noise``) under
        *params*: ``params.noise_kind`` when it is a :func:`sampler` spec, else the engine's."""
        given = getattr(params, "noise_kind", None)
        if not isinstance(given, PluginSpec):
            return self._count_noise
        check_role(given.kind, PipelineRole.COUNT_NOISE, "noise_kind")
        if self._count_noise is not None:
            raise BadParameter(
                "count noise is given twice, as the engine's count_noise and as "
                "params.noise_kind: give the dpplug sampler in one place"
            )
        return given

    def _add_report_generator(
        self, params: Any, method_name: str, is_public_partition: bool | None = None
    ) -> None:
        self._report_generators.append(_Report(params, method_name, is_public_partition))

    def _request(
        self,
        mechanism_type: MechanismType,
        name: str,
        on_grant: Callable[[Any], Any],
        weight: float = 1,
        report: bool = True,
    ) -> Any:
        """A budget from PipelineDP's accountant for a dpplug mechanism, as a
        :class:`GrantedBudget` that runs *on_grant* (which builds and checks the mechanism) when
        the accountant grants it, and shown in the aggregation's report (*report*)."""
        budget = self._budget_accountant.request_budget(mechanism_type, weight=weight, name=name)
        if type(budget) is budget_accounting.MechanismSpec:  # not a custom accountant's own
            budget.__class__ = GrantedBudget
            budget.__dict__.update(_dpplug_accountant=self._budget_accountant, _dpplug=on_grant)
        if report:
            cast(_Report, self._current_report_generator).add_budget(name, budget)
        return budget

    def _count_noise_type(self) -> MechanismType:
        """LAPLACE (pure: no δ charged) for the Naive accountant, which composes ε alone; GENERIC
        for the others (see the module docstring for why not LAPLACE under PLD)."""
        if isinstance(self._budget_accountant, pipeline_dp.NaiveBudgetAccountant):
            return MechanismType.LAPLACE
        return MechanismType.GENERIC

    def release(self, col: Any, spec: PluginSpec, data_extractors: Any) -> Any:
        """A one-element collection holding what the mechanism of *spec* releases from *col*.

        Each privacy unit keeps one of its rows (sampled per unit, so one unit added or removed
        is one row added or removed, which the mechanism's guarantee covers); the engine counts
        rows per label (``partition_extractor``) and folds the nonempty bins with the kind's
        central plan, and the plan's private step runs once, centrally, with a budget requested
        as GENERIC. The budget is only read in that last step, after PipelineDP has computed it
        (Spark pickles the aggregation's functions as soon as the pipeline is built).
        """
        if not isinstance(spec, PluginSpec):
            raise BadParameter(
                f"release needs dpplug.adapters.pipelinedp.central_release(name, ...), got {spec!r}"
            )
        check_role(spec.kind, PipelineRole.CENTRAL_RELEASE, "DPEngine.release")
        budget = self._request(
            MechanismType.GENERIC,
            f"Central release ({spec.name})",
            functools.partial(_central, spec),
            report=False,
        )
        backend = self._backend
        rows = backend.map(
            col, functools.partial(_unit_and_label, data_extractors), "Extract unit and label"
        )
        one = backend.sample_fixed_per_key(rows, 1, "Keep one row per privacy unit")
        labels = backend.map(one, _first_label, "Label of each unit")
        counts = batches.count_per_element(backend, labels, "Count rows per label")
        plan = spec.kind.central_plan(spec.entry().cls)
        public = plan.public(dict(spec.params), process_source())
        bins = backend.map(counts, functools.partial(_per_bin, plan, public), "Map the bins")
        marker = _marker(backend, col)
        keyed = backend.flatten((bins, marker), "With marker")
        folded = backend.reduce_per_key(keyed, functools.partial(_fold, plan), "Fold the bins")
        finish = functools.partial(_finish, spec, budget, plan, public)
        return backend.map(folded, finish, f"Release ({spec.name})")

    def _select_private_partitions_internal(
        self,
        col: Any,
        max_partitions_contributed: int,
        max_rows_per_privacy_id: int,
        strategy: Any,
        pre_threshold: int | None,
    ) -> Any:
        if not isinstance(strategy, PluginSpec):
            return super()._select_private_partitions_internal(
                col, max_partitions_contributed, max_rows_per_privacy_id, strategy, pre_threshold
            )
        budget = self._selection_budget(strategy, max_partitions_contributed, pre_threshold)
        keep = _Keep(
            strategy, budget, max_partitions_contributed, max_rows_per_privacy_id, pre_threshold
        )
        return self._backend.filter(col, keep, f"Filter private partitions ({strategy.name})")

    def _selection_budget(
        self, strategy: PluginSpec, max_partitions: int, pre_threshold: int | None
    ) -> Any:
        """The selection's budget (GENERIC), requested as PipelineDP requests its own, and its
        stage of the report."""
        budget = self._request(
            MechanismType.GENERIC,
            f"PartitionSelection ({strategy.name})",
            functools.partial(
                _selector, strategy, max_partitions=max_partitions, pre_threshold=pre_threshold
            ),
        )
        self._add_report_stage(
            functools.partial(_selection_report, strategy, budget, max_partitions, pre_threshold)
        )
        return budget

    def _select_partitions(self, col: Any, params: Any, data_extractors: Any) -> Any:
        """PipelineDP's ``select_partitions`` graph, with a dpplug strategy counted and decided
        in batches: the contribution bounding PipelineDP does (at most ℓ₀ distinct partitions per
        privacy unit, :func:`~.pipelinedp_batches.bounded_partitions`), the privacy units of
        each partition counted by the backend (``count_per_element``, instead of an accumulator
        per row merged per key), and the partitions decided a batch at a time
        (:class:`_KeepBatch`)."""
        strategy = params.partition_selection_strategy
        if not isinstance(strategy, PluginSpec):
            return super()._select_partitions(col, params, data_extractors)
        backend, l0 = self._backend, params.max_partitions_contributed
        if params.contribution_bounds_already_enforced:
            keys = backend.map(col, data_extractors.partition_extractor, "Extract partition_key")
            units = batches.count_per_element(backend, keys, "Count privacy units per partition")
        else:
            extract = functools.partial(_unit_and_label, data_extractors)
            units = batches.units_per_partition(backend, col, extract, l0)
        budget = self._selection_budget(strategy, l0, params.pre_threshold)
        keep = _KeepBatch(strategy, budget, l0, 1, params.pre_threshold)
        return batches.per_batch(
            backend, units, keep, f"Select private partitions ({strategy.name})"
        )

    def _aggregate(
        self, col: Any, params: Any, data_extractors: Any, public_partitions: Any
    ) -> Any:
        """PipelineDP's ``aggregate`` graph; when dpplug noises every metric (COUNT and
        PRIVACY_ID_COUNT only) and selects the partitions, the counts are taken by the backend
        and released in batches instead (:meth:`_count_graph`)."""
        if not self._counts_in_batches(params, public_partitions):
            return super()._aggregate(col, params, data_extractors, public_partitions)
        return self._count_graph(col, params, data_extractors)

    def _counts_in_batches(self, params: Any, public_partitions: Any) -> bool:
        """Whether :meth:`_count_graph` computes this aggregation: dpplug's count noise on every
        metric, dpplug's partition selection, no public partitions, and contributions bounded
        already or by PipelineDP's cross- and per-partition bounding."""
        return (
            self._count_noise_for(params) is not None
            and not params.custom_combiners
            and all(m in _COUNT_COMBINERS for m in params.metrics)
            and isinstance(params.partition_selection_strategy, PluginSpec)
            and public_partitions is None
            and not params.public_partitions_already_filtered
            and not params.post_aggregation_thresholding
            and (
                params.contribution_bounds_already_enforced
                or (
                    not params.max_contributions
                    and params.perform_cross_partition_contribution_bounding
                )
            )
        )

    def _count_graph(self, col: Any, params: Any, data_extractors: Any) -> Any:
        """COUNT and PRIVACY_ID_COUNT with dpplug's selection and noise: the rows of each
        (privacy unit, partition) counted by the backend, at most ℓ₀ partitions per unit kept
        with their rows counted up to ℓ∞ (:func:`~.pipelinedp_batches.bounded_contributions`),
        summed per partition, and each batch of partitions selected and noised at once
        (:class:`_ReleaseCounts`). The budgets are requested as PipelineDP requests them (the
        counts' first, then the selection's) and the report has a stage for each step."""
        combiner = self._create_compound_combiner(params)
        backend, strategy = self._backend, params.partition_selection_strategy
        l0, linf = params.max_partitions_contributed, params.max_contributions_per_partition
        report = self._current_report_generator
        if params.contribution_bounds_already_enforced:
            keys = backend.map(col, data_extractors.partition_extractor, "Extract partition_key")
            counted = batches.count_per_element(backend, keys, "Count rows per partition")
            rows_per_unit = params.max_contributions or linf
        else:
            pairs = backend.map(
                col,
                functools.partial(_unit_and_label, data_extractors),
                "Extract (privacy_id, partition_key)",
            )
            per_pair = batches.count_per_element(
                backend, pairs, "Count rows per privacy_id and partition"
            )
            per_unit = backend.map(per_pair, _by_unit, "Rekey to (privacy_id, (partition, rows))")
            grouped = batches.group_by_key(backend, per_unit, "Group by privacy_id")
            bounded = backend.flat_map(
                grouped,
                functools.partial(batches.bounded_contributions, l0, linf),
                "Bound contributions",
            )
            counted = backend.reduce_per_key(bounded, batches.add_pairs, "Sum per partition")
            report.add_stage(
                f"Per-partition contribution bounding: for each privacy_id and each partition, "
                f"count min(actual_contributions_per_partition, {linf}) contributions."
            )
            report.add_stage(
                f"Cross-partition contribution bounding: for each privacy_id randomly select "
                f"max(actual_partition_contributed, {l0}) partitions"
            )
            rows_per_unit = 1
        budget = self._selection_budget(strategy, l0, params.pre_threshold)
        self._add_report_stages(combiner.explain_computation())
        keep = _KeepBatch(strategy, budget, l0, rows_per_unit, params.pre_threshold)
        release = _ReleaseCounts(keep, combiner._combiners, params.output_noise_stddev)
        return batches.per_batch(
            backend, counted, release, f"Select partitions and compute DP counts ({strategy.name})"
        )

    def _create_compound_combiner(self, params: Any) -> Any:
        noise = self._count_noise_for(params)
        noisy = [m for m in params.metrics if m in _COUNT_COMBINERS]
        if noise is None or not noisy:
            return super()._create_compound_combiner(params)
        others = [m for m in params.metrics if m not in _COUNT_COMBINERS]
        children = []
        if others:
            rest = dataclasses.replace(params, metrics=others)
            children = list(super()._create_compound_combiner(rest)._combiners)
            self._current_report_generator.add_others(others, params.noise_kind)
        for metric in noisy:
            l1 = dp_computations.compute_sensitivities(metric, params).l1
            budget = self._request(
                self._count_noise_type(),
                f"{metric} ({noise.name})",
                functools.partial(_plugin_noise, noise, l1=l1),
                weight=params.budget_weight,
            )
            child: Any = _COUNT_COMBINERS[metric](budget, params, noise)
            self._current_report_generator.add_noise(str(metric), child.get_mechanism)
            children.append(child)
        return combiners.CompoundCombiner(children, return_named_tuple=True)

    def _add_dp_noise(self, col: Any, params: Any) -> Any:
        noise = self._count_noise_for(params)
        if noise is None:
            return super()._add_dp_noise(col, params)
        sensitivities = dp_computations.Sensitivities(
            l0=params.l0_sensitivity,
            linf=params.linf_sensitivity,
            l1=params.l1_sensitivity,
            l2=params.l2_sensitivity,
        )
        budget = self._request(
            self._count_noise_type(),
            f"AddDPNoise ({noise.name})",
            functools.partial(_plugin_noise, noise, l1=sensitivities.l1),
        )
        add = functools.partial(
            _add_noise, noise, budget, sensitivities.l1, params.output_noise_stddev
        )
        mechanism = functools.partial(_plugin_noise, noise, budget, sensitivities.l1)
        self._current_report_generator.add_noise("the values", mechanism)
        self._add_report_stage(lambda: f"Adding noise with {mechanism().describe()}")
        return self._backend.map_values(col, add, f"Add noise ({noise.name})")


def _marker(backend: Any, col: Any) -> Any:
    """A one-element collection under the gathering key, so a release happens without data too
    (PipelineDP's Spark backend does not convert lists, so that one is parallelised here)."""
    if isinstance(backend, pipeline_dp.SparkRDDBackend):
        return col.context.parallelize([(0, None)], 1)
    return backend.to_collection([(0, None)], col, "Release even without data")


def _by_unit(unit_partition_rows: tuple[tuple[Any, Any], int]) -> tuple[Any, tuple[Any, int]]:
    (unit, partition), rows = unit_partition_rows
    return unit, (partition, rows)


def _unit_and_label(extractors: Any, row: Any) -> tuple[Any, Any]:
    return extractors.privacy_id_extractor(row), extractors.partition_extractor(row)


def _first_label(unit_rows: tuple[Any, list[Any]]) -> Any:
    return unit_rows[1][0]


def _selection_report(
    spec: PluginSpec, budget: Any, max_partitions: int, pre_threshold: int | None
) -> str:
    selector = _selector(spec, budget, max_partitions, pre_threshold)
    epsilon, delta, fixed = _selection_grant(budget, max_partitions, pre_threshold)
    why = chosen(spec, epsilon, delta, **fixed)[1]
    described = spec.describe() if why is None else f"{spec.name}, chosen as {why}"
    return (
        f"Private partition selection with {described}: "
        f"{selector.guarantee.describe()} [budget ε={budget.eps}, δ={budget.delta}, "
        f"pre_threshold={pre_threshold}]"
    )


def _plugin_noise(noise: PluginSpec, budget: Any, l1: float) -> PluginNoise:
    """The sampler's noise at the budget PipelineDP computed (only read once it has)."""
    return PluginNoise(noise, budget.eps, l1)


def _add_noise(noise: PluginSpec, budget: Any, l1: float, with_std: bool, value: Any) -> Any:
    mechanism = _plugin_noise(noise, budget, l1)
    noisy = mechanism.add_noise(value)
    return pipeline_dp.dp_engine.DpNoiseAdditionResult(noisy, mechanism.std) if with_std else noisy


def _check_count_noise(noise: PluginSpec, params: Any) -> None:
    """What dpplug's count noise cannot do with *params* (AggregateParams)."""
    if params.post_aggregation_thresholding:
        raise NotSupported("dpplug count noise does not support post_aggregation_thresholding")
    if not isinstance(params.noise_kind, PluginSpec):
        return  # the engine's count_noise: the other metrics keep PipelineDP's noise_kind
    others = [str(m) for m in params.metrics or () if m not in _COUNT_COMBINERS]
    if others or params.custom_combiners:
        raise BadParameter(
            f"noise_kind={noise.call()} noises COUNT and PRIVACY_ID_COUNT only; compute "
            f"{', '.join(others) or 'custom combiners'} in a separate aggregation with a "
            "PipelineDP noise_kind (LAPLACE or GAUSSIAN)"
        )


class _Report(report_generator.ReportGenerator):
    """PipelineDP's explain-computation report whose header names the dpplug sampler that adds
    the noise, with its ε per count, instead of PipelineDP's ``noise_kind=…`` line (which stays
    for the metrics PipelineDP still noises)."""

    def __init__(self, params: Any, method_name: str, is_public_partition: bool | None) -> None:
        super().__init__(params, method_name, is_public_partition)
        kind = getattr(params, "noise_kind", None)
        self._kind_line = None if kind is None else f"\n noise_kind={kind.value}\n"
        self._noises: list[tuple[str, Callable[[], PluginNoise]]] = []
        self._others = ""
        self._budgets: list[tuple[str, Any]] = []

    def add_noise(self, what: str, mechanism: Callable[[], PluginNoise]) -> None:
        """*mechanism* (built when the report is read, after the budgets are computed) adds the
        noise to *what*."""
        self._noises.append((what, mechanism))

    def add_others(self, metrics: list[Any], kind: Any) -> None:
        self._others = f"; {kind.value} for {', '.join(str(m) for m in metrics)}"

    def add_budget(self, name: str, budget: Any) -> None:
        """*budget* (read when the report is, after the budgets are computed) is a dpplug
        mechanism's, named *name*."""
        self._budgets.append((name, budget))

    def report(self) -> str:
        text = str(super().report())
        if self._budgets:
            text = text.replace(
                "\nComputation graph:", f"\n{self._budget_line()}\nComputation graph:", 1
            )
        if not self._noises or self._kind_line is None:
            return text
        built = [(what, make()) for what, make in self._noises]
        at = ", ".join(f"ε={float(m.epsilon):.6g} per count for {what}" for what, m in built)
        line = f"\n noise: dpplug sampler {built[0][1].spec.call()} at {at}{self._others}\n"
        return text.replace(self._kind_line, line, 1)

    def _budget_line(self) -> str:
        """How the budget was split among the dpplug mechanisms: ε and δ each was granted, and
        which are pure (requested as LAPLACE, so no δ was charged for them)."""
        parts = []
        for name, budget in self._budgets:
            pure = " (pure: no δ charged)" if budget.mechanism_type is MechanismType.LAPLACE else ""
            parts.append(f"{name} ε={budget.eps:.6g}, δ={budget.delta:.6g}{pure}")
        return f" dpplug budget: {'; '.join(parts)}"


def _once(spark: Any, col: Any) -> Any:
    """*col*, computed once however many stages read it. Local and Beam compute each collection
    once; Spark recomputes an RDD's lineage for every stage that reads it, which would re-draw a
    set union's random choices (a unit's bounded labels, a round's keep decisions) so that
    DP-SIPS's later rounds and its release saw different draws: there the RDD is persisted
    (memory, then disk) before it is read twice."""
    if spark is None:
        return col
    from pyspark import StorageLevel

    return col.persist(StorageLevel.MEMORY_AND_DISK)


def _is_spark(backend: Any) -> bool:
    return type(backend).__name__ == "SparkRDDBackend"


def _is_union(strategy: Any) -> bool:
    return (
        isinstance(strategy, PluginSpec) and strategy.kind.pipeline_role is PipelineRole.SET_UNION
    )


def _union_report(spec: PluginSpec, budget: Any, max_partitions: int) -> str:
    union = _union(spec, budget, max_partitions)
    shown = ", ".join(f"{k}={v}" for k, v in union.derived.items())
    return (
        f"Private set union with {spec.describe()}: {union.guarantee.describe()} [budget "
        f"ε={budget.eps}, δ={budget.delta}; {shown}]"
    )


def _check_strategy(strategy: Any) -> None:
    if _is_union(strategy):
        return
    if isinstance(strategy, PluginSpec):
        check_role(strategy.kind, PipelineRole.PARTITION_SELECTION, "partition_selection_strategy")
        return
    if not isinstance(strategy, pipeline_dp.PartitionSelectionStrategy):
        raise BadParameter(
            f"partition_selection_strategy must be a PipelineDP strategy or "
            f"dpplug.adapters.pipelinedp.partition_selection(...), got {strategy!r}"
        )
