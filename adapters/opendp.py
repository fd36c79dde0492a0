"""Every registered plugin as an OpenDP 0.16 measurement, with no per-plugin glue.

``make_measurement(name, input_domain, input_metric, **params)`` builds the plugin through the
registry and wraps it with OpenDP's ``make_user_measurement``; ``then_measurement(name, **params)``
is the partial form for ``>>`` chains. A plugin installed tomorrow is a measurement the moment it
is registered.

- **Counting-query samplers** take one integer on ``atom_domain(T)`` with ``absolute_distance(T)``
  (T one of i32, i64, u32, u64; OpenDP's ``T=int`` is 32-bit, so the default here is i64) and
  release a noisy integer. Measure: ``max_divergence()`` for pure samplers,
  ``approximate(max_divergence())`` for (ε, δ) ones.
- **Partition selectors** take ``{label: count}`` on ``map_domain(atom_domain(T=str),
  atom_domain(T))`` with ``l01inf_distance(absolute_distance(T))`` (what ``then_count_by``
  produces), or a vector of labels with ``symmetric_distance()`` (each record one unit). They
  release the kept labels in sorted order, or ``{label: noisy count}`` for thresholding
  selectors. Measure: ``approximate(max_divergence())``.

**Privacy maps** come from the plugin's exact guarantee and are rounded up to floats:

- sampler, counts ``s`` apart (its sensitivity) at distance d: group privacy over k = ⌈d/s⌉
  steps, (k·ε, δ·Σ_{i<k} e^{iε});
- selector at (l₀, l₁, l∞) (a vector at distance k is (k, k, k)): each of at most min(l₀, l₁)
  changed partitions moves by at most l∞, so with the per-partition (ε_c, δ_c) and group privacy
  δ_g = δ_c·Σ_{i<l∞} e^{iε_c}, the release is (min(l₁, l₀·l∞)·ε_c, 1 − (1 − δ_g)^{min(l₀, l₁)}).
  This is the add/remove translation of the selector's own relation: OpenDP's distances count
  units added or removed, and a replaced unit is distance 2.
- histogram releaser at symmetric distance k (or l01inf with l₁ = k): the Balcer–Vadhan
  releasers are proved for replacing one row of a dataset of n rows, which changes two counts by
  one; adding or removing a row changes one count by one, a sub-case of that analysis (each
  proof bounds the effect of the changed counts, and of bins entering or leaving the support),
  so the replace-one (ε, δ) also holds for one row added or removed while the dataset has at
  most n rows (the releaser rejects larger data before drawing). Group privacy over k such
  steps (removals first, so every intermediate dataset stays within n rows) gives
  (k·ε, δ·Σ_{i<k} e^{iε}). Releasers with any other relation are refused.

**Histogram releasers** take label data like the selectors (the universe must hold str labels,
e.g. ``text:L`` or ``labels:[…]``) and return ``{label: count}`` in canonical label order, or the
:class:`~dpplug.histograms.CompactHistogram` itself (a function object) for compact releases.
Measure: ``max_divergence()`` or ``approximate(max_divergence())``.

OpenDP does not validate user callbacks, so the adapter does: distances must be non-negative
integers of the metric's shape, data must be in the declared domain (integers in the sampler's
range; a mapping of str to non-negative int), and errors are dpplug errors.

**Features.** ``make_user_measurement`` needs ``"contrib"`` and ``"honest-but-curious"``;
:func:`enable_features` is the one place that enables them, called by every constructor here.
The honest-but-curious promise is what the conformance suite checks for each plugin: the
function is the plugin's own exact sampler and the map its verified guarantee.

**Serialisation.** OpenDP's ``dp.serialize`` cannot rebuild user measurements; :func:`serialize`
writes the plugin name, its exact parameters and the input form, and :func:`deserialize` rebuilds
the measurement through the registry.

Relies on ``opendp.mod._PartialConstructor`` (private), hence the pin ``opendp==0.16.0``.
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Callable, Mapping
from typing import Any

import gmpy2
import numpy as np
import opendp.prelude as dp
from gmpy2 import mpfr, mpq
from opendp.mod import _PartialConstructor

from dpplug.errors import BadData, BadParameter, NotSupported
from dpplug.guarantee import Guarantee, Relation
from dpplug.histograms import CompactHistogram
from dpplug.kinds import (
    CountingQuerySampler,
    HistogramReleaser,
    Mechanism,
    PartitionSelector,
)
from dpplug.params import param_text, params_from_text
from dpplug.registry import Registry, registry

FEATURES = ("contrib", "honest-but-curious")
INTEGER_TYPES = ("i32", "i64", "u32", "u64")


def enable_features() -> None:
    """Enable the OpenDP features user measurements need (the one place dpplug does so)."""
    dp.enable_features(*FEATURES)


def _up(value: Any) -> float:
    """A float ≥ the exact rational *value*."""
    with gmpy2.context(gmpy2.get_context(), precision=53, round=gmpy2.RoundUp):
        return float(mpfr(mpq(value)))


def _ln_up(value: Any) -> float:
    """A float ≥ ln(*value*) for a rational value ≥ 1."""
    with gmpy2.context(gmpy2.get_context(), precision=53, round=gmpy2.RoundUp):
        return float(gmpy2.log(mpfr(mpq(value))))


def _distance(d_in: object, what: str) -> int:
    if isinstance(d_in, bool) or not isinstance(d_in, numbers.Integral) or int(d_in) < 0:
        raise BadParameter(f"{what} must be a non-negative integer distance, got {d_in!r}")
    return int(d_in)


def _group(per: Guarantee, steps: int) -> tuple[Any, Any]:
    """(e^{kε}, δ·Σ_{i<k} e^{iε}): group privacy over k neighbouring steps, exact."""
    L = per.exp_epsilon
    return L**steps, per.delta * sum((L**i for i in range(steps)), mpq(0))


def _measure(guarantee: Guarantee) -> Any:
    return dp.max_divergence() if guarantee.pure else dp.approximate(dp.max_divergence())


def _sampler_map(sampler: CountingQuerySampler) -> Callable[[object], Any]:
    guarantee = sampler.guarantee
    sensitivity = guarantee.neighbouring.sensitivity

    def privacy_map(d_in: object) -> Any:
        steps = -(-_distance(d_in, "d_in") // sensitivity)
        exp_epsilon, delta = _group(guarantee, steps)
        epsilon = _ln_up(exp_epsilon)
        return epsilon if guarantee.pure else (epsilon, _up(delta))

    return privacy_map


def _selector_map(selector: PartitionSelector) -> Callable[[object], Any]:
    per = selector.per_partition

    def privacy_map(d_in: object) -> tuple[float, float]:
        if isinstance(d_in, tuple):
            if len(d_in) != 3:
                raise BadParameter(f"an l01inf distance is (l0, l1, linf), got {d_in!r}")
            l0, l1, linf = (_distance(d, "each of (l0, l1, linf)") for d in d_in)
        else:
            l0 = l1 = linf = _distance(d_in, "d_in")
        changed = min(l0, l1)
        _, delta_group = _group(per, linf)
        epsilon = _ln_up(per.exp_epsilon ** min(l1, l0 * linf))
        return epsilon, _up(1 - (1 - delta_group) ** changed) if changed else 0.0

    return privacy_map


def _integer_type(domain: Any, metric: Any) -> str:
    for t in INTEGER_TYPES:
        atom = str(domain).startswith("AtomDomain(") and f"T={t})" in str(domain)
        if atom and str(metric) == f"AbsoluteDistance({t})":
            return t
    raise BadParameter(
        f"a dpplug sampler needs atom_domain(T=...) with absolute_distance of the same integer "
        f"type ({', '.join(INTEGER_TYPES)}); got {domain} with {metric}"
    )


def _sampler_measurement(sampler: CountingQuerySampler, domain: Any, metric: Any) -> Any:
    domain = dp.atom_domain(T="i64") if domain is None else domain
    metric = dp.absolute_distance(T="i64") if metric is None else metric
    _integer_type(domain, metric)
    measure = _measure(sampler.guarantee)

    def function(count: object) -> int:
        return int(sampler.sample(np.array([_count(count)], dtype=np.int64))[0])

    return dp.m.make_user_measurement(domain, metric, measure, function, _sampler_map(sampler))


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise BadData(f"expected an integer, got {value!r} ({type(value).__name__})")
    return int(value)


def _label_input(domain: Any, metric: Any, what: str) -> tuple[Any, Any, bool]:
    """(domain, metric, counts?) for label data: {label: count} after ``then_count_by`` (the
    default), or a vector of labels; :class:`BadParameter` for anything else."""
    if domain is None and metric is None:
        domain = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T="i64"))
        metric = dp.l01inf_distance(dp.absolute_distance(T="i64"))
    text = f"{domain} {metric}"
    from_vector = (
        text.startswith("VectorDomain(AtomDomain(T=String)") and "SymmetricDistance" in text
    )
    from_counts = text.startswith("MapDomain { key_domain: AtomDomain(T=String)") and any(
        f"value_domain: AtomDomain(T={t}) }} L01InfDistance(AbsoluteDistance({t}))" in text
        for t in INTEGER_TYPES
    )
    if not (from_vector or from_counts):
        raise BadParameter(
            f"{what} needs map_domain(atom_domain(T=str), atom_domain(T=int type)) with "
            "l01inf_distance (after then_count_by), or vector_domain(atom_domain(T=str)) with "
            f"symmetric_distance(); got {domain} with {metric}"
        )
    return domain, metric, from_counts


def _selector_measurement(selector: PartitionSelector, domain: Any, metric: Any) -> Any:
    domain, metric, from_counts = _label_input(domain, metric, "a dpplug partition selector")

    def function(data: object) -> Any:
        counts = _label_counts(data) if from_counts else _tally(data)
        labels = sorted(counts)
        selection = selector.select(np.array([counts[k] for k in labels], dtype=np.int64))
        kept = [label for label, keep in zip(labels, selection.keep, strict=True) if keep]
        if selection.noisy_counts is None:
            return kept
        noisy = dict(zip(labels, selection.noisy_counts.tolist(), strict=True))
        return {label: noisy[label] for label in kept}

    measure = dp.approximate(dp.max_divergence())
    return dp.m.make_user_measurement(domain, metric, measure, function, _selector_map(selector))


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


def _releaser_map(releaser: HistogramReleaser) -> Callable[[object], Any]:
    guarantee = releaser.guarantee
    if guarantee.neighbouring.relation not in (Relation.REPLACE_ONE, Relation.ADD_REMOVE):
        raise NotSupported(
            f"{releaser.name} states its guarantee for {guarantee.neighbouring.describe()}, which "
            f"has no translation to OpenDP's row-level distances"
        )

    def privacy_map(d_in: object) -> Any:
        if isinstance(d_in, tuple):
            if len(d_in) != 3:
                raise BadParameter(f"an l01inf distance is (l0, l1, linf), got {d_in!r}")
            _, steps, _ = (_distance(d, "each of (l0, l1, linf)") for d in d_in)
        else:
            steps = _distance(d_in, "d_in")
        exp_epsilon, delta = _group(guarantee, steps)
        epsilon = _ln_up(exp_epsilon)
        return epsilon if guarantee.pure else (epsilon, _up(delta))

    return privacy_map


def _releaser_measurement(releaser: HistogramReleaser, domain: Any, metric: Any) -> Any:
    if not isinstance(releaser.universe.label(0), str):
        raise BadParameter(
            f"OpenDP's labels are str, but {releaser.name} was built over the universe "
            f"{releaser.universe.spec}; declare a text:L or labels:[…] universe of strings"
        )
    domain, metric, from_counts = _label_input(domain, metric, releaser.name)
    measure = _measure(releaser.guarantee)

    def function(data: object) -> Any:
        counts = _label_counts(data) if from_counts else _tally(data)
        histogram = releaser.release(counts)
        return histogram if isinstance(histogram, CompactHistogram) else histogram.to_dict()

    return dp.m.make_user_measurement(domain, metric, measure, function, _releaser_map(releaser))


def make_measurement(
    name: str,
    input_domain: Any = None,
    input_metric: Any = None,
    *,
    plugins: Registry | None = None,
    **params: object,
) -> Any:
    """The registered plugin *name* with *params* as an OpenDP measurement (see the module doc).

    *plugins* defaults to the installed registry (``dpplug.registry()``).
    """
    enable_features()
    mechanism = (plugins or registry()).create(name, **params)
    measurement = _wrap(mechanism, input_domain, input_metric)
    measurement.dpplug_spec = {
        "plugin": name,
        "params": {k: param_text(v) for k, v in mechanism.params.items() if v is not None},
        "input_domain": str(measurement.input_domain),
        "input_metric": str(measurement.input_metric),
    }
    return measurement


def _wrap(mechanism: Mechanism, domain: Any, metric: Any) -> Any:
    if isinstance(mechanism, CountingQuerySampler):
        return _sampler_measurement(mechanism, domain, metric)
    if isinstance(mechanism, PartitionSelector):
        return _selector_measurement(mechanism, domain, metric)
    if isinstance(mechanism, HistogramReleaser):
        return _releaser_measurement(mechanism, domain, metric)
    raise NotSupported(f"no OpenDP adapter for a {mechanism.kind}")


def then_measurement(name: str, *, plugins: Registry | None = None, **params: object) -> Any:
    """Partial form of :func:`make_measurement` for ``>>`` chains."""
    return _PartialConstructor(
        lambda input_domain, input_metric: make_measurement(
            name, input_domain, input_metric, plugins=plugins, **params
        )
    )


def serialize(measurement: Any) -> str:
    """JSON that :func:`deserialize` turns back into the same measurement."""
    spec = getattr(measurement, "dpplug_spec", None)
    if spec is None:
        raise BadParameter("only measurements built by dpplug.adapters.opendp can be serialised")
    return json.dumps(spec, sort_keys=True)


def _domain_and_metric(spec: Mapping[str, Any]) -> tuple[Any, Any]:
    for t in INTEGER_TYPES:
        if spec["input_domain"].startswith(f"AtomDomain(T={t}"):
            return dp.atom_domain(T=t), dp.absolute_distance(T=t)
        if spec["input_domain"].endswith(f"value_domain: AtomDomain(T={t}) }}"):
            domain = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=t))
            return domain, dp.l01inf_distance(dp.absolute_distance(T=t))
    if spec["input_domain"].startswith("VectorDomain(AtomDomain(T=String)"):
        return dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    raise BadParameter(f"cannot rebuild the input domain {spec['input_domain']}")


def deserialize(text: str, plugins: Registry | None = None) -> Any:
    """The measurement :func:`serialize` described, rebuilt through the registry."""
    spec = json.loads(text)
    params = params_from_text(spec["params"])
    domain, metric = _domain_and_metric(spec)
    return make_measurement(spec["plugin"], domain, metric, plugins=plugins, **params)


def register_context_constructors(plugins: Registry | None = None) -> list[str]:
    """Register ``make_dpplug_<name>`` for every plugin with ``dp.register``, so OpenDP Context
    queries can call ``.dpplug_<name>(**params)``; returns the registered names."""
    enable_features()
    names = []
    for entry in (plugins or registry()).entries():
        constructor_name = "dpplug_" + entry.name.replace("-", "_")

        def constructor(
            input_domain: Any, input_metric: Any, _name: str = entry.name, **params: object
        ) -> Any:
            return make_measurement(_name, input_domain, input_metric, plugins=plugins, **params)

        constructor.__name__ = f"make_{constructor_name}"
        dp.register(constructor, name=constructor_name)
        names.append(constructor_name)
    return names
