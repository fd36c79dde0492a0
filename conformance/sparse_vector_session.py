"""Exact privacy and exact laws of a sparse-vector session, from the structure its releaser
declares (:meth:`dpplug.QueryReleaser.sparse_vector`,
:mod:`dpplug.kinds.query_releaser.sparse_vector`, docs/conformance.md#sparse-vector-sessions).

**The guarantee** (:func:`session_privacy`). Each round is ε_r-DP and each noisy answer ε_a-DP, both
exact rationals from the declared scales (the two-sided AboveThreshold argument of
:mod:`dpplug.kinds.query_releaser.sparse_vector`); a session of at most k queries has at most r =
min(c, k) rounds (each query ends at most one, a round starts only with a query, and none starts
after the c-th has ended) and r answers, chosen adaptively, so 2r steps of loss at most ε₀ =
max(ε_r, ε_a). Their composition is bounded in balls by the best theorem that applies: basic
composition (2r·ε₀ ≤ ε), the optimal one (Kairouz, Oh, Viswanath 2015, Thm 3.3) up to
:data:`~dpplug.composition.MAX_OPTIMAL_STEPS` steps, and the advanced one (Dwork, Rothblum, Vadhan
2010, Thm III.3) beyond. The check passes when one of them proves the declared (ε, δ); it fails when
basic or optimal composition, which are exact for the class of ε₀-DP steps, exceed it (the declared
structure does not give the guarantee); beyond the optimal theorem's range a guarantee the advanced
one cannot prove is left undecided.

**The laws the sampling law tests** (the structure's own, exactly enclosed):

- the first answer to a query of gap g = A − H (:func:`first_answer_law`): H with probability
  M₁ = Pr[the round survives the query]
  (:meth:`~dpplug.kinds.query_releaser.sparse_vector.SparseVectorRounds .continuing`), else clamp(A
  + DLap(b_ans)); reported as H, or as the answer's offset from A in :data:`BUCKETS_PER_SIDE`
  buckets of about b_ans/2 a side (so the law has few outputs whatever the scale, and the χ² test
  few cells: its power against a 5% perturbation falls with their number);
- the query at which the same query, asked again and again, first ends a round
  (:func:`update_time_law`): Pr[T = t] = M_{t−1} − M_t, which depends on the threshold noise being
  drawn once per round and on both tests' noise.
"""

from __future__ import annotations

from typing import Any

from gmpy2 import mpq

from dpplug.bounds import Ball, ball, lower, precise, upper
from dpplug.composition import MAX_OPTIMAL_STEPS, advanced_epsilon, exp_exceeds, optimal_delta_at
from dpplug.conformance.divergence import ENCLOSURE_PRECISIONS, exact_text
from dpplug.discrete_noise import laplace_cdf
from dpplug.enclosed_law import EnclosedLaw
from dpplug.errors import NotSupported
from dpplug.guarantee import Guarantee
from dpplug.kinds.query_releaser.sparse_vector import SparseVectorRounds

Rat = Any  # gmpy2.mpq

#: Buckets of the answer's offset from the truth on each side (each about b_ans/2 wide; the
#: outermost hold the tails beyond about 3·b_ans).
BUCKETS_PER_SIDE = 6
#: The most repetitions of a query whose update time is tested (later ones are lumped).
UPDATE_QUERIES = 8


def session_privacy(
    rounds: SparseVectorRounds, guarantee: Guarantee, max_queries: int
) -> tuple[str | None, str]:
    """The declared guarantee of a sparse-vector session of at most *max_queries* queries
    decided from its structure (see the module docstring): (why it fails, in words, or None;
    what was proved)."""
    e, delta = mpq(guarantee.exp_epsilon), mpq(guarantee.delta)
    eps_r, eps_a = rounds.round_loss(), rounds.answer_loss()
    step, steps = max(eps_r, eps_a), 2 * min(rounds.rounds, max_queries)
    losses = (
        f"rounds ε_r = W/b_thr + 2W/b_q = {exact_text(eps_r)}, answers ε_a = W/b_ans = "
        f"{exact_text(eps_a)}, 2·min(c, k) = {steps:,} steps of ε₀ = max(ε_r, ε_a)"
    )
    for bits in ENCLOSURE_PRECISIONS:
        with precise(bits):
            basic = exp_exceeds(steps * step, e)
            if basic is False:
                return None, f"{losses}; basic composition: 2r·ε₀ ≤ ε (e^ε = {exact_text(e)})"
            if delta == 0:
                if basic:
                    return (
                        f"{losses}: with δ = 0 they compose to 2r·ε₀ = "
                        f"{exact_text(steps * step)}, above the declared e^ε = {exact_text(e)}",
                        "",
                    )
                continue
            if steps <= MAX_OPTIMAL_STEPS:
                bound = optimal_delta_at(step, steps, e)
                if upper(bound) <= delta:
                    return None, (
                        f"{losses}; optimal composition: δ ≤ {float(upper(bound)):.3g} ≤ δ = "
                        f"{exact_text(delta)}"
                    )
                if lower(bound) > delta:
                    return (
                        f"{losses}: some {steps:,} adaptive ε₀-DP steps have δ ≥ "
                        f"{float(lower(bound)):.6g} at e^ε = {exact_text(e)} (optimal "
                        f"composition, exact for the class), above the declared δ = "
                        f"{exact_text(delta)}: the declared structure does not give the guarantee",
                        "",
                    )
                continue
            advanced = exp_exceeds(advanced_epsilon(step, steps, delta), e)
            if advanced is False:
                return None, (
                    f"{losses}; advanced composition at δ = {exact_text(delta)}: ε ≤ "
                    f"{float(advanced_epsilon(step, steps, delta)):.6g} ≤ ln e^ε"
                )
            if advanced:
                break
    raise NotSupported(
        f"{losses}: their composition is neither proved nor refuted at e^ε = {exact_text(e)}, "
        f"δ = {exact_text(delta)} (beyond {MAX_OPTIMAL_STEPS} steps only the advanced theorem "
        f"is evaluated, and it is not tight)"
    )


