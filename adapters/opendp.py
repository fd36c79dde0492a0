"""Every registered plugin as an OpenDP 0.16 measurement, with no per-plugin or per-kind glue.

``make_measurement(name, input_domain, input_metric, **params)`` builds the plugin through the
registry and wraps it with OpenDP's ``make_user_measurement``; ``then_measurement(name, **params)``
is the partial form for ``>>`` chains. A plugin installed tomorrow is a measurement the moment it
is registered, and so is a mechanism of a new kind: the adapter asks the kind
(:class:`dpplug.kind.Kind`) for the form of data it takes, how it runs on that data and how its
guarantee becomes a privacy map. There is one route per form of data (:data:`ROUTES`):

- :attr:`~dpplug.kind.DataForm.COUNT` (samplers): one integer on ``atom_domain(T)`` with
  ``absolute_distance(T)`` (T one of i32, i64, u32, u64; OpenDP's ``T=int`` is 32-bit, so the
  default here is i64). The privacy map at distance d is the kind's bound for counts d apart.
- :attr:`~dpplug.kind.DataForm.LABELS` (partition selectors, histogram releasers): ``{label:
  count}`` on ``map_domain(atom_domain(T=str), atom_domain(T))`` with
  ``l01inf_distance(absolute_distance(T))`` (what ``then_count_by`` produces, the default), or a
  vector of labels with ``symmetric_distance()`` (each record one row: distance k is
  (l₀, l₁, l∞) = (k, k, k)). The privacy map is the kind's bound at that
  :class:`~dpplug.kind.LabelDistance`, which translates the mechanism's own neighbouring relation
  (``docs/kinds.md`` gives each kind's translation).

An interactive mechanism (``Kind.interactive``: a query releaser's session) takes the same input
forms through :data:`SESSION_ROUTES`; its release is an OpenDP Queryable built with
``new_queryable``, whose queries go to the session, so it works inside OpenDP's compositors and
odometers, which account for its privacy map like any measurement's.

Maps are the kind's rigorous upper bounds on (ε, δ), rounded up to floats, computed in time
logarithmic in the distance, with at least the requested δ reported (:func:`_privacy_map`: it
keeps maps monotone in ε for OpenDP's searches). Measures: ``max_divergence()`` for pure
guarantees, ``approximate(max_divergence())`` otherwise. Each measurement declares its output
type from the kind's release form (:data:`RELEASE_TYPES`), so OpenDP combinators that read a
release, such as ``make_select_private_candidate``'s score, see an ``i64`` or a
``Vec<String>``, not an opaque object. :func:`register_context_constructors` gives the Context
API constructors whose ε, left out, OpenDP solves from the budget. ``docs/opendp.md`` has all
three.

OpenDP does not validate user callbacks, so the adapter does: distances must be non-negative
integers of the metric's shape, and errors are dpplug errors. A measurement is total on its
input domain: the data is projected into what the plugin accepts (a count clamped into its
range; label counts clamped, labels outside a universe dropped, rows past n cut in canonical
order, :class:`LabelBounds`) before it runs, so no release and no error depends on whether the
data fitted.

**Budgets.** A plugin's ``epsilon`` and ``delta`` are its budget: :func:`make_measurement`
refuses a plugin whose declared guarantee exceeds them (exactly,
:func:`dpplug.guarantee.within_budget`) before the measurement exists; ε outside the plugin's
range gives a measurement for OpenDP's searches (:func:`_privacy_map`); a Context constructor
takes a ``delta`` left out from the query's share (:func:`query_share`).

**Consent.** ``make_user_measurement`` needs OpenDP's ``"contrib"`` and ``"honest-but-curious"``
features; the second is OpenDP's explicit opt-in to trusting user code, so it stays the user's
decision: every constructor checks it with OpenDP's ``assert_features`` and, if it is missing,
raises a dpplug error saying how to opt in (:func:`enable_features`, or OpenDP's own
``enable_features``). What the honest-but-curious promise rests on for a dpplug plugin is what
the conformance suite checks: the function is the plugin's own exact sampler and the map its
verified guarantee.

**Serialisation.** OpenDP's ``dp.serialize`` cannot rebuild user measurements; :func:`serialize`
writes the plugin name, its exact parameters and the input form, and :func:`deserialize` rebuilds
the measurement through the registry.

Relies on ``opendp.mod._PartialConstructor`` (private), hence the pin ``opendp==0.16.0``.
"""

from __future__ import annotations

