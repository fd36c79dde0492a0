"""The probe of the anonymized-histogram-releaser kind: tiny anonymized histograms in, released
histograms out.

Input k is the k-th histogram of :data:`CHAIN`, in which consecutive histograms are neighbours
(one count changes by one; the first step makes a count of 1 appear). An output is coded as one
integer: the released total (capped at 15), then φ₁…φ₄ of the release (each capped at 7) and
whether it has a count above 4, so that the audit's events "= code" are exact small outputs and
"≥ code" events are about the total first.

Exact privacy (:meth:`AnonymizedProbe.exact_privacy`), for a releaser that declares
:class:`~dpplug.structures.ServedDraws`: every pair of neighbouring histograms of at most
:data:`EXACT_ITEMS` items is compared by the coupled likelihood ratio of the noise transcripts of
the real ``release_prevalences``, its served noise requests replayed
(:mod:`~dpplug.conformance.structures.noise_window`): each request's exact ratio over all its
outcomes (geometric tails in closed form), multiplied along the enumerated histories, the outputs
equal at the leaves. For a one-request release (the sorted histogram) this is the whole law; for an
adaptive one (PrivHist's blocks) the histories are a window and the mechanism's docstring proves the
rest (each pair replays the release along every enumerated history, so only the declared cases are
checked). The code checked is the code that releases: there is no separate declaration it could
depart from. Generated cases (:mod:`~dpplug.conformance.generated`) are kept when e^ε is at least
:data:`MIN_SMALL_EXP_EPSILON` and the mechanism takes every histogram the checks use.

Sampling law (:meth:`AnonymizedProbe.law`, :meth:`AnonymizedProbe.law_draw`): real releases of
the empty histogram, in the declared case with the least noise, each put in a cell by the noise
transcript it recorded: its output's code when the transcript is in the window of probability
≥ :data:`WINDOW`, else one of the cells of transcripts leaving the window, all of exact
probability.

Accuracy follows the mechanism's ``accuracy_scope``: the released total against n, or the
released counts rank by rank (per query for the first ranks, and all ranks at once). Hygiene
releases small histograms in every input form (rows sorted and shuffled, a mapping,
prevalences), which must give the same release from the same seed, and checks that each call
leaves the caller's data and the global generators as they were.
"""

from __future__ import annotations

import numbers
import time
from collections import Counter
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq
from hypothesis import strategies as st

from dpplug.conformance.coverage import Status
from dpplug.conformance.divergence import exact_text
from dpplug.conformance.privacy_check import PrivacyCheck
from dpplug.conformance.probes.base import (
    BETAS,
    LARGE,
    NOT_REPRODUCIBLE,
    Call,
    Check,
    Claim,
    DataSpace,
    Probe,
    SampledClaim,
    large_label_calls,
    quantile_plot,
    strict_time_problems,
)
from dpplug.conformance.probes.whole import whole_problems
from dpplug.conformance.settings import Settings
from dpplug.conformance.structures import verifier_for
from dpplug.conformance.structures.noise_window import (
    RADIUS,
    Cell,
    Replays,
    cell_of,
    coupled_ratio,
    window_law,
)
from dpplug.conformance.structures.served_draws import ServedDrawsVerifier
from dpplug.errors import DpplugError, NotSupported
from dpplug.kinds import AccuracyScope, AnonymizedHistogramReleaser, Prevalences
from dpplug.kinds.anonymized_histogram_releaser.outputs import AnonymizedHistogram
from dpplug.param_text import params_text
from dpplug.param_types import IntegerType
from dpplug.pmf import Pmf
from dpplug.program import recording
from dpplug.randomness import RandomSource, SeededSource
from dpplug.surfaces import Dimension

