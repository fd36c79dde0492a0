"""The verifier of :class:`~dpplug.kinds.query_releaser.structures.IndependentAnswers`: exact
privacy of an interactive session of independent answers, the declared (ε, δ) of k adaptively
chosen queries decided rigorously from the law of one answer
(docs/conformance.md#composed-sessions), and the session's code replayed and sampled against
the declared laws (:class:`IndependentAnswersVerifier`).

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
from fractions import Fraction
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any

import flint
import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.bounds import Ball, ball, lower, precise, upper
from dpplug.composition import MAX_OPTIMAL_STEPS, optimal_delta_at
from dpplug.conformance.bounded_replay import REPLAY_BUDGET, replay_against
from dpplug.conformance.coverage import Status, cell
from dpplug.conformance.divergence import ENCLOSURE_PRECISIONS, exact_text, summed_loss_divergence
from dpplug.conformance.privacy_check import PrivacyCheck
from dpplug.conformance.settings import Settings
from dpplug.conformance.structures.verifier import Verifier
from dpplug.enclosed_law import EnclosedLaw
from dpplug.errors import NotSupported
from dpplug.exact import Rat
from dpplug.guarantee import Guarantee
from dpplug.kinds.query_releaser.polynomial_law import PolynomialLaw
from dpplug.kinds.query_releaser.structures import IndependentAnswers
from dpplug.pmf import Pmf
from dpplug.randomness import RandomSource
from dpplug.surfaces import Dimension

if TYPE_CHECKING:
    from dpplug.conformance.probes.query_releaser.probe import QueryReleaserProbe
    from dpplug.kinds import QueryReleaser


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


def pair_law(first: PolynomialLaw, second: PolynomialLaw, bits: int = 128) -> EnclosedLaw:
    """The law of the sum of two independent answers of these laws, enclosed at *bits* bits:
    the coefficients of the product of their generating polynomials."""
    with precise(bits):
        polynomials = [
            flint.arb_poly([law.probability(z, (-1 / ball(law.scale)).exp()) for z in law.window()])
            for law in (first, second)
        ]
        product = polynomials[0] * polynomials[1]
        return EnclosedLaw.of_balls(first.low + second.low, product.coeffs(), bits)


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


#: The largest n·W whose declared answer laws are compared exactly (every pair of scaled answers
#: at most W apart); generated cases above it are dropped.
MAX_EXACT_SCALE = 2_000
#: The sampling law's input that stands for a session's later answers: answers 2 … k of sessions
#: on {x₀: ⌊n/2⌋} asked {x₀: 1} k times, pooled (:meth:`IndependentAnswersVerifier.law_draw`).
LATER_ANSWERS = -1
#: The sampling law's input that stands for a session's total: the sum of the k answers of a
#: session on {x₀: ⌊n/2⌋} asked {x₀: 1} k times, tested where k·n·W ≤ :data:`MAX_LOSS_STEPS`.
SESSION_TOTAL = -2
#: The sampling law's input that stands for a batch's order: the second answer of sessions on
#: {x₀: n} asked [{x₁: 1}, {x₀: 1}] in one ``answers`` call, whose law is the answer law at the
#: top (x₁'s true answer is 0), so a batch path that answers or returns its queries in another
#: order than the caller's is seen, while one that only draws its noises in another order is not.
MIXED_BATCH = -3
#: The sampling law's input that stands for two different queries: the total of the two answers
#: of sessions on {x₀: ⌊n/2⌋} (fewer rows than n) asked {x₀: 1} and then its complement in the
#: universe (every other label, weight 1; {x₁: 1} where the universe has more than m + 1 labels
#: or none is declared) in one ``answers`` call, whose law is the convolution of the two
#: answers' laws, so an answer computed from another's (a complement as n·W minus it, exact
#: only when the data has n rows) is seen.
PAIR_TOTAL = -4


class IndependentAnswersVerifier(Verifier):
    """A session of independent answers
    (:class:`~dpplug.kinds.query_releaser.structures.IndependentAnswers`): its guarantee from
    the answer laws composed over k adaptive answers (:func:`session_privacy`), its code
    replayed against them, and its first, later and total answers tested against them."""

    structure = IndependentAnswers
    tests_batch_law = True  # later answers and session totals are drawn through answers()
    probe: QueryReleaserProbe
    declared: IndependentAnswers

    @property
    def _releaser(self) -> QueryReleaser:
        return self.probe.releaser

    @cached_property
    def answer_laws(self) -> dict[int, PolynomialLaw]:
        """The declared law of an answer for every true scaled answer in [0, n·W]
        (``NotSupported`` past :data:`MAX_EXACT_SCALE`)."""
        return {s: self._answer_law(s) for s in range(self.probe.scale + 1)}

    def _answer_law(self, scaled: int) -> PolynomialLaw:
        if self.probe.scale > MAX_EXACT_SCALE:
            raise NotSupported(
                f"n·W = {self.probe.scale} is too large to compare every pair of scaled answers "
                f"(the limit is {MAX_EXACT_SCALE})"
            )
        return self.declared.answer_law(scaled)

    def _law_value(self, value: int) -> int:
        if value == MIXED_BATCH:
            return self._releaser.n
        middle = (LATER_ANSWERS, SESSION_TOTAL, PAIR_TOTAL)
        return self._releaser.n // 2 if value in middle else value

    def _pair(self) -> list[dict[Any, int]]:
        """{x₀: 1} and its complement (:data:`PAIR_TOTAL`)."""
        universe, sparsity = self._releaser.universe, self._releaser.workload.sparsity
        first, second = self.probe.labels(2)
        if universe is not None and universe.size - 1 <= sparsity:
            rest = [universe.label(i) for i in range(universe.size)]
            return [{first: 1}, {x: 1 for x in rest if x != first}]
        return [{first: 1}, {second: 1}]

    def law_inputs(self) -> tuple[int, ...]:
        """The first answer at both ends and the middle, and for a session of k ≥ 2 queries its
        later answers (:data:`LATER_ANSWERS`), a batch's order (:data:`MIXED_BATCH`) and its
        total (:data:`SESSION_TOTAL`, where k·n·W is at most :data:`MAX_LOSS_STEPS`)."""
        inputs = self.probe.inputs
        k = self._releaser.workload.max_queries
        if not self._releaser.interactive or k == 1:
            return inputs
        batch = (MIXED_BATCH, PAIR_TOTAL) if len(self.probe.labels(2)) == 2 else ()
        if k * self.probe.scale > MAX_LOSS_STEPS:
            return (*inputs, LATER_ANSWERS, *batch)
        return (*inputs, LATER_ANSWERS, *batch, SESSION_TOTAL)

    def law_draw(self, value: int, size: int, source: RandomSource) -> npt.NDArray[Any]:
        """The probe's first answers, or for :data:`LATER_ANSWERS` answers 2 … k of sessions on
        {x₀: ⌊n/2⌋} that ask {x₀: 1} k times, *size* of them pooled (independent draws of the
        middle's law under the declaration, so an answer whose law changes after the first is
        tested too); for :data:`SESSION_TOTAL` the totals of *size* such sessions' answers, whose
        law is the k-fold convolution of the middle's, so answers that depend on each other
        anywhere in the session (shared, reused or negated noise) are seen."""
        if value == MIXED_BATCH:
            return self._second_of_batches(size, source)
        if value == PAIR_TOTAL:
            data, pair = self.probe.dataset(self._law_value(value)), self._pair()
            totals = [
                sum(
                    int(a * self.probe.scale)
                    for a in self._releaser.start(data, source).answers(pair)
                )
                for _ in range(size)
            ]
            return np.array(totals, dtype=np.int64)
        if value not in (LATER_ANSWERS, SESSION_TOTAL):
            return self.probe.draw(value, size, source)
        probe = self.probe
        data, query = probe.dataset(self._law_value(value)), {probe.labels()[0]: 1}
        k = self._releaser.workload.max_queries
        outputs: list[int] = []
        while len(outputs) < size:
            released = self._releaser.start(data, source).answers([query] * k)
            answers = [int(a * probe.scale) for a in released]
            outputs += answers[1:] if value == LATER_ANSWERS else [sum(answers)]
        return np.array(outputs[:size], dtype=np.int64)

    def _second_of_batches(self, size: int, source: RandomSource) -> npt.NDArray[Any]:
        """:data:`MIXED_BATCH`'s draws: the second answer of *size* sessions."""
        probe = self.probe
        first, second = probe.labels(2)
        data = probe.dataset(self._law_value(MIXED_BATCH))
        batch = [{second: 1}, {first: 1}]
        outputs = [
            int(self._releaser.start(data, source).answers(batch)[1] * probe.scale)
            for _ in range(size)
        ]
        return np.array(outputs, dtype=np.int64)

    def tested_law(self, value: int) -> tuple[Pmf, Any]:
        """The first answer's declared law on {x₀: value} (the middle's for
        :data:`LATER_ANSWERS`; for :data:`SESSION_TOTAL` the law of the sum of k of its answers,
        :func:`summed_law`), as the exact law inside its enclosure nearest to its lower bounds,
        with the enclosure's width."""
        scaled = self._law_value(value) * self._releaser.workload.grid
        law = self._answer_law(scaled)
        if value == PAIR_TOTAL:  # the complement's true answer is 0: x₀ holds every row
            total = pair_law(law, self._answer_law(0))
            return total.nearest_pmf(scaled), total.width()
        if value == SESSION_TOTAL:
            k = self._releaser.workload.max_queries
            total = summed_law(law, k)
            return total.nearest_pmf(k * scaled), total.width()
        enclosed = law.enclosed()
        return enclosed.nearest_pmf(scaled), enclosed.width()

    def small(self, settings: Settings) -> bool:
        """Sessions the exact check can compose: n·W at most :data:`MAX_EXACT_SCALE` (every pair
        of scaled answers is compared), and k and k·W within :data:`MAX_QUERIES` and
        :data:`MAX_LOSS_STEPS`."""
        if not self._releaser.interactive:
            return True
        workload = self._releaser.workload
        return (
            self.probe.scale <= MAX_EXACT_SCALE
            and workload.max_queries <= MAX_QUERIES
            and workload.max_queries * workload.grid <= MAX_LOSS_STEPS
        )

    def show_input(self, value: int) -> str | None:
        data = self.probe.dataset(self._law_value(value))
        if value == LATER_ANSWERS:
            return f"{data}, answers 2…k to the same query pooled"
        if value == SESSION_TOTAL:
            return f"{data}, the total of k answers to one query"
        if value == MIXED_BATCH:
            return f"{data}, the second answer of the batch [{{x₁: 1}}, {{x₀: 1}}]"
        if value == PAIR_TOTAL:
            return f"{data}, the total of the answers to {self._pair()}"
        return None

    @cached_property
    def _middle_law(self) -> EnclosedLaw | None:
        """The enclosed answer law on {x₀: ⌊n/2⌋} (``None`` past :data:`MAX_EXACT_SCALE`), for
        every β's accuracy bounds."""
        try:
            return self._answer_law(self._releaser.n // 2 * self._releaser.workload.grid).enclosed()
        except NotSupported:
            return None

    def accuracy_bounds(self, a: int, queries: int) -> tuple[str, Rat, Rat] | None:
        """Bounds on the probability that one of *queries* answers to {x₀: 1} on {x₀: ⌊n/2⌋}
        (the middle, where clamping helps least) errs by more than *a* grid units: the answers
        are independent (replayed in :meth:`implementation_check`), so it is 1 − (1 − p)^k for
        one answer's p, enclosed from the answer law."""
        scaled = self._releaser.n // 2 * self._releaser.workload.grid
        enclosed = self._middle_law
        if enclosed is None:
            return None
        near = range(max(enclosed.low, scaled - a), min(enclosed.high, scaled + a) + 1)
        inside_lo = sum((enclosed.bounds[z - enclosed.low][0] for z in near), mpq(0))
        inside_hi = sum((enclosed.bounds[z - enclosed.low][1] for z in near), enclosed.outside)
        inside_hi = min(mpq(1), inside_hi)
        data = self.probe.dataset(self._releaser.n // 2)
        what = f"{queries} answers to {{x₀: 1}} on {data}: the largest error exceeds a={a}"
        return what, 1 - inside_hi**queries, 1 - inside_lo**queries

    def exact_privacy(self, settings: Settings) -> PrivacyCheck:
        """The session's guarantee decided exactly over k adaptive answers
        (:func:`session_privacy`)."""
        workload = self._releaser.workload
        failure, summary = session_privacy(
            self.answer_laws, workload.grid, workload.max_queries, self.probe.guarantee
        )
        return PrivacyCheck(() if failure is None else (failure,), summary)

    def implementation_check(self, settings: Settings) -> PrivacyCheck:
        """Sessions replayed against the declared laws down to a budget of path probability
        (:func:`~dpplug.conformance.bounded_replay.replay_against`): the first answer on each
        dataset of :meth:`_replayed` (the same true answer from different data, so an answer
        that depends on more than its true answer is seen), and the first two answers to the
        same query and to two related ones (:meth:`_replayed_pairs`), against the product of
        their laws (so answers that share noise are seen)."""
        laws, worst, scale = self.answer_laws, mpq(0), self.probe.scale
        try:
            for data, query, scaled in self._replayed():
                call = partial(self._first_answer, data, query)
                what = f"the first answer to {query} on {data}"
                failure, unexplored = replay_against(call, laws[scaled].enclosed(), what)
                if failure is not None:
                    return PrivacyCheck((failure,), "")
                worst = max(worst, unexplored)
            data, query, scaled = self._replayed()[1]
            what = f"the first answer to {query} on {data} with another session open"
            call = partial(self._interleaved_answer, data, query)
            failure, unexplored = replay_against(call, laws[scaled].enclosed(), what)
            if failure is not None:
                return PrivacyCheck((failure,), "")
            worst = max(worst, unexplored)
            width, pair_unexplored = scale + 1, mpq(0)
            for data, queries, (first, second) in self._replayed_pairs():
                joint = _product(laws[first].enclosed(), laws[second].enclosed(), width)
                asked = "twice" if queries[0] == queries[1] else f"and {queries[1]}"
                what = f"the first two answers to {queries[0]} {asked} on {data}"
                failure, unexplored = replay_against(
                    partial(self._two_answers, data, queries),
                    joint,
                    what,
                    lambda y: f"answers ({y // width}, {y % width})",
                )
                if failure is not None:
                    return PrivacyCheck((failure,), "")
                pair_unexplored = max(pair_unexplored, unexplored)
        except NotSupported as exc:
            return PrivacyCheck((), f"answers not replayed: {exc}", 1.0)  # nothing of the code seen
        return PrivacyCheck(
            (),
            f"answers replayed against their declared laws on {len(self._replayed())} datasets "
            f"and in pairs down to path probability {exact_text(REPLAY_BUDGET)} (a deviation of "
            f"total variation above the unexplored mass is seen: {float(worst):.2g} for one "
            f"answer, {float(pair_unexplored):.2g} for a pair)",
            float(max(worst, pair_unexplored)),
            (
                cell("answer", Dimension.STATE, Status.EXACT, "answers with another session open"),
                cell("start", Dimension.FORMS, Status.EXACT, "labels of other types stay apart"),
            ),
        )

    def _replayed(self) -> list[tuple[dict[Any, int], dict[Any, Any], int]]:
        """(data, query, its true scaled answer): the empty data, {x₀: ⌊n/2⌋} and {x₀: n} asked
        {x₀: 1} (both clamped ends of [0, n·W] and the middle), and {x₀: ⌊n/2⌋} with one row of
        each other probe label, x₅, x₄, … as n allows, asked {x₀: 1, x₅: 1/W} (weights far apart:
        noise that follows one query's weights, not the workload's, is seen) and {x₀: 1, x₅: 0},
        whose true answer is the second's (so an answer that depends on the labels held, or how
        many, is seen)."""
        labels, n = self.probe.labels(), self._releaser.n
        grid = self._releaser.workload.grid
        x, others = labels[0], labels[:0:-1][: n - n // 2]
        middle = {x: n // 2}
        replayed: list[tuple[dict[Any, int], dict[Any, Any], int]] = [
            ({}, {x: 1}, 0),
            (middle, {x: 1}, n // 2 * grid),
            ({x: n}, {x: 1}, n * grid),
        ]
        twins = _twins(x, self._releaser)[: n - n // 2]
        if twins:  # labels that look like x₀ but are not it: distinct labels stay distinct
            replayed.append((middle | dict.fromkeys(twins, 1), {x: 1}, n // 2 * grid))
        if others:
            data = {x: n // 2} | dict.fromkeys(others, 1)
            if grid >= 2 and self._releaser.workload.sparsity >= 2:
                light: dict[Any, Any] = {x: 1, others[0]: Fraction(1, grid)}
                replayed.append((data, light, n // 2 * grid + 1))
            replayed.append((data, {x: 1, others[0]: 0}, n // 2 * grid))
        return replayed

    def _first_answer(self, data: object, query: object, source: RandomSource) -> int:
        return int(self._releaser.start(data, source).answer(query) * self.probe.scale)

    def _interleaved_answer(self, data: object, query: object, source: RandomSource) -> int:
        """The first answer of a session started before another session, on other data, was
        started and asked the same query: sessions of one releaser must not share state."""
        first = self._releaser.start(data, source)
        labels, n = self.probe.labels(), self._releaser.n
        other = self._releaser.start({labels[-1]: n}, source)
        other.answer(query)
        return int(first.answer(query) * self.probe.scale)

    def _replayed_pairs(
        self,
    ) -> list[tuple[dict[Any, int], tuple[dict[Any, Any], ...], tuple[int, int]]]:
        """(data, two queries, their true scaled answers): the last dataset of :meth:`_replayed`
        asked its query twice, and (with a second label x₅, W ≥ 2 and m ≥ 2) asked
        {x₀: 1, x₅: 1} then {x₀: 1, x₅: (W − 1)/W}, the same labels with other weights, whose
        true answers are W and W − 1 above its query's (so noise reused for a related query,
        not only for the same one, is seen)."""
        data, query, scaled = self._replayed()[-1]
        pairs: list[tuple[dict[Any, int], tuple[dict[Any, Any], ...], tuple[int, int]]] = [
            (data, (query, query), (scaled, scaled))
        ]
        workload = self._releaser.workload
        if len(query) == 2 and workload.grid >= 2 and workload.sparsity >= 2:
            x, other = query
            grid = workload.grid
            related = ({x: 1, other: 1}, {x: 1, other: Fraction(grid - 1, grid)})
            pairs.append((data, related, (scaled + grid, scaled + grid - 1)))
        return pairs

    def _two_answers(
        self, data: object, queries: tuple[dict[Any, Any], ...], source: RandomSource
    ) -> int:
        first, second = self._releaser.start(data, source).answers(queries)
        scale = self.probe.scale
        return int(first * scale) * (scale + 1) + int(second * scale)


def _twins(label: Any, releaser: QueryReleaser) -> list[Any]:
    """Labels the releaser's universe takes that differ from *label* but look like it (its text
    as bytes, or as a string, the integer it spells): none where a universe is declared (each
    holds one type)."""
    if releaser.universe is not None:
        return []
    text = label if isinstance(label, str) else str(label)
    found: list[Any] = [text.encode(), text] if not isinstance(label, str) else [text.encode()]
    return [twin for twin in found if twin != label]


def _product(first: EnclosedLaw, second: EnclosedLaw, width: int) -> EnclosedLaw:
    """Independent outputs a of *first* and b of *second* (both on [0, width)) as the single
    output a·width + b: the bounds multiply (nothing outside, as the laws have nothing
    outside)."""
    for law in (first, second):
        if law.low != 0 or law.high != width - 1 or law.outside:
            raise NotSupported("the answer law is not enclosed on every answer in [0, n·W]")
    bounds = tuple((la * lb, ha * hb) for la, ha in first.bounds for lb, hb in second.bounds)
    return EnclosedLaw(0, bounds, mpq(0), first.precision)
