"""Exact privacy of an interactive session of independent answers: the declared (ε, δ) of k
adaptively chosen queries, decided rigorously from the law of one answer
(:meth:`dpplug.QueryReleaser.answer_law`, docs/conformance.md#composed-sessions).

1. **One answer.** For every pair of true scaled answers s, s′ at most W apart in [0, n·W] (one
   row added or removed moves a scaled answer by its weight, at most W), the largest privacy loss
   |ln(P_s(z)/P_s′(z))| over the outputs z, exactly: the answer laws are
   :class:`~dpplug.kinds.query_releaser.polynomial_law.PolynomialLaw` s, whose ratios are powers of
   q = e^{−1/b}, so the loss is a rational (e′ − e)/b. Its maximum ε₁ is the per-answer pure
   guarantee, met with equality where it is attained. Each law is first checked to sum to one,
   exactly.
2. **k answers, any adaptive choice of queries: an upper bound.** Every ε₁-DP mechanism is a
   post-processing of randomized response with e^{ε₁}, adaptively too, so k of them are together
   (ε, δ)-DP for δ = Σ_l C(k, l)·max(0, e^{(k−l)ε₁} − e^ε·e^{lε₁})/(1 + e^{ε₁})^k, and for no
   smaller δ in general (:func:`dpplug.composition.optimal_delta_at`; Kairouz, Oh, Viswanath,
   "The Composition Theorem for Differential Privacy", ICML 2015, Thm 3.3).
3. **The same query asked k times: a lower bound.** The session's own worst pair, composed k
   times non-adaptively: the hockey-stick divergence of the k-fold products at e^ε, from the
   exact distribution of the summed privacy loss (k-fold convolution of one answer's).

Both are evaluated in balls with outward rounding (a term whose sign, e^{jε₁} against e^ε, the
precision leaves open is enclosed together with 0: :func:`dpplug.composition.exp_exceeds`); the
guarantee passes when the upper bound is at most δ, fails when the lower bound exceeds it, and
is recomputed at the next of :data:`~.divergence.ENCLOSURE_PRECISIONS` in between. For a pure
guarantee (δ = 0) the two bounds agree: both are zero exactly when e^{kε₁} ≤ e^ε.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import flint
from gmpy2 import mpq

from dpplug.bounds import Ball, ball, lower, precise, upper
from dpplug.composition import MAX_OPTIMAL_STEPS, optimal_delta_at
from dpplug.conformance.divergence import ENCLOSURE_PRECISIONS, exact_text, summed_loss_divergence
from dpplug.enclosed_law import EnclosedLaw
from dpplug.errors import NotSupported
from dpplug.guarantee import Guarantee
from dpplug.kinds.query_releaser.polynomial_law import PolynomialLaw

Rat = Any  # gmpy2.mpq


#: The most answers whose composition is decided exactly (the optimal composition sums up to
#: k/2 terms).
MAX_QUERIES = MAX_OPTIMAL_STEPS
#: The largest k·W (the summed loss of k answers takes up to 2kW + 1 values).
MAX_LOSS_STEPS = 1 << 16


@dataclass(frozen=True)
class AnswerLoss:
    """The largest privacy loss of one answer, ``epsilon1`` (exact), between the laws of the
    scaled answers ``pair`` (from, to), attained at ``output``."""

    epsilon1: Rat
    pair: tuple[int, int]
    output: int


def answer_loss(laws: dict[int, PolynomialLaw], sensitivity: int) -> AnswerLoss:
    """The largest |ln(P_s(z)/P_s′(z))| over every z and every pair 0 < s′ − s ≤ *sensitivity* of
    the scaled answers in *laws*
    (:meth:`~dpplug.kinds.query_releaser.polynomial_law.PolynomialLaw.max_loss`); ``NotSupported``
    where a ratio is not a power of q."""
    worst: AnswerLoss | None = None
    for s in sorted(laws):
        for step in range(1, sensitivity + 1):
            if s + step not in laws:
                break
            found = laws[s].max_loss(laws[s + step])
            if found is None:
                raise NotSupported(
                    f"the answer laws at scaled answers {s} and {s + step} have a likelihood "
                    f"ratio that is not a power of q = e^(−1/b), so their privacy loss is not "
                    f"exact"
                )
            if worst is None or found[0] > worst.epsilon1:
                worst = AnswerLoss(found[0], (s, s + step), found[1])
    if worst is None:
        raise NotSupported("a single scaled answer: no neighbouring pair to compare")
    return worst


def repeated_pair(p: PolynomialLaw, q: PolynomialLaw, k: int, exp_epsilon: Rat) -> Ball:
    """The hockey-stick divergence at e^ε of P^k against Q^k (the same query asked k times), as a
    ball: E_{P^k}[max(0, 1 − e^ε·e^{−L})] for the summed loss L of k answers, each loss exact
    (:meth:`PolynomialLaw.losses`) with its mass under P
    (:func:`~dpplug.conformance.divergence.summed_loss_divergence`)."""
    losses = p.losses(q)
    assert losses is not None  # answer_loss found every ratio a power of q
    qb = (-1 / ball(p.scale)).exp()
    return summed_loss_divergence(
        [(loss, p.probability(z, qb)) for z, loss in losses.items()], k, exp_epsilon
    )


def summed_law(law: PolynomialLaw, k: int, bits: int = 128) -> EnclosedLaw:
    """The law of the sum of k independent answers of *law*, enclosed at *bits* bits: the
    coefficients of (Σ_z P(z)·x^z)^k, in ball arithmetic (the sampling law tests a session's
    total against it, docs/conformance.md#composed-sessions)."""
    with precise(bits):
        qb = (-1 / ball(law.scale)).exp()
        summed = flint.arb_poly([law.probability(z, qb) for z in law.window()]) ** k
        return EnclosedLaw.of_balls(k * law.low, summed.coeffs(), bits)


def session_privacy(
    laws: dict[int, PolynomialLaw], sensitivity: int, k: int, guarantee: Guarantee
) -> tuple[str | None, str]:
    """The declared guarantee of a session of k independent answers with these answer laws (by
    true scaled answer), decided rigorously (see the module docstring): (why it fails, in words,
    or None; what was proved)."""
    for s, law in laws.items():
        if not law.normalised():
            return (
                f"the declared law of an answer whose true scaled answer is {s} does not sum "
                f"to one",
                "",
            )
    if k > MAX_QUERIES or k * sensitivity > MAX_LOSS_STEPS:
        raise NotSupported(
            f"k = {k} answers on the grid W = {sensitivity} are too many to compose exactly "
            f"(at most {MAX_QUERIES} answers and k·W ≤ {MAX_LOSS_STEPS})"
        )
    worst = answer_loss(laws, sensitivity)
    e, delta = mpq(guarantee.exp_epsilon), mpq(guarantee.delta)
    p, q = laws[worst.pair[0]], laws[worst.pair[1]]
    for bits in ENCLOSURE_PRECISIONS:
        with precise(bits):
            adaptive = optimal_delta_at(worst.epsilon1, k, e)
            repeated = max(repeated_pair(p, q, k, e), repeated_pair(q, p, k, e), key=lower)
            low, high = max(mpq(0), lower(repeated)), max(mpq(0), upper(adaptive))
        one = (
            f"one answer's loss ≤ ε₁ = {exact_text(worst.epsilon1)} (attained: scaled answers "
            f"{worst.pair[0]} and {worst.pair[1]}, output {worst.output})"
        )
        if low > delta:
            return (
                f"{one}; the same query asked k = {k} times already has hockey-stick "
                f"divergence ≥ {float(low):.6g} at e^ε = {exact_text(e)}, above δ = "
                f"{exact_text(delta)}"
            ), ""
        if high <= delta:
            return None, (
                f"{one}; k = {k} adaptive answers: δ ≤ {float(high):.3g} ≤ δ = "
                f"{exact_text(delta)} (optimal composition), the same query k times δ ≥ "
                f"{float(low):.3g}"
            )
    raise NotSupported(
        f"the composition of k = {k} answers of loss ε₁ = {exact_text(worst.epsilon1)} is "
        f"neither proved nor refuted at e^ε = {exact_text(e)}, δ = {exact_text(delta)}: the "
        f"optimal composition theorem allows more than δ, the repeated query less"
    )
