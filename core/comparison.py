"""Which mechanism for a task: every registered mechanism of one kind that accepts the task's
public parameters, built and ranked by the accuracy it declares at the task's β
(README "Which mechanism?", docs/mechanisms.md).

A **task** is a kind and public parameters only: ε, δ, β, n, the universe, ℓ₀ (``l0``), the
number of queries k (``k``), their sparsity m (``m``), and any other parameter a mechanism of the
kind takes (``sampler``, ``length``, …). Each registered mechanism of the kind, built-in or a third
party's, is built with the parameters its schema declares (its defaults for the rest; ``beta``
also sets the β a releaser attaches to its releases) and asked for its declared accuracy at β.
Nothing private is read: the ranking is a function of public parameters and the mechanisms'
declarations, post-processing of nothing, so it can run anywhere and be published.

**What is ranked** (lower is better), the declared bound that holds except with probability β:

- ``sampler``: the error a of one noisy count;
- ``partition-selector``: the unit count from which a partition is kept with probability
  ≥ 1 − β;
- ``histogram-releaser``: the error a of every count of a release at once;
- ``anonymized-histogram-releaser``: the error a of every released count by rank (sorted
  counts); a releaser that declares only its released total is shown apart, not ranked against
  those (and ranked by its total when no mechanism declares sorted counts);
- ``query-releaser``: α, the error of every one of the k answers at once. A query task also
  ranks each histogram releaser used as a query answerer (:class:`~dpplug.HistogramQueries`):
  every m-sparse query answered from one release is within m·a/n, a the release's all-bins
  error, so its α is m·a/n (it needs a universe).

A mechanism that refuses the parameters is listed with its reason; one that fails otherwise is
listed as broken, and neither stops the others. :func:`compare` ranks, ``compare.best`` names
the top mechanism and why (for a caller that must pick one: ``best:`` choices in the adapters),
``compare.sweep`` ranks along one parameter and finds where the top mechanism changes.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from itertools import pairwise
from typing import Any

from gmpy2 import mpq

from dpplug.errors import BadParameter, DpplugError, NotSupported
from dpplug.exact import as_rational
from dpplug.guarantee import Accuracy, Guarantee
from dpplug.kind import Kind, kind_named
from dpplug.kinds import QueryReleaser
from dpplug.kinds.query_releaser.histogram_queries import answer_error
from dpplug.levels import recorded_level
from dpplug.mechanism import Mechanism
from dpplug.param_text import TypedFraction, param_text
from dpplug.param_types import IntegerType
from dpplug.plugin_registry import Entry, Registry, resolve_registry

#: Short names a task may use for the mechanisms' parameters.
ALIASES = {"l0": "max_partitions_contributed", "k": "max_queries", "m": "sparsity"}
#: How a parameter is written in sentences and headers.
SYMBOLS = {
    "epsilon": "ε",
    "delta": "δ",
    "beta": "β",
    "max_partitions_contributed": "ℓ₀",
    "max_queries": "k",
    "sparsity": "m",
}
#: The β a task ranks at unless it gives one.
DEFAULT_BETA = mpq(1, 20)
#: The kind whose releasers a query task also ranks as query answerers.
ANSWERING_KIND = "histogram-releaser"
#: How a row ends up in a comparison.
RANKED, APART, REFUSED, BROKEN = "ranked", "not comparable", "refused", "broken"
#: Bisection steps that place a crossover between two sweep points (rationals: 2 digits).
_REFINE_STEPS = 8


def canonical(name: str) -> str:
    """A task parameter's mechanism name (``l0`` → ``max_partitions_contributed``)."""
    return ALIASES.get(name, name)


def symbol(name: str) -> str:
    """How a parameter is written (``max_partitions_contributed`` → ``ℓ₀``)."""
    return SYMBOLS.get(canonical(name), canonical(name))


def value_text(value: object) -> str:
    """A parameter value for display: as typed, or exact where short (1/20), else 2 digits."""
    if isinstance(value, TypedFraction):
        return value.text
    text = str(param_text(value))
    if len(text) <= (5 if isinstance(value, Fraction) else 10):
        return text
    try:
        return f"{float(as_rational(value)):.2g}"
    except (TypeError, ValueError):
        return text


