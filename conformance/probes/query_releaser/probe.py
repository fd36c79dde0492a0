"""The probe of the query-releaser kind: small datasets over the first labels in, answers to
sparse queries out.

Input v is the dataset {x₀: v}, v = 0, ⌊n/2⌋ and n (one row added or removed moves v by one:
Blum & Roth's neighbours; the audit compares v = 0 and 1, and for a session ⌊n/2⌋ and
⌊n/2⌋ + 1); an output is the answer to the query {x₀: 1} in grid units, ⌊answer·n·W⌋ (for a
session, the first answer after :meth:`~dpplug.QueryReleaser.start`).

The exact checks and the sampling law belong to the structure the releaser declares
(:meth:`~dpplug.Mechanism.exact_structure`), each with its verifier in
:mod:`dpplug.conformance.structures`: independent answers (their laws composed over k adaptive
answers, the session's code replayed against them, first, later and total answers sampled),
sparse-vector rounds (each round's and answer's exact loss composed, the first two rounds
sampled) and noisy coordinates (the divergence of all T coordinates moved by one, the noise of
real releases sampled). A releaser that declares none has no exact law: exact privacy and the
sampling law are skipped, and the audit and the accuracy test check it on samples
(:attr:`Settings.releases` releases per input).

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

import copy
import functools
import math
import numbers
import pickle
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, partial
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.conformance.coverage import Status
from dpplug.conformance.privacy_check import PrivacyCheck
from dpplug.conformance.probes.base import (
    BETAS,
    EXACT_BETAS,
    LARGE,
    NOT_REPRODUCIBLE,
    AuditStatistic,
    Call,
    Check,
    Claim,
    DataSpace,
    ExactClaim,
    Probe,
    SampledClaim,
    hostile_rows_and_mappings,
    large_label_calls,
    power_edges,
    quantile_plot,
)
from dpplug.conformance.probes.query_releaser.concurrency import (
    THREADS,
    shared_session_problems,
)
from dpplug.conformance.probes.whole import whole_problems
from dpplug.conformance.settings import Settings
from dpplug.conformance.structures import Verifier, verifier_for
from dpplug.errors import BadParameter, DpplugError, NotSupported
from dpplug.kinds import QueryReleaser
from dpplug.kinds.query_releaser.projections import SparseProjection
from dpplug.kinds.query_releaser.queries import QueryAnswers
from dpplug.param_types import IntegerType
from dpplug.pmf import Pmf
from dpplug.randomness import RandomSource, SeededSource
from dpplug.surfaces import Dimension
from dpplug.universe import Universe

#: Labels the probe uses (the universe's first, or these when no universe is declared).
PROBE_LABELS = 6
#: The largest n for which n + 1 rows are passed as a list (reading them takes time ∝ n).
ROWS_LIMIT = 10_000
#: The most releases a sampled accuracy claim may take (each answers the k workload queries).
MAX_RELEASE_TRIALS = 50_000
#: The largest count of a label in the data the forms check passes as rows.
FORM_ROWS = 1000
#: Seeds at which a non-interactive release's hash is compared across data, and the most labels
#: of the data it is compared on.
HASH_SEEDS = 256
#: The fields of a sparse projection its law covers, and what is derived from them; its public
#: hash is compared across data by the hash check (every other field is fixed or
#: data-independent).
_LAW_FIELDS = frozenset({"sums", "_columns", "hash"})
MANY_LABELS = 256
#: The size case of the accuracy claims' stress test: n·W = 2^72, past every machine integer.
#: The universe of the placement claim: past 2^12 labels, with a tail no power of two divides.
PLACEMENT_UNIVERSE = (1 << 12) + 77
#: … and its n, where the schema takes it (its counts then pass a typical bound).
PLACEMENT_N = 1000
STRESS_N = 1 << 40
STRESS_GRID = 1 << 32
#: The most answers the audit of whole releases asks per input and batch, and the fewest
#: releases it draws.
AUDIT_ANSWERS = 8_192
MIN_AUDIT_SESSIONS = 200


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

    call_surfaces = ("start", "answer")
    law_surface = "start"

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

    def audit_statistics(self, settings: Settings) -> tuple[AuditStatistic, ...]:
        """The first answer, and for each pair (v, v + 1) a whole release's k answers asked one
        call at a time, counted above the cut between the two true answers (a session's later
        answers are where an unaccounted one shows; on a release that spends ε per answer,
        "all k above" is about e^{kε} times likelier on one side), and for a session the first
        answer with its public attributes (:meth:`_answer_and_state`). Each input draws at most
        :data:`AUDIT_ANSWERS` answers (no fewer than :data:`MIN_AUDIT_SESSIONS` releases)."""
        k = self.releaser.workload.max_queries
        sessions = max(MIN_AUDIT_SESSIONS, AUDIT_ANSWERS // k)
        whole = tuple(
            AuditStatistic(
                f"#answers ≥ {cut}/(n·W) of its k = {k}, one call each,",
                partial(self._answers_above, cut),
                str,
                ((a, b),),
                sessions,
                (("answer", Dimension.STATE),),
            )
            for a, b in self.pairs
            for cut in (a * self.releaser.workload.grid + -(-self.releaser.workload.grid // 2),)
        )
        state = (
            AuditStatistic(
                "the first answer with the session's public attributes after it,",
                self._answer_and_state,
                str,
                None,
                None,
                (("start", Dimension.WHOLE),),
            ),
        )
        return (
            AuditStatistic("", self.draw, self.show_output),
            *whole,
            *(state if self.releaser.interactive else ()),
        )

    def _answer_and_state(self, value: int, size: int, source: RandomSource) -> npt.NDArray[Any]:
        """For *size* sessions on :meth:`dataset` (*value*), the first answer and the session's
        public attributes after it, coded together (one code per distinct pair, shared by every
        input): a public attribute that reveals the answer's noise (a log of it) makes the pair
        tell neighbouring datasets apart, though each part alone follows its law."""
        codes: dict[tuple[int, str], int] = self.__dict__.setdefault("_state_codes", {})
        data, query = self.dataset(value), {probe_labels(self.releaser)[0]: 1}
        out = []
        for _ in range(size):
            release = self.releaser.start(data, source)
            answer = math.floor(release.answer(query) * self.scale)
            key = (answer, repr(sorted(_public_state(release).items())))
            out.append(codes.setdefault(key, len(codes)))
        return np.array(out, dtype=np.int64)

    def _answers_above(
        self, cut: int, value: int, size: int, source: RandomSource
    ) -> npt.NDArray[Any]:
        """For *size* releases on :meth:`dataset` (*value*), how many of k answers, asked one
        call at a time, alternating {x₀: 1} and {x₀: 1, x₁: 1} where the workload takes two
        labels (both answer v/n), are at least *cut* in grid units; a refusal (nothing more
        answered) ends a release's count."""
        labels = probe_labels(self.releaser, 2)
        queries = [{labels[0]: 1}, {labels[0]: 1, labels[1]: 1}]
        if self.releaser.workload.sparsity < 2 or len(set(labels)) < 2:
            queries = queries[:1]
        k, data, threshold = self.releaser.workload.max_queries, self.dataset(value), cut
        counts = np.zeros(size, dtype=np.int64)
        for i in range(size):
            release = self.releaser.start(data, source)
            for j in range(k):
                try:
                    answer = release.answer(queries[j % len(queries)])
                except NotSupported:
                    break
                counts[i] += answer * self.scale >= threshold
        return counts

    def law(self, value: int) -> Pmf:
        raise NotSupported(
            "an answer's probabilities (powers of e^(−1/b)) are irrational: its law is tested "
            "inside the enclosure its structure declares (tested_law)"
        )

    def labels(self, count: int = PROBE_LABELS) -> list[Any]:
        """The labels the probe uses (:func:`probe_labels`)."""
        return probe_labels(self.releaser, count)

    @cached_property
    def verifier(self) -> Verifier:
        """The verifier of the structure the releaser declares."""
        return verifier_for(self)

    @property
    def law_inputs(self) -> tuple[int, ...]:
        return self.verifier.law_inputs()

    def law_draw(self, value: int, size: int, source: RandomSource) -> npt.NDArray[Any]:
        return self.verifier.law_draw(value, size, source)

    def tested_law(self, value: int) -> tuple[Pmf, Any]:
        return self.verifier.tested_law(value)

    def small(self, settings: Settings) -> bool:
        """Cases the declared structure's exact checks can take (every case without one: only
        hygiene checks run on the generated ones)."""
        return self.verifier.small(settings)

    def show_input(self, value: int) -> str:
        shown = self.verifier.show_input(value)
        return str(self.dataset(value)) if shown is None else shown

    def show_output(self, value: int) -> str:
        return f"answer·n·W = {value}"

    def exact_privacy(self, settings: Settings) -> PrivacyCheck:
        return self.verifier.exact_privacy(settings)

    def implementation_check(self, settings: Settings) -> PrivacyCheck:
        return self.verifier.implementation_check(settings)

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
        return [
            *claims,
            *self._exact_claims(),
            *self._stress_claims(settings),
            *self._placement_claims(settings),
        ]

    def _exact_claims(self) -> list[Claim]:
        """The declared bounds at every β of :data:`EXACT_BETAS`, one answer's and k answers',
        where the structure bounds their failure probability from the declared law
        (:meth:`~dpplug.conformance.structures.verifier.Verifier.accuracy_bounds`): a claim
        fails when the lower bound exceeds β and holds when the upper bound is within it (a β
        the precision leaves open is left to the sampled claims)."""
        claims: list[Claim] = []
        k = self.releaser.workload.max_queries
        for beta in EXACT_BETAS:
            try:
                accuracy = self.releaser.accuracy(beta)
            except BadParameter:
                continue
            for a, queries in ((accuracy.per_query.a, 1), (accuracy.simultaneous.a, k)):
                bounds = self.verifier.accuracy_bounds(a, queries)
                if bounds is None:
                    return claims
                what, lo, hi = bounds
                exact = mpq(beta.numerator, beta.denominator)
                if lo > exact:
                    claims.append(ExactClaim(f"{what} (at least)", lo, beta))
                elif hi <= exact:
                    claims.append(ExactClaim(what, hi, beta))
        return claims

    def _stress_claims(self, settings: Settings) -> list[Claim]:
        """The first query's per-query bound at β = 1/20 on a case of the schema's largest n and
        grid W (up to 2^40 and 2^32), where n·W is past 2^63 and narrow or float arithmetic on
        scaled answers breaks, if the schema takes it."""
        found = self.variant({"n": STRESS_N, "grid": STRESS_GRID})
        if found is None:
            return []
        stressed = cast(QueryReleaserProbe, found)
        made = stressed.releaser
        beta = BETAS[0]
        a = made.accuracy(beta).per_query.a
        what = f"n = {STRESS_N}, W = {STRESS_GRID}: the first query's error exceeds a={a}"
        misses = partial(stressed._misses, settings.seed, "first", a)
        covers = (("start", Dimension.SIZE), ("answer", Dimension.SIZE))
        trials = self.sample_size(settings) // 4
        return [SampledClaim(what, beta, trials, misses, MAX_RELEASE_TRIALS // 4, covers)]

    def _placement_claims(self, settings: Settings) -> list[Claim]:
        """The simultaneous bound at β = 1/20 over a universe of :data:`PLACEMENT_UNIVERSE`
        labels, where the schema takes one: data on labels spread across it (the first, both
        sides of 2^6, 2^8, 2^10 and 2^12, where chunked code starts a chunk, and the last), each
        with its own count, and k queries cycling over those labels; so code keyed to where a
        label sits in a large universe (a chunk, an index table) is read."""
        universe = f"range:0:{PLACEMENT_UNIVERSE - 1}"
        n = max(PLACEMENT_N, self.releaser.n)
        found = self.variant({"universe": universe, "n": n}) or self.variant({"universe": universe})
        if found is None:
            return []
        releaser = cast(QueryReleaserProbe, found).releaser
        n, workload = releaser.n, releaser.workload
        labels = sorted({0, *power_edges((6, 8, 10, 12)), PLACEMENT_UNIVERSE - 1})[:n]
        base = max(1, n // (2 * len(labels)))
        step = int(len(labels) * base + len(labels) * (len(labels) - 1) // 2 <= n)
        data = {x: base + step * j for j, x in enumerate(labels)}
        width = min(workload.sparsity, len(labels))
        queries = [
            {labels[(i * width + t) % len(labels)]: Fraction(1) for t in range(width)}
            for i in range(workload.max_queries)
        ]
        truth = [true_answer(q, data, n) for q in queries]
        scale, beta = n * workload.grid, BETAS[0]
        a = releaser.accuracy(beta).simultaneous.a

        def misses(trials: int) -> int:
            source, count = SeededSource(settings.seed), 0
            for _ in range(trials):
                answers = releaser.start(data, source).answers(queries)
                count += max(abs(x - t) * scale for x, t in zip(answers, truth, strict=True)) > a
            return count

        what = (
            f"over range:0:{PLACEMENT_UNIVERSE - 1}, data on the labels {labels}: the largest "
            f"error of {len(queries)} queries on them exceeds a={a} grid units"
        )
        covers = (("start", Dimension.SIZE), ("answers", Dimension.SIZE))
        trials = self.sample_size(settings) // 4
        return [SampledClaim(what, beta, trials, misses, MAX_RELEASE_TRIALS // 4, covers)]

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
        drawing, and so does any copy of it (``copy.copy``, ``copy.deepcopy``); a
        non-interactive release answers the same after a round trip through its bytes."""
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

    # Along the other cells of the surface × dimension matrix.

    def checks(self, settings: Settings) -> list[Check]:
        plan = Check(
            (("central_plan", Dimension.STATE),),
            "hygiene",
            Status.CHECKED,
            "the central plan's finish step run twice on the same counts and public randomness: "
            "fresh noise each time",
            lambda s: self._plan_problems(s.seed),
        )
        return [
            *(() if self.releaser.interactive else (plan,)),
            Check(
                (("start", Dimension.FORMS),),
                "hygiene",
                Status.CHECKED,
                "the same data in every form",
                lambda s: self._form_problems(s.seed),
            ),
            Check(
                (("answers", Dimension.LAW), ("answers", Dimension.BATCH)),
                "hygiene",
                Status.CHECKED,
                "a workload answered in one call and one query per call alike (from one seed, "
                "or in law where the structure's law tests draw whole workloads)",
                lambda s: self._batch_problems(s.seed),
            ),
            Check(
                (("start", Dimension.WHOLE),),
                "hygiene",
                Status.CHECKED,
                "a release carries the mechanism's declaration, and its public part does not "
                "depend on the data",
                lambda s: self._whole_problems(s.seed),
            ),
            Check(
                (("answer", Dimension.STATE),),
                "hygiene",
                Status.CHECKED,
                f"sessions shared by {THREADS} threads answer at most k queries in all",
                lambda s: self._shared_session_problems(s.seed),
            ),
            Check(
                (("answers", Dimension.STATE), ("answer", Dimension.STATE)),
                "hygiene",
                Status.CHECKED,
                "repeated queries count against k: a batch of k + 1 copies of one query is "
                "refused, and after a batch of k copies so is one more answer",
                lambda s: self._repeated_problems(s.seed),
            ),
        ]

    def _repeated_problems(self, seed: int) -> list[str]:
        """An interactive session counts every answer it gives against k, a repeated query's
        too (each answer has its own noise): ``answers`` of k + 1 copies of one query must be
        refused (NotSupported) and, after ``answers`` of k copies, one more ``answer`` too."""
        if not self.releaser.interactive:
            return []
        k = self.releaser.workload.max_queries
        query = workload_queries(self.releaser, seed)[0]
        data = self._datasets()["one label"]
        session = self.releaser.start(data, SeededSource(seed))
        try:
            given = session.answers([query] * (k + 1))
        except NotSupported:
            pass
        else:
            return [f"answers() of {k + 1} copies of one query gave {len(given)} answers, k = {k}"]
        session = self.releaser.start(data, SeededSource(seed))
        session.answers([query] * k)
        try:
            session.answer(query)
        except NotSupported:
            return []
        return [f"after answers() of {k} copies of one query, another answer was given (k = {k})"]

    def _shared_session_problems(self, seed: int) -> list[str]:
        """An interactive releaser's sessions keep their k-answer bound under threads
        (:mod:`.concurrency`)."""
        if not self.releaser.interactive:
            return []
        query = workload_queries(self.releaser, seed)[0]
        return shared_session_problems(self.releaser, self._datasets()["one label"], query, seed)

    def _forms(self, data: dict[Any, int]) -> list[tuple[str, object]]:
        rows = [label for label, count in data.items() for _ in range(count)]
        forms: list[tuple[str, object]] = [
            ("rows", rows),
            ("a tuple of rows", tuple(rows)),
            ("a generator of rows", (row for row in rows)),
            ("a Counter", Counter(data)),
            ("numpy counts", {label: np.int64(count) for label, count in data.items()}),
        ]
        if rows and all(isinstance(label, int) for label in rows):
            forms.append(("a numpy array of labels", np.array(rows, dtype=np.int64)))
        return forms

    def _form_problems(self, seed: int) -> list[str]:
        """Each form of each small mapping (counts capped at :data:`FORM_ROWS`, as rows cost
        one item each) gives, from the same seed, the answers of the mapping to the workload."""
        queries = workload_queries(self.releaser, seed)
        for name, full in self._datasets().items():
            if not isinstance(full, dict) or not full:
                continue
            data = {label: min(count, FORM_ROWS) for label, count in full.items()}
            expected = self._release_answers(queries, data, SeededSource(seed))
            for form, given in self._forms(data):
                if self._release_answers(queries, given, SeededSource(seed)) != expected:
                    return [
                        f"the {name} data {data} passed as {form} gave other answers from the "
                        "same seed than as a mapping"
                    ]
        return []

    def _batch_problems(self, seed: int) -> list[str]:
        """``answers(workload)`` and one ``answer`` per query give the same answers from the same
        seed (a session validates a batch, then answers it query by query), unless the
        structure's sampling-law tests draw whole workloads through ``answers``
        (:attr:`~...structures.verifier.Verifier.tests_batch_law`): the batch path may then draw
        in its own order, held to the law there."""
        queries = workload_queries(self.releaser, seed)
        for name, data in self._datasets().items():
            together = self.releaser.start(data, SeededSource(seed)).answers(queries)
            release = self.releaser.start(data, SeededSource(seed))
            one_by_one = [release.answer(query) for query in queries]
            if together != one_by_one and not self.verifier.tests_batch_law:
                return [
                    f"{name} data: answers(workload) gave {together[:3]}…, one answer per call "
                    f"{one_by_one[:3]}… from the same seed"
                ]
        return []

    def _whole_problems(self, seed: int) -> list[str]:
        """A non-interactive release is exactly a dpplug SparseProjection with the mechanism's
        declaration, and its hash does not depend on the data (the same from one seed on the
        empty data and on data of many labels, at :data:`HASH_SEEDS` seeds); a session's
        declaration is the mechanism's."""
        releaser = self.releaser
        declaration = releaser.declaration()
        reference = None
        for name, data in self._datasets().items():
            release = releaser.start(data, SeededSource(seed))
            if release.declaration != declaration:
                return [f"{name} data: the release's declaration is not the mechanism's"]
            if not releaser.interactive and isinstance(release, SparseProjection):
                problems = whole_problems(
                    releaser,
                    release,
                    (SparseProjection,),
                    {"declaration": declaration},
                    _LAW_FIELDS,
                    reference,
                )
                if problems:
                    return [f"{name} data: {problems[0]}"]
                reference = release
        if releaser.interactive:
            return []
        for made in self._variants():
            problems = _hash_problems(made, seed)
            if problems:
                return problems
        return []

    def _variants(self) -> list[QueryReleaser]:
        """This case, and each of it with one integer parameter other than the workload's at
        the lowest value the schema takes (small parameters make rare paths common: a
        projection of one dimension has colliding columns)."""
        releaser = self.releaser
        made = [releaser]
        workload = {"n", "max_queries", "sparsity", "grid"}
        for param in type(releaser).schema:
            if (
                not isinstance(param.type, IntegerType)
                or param.name in workload
                or param.low is None
            ):
                continue
            try:
                other = releaser.registry_in_use().create(
                    releaser.name, **{**self.params, param.name: int(param.low)}
                )
            except DpplugError:
                continue
            if isinstance(other, QueryReleaser):
                made.append(other)
        return made

    def _plan_problems(self, seed: int) -> list[str]:
        """For a release PipelineDP's engines make (:meth:`~dpplug.QueryReleaser.central_plan`):
        the plan folded over the middle dataset's label counts, then its finish step run twice
        on the same counts and public randomness. The two releases must differ: noise that is a
        function of the data and of what the release publishes can be recomputed and removed.
        A correct plan's two releases agree only if every one of their noisy values does, each
        with probability at most its noise's largest point mass."""
        releaser = self.releaser
        plan = type(releaser).central_plan()
        public = plan.public(releaser.params, SeededSource(seed))
        data = self.dataset(self.inputs[len(self.inputs) // 2])
        values = [plan.per_bin(public, label, count) for label, count in data.items() if count]
        folded = functools.reduce(plan.combine, values) if values else plan.empty
        first, second = (plan.finish(releaser, public, folded) for _ in range(2))
        if _shown_release(first) == _shown_release(second):
            return [
                "its central plan released the same thing twice from the same counts and public "
                "randomness: the noise is not drawn afresh (a function of the data and of what "
                "the release publishes can be recomputed and subtracted)"
            ]
        return []

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
        query = {probe_labels(self.releaser)[0]: 1}
        before = source.draws
        try:
            release.answer(query)
            problems.append("a session answered a query past the k-th")
        except DpplugError:
            if source.draws != before:
                problems.append("a session drew randomness before refusing a query past the k-th")
        for how, duplicate in (("copy.copy", copy.copy), ("copy.deepcopy", copy.deepcopy)):
            try:
                twin = duplicate(release)
            except Exception:  # refusing to be duplicated, in any way, keeps the budget
                continue
            try:
                twin.answer(query)
                problems.append(
                    f"{how} of a session that answered its k queries answers one more: a "
                    "duplicate must share the session's budget or refuse to be made"
                )
            except Exception:  # any refusal of the duplicate keeps the budget
                pass
        return problems


def _shown_release(release: object) -> object:
    """What a release shows: its bytes where it has them, else its answers' text."""
    to_bytes = getattr(release, "to_bytes", None)
    return to_bytes() if to_bytes is not None else repr(release)


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


def _hash_problems(releaser: QueryReleaser, seed: int) -> list[str]:
    """The hash of a non-interactive release from one seed is the same on the empty data and on
    data of every label the probe uses (as n allows), at :data:`HASH_SEEDS` seeds: its public
    part does not depend on the data."""
    many = dict.fromkeys(probe_labels(releaser, min(releaser.n, MANY_LABELS)), 1)
    for s in range(seed, seed + HASH_SEEDS):
        empty = releaser.start({}, SeededSource(s))
        full = releaser.start(many, SeededSource(s))
        if getattr(empty, "hash", None) != getattr(full, "hash", None):
            return [
                f"{releaser!r}: from seed {s}, the release's hash on the empty data and on "
                f"{len(many)} labels differ: its public part depends on the data"
            ]
    return []
