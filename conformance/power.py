"""How much a one-sided binomial test can see: the power statements of the statistical contracts.

A declared bound "Pr[event] ≤ β" is tested on N independent draws by rejecting when the number of
events c reaches the critical value, the smallest c with Pr[Bin(N, β) ≥ c] < α. Its power is
stated as the smallest factor f for which a true rate of f·β is rejected with probability at
least 1/2, and :func:`trials_for` gives the fewest draws that detect a given factor: the accuracy
contract draws that many (the factor is the run's, :attr:`~.settings.Settings.detected_factor`), so
an overclaim at β = 1/1000 is seen as surely as one at 1/20. Both are remembered per process
(a contract asks the same few questions for every claim; each answer takes about a thousand
binomial tails).
"""

from __future__ import annotations

from functools import cache

from scipy.stats import binom


def critical(trials: int, beta: float, alpha: float) -> int:
    """The smallest number of events that rejects "rate ≤ β" at false-alarm rate *alpha*."""
    return int(binom.isf(alpha, trials, beta)) + 1


@cache
def detectable_factor(trials: int, beta: float, alpha: float) -> float:
    """The smallest f such that a true rate f·β is rejected with probability ≥ 1/2."""
    c = critical(trials, beta, alpha)
    low, high = 1.0, 1.0 / beta
    if binom.sf(c - 1, trials, min(1.0, high * beta)) < 0.5:
        return float("inf")
    for _ in range(60):
        middle = (low + high) / 2
        if binom.sf(c - 1, trials, middle * beta) >= 0.5:
            high = middle
        else:
            low = middle
    return high


@cache
def trials_for(beta: float, alpha: float, factor: float) -> int:
    """The fewest draws (to within 1%) whose test detects a rate of *factor*·β with probability
    at least 1/2."""
    low, high = 1, 16
    while detectable_factor(high, beta, alpha) > factor:
        low, high = high, 2 * high
    while high - low > max(1, low // 100):
        middle = (low + high) // 2
        if detectable_factor(middle, beta, alpha) > factor:
            low = middle
        else:
            high = middle
    return high