@dataclass(frozen=True)
class Task:
    """A kind and public parameters (canonical names, :data:`ALIASES` resolved), and the β the
    declared accuracies are compared at."""

    kind: Kind
    params: Mapping[str, object]
    beta: Any

    @classmethod
    def of(cls, kind: str | Kind, params: Mapping[str, object]) -> Task:
        """The task for *kind* with *params* (aliases allowed; ``beta`` defaults to 1/20)."""
        chosen = kind if isinstance(kind, Kind) else kind_named(str(kind))
        canonical_params: dict[str, object] = {}
        for name, value in params.items():
            key = canonical(name)
            if key in canonical_params:
                raise BadParameter(f"{name} is given twice (as {key}); give it once")
            canonical_params[key] = value
        beta = canonical_params.get("beta", DEFAULT_BETA)
        try:
            exact_beta = as_rational(beta)
        except (TypeError, ValueError):
            raise BadParameter(f"beta must be a number in (0, 1), got {beta!r}") from None
        if not 0 < exact_beta < 1:
            raise BadParameter(f"beta must be in (0, 1), got {beta!r}")
        return cls(chosen, canonical_params, exact_beta)

    def with_value(self, name: str, value: object) -> Task:
        """The same task with one parameter changed."""
        return Task.of(self.kind, {**self.params, canonical(name): value})

    def describe(self, swept: str = "") -> str:
        """``partition-selector: ε = 1, δ = 1e-5, ℓ₀ = 10, β = 1/20`` (without the *swept*
        parameter)."""
        given = {**self.params, "beta": self.beta}
        shown = [f"{symbol(k)} = {value_text(v)}" for k, v in given.items() if k != swept]
        return f"{self.kind.name}: {', '.join(shown)}"


@dataclass(frozen=True)
class Measure:
    """A declared accuracy as a ranking value (lower is better), its text, and the group it is
    ranked in ("" for the kind's own measure; rows of another group are shown apart)."""

    value: float
    text: str
    group: str = ""


@dataclass(frozen=True)
class Row:
    """One candidate of a comparison."""

    name: str
    kind: str
    source: str
    status: str
    measure: Measure | None = None
    guarantee: Guarantee | None = None
    accuracy: Accuracy | None = None
    level: str = "unchecked"
    strict_time: bool = False
    params: Mapping[str, object] = field(default_factory=dict)
    #: A histogram releaser ranked as a query answerer (query tasks).
    answerer: bool = False
    note: str = ""
    rank: int | None = None

    @property
    def label(self) -> str:
        """The name, marked when the row is a histogram releaser answering queries."""
        return f"{self.name} (answerer)" if self.answerer else self.name

    @property
    def time(self) -> str:
        """The running-time class: strict (draws fixed by the parameters and the input size) or
        expected."""
        return "strict" if self.strict_time else "expected"

    def as_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "name": self.name,
            "kind": self.kind,
            "answerer": self.answerer,
            "source": self.source,
            "status": self.status,
            "accuracy_text": self.measure.text if self.measure else None,
            "value": self.measure.value if self.measure else None,
            "guarantee": self.guarantee.as_dict() if self.guarantee else None,
            "guarantee_text": self.guarantee.describe() if self.guarantee else None,
            "accuracy": self.accuracy.as_dict() if self.accuracy else None,
            "level": self.level,
            "time": self.time,
            "parameters": {k: param_text(v) for k, v in self.params.items()},
            "note": self.note,
        }


@dataclass(frozen=True)
class Choice:
    """The top-ranked mechanism of a task and why (:meth:`Compare.best`)."""

    name: str
    why: str
    comparison: Comparison

    @property
    def params(self) -> dict[str, object]:
        """The parameters the chosen mechanism was built and ranked with."""
        top = self.comparison.best
        return dict(top.params) if top else {}


