"""The probe of the query-releaser kind: small datasets over the first labels in, answers to
sparse queries out.

Input v is the dataset {x₀: v}, v = 0, ⌊n/2⌋ and n (one row added or removed moves v by one:
Blum & Roth's neighbours; the audit compares v = 0 and 1, and for a session ⌊n/2⌋ and
⌊n/2⌋ + 1); an output
is the answer to the query {x₀: 1} in grid units, ⌊answer·n·W⌋ (for a session, the first answer
after :meth:`~dpplug.QueryReleaser.start`), or for the sampling law the first answer's exact
value, and for a session also its later answers pooled (:data:`LATER_ANSWERS`).

A releaser that declares the law of its answers (:meth:`~dpplug.QueryReleaser.answer_law`:
answers independent given the queries, each a function of its true answer) is verified exactly
(docs/conformance.md#composed-sessions): the session's guarantee over k adaptive answers from
the per-answer laws (:mod:`..composed_session`), its code replayed against them down to a budget
of path probability (:meth:`QueryReleaserProbe.implementation_check`), and the first answer's
real draws tested against the law inside its enclosure (:meth:`QueryReleaserProbe.tested_law`);
cases with n·W above :data:`MAX_EXACT_SCALE` are too large and generated ones are dropped. A
non-interactive releaser that declares the noise of its coordinates
(:meth:`~dpplug.QueryReleaser.coordinate_noise`: T coordinates, each moved by at most one by a
row, with independent noise) is verified exactly too
(docs/conformance.md#projected-coordinates): its guarantee as the divergence of all T
coordinates moved by one (:mod:`..coordinate_privacy`), and the noise its releases report
(:meth:`~dpplug.QueryReleaser.release_noise`) tested against the declared law. The others,
whose answers depend on each other (a sparse vector's threshold), have no exact law: exact
privacy and the sampling law are skipped, and the audit and the accuracy test check them on
samples (:attr:`Settings.releases` releases per input).

Accuracy is tested on a fixed workload of k m-sparse queries, chosen (from a seeded generator
that draws nothing of the mechanism's) before any release, on a dataset over the first labels:
the largest error of each release against the declared simultaneous a, and the first query's
error against the per-query a, with as many releases as the contract's power asks (at most
:data:`MAX_RELEASE_TRIALS`), made once and shared by every claim. Hygiene starts releases on
small datasets and checks the answers (exact fractions in [0, 1]), their independence of how a
query lists its labels, their reproducibility from the seed, and that nothing private shows: a
session's public attributes do not depend on the data, it cannot be pickled, and it refuses a
query past the k-th without drawing; a non-interactive release answers the same after a round
trip through its bytes. Its :meth:`calls` pass mappings and rows, with fraction and float
queries, for the generic checks that the caller's objects and the global generators are left
as they were.
"""

from __future__ import annotations

import math
import numbers
import pickle
import random
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, partial
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.conformance.bounded_replay import REPLAY_BUDGET, replay_against
from dpplug.conformance.composed_session import (
    MAX_LOSS_STEPS,
    MAX_QUERIES,
    session_privacy,
    summed_law,
)
from dpplug.conformance.coordinate_privacy import coordinate_privacy
from dpplug.conformance.divergence import ENCLOSURE_PRECISIONS, exact_text
from dpplug.conformance.probes.base import (
    BETAS,
    LARGE,
    NOT_REPRODUCIBLE,
    Call,
    Claim,
    DataSpace,
    PrivacyCheck,
    Probe,
    SampledClaim,
    hostile_rows_and_mappings,
    large_label_calls,
    quantile_plot,
)
from dpplug.conformance.settings import Settings
from dpplug.conformance.sparse_vector_session import (
    UPDATE_QUERIES,
    answer_output,
    first_answer_law,
    update_time_law,
)
from dpplug.conformance.sparse_vector_session import (
    session_privacy as sparse_vector_privacy,
)
from dpplug.enclosed_law import EnclosedLaw
from dpplug.errors import BadParameter, DpplugError, NotSupported
from dpplug.kinds import QueryReleaser
from dpplug.kinds.query_releaser.polynomial_law import PolynomialLaw
from dpplug.kinds.query_releaser.queries import QueryAnswers, SparseQuery, sparse_query
from dpplug.kinds.query_releaser.sparse_vector import SparseVectorRounds
from dpplug.pmf import Pmf
from dpplug.randomness import RandomSource, SeededSource
from dpplug.universe import Universe

