"""A warning for sparse releases whose per-query accuracy covers no possible count.

A sparse releaser promises per-query accuracy only for true counts above a threshold
(``Accuracy.threshold``). When that threshold is at least n, no bin of a dataset of at most n
rows is covered: the release is private and works as declared, but shows (almost) only noise or
nothing (Balcer & Vadhan, full version Thm 7.2, explain why: a sparse release over a huge
universe cannot have small error on small counts). :func:`warn_if_uncovered` says so when the
releaser is created, with the smallest n (at the same ε) and the smallest ε (at the same n) for
which the threshold falls below n, found by building the same releaser with those values.
"""

from __future__ import annotations

import warnings
from contextvars import ContextVar
from fractions import Fraction
from typing import Any, Protocol

from dpplug.errors import AccuracyWarning, BadParameter
from dpplug.kinds import HistogramReleaser

#: Set while candidates are built, so that they do not search (or warn) themselves.
_SEARCHING: ContextVar[bool] = ContextVar("dpplug_coverage_search", default=False)
#: The ε search stops once its bracket is this tight (relative), then rounds up.
_EPSILON_RESOLUTION = Fraction(1, 64)


class Thresholded(Protocol):
    n: int
    params: dict[str, Any]

    def covered_above(self, beta: Any) -> int:
        """The count above which the per-query bound at β holds."""


def warn_if_uncovered(releaser: HistogramReleaser) -> None:
    """Warn (:class:`~dpplug.errors.AccuracyWarning`) if the per-query bound at the releaser's β
    covers no count in [0, n]."""
    if _SEARCHING.get():
        return
    threshold = _threshold(releaser)
    if threshold < releaser.n:
        return
    token = _SEARCHING.set(True)
    try:
        n_from = _smallest_n(releaser)
        epsilon_from = _smallest_epsilon(releaser)
    finally:
        _SEARCHING.reset(token)
    remedies = [
        f"from n = {n_from:,} at this ε" if n_from else "for no n the schema allows at this ε"
    ]
    if releaser.params.get("epsilon") is not None:
        at_n = f"from ε = {float(epsilon_from):.3g}" if epsilon_from else "for no ε"
        remedies.append(f"{at_n} at this n")
    warnings.warn(
        AccuracyWarning(
            f"{releaser.name} with n = {releaser.n:,} over {releaser.universe.spec}: its "
            f"per-query accuracy holds only for true counts above {threshold:,}, and no count "
            f"exceeds n, so no bin is reliably released (most releases show only noise or "
            f"nothing). The threshold is below n {' or '.join(remedies)}."
        ),
        stacklevel=3,
    )


def _threshold(releaser: Any) -> int:
    candidate: Thresholded = releaser
    return candidate.covered_above(candidate.params["beta"])


def _covered(releaser: HistogramReleaser, **changes: Any) -> bool:
    """Whether the same releaser with *changes* has its threshold below its n (False if the
    changed parameters are refused)."""
    try:
        other = type(releaser)(**{**releaser.params, **changes}, registry=releaser.registry)
    except BadParameter:
        return False
    return _threshold(other) < other.n


def _schema_high(releaser: HistogramReleaser, name: str) -> Any:
    return next(p.high for p in releaser.schema if p.name == name)


def _smallest_n(releaser: HistogramReleaser) -> int | None:
    """The smallest n′ > n with the threshold below n′ (exponential search, then bisection)."""
    low, high, top = releaser.n, releaser.n, int(_schema_high(releaser, "n"))
    while not _covered(releaser, n=high):
        if high >= top:
            return None
        low, high = high, min(2 * high, top)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if _covered(releaser, n=middle) else (middle, high)
    return high


def _smallest_epsilon(releaser: HistogramReleaser) -> Fraction | None:
    """The smallest ε′ > ε (to two significant digits, rounded up) with the threshold below n."""
    epsilon = releaser.params.get("epsilon")
    if epsilon is None:
        return None
    low = high = Fraction(int(epsilon.numerator), int(epsilon.denominator))
    top = Fraction(_schema_high(releaser, "epsilon"))
    while not _covered(releaser, epsilon=high):
        if high >= top:
            return None
        low, high = high, min(2 * high, top)
    while high - low > low * _EPSILON_RESOLUTION:
        middle = (low + high) / 2
        low, high = (low, middle) if _covered(releaser, epsilon=middle) else (middle, high)
    rounded = _two_digits_up(high)
    return rounded if _covered(releaser, epsilon=rounded) else high


def _two_digits_up(value: Fraction) -> Fraction:
    """*value* rounded up to two significant decimal digits."""
    scale = Fraction(1)
    while value * scale < 10:
        scale *= 10
    while value * scale >= 100:
        scale /= 10
    return Fraction(-(-value * scale // 1)) / scale