#: Sorted counts of the probed histograms; consecutive entries are neighbours.
CHAIN: tuple[tuple[int, ...], ...] = ((), (1,), (2,), (2, 1), (2, 2), (3, 2), (3, 3), (4, 3))
#: The exact check compares every pair of neighbouring histograms with at most this many items.
EXACT_ITEMS = 6
#: The fields of a release its law covers (every other one is fixed or data-independent).
_LAW_FIELDS = frozenset({"prevalences", "total"})
#: Accuracy is tested on releases of this histogram (sorted counts).
ACCURACY_DATA = (6, 4, 4, 2, 1, 1)
#: Neighbouring pairs of large histograms (sorted counts) the size check compares exactly: the
#: number of labels crossing 2^6 and 2^10 (where code working in blocks starts a new one) and a
#: round 5000, a count crossing 2^31, many distinct counts, and one count of thousands (past
#: the square root of the items, where PrivHist's large counts start).
LARGE_PAIRS = (
    ((1,) * 64, (1,) * 65),
    ((1,) * 1024, (1,) * 1025),
    ((1,) * 5000, (1,) * 5001),
    (((1 << 31) - 1,), (1 << 31,)),
    (tuple(range(1100, 0, -1)), (1101, *range(1099, 0, -1))),
    ((5000,), (5001,)),
)
#: The most items of a pair of LARGE_PAIRS an adaptive release is compared on.
ADAPTIVE_ITEMS = 1 << 20
#: … and, simultaneously, on these, chosen to stress it: many labels, and a count past 2^31
#: (where a release costs at most STRESS_SECONDS of CPU).
STRESS_DATA = ((*([100] * 40), *([1] * 24)), ((1 << 31) + 5, 3, 1))
STRESS_SECONDS = 0.02
#: Per-query accuracy is tested on this many ranks.
ACCURACY_RANKS = 3
#: The most releases a sampled accuracy claim may take.
MAX_RELEASE_TRIALS = 50_000
#: Hygiene releases per dataset and input form.
RELEASES = 16
#: Small histograms the hygiene contract releases in every input form (sorted counts): the
#: last three share their number of labels, or that and their total, with one before them, so
#: state kept under a key of the data's shape is seen on an instance with another history.
HYGIENE_DATA: tuple[tuple[int, ...], ...] = (
    (),
    (1,),
    (3, 1, 1),
    (5, 2, 2, 1),
    (2,),
    (4, 1),
    (3, 2),
)
#: Distinct labels that look alike: integers equal modulo 2^32 and 2^64, text and bytes.
LOOKALIKE_LABELS: tuple[object, ...] = (1, 1 + (1 << 32), 1 + (1 << 64), "1", b"1", -1)
#: Generated cases whose e^ε is below this draw too much noise for the checks' many releases.
MIN_SMALL_EXP_EPSILON = mpq(5, 4)
_CAPS = (15, 7)  # the total, and each of φ₁…φ₄, in the output code
#: The sampling law's window: the noise transcripts of at least this probability.
WINDOW = mpq(1, 20_000)
#: The codes of the cells of transcripts leaving the window start here (above every output's).
LEFT_CODES = 16 * 2 * 8**4


def partitions(n: int, largest: int | None = None) -> Iterator[tuple[int, ...]]:
    """Every anonymized histogram of exactly n items, as non-increasing count tuples."""
    largest = n if largest is None else largest
    if n == 0:
        yield ()
        return
    for first in range(min(n, largest), 0, -1):
        for rest in partitions(n - first, first):
            yield (first, *rest)


