"""Does a mechanism really sample its declared law? Pearson's chi-square goodness-of-fit test
against an exact pmf (the sampling-law contract, :mod:`.sampling_law`).

The bins are the outputs in order, adjacent outputs pooled until each bin expects at least
``min_expected`` samples; a law with geometric tails (the discrete Laplace) puts the mass beyond its
window into the two end bins. The expected counts are exact until the statistic is formed: this is
the only place a probability becomes a float. A sample on an output of probability 0 rejects
outright (statistic ∞, p-value 0), whatever its bin.

The false-alarm rate is the chosen significance level: a correct sampler is rejected with
probability ``false_alarm`` (asymptotically, in the chi-square approximation that
``min_expected`` ≥ 5 justifies).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from gmpy2 import mpq
from scipy.stats import chi2, ncx2

from dpplug.exact import Rat
from dpplug.pmf import Pmf


@dataclass(frozen=True)
class GofBin:
    """Outputs low…high pooled into one bin (``None``: unbounded on that side)."""

    low: int | None
    high: int | None
    observed: int
    expected: float


@dataclass(frozen=True)
class GofResult:
    """Pearson's statistic, its degrees of freedom (bins − 1), p-value and the bins used.

    ``impossible`` counts samples on outputs of probability 0; any makes the test reject.
    """

    statistic: float
    dof: int
    p_value: float
    rejected: bool
    bins: tuple[GofBin, ...]
    impossible: int = 0


@dataclass
class _Cell:
    low: int | None
    high: int | None
    prob: Rat
    observed: int


def _cells(values: np.ndarray[Any, np.dtype[np.int64]], pmf: Pmf) -> tuple[list[_Cell], int]:
    """One cell per output of positive probability, in order (plus the two tails), and the
    number of samples that fell on outputs of probability 0. Only the outputs seen and the
    law's own are visited, so a law whose outputs lie far apart (0 and counts near 2^62) costs
    no more than a compact one."""
    low, high = pmf.low, pmf.high
    outputs, counts = np.unique(values, return_counts=True)
    seen = dict(zip(outputs.tolist(), counts.tolist(), strict=True))
    below = sum(c for v, c in seen.items() if v < low)
    above = sum(c for v, c in seen.items() if v > high)
    impossible = sum(c for v, c in seen.items() if low <= v <= high and pmf.prob(v) == 0)
    cells: list[_Cell] = []
    if pmf.tail_ratio is not None:
        cells.append(_Cell(None, low - 1, pmf.prob(low - 1) / (1 - pmf.tail_ratio), below))
    else:
        impossible += below + above
    cells += [_Cell(z, z, pmf[z], seen.get(z, 0)) for z in pmf if pmf[z] > 0]
    if pmf.tail_ratio is not None:
        cells.append(_Cell(high + 1, None, pmf.prob(high + 1) / (1 - pmf.tail_ratio), above))
    return cells, impossible


def _pool(cells: list[_Cell], size: int, min_expected: Rat) -> list[_Cell]:
    """Merge adjacent cells, left to right, until each expects ≥ min_expected samples; a short
    last bin joins the one before it."""
    bins: list[_Cell] = []
    current: _Cell | None = None
    for cell in cells:
        if current is None:
            current = _Cell(cell.low, cell.high, cell.prob, cell.observed)
        else:
            current.high = cell.high
            current.prob += cell.prob
            current.observed += cell.observed
        if size * current.prob >= min_expected:
            bins.append(current)
            current = None
    if current is not None:
        if bins:
            last = bins[-1]
            last.high, last.prob = current.high, last.prob + current.prob
            last.observed += current.observed
        else:
            bins.append(current)
    return bins


def chi_square_gof(
    samples: object, pmf: Pmf, false_alarm: float = 1e-6, min_expected: float = 5
) -> GofResult:
    """Pearson's chi-square test of integer *samples* against the exact law *pmf*.

    Outcomes whose expected count is below *min_expected* are pooled with their neighbours in
    output order (the tails of an unbounded law go into the end bins). The p-value is
    ``scipy.stats.chi2.sf(statistic, bins − 1)`` and the test rejects when it is below
    *false_alarm*, so a sampler that follows *pmf* is wrongly rejected with probability about
    *false_alarm*. *pmf* must sum to exactly 1.
    """
    values = np.asarray(samples)
    if values.size == 0:
        raise ValueError("chi_square_gof needs at least one sample")
    if values.dtype == object or values.dtype.kind not in "iu":
        raise ValueError(f"samples must be integers, got dtype {values.dtype}")
    values = values.reshape(-1).astype(np.int64)
    if not 0 < false_alarm < 1:
        raise ValueError(f"false_alarm must be in (0, 1), got {false_alarm}")
    if not min_expected > 0:
        raise ValueError(f"min_expected must be positive, got {min_expected}")
    if pmf.total() != 1:
        raise ValueError(f"the pmf sums to {pmf.total()}, not 1")
    cells, impossible = _cells(values, pmf)
    pooled = _pool(cells, values.size, mpq(min_expected))
    bins = tuple(GofBin(b.low, b.high, b.observed, values.size * float(b.prob)) for b in pooled)
    dof = len(bins) - 1
    if impossible:
        statistic, p_value = math.inf, 0.0
    else:
        statistic = sum((b.observed - b.expected) ** 2 / b.expected for b in bins)
        p_value = float(chi2.sf(statistic, dof)) if dof > 0 else 1.0
    return GofResult(statistic, dof, p_value, p_value < false_alarm, bins, impossible)


def chi_square_power(
    size: int, truth: Pmf, tested: Pmf, false_alarm: float, min_expected: float = 5
) -> float:
    """The probability that :func:`chi_square_gof` of *size* samples of *truth* rejects *tested*
    at *false_alarm* (a law of the same outputs and tail ratio, such as a perturbation of it):
    the bins are the test's (pooled by *tested*'s expected counts) and the statistic's law the
    noncentral χ² of noncentrality size·Σ (p_b − q_b)²/q_b. It depends on the laws and the
    sample size only, never on the samples drawn, so a power check made with it gives the same
    verdict at every seed."""
    empty = np.zeros(0, dtype=np.int64)
    cells, _ = _cells(empty, tested)
    masses, _ = _cells(empty, truth)
    if [(c.low, c.high) for c in cells] != [(m.low, m.high) for m in masses]:
        raise ValueError("the two laws must have the same outputs and tails")
    for cell, mass in zip(cells, masses, strict=True):
        cell.observed = mass.prob  # the truth's mass, carried through the pooling
    bins = _pool(cells, size, mpq(min_expected))
    dof = len(bins) - 1
    if dof < 1:
        return 0.0
    shift = size * float(sum((b.observed - b.prob) ** 2 / b.prob for b in bins))
    return float(ncx2.sf(chi2.isf(false_alarm, dof), dof, shift))
