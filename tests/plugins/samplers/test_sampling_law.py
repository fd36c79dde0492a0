"""Every sampler's ``sample`` really draws from its exact pmf (the sampling-law
contract of docs/conformance.md).

Each case draws 200 000 samples at one count with a fixed seed and runs Pearson's chi-square test
against the exact pmf at false-alarm rate 1e-6 (so a correct sampler fails a case with probability
about 1e-6; the seeds are fixed, so the outcome is reproducible). The pmfs themselves are checked
against independent closed forms in the per-sampler test modules. Counts at 0 and n exercise the
clamping. Power check: the same samples must be rejected against slightly perturbed laws: 2 % of
the mass moved onto the output two above the true count (two below at n; total variation below
2 %), and the law of the same sampler at ε·21/20 (every sampler's ε moves its law).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from gmpy2 import mpq

import dpplug
from dpplug.conformance.goodness_of_fit import chi_square_gof

SAMPLES = 200_000
FALSE_ALARM = 1e-6

# (name, params, counts, perturb epsilon too)
CASES = [
    ("geosample", {"n": 30, "epsilon": Fraction(1, 2)}, (0, 30), True),
    ("geosample", {"n": 12, "epsilon": Fraction(1, 8)}, (5,), True),
    ("fastsample", {"n": 20, "epsilon": Fraction(1, 2), "gamma": Fraction(1, 20)}, (0, 20), True),
    ("fixedpoint-geometric", {"n": 40, "epsilon": Fraction(1, 2)}, (0, 40, 17), True),
    ("truncated-geometric", {"epsilon": Fraction(1, 2), "delta": 1e-6, "n": 30}, (0, 30), True),
    ("discrete-laplace", {"epsilon": Fraction(1, 2)}, (0, -7), True),
]
PARAMS = [
    pytest.param(name, params, count, by_eps, id=f"{name}-{i}-c{count}")
    for i, (name, params, counts, by_eps) in enumerate(CASES)
    for count in counts
]


SHARE = mpq(1, 50)


def moved_mass(pmf: dpplug.Pmf, onto: int, share: Any = SHARE) -> dpplug.Pmf:
    """(1 − share)·pmf + share·δ_onto, tails (if any) scaled along with the window."""
    probs = {z: (1 - share) * p for z, p in pmf.items()}
    probs[onto] = probs.get(onto, mpq(0)) + share
    return dpplug.Pmf(probs, tail_ratio=pmf.tail_ratio)


@pytest.mark.parametrize(("name", "params", "count", "by_eps"), PARAMS)
def test_samples_follow_the_pmf_and_the_test_has_power(
    name: str, params: dict[str, Any], count: int, by_eps: bool
) -> None:
    """Not rejected at false alarm 1e-6 against the exact pmf; rejected against perturbations."""
    sampler = dpplug.create(name, **params)
    source = dpplug.SeededSource(20240 + count)
    samples = sampler.sample(np.full(SAMPLES, count, dtype=np.int64), source)
    pmf = sampler.pmf(count)

    result = chi_square_gof(samples, pmf, false_alarm=FALSE_ALARM)
    assert not result.rejected, result
    assert result.dof >= 3 and sum(b.observed for b in result.bins) == SAMPLES

    onto = count + 2 if count + 2 <= pmf.high else count - 2
    perturbed = chi_square_gof(samples, moved_mass(pmf, onto), false_alarm=FALSE_ALARM)
    assert perturbed.rejected, perturbed
    if by_eps:
        other = dpplug.create(name, **{**params, "epsilon": params["epsilon"] * Fraction(21, 20)})
        shifted = chi_square_gof(samples, other.pmf(count), false_alarm=FALSE_ALARM)
        assert shifted.rejected, shifted