import inspect
import json
import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import gmpy2
import opendp.prelude as dp
from gmpy2 import mpfr
from opendp import context as dp_context
from opendp.core import new_queryable
from opendp.mod import OpenDPException, _PartialConstructor

from dpplug.adapters.budget import Placed, check_granted, place
from dpplug.comparison import best_named
from dpplug.errors import BadData, BadParameter, NotSupported
from dpplug.exact import as_rational
from dpplug.guarantee import Relation
from dpplug.kind import DataForm, LabelDistance, ReleaseForm
from dpplug.kinds.query_releaser.queries import canonical_label
from dpplug.kinds.sampler import UNBOUNDED_COUNT
from dpplug.mechanism import Mechanism
from dpplug.param_text import params_from_text, params_text
from dpplug.params import Schema
from dpplug.plugin_registry import Registry, resolve_registry

FEATURES = ("contrib", "honest-but-curious")
INTEGER_TYPES = ("i32", "i64", "u32", "u64")


def enable_features() -> None:
    """Enable the OpenDP features user measurements need: the user's explicit consent to run
    plugin code inside OpenDP measurements (call it once, as OpenDP's own features are)."""
    dp.enable_features(*FEATURES)


def _require_features() -> None:
    try:
        dp.assert_features(*FEATURES)
    except OpenDPException:
        raise NotSupported(
            "dpplug measurements are OpenDP user measurements, which need OpenDP's "
            '"contrib" and "honest-but-curious" features: opt in with '
            "dpplug.adapters.opendp.enable_features() (or "
            'dp.enable_features("contrib", "honest-but-curious")) before building them'
        ) from None


def _up(value: Any) -> float:
    """The smallest float ≥ *value* (an upper bound from :class:`dpplug.guarantee.LossBound`)."""
    with gmpy2.context(gmpy2.get_context(), precision=53, round=gmpy2.RoundUp):
        return float(mpfr(value))


def _distance(d_in: object, what: str) -> int:
    if isinstance(d_in, bool) or not isinstance(d_in, numbers.Integral) or int(d_in) < 0:
        raise BadParameter(f"{what} must be a non-negative integer distance, got {d_in!r}")
    return int(d_in)


def _measure(mechanism: Mechanism) -> Any:
    return dp.max_divergence() if mechanism.guarantee.pure else dp.approximate(dp.max_divergence())


def _privacy_map(
    mechanism: Mechanism, distance: Callable[[object], Any], placed: Placed = Placed.WITHIN
) -> Callable[[Any], Any]:
    """d_in → the kind's bound at *distance*(d_in), as ε or (ε, δ) rounded up to floats.

    For an approximate mechanism with a ``delta`` parameter (the δ its user asked for), the δ
    reported is max(the kind's bound, that δ). A privacy map may report any upper bound, and the
    maximum of an upper bound and anything else is one, so this is sound; it is what makes the
    map monotone in ε for searches. The δ a mechanism achieves is at most the requested one but
    moves with ε (e^ε is rounded to a grid, thresholds are integers), so with the achieved δ an
    (ε, δ) ``d_out`` is incomparable to some maps (larger ε, smaller δ) and OpenDP's
    ``binary_search_chain`` fails with "unknown ordering". Reported this way, at every distance
    the mechanism's guarantee covers (where its achieved δ is at most the requested one) the δ
    is the requested one whatever ε is, so the map is ordered by ε alone; beyond it the group
    bound exceeds the requested δ and is reported as is. Inputs at distance 0 (a bound of δ = 0)
    still cost (0, 0), so the map stays monotone in the distance (``docs/kinds.md``).

    Where the ε asked for is outside the plugin's range (*placed*, :func:`make_measurement`),
    the map serves OpenDP's searches over ε, which probe every ε from 0 up to 2^49: above the
    range (the plugin built at its top) it reports ε = +∞ at every nonzero distance, still an
    upper bound, telling the search to go lower where a finite value (the most the plugin can
    spend) would make its predicate constant beyond the range and OpenDP's bound search fail
    ("unable to infer bounds"); below the range the measurement releases nothing (it refuses
    every call, whatever the data) and its map is 0, telling the search to go higher.
    """
    pure = mechanism.guarantee.pure
    requested = None if pure else mechanism.params.get("delta")
    floor = 0.0 if requested is None else _up(requested)

    def privacy_map(d_in: object) -> Any:
        bound = mechanism.kind.privacy_bound(mechanism, distance(d_in))
        if placed is Placed.BELOW:
            return 0.0 if pure else (0.0, 0.0)
        epsilon = math.inf if placed is Placed.ABOVE and bound.epsilon > 0 else _up(bound.epsilon)
        if pure:
            return epsilon
        return epsilon, (max(_up(bound.delta), floor) if bound.delta > 0 else 0.0)

    return privacy_map