#: Labels the probe uses (the universe's first, or these when no universe is declared).
PROBE_LABELS = 6
#: The largest n for which n + 1 rows are passed as a list (reading them takes time ∝ n).
ROWS_LIMIT = 10_000
#: The largest n·W whose declared answer laws are compared exactly (every pair of scaled answers
#: at most W apart); generated cases above it are dropped.
MAX_EXACT_SCALE = 2_000
#: The most coordinates whose declared noise is checked exactly (the T-th power of one
#: coordinate's loss polynomial).
MAX_COORDINATES = 4096
#: The most releases a sampled accuracy claim may take (each answers the k workload queries).
MAX_RELEASE_TRIALS = 50_000
#: The sampling law's input that stands for a session's later answers: answers 2 … k of sessions on
#: {x₀: ⌊n/2⌋} asked {x₀: 1} k times, pooled (:meth:`QueryReleaserProbe.law_draw`).
LATER_ANSWERS = -1
#: The sampling law's input that stands for a session's total: the sum of the k answers of a
#: session on {x₀: ⌊n/2⌋} asked {x₀: 1} k times (:meth:`QueryReleaserProbe.law_draw`), tested
#: where k·n·W ≤ :data:`~..composed_session.MAX_LOSS_STEPS`.
SESSION_TOTAL = -2
#: The sampling law's input, for a sparse-vector session, that stands for the first answer on the
#: dataset {x₀: v} whose first query's gap is nearest the threshold (:meth:`QueryReleaserProbe
#: .threshold_count`): where the round's test decides, about half the time each way.
AT_THRESHOLD = -3
#: The sampling law's input, for a sparse-vector session, that stands for the update time on that
#: dataset: which of up to :data:`~..sparse_vector_session.UPDATE_QUERIES` repetitions of {x₀: 1}
#: first ends a round (its answer leaves the hypothesis).
UPDATE_TIME = -4
#: The sampling law's input, for a sparse-vector session, that stands for the first answer on
#: :data:`AT_THRESHOLD`'s dataset with one row of each other probe label added, as n allows: the
#: same true answer and the same declared law, so a hypothesis or a test that depends on more
#: than the query (the labels held, or how many) is seen.
AT_THRESHOLD_LABELS = -5
#: The sampling law's inputs, for a sparse-vector session of k ≥ 2 queries, that stand for the
#: second round on :data:`AT_THRESHOLD`'s dataset: in the sessions whose first query ended the
#: first round with an answer after which the declared hypothesis is the one an update at the
#: true answer gives, the second query's answer, and which of the further repetitions first
#: ends the second round. Under the structure the second round is fresh given that event.
SECOND_ANSWER = -6
SECOND_UPDATE_TIME = -7
#: Sessions a second-round input may start per sample it keeps (the rest are discarded by its
#: condition: about half at the threshold).
SECOND_ROUND_ATTEMPTS = 8
_SECOND_ROUND = (SECOND_ANSWER, SECOND_UPDATE_TIME)
NO_EXACT_LAW = (
    "it declares neither the law of its answers (answer_law: its answers are not independent "
    "given the queries), a sparse-vector structure (sparse_vector) nor its coordinates' noise "
    "(coordinate_noise), and its noise's probabilities (powers of e^(−1/b)) are irrational, so "
    "no exact law of a release exists; the audit and the accuracy contract check it on samples"
)


def probe_labels(releaser: QueryReleaser, count: int = PROBE_LABELS) -> list[Any]:
    """The first *count* labels of the universe, or "x0", "x1", … without one."""
    universe = releaser.universe
    if universe is None:
        return [f"x{i}" for i in range(count)]
    return [universe.label(i) for i in range(min(count, universe.size))]


def workload_queries(releaser: QueryReleaser, seed: int) -> list[dict[Any, Fraction]]:
    """k random m-sparse queries over the probe labels, from a seeded generator that builds test
    inputs only: uniform supports, weights uniform on the grid 1/W."""
    rng = random.Random(seed)
    labels = probe_labels(releaser)
    workload = releaser.workload
    queries = []
    for _ in range(workload.max_queries):
        support = rng.sample(labels, min(workload.sparsity, len(labels)))
        queries.append({x: Fraction(rng.randint(1, workload.grid), workload.grid) for x in support})
    return queries


def true_answer(query: dict[Any, Fraction], data: dict[Any, int], n: int) -> Fraction:
    """Q(D) = (1/n)·Σ_x Q(x)·c_x."""
    return sum((w * data.get(x, 0) for x, w in query.items()), Fraction(0)) / n


@dataclass(frozen=True)
class _Errors:
    """Per release: the first query's error and the largest error, in grid units."""

    first: npt.NDArray[np.float64]
    largest: npt.NDArray[np.float64]