@dataclass(frozen=True)
class Comparison:
    """A task's candidates: ranked rows in rank order, then rows shown apart, refused, broken."""

    task: Task
    rows: tuple[Row, ...]

    @property
    def ranked(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.status == RANKED)

    @property
    def best(self) -> Row | None:
        """The top-ranked row, None if no mechanism accepts the task."""
        return self.ranked[0] if self.ranked else None

    @property
    def measured(self) -> str:
        """What the ranking compares, for headers."""
        return MEASURED.get(self.task.kind.name, "declared error a")

    def as_dict(self) -> dict[str, Any]:
        return {
            "task": {
                "kind": self.task.kind.name,
                "parameters": {k: param_text(v) for k, v in self.task.params.items()},
                "beta": str(self.task.beta),
            },
            "ranked_by": self.measured,
            "public_only": PUBLIC_ONLY,
            "rows": [r.as_dict() for r in self.rows],
        }


#: What every comparison says about its inputs.
PUBLIC_ONLY = (
    "ranked from public parameters and declared bounds only: nothing private is read "
    "(post-processing of nothing)"
)
#: What each kind's ranking compares, for headers.
MEASURED = {
    "sampler": "error a of one count",
    "partition-selector": "unit count kept with probability ≥ 1 − β",
    "histogram-releaser": "error a of every count at once",
    "anonymized-histogram-releaser": "error a of every count by rank",
    "query-releaser": "error α of all k answers at once",
}


def _sampler(mechanism: Mechanism, accuracy: Accuracy) -> Measure:
    a = accuracy.per_query.a
    return Measure(a, f"±{a:,}")


def _selector(mechanism: Mechanism, accuracy: Accuracy) -> Measure:
    units = accuracy.threshold + 1
    return Measure(units, f"{units:,} units")


def _histogram(mechanism: Mechanism, accuracy: Accuracy) -> Measure:
    a = accuracy.simultaneous.a
    return Measure(a, f"±{a:,} all bins")


def _anonymized(mechanism: Mechanism, accuracy: Accuracy) -> Measure:
    a, scope = accuracy.simultaneous.a, str(getattr(mechanism, "accuracy_scope", ""))
    if scope == "sorted-counts":
        return Measure(a, f"±{a:,} every rank")
    return Measure(a, f"±{a:,} ({scope} only)", group=scope or "other")


def _alpha(alpha: Fraction) -> Measure:
    return Measure(float(alpha), f"α {float(alpha):.2g}")


def _queries(mechanism: Mechanism, accuracy: Accuracy) -> Measure:
    assert isinstance(mechanism, QueryReleaser)  # the registry checks every entry's kind
    return _alpha(Fraction(accuracy.simultaneous.a, mechanism.n * mechanism.workload.grid))


#: Each kind's measure of a mechanism's declared accuracy (unknown kinds: all-at-once a).
MEASURES: dict[str, Callable[[Mechanism, Accuracy], Measure]] = {
    "sampler": _sampler,
    "partition-selector": _selector,
    "histogram-releaser": _histogram,
    "anonymized-histogram-releaser": _anonymized,
    "query-releaser": _queries,
}


def _answering(task: Task) -> Callable[[Mechanism, Accuracy], Measure]:
    """A histogram releaser's measure as a query answerer: α = m·a/n with the task's m and n
    (a releaser without n refuses the task before it is measured)."""
    sparsity, n = (_positive(task, name) for name in ("sparsity", "n"))

    def measure(mechanism: Mechanism, accuracy: Accuracy) -> Measure:
        return _alpha(Fraction(answer_error(accuracy.simultaneous.a, sparsity), n))

    return measure


def _positive(task: Task, name: str) -> int:
    """The task's *name* as a positive integer (1 when it is not given: nothing is measured
    then, the releasers need it), or BadParameter."""
    value = task.params.get(name, 1)
    try:
        exact = as_rational(value)
    except (TypeError, ValueError):
        exact = mpq(0)
    if exact.denominator != 1 or exact < 1:
        raise BadParameter(f"{symbol(name)} must be a positive integer, got {value!r}")
    return int(exact)


def _default_measure(mechanism: Mechanism, accuracy: Accuracy) -> Measure:
    a = accuracy.simultaneous.a
    return Measure(a, f"±{a:,}")