def _released(
    mechanism: Mechanism, placed: Placed, function: Callable[[Any], Any]
) -> Callable[[Any], Any]:
    """*function*, or for an ε asked below the plugin's range a function that releases nothing
    and says so, the same for every input (:func:`_privacy_map`)."""
    if placed is not Placed.BELOW:
        return function
    epsilon = next(p for p in mechanism.schema if p.name == "epsilon")

    def refuse(data: object) -> Any:
        raise BadParameter(
            f"{mechanism.name} was asked for an ε below its range {epsilon.range_text()}, so "
            "this measurement (which exists for OpenDP's searches over ε, which probe every ε "
            f"from 0) releases nothing; ask for ε in {epsilon.range_text()}"
        )

    return refuse


@dataclass(frozen=True)
class InputForm:
    """How a measurement's input is declared, in a form that serialises: ``"count"`` (an atom
    domain of integer type ``T``), ``"label-counts"`` (a map domain of str to ``T``, after
    ``then_count_by``) or ``"label-vector"`` (a vector of str labels, of a known ``size`` or
    not)."""

    form: str
    T: str | None = None
    size: int | None = None

    def domain_and_metric(self) -> tuple[Any, Any]:
        if self.size is not None and (
            self.form != "label-vector"
            or not isinstance(self.size, int)
            or isinstance(self.size, bool)
            or not 0 <= self.size < 1 << 63
        ):
            raise BadData(f"the input form {self.form!r} has no size {self.size!r}")
        if self.form == "count" and self.T in INTEGER_TYPES:
            return dp.atom_domain(T=self.T), dp.absolute_distance(T=self.T)
        if self.form == "label-counts" and self.T in INTEGER_TYPES:
            domain = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=self.T))
            return domain, dp.l01inf_distance(dp.absolute_distance(T=self.T))
        if self.form == "label-vector" and self.T is None:
            domain = dp.vector_domain(dp.atom_domain(T=str), size=self.size)
            return domain, dp.symmetric_distance()
        if self.form == "unit-label-pairs" and self.T is None:
            return unit_pairs_domain(), UNITS_DISTANCE()
        raise BadData(f"cannot rebuild the input form {self.form!r} with T={self.T!r}")


def _count_form(domain: Any, metric: Any) -> InputForm:
    for t in INTEGER_TYPES:
        if domain.type == dp.atom_domain(T=t).type and metric == dp.absolute_distance(T=t):
            return InputForm("count", t)
    raise BadParameter(
        f"a dpplug sampler needs atom_domain(T=...) with absolute_distance of the same integer "
        f"type ({', '.join(INTEGER_TYPES)}); got {domain} with {metric}"
    )


def _count_route(
    mechanism: Mechanism, domain: Any, metric: Any, placed: Placed
) -> tuple[Any, InputForm]:
    """One integer in, the kind's release of it out. The count is first clamped into the counts
    the mechanism accepts (``count_bounds``: [0, n] for a bounded sampler), so every integer of
    the input domain gets a release: clamping is 1-Lipschitz, so counts d apart stay at most d
    apart and the map holds; the release is post-processing of that stable transformation, and
    whether a count was outside the range is never revealed by an error."""
    if domain is None and metric is None:
        domain, metric = dp.atom_domain(T="i64"), dp.absolute_distance(T="i64")
    form = _count_form(domain, metric)
    low, high = getattr(mechanism, "count_bounds", (-UNBOUNDED_COUNT, UNBOUNDED_COUNT))

    def function(count: object) -> Any:
        return mechanism.kind.apply(mechanism, min(max(_count(count), low), high))

    measurement = dp.m.make_user_measurement(
        domain,
        metric,
        _measure(mechanism),
        _released(mechanism, placed, function),
        _privacy_map(mechanism, _count_distance, placed),
        TO=_release_type(mechanism),
    )
    return measurement, form


def _count_distance(d_in: object) -> int:
    """An absolute distance between counts."""
    return _distance(d_in, "d_in")


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise BadData(f"expected an integer, got {value!r} ({type(value).__name__})")
    return int(value)


