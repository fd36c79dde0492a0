"""The verifier of :class:`~dpplug.kinds.query_releaser.sparse_vector.SparseVectorRounds`: exact
privacy and exact laws of a sparse-vector session, from the structure its releaser declares
(:mod:`dpplug.kinds.query_releaser.sparse_vector`, docs/conformance.md#sparse-vector-sessions),
and its real draws tested against them (:class:`SparseVectorVerifier`).

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
  (:meth:`SparseVectorRounds.continuing`), else clamp(A
  + DLap(b_ans)); reported as H, or as the answer's offset from A in :data:`BUCKETS_PER_SIDE`
  buckets of about b_ans/2 a side (so the law has few outputs whatever the scale, and the χ² test
  few cells: its power against a 5% perturbation falls with their number);
- the query at which the same query, asked again and again, first ends a round
  (:func:`update_time_law`): Pr[T = t] = M_{t−1} − M_t, which depends on the threshold noise being
  drawn once per round and on both tests' noise.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.bounds import Ball, ball, lower, precise, upper
from dpplug.composition import MAX_OPTIMAL_STEPS, advanced_epsilon, exp_exceeds, optimal_delta_at
from dpplug.conformance.divergence import ENCLOSURE_PRECISIONS, exact_text
from dpplug.conformance.privacy_check import PrivacyCheck
from dpplug.conformance.settings import Settings
from dpplug.conformance.structures.verifier import Verifier
from dpplug.discrete_noise import laplace_cdf
from dpplug.enclosed_law import EnclosedLaw
from dpplug.errors import NotSupported
from dpplug.exact import Rat
from dpplug.guarantee import Guarantee
from dpplug.kinds.query_releaser.queries import QueryAnswers, SparseQuery, sparse_query
from dpplug.kinds.query_releaser.sparse_vector import SparseVectorRounds
from dpplug.pmf import Pmf
from dpplug.randomness import RandomSource

if TYPE_CHECKING:
    from dpplug.conformance.probes.query_releaser.probe import QueryReleaserProbe
    from dpplug.kinds import QueryReleaser


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


#: The sampling law's input, for a sparse-vector session, that stands for the first answer on the
#: dataset {x₀: v} whose first query's gap is nearest the threshold
#: (:attr:`SparseVectorVerifier.threshold_count`): where the round's test decides, about half the
#: time each way.
AT_THRESHOLD = -3
#: The sampling law's input that stands for the update time on that dataset: which of up to
#: :data:`UPDATE_QUERIES` repetitions of {x₀: 1} first ends a round (its answer leaves the
#: hypothesis).
UPDATE_TIME = -4
#: The sampling law's input that stands for the first answer on :data:`AT_THRESHOLD`'s dataset
#: with one row of each other probe label added, as n allows: the same true answer and the same
#: declared law, so a hypothesis or a test that depends on more than the query (the labels held,
#: or how many) is seen.
AT_THRESHOLD_LABELS = -5
#: The sampling law's inputs, for a session of k ≥ 2 queries, that stand for the second round on
#: :data:`AT_THRESHOLD`'s dataset: in the sessions whose first query ended the first round with
#: an answer after which the declared hypothesis is the one an update at the true answer gives,
#: the second query's answer, and which of the further repetitions first ends the second round.
#: Under the structure the second round is fresh given that event.
SECOND_ANSWER = -6
SECOND_UPDATE_TIME = -7
#: Sessions a second-round input may start per sample it keeps (the rest are discarded by its
#: condition: about half at the threshold).
SECOND_ROUND_ATTEMPTS = 8
_SECOND_ROUND = (SECOND_ANSWER, SECOND_UPDATE_TIME)
_AT_THRESHOLD = (AT_THRESHOLD, AT_THRESHOLD_LABELS, UPDATE_TIME, *_SECOND_ROUND)


class SparseVectorVerifier(Verifier):
    """A sparse-vector session (:class:`~dpplug.kinds.query_releaser.sparse_vector
    .SparseVectorRounds`): its guarantee from each round's and each answer's exact loss composed
    over its rounds (:func:`session_privacy`), and its first two rounds' real draws tested
    against the structure's exact laws."""

    structure = SparseVectorRounds
    probe: QueryReleaserProbe
    declared: SparseVectorRounds

    @property
    def _releaser(self) -> QueryReleaser:
        return self.probe.releaser

    def law_inputs(self) -> tuple[int, ...]:
        base = (*self.probe.inputs, AT_THRESHOLD, AT_THRESHOLD_LABELS, UPDATE_TIME)
        return (*base, *_SECOND_ROUND) if self._releaser.workload.max_queries >= 2 else base

    def _law_value(self, value: int) -> int:
        return self.threshold_count if value in _AT_THRESHOLD else value

    @cached_property
    def threshold_count(self) -> int:
        """The v in [0, n] whose dataset {x₀: v} puts the gap of {x₀: 1}'s first answer,
        v·W − H, nearest the threshold τ."""
        ideal = (self.declared.threshold + self._first_hypothesis) / self._releaser.workload.grid
        return min(self._releaser.n, max(0, round(ideal)))

    @cached_property
    def _probe_query(self) -> SparseQuery:
        releaser = self._releaser
        return sparse_query({self.probe.labels()[0]: 1}, releaser.workload, releaser.universe)

    @cached_property
    def _first_hypothesis(self) -> int:
        return self.declared.hypothesis(self._probe_query, ())

    @cached_property
    def _second_hypothesis(self) -> int:
        """The declared hypothesis of {x₀: 1} after a first round that ended with its true
        answer on the threshold dataset (the condition of the second-round inputs)."""
        query, scaled = self._probe_query, self.threshold_count * self._releaser.workload.grid
        return self.declared.hypothesis(query, ((query, scaled),))

    def _law_point(self, value: int) -> tuple[int, int]:
        """(the true scaled answer, the hypothesis) of an input's tested query."""
        hypothesis = self._second_hypothesis if value in _SECOND_ROUND else self._first_hypothesis
        return self._law_value(value) * self._releaser.workload.grid, hypothesis

    def law_draw(self, value: int, size: int, source: RandomSource) -> npt.NDArray[Any]:
        """The tested outputs of *size* sessions (:func:`answer_output` of an answer, or for an
        update time the first of the repetitions of {x₀: 1} whose answer leaves the hypothesis,
        one past them for none); for a second-round input, from the sessions that meet its
        condition among at most :data:`SECOND_ROUND_ATTEMPTS`·*size*."""
        query, data = {self.probe.labels()[0]: 1}, self._law_dataset(value)
        scaled, hypothesis = self._law_point(value)
        second = value in _SECOND_ROUND
        outputs: list[int] = []
        for _ in range(SECOND_ROUND_ATTEMPTS * size if second else size):
            session = self._releaser.start(data, source)
            if second and not self._ended_as_conditioned(session.answer(query)):
                continue
            if value in (UPDATE_TIME, SECOND_UPDATE_TIME):
                outputs.append(self._update_time(session, hypothesis, self._update_queries(value)))
            else:
                answer = int(session.answer(query) * self.probe.scale)
                outputs.append(answer_output(self.declared, answer, scaled, hypothesis))
            if len(outputs) == size:
                break
        return np.array(outputs, dtype=np.int64)

    def _update_time(self, session: QueryAnswers, hypothesis: int, repetitions: int) -> int:
        """The first of *repetitions* answers to {x₀: 1} that leaves *hypothesis* (one past them
        for none)."""
        query = {self.probe.labels()[0]: 1}
        for t in range(1, repetitions + 1):
            if int(session.answer(query) * self.probe.scale) != hypothesis:
                return t
        return repetitions + 1

    def _ended_as_conditioned(self, first: Fraction) -> bool:
        """Whether a first answer ended the first round (it left the hypothesis) such that the
        declared hypothesis after it is :attr:`_second_hypothesis`."""
        answer, query = int(first * self.probe.scale), self._probe_query
        if answer == self._first_hypothesis:
            return False
        return self.declared.hypothesis(query, ((query, answer),)) == self._second_hypothesis

    def tested_law(self, value: int) -> tuple[Pmf, Any]:
        """The structure's law of :meth:`law_draw`'s outputs, exactly inside its enclosure, with
        the enclosure's width (for an update time, plus the chance that an update's answer
        equals the hypothesis)."""
        (scaled, hypothesis), bits = self._law_point(value), ENCLOSURE_PRECISIONS[0]
        if value in (UPDATE_TIME, SECOND_UPDATE_TIME):
            repetitions = self._update_queries(value)
            law, slack = update_time_law(self.declared, scaled, hypothesis, repetitions, bits)
            return law.nearest_pmf(1), law.width() + slack
        answer = first_answer_law(self.declared, scaled, hypothesis, bits)
        return answer.nearest_pmf(answer.high), answer.width()

    def _law_dataset(self, value: int) -> dict[Any, int]:
        """The dataset of an input (:data:`AT_THRESHOLD_LABELS` adds one row of each other probe
        label, x₅, x₄, …, as n allows, to :data:`AT_THRESHOLD`'s)."""
        data = self.probe.dataset(self._law_value(value))
        if value != AT_THRESHOLD_LABELS:
            return data
        labels, n = self.probe.labels(), self._releaser.n
        return data | dict.fromkeys(labels[:0:-1][: n - sum(data.values())], 1)

    def _update_queries(self, value: int) -> int:
        """The repetitions an update time counts: up to those the session has left."""
        left = self._releaser.workload.max_queries - (value == SECOND_UPDATE_TIME)
        return min(UPDATE_QUERIES, left)

    def show_input(self, value: int) -> str | None:
        if value in (AT_THRESHOLD, AT_THRESHOLD_LABELS):
            return f"{self._law_dataset(value)} (first gap nearest the threshold)"
        data = self.probe.dataset(self._law_value(value))
        if value == UPDATE_TIME:
            return f"{data}, which of {self._update_queries(value)} repetitions first ends a round"
        if value in _SECOND_ROUND:
            what = (
                "the second query's answer"
                if value == SECOND_ANSWER
                else f"which of {self._update_queries(value)} further repetitions first ends it"
            )
            return f"{data}, the second round after a first that ended at the first query: {what}"
        return None

    def exact_privacy(self, settings: Settings) -> PrivacyCheck:
        """The structure's sensitivity and scale against the workload, then the guarantee
        composed over its rounds (:func:`session_privacy`)."""
        rounds, grid, scale = self.declared, self._releaser.workload.grid, self.probe.scale
        if (rounds.sensitivity, rounds.scale) != (grid, scale):
            return PrivacyCheck(
                (
                    f"the declared sparse-vector structure has W = {rounds.sensitivity} and "
                    f"n·W = {rounds.scale}, but the workload's grid is W = {grid} and n·W = "
                    f"{scale}",
                ),
                "",
            )
        k = self._releaser.workload.max_queries
        failure, summary = session_privacy(rounds, self.probe.guarantee, k)
        return PrivacyCheck(() if failure is None else (failure,), summary)

    def implementation_check(self, settings: Settings) -> PrivacyCheck:
        return PrivacyCheck(
            (),
            "sparse-vector session not replayed (the sampling law tests its first two rounds "
            "against the structure's laws)",
            1.0,
        )