def _level(entry: Entry) -> str:
    return recorded_level(entry.name, entry.source.describe(), entry.module) or "unchecked"


def _candidate(
    entry: Entry,
    task: Task,
    measure: Callable[[Mechanism, Accuracy], Measure],
    answerer: bool = False,
) -> Row:
    """Build *entry* with the task's parameters its schema declares and measure it."""
    schema = {p.name: p for p in entry.cls.schema}
    params = {k: v for k, v in task.params.items() if k in schema}
    if "beta" in schema:
        params["beta"] = task.beta
    base = Row(
        entry.name,
        entry.kind.name,
        entry.source.describe(),
        REFUSED,
        level=_level(entry),
        strict_time=bool(entry.cls.strict_time),
        params=params,
        answerer=answerer,
    )
    missing = [name for name, p in schema.items() if p.required and name not in params]
    if missing:
        return replace(base, note="needs " + ", ".join(symbol(m) for m in missing))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            mechanism = entry.create(**params)
            accuracy = mechanism.accuracy(task.beta)
            measured = measure(mechanism, accuracy)
            guarantee = mechanism.guarantee
        except KeyboardInterrupt:
            raise
        except DpplugError as exc:
            return replace(base, note=str(exc))
        except BaseException as exc:  # a plugin bug: listed, never fatal to the comparison
            return replace(base, status=BROKEN, note=f"{type(exc).__name__}: {exc}")
    notes = [str(w.message) for w in caught]
    return replace(
        base,
        status=RANKED,
        measure=measured,
        guarantee=guarantee,
        accuracy=accuracy,
        note=" ".join(notes),
    )


def _rank(task: Task, rows: list[Row]) -> Comparison:
    """Rows in rank order. Measured rows are ranked within one group: the kind's own measure
    (group ""), or, when no mechanism declares it, the first other group; the rest are shown
    apart."""
    order = {RANKED: 0, APART: 1, REFUSED: 2, BROKEN: 3}
    groups = {r.measure.group for r in rows if r.status == RANKED and r.measure}
    ranked_group = min(groups, default="")
    rows = [
        replace(r, status=APART)
        if r.status == RANKED and r.measure and r.measure.group != ranked_group
        else r
        for r in rows
    ]

    def key(row: Row) -> tuple[Any, ...]:
        value = row.measure.value if row.measure else math.inf
        return (order[row.status], value, not row.strict_time, row.label)

    ranked = sorted(rows, key=key)
    numbered = [replace(r, rank=i + 1) if r.status == RANKED else r for i, r in enumerate(ranked)]
    return Comparison(task, tuple(numbered))


class Compare:
    """``dpplug.compare(kind, **params)``, ``dpplug.compare.best(kind, **params)`` and
    ``dpplug.compare.sweep(kind, parameter, low, high, **params)`` (module docstring)."""

    def __call__(
        self,
        kind: str | Kind,
        *,
        names: Sequence[str] | None = None,
        registry: Registry | None = None,
        **params: object,
    ) -> Comparison:
        """Every registered mechanism of *kind* (or only *names*) ranked for *params*."""
        return compare_task(Task.of(kind, params), names, registry)

    def best(
        self, kind: str | Kind, *, registry: Registry | None = None, **params: object
    ) -> Choice:
        """The top-ranked mechanism for these public parameters, and why; NotSupported (with
        every candidate's reason) when no mechanism of the kind accepts them."""
        comparison = compare_task(Task.of(kind, params), None, registry)
        top = comparison.best
        if top is None:
            reasons = "; ".join(f"{r.label}: {r.note}" for r in comparison.rows)
            raise NotSupported(
                f"no registered {comparison.task.kind.name} accepts "
                f"{comparison.task.describe()}: {reasons}"
            )
        return Choice(top.name, why(comparison), comparison)

    def sweep(
        self,
        kind: str | Kind,
        parameter: str,
        low: object,
        high: object,
        *,
        points: int = 9,
        registry: Registry | None = None,
        **params: object,
    ) -> Sweep:
        """Rankings at *points* values of *parameter* from *low* to *high*, and the crossovers
        of the top mechanism between them (:class:`Sweep`)."""
        return sweep_task(Task.of(kind, params), canonical(parameter), low, high, points, registry)


