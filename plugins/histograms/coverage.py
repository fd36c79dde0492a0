"""A warning for sparse releases whose per-query accuracy covers no possible count.

A sparse releaser promises per-query accuracy only for true counts above a threshold
(``Accuracy.threshold``). When that threshold is at least n, no bin of a dataset of at most n
rows is covered: the release is private and works as declared, but shows (almost) only noise or
nothing (Balcer & Vadhan, full version Thm 7.2, explain why: a sparse release over a huge
universe cannot have small error on small counts). :func:`warn_if_uncovered` says so when the
releaser is created, with the smallest n (at the same ε) and a nearly smallest ε (at the same n)
for which the threshold falls below n, found by building the same releaser a few times.
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
#: Each search builds the releaser at most this many times.
_BUILDS = 16
#: The ε search raises ε by at least this fraction per build.
_EPSILON_STEP = Fraction(1, 32)


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


def _threshold_at(releaser: HistogramReleaser, **changes: Any) -> tuple[int, int] | None:
    """(threshold, n) of the same releaser with *changes*, or ``None`` if they are refused."""
    try:
        other = type(releaser)(**{**releaser.params, **changes}, registry=releaser.registry)
    except BadParameter:
        return None
    return _threshold(other), other.n


def _smallest_n(releaser: HistogramReleaser) -> int | None:
    """The smallest n′ with threshold(n′) < n′: the iteration n′ ← threshold(n′) + 1 from n (few
    builds: the threshold grows like log n), which stops at the smallest when the threshold
    never falls as n grows; then bisection between the last n′ above and the first below, where
    it does. ``None`` past the schema's n or after :data:`_BUILDS` builds."""
    low, candidate, builds = releaser.n, _threshold(releaser) + 1, 0
    while builds < _BUILDS:
        found, builds = _threshold_at(releaser, n=candidate), builds + 1
        if found is None:
            return None
        if found[0] < candidate:
            break
        low, candidate = candidate, found[0] + 1
    else:
        return None
    while builds < _BUILDS and candidate - low > 1:
        middle = (low + candidate) // 2
        found, builds = _threshold_at(releaser, n=middle), builds + 1
        if found is not None and found[0] < middle:
            candidate = middle
        else:
            low = middle
    return candidate


def _smallest_epsilon(releaser: HistogramReleaser) -> Fraction | None:
    """An ε′ with threshold(ε′) < n, near the smallest: thresholds scale like 1/ε, so
    ε′ ← ε′·(threshold(ε′) + 1)/n (by at least 1/32) until the threshold is below n, then
    bisection between the last ε′ above and the first below, all on two significant digits
    (rounded up). ``None`` if no ε′ the schema allows gets there within :data:`_BUILDS`
    builds."""
    epsilon = releaser.params.get("epsilon")
    if epsilon is None:
        return None
    low = Fraction(int(epsilon.numerator), int(epsilon.denominator))
    top = Fraction(next(p.high for p in releaser.schema if p.name == "epsilon"))
    threshold, high, builds = _threshold(releaser), None, 0
    while high is None:
        if builds == _BUILDS or low >= top:
            return None
        scale = max(Fraction(threshold + 1, releaser.n), 1 + _EPSILON_STEP)
        candidate = min(_two_digits_up(low * scale), top)
        found, builds = _threshold_at(releaser, epsilon=candidate), builds + 1
        if found is None:
            return None
        threshold = found[0]
        low, high = (low, candidate) if threshold < releaser.n else (candidate, None)
    while builds < _BUILDS:
        middle = _two_digits_up((low + high) / 2)
        if not low < middle < high:
            break
        found, builds = _threshold_at(releaser, epsilon=middle), builds + 1
        if found is not None and found[0] < releaser.n:
            high = middle
        else:
            low = middle
    return high


def _two_digits_up(value: Fraction) -> Fraction:
    """*value* rounded up to two significant decimal digits."""
    scale = Fraction(1)
    while value * scale < 10:
        scale *= 10
    while value * scale >= 100:
        scale /= 10
    return Fraction(-(-value * scale // 1)) / scale
