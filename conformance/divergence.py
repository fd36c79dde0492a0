"""Exact divergences between rational output laws: the quantities the exact-privacy contract
compares with a declared guarantee. Everything here is exact ``gmpy2.mpq`` arithmetic; no float
enters a decision.

- :func:`max_likelihood_ratio`: the pure-DP quantity max_z max(P(z)/Q(z), Q(z)/P(z)), compared
  with a declared rational bound on e^ε (for GeoSample, pmf(c, z) ≤ ((x+1)/x)·pmf(c±1, z)).
- :func:`hockey_stick`: the approximate-DP quantity Σ_z max(0, P(z) − e^ε·Q(z)) (for the
  truncated geometric of Desfontaines et al., exactly δ′ = Pr[X = k] at its e^ε).
- :class:`WorstCase`: both, accumulated over neighbouring pairs, and what they fail.
- :func:`enclosed_hockey_stick` and :func:`enclosed_ratio`: rational lower and upper bounds on
  both for laws known only within enclosures (:class:`~dpplug.enclosed_law.EnclosedLaw`, the
  discrete Gaussian's), from which a guarantee is proved or refuted, never guessed.

Laws with geometric tails (:class:`dpplug.Pmf` with ``tail_ratio``, e.g. the discrete Laplace) are
handled exactly: beyond the union of the two windows both laws continue geometrically, so the tails
are summed in closed form instead of enumerated.
"""

from __future__ import annotations

from math import gcd, lcm
from typing import Any

import flint
from gmpy2 import mpq

from dpplug.bounds import Ball, ball, positive_part
from dpplug.composition import exp_exceeds
from dpplug.enclosed_law import EnclosedLaw
from dpplug.exact import Rat
from dpplug.guarantee import Guarantee
from dpplug.pmf import Pmf

#: Precisions (bits) at which a guarantee is decided from enclosures, each tried only when the
#: one before left it undecided.
ENCLOSURE_PRECISIONS = (128, 256, 512, 1024, 2048, 4096)


def _exact(value: object, what: str) -> Rat:
    """*value* as an mpq; floats, bools and strings are refused (this module is float-free)."""
    if isinstance(value, bool | float | str):
        raise TypeError(f"{what} must be an exact rational (int, Fraction or mpq), got {value!r}")
    return mpq(value)


def _outputs(p: Pmf, q: Pmf) -> list[int]:
    """The outputs to compare: the union of the supports of two bounded laws; otherwise every
    integer of the union of both windows widened by one output on each side.

    Raises ValueError if both laws have geometric tails with different ratios: then P/Q grows
    without bound in one tail, and the caller must decide what that means.
    """
    if p.tail_ratio is not None and q.tail_ratio is not None and p.tail_ratio != q.tail_ratio:
        raise ValueError(
            f"the two laws have different tail ratios ({p.tail_ratio} and {q.tail_ratio}); "
            f"exact comparison needs equal ratios"
        )
    if p.bounded and q.bounded:
        return sorted(set(p) | set(q))
    return list(range(min(p.low, q.low) - 1, max(p.high, q.high) + 2))


def max_likelihood_ratio(p: Pmf, q: Pmf) -> Rat | None:
    """max over outputs z of P(z)/Q(z) and Q(z)/P(z), exactly; ``None`` means infinite.

    The result is ``None`` as soon as some output has positive probability under one law and
    probability 0 under the other. Outputs impossible under both are skipped; two laws with no
    common output give ``None``, two identical laws give 1.

    Bounded laws are compared on the union of their supports. For laws with geometric tails
    (``tail_ratio`` not ``None``) it is exact to check only the union of both windows widened by
    one output on each side: from there on both laws continue as P(z) = P(edge)·r^j and
    Q(z) = Q(edge)·r^j with the *same* ratio r, so P/Q is constant beyond the widened window and
    its value is already among those checked. A bounded law against a tailed one is exact too
    (the tailed law is positive beyond the window where the bounded one is 0, which the widened
    window already sees). Different tail ratios raise ``ValueError``.
    """
    worst: Rat | None = None
    for z in _outputs(p, q):
        pz, qz = p.prob(z), q.prob(z)
        if pz == 0 and qz == 0:
            continue
        if pz == 0 or qz == 0:
            return None
        ratio = max(pz / qz, qz / pz)
        if worst is None or ratio > worst:
            worst = ratio
    return worst