def compare_task(
    task: Task, names: Sequence[str] | None = None, registry_: Registry | None = None
) -> Comparison:
    """The ranking of *task*'s kind's mechanisms (only *names* if given)."""
    chosen = resolve_registry(registry_)
    wanted = set(names) if names is not None else None
    measure = MEASURES.get(task.kind.name, _default_measure)
    rows = [
        _candidate(entry, task, measure)
        for entry in chosen.entries(task.kind)
        if wanted is None or entry.name in wanted
    ]
    if task.kind.name == "query-releaser" and "sparsity" in task.params:
        answering = _answering(task)
        rows += [
            _candidate(entry, task, answering, answerer=True)
            for entry in chosen.entries(kind_named(ANSWERING_KIND))
            if wanted is None or entry.name in wanted
        ]
    return _rank(task, rows)


def why(comparison: Comparison) -> str:
    """One sentence on why the top mechanism is ranked first."""
    ranked = comparison.ranked
    top = ranked[0]
    beta = value_text(comparison.task.beta)
    sentence = f"{top.label}: {comparison.measured} {top.measure.text if top.measure else '?'}"
    sentence += f" at β = {beta}"
    if len(ranked) > 1 and ranked[1].measure:
        sentence += f"; next {ranked[1].label} at {ranked[1].measure.text}"
    return sentence


# --- sweeps ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Crossover:
    """Where the top mechanism changes along a swept parameter: *below* wins up to the value
    before *at*, *above* from *at* (integers: exactly, between the sweep points; rationals: to
    two significant digits)."""

    parameter: str
    at: object
    below: str
    above: str
    exact: bool

    def describe(self) -> str:
        """``gaussian-thresholding from ℓ₀ ≥ 4 (optimal-partition-selection below)``."""
        relation = "≥" if self.exact else "≈"
        return (
            f"{self.above} from {symbol(self.parameter)} {relation} {value_text(self.at)} "
            f"({self.below} below)"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "parameter": self.parameter,
            "at": param_text(self.at),
            "below": self.below,
            "above": self.above,
            "exact": self.exact,
            "text": self.describe(),
        }


@dataclass(frozen=True)
class Sweep:
    """Comparisons of one task along one parameter, and the crossovers of the top mechanism."""

    task: Task
    parameter: str
    values: tuple[object, ...]
    comparisons: tuple[Comparison, ...]
    crossovers: tuple[Crossover, ...]

    def series(self) -> dict[str, list[float | None]]:
        """Each ranked mechanism's measure at every value (None where it is not ranked)."""
        labels: dict[str, list[float | None]] = {}
        for i, comparison in enumerate(self.comparisons):
            for row in comparison.ranked:
                line = labels.setdefault(row.label, [None] * len(self.values))
                line[i] = row.measure.value if row.measure else None
        return labels

    def as_dict(self) -> dict[str, Any]:
        return {
            "task": self.comparisons[0].as_dict()["task"] if self.comparisons else None,
            "parameter": self.parameter,
            "values": [param_text(v) for v in self.values],
            "ranked_by": self.comparisons[0].measured if self.comparisons else None,
            "series": self.series(),
            "best": [c.best.label if c.best else None for c in self.comparisons],
            "crossovers": [c.as_dict() for c in self.crossovers],
            "public_only": PUBLIC_ONLY,
        }


def _is_integer(task: Task, parameter: str, registry_: Registry) -> bool:
    """Whether the mechanisms of the kind declare *parameter* as an integer."""
    for entry in registry_.entries(task.kind):
        for p in entry.cls.schema:
            if p.name == parameter:
                return isinstance(p.type, IntegerType)
    return parameter == "n"


def _fraction(value: object) -> Fraction:
    """An exact number as a ``Fraction``."""
    exact = as_rational(value)
    return Fraction(int(exact.numerator), int(exact.denominator))


def _between(low: Fraction, high: Fraction, share: Fraction) -> Fraction:
    """low·(high/low)^share, a point of the geometric scale (floats in the exponent only: it
    chooses where to look)."""
    return Fraction(math.exp(math.log(low) + float(share) * (math.log(high) - math.log(low))))