def neighbours(counts: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The histograms one count above *counts* (a count grows by one, or a count of 1
    appears), so that every neighbouring pair is listed once."""
    found = {
        tuple(sorted((*counts[:i], c + 1, *counts[i + 1 :]), reverse=True))
        for i, c in enumerate(counts)
    }
    found.add((*counts, 1))
    return sorted(found)


def _neighbouring_pairs() -> Iterator[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Every neighbouring pair of histograms with at most :data:`EXACT_ITEMS` items, once."""
    for n in range(EXACT_ITEMS):
        for counts in partitions(n):
            for other in neighbours(counts):
                yield counts, other


def prevalences_of(counts: tuple[int, ...]) -> Prevalences:
    return Prevalences.of_counts(counts)


def _shown(counts: tuple[int, ...]) -> str:
    return "{" + ", ".join(map(str, counts)) + "}"


class AnonymizedProbe(Probe):
    """An anonymized-histogram releaser on the histograms of :data:`CHAIN` (see the module
    docstring)."""

    call_surfaces = ("release_prevalences", "release")
    law_surface = "release"

    @property
    def releaser(self) -> AnonymizedHistogramReleaser:
        return cast(AnonymizedHistogramReleaser, self.mechanism)

    @property
    def inputs(self) -> tuple[int, ...]:
        return (0, len(CHAIN) // 2, len(CHAIN) - 1)

    @property
    def pairs(self) -> tuple[tuple[int, int], ...]:
        """A count of 1 appearing in the empty histogram, and a count moving up past another."""
        return ((0, 1), (3, 4))

    def sample_size(self, settings: Settings) -> int:
        return settings.releases

    def draw(self, value: int, size: int, source: RandomSource) -> npt.NDArray[Any]:
        prevalences = prevalences_of(CHAIN[value]).as_dict()
        releases = [self.releaser.release_prevalences(prevalences, source) for _ in range(size)]
        return np.array([code(r) for r in releases], dtype=np.int64)

    def show_input(self, value: int) -> str:
        return _shown(CHAIN[value])

    def show_output(self, value: int) -> str:
        total, rest = divmod(value, 2 * 8**4)
        high, shape = divmod(rest, 8**4)
        phi = [(shape // 8**i) % 8 for i in range(4)]
        return f"(total {total}, φ₁…φ₄ {phi}{', counts > 4' if high else ''})"

    # Exact privacy of one-request programs, and the code against its program.

    def small(self, settings: Settings) -> bool:
        """Cases with e^ε at least :data:`MIN_SMALL_EXP_EPSILON` (smaller ones draw too much
        noise for the checks' many releases) that take every histogram the checks use (a sorted
        histogram's public length must hold the :data:`EXACT_ITEMS` labels of the widest)."""
        if self.guarantee.exp_epsilon < MIN_SMALL_EXP_EPSILON:
            return False
        widest = prevalences_of((1,) * EXACT_ITEMS).as_dict()
        try:
            self.releaser.release_prevalences(widest, SeededSource(settings.seed))
        except DpplugError:  # refuses the widest histogram (a length too small)
            return False
        return True

    def implementation_check(self, settings: Settings) -> PrivacyCheck:
        """Nothing to hold the code to: the exact check replays the real release."""
        return verifier_for(self).implementation_check(settings)

    def _accepts(self, counts: tuple[int, ...]) -> bool:
        """Whether the releaser takes the histogram *counts* (a public bound, such as a sorted
        histogram's length, may refuse it before anything is drawn)."""
        known: dict[tuple[int, ...], bool] = self.__dict__.setdefault("_accepted", {})
        if counts not in known:
            try:
                self.releaser.release_prevalences(prevalences_of(counts).as_dict(), SeededSource(0))
                known[counts] = True
            except DpplugError:
                known[counts] = False
        return known[counts]

    @property
    def _accuracy_data(self) -> tuple[int, ...]:
        """:data:`ACCURACY_DATA`, or its longest prefix the releaser takes."""
        size = len(ACCURACY_DATA)
        while size and not self._accepts(ACCURACY_DATA[:size]):
            size -= 1
        return ACCURACY_DATA[:size]

    def _replays(self, counts: tuple[int, ...]) -> Replays:
        """The real release of *counts*, replayed by prefix of its served noise requests
        (:func:`dpplug.program.served_steps`), one per histogram (shared by the pairs it is in,
        and with the sampler laws shared by all)."""
        verifier = verifier_for(self)
        if not isinstance(verifier, ServedDrawsVerifier):
            raise NotSupported(
                f"{self.releaser.name} does not declare ServedDraws: its noise requests cannot "
                "be replayed"
            )
        laws: dict[Any, Any] = self.__dict__.setdefault("_laws", {})
        known: dict[tuple[int, ...], Replays] = self.__dict__.setdefault("_programs", {})
        if counts not in known:
            data = prevalences_of(counts).as_dict()
            known[counts] = verifier.replays(partial(self.releaser.release_prevalences, data), laws)
        return known[counts]

    def exact_privacy(self, settings: Settings) -> PrivacyCheck:
        """Every neighbouring pair of histograms of at most :data:`EXACT_ITEMS` items, by the
        coupled likelihood ratio of their noise transcripts
        (:mod:`~dpplug.conformance.structures.noise_window`). A release that makes more than one
        request is checked on the declared cases only (each pair replays it along every
        enumerated history)."""
        guarantee = self.guarantee
        if not guarantee.pure:
            raise NotSupported("the exact check compares pure guarantees only")
        bound = guarantee.exp_epsilon
        adaptive = self._adaptive()
        declared = [dict(case) for case in self.releaser.conformance_cases]
        if adaptive and self.params not in declared:
            raise NotSupported("an adaptive program is checked on the declared cases only")
        worst: Any = mpq(1)
        worst_pair = ""
        pairs = 0
        for counts, other in _neighbouring_pairs():
            if not (self._accepts(counts) and self._accepts(other)):
                continue  # outside the public domain (a sorted histogram's length)
            pairs += 1
            first, second = self._replays(counts), self._replays(other)
            ratio = coupled_ratio(first, second, bound, _same_release)
            if ratio is None or ratio > worst:
                worst, worst_pair = ratio, f"{_shown(counts)} and {_shown(other)}"
            if ratio is None:
                break
        where = f"{pairs} neighbouring pairs of histograms with at most {EXACT_ITEMS} items"
        if adaptive:
            where += (
                f" (coupled transcripts; scalar requests within {RADIUS} of their counts, "
                "outputs equal at the leaves)"
            )
        if worst is None or worst > bound:
            shown = "∞" if worst is None else exact_text(worst)
            failure = f"likelihood ratio {shown} for {worst_pair} exceeds e^ε = {exact_text(bound)}"
            return PrivacyCheck((failure,), where)
        summary = f"noise ratio {float(worst):.6g} ≤ e^ε = {float(bound):.6g} on {where}"
        return PrivacyCheck((), summary)

    def _adaptive(self) -> bool:
        """Whether the program makes a second request on the widest checked histogram when
        its first request comes back without noise."""
        widest = max((k for k in range(EXACT_ITEMS + 1) if self._accepts((1,) * k)), default=0)
        replays = self._replays((1,) * widest)
        draw, _ = replays.step(())
        if draw is None:
            return False
        second, _ = replays.step((tuple(int(c) for c in draw.counts),))
        return second is not None

    # The sampling law over a window of noise transcripts.

    @property
    def law_inputs(self) -> tuple[int, ...]:
        """The empty histogram, in the declared case of the largest e^ε only (none in the
        others). The exact check covers every small histogram in every declared case; what is
        left is that real releases follow the law their program's noise gives, and the case
        with the least noise puts the most of its law inside the window at the least cost per
        release (as does the empty histogram: PrivHist's N is often 0)."""
        plugins, name = self.releaser.registry_in_use(), self.releaser.name
        cases = [plugins.create(name, **case) for case in self.releaser.conformance_cases]
        largest = max(case.guarantee.exp_epsilon for case in cases)
        first = next(case for case in cases if case.guarantee.exp_epsilon == largest)
        return (0,) if first.params == self.releaser.params else ()

    def _window(self, value: int) -> tuple[Replays, dict[Cell, int], Pmf]:
        """The program on input *value*, its cells' codes and their exact law (cells of
        transcripts leaving the window are coded from :data:`LEFT_CODES` on)."""
        windows: dict[int, tuple[Replays, dict[Cell, int], Pmf]]
        windows = self.__dict__.setdefault("_windows", {})
        if value not in windows:
            replays = self._replays(CHAIN[value])
            cells = window_law(replays, WINDOW, code)
            left = sorted(cell for cell in cells if cell[0] == "left")
            codes = {cell: LEFT_CODES + i for i, cell in enumerate(left)}
            codes.update({cell: cell[1] for cell in cells if cell[0] == "out"})
            law = Pmf({codes[cell]: p for cell, p in cells.items()})
            windows[value] = (replays, codes, law)
        return windows[value]

    def law(self, value: int) -> Pmf:
        """The exact law of the cells of :meth:`law_draw` (:func:`..noise_window.window_law`:
        the outputs of the transcripts of probability ≥ :data:`WINDOW`, and the cells of the
        transcripts leaving the window, by depth and first outcome)."""
        return self._window(value)[2]

    def law_draw(self, value: int, size: int, source: RandomSource) -> npt.NDArray[Any]:
        """Real releases of input *value*, each put in its cell by the noise transcript its
        program recorded (:func:`dpplug.program.recording`); −1, of probability 0, for a
        transcript the law has no cell for."""
        replays, codes, _ = self._window(value)
        data = prevalences_of(CHAIN[value]).as_dict()
        found = []
        for _ in range(size):
            with recording() as transcript:
                release = self.releaser.release_prevalences(data, source)
            cell = cell_of(replays, transcript, release, WINDOW, code)
            found.append(codes.get(cell, -1))
        return np.array(found, dtype=np.int64)

    # Accuracy.

    def _errors(
        self, size: int, seed: int, data: tuple[int, ...] | None = None
    ) -> dict[Any, npt.NDArray[np.int64]]:
        """Per rank (and ``None`` for the largest over ranks, or for the total), the absolute
        errors of the first *size* seeded releases of *data* (sorted counts). Releases are made
        once, continued from the same source when a claim wants more, and shared by every
        claim."""
        tables: dict[tuple[int, tuple[int, ...]], tuple[SeededSource, list[list[int]]]]
        tables = self.__dict__.setdefault("_error_rows", {})
        data = self._accuracy_data if data is None else data
        source, rows = tables.setdefault((seed, data), (SeededSource(seed), []))
        given = prevalences_of(data).as_dict()
        while len(rows) < size:
            rows.append(self._error_row(self.releaser.release_prevalences(given, source), data))
        table = np.array(rows[:size], dtype=object if max(data, default=0) >= 1 << 62 else np.int64)
        keys = self._error_keys()
        return {key: table[:, i] for i, key in enumerate(keys)}

    def _error_keys(self) -> list[int | None]:
        if self.releaser.accuracy_scope is AccuracyScope.TOTAL:
            return [None]
        return [*range(ACCURACY_RANKS), None]

    def _error_row(self, release: AnonymizedHistogram, data: tuple[int, ...]) -> list[int]:
        """The errors of one release of *data*, in the order of :meth:`_error_keys`."""
        truth = list(data)
        if self.releaser.accuracy_scope is AccuracyScope.TOTAL:
            return [abs(release.total - sum(truth))]
        shown = release.sorted_counts()
        size = max(len(shown), len(truth))
        padded = [(shown + [0] * size)[:size], (truth + [0] * size)[:size]]
        errors = [abs(x - y) for x, y in zip(*padded, strict=True)]
        return [*errors[:ACCURACY_RANKS], max(errors, default=0)]

    def accuracy_claims(self, settings: Settings) -> list[Claim]:
        claims: list[Claim] = []
        scope = self.releaser.accuracy_scope
        for beta in BETAS:
            accuracy = self.releaser.accuracy(beta)
            checks: list[tuple[int | None, str, int]]
            if scope is AccuracyScope.TOTAL:
                checks = [(None, "the released total's error", accuracy.per_query.a)]
            else:
                checks = [
                    (rank, f"the error of the count of rank {rank + 1}", accuracy.per_query.a)
                    for rank in range(ACCURACY_RANKS)
                ]
                checks.append((None, "the largest error over the ranks", accuracy.simultaneous.a))
            for key, what, a in checks:
                misses = partial(self._misses, settings.seed, key, a, self._accuracy_data)
                what = f"data {_shown(self._accuracy_data)}: {what} exceeds a={a}"
                size = self.sample_size(settings)
                claims.append(SampledClaim(what, beta, size, misses, MAX_RELEASE_TRIALS))
        return claims + self._stress_claims(settings)

    def _stress_claims(self, settings: Settings) -> list[Claim]:
        """The simultaneous bound at β = 1/20 on data chosen to stress it (:data:`STRESS_DATA`:
        many labels, and a count past 2^31), where the releaser takes it and a release costs at
        most :data:`STRESS_SECONDS`."""
        claims: list[Claim] = []
        beta = BETAS[0]
        a = self.releaser.accuracy(beta).simultaneous.a
        covers = (("release", Dimension.SIZE), ("release_prevalences", Dimension.SIZE))
        for data in STRESS_DATA:
            started = time.process_time()
            try:
                self.releaser.release_prevalences(
                    prevalences_of(data).as_dict(), SeededSource(settings.seed)
                )
            except DpplugError:
                continue
            if time.process_time() - started > STRESS_SECONDS:
                continue
            what = f"data of {len(data)} counts up to {max(data)}: the largest error exceeds a={a}"
            misses = partial(self._misses, settings.seed, None, a, data)
            claims.append(SampledClaim(what, beta, 1, misses, MAX_RELEASE_TRIALS, covers))
        return claims

    def _misses(self, seed: int, key: Any, a: int, data: tuple[int, ...], size: int) -> int:
        return int(np.count_nonzero(self._errors(size, seed, data)[key] > a))

    def accuracy_plot(self, settings: Settings) -> dict[str, Any]:
        claims = {beta: self.releaser.accuracy(beta).simultaneous.a for beta in BETAS}
        case = f"{self.where}, data {_shown(self._accuracy_data)}"
        errors = self._errors(self.sample_size(settings), settings.seed)[None]
        return quantile_plot(case, errors, claims)

    # Bad input and the property search.

    def bad_data(self, source: SeededSource) -> list[tuple[str, Callable[[], object]]]:
        """Negative, non-integer and oversized counts and prevalences, r ≤ 0, unhashable labels,
        strings where rows belong, and wrong types, in each input form."""
        release, compact = self.releaser.release, self.releaser.release_prevalences
        bad_counts: list[object] = [-1, 0.5, 1.0, float("nan"), True, "1", None, 2**70]
        calls: list[tuple[str, Callable[[], object]]] = []
        for count in bad_counts:
            calls.append((f"release({{'a': {count!r}}})", partial(release, {"a": count}, source)))
            calls.append(
                (f"release_prevalences({{{count!r}: 1}})", partial(compact, {count: 1}, source))
            )
            calls.append(
                (f"release_prevalences({{1: {count!r}}})", partial(compact, {1: count}, source))
            )
        for data in ("ab", b"ab", 5, 1.5, None, object(), [[1]], [{"a": 1}]):
            calls.append((f"release({data!r})", partial(release, data, source)))
        for data in ({0: 1}, {-2: 1}, [1, 2], "x", None, {10**12: 2}):
            calls.append((f"release_prevalences({data!r})", partial(compact, data, source)))
        return calls

    def data_space(self) -> DataSpace:
        """Rows, label → count mappings and prevalence mappings with arbitrary values."""
        value = st.one_of(
            st.integers(-3, 6),
            st.floats(),
            st.booleans(),
            st.fractions(),
            st.none(),
            st.text(max_size=2),
        )
        data = st.tuples(
            st.sampled_from(["rows", "mapping", "prevalences"]),
            st.one_of(
                st.lists(
                    st.one_of(
                        st.integers(0, 3), st.text(max_size=2), st.lists(st.integers(), max_size=1)
                    ),
                    max_size=6,
                ),
                st.dictionaries(
                    st.one_of(st.integers(-2, 6), st.text(max_size=2)), value, max_size=3
                ),
                st.text(max_size=3),
                st.none(),
            ),
        )

        def valid(given: object) -> bool:
            form, payload = cast(tuple[str, Any], given)
            if form != "prevalences" and isinstance(payload, list):
                return all(not isinstance(x, list) for x in payload)
            if not isinstance(payload, dict):
                return False
            if not all(_is_count(v) and v >= 0 for v in payload.values()):
                return False
            return form != "prevalences" or all(_is_count(r) and r >= 1 for r in payload)

        return DataSpace(data, valid, self.release_in_form)

    def release_in_form(self, given: object, source: RandomSource) -> AnonymizedHistogram:
        """``release`` for rows and mappings, ``release_prevalences`` for prevalences."""
        form, payload = cast(tuple[str, Any], given)
        if form == "prevalences":
            return self.releaser.release_prevalences(payload, source)
        return self.releaser.release(payload, source)

    # Hygiene.

    def _forms(self, counts: tuple[int, ...], seed: int) -> dict[str, tuple[Any, Any]]:
        """The histogram *counts* in every input form: form → (call, data). Rows come sorted
        by label and in a seeded shuffled order."""
        rows = [f"x{i}" for i, c in enumerate(counts) for _ in range(c)]
        rng = np.random.default_rng(seed)  # shuffles test inputs only
        shuffled = [rows[i] for i in rng.permutation(len(rows))]
        release, compact = self.releaser.release, self.releaser.release_prevalences
        return {
            "rows": (release, rows),
            "shuffled rows": (release, shuffled),
            "mapping": (release, {f"x{i}": c for i, c in enumerate(counts)}),
            "prevalences": (compact, prevalences_of(counts).as_dict()),
        }

    def calls(self, seed: int) -> list[Call]:
        return [
            Call(f"release of {_shown(counts)} as {form}", partial(call, data), (data,))
            for counts in HYGIENE_DATA
            for form, (call, data) in self._forms(counts, seed).items()
        ]

    def large_calls(self, seed: int) -> list[Call]:
        """Releases of 2¹⁶ rows, of a mapping with as many items and of its prevalences, over
        as many labels as :data:`HYGIENE_DATA` uses (a mechanism may bound the number of
        counts)."""
        labels = [f"x{i}" for i in range(max(map(len, HYGIENE_DATA)))]
        calls = large_label_calls("release", self.releaser.release, labels, LARGE, seed)
        mapping = cast(dict[str, int], calls[0].inputs[0])
        prevalences = prevalences_of(tuple(c for c in mapping.values() if c)).as_dict()
        what = f"release_prevalences({prevalences})"
        compact = self.releaser.release_prevalences
        return [*calls, Call(what, partial(compact, prevalences), (prevalences,))]

    def hygiene_problems(self, strict: bool, seed: int) -> list[str]:
        """Releases of small histograms given as rows (in two orders), as a mapping and as
        prevalences: each an :class:`~dpplug.AnonymizedHistogram` with positive
        integer prevalences in increasing r, a non-negative integer total and the mechanism's
        guarantee; every form gives the same releases from the same seed; something is drawn,
        and the same seed gives the same releases; a strict-time releaser draws as often on
        every dataset."""
        problems: list[str] = []
        draws: dict[str, int] = {}
        for counts in HYGIENE_DATA:
            contents = {}
            for form, (call, data) in self._forms(counts, seed).items():
                source = SeededSource(seed)
                releases = [call(data, source) for _ in range(RELEASES)]
                for release in releases:
                    problems += [f"data {_shown(counts)}: {p}" for p in self._problems(release)]
                if problems:
                    return problems
                if source.draws == 0:
                    problems.append(f"data {_shown(counts)}: drew nothing from the RandomSource")
                contents[form] = [_content(r) for r in releases]
                again = SeededSource(seed)
                if contents[form] != [_content(call(data, again)) for _ in range(RELEASES)]:
                    problems.append(f"data {_shown(counts)} as {form}: {NOT_REPRODUCIBLE}")
                draws[f"{_shown(counts)} {form}"] = source.draws
            if len({repr(c) for c in contents.values()}) > 1:
                problems.append(
                    f"data {_shown(counts)}: its input forms ({', '.join(contents)}) give "
                    "different releases from the same seed"
                )
        return problems + strict_time_problems(strict, draws)

    # Along the other cells of the surface × dimension matrix.

    def checks(self, settings: Settings) -> list[Check]:
        return [
            Check(
                (
                    ("release", Dimension.FORMS),
                    ("release", Dimension.LAW),
                    ("release_prevalences", Dimension.FORMS),
                ),
                "hygiene",
                Status.CHECKED,
                "rows (also one-shot), mappings and prevalences of the same histogram give the "
                "release of its prevalences, whose law the exact checks compare",
                lambda s: self._form_problems(s.seed),
            ),
            Check(
                (("release", Dimension.WHOLE),),
                "hygiene",
                Status.CHECKED,
                "the release is an AnonymizedHistogram carrying the mechanism's declarations "
                "(its estimators are dpplug's)",
                lambda s: self._whole_problems(s.seed),
            ),
            Check(
                (("release", Dimension.SIZE), ("release_prevalences", Dimension.SIZE)),
                "exact-privacy",
                Status.EXACT,
                "neighbouring histograms of thousands of counts, of counts past 2^31 and of one "
                "count of thousands, by the "
                "coupled ratio of their noise",
                lambda s: self._size_problems(),
            ),
        ]

    def _form_problems(self, seed: int) -> list[str]:
        """Besides the forms :meth:`hygiene_problems` compares, rows as a one-shot generator,
        a Counter and a tuple must give the release of the same prevalences from one seed, and
        so must rows of distinct labels that look alike (:data:`LOOKALIKE_LABELS`: integers
        equal modulo 2^32 or 2^64, their text and bytes), which must stay distinct, and a list
        of rows of small integer labels (rows, not counts)."""
        for counts in HYGIENE_DATA:
            rows = [f"x{i}" for i, c in enumerate(counts) for _ in range(c)]
            alike = [LOOKALIKE_LABELS[i] for i, c in enumerate(counts) for _ in range(c)]
            small = [2 + i for i, c in enumerate(counts) for _ in range(c)]
            expected = _content(
                self.releaser.release_prevalences(
                    prevalences_of(counts).as_dict(), SeededSource(seed)
                )
            )
            for form, given in (
                ("a generator of rows", (row for row in rows)),
                ("a tuple of rows", tuple(rows)),
                ("a Counter", Counter(rows)),
                (f"rows of the labels {LOOKALIKE_LABELS[: len(counts)]}", alike),
                ("a list of rows of small integer labels", small),
            ):
                if _content(self.releaser.release(given, SeededSource(seed))) != expected:
                    return [
                        f"data {_shown(counts)} as {form} gave another release from the same "
                        "seed than its prevalences"
                    ]
        return []

    def _whole_problems(self, seed: int) -> list[str]:
        releaser = self.releaser
        fixed = {"guarantee": releaser.guarantee, "mechanism": releaser.name}
        fixed["params"] = params_text(releaser.params)
        first = prevalences_of(HYGIENE_DATA[0]).as_dict()
        self.others_first(
            lambda other: cast(AnonymizedProbe, other).releaser.release_prevalences(first)
        )
        reference = None
        for counts in HYGIENE_DATA:
            data = prevalences_of(counts).as_dict()
            release = releaser.release_prevalences(data, SeededSource(seed))
            problems = whole_problems(
                releaser, release, (AnonymizedHistogram,), fixed, _LAW_FIELDS, reference
            )
            if problems:
                return [f"data {_shown(counts)}: {problems[0]}"]
            reference = release
        return []

    def _size_problems(self) -> list[str]:
        """The coupled noise ratio (:mod:`~..structures.noise_window`) of neighbouring pairs of
        large histograms (:data:`LARGE_PAIRS`: thousands of counts, counts past 2^31, one
        count of thousands), within e^ε, on a case that takes them (:meth:`_large_probe`). A
        release making more than one noise request (adaptive) is compared on the pairs of at
        most :data:`ADAPTIVE_ITEMS` items, along the histories the coupled check follows."""
        guarantee = self.guarantee
        if not guarantee.pure:
            raise NotSupported("the coupled check compares pure guarantees only")
        probe = self._large_probe()
        adaptive = self._adaptive()
        for counts, other in LARGE_PAIRS:
            if adaptive and sum(other) > ADAPTIVE_ITEMS:
                continue  # each history replays the whole release, whose cost grows with N
            first, second = probe._replays(counts), probe._replays(other)
            ratio = coupled_ratio(first, second, guarantee.exp_epsilon, _same_release)
            if ratio is None or ratio > guarantee.exp_epsilon:
                shown = "∞" if ratio is None else exact_text(ratio)
                return [
                    f"histograms of {len(counts)} counts up to {max(counts)}, one count apart: "
                    f"noise ratio {shown} exceeds e^ε = {exact_text(guarantee.exp_epsilon)}"
                ]
        return []

    def _large_probe(self) -> AnonymizedProbe:
        """A probe of this case, or of it with one integer parameter raised to 2^13 (a public
        bound such as a sorted histogram's length), that releases every histogram of
        :data:`LARGE_PAIRS`."""
        releaser = self.releaser
        raised = [
            {**self.params, p.name: max(self.params.get(p.name) or 0, 1 << 13)}
            for p in type(releaser).schema
            if isinstance(p.type, IntegerType)
        ]
        for params in (self.params, *raised):
            try:
                made = releaser.registry_in_use().create(releaser.name, **params)
                assert isinstance(made, AnonymizedHistogramReleaser)
                for pair in LARGE_PAIRS:
                    for counts in pair:
                        made.release_prevalences(prevalences_of(counts).as_dict(), SeededSource(0))
            except DpplugError:
                continue
            return AnonymizedProbe(made, params)
        raise NotSupported("no case of the schema takes histograms of thousands of counts")

    def _problems(self, release: Any) -> list[str]:
        if not isinstance(release, AnonymizedHistogram):
            return [f"released a {type(release).__name__}, not an AnonymizedHistogram"]
        keys = list(release.prevalences)
        if not all(_is_count(r) and r >= 1 for r in keys) or keys != sorted(keys):
            return [f"prevalences keyed by {keys}, not counts r ≥ 1 in increasing order"]
        if not all(_is_count(phi) and phi >= 1 for phi in release.prevalences.values()):
            return [f"prevalences {release.prevalences} are not positive integers"]
        if not (_is_count(release.total) and release.total >= 0):
            return [f"the total {release.total!r} is not a non-negative integer"]
        if release.guarantee != self.guarantee:
            return ["the release carries a guarantee other than the mechanism's"]
        return []


def _same_release(a: object, b: object) -> bool:
    """Whether two outputs say the same (both releases of equal content)."""
    if isinstance(a, AnonymizedHistogram) and isinstance(b, AnonymizedHistogram):
        return _content(a) == _content(b)
    return False


def _content(release: AnonymizedHistogram) -> tuple[int, tuple[tuple[int, int], ...]]:
    """What a release says: its total and its (r, φ_r) pairs."""
    return release.total, tuple(release.prevalences.items())


def code(release: AnonymizedHistogram) -> int:
    """The integer code of a release (see the module docstring)."""
    total_cap, phi_cap = _CAPS
    shape = sum(min(release.prevalences.get(r, 0), phi_cap) * 8 ** (r - 1) for r in range(1, 5))
    high = int(any(r > 4 for r in release.prevalences))
    return int(min(release.total, total_cap) * 2 * 8**4 + high * 8**4 + shape)


def _is_count(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)