def _tail_excess(
    p_edge: Rat, p_ratio: Rat | None, q_edge: Rat, q_ratio: Rat | None, exp_epsilon: Rat
) -> Rat:
    """Σ_{j≥1} max(0, P(edge±j) − e^ε·Q(edge±j)) beyond one end of the compared outputs."""
    if p_ratio is None:  # P is 0 out there
        return mpq(0)
    geometric = p_ratio / (1 - p_ratio)  # Σ_{j≥1} r^j
    if q_ratio is None:  # Q is 0 out there
        return p_edge * geometric
    return max(mpq(0), p_edge - exp_epsilon * q_edge) * geometric  # same ratio (_outputs)


def hockey_stick(p: Pmf, q: Pmf, exp_epsilon: object) -> Rat:
    """The hockey-stick divergence Σ_z max(0, P(z) − e^ε·Q(z)), exactly.

    (ε, δ)-DP for a pair of neighbours means this is at most δ in both directions
    (for the truncated geometric of docs/mechanisms.md#truncated-geometric the divergence at its
    e^ε is exactly its δ′). *exp_epsilon* is the rational e^ε (int, ``Fraction`` or ``mpq``).

    Laws with geometric tails are included exactly, tails and all: beyond the widened union of
    the windows (see :func:`max_likelihood_ratio`) each term is a geometric sequence, so the tail
    sum is max(0, P(edge) − e^ε·Q(edge))·r/(1−r) for equal ratios r, P(edge)·r/(1−r) when only
    P has a tail, and 0 when only Q has one. Different tail ratios raise ``ValueError``.
    """
    e = _exact(exp_epsilon, "exp_epsilon")
    outputs = _outputs(p, q)
    total = mpq(0)
    for z in outputs:
        excess = p.prob(z) - e * q.prob(z)
        if excess > 0:
            total += excess
    for edge in (outputs[0], outputs[-1]):
        total += _tail_excess(p.prob(edge), p.tail_ratio, q.prob(edge), q.tail_ratio, e)
    return total


def enclosed_hockey_stick(p: EnclosedLaw, q: EnclosedLaw, exp_epsilon: object) -> tuple[Rat, Rat]:
    """Rational bounds (lower, upper) on Σ_y max(0, P(y) − e^ε·Q(y)) for laws known within
    enclosures. Upper: Σ over P's window of max(0, hi_P(y) − e^ε·lo_Q(y)) (lo_Q = 0 outside Q's
    window) plus P's outside mass, which bounds every term beyond P's window. Lower: Σ over P's
    window of max(0, lo_P(y) − e^ε·hi_Q(y)) (each term is at most the exact one, and the terms
    left out are ≥ 0). For exact laws (width 0, no outside mass) both equal :func:`hockey_stick`.
    """
    e = _exact(exp_epsilon, "exp_epsilon")
    zero = mpq(0)
    low, high = mpq(0), p.outside
    for y in p.window():
        low += max(zero, p.lo(y) - e * q.hi(y))
        high += max(zero, p.hi(y) - e * q.lo(y))
    return low, high


def enclosed_ratio(p: EnclosedLaw, q: EnclosedLaw) -> tuple[Rat | None, Rat | None]:
    """Rational bounds (lower, upper) on max_y max(P(y)/Q(y), Q(y)/P(y)); ``None`` is ∞. The
    upper bound is finite only when both laws enclose their whole support in their windows
    (no outside mass) and every output one law may give has a positive lower bound under the
    other; the lower bound is ∞ when an output certainly possible under one law is certainly
    impossible under the other."""
    low: Rat | None = mpq(1)
    high: Rat | None = None if p.outside or q.outside else mpq(1)
    for y in range(min(p.low, q.low), max(p.high, q.high) + 1):
        for a, b in ((p, q), (q, p)):
            if a.hi(y) == 0:
                continue
            if b.lo(y) == 0:
                high = None
            elif high is not None:
                high = max(high, a.hi(y) / b.lo(y))
            if a.lo(y) > 0 and b.hi(y) == 0:
                low = None
            elif low is not None and a.lo(y) > 0:
                low = max(low, a.lo(y) / b.hi(y))
    return low, high