def _label_form(domain: Any, metric: Any, what: str) -> InputForm:
    vector = dp.vector_domain(dp.atom_domain(T=str))
    if domain.type == vector.type and metric == dp.symmetric_distance():
        return InputForm("label-vector", size=domain.size)
    for t in INTEGER_TYPES:
        counts = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=t))
        if domain == counts and metric == dp.l01inf_distance(dp.absolute_distance(T=t)):
            return InputForm("label-counts", t)
    raise BadParameter(
        f"{what} needs map_domain(atom_domain(T=str), atom_domain(T=int type)) with "
        "l01inf_distance (after then_count_by), or vector_domain(atom_domain(T=str)) with "
        f"symmetric_distance(); got {domain} with {metric}"
    )


@dataclass(frozen=True)
class LabelBounds:
    """The label data a mechanism accepts, read from its public parameters: labels in its
    ``universe`` (if it declares one) and at most ``n`` rows (if it declares a row bound), each
    count in [0, 2^62]. :meth:`project` maps any label counts into them."""

    universe: Any
    n: int | None

    @classmethod
    def of(cls, mechanism: Mechanism) -> LabelBounds:
        n = getattr(mechanism, "n", None)
        return cls(getattr(mechanism, "universe", None), n if isinstance(n, int) else None)

    def project(self, counts: dict[str, int]) -> dict[str, int]:
        """*counts* with each count clamped into [0, 2^62], labels outside the universe dropped
        and, past n rows, only the first n rows kept in canonical label order (the universe's order,
        or :func:`dpplug.kinds.query_releaser.queries.canonical_label`'s without one). Each step is
        a stable transformation of rows: clamping a count and dropping a label's rows move no pair
        of datasets further apart; keeping the first n rows turns one row added to data of n rows or
        more into nothing or into one row replaced in data of exactly n rows, a neighbour under
        replace-one (which is why :func:`_labels_route` keeps it for replace-one guarantees
        only)."""
        kept = counts
        if self.universe is not None:
            kept = {label: count for label, count in counts.items() if label in self.universe}
        if any(count < 0 or count > UNBOUNDED_COUNT for count in kept.values()):
            kept = {label: min(max(count, 0), UNBOUNDED_COUNT) for label, count in kept.items()}
        if self.n is None or sum(kept.values()) <= self.n:
            return kept
        room, first = self.n, {}
        for label in sorted(kept, key=lambda label: canonical_label(label, self.universe)[0]):
            first[label] = min(kept[label], room)
            room -= first[label]
        return first


def _labels_route(
    mechanism: Mechanism, domain: Any, metric: Any, placed: Placed, session: bool = False
) -> tuple[Any, InputForm]:
    """Label counts (or a vector of labels) in, the kind's release of them out (as a Queryable
    for an interactive mechanism, *session*).

    The data are projected into what the mechanism accepts (:meth:`LabelBounds.project`) before
    it runs, so every input of the domain gets a release. Truncating to n rows is stable only
    under replace-one: for a mechanism with a row bound n whose guarantee is for one row added
    or removed (query releasers), one row added to data of n rows would become two steps, so
    those take only label vectors of a known size of at most n (``vector_domain(...,
    size=N)``, e.g. after OpenDP's ``make_resize``) and refuse other domains here, at
    construction."""
    if domain is None and metric is None:
        domain = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T="i64"))
        metric = dp.l01inf_distance(dp.absolute_distance(T="i64"))
    what = f"{mechanism.name} ({mechanism.kind.name})"
    form = _label_form(domain, metric, what)
    mechanism.kind.check_labels(mechanism)
    bounds = LabelBounds.of(mechanism)
    relation = mechanism.guarantee.neighbouring.relation
    sized = form.size is not None and bounds.n is not None and form.size <= bounds.n
    if bounds.n is not None and relation is not Relation.REPLACE_ONE and not sized:
        raise BadParameter(
            f"{what} is private for one row added or removed in data of at most n = "
            f"{bounds.n} rows, which this input domain ({domain}) does not bound; give it "
            f"label vectors of a known size of at most n: vector_domain(atom_domain(T=str), "
            f"size=N) with symmetric_distance(), e.g. after dp.t.make_resize(..., size=N, "
            f"constant=...) (which OpenDP counts as twice the distance), or build it with a "
            f"larger n"
        )
    tally = _tally if form.form == "label-vector" else _label_counts

    def function(data: object) -> Any:
        release = mechanism.kind.apply(mechanism, bounds.project(tally(data)))
        return _queryable(release) if session else release

    measurement = dp.m.make_user_measurement(
        domain,
        metric,
        _measure(mechanism),
        _released(mechanism, placed, function),
        _privacy_map(mechanism, _label_distance, placed),
        TO=SESSION_TYPE if session else _release_type(mechanism),
    )
    return measurement, form