class QueryReleaserProbe(Probe):
    """A query releaser on datasets over its first labels (see the module docstring)."""

    @property
    def releaser(self) -> QueryReleaser:
        return cast(QueryReleaser, self.mechanism)

    @property
    def scale(self) -> int:
        return self.releaser.n * self.releaser.workload.grid

    def dataset(self, value: int) -> dict[Any, int]:
        return {probe_labels(self.releaser)[0]: value} if value else {}

    @property
    def inputs(self) -> tuple[int, ...]:
        """Both ends of the range and the middle: {x₀: 0}, {x₀: ⌊n/2⌋} and {x₀: n}, whose true
        answers to {x₀: 1} are 0, about half and the top, n·W (the two clamped ends)."""
        return (0, self.releaser.n // 2, self.releaser.n)

    @property
    def pairs(self) -> tuple[tuple[int, int], ...]:
        """One row added to {x₀: 0}, and for a session to {x₀: ⌊n/2⌋} too (where a first answer
        far from an initial hypothesis comes from the data)."""
        middle = self.releaser.n // 2
        if self.releaser.interactive and middle >= 1:
            return ((0, 1), (middle, middle + 1))
        return ((0, 1),)

    def sample_size(self, settings: Settings) -> int:
        return settings.releases

    def draw(self, value: int, size: int, source: RandomSource) -> npt.NDArray[Any]:
        data, query = self.dataset(value), {probe_labels(self.releaser)[0]: 1}
        answers = [self.releaser.start(data, source).answer(query) for _ in range(size)]
        return np.array([math.floor(a * self.scale) for a in answers], dtype=np.int64)

    def law(self, value: int) -> Pmf:
        raise NotSupported(NO_EXACT_LAW)

    @property
    def law_inputs(self) -> tuple[int, ...]:
        """The first answer at both ends and the middle (:attr:`inputs`), and for a session of
        k ≥ 2 queries its later answers (:data:`LATER_ANSWERS`) and its total
        (:data:`SESSION_TOTAL`, where k·n·W is at most
        :data:`~..composed_session.MAX_LOSS_STEPS`)."""
        if self.declares_sparse_vector:
            base = (*self.inputs, AT_THRESHOLD, AT_THRESHOLD_LABELS, UPDATE_TIME)
            second = (SECOND_ANSWER, SECOND_UPDATE_TIME)
            return (*base, *second) if self.releaser.workload.max_queries >= 2 else base
        k = self.releaser.workload.max_queries
        if not self.releaser.interactive or k == 1:
            return self.inputs
        if k * self.scale > MAX_LOSS_STEPS:
            return (*self.inputs, LATER_ANSWERS)
        return (*self.inputs, LATER_ANSWERS, SESSION_TOTAL)

    def _law_value(self, value: int) -> int:
        if value in (AT_THRESHOLD, AT_THRESHOLD_LABELS, UPDATE_TIME, *_SECOND_ROUND):
            return self.threshold_count
        return self.releaser.n // 2 if value in (LATER_ANSWERS, SESSION_TOTAL) else value

    @cached_property
    def threshold_count(self) -> int:
        """For a sparse-vector session: the v in [0, n] whose dataset {x₀: v} puts the gap of
        {x₀: 1}'s first answer, v·W − H, nearest the threshold τ."""
        ideal = (self._rounds.threshold + self._first_hypothesis) / self.releaser.workload.grid
        return min(self.releaser.n, max(0, round(ideal)))

    @cached_property
    def _rounds(self) -> SparseVectorRounds:
        """The declared sparse-vector structure (a mechanism does not change once built)."""
        return self.releaser.sparse_vector()

    @cached_property
    def _probe_query(self) -> SparseQuery:
        releaser, x = self.releaser, probe_labels(self.releaser)[0]
        return sparse_query({x: 1}, releaser.workload, releaser.universe)

    @cached_property
    def _first_hypothesis(self) -> int:
        return self._rounds.hypothesis(self._probe_query, ())

    @cached_property
    def _second_hypothesis(self) -> int:
        """The declared hypothesis of {x₀: 1} after a first round that ended with its true
        answer on the threshold dataset (the condition of the second-round inputs)."""
        query, scaled = self._probe_query, self.threshold_count * self.releaser.workload.grid
        return self._rounds.hypothesis(query, ((query, scaled),))

    def _law_point(self, value: int) -> tuple[int, int]:
        """(the true scaled answer, the hypothesis) of a sparse-vector input's tested query."""
        hypothesis = self._second_hypothesis if value in _SECOND_ROUND else self._first_hypothesis
        return self._law_value(value) * self.releaser.workload.grid, hypothesis

    def law_draw(self, value: int, size: int, source: RandomSource) -> npt.NDArray[Any]:
        """:meth:`draw`'s first answers, or for :data:`LATER_ANSWERS` answers 2 … k of sessions
        on {x₀: ⌊n/2⌋} that ask {x₀: 1} k times, *size* of them pooled: a declared answer law
        makes them independent draws of the middle's law, so an answer whose law changes after
        the first (less noise for the last query, say) is tested too, diluted 1/(k − 1) when
        only one of them departs; for :data:`SESSION_TOTAL` the totals of *size* such sessions'
        answers, whose law under a declared answer law is the k-fold convolution of the
        middle's, so answers that depend on each other anywhere in the session (shared,
        reused or negated noise) are seen (docs/conformance.md#composed-sessions). With declared
        coordinate noise, the noise of every coordinate
        (:meth:`~dpplug.QueryReleaser.release_noise`) of ⌈size/T⌉ releases on {x₀: value}, the
        first *size* of them (independent when the declaration holds)."""
        if self.declares_sparse_vector:
            return self._sparse_vector_draw(value, size, source)
        if self.declares_coordinate_noise:
            releaser, data = self.releaser, self.dataset(value)
            noise: list[int] = []
            while len(noise) < size:
                noise += releaser.release_noise(releaser.start(data, source), data)
            return np.array(noise[:size], dtype=np.int64)
        if value not in (LATER_ANSWERS, SESSION_TOTAL):
            return self.draw(value, size, source)
        data, query = self.dataset(self._law_value(value)), {probe_labels(self.releaser)[0]: 1}
        k = self.releaser.workload.max_queries
        outputs: list[int] = []
        while len(outputs) < size:
            answers = [
                int(a * self.scale) for a in self.releaser.start(data, source).answers([query] * k)
            ]
            outputs += answers[1:] if value == LATER_ANSWERS else [sum(answers)]
        return np.array(outputs[:size], dtype=np.int64)

    def _sparse_vector_draw(self, value: int, size: int, source: RandomSource) -> npt.NDArray[Any]:
        """A sparse-vector session's tested outputs from *size* sessions
        (:func:`~..sparse_vector_session.answer_output` of an answer, or for an update time the
        first of the repetitions of {x₀: 1} whose answer leaves the hypothesis, one past them for
        none); for a second-round input, from the sessions that meet its condition among at most
        :data:`SECOND_ROUND_ATTEMPTS`·*size*."""
        query, data = {probe_labels(self.releaser)[0]: 1}, self._law_dataset(value)
        scaled, hypothesis = self._law_point(value)
        second = value in _SECOND_ROUND
        outputs: list[int] = []
        for _ in range(SECOND_ROUND_ATTEMPTS * size if second else size):
            session = self.releaser.start(data, source)
            if second and not self._ended_as_conditioned(session.answer(query)):
                continue
            if value in (UPDATE_TIME, SECOND_UPDATE_TIME):
                outputs.append(self._update_time(session, hypothesis, self._update_queries(value)))
            else:
                answer = int(session.answer(query) * self.scale)
                outputs.append(answer_output(self._rounds, answer, scaled, hypothesis))
            if len(outputs) == size:
                break
        return np.array(outputs, dtype=np.int64)

    def _update_time(self, session: QueryAnswers, hypothesis: int, repetitions: int) -> int:
        """The first of *repetitions* answers to {x₀: 1} that leaves *hypothesis* (one past them
        for none)."""
        query = {probe_labels(self.releaser)[0]: 1}
        for t in range(1, repetitions + 1):
            if int(session.answer(query) * self.scale) != hypothesis:
                return t
        return repetitions + 1

    def _ended_as_conditioned(self, first: Fraction) -> bool:
        """Whether a first answer ended the first round (it left the hypothesis) such that the
        declared hypothesis after it is :attr:`_second_hypothesis`."""
        answer, query = int(first * self.scale), self._probe_query
        if answer == self._first_hypothesis:
            return False
        return self._rounds.hypothesis(query, ((query, answer),)) == self._second_hypothesis

    def _sparse_vector_law(self, value: int) -> tuple[Pmf, Any]:
        """The structure's law of :meth:`_sparse_vector_draw`'s outputs, exactly inside its
        enclosure, with the enclosure's width (for an update time, plus the chance that an
        update's answer equals the hypothesis)."""
        (scaled, hypothesis), bits = self._law_point(value), ENCLOSURE_PRECISIONS[0]
        if value in (UPDATE_TIME, SECOND_UPDATE_TIME):
            repetitions = self._update_queries(value)
            law, slack = update_time_law(self._rounds, scaled, hypothesis, repetitions, bits)
            return law.nearest_pmf(1), law.width() + slack
        answer = first_answer_law(self._rounds, scaled, hypothesis, bits)
        return answer.nearest_pmf(answer.high), answer.width()

    def _law_dataset(self, value: int) -> dict[Any, int]:
        """The dataset of a sampling-law input (:data:`AT_THRESHOLD_LABELS` adds one row of each
        other probe label, x₅, x₄, …, as n allows, to :data:`AT_THRESHOLD`'s)."""
        data = self.dataset(self._law_value(value))
        if value != AT_THRESHOLD_LABELS:
            return data
        labels, n = probe_labels(self.releaser), self.releaser.n
        return data | dict.fromkeys(labels[:0:-1][: n - sum(data.values())], 1)

    def _update_queries(self, value: int) -> int:
        """The repetitions an update time counts: up to those the session has left."""
        left = self.releaser.workload.max_queries - (value == SECOND_UPDATE_TIME)
        return min(UPDATE_QUERIES, left)

    @property
    def declares_sparse_vector(self) -> bool:
        """Whether the releaser declares :meth:`~dpplug.QueryReleaser.sparse_vector`."""
        return type(self.releaser).sparse_vector is not QueryReleaser.sparse_vector

    @property
    def declares_answer_law(self) -> bool:
        """Whether the releaser declares :meth:`~dpplug.QueryReleaser.answer_law`."""
        return type(self.releaser).answer_law is not QueryReleaser.answer_law

    @cached_property
    def answer_laws(self) -> dict[int, PolynomialLaw]:
        """The declared law of an answer for every true scaled answer in [0, n·W]
        (``NotSupported`` where the releaser declares none, or n·W is above
        :data:`MAX_EXACT_SCALE`)."""
        return {s: self._answer_law(s) for s in range(self.scale + 1)}

    def _answer_law(self, scaled: int) -> PolynomialLaw:
        if not self.declares_answer_law:
            raise NotSupported(NO_EXACT_LAW)
        if self.scale > MAX_EXACT_SCALE:
            raise NotSupported(
                f"n·W = {self.scale} is too large to compare every pair of scaled answers (the "
                f"limit is {MAX_EXACT_SCALE})"
            )
        return self.releaser.answer_law(scaled)

    @property
    def declares_coordinate_noise(self) -> bool:
        """Whether the releaser declares :meth:`~dpplug.QueryReleaser.coordinate_noise`."""
        return type(self.releaser).coordinate_noise is not QueryReleaser.coordinate_noise

    def tested_law(self, value: int) -> tuple[Pmf, Any]:
        """The first answer's declared law on {x₀: value} (scaled answer value·W; the middle's
        for :data:`LATER_ANSWERS`; for :data:`SESSION_TOTAL` the law of the sum of k of its
        answers, :func:`~..composed_session.summed_law`), or with declared coordinate noise the
        noise law of a coordinate, as the exact law inside its enclosure nearest to its lower
        bounds, with the enclosure's width."""
        if self.declares_coordinate_noise:
            noise = self.releaser.coordinate_noise().enclosed(ENCLOSURE_PRECISIONS[0])
            return noise.nearest_pmf(0), noise.width()
        if self.declares_sparse_vector:
            return self._sparse_vector_law(value)
        scaled = self._law_value(value) * self.releaser.workload.grid
        law = self._answer_law(scaled)
        if value == SESSION_TOTAL:
            k = self.releaser.workload.max_queries
            total = summed_law(law, k)
            return total.nearest_pmf(k * scaled), total.width()
        enclosed = law.enclosed()
        return enclosed.nearest_pmf(scaled), enclosed.width()

    def small(self, settings: Settings) -> bool:
        """Every case without answer laws or coordinate noise (only hygiene checks run on the
        generated ones); with coordinate noise, at most :data:`MAX_COORDINATES` coordinates and
        a noise narrow enough to enclose; with answer laws, those whose session the exact check
        can compose: n·W at most
        :data:`MAX_EXACT_SCALE` (every pair of scaled answers is compared) and k and k·W within
        :data:`~..composed_session.MAX_QUERIES` and :data:`~..composed_session.MAX_LOSS_STEPS`."""
        if self.declares_coordinate_noise:
            noise = self.releaser.coordinate_noise()
            if noise.coordinates > MAX_COORDINATES:
                return False
            try:
                noise.enclosed(ENCLOSURE_PRECISIONS[0])
            except NotSupported:
                return False
            return True
        if not self.releaser.interactive or not self.declares_answer_law:
            return True  # sparse-vector sessions too: their checks cost the same at any scale
        workload = self.releaser.workload
        return (
            self.scale <= MAX_EXACT_SCALE
            and workload.max_queries <= MAX_QUERIES
            and workload.max_queries * workload.grid <= MAX_LOSS_STEPS
        )

    def show_input(self, value: int) -> str:
        if value in (AT_THRESHOLD, AT_THRESHOLD_LABELS):
            return f"{self._law_dataset(value)} (first gap nearest the threshold)"
        if value == UPDATE_TIME:
            return (
                f"{self.dataset(self._law_value(value))}, which of "
                f"{self._update_queries(value)} repetitions first ends a round"
            )
        if value in _SECOND_ROUND:
            what = (
                "the second query's answer"
                if value == SECOND_ANSWER
                else f"which of {self._update_queries(value)} further repetitions first ends it"
            )
            return (
                f"{self.dataset(self._law_value(value))}, the second round after a first that "
                f"ended at the first query: {what}"
            )
        if value == LATER_ANSWERS:
            return f"{self.dataset(self._law_value(value))}, answers 2…k to the same query pooled"
        if value == SESSION_TOTAL:
            return f"{self.dataset(self._law_value(value))}, the total of k answers to one query"
        return str(self.dataset(value))

    def show_output(self, value: int) -> str:
        return f"answer·n·W = {value}"

    def exact_privacy(self, settings: Settings) -> PrivacyCheck:
        """For a releaser that declares its answer laws: the session's guarantee decided exactly
        over k adaptive answers (:func:`~dpplug.conformance.composed_session.session_privacy`)."""
        if self.declares_coordinate_noise:
            noise = self.releaser.coordinate_noise()
            if noise.coordinates > MAX_COORDINATES:
                raise NotSupported(
                    f"T = {noise.coordinates} coordinates are too many to check exactly (the "
                    f"limit is {MAX_COORDINATES})"
                )
            failure, summary = coordinate_privacy(noise, self.guarantee)
            return PrivacyCheck(() if failure is None else (failure,), summary)
        if self.declares_sparse_vector:
            rounds, grid = self._rounds, self.releaser.workload.grid
            if (rounds.sensitivity, rounds.scale) != (grid, self.scale):
                return PrivacyCheck(
                    (
                        f"the declared sparse-vector structure has W = {rounds.sensitivity} and "
                        f"n·W = {rounds.scale}, but the workload's grid is W = {grid} and n·W = "
                        f"{self.scale}",
                    ),
                    "",
                )
            k = self.releaser.workload.max_queries
            failure, summary = sparse_vector_privacy(rounds, self.guarantee, k)
            return PrivacyCheck(() if failure is None else (failure,), summary)
        workload = self.releaser.workload
        laws = self.answer_laws
        failure, summary = session_privacy(
            laws, workload.grid, workload.max_queries, self.guarantee
        )
        return PrivacyCheck(() if failure is None else (failure,), summary)

    def implementation_check(self, settings: Settings) -> PrivacyCheck:
        """For a releaser that declares its answer laws: sessions replayed against them down to a
        budget of path probability (:func:`~dpplug.conformance.bounded_replay.replay_against`):
        the first answer on each dataset of :meth:`_replayed` (the same true answer from
        different data, so an answer that depends on more than its true answer is seen), and
        the first two answers to the same query and to two related ones
        (:meth:`_replayed_pairs`), against the product of their laws (so answers that share
        noise are seen)."""
        if self.declares_coordinate_noise:
            return PrivacyCheck(
                (), "coordinate noise not replayed (the sampling law tests its law)", 1.0
            )
        if self.declares_sparse_vector:
            return PrivacyCheck(
                (),
                "sparse-vector session not replayed (the sampling law tests its first two rounds "
                "against the structure's laws)",
                1.0,
            )
        if not self.declares_answer_law:
            return PrivacyCheck((), "")
        laws, worst = self.answer_laws, mpq(0)
        try:
            for data, query, scaled in self._replayed():
                call = partial(self._first_answer, data, query)
                what = f"the first answer to {query} on {data}"
                declared = laws[scaled].enclosed()
                failure, unexplored = replay_against(call, declared, what)
                if failure is not None:
                    return PrivacyCheck((failure,), "")
                worst = max(worst, unexplored)
            width, pair_unexplored = self.scale + 1, mpq(0)
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
        )

    def _replayed(self) -> list[tuple[dict[Any, int], dict[Any, int], int]]:
        """(data, query, its true scaled answer): the empty data, {x₀: ⌊n/2⌋} and {x₀: n} asked
        {x₀: 1} (both clamped ends of [0, n·W] and the middle), and {x₀: ⌊n/2⌋} with one row of
        each other probe label, x₅, x₄, … as n allows, asked {x₀: 1, x₅: 0}, whose true answer is
        the second's (so an answer that depends on the labels held, or how many, is seen)."""
        labels, n, grid = probe_labels(self.releaser), self.releaser.n, self.releaser.workload.grid
        x, others = labels[0], labels[:0:-1][: n - n // 2]
        middle = {x: n // 2}
        replayed = [({}, {x: 1}, 0), (middle, {x: 1}, n // 2 * grid), ({x: n}, {x: 1}, n * grid)]
        if others:
            data = {x: n // 2} | dict.fromkeys(others, 1)
            replayed.append((data, {x: 1, others[0]: 0}, n // 2 * grid))
        return replayed

    def _first_answer(self, data: object, query: object, source: RandomSource) -> int:
        return int(self.releaser.start(data, source).answer(query) * self.scale)

    def _replayed_pairs(
        self,
    ) -> list[tuple[dict[Any, int], tuple[dict[Any, Any], ...], tuple[int, int]]]:
        """(data, two queries, their true scaled answers): the last dataset of :meth:`_replayed`
        asked its query twice, and (with a second label x₅ and W ≥ 2) asked {x₀: 1, x₅: 1} then
        {x₀: 1, x₅: (W − 1)/W}, the same labels with other weights, whose true answers are W
        and W − 1 above its query's (so noise reused for a related query, not only for the same
        one, is seen)."""
        data, query, scaled = self._replayed()[-1]
        pairs: list[tuple[dict[Any, int], tuple[dict[Any, Any], ...], tuple[int, int]]] = [
            (data, (query, query), (scaled, scaled))
        ]
        grid = self.releaser.workload.grid
        if len(query) == 2 and grid >= 2:
            x, other = query
            related = ({x: 1, other: 1}, {x: 1, other: Fraction(grid - 1, grid)})
            pairs.append((data, related, (scaled + grid, scaled + grid - 1)))
        return pairs

    def _two_answers(
        self, data: object, queries: tuple[dict[Any, Any], ...], source: RandomSource
    ) -> int:
        first, second = self.releaser.start(data, source).answers(queries)
        return int(first * self.scale) * (self.scale + 1) + int(second * self.scale)

    # Accuracy: a fixed workload on a dataset over the first labels.

    def _accuracy_data(self) -> dict[Any, int]:
        labels, n = probe_labels(self.releaser), self.releaser.n
        return {labels[0]: n // 2, labels[-1]: n // 4}

    def _errors(self, size: int, seed: int) -> _Errors:
        """The errors of *size* seeded releases of the workload; releases are made once and
        reused by every claim (a claim wanting fewer takes the first ones)."""
        cache: dict[int, _Errors] = self.__dict__.setdefault("_error_tables", {})
        if seed not in cache or len(cache[seed].first) < size:
            data, n = self._accuracy_data(), self.releaser.n
            queries = workload_queries(self.releaser, seed)
            truth = [true_answer(q, data, n) for q in queries]
            source = SeededSource(seed)
            first, largest = [], []
            for _ in range(size):
                answers = self.releaser.start(data, source).answers(queries)
                errors = [abs(a - t) * self.scale for a, t in zip(answers, truth, strict=True)]
                first.append(float(errors[0]))
                largest.append(float(max(errors)))
            cache[seed] = _Errors(np.array(first), np.array(largest))
        found = cache[seed]
        return _Errors(found.first[:size], found.largest[:size])

    def _bounds(self) -> list[tuple[Any, int, int]]:
        """(β, per-query a, simultaneous a) at each β the releaser declares accuracy for."""
        bounds = []
        for beta in BETAS:
            try:
                accuracy = self.releaser.accuracy(beta)
            except BadParameter:
                continue
            bounds.append((beta, accuracy.per_query.a, accuracy.simultaneous.a))
        return bounds

    def accuracy_claims(self, settings: Settings) -> list[Claim]:
        claims: list[Claim] = []
        trials, k = self.sample_size(settings), self.releaser.workload.max_queries
        for beta, per_query, simultaneous in self._bounds():
            for which, what, a in (
                ("first", f"the first of {k} queries: error > a={per_query}", per_query),
                ("largest", f"the largest error of {k} queries > a={simultaneous}", simultaneous),
            ):
                misses = partial(self._misses, settings.seed, which, a)
                claims.append(
                    SampledClaim(f"{what} grid units", beta, trials, misses, MAX_RELEASE_TRIALS)
                )
        return claims

    def _misses(self, seed: int, which: str, a: int, trials: int) -> int:
        return int(np.count_nonzero(getattr(self._errors(trials, seed), which) > a))

    def accuracy_plot(self, settings: Settings) -> dict[str, Any]:
        claims = {beta: simultaneous for beta, _, simultaneous in self._bounds()}
        if not claims:
            return {}
        case = f"{self.where}, the largest error of {self.releaser.workload.max_queries} queries"
        errors = self._errors(self.sample_size(settings), settings.seed)
        return quantile_plot(case, errors.largest, claims)

    # Bad input.

    def _bad_labels(self) -> list[object]:
        universe = self.releaser.universe
        candidates: list[object] = [1.5, None, True, (0,), frozenset(), object()]
        if universe is not None:
            candidates += [-1, universe.size, 10**30, "\udc80", "z" * 1000, b"\xff" * 1000]
        return [x for x in candidates if universe is None or x not in universe]

    def bad_data(self, source: SeededSource) -> list[tuple[str, Callable[[], object]]]:
        """Data: labels outside the universe or of the wrong type, more than n rows, counts that
        are negative, above n or not integers, and wrong types. Queries to a started release:
        not mappings, weights that are not numbers in [0, 1], more than m labels, unknown labels;
        and to a session, a query past the k-th."""
        releaser, n = self.releaser, self.releaser.n
        x = probe_labels(releaser)[0]
        calls: list[tuple[str, Callable[[], object]]] = []
        bad_data: list[object] = [[label] for label in self._bad_labels()]
        bad_data += [{label: 1} for label in self._bad_labels()]
        bad_data += [{x: n + 1}, {x: n, probe_labels(releaser)[-1]: 1}, {x: -1}, {x: 0.5}]
        bad_data += [{x: True}, {x: "1"}, {x: None}]
        if n <= ROWS_LIMIT:
            bad_data.append([x] * (n + 1))
        bad_data += ["ab", b"ab", 5, 1.5, None, object(), [[x]], [{x: 1}]]
        calls += [(f"start({d!r})", partial(releaser.start, d, source)) for d in bad_data]
        release = releaser.start({x: 1}, source)
        for query in self._bad_queries():
            calls.append((f"answer({query!r})", partial(release.answer, query)))
        if releaser.interactive:
            session = releaser.start({x: 1}, source)
            for query in workload_queries(releaser, 0):
                session.answer(query)
            calls.append(("a query past the k-th", partial(session.answer, {x: 1})))
        return calls

    def _bad_queries(self) -> list[object]:
        releaser = self.releaser
        m = releaser.workload.sparsity
        labels = probe_labels(releaser, m + 1)
        x = labels[0]
        queries: list[object] = ["a", [x], None, 5, {x: math.nan}, {x: math.inf}, {x: -0.5}]
        queries += [{x: 1.5}, {x: "0.5"}, {x: None}, {x: True}, {x: 2}]
        queries += [{label: 1} for label in self._bad_labels()]
        if len(labels) > m:
            queries.append(dict.fromkeys(labels, 1))
        return queries

    def data_space(self) -> DataSpace:
        """Rows and label → count mappings with labels sometimes valid."""
        universe, n = self.releaser.universe, self.releaser.n
        known = probe_labels(self.releaser, 3)
        data = hostile_rows_and_mappings(known, n, min(n, 6) + 2)

        def valid(given: object) -> bool:
            if isinstance(given, dict):
                counts = list(given.values())
                return (
                    all(_valid_label(x, universe) for x in given)
                    and all(_is_count(c, n) for c in counts)
                    and sum(counts) <= n
                )
            return (
                isinstance(given, list)
                and len(given) <= n
                and all(_valid_label(x, universe) for x in given)
            )

        return DataSpace(data, valid, self.releaser.start)

    # Hygiene.

    def _datasets(self) -> dict[str, Any]:
        labels, n = probe_labels(self.releaser, 3), self.releaser.n
        return {
            "empty": {},
            "one label": {labels[0]: n},
            "two labels": {labels[0]: n // 2, labels[-1]: n - n // 2},
            "rows": [labels[i % len(labels)] for i in range(min(n, 12))],
        }

    def calls(self, seed: int) -> list[Call]:
        """A release of each hygiene dataset (mappings and rows) answering the workload, once
        with weights as fractions and once as floats; each of the caller's queries is an input
        too (compared one by one, so a query rewritten in place, reordered say, is seen)."""
        queries = workload_queries(self.releaser, seed)
        floats = [{x: float(w) for x, w in q.items()} for q in queries]
        return [
            Call(
                f"start({name} data).answers({kind} queries)",
                partial(self._release_answers, workload, data),
                (data, *workload),
            )
            for name, data in self._datasets().items()
            for kind, workload in (("fraction", queries), ("float", floats))
        ]

    def _release_answers(
        self, queries: list[dict[Any, Any]], data: object, source: RandomSource
    ) -> list[Fraction]:
        return self.releaser.start(data, source).answers(queries)

    def large_calls(self, seed: int) -> list[Call]:
        """A release of a mapping over up to 2¹⁶ labels and of as many rows (at most n)."""
        queries = workload_queries(self.releaser, seed)
        labels = probe_labels(self.releaser, LARGE)
        call = partial(self._release_answers, queries)
        return large_label_calls("start", call, labels, self.releaser.n, seed)

    def hygiene_problems(self, strict: bool, seed: int) -> list[str]:
        """Answers are fractions in [0, 1], the same whatever order a query lists its labels in
        and from the same seed, drawn from the source; a session's public attributes do not
        depend on the data, it cannot be pickled and it refuses a query past the k-th without
        drawing; a non-interactive release answers the same after a round trip through its
        bytes."""
        releaser = self.releaser
        queries = workload_queries(releaser, seed)
        shuffled = [dict(reversed(list(q.items()))) for q in queries]
        problems: list[str] = []
        public: dict[str, dict[str, Any]] = {}
        for name, data in self._datasets().items():
            source = SeededSource(seed)
            release = releaser.start(data, source)
            if not isinstance(release, QueryAnswers) or release.interactive != releaser.interactive:
                return [
                    f"start() returned a {type(release).__name__}, not the declared kind of "
                    f"dpplug QueryAnswers (interactive={releaser.interactive})"
                ]
            public[name] = _public_state(release)
            answers = release.answers(queries)
            bad = [a for a in answers if not (isinstance(a, Fraction) and 0 <= a <= 1)]
            if bad:
                problems.append(f"data {data}: answers {bad} are not fractions in [0, 1]")
            if source.draws == 0:
                problems.append(f"data {data}: drew nothing from the RandomSource")
            if releaser.start(data, SeededSource(seed)).answers(shuffled) != answers:
                problems.append(f"data {data}: the answers depend on the order of a query's labels")
            if releaser.start(data, SeededSource(seed)).answers(queries) != answers:
                problems.append(f"data {data}: {NOT_REPRODUCIBLE}")
            problems += [f"data {data}: {p}" for p in self._release_problems(release, source)]
        if releaser.interactive:
            problems += _data_dependent(public)
        return problems

    def _release_problems(self, release: QueryAnswers, source: SeededSource) -> list[str]:
        if not release.interactive:
            to_bytes = getattr(release, "to_bytes", None)
            if to_bytes is None:
                return []
            again = type(release).from_bytes(to_bytes(), self.releaser.registry)  # type: ignore[attr-defined]
            queries = workload_queries(self.releaser, 1)
            if again.answers(queries) != release.answers(queries):
                return ["the release answers differently after a round trip through its bytes"]
            return []
        problems = []
        try:
            pickle.dumps(release)
            problems.append("a session holding the data can be pickled")
        except DpplugError:
            pass
        before = source.draws
        try:
            release.answer({probe_labels(self.releaser)[0]: 1})
            problems.append("a session answered a query past the k-th")
        except DpplugError:
            if source.draws != before:
                problems.append("a session drew randomness before refusing a query past the k-th")
        return problems


def _product(first: EnclosedLaw, second: EnclosedLaw, width: int) -> EnclosedLaw:
    """Independent outputs a of *first* and b of *second* (both on [0, width)) as the single
    output a·width + b: the bounds multiply (nothing outside, as the laws have nothing
    outside)."""
    for law in (first, second):
        if law.low != 0 or law.high != width - 1 or law.outside:
            raise NotSupported("the answer law is not enclosed on every answer in [0, n·W]")
    bounds = tuple((la * lb, ha * hb) for la, ha in first.bounds for lb, hb in second.bounds)
    return EnclosedLaw(0, bounds, mpq(0), first.precision)


def _data_dependent(public: dict[str, dict[str, Any]]) -> list[str]:
    """The public attributes of sessions on different data (by dataset name) that differ."""
    names = {name for state in public.values() for name in state}
    differing = sorted(n for n in names if len({repr(s.get(n)) for s in public.values()}) > 1)
    if not differing:
        return []
    shown = {name: {data: state.get(name) for data, state in public.items()} for name in differing}
    return [f"a session's public attributes depend on the data: {shown}"]


def _public_state(release: QueryAnswers) -> dict[str, Any]:
    return {k: v for k, v in vars(release).items() if not k.startswith("_")}


def _valid_label(label: object, universe: Universe | None) -> bool:
    if universe is not None:
        return label in universe
    if isinstance(label, bool | np.bool_):
        return False
    return isinstance(label, str | bytes | numbers.Integral)


def _is_count(value: object, n: int) -> bool:
    return (
        isinstance(value, numbers.Integral) and not isinstance(value, bool) and 0 <= int(value) <= n
    )