class WorstCase:
    """The worst likelihood ratio and hockey-stick divergence (at e^ε, both directions) over
    the neighbouring pairs compared so far, and the failures they make for a guarantee."""

    def __init__(self, exp_epsilon: Rat) -> None:
        self.exp_epsilon = exp_epsilon
        self.ratio: Rat | None = mpq(1)
        self.ratio_pair: tuple[Any, Any] | None = None
        self.divergence: Rat = mpq(0)
        self.divergence_pair: tuple[Any, Any] | None = None

    def compare(self, a: Any, b: Any, p: Pmf, q: Pmf) -> None:
        """Compare the laws *p* of input *a* and *q* of its neighbour *b*."""
        ratio = max_likelihood_ratio(p, q)
        worse = self.ratio is not None and (ratio is None or ratio > self.ratio)
        if worse or self.ratio_pair is None:
            self.ratio, self.ratio_pair = ratio, (a, b)
        for pair, first, second in (((a, b), p, q), ((b, a), q, p)):
            divergence = hockey_stick(first, second, self.exp_epsilon)
            if self.divergence_pair is None or divergence > self.divergence:
                self.divergence, self.divergence_pair = divergence, pair

    def failures(self, guarantee: Guarantee, inputs: str) -> list[str]:
        """What fails *guarantee*: the ratio for a pure one, the divergence for an approximate
        one; *inputs* names what the pairs are (counts, datasets)."""
        e, delta = exact_text(guarantee.exp_epsilon), exact_text(guarantee.delta)
        if guarantee.pure and (self.ratio is None or self.ratio > guarantee.exp_epsilon):
            shown = "∞" if self.ratio is None else exact_text(self.ratio)
            pair = _pair(self.ratio_pair)
            return [f"likelihood ratio {shown} for {inputs} {pair} exceeds e^ε = {e}"]
        if not guarantee.pure and self.divergence > guarantee.delta:
            divergence, pair = exact_text(self.divergence), _pair(self.divergence_pair)
            return [
                f"hockey-stick divergence {divergence} at e^ε = {e} for {inputs} {pair} "
                f"exceeds δ = {delta}"
            ]
        return []


def summed_loss_divergence(masses: list[tuple[Rat, Ball]], k: int, exp_epsilon: Rat) -> Ball:
    """E[max(0, 1 − e^ε·e^{−L})] as a ball, L the sum of k independent privacy losses that each
    take the value ℓ with the mass m of each pair (ℓ, m) of *masses* (ℓ rational, m a ball): the
    hockey-stick divergence at e^ε of the k-fold product of a pair whose loss under P has these
    masses. The losses lie on a lattice base + i·gap over a common denominator, so the law of L is
    the k-th power of Σ m·x^i, computed in ball arithmetic; a term whose sign (e^L against e^ε)
    the precision leaves open is enclosed with 0 (:func:`dpplug.composition.exp_exceeds`)."""
    denominator = lcm(*(int(mpq(loss).denominator) for loss, _ in masses))
    steps = [(int(loss * denominator), mass) for loss, mass in masses]
    base = min(j for j, _ in steps)
    gap = 0
    for j, _ in steps:
        gap = gcd(gap, j - base)
    gap = gap or 1
    one = [ball(0)] * ((max(j for j, _ in steps) - base) // gap + 1)
    for j, mass in steps:
        one[(j - base) // gap] += mass
    divergence = ball(0)
    for i, summed in enumerate((flint.arb_poly(one) ** k).coeffs()):
        loss = mpq(k * base + i * gap, denominator)
        side = exp_exceeds(loss, exp_epsilon)
        if side is not False:
            excess = summed * (1 - ball(exp_epsilon) * (-ball(loss)).exp())
            divergence += excess if side else positive_part(excess)
    return divergence


def exact_text(value: Rat) -> str:
    """An exact rational as text, or its float value when the fraction is too long to read."""
    text = str(value)
    return text if len(text) <= 32 else f"≈{float(value):.9g}"


def _pair(pair: tuple[Any, Any] | None) -> str:
    return "" if pair is None else f"{pair[0]} and {pair[1]}"