def _two_digits(value: Fraction) -> Fraction:
    """*value* > 0 rounded to two significant decimal digits."""
    exponent = math.floor(math.log10(value)) - 1
    scale = Fraction(10) ** exponent
    return round(value / scale) * scale


def sweep_values(low: object, high: object, points: int, integer: bool) -> list[object]:
    """*points* values from *low* to *high*: geometric when high/low ≥ 4, else even steps;
    integers rounded and deduplicated, rationals to two significant digits (exact fractions)."""
    lo, hi = _fraction(low), _fraction(high)
    if not 0 < lo < hi:
        raise BadParameter(f"a sweep needs 0 < low < high, got {low}:{high}")
    if points < 2:
        raise BadParameter(f"a sweep needs at least 2 points, got {points}")
    geometric = hi / lo >= 4
    raw = [
        _between(lo, hi, Fraction(i, points - 1))
        if geometric
        else lo + (hi - lo) * Fraction(i, points - 1)
        for i in range(points)
    ]
    raw[0], raw[-1] = lo, hi
    values: list[object] = []
    for v in raw:
        shown: object = round(v) if integer else _two_digits(v)
        if shown not in values:
            values.append(shown)
    return values


def sweep_task(
    task: Task,
    parameter: str,
    low: object,
    high: object,
    points: int = 9,
    registry_: Registry | None = None,
) -> Sweep:
    """:meth:`Compare.sweep` for a :class:`Task`."""
    chosen = resolve_registry(registry_)
    integer = _is_integer(task, parameter, chosen)
    values = sweep_values(low, high, points, integer)
    comparisons = [compare_task(task.with_value(parameter, v), None, chosen) for v in values]
    crossovers = []
    for (v0, c0), (v1, c1) in pairwise(zip(values, comparisons, strict=True)):
        if c0.best is None or c1.best is None or c0.best.label == c1.best.label:
            continue
        at = _refine(task, parameter, v0, v1, c0.best, c1.best, integer, chosen)
        crossovers.append(Crossover(parameter, at, c0.best.label, c1.best.label, integer))
    return Sweep(task, parameter, tuple(values), tuple(comparisons), tuple(crossovers))


def _refine(
    task: Task,
    parameter: str,
    low: object,
    high: object,
    below: Row,
    above: Row,
    integer: bool,
    registry_: Registry,
) -> object:
    """The first value in (low, high] where *above* ranks before *below*, by bisection on the
    two of them alone: integers exactly, rationals on a geometric scale to two digits."""
    names = {below.name, above.name}

    def above_wins(value: object) -> bool:
        comparison = compare_task(task.with_value(parameter, value), sorted(names), registry_)
        top = comparison.best
        return top is not None and top.label == above.label

    if integer:
        lo, hi = int(as_rational(low)), int(as_rational(high))
        while hi - lo > 1:
            middle = (lo + hi) // 2
            lo, hi = (lo, middle) if above_wins(middle) else (middle, hi)
        return hi
    lo_q, hi_q = _fraction(low), _fraction(high)
    for _ in range(_REFINE_STEPS):
        point = _two_digits(_between(lo_q, hi_q, Fraction(1, 2)))
        if not lo_q < point < hi_q:
            break
        lo_q, hi_q = (lo_q, point) if above_wins(point) else (point, hi_q)
    return hi_q


#: ``dpplug.compare``: rank a task's mechanisms; ``.best`` and ``.sweep`` (module docstring).
compare = Compare()

#: A name the adapters read as "the top-ranked mechanism of this kind": ``best:partition-selector``.
BEST = "best:"


def best_named(
    name: str, params: Mapping[str, object], registry: Registry | None = None
) -> Choice | None:
    """For a name ``best:KIND``, the top-ranked mechanism of KIND for *params* (public parameters
    only, so choosing is post-processing of nothing private); ``None`` for any other name."""
    if not name.startswith(BEST):
        return None
    return compare.best(name[len(BEST) :], registry=registry, **params)
