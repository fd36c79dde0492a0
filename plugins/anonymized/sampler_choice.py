"""The parameters the anonymized-histogram releasers share, and their noise: two-sided
geometric noise G(e^ε) on integers (Suresh 2019, §2 and App. A: Pr[Z = z] ∝ e^{−ε|z|}), from any
registered unbounded sampler of that law, built by name in the registry the releaser was created
from.

A sampler qualifies when it takes every integer (no clamping bound n), states a pure guarantee
for counts one apart, and its law at 0 is exactly the two-sided geometric with ratio
α = 1/e^ε̃ for its achieved e^ε̃: Pr[Z = z] = ((1 − α)/(1 + α))·α^{|z|}. The built-in
``discrete-laplace`` does (α a dyadic rational, so e^ε̃ is an exact rational ≤ e^ε).
"""

from __future__ import annotations

from typing import Any

from gmpy2 import mpq

from dpplug.errors import BadParameter
from dpplug.guarantee import COUNT_SENSITIVITY_1
from dpplug.kinds import SAMPLER, CountingQuerySampler
from dpplug.param_types import TEXT
from dpplug.params import Param, probability_param
from dpplug.plugin_registry import Registry

#: The sampler parameter every anonymized releaser shares.
SAMPLER_PARAM = Param(
    "sampler",
    TEXT,
    "Name of any registered unbounded two-sided geometric sampler (the noise G(e^ε)).",
    default="discrete-laplace",
)
#: The failure probability of the accuracy attached to each release.
BETA_PARAM = probability_param(
    "beta",
    "Failure probability of the accuracy attached to each release.",
    high=mpq(1, 2),
    default=mpq(1, 20),
)
_NOT_UNBOUNDED = (
    "{releaser} adds noise to any integer and needs an unbounded pure sampler for counts one "
    "apart; {name} is not one (use discrete-laplace)"
)


def geometric_sampler(
    releaser: str, name: str, epsilon: Any, registry: Registry
) -> CountingQuerySampler:
    """The sampler *name* at *epsilon*, checked to be two-sided geometric noise on all integers
    (see the module docstring); :class:`BadParameter` naming what to pick otherwise."""
    entry = registry.get(name)
    if entry.kind is not SAMPLER or "epsilon" not in {p.name for p in entry.cls.schema}:
        raise BadParameter(
            f"sampler={name!r} is not a counting-query sampler with an epsilon parameter; "
            f"{releaser} needs two-sided geometric noise, e.g. sampler='discrete-laplace'"
        )
    if any(p.name == "n" and p.required for p in entry.cls.schema):
        raise BadParameter(_NOT_UNBOUNDED.format(releaser=releaser, name=name))
    sampler = entry.create(epsilon=epsilon)
    assert isinstance(sampler, CountingQuerySampler)
    guarantee = sampler.guarantee
    if sampler.n is not None or not guarantee.pure or guarantee.neighbouring != COUNT_SENSITIVITY_1:
        raise BadParameter(_NOT_UNBOUNDED.format(releaser=releaser, name=name))
    alpha = 1 / guarantee.exp_epsilon
    law = sampler.pmf(0)
    centre = (1 - alpha) / (1 + alpha)
    if law.tail_ratio != alpha or any(
        law.prob(z) != centre * alpha ** abs(z) for z in (-2, -1, 0, 1, 2)
    ):
        raise BadParameter(
            f"{name}'s noise is not the two-sided geometric G(e^ε) with its own e^ε = "
            f"{guarantee.exp_epsilon}; {releaser} needs that law (use discrete-laplace)"
        )
    return sampler