#: The OpenDP type of each form of release (``TO`` of ``make_user_measurement``).
RELEASE_TYPES: dict[ReleaseForm, str] = {
    ReleaseForm.COUNT: "i64",
    ReleaseForm.LABELS: "Vec<String>",
    ReleaseForm.LABEL_COUNTS: "ExtrinsicObject",
    ReleaseForm.OBJECT: "ExtrinsicObject",
}
#: The OpenDP type of an interactive mechanism's release (a Queryable of its session).
SESSION_TYPE = "ExtrinsicObject"


def _release_type(mechanism: Mechanism) -> str:
    """The OpenDP type of what the kind's ``apply`` releases (:meth:`Kind.release_form`)."""
    return RELEASE_TYPES[mechanism.kind.release_form(mechanism)]


def _queryable(session: Any) -> Any:
    """An interactive release as an OpenDP Queryable (``new_queryable``): each query is passed to
    ``session.answer`` and its answer returned; the session stays inside the Queryable."""

    def transition(query: object, is_internal: bool) -> Any:
        if is_internal:
            raise NotSupported(f"a dpplug session answers user queries only, not {query!r}")
        return session.answer(query)

    return new_queryable(transition)


def _label_distance(d_in: object) -> LabelDistance:
    """An l01inf distance (l0, l1, linf), or a symmetric distance k of label vectors."""
    if isinstance(d_in, tuple):
        if len(d_in) != 3:
            raise BadParameter(f"an l01inf distance is (l0, l1, linf), got {d_in!r}")
        l0, l1, linf = (_distance(d, "each of (l0, l1, linf)") for d in d_in)
        return LabelDistance(l0, l1, linf)
    return LabelDistance.rows(_distance(d_in, "d_in"))


def _label_counts(data: object) -> dict[str, int]:
    if not isinstance(data, Mapping):
        raise BadData(f"expected a mapping label → count, got {type(data).__name__}")
    for label, count in data.items():
        if not isinstance(label, str):
            raise BadData(f"labels must be str, got {label!r}")
        _count(count)
    return {label: int(count) for label, count in data.items()}


def _tally(data: object) -> dict[str, int]:
    if isinstance(data, str | bytes) or not hasattr(data, "__iter__"):
        raise BadData(f"expected a sequence of str labels, got {type(data).__name__}")
    counts: dict[str, int] = {}
    for label in data:  # type: ignore[attr-defined]
        if not isinstance(label, str):
            raise BadData(f"labels must be str, got {label!r}")
        counts[label] = counts.get(label, 0) + 1
    return counts


def unit_pairs_domain() -> Any:
    """The input domain of set-union selectors: a list of (unit, label) pairs, str labels
    (OpenDP has no atom domain of tuples, so a user domain whose members are such lists)."""
    return dp.user_domain("UnitLabelPairs", _is_unit_pairs)


def _is_unit_pairs(value: object) -> bool:
    return isinstance(value, list) and all(
        isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[1], str) for pair in value
    )


def UNITS_DISTANCE() -> Any:  # noqa: N802 (read like OpenDP's metric constructors)
    """The distance of :func:`unit_pairs_domain`: how many privacy units were added or
    removed (all of a unit's pairs at once)."""
    return dp.user_distance("privacy units added or removed")


def _unit_pairs_route(
    mechanism: Mechanism, domain: Any, metric: Any, placed: Placed
) -> tuple[Any, InputForm]:
    """(unit, label) pairs in, the released labels (sorted) out. The distance d_in counts
    privacy units added or removed, each with all its pairs; the kind bounds it by group
    privacy (:meth:`dpplug.kinds.set_union_selector.base.SetUnionSelectorKind.privacy_bound`).
    Every list of pairs of the domain gets a release (a unit's labels beyond Δ₀ are bounded by
    the mechanism itself)."""
    if domain is None and metric is None:
        domain, metric = unit_pairs_domain(), UNITS_DISTANCE()
    if domain != unit_pairs_domain() or metric != UNITS_DISTANCE():
        raise BadParameter(
            f"{mechanism.name} ({mechanism.kind.name}) needs "
            "dpplug.adapters.opendp.unit_pairs_domain() with UNITS_DISTANCE(); got "
            f"{domain} with {metric}"
        )

    def function(data: object) -> Any:
        if not _is_unit_pairs(data):
            raise BadData("expected a list of (unit, str label) pairs")
        return mechanism.kind.apply(mechanism, data)

    measurement = dp.m.make_user_measurement(
        domain,
        metric,
        _measure(mechanism),
        _released(mechanism, placed, function),
        _privacy_map(mechanism, partial(_distance, what="d_in (units)"), placed),
        TO=_release_type(mechanism),
    )
    return measurement, InputForm("unit-label-pairs")


