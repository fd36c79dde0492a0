"""Plugins that spend more than they are given and say so honestly: each declares the guarantee
it achieves, which is larger than the budget in its parameters. Every adapter route must refuse
them before any data is touched (tests/adapters/test_*_budget.py).

- ``double-laplace``: ``epsilon=ε`` builds the 2ε discrete Laplace mechanism.
- ``rounded-up-laplace``: e^ε computed as a float and rounded up to the next float (a float
  mistake: it overspends by about 2^-52 of ε).
- ``double-selector`` and ``rounded-up-selector``: the optimal partition selection, at 2ε, and
  with its per-partition e^ε the float just above e^ε.
- ``double-histogram`` and ``rounded-up-histogram``: the basic histogram (a central release),
  its per-count sampler at ε instead of ε/2, and at the rounded-up Laplace.

:func:`registry` loads them next to the built-ins (no entry point: they must never be
installed). Their classes live in this importable module so that the pipelines' pickles of a
spec name them; nothing of theirs runs on a worker, since the adapters refuse them before any
pipeline runs.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from typing import Any

from gmpy2 import mpq

import dpplug
from dpplug.exact import exp_upper
from dpplug.plugins.histograms.basic import BasicHistogramReleaser
from dpplug.plugins.partition.budget import Budget
from dpplug.plugins.partition.optimal import OptimalPartitionSelection
from dpplug.plugins.samplers.discrete_laplace import DiscreteLaplace


def _float_above_exp(epsilon: Any) -> mpq:
    """e^ε as a float, then the next float up: a rational above e^ε by about 2^-52 of it."""
    return mpq(math.nextafter(math.exp(float(epsilon)), math.inf))


class DoubleLaplace(DiscreteLaplace):
    name = "double-laplace"
    summary = "epsilon=ε builds the 2ε discrete Laplace mechanism (and says so)."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.alpha = exp_upper(-2 * self.params["epsilon"], 32)


class RoundedUpLaplace(DiscreteLaplace):
    name = "rounded-up-laplace"
    summary = "Discrete Laplace with e^ε rounded up to a float (and says so)."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.alpha = 1 / _float_above_exp(self.params["epsilon"])


class DoubleSelector(OptimalPartitionSelection):
    name = "double-selector"
    summary = "Optimal partition selection at 2ε (and says so)."

    def _budget(self) -> Budget:
        return Budget.from_params({**self.params, "epsilon": 2 * self.params["epsilon"]})


class RoundedUpSelector(OptimalPartitionSelection):
    name = "rounded-up-selector"
    summary = "Optimal partition selection with e^ε rounded up to a float (and says so)."

    def _budget(self) -> Budget:
        split = Budget.from_params(self.params)
        per = self.params["epsilon"] / split.coordinates
        return dataclasses.replace(split, exp_epsilon=_float_above_exp(per))


class DoubleHistogram(BasicHistogramReleaser):
    name = "double-histogram"
    summary = "Basic histogram with its per-count noise at ε instead of ε/2 (and says so)."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.sampler = DiscreteLaplace(epsilon=self.params["epsilon"])


class RoundedUpHistogram(BasicHistogramReleaser):
    name = "rounded-up-histogram"
    summary = "Basic histogram with its per-count e^(ε/2) rounded up to a float (and says so)."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.sampler = RoundedUpLaplace(epsilon=self.params["epsilon"] / 2)


SAMPLERS = ("double-laplace", "rounded-up-laplace")
SELECTORS = ("double-selector", "rounded-up-selector")
RELEASERS = ("double-histogram", "rounded-up-histogram")


@dpplug.hookimpl
def register_samplers(register: Any) -> None:
    register(DoubleLaplace)
    register(RoundedUpLaplace)


@dpplug.hookimpl
def register_partition_selectors(register: Any) -> None:
    register(DoubleSelector)
    register(RoundedUpSelector)


@dpplug.hookimpl
def register_histogram_releasers(register: Any) -> None:
    register(DoubleHistogram)
    register(RoundedUpHistogram)


def registry() -> dpplug.Registry:
    """The built-ins and these plugins."""
    return dpplug.Registry.load([sys.modules[__name__]], entry_points=False)
