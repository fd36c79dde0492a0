"""Mechanisms pickle as their class, registry and parameters, and are rebuilt from them; a
shallow copy shares what the mechanism computed."""

from __future__ import annotations

import copy
import pickle
import warnings
from fractions import Fraction

import numpy as np
import pytest

import dpplug
from dpplug.kinds import CountingQuerySampler
from dpplug.plugin_registry import registry
from dpplug.randomness import SeededSource

CASES = [(entry.name, case) for entry in registry() for case in entry.cls.conformance_cases[:1]]


def _built(name: str, case: dict[str, object]) -> dpplug.Mechanism:
    with warnings.catch_warnings():  # the suite's tiny cases may warn about their accuracy
        warnings.simplefilter("ignore", dpplug.AccuracyWarning)
        return registry().create(name, **case)


@pytest.mark.parametrize(("name", "case"), CASES, ids=[name for name, _ in CASES])
def test_every_builtin_pickles_and_is_rebuilt_from_its_parameters(
    name: str, case: dict[str, object]
) -> None:
    """Caches holding functions (an inverse-CDF sampler's enclosures) made some built-ins
    unpicklable; a mechanism is a function of its parameters, so it is rebuilt from them."""
    mechanism = _built(name, case)
    mechanism.accuracy(Fraction(1, 20))  # fill its caches first
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpplug.AccuracyWarning)
        rebuilt = pickle.loads(pickle.dumps(mechanism))
    assert type(rebuilt) is type(mechanism) and repr(rebuilt) == repr(mechanism)
    assert rebuilt.guarantee == mechanism.guarantee
    assert rebuilt.accuracy(Fraction(1, 20)) == mechanism.accuracy(Fraction(1, 20))
    if isinstance(mechanism, CountingQuerySampler):
        counts = np.arange(min(mechanism.count_bounds[1], 8) + 1, dtype=np.int64)
        same = [m.sample(counts, SeededSource(7)) for m in (mechanism, rebuilt)]
        assert np.array_equal(*same)


def test_a_shallow_copy_shares_the_mechanisms_caches() -> None:
    """An exact release law replays a shallow copy per path: it must not recompute what the
    mechanism already knows (copy.copy, unlike pickling, does not rebuild)."""
    sampler = registry().create("geosample", n=10, epsilon=1)
    sampler.accuracy(Fraction(1, 20))
    copied = copy.copy(sampler)
    assert copied is not sampler and copied.__dict__ == sampler.__dict__
    assert copied._accuracies is sampler._accuracies