Route = Callable[[Mechanism, Any, Any, Placed], tuple[Any, InputForm]]
#: The measurement each form of data becomes; a kind names its form (``Kind.data_form``).
ROUTES: dict[DataForm, Route] = {
    DataForm.COUNT: _count_route,
    DataForm.LABELS: _labels_route,
    DataForm.UNIT_LABELS: _unit_pairs_route,
}
#: The measurement each form of data becomes for an interactive mechanism
#: (``Kind.interactive``): its release is a session, returned as an OpenDP Queryable.
SESSION_ROUTES: dict[DataForm, Route] = {
    DataForm.LABELS: partial(_labels_route, session=True),
}


def make_measurement(
    name: str,
    input_domain: Any = None,
    input_metric: Any = None,
    *,
    registry: Registry | None = None,
    **params: object,
) -> Any:
    """The registered plugin *name* with *params* as an OpenDP measurement (see the module doc).

    The plugin is created from *registry* (the default registry, ``dpplug.registry()``, when it
    is ``None``). OpenDP's ``contrib`` and ``honest-but-curious`` features must be enabled.

    *name* ``best:KIND`` (``best:partition-selector``) is the mechanism of that kind that
    :func:`dpplug.compare.best <dpplug.comparison.Compare.best>` ranks first for *params*, chosen
    now from public parameters only; ``measurement.dpplug_description`` names it and says why.

    The plugin's guarantee is checked against the ε and δ it was given (its ``epsilon`` and
    ``delta`` parameters, where it has them) exactly, and a plugin that declares more is refused
    (:class:`~dpplug.errors.PluginFault`) before the measurement exists. ε outside the range the
    plugin's schema accepts gives a measurement for OpenDP's searches over ε, which probe far
    beyond any plugin's range (:func:`_privacy_map`): above it, the plugin at the top of its
    range whose map reports ε = +∞; below it (ε = 0 included), a measurement that releases
    nothing, with map 0, whose every call is a :class:`~dpplug.errors.BadParameter`.
    """
    _require_features()
    plugins = resolve_registry(registry)
    choice = best_named(name, params, plugins)
    if choice is not None:
        name, params = choice.name, choice.params
    entry = plugins.get(name)
    built = dict(params)
    placed = Placed.WITHIN
    if "epsilon" in params:
        built["epsilon"], placed = place(entry.cls, "epsilon", params["epsilon"])
        if placed is Placed.BELOW:  # built at the top only for its kind, form and checks
            declared = next(p for p in entry.cls.schema if p.name == "epsilon")
            built["epsilon"] = 1 + declared.low if declared.high is None else declared.high
    mechanism = entry.create(**built)
    declared = {p.name for p in entry.cls.schema}
    check_granted(
        mechanism,
        mechanism.params["epsilon"] if "epsilon" in declared else math.inf,
        (mechanism.params["delta"] or 0) if "delta" in declared else math.inf,
        "its parameters",
    )
    interactive = mechanism.kind.interactive(mechanism)
    route = (SESSION_ROUTES if interactive else ROUTES).get(mechanism.kind.data_form)
    if route is None:
        what = "interactive " if interactive else ""
        raise NotSupported(f"no OpenDP route for {what}{mechanism.kind.data_form} data ({name})")
    measurement, form = route(mechanism, input_domain, input_metric, placed)
    written = dict(mechanism.params)
    if placed is not Placed.WITHIN:  # the ε asked for, so that it is rebuilt the same
        written["epsilon"] = as_rational(params["epsilon"])
    measurement.dpplug_spec = {
        "plugin": name,
        "params": params_text(written),
        "input": {"form": form.form, "T": form.T, "size": form.size},
    }
    measurement.dpplug_description = f"dpplug plugin {name}({_call_text(written)})" + (
        f", the best {mechanism.kind.name} here ({choice.why})" if choice else ""
    )
    return measurement


def _call_text(params: Mapping[str, object]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params_text(params).items())


def then_measurement(name: str, *, registry: Registry | None = None, **params: object) -> Any:
    """Partial form of :func:`make_measurement` for ``>>`` chains."""
    return _PartialConstructor(
        lambda input_domain, input_metric: make_measurement(
            name, input_domain, input_metric, registry=registry, **params
        )
    )


