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
integers of the metric's shape, data must be in the declared domain (integers in the sampler's
range; a mapping of str to non-negative int), and errors are dpplug errors.

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
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import gmpy2
import opendp.prelude as dp
from gmpy2 import mpfr
from opendp.core import new_queryable
from opendp.mod import OpenDPException, _PartialConstructor

from dpplug.errors import BadData, BadParameter, NotSupported
from dpplug.kind import DataForm, LabelDistance, ReleaseForm
from dpplug.mechanism import Mechanism
from dpplug.params import Schema, param_text, params_from_text
from dpplug.plugin_registry import Registry, registry

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


def _privacy_map(mechanism: Mechanism, distance: Callable[[object], Any]) -> Callable[[Any], Any]:
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
    """
    pure = mechanism.guarantee.pure
    requested = None if pure else mechanism.params.get("delta")
    floor = 0.0 if requested is None else _up(requested)

    def privacy_map(d_in: object) -> Any:
        bound = mechanism.kind.privacy_bound(mechanism, distance(d_in))
        epsilon = _up(bound.epsilon)
        if pure:
            return epsilon
        return epsilon, (max(_up(bound.delta), floor) if bound.delta > 0 else 0.0)

    return privacy_map


@dataclass(frozen=True)
class InputForm:
    """How a measurement's input is declared, in a form that serialises: ``"count"`` (an atom
    domain of integer type ``T``), ``"label-counts"`` (a map domain of str to ``T``, after
    ``then_count_by``) or ``"label-vector"`` (a vector of str labels)."""

    form: str
    T: str | None = None

    def domain_and_metric(self) -> tuple[Any, Any]:
        if self.form == "count" and self.T in INTEGER_TYPES:
            return dp.atom_domain(T=self.T), dp.absolute_distance(T=self.T)
        if self.form == "label-counts" and self.T in INTEGER_TYPES:
            domain = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=self.T))
            return domain, dp.l01inf_distance(dp.absolute_distance(T=self.T))
        if self.form == "label-vector" and self.T is None:
            return dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
        raise BadData(f"cannot rebuild the input form {self.form!r} with T={self.T!r}")


def _count_form(domain: Any, metric: Any) -> InputForm:
    for t in INTEGER_TYPES:
        if domain.type == dp.atom_domain(T=t).type and metric == dp.absolute_distance(T=t):
            return InputForm("count", t)
    raise BadParameter(
        f"a dpplug sampler needs atom_domain(T=...) with absolute_distance of the same integer "
        f"type ({', '.join(INTEGER_TYPES)}); got {domain} with {metric}"
    )


def _count_route(mechanism: Mechanism, domain: Any, metric: Any) -> tuple[Any, InputForm]:
    """One integer in, the kind's release of it out."""
    if domain is None and metric is None:
        domain, metric = dp.atom_domain(T="i64"), dp.absolute_distance(T="i64")
    form = _count_form(domain, metric)

    def function(count: object) -> Any:
        return mechanism.kind.apply(mechanism, _count(count))

    measurement = dp.m.make_user_measurement(
        domain,
        metric,
        _measure(mechanism),
        function,
        _privacy_map(mechanism, _count_distance),
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
        return InputForm("label-vector")
    for t in INTEGER_TYPES:
        counts = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=t))
        if domain == counts and metric == dp.l01inf_distance(dp.absolute_distance(T=t)):
            return InputForm("label-counts", t)
    raise BadParameter(
        f"{what} needs map_domain(atom_domain(T=str), atom_domain(T=int type)) with "
        "l01inf_distance (after then_count_by), or vector_domain(atom_domain(T=str)) with "
        f"symmetric_distance(); got {domain} with {metric}"
    )


def _labels_route(
    mechanism: Mechanism, domain: Any, metric: Any, session: bool = False
) -> tuple[Any, InputForm]:
    """Label counts (or a vector of labels) in, the kind's release of them out (as a Queryable
    for an interactive mechanism, *session*)."""
    if domain is None and metric is None:
        domain = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T="i64"))
        metric = dp.l01inf_distance(dp.absolute_distance(T="i64"))
    form = _label_form(domain, metric, f"{mechanism.name} ({mechanism.kind.name})")
    mechanism.kind.check_labels(mechanism)
    tally = _tally if form.form == "label-vector" else _label_counts

    def function(data: object) -> Any:
        release = mechanism.kind.apply(mechanism, tally(data))
        return _queryable(release) if session else release

    measurement = dp.m.make_user_measurement(
        domain,
        metric,
        _measure(mechanism),
        function,
        _privacy_map(mechanism, _label_distance),
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
        if _count(count) < 0:
            raise BadData(f"counts must be non-negative, got {count} for {label!r}")
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


Route = Callable[[Mechanism, Any, Any], tuple[Any, InputForm]]
#: The measurement each form of data becomes; a kind names its form (``Kind.data_form``).
ROUTES: dict[DataForm, Route] = {
    DataForm.COUNT: _count_route,
    DataForm.LABELS: _labels_route,
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
    """
    _require_features()
    plugins = _registry(registry)
    mechanism = plugins.create(name, **params)
    interactive = mechanism.kind.interactive(mechanism)
    route = (SESSION_ROUTES if interactive else ROUTES).get(mechanism.kind.data_form)
    if route is None:
        what = "interactive " if interactive else ""
        raise NotSupported(f"no OpenDP route for {what}{mechanism.kind.data_form} data ({name})")
    measurement, form = route(mechanism, input_domain, input_metric)
    measurement.dpplug_spec = {
        "plugin": name,
        "params": {k: param_text(v) for k, v in mechanism.params.items() if v is not None},
        "input": {"form": form.form, "T": form.T},
    }
    return measurement


def _registry(given: Registry | None) -> Registry:
    return registry() if given is None else given


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
        form = InputForm(str(form_of["form"]), form_of["T"])
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
    for entry in _registry(registry).entries():
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
    out": the plugin's own schema then applies its default or says which parameter is missing.
    """
    searched = ["epsilon"] if any(p.name == "epsilon" for p in schema) else []
    keyword = [p.name for p in schema if p.name not in searched]

    def constructor(input_domain: Any, input_metric: Any, *args: object, **params: object) -> Any:
        if len(args) > len(searched):
            positional = "only epsilon" if searched else "no parameter"
            raise BadParameter(f"{name} takes {positional} positionally; name the others")
        given = dict(zip(searched, args, strict=False)) | params
        chosen = {k: v for k, v in given.items() if v is not None}
        return make_measurement(name, input_domain, input_metric, registry=registry, **chosen)

    P = inspect.Parameter
    constructor.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [P(p, P.POSITIONAL_OR_KEYWORD) for p in ("input_domain", "input_metric", *searched)]
        + [P(p, P.KEYWORD_ONLY, default=None) for p in keyword]
    )
    constructor.__name__ = "make_dpplug_" + name.replace("-", "_")
    return constructor