def bucket_width(rounds: SparseVectorRounds) -> int:
    """The width of an answer bucket: ⌈b_ans/2⌉."""
    answer_scale = mpq(rounds.answer_scale)
    return max(1, int(-(-answer_scale.numerator // (2 * answer_scale.denominator))))


def answer_output(rounds: SparseVectorRounds, answer: int, scaled: int, hypothesis: int) -> int:
    """The tested output of an answer (grid units) to a query of true scaled answer *scaled*:
    ``BUCKETS_PER_SIDE + 1`` for the hypothesis, else the bucket of answer − scaled, clipped to
    ±``BUCKETS_PER_SIDE``."""
    if answer == hypothesis:
        return BUCKETS_PER_SIDE + 1
    j = (answer - scaled) // bucket_width(rounds)
    return min(BUCKETS_PER_SIDE, max(-BUCKETS_PER_SIDE, j))


def first_answer_law(
    rounds: SparseVectorRounds, scaled: int, hypothesis: int, bits: int
) -> EnclosedLaw:
    """The law of :func:`answer_output` for the first answer to a query of true scaled answer
    *scaled* and public hypothesis *hypothesis*, enclosed at *bits* bits."""
    j_max, h = BUCKETS_PER_SIDE, bucket_width(rounds)
    with precise(bits):
        stay = rounds.continuing([scaled - hypothesis])
        at_hypothesis = _clamped_noise(rounds, scaled, hypothesis - scaled, hypothesis - scaled)
        own = (hypothesis - scaled) // h
        probabilities = []
        for j in range(-j_max, j_max + 1):
            low = None if j == -j_max else j * h
            high = None if j == j_max else j * h + h - 1
            mass = _clamped_noise(rounds, scaled, low, high)
            if min(j_max, max(-j_max, own)) == j:
                mass -= at_hypothesis
            probabilities.append((1 - stay) * mass)
        probabilities.append(stay + (1 - stay) * at_hypothesis)
        return EnclosedLaw.of_balls(-j_max, probabilities, bits)


def update_time_law(
    rounds: SparseVectorRounds, scaled: int, hypothesis: int, queries: int, bits: int
) -> tuple[EnclosedLaw, Rat]:
    """The law of the first of *queries* repetitions of a query (true scaled answer *scaled*,
    hypothesis *hypothesis*) whose answer differs from the hypothesis (``queries + 1``: none),
    enclosed at *bits* bits; and a rational bound on the total variation the enclosure does not
    cover: a round's noisy answer may equal the hypothesis, with probability at most
    Pr[clamp(A + DLap(b_ans)) = H], after which the session's hypothesis moves."""
    with precise(bits):
        law = rounds.update_time(scaled - hypothesis, queries)
        collision = _clamped_noise(rounds, scaled, hypothesis - scaled, hypothesis - scaled)
        return EnclosedLaw.of_balls(1, law, bits), upper(collision)


def _clamped_noise(
    rounds: SparseVectorRounds, scaled: int, low: int | None, high: int | None
) -> Ball:
    """Pr[clamp(A + N, 0, n·W) − A ∈ [low, high]] for N ~ DLap(b_ans) and A = *scaled* (None: an
    infinite end), as a ball."""
    floor, ceiling = -scaled, rounds.scale - scaled
    low = floor if low is None else max(low, floor)
    high = ceiling if high is None else min(high, ceiling)
    if low > high:
        return ball(0)
    scale = rounds.answer_scale
    below = ball(0) if low == floor else laplace_cdf(scale, low - 1)
    return (ball(1) if high == ceiling else laplace_cdf(scale, high)) - below