def serialize(measurement: Any) -> str:
    """JSON that :func:`deserialize` turns back into the same measurement."""
    spec = getattr(measurement, "dpplug_spec", None)
    if spec is None:
        raise BadParameter("only measurements built by dpplug.adapters.opendp can be serialised")
    return json.dumps(spec, sort_keys=True)


def deserialize(text: str | bytes, registry: Registry | None = None) -> Any:
    """The measurement :func:`serialize` described, rebuilt through *registry*.

    The text is untrusted: everything in it is validated (the plugin and its parameters by the
    plugin's own schema, the input form against the forms this adapter builds), the guarantee is
    the rebuilt plugin's, never the text's, and anything malformed is :class:`BadData`.
    """
    try:
        spec = json.loads(text)
        if not isinstance(spec, dict) or not isinstance(spec.get("params"), dict):
            raise ValueError("not a dpplug measurement")
        name, given, form_of = spec["plugin"], spec["params"], spec["input"]
        if not isinstance(name, str) or not isinstance(form_of, dict):
            raise ValueError("the plugin name or the input form is malformed")
        if not all(isinstance(v, str | int | bool) for v in given.values()):
            raise ValueError("parameters must be text, integers or booleans")
        reserved = sorted(set(given) & {"registry", "name", "input_domain", "input_metric"})
        if reserved:
            raise ValueError(f"{', '.join(reserved)} cannot be a plugin's parameter")
        form = InputForm(str(form_of["form"]), form_of["T"], form_of.get("size"))
        params = params_from_text(given)
        domain, metric = form.domain_and_metric()
    except (ValueError, KeyError, TypeError, RecursionError, BadParameter) as exc:
        raise BadData(f"cannot read a dpplug measurement from this text: {exc}") from None
    try:
        return make_measurement(name, domain, metric, registry=registry, **params)
    except BadParameter as exc:
        raise BadData(f"the serialised parameters of {name!r} are invalid: {exc}") from None


def register_context_constructors(registry: Registry | None = None) -> list[str]:
    """Register ``make_dpplug_<name>`` for every plugin with ``dp.register``, so OpenDP Context
    queries can call ``.dpplug_<name>(...)``; returns the registered names.

    Each constructor has the signature OpenDP's Context reads (:func:`context_constructor`):
    leave ``epsilon`` out and the Context solves for it from its budget, as for OpenDP's own
    constructors (``query.dpplug_geosample(n=100).release()``, ``query.param()``).
    """
    _require_features()
    names = []
    for entry in resolve_registry(registry).entries():
        constructor = context_constructor(entry.name, entry.cls.schema, registry)
        name = constructor.__name__.removeprefix("make_")
        dp.register(constructor, name=name)
        names.append(name)
    return names


def context_constructor(
    name: str, schema: Schema, registry: Registry | None = None
) -> Callable[..., Any]:
    """``make_dpplug_<name>(input_domain, input_metric, epsilon, *, other parameters)``: the
    plugin *name* as a measurement, with a signature from its *schema* that OpenDP's Context API
    reads to find a missing parameter.

    OpenDP's ``Query`` counts the parameters without a default that the call leaves out; when
    exactly one is missing it wraps the constructor in a ``PartialChain``, which binary-searches
    that one (passed positionally) for the largest value whose map at the query's d_in stays
    within its d_out (ε only, for approximate budgets). Here ``epsilon`` (when the schema has
    one) is that parameter: positional and without a default, since ε is what a budget
    calibrates. Every other parameter is keyword-only with the default ``None``, meaning "left
    out": the plugin's own schema then applies its default or says which parameter is missing,
    except ``delta``, which a query under an (ε, δ) budget takes from the query's share
    (:func:`query_share`, :func:`_with_context_delta`).
    """
    searched = ["epsilon"] if any(p.name == "epsilon" for p in schema) else []
    keyword = [p.name for p in schema if p.name not in searched]

    def constructor(input_domain: Any, input_metric: Any, *args: object, **params: object) -> Any:
        if len(args) > len(searched):
            positional = "only epsilon" if searched else "no parameter"
            raise BadParameter(f"{name} takes {positional} positionally; name the others")
        given = dict(zip(searched, args, strict=False)) | params
        chosen = {k: v for k, v in given.items() if v is not None}

        def make(params: dict[str, object]) -> Any:
            return make_measurement(name, input_domain, input_metric, registry=registry, **params)

        if "delta" in keyword and "delta" not in chosen:
            return _with_context_delta(make, chosen)
        return make(chosen)

    P = inspect.Parameter
    constructor.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [P(p, P.POSITIONAL_OR_KEYWORD) for p in ("input_domain", "input_metric", *searched)]
        + [P(p, P.KEYWORD_ONLY, default=None) for p in keyword]
    )
    constructor.__name__ = "make_dpplug_" + name.replace("-", "_")
    return constructor


#: The code of OpenDP's ``Query.<constructor>(…)`` wrapper, of ``PartialChain.fix`` and of the
#: partial chain ``transformation >> partial`` (``PartialChain.__rrshift__``): where a Context
#: constructor is called from, with the query's distances and the transformation before it.
_QUERY_MAKE = next(
    code
    for code in dp_context.Query.__getattr__.__code__.co_consts
    if inspect.iscode(code) and code.co_name == "make"
)
_PARTIAL_FIX = dp_context.PartialChain.fix.__code__


def _lambda_of(function: Callable[..., Any]) -> Any:
    return next(
        code
        for code in function.__code__.co_consts
        if inspect.iscode(code) and code.co_name == "<lambda>"
    )


#: The partial chains ``transformation >> partial`` builds, each a lambda holding the
#: transformation in the named variable.
_PARTIAL_AFTER = {
    _lambda_of(dp.Transformation.__rshift__): "self",
    _lambda_of(dp_context.PartialChain.__rrshift__): "other",
}


def query_share() -> tuple[Any, Any] | None:
    """(d_in at the constructor's input, d_out) of the OpenDP Context query whose constructor is
    being called, or ``None`` outside a query.

    OpenDP's Context hands its constructors no budget: a query searches one missing parameter
    against its share and compares only ε, so an approximate plugin's δ must come from the share
    itself (the float OpenDP compares the release's map with: a δ typed by hand as the "same"
    decimal can be 1 ulp above it, and the compositor then refuses the release). The share is
    read from the calling frames: ``Query``'s constructor wrapper (its ``self``), or
    ``PartialChain.fix`` (its ``d_in`` and ``d_out``) with the transformation a partial chain
    puts before the constructor (``transformation >> partial``); they call the constructor
    directly or through OpenDP's search (relies on OpenDP 0.16's ``context`` and ``mod``
    modules, pinned)."""
    frame = inspect.currentframe()
    before: Any = None
    try:
        while frame is not None:
            if frame.f_code in _PARTIAL_AFTER and before is None:
                before = frame.f_locals.get(_PARTIAL_AFTER[frame.f_code])
            elif frame.f_code is _QUERY_MAKE:
                query = frame.f_locals.get("self")
                chain = getattr(query, "_chain", None)
                return _after(chain, getattr(query, "_d_in", None)), getattr(query, "_d_out", None)
            elif frame.f_code is _PARTIAL_FIX:
                return _after(before, frame.f_locals.get("d_in")), frame.f_locals.get("d_out")
            frame = frame.f_back
        return None
    finally:
        del frame


def _after(chain: Any, d_in: Any) -> Any:
    """The distance *d_in* becomes through *chain* (a transformation, or a metric space)."""
    return chain.map(d_in) if isinstance(chain, dp.Transformation) and d_in is not None else d_in


def _with_context_delta(make: Callable[[dict[str, object]], Any], params: dict[str, object]) -> Any:
    """The measurement ``make(params)`` with ``delta`` taken from the Context query's share when
    the call leaves it out: the share's δ itself where the measurement's map reports it at the
    query's distance (one step: the map reports the requested δ), else that δ scaled down (a
    few times at most) until the group δ the map reports there is within the share."""
    share = query_share()
    delta = _delta_of(share[1]) if share is not None else None
    if share is None or not delta:
        return make(params)
    d_mid = share[0]
    given = {**params, "delta": delta}
    measurement = make(given)
    for _ in range(_DELTA_TRIES):
        reported = measurement.map(d_mid) if d_mid is not None else None
        if not isinstance(reported, tuple) or reported[1] <= delta:
            break
        given["delta"] = float(given["delta"]) * delta / reported[1] * (1 - 2.0**-20)  # type: ignore[arg-type]
        measurement = make(given)
    return measurement


#: How many times :func:`_with_context_delta` scales δ down.
_DELTA_TRIES = 8


def _delta_of(d_out: object) -> float | None:
    """δ of an (ε, δ) privacy loss; ``None`` for a pure one (or none)."""
    if isinstance(d_out, tuple) and len(d_out) == 2 and isinstance(d_out[1], float):
        return d_out[1]
    return None
