"""The probe of the histogram-releaser kind: small datasets over the first labels of the
releaser's universe in, the released counts of those labels out.

Input k ∈ [0, n] is the dataset {x₀: k, x₁: n − k} for replace-one releasers (n rows, as
Balcer–Vadhan's D; k and k + 1 are neighbours: one row moves from x₁ to x₀) and {x₀: k} for
add-remove ones. An output is the pair of released counts (c̃_{x₀}, c̃_{x₁}), both in [0, n],
coded as the integer c̃_{x₀}·(n + 1) + c̃_{x₁}. Releases are not vectorised, so the audit and
accuracy contracts draw only :attr:`Settings.releases` of them per input.

The exact privacy check (:func:`releaser_privacy`) enumerates every dataset of at most n rows
over three labels with its exact release law (:meth:`~dpplug.HistogramReleaser.release_law`).
Accuracy is tested on releases of the middle dataset, per query and simultaneously; hygiene
releases a few small datasets many times.
"""

from __future__ import annotations

import json
import numbers
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, partial
from itertools import pairwise, product
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq
from scipy.stats import binom

from dpplug.conformance.coverage import Status
from dpplug.conformance.divergence import WorstCase
from dpplug.conformance.privacy_check import PrivacyCheck
from dpplug.conformance.probes.arrays import other_widths
from dpplug.conformance.probes.base import (
    BETAS,
    NOT_REPRODUCIBLE,
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
    strict_time_problems,
    universe_labels,
)
from dpplug.conformance.probes.whole import whole_problems
from dpplug.conformance.settings import Settings
from dpplug.conformance.structures import Verifier, verifier_for
from dpplug.errors import AccuracyWarning, BadParameter, DpplugError, NotSupported
from dpplug.exact import Rat
from dpplug.guarantee import Accuracy, Relation
from dpplug.kinds import HistogramReleaser
from dpplug.kinds.histogram_releaser.base import neighbours
from dpplug.kinds.histogram_releaser.compact_law import CompactField
from dpplug.kinds.histogram_releaser.outputs import (
    CompactHistogram,
    DenseHistogram,
    SparseHistogram,
)
from dpplug.kinds.histogram_releaser.release_law import Law, bins
from dpplug.param_text import params_text
from dpplug.param_types import UniverseType
from dpplug.pmf import Pmf
from dpplug.program import Noise, served_steps
from dpplug.randomness import RandomSource, SeededSource
from dpplug.structures import ServedDraws
from dpplug.surfaces import Dimension
from dpplug.universe import Universe

#: The exact check uses datasets over at most this many labels (the universe's first).
EXACT_LABELS = 3
#: … and gives up (NotSupported) when there would be more datasets than this.
MAX_DATASETS = 500
#: The most non-empty labels of the datasets the spread check compares (one row each).
SPREAD_LABELS = 6
#: Generated cases with more rows than this are too large for the exact checks.
MAX_SMALL_N = 3
#: The most releases a sampled accuracy claim may take.
MAX_RELEASE_TRIALS = 50_000
#: Per-query accuracy is tested on this many labels (the universe's first).
ACCURACY_LABELS = 3
#: The βs and the largest n at which the per-query bound is tried on the count hardest for it
#: (:meth:`ReleaserProbe._stressed_accuracy_problems`).
STRESS_BETAS = (Fraction(1, 20), Fraction(1, 1000))
STRESS_MOST_N = 1025
STRESS_DELTA = Fraction(1, 10**6)
#: Starts of the range universes the forms check also releases over (0 is the case's own).
SHIFTED_STARTS = (1, 1 << 40)
#: The most rows of one label the forms check passes over a shifted universe.
SHIFTED_ROWS = 1000
#: Hygiene releases per dataset: enough to see a data-dependent order or an empty bin by chance.
RELEASES = 32
#: Other insertion orders each hygiene dataset is also released in.
ORDERINGS = 3
_HISTOGRAMS = (DenseHistogram, SparseHistogram, CompactHistogram)
#: The fields of a release its law covers, and what is derived from them (every other one is
#: fixed or data-independent).
_LAW_FIELDS = frozenset({"counts", "indices", "coefficients"})


@dataclass(frozen=True)
class ReleaserReport:
    """The outcome of :func:`releaser_privacy`: how many datasets and neighbouring pairs were
    compared, the worst ratio (``None``: infinite) and divergence, and the failures in words."""

    datasets: int
    pairs: int
    worst_ratio: Rat | None
    worst_divergence: Rat
    failures: tuple[str, ...]


def small_datasets(releaser: HistogramReleaser) -> list[dict[Any, int]]:
    """Every dataset of at most n rows over the universe's first :data:`EXACT_LABELS` labels
    (NotSupported past :data:`MAX_DATASETS`)."""
    labels = [releaser.universe.label(i) for i in range(min(EXACT_LABELS, releaser.universe.size))]
    datasets = [
        counts
        for counts in product(range(releaser.n + 1), repeat=len(labels))
        if sum(counts) <= releaser.n
    ]
    if len(datasets) > MAX_DATASETS:
        raise NotSupported(
            f"n = {releaser.n} gives {len(datasets)} datasets over {len(labels)} labels, more "
            f"than the {MAX_DATASETS} the exact check enumerates"
        )
    return [{x: c for x, c in zip(labels, d, strict=True) if c} for d in datasets]


def checked_relations(relation: Relation) -> tuple[Relation, ...]:
    """The relations a releaser's guarantee must hold for: its own, and one row added or
    removed, which the kind's privacy maps cover with the same guarantee
    (:meth:`dpplug.kind.Kind.privacy_bound`), to and from the empty dataset."""
    return tuple(dict.fromkeys((relation, Relation.ADD_REMOVE)))


def releaser_privacy(releaser: HistogramReleaser) -> ReleaserReport:
    """Check a histogram releaser's declared guarantee exactly on tiny datasets.

    The datasets are every count vector over the first :data:`EXACT_LABELS` labels of the
    universe with at most n rows (the empty one too); neighbours are one row apart under the
    guarantee's relation and under adding or removing a row (:func:`checked_relations`,
    :func:`~dpplug.kinds.histogram_releaser.base.neighbours`). Their exact release laws
    (NotSupported where they cannot be enumerated) are compared pair by pair, in both
    directions, and each must sum to exactly 1.
    """
    guarantee = releaser.guarantee
    relation = guarantee.neighbouring.relation
    if relation is Relation.COUNT:
        raise ValueError(
            f"{releaser.name} states its guarantee for {guarantee.neighbouring.describe()}; "
            "a histogram releaser must state it for datasets (replace-one or add-remove)"
        )
    labels = [releaser.universe.label(i) for i in range(min(EXACT_LABELS, releaser.universe.size))]
    datasets = [tuple(data.get(x, 0) for x in labels) for data in small_datasets(releaser)]

    def show(counts: tuple[int, ...]) -> str:
        return str({label: c for label, c in zip(labels, counts, strict=True) if c})

    laws = {
        d: releaser.release_law({x: c for x, c in zip(labels, d, strict=True) if c})
        for d in datasets
    }
    failures = [
        f"the release law of {show(d)} sums to {total}"
        for d, law in laws.items()
        if (total := sum(law.values(), mpq(0))) != 1
    ]
    worst = WorstCase(guarantee.exp_epsilon)
    pairs = list(
        dict.fromkeys(
            (d, d2)
            for each in checked_relations(relation)
            for d in datasets
            for d2 in neighbours(d, each, releaser.n)
        )
    )
    for d, d2 in pairs:
        worst.compare(show(d), show(d2), *_coded(laws[d], laws[d2]))
    failures += worst.failures(guarantee, "datasets (one row replaced, added or removed)")
    return ReleaserReport(len(datasets), len(pairs), worst.ratio, worst.divergence, tuple(failures))


def _coded(p: Law, q: Law) -> tuple[Pmf, Pmf]:
    """Two release laws as Pmfs over shared integer codes of their outputs."""
    codes = {output: code for code, output in enumerate(p.keys() | q.keys())}
    return (
        Pmf({codes[output]: prob for output, prob in p.items()}),
        Pmf({codes[output]: prob for output, prob in q.items()}),
    )


def shown_counts(release: Any, labels: Iterable[Any]) -> dict[Any, int]:
    """The counts a release shows: every bin a dense or sparse histogram lists, and the count
    it reads for each of *labels* (the only ones of a compact histogram, whose labels are far
    too many to evaluate)."""
    shown = dict(release.items()) if isinstance(release, DenseHistogram | SparseHistogram) else {}
    shown.update({label: release.count(label) for label in labels})
    return shown


def _universes(probe: Probe) -> list[str]:
    """The names of the universe parameters of *probe*'s mechanism."""
    return [p.name for p in type(probe.mechanism).schema if isinstance(p.type, UniverseType)]


def _one_among_many(where: str, releaser: HistogramReleaser, seed: int) -> list[str]:
    """:meth:`ReleaserProbe._many_labels_problems` on one releaser."""
    labels = [releaser.universe.label(i) for i in range(MANY_LABELS + 1)]
    x, without = labels[-1], dict.fromkeys(labels[:-1], 2)
    with_x = {**without, x: 1}
    added, removed = _first_noise(releaser, with_x), _first_noise(releaser, without)
    at, dense, by_place = _noise_of(releaser, x, added, removed)
    others = [c for i, c in enumerate(added.counts) if i != at]
    laws = [added.sampler.pmf(c) for c in (added.counts[at], removed.counts[at] if dense else 0)]
    if any(law.tail_ratio is not None for law in laws):
        raise NotSupported("its noise is unbounded: one label's law has infinitely many outcomes")
    guarantee, e = releaser.guarantee, releaser.guarantee.exp_epsilon
    problems = []
    for offset in range(MANY_DRAWS):
        fixed = tuple(added.sampler.sample(others, SeededSource(seed + offset)).tolist())

        p = _count_law(releaser, with_x, x, _served(fixed, at, laws[0]))
        q = _count_law(
            releaser, without, x, _served(fixed, at, laws[1]) if dense else [(fixed, mpq(1))]
        )
        if by_place and (len(p) < 2 or len(q) < 2):  # that place must move x's count
            raise NotSupported("its noise of x could not be told from the other labels'")
        worst = max(_divergence(p, q, e), _divergence(q, p, e))
        if worst <= guarantee.delta:
            return []
        problems.append(
            f"{where}: {MANY_LABELS} labels of 2 rows, and a label {x!r} of one row added: its "
            f"released count has divergence {float(worst):.4g} > δ = "
            f"{float(guarantee.delta):.4g} at e^ε = {float(e):.6g}, with the others' noise "
            f"fixed at each of {MANY_DRAWS} draws from their law"
        )
    return problems[:1]


def _crossing(releaser: HistogramReleaser, count: int, seed: int) -> list[str]:
    """:meth:`ReleaserProbe._crossing_problems` at one count: {x₀: count − 1} against
    {x₀: count}, x₀'s released count over the most likely outcomes of its noise (mass at least
    1 − :data:`CROSSING_TAIL`), the others' noise fixed, as a lower bound on the divergence."""
    x = releaser.universe.label(0)
    below, at_count = {x: count - 1}, {x: count}
    first, second = _first_noise(releaser, below), _first_noise(releaser, at_count)
    if len(first.counts) != len(second.counts) or first.sampler is not second.sampler:
        raise NotSupported("its noise requests differ in shape between the two counts")
    moved = [i for i, (a, b) in enumerate(zip(first.counts, second.counts, strict=True)) if a != b]
    if len(moved) != 1:
        raise NotSupported("its noise of x₀ could not be told from the other labels'")
    i = moved[0]
    others = [c for j, c in enumerate(first.counts) if j != i]
    fixed = tuple(first.sampler.sample(others, SeededSource(seed)).tolist())
    laws = []
    for data, request in ((below, first), (at_count, second)):
        likely, mass = _likely(request.sampler, int(request.counts[i]))
        laws.append((_count_law(releaser, data, x, _served(fixed, i, likely)), 1 - mass))
    (p, p_out), (q, q_out) = laws
    e, delta = releaser.guarantee.exp_epsilon, releaser.guarantee.delta
    worst = max(_divergence(p, q, e, q_out), _divergence(q, p, e, p_out))
    if worst <= delta:
        return []
    return [
        f"{x!r} at count {count - 1} and at {count} (n = {releaser.n}): its released count has "
        f"divergence at least {float(worst):.4g} > δ = {float(delta):.4g} at e^ε = {float(e):.6g}"
    ]


def _likely(sampler: Any, count: int) -> tuple[Pmf, Any]:
    """Outcomes of a bounded sampler's law at *count* holding at least 1 − :data:`CROSSING_TAIL`
    of its mass (each with its exact probability), and that mass: the law's most likely ones,
    or, where the whole law is too large to hold, outcomes outward from the count, each from
    the scaled CDF (F(c, z) − F(c, z − 1))/d."""
    try:
        pmf = sampler.pmf(count)
    except NotSupported:
        return _likely_near(sampler, count)
    if not pmf.bounded:
        raise NotSupported("its noise is unbounded: one label's law has infinitely many outcomes")
    kept: dict[int, Any] = {}
    mass = mpq(0)
    for z in sorted(pmf, key=lambda z: -pmf[z]):
        if mass >= 1 - CROSSING_TAIL:
            break
        kept[z] = pmf[z]
        mass += pmf[z]
    return Pmf(kept), mass


def _likely_near(sampler: Any, count: int) -> tuple[Pmf, Any]:
    """:func:`_likely` from the scaled CDF, outward from *count* to both sides in turn."""
    d, n = getattr(sampler, "d", None), getattr(sampler, "n", None)
    if d is None or n is None:
        raise NotSupported("its noise law is neither small enough to hold nor a scaled CDF")

    def probability(z: int) -> Any:
        low = sampler.scaled_cdf(z - 1, count) if z > 0 else 0
        return mpq(sampler.scaled_cdf(z, count) - low, d)

    kept = {count: probability(count)}
    mass, step = kept[count], 1
    while mass < 1 - CROSSING_TAIL and (count - step >= 0 or count + step <= n):
        for z in (count - step, count + step):
            if 0 <= z <= n:
                kept[z] = probability(z)
                mass += kept[z]
        step += 1
    return Pmf(kept), mass


def _served(fixed: tuple[int, ...], at: int, law: Pmf) -> list[tuple[Any, Any]]:
    """The noise outcomes with the others' noise *fixed* and every outcome of *law* at *at*,
    each with its probability."""
    return [((*fixed[:at], v, *fixed[at:]), w) for v, w in law.items() if w]


def _first_noise(releaser: HistogramReleaser, data: dict[Any, int]) -> Noise:
    """The release's first served draw, a noise request, or NotSupported."""
    first, _ = served_steps(partial(releaser.release, data))([])
    if not isinstance(first, Noise):
        raise NotSupported("its first served draw is not a noise request")
    return first


def _noise_of(
    releaser: HistogramReleaser, x: Any, added: Noise, removed: Noise
) -> tuple[int, bool, bool]:
    """Where x's noise is in the first noise request with x's one row (*added*) and without it
    (*removed*), whether the request without it has that place too (dense), and whether the
    place was found by x's place in the universe rather than by its count: the one count
    of 1 (the others are 2 and 0) when the request holds the data's counts, the other counts
    unchanged (in place, or dropped from a request of the non-empty labels); else, for one
    request over the whole universe that does not change with x (noise of empty bins, the
    counts added after), x's place in the universe; NotSupported otherwise."""
    counts, size = added.counts, releaser.universe.size
    if sorted(c for c in counts if c) == sorted([1, *[2] * MANY_LABELS]):
        at = counts.index(1)
        dense = len(removed.counts) == len(counts)
        kept = [*counts[:at], 0, *counts[at + 1 :]] if dense else [*counts[:at], *counts[at + 1 :]]
        if removed.counts == kept:
            return at, dense, False
    elif len(counts) == size and removed.counts == counts:
        return releaser.universe.index(x), True, True
    raise NotSupported("its noise is not drawn for the same labels in the same order")


def _count_law(
    releaser: HistogramReleaser, data: dict[Any, int], x: Any, outcomes: list[tuple[Any, Any]]
) -> dict[int, Any]:
    """The law of x's released count when the release's first served draw (its noise) is each
    of *outcomes*, with its probability; NotSupported if the release draws again."""
    step = served_steps(partial(releaser.release, data))
    law: dict[int, Any] = {}
    for outcome, probability in outcomes:
        draw, release = step([outcome])
        if draw is not None:
            raise NotSupported("the release draws again after its noise")
        count = int(release.count(x))
        law[count] = law.get(count, mpq(0)) + probability
    return law


def _divergence(p: dict[int, Any], q: dict[int, Any], exp_epsilon: Any, unexplored: Any = 0) -> Any:
    """Σ_z max(0, p(z) − e^ε·(q(z) + u)) of two finite laws, where q may miss mass *unexplored*
    = u at any z (a lower bound on the divergence of p from the whole of q)."""
    return sum(
        (max(mpq(0), w - exp_epsilon * (q.get(z, 0) + unexplored)) for z, w in p.items()), mpq(0)
    )


def _label_misses(
    releaser: HistogramReleaser, label: Any, count: int, a: int, seed: int, size: int
) -> int:
    """How many of *size* seeded releases of one *label* at *count* are off by more than *a*."""
    source = SeededSource(seed)
    releases = (releaser.release({label: count}, source) for _ in range(size))
    return sum(abs(release.count(label) - count) > a for release in releases)


def _covered(accuracy: Accuracy, count: int) -> bool:
    """Whether the per-query bound covers a true count (threshold 0: every count)."""
    return accuracy.threshold == 0 or count > accuracy.threshold


class ReleaserProbe(Probe):
    """A histogram releaser on datasets over the first two labels x₀, x₁ of its universe (see
    the module docstring)."""

    call_surfaces = ("release",)
    law_surface = "release"

    @property
    def releaser(self) -> HistogramReleaser:
        return cast(HistogramReleaser, self.mechanism)

    @property
    def watched(self) -> tuple[Any, Any]:
        """The labels x₀ and x₁."""
        universe = self.releaser.universe
        if universe.size < 2:
            raise NotSupported(f"{self.where}: a universe of one label has no neighbours to probe")
        return universe.label(0), universe.label(1)

    @property
    def spot_labels(self) -> list[Any]:
        """Labels to read from every output, including those that cannot list their bins
        (compact histograms): the first four of the universe and its last."""
        universe = self.releaser.universe
        return [
            universe.label(i) for i in sorted({*range(min(4, universe.size)), universe.size - 1})
        ]

    def dataset(self, value: int) -> dict[Any, int]:
        """The dataset input *value* stands for, as a mapping label → count."""
        x0, x1 = self.watched
        if self.guarantee.neighbouring.relation is Relation.ADD_REMOVE:
            return {x0: value}
        return {x0: value, x1: self.releaser.n - value}

    @property
    def inputs(self) -> tuple[int, ...]:
        """The low end and the middle: the high end k = n is the low end with x₀ and x₁
        swapped, and each release costs a call."""
        return tuple(sorted({0, self.releaser.n // 2}))

    @property
    def law_inputs(self) -> tuple[int, ...]:
        """The middle dataset only. A release law is computed from the releaser's own code
        (:mod:`dpplug.kinds.histogram_releaser.release_law`, compared on every small dataset by
        exact-privacy), so the sampling law checks what is left, that real draws follow the laws the
        enumeration gives the same code's draws; the middle dataset (both watched bins nonempty, the
        other labels empty) takes every kind of draw, and each release costs a call."""
        return (self._middle,)

    @property
    def pairs(self) -> tuple[tuple[int, int], ...]:
        """k = 0 and 1: a row moves from x₁ into the empty bin x₀, so both released counts
        change and, in a sparse release, a bin may appear."""
        return ((0, 1),)

    def sample_size(self, settings: Settings) -> int:
        return settings.releases

    def releases(self, value: int, size: int, source: RandomSource) -> list[Any]:
        """*size* releases of the dataset of input *value*."""
        data = self.dataset(value)
        return [self.releaser.release(data, source) for _ in range(size)]

    def draw(self, value: int, size: int, source: RandomSource) -> npt.NDArray[Any]:
        x0, x1 = self.watched
        codes = [self._code(r.count(x0), r.count(x1)) for r in self.releases(value, size, source)]
        return np.array(codes, dtype=np.int64)

    def law(self, value: int) -> Pmf:
        coded: dict[int, Any] = {}
        for released, probability in self.releaser.release_law(self.dataset(value)).items():
            counts = dict(released)
            code = self._code(counts.get(0, 0), counts.get(1, 0))
            coded[code] = coded.get(code, 0) + probability
        return Pmf(coded)

    def show_input(self, value: int) -> str:
        return str(self.dataset(value))

    def show_output(self, value: int) -> str:
        x0, x1 = self.watched
        c0, c1 = divmod(value, self.releaser.n + 1)
        return f"({x0!r}: {c0}, {x1!r}: {c1})"

    def _code(self, c0: int, c1: int) -> int:
        n = self.releaser.n
        for count in (c0, c1):
            if not 0 <= count <= n:
                raise ValueError(f"a released count {count} is outside [0, n = {n}]")
        return int(c0) * (n + 1) + int(c1)

    def small(self, settings: Settings) -> bool:
        return self.releaser.n <= MAX_SMALL_N and self.releaser.universe.size >= 2

    @cached_property
    def verifier(self) -> Verifier:
        """The verifier of the structure the releaser declares."""
        return verifier_for(self)

    def small_datasets(self) -> list[dict[Any, int]]:
        """Every dataset of the exact check (:func:`small_datasets`)."""
        return small_datasets(self.releaser)

    def implementation_check(self, settings: Settings) -> PrivacyCheck:
        """The code held to its declared structure (:mod:`dpplug.conformance.structures`: the
        compact field's components on every small dataset; nothing else for served draws,
        whose law is enumerated from the real release)."""
        return self.verifier.implementation_check(settings)

    def exact_privacy(self, settings: Settings) -> PrivacyCheck:
        try:
            report = releaser_privacy(self.releaser)
        except NotSupported as exc:
            raise NotSupported(f"{exc}; the audit checks this releaser statistically") from None
        where = f"{report.pairs} pairs of {report.datasets} datasets"
        if self.guarantee.pure:
            worst = "∞" if report.worst_ratio is None else f"{float(report.worst_ratio):.6g}"
            summary = f"ratio {worst} ≤ e^ε = {float(self.guarantee.exp_epsilon):.6g} on {where}"
        else:
            summary = f"divergence {float(report.worst_divergence):.3g} ≤ δ on {where}"
        return PrivacyCheck(report.failures, summary)

    # Accuracy: per query on the first labels of the middle dataset, and simultaneously.

    @property
    def _middle(self) -> int:
        return self.inputs[len(self.inputs) // 2]

    def _truth(self) -> dict[Any, int]:
        universe, data = self.releaser.universe, self.dataset(self._middle)
        labels = [universe.label(i) for i in range(min(ACCURACY_LABELS, universe.size))]
        return {label: data.get(label, 0) for label in labels}

    def _errors(self, size: int, seed: int) -> dict[Any, npt.NDArray[np.int64]]:
        """Per label (and ``None`` for the largest over all shown labels), the absolute errors
        of *size* seeded releases of the middle dataset; releases are made once and reused by
        every claim (a claim wanting fewer takes the first ones)."""
        cache: dict[int, dict[Any, npt.NDArray[np.int64]]]
        cache = self.__dict__.setdefault("_error_tables", {})
        if seed not in cache or len(next(iter(cache[seed].values()))) < size:
            truth = self._truth()
            labels = [*truth, *self.spot_labels]
            rows = []
            for release in self.releases(self._middle, size, SeededSource(seed)):
                shown = shown_counts(release, labels)
                error = {
                    x: abs(shown.get(x, 0) - truth.get(x, 0)) for x in shown.keys() | truth.keys()
                }
                rows.append([error[x] for x in truth] + [max(error.values())])
            table = np.array(rows, dtype=np.int64).reshape(size, len(truth) + 1)
            cache[seed] = {label: table[:, i] for i, label in enumerate([*truth, None])}
        return {label: errors[:size] for label, errors in cache[seed].items()}

    def _bounds(self) -> list[tuple[Any, Any, int]]:
        """(β, label or None for all labels, a) for every declared bound at :data:`BETAS`; a β
        the releaser cannot promise (its ``accuracy`` raises BadParameter) is left out."""
        bounds: list[tuple[Any, Any, int]] = []
        for beta in BETAS:
            try:
                accuracy = self.releaser.accuracy(beta)
            except BadParameter:
                continue
            bounds += [
                (beta, label, accuracy.per_query.a)
                for label, count in self._truth().items()
                if _covered(accuracy, count)
            ]
            bounds.append((beta, None, accuracy.simultaneous.a))
        return bounds

    def accuracy_claims(self, settings: Settings) -> list[Claim]:
        """Exact where the middle dataset's release law can be enumerated, sampled otherwise."""
        data = self.show_input(self._middle)
        try:  # a compact release's decoded law covers 3 labels: its sampled claims read 5
            law = (
                None
                if isinstance(self.releaser.exact_structure(), CompactField)
                else self.releaser.release_law(self.dataset(self._middle))
            )
        except NotSupported:
            law = None
        claims = self._stressed_claims(settings)
        if law is not None:
            return [*self._exact_claims(law, data), *claims]
        for beta, label, a in self._bounds():
            what = "the largest error" if label is None else f"the error of {label!r}"
            misses = partial(self._misses, settings.seed, label, a)
            what = f"data {data}: {what} exceeds a={a}"
            size = self.sample_size(settings)
            claims.append(SampledClaim(what, beta, size, misses, MAX_RELEASE_TRIALS))
        return claims

    def _exact_claims(self, law: Law, data: str) -> list[Claim]:
        """Each bound's exact failure probability under the release law: the error of a label
        (0 for a label not released), or the largest error over the labels released and the
        data's labels."""
        universe = self.releaser.universe
        truth = {universe.index(x): c for x, c in self.dataset(self._middle).items()}
        watched = [universe.index(x) for x in self._truth()]
        claims: list[Claim] = []
        for beta, label, a in self._bounds():
            index = None if label is None else universe.index(label)
            failing = mpq(0)
            for released, probability in law.items():
                shown = dict(released)
                labels = shown.keys() | truth.keys() | set(watched) if index is None else {index}
                worst = max(abs(shown.get(i, 0) - truth.get(i, 0)) for i in labels)
                if worst > a:
                    failing += probability
            what = "the largest error" if label is None else f"the error of {label!r}"
            claims.append(ExactClaim(f"data {data}: Pr[{what} > {a}]", failing, beta))
        return claims

    def _misses(self, seed: int, label: Any, a: int, size: int) -> int:
        return int(np.count_nonzero(self._errors(size, seed)[label] > a))

    def accuracy_plot(self, settings: Settings) -> dict[str, Any]:
        """Declared a against the empirical quantile: of the first label the per-query bound
        covers, or else (a sparse release whose threshold no label here passes) of the largest
        error over the labels, against the simultaneous bound."""
        truth, bounds = self._truth(), self._bounds()
        covered = {label for _, label, _ in bounds}
        label = next((x for x in truth if x in covered), None)
        claims = {beta: a for beta, x, a in bounds if x == label}
        if not claims:
            return {}
        shown = "the largest error" if label is None else f"label {label!r}, count {truth[label]}"
        errors = self._errors(self.sample_size(settings), settings.seed)
        return quantile_plot(f"{self.where}, {shown}", errors[label], claims)

    # Bad input and the property search.

    def bad_data(self, source: SeededSource) -> list[tuple[str, Callable[[], object]]]:
        """Labels outside the universe, more than n rows, counts that are negative, above n or
        not integers, strings where rows belong, and wrong types."""
        releaser = self.releaser
        n, x, y = releaser.n, releaser.universe.label(0), releaser.universe.label(1)
        bad: list[object] = [[label] for label in _outside(releaser.universe)]
        bad += [{label: 1} for label in _outside(releaser.universe)]
        bad += [[x] * (n + 1), {x: n, y: 1}, {x: n + 1}, {x: -1}, {x: 0.5}, {x: 1.0}, {x: True}]
        bad += [{x: "1"}, {x: None}, {x: np.float64(1)}, {x: 2**70}, [[x]], [{x: 1}]]
        bad += ["ab", b"ab", str(x), 5, 1.5, None, object()]
        return [(f"release({data!r})", partial(releaser.release, data, source)) for data in bad]

    def data_space(self) -> DataSpace:
        """Rows and label → count mappings whose labels are sometimes in the universe."""
        universe, n = self.releaser.universe, self.releaser.n
        inside = sorted({0, 1, universe.size - 1})
        data = hostile_rows_and_mappings([universe.label(i) for i in inside], n, n + 2)

        def valid(given: object) -> bool:
            if isinstance(given, dict):
                counts = list(given.values())
                labels_ok = all(label in universe for label in given)
                return labels_ok and all(_is_count(c, n) for c in counts) and sum(counts) <= n
            return isinstance(given, list) and len(given) <= n and all(x in universe for x in given)

        return DataSpace(data, valid, self.releaser.release)

    # Hygiene.

    def _datasets(self, seed: int) -> dict[str, Any]:
        """Small datasets of the releaser's universe: mappings label → count, and rows."""
        universe, n = self.releaser.universe, self.releaser.n
        labels = [universe.label(i) for i in range(min(4, universe.size))]
        rng = np.random.default_rng(seed)  # builds test inputs only, never a mechanism's noise
        mixed = rng.multinomial(rng.integers(1, n, endpoint=True), [1 / len(labels)] * len(labels))
        return {
            "empty": {},
            "one label": {labels[0]: n},
            "two labels": self.dataset(n // 2),
            "two labels swapped": self._swapped(self.dataset(n // 2)),
            "mixed": {label: int(c) for label, c in zip(labels, mixed, strict=True) if c},
            "rows": [labels[i % len(labels)] for i in range(n)],
        }

    def _swapped(self, data: dict[Any, int]) -> dict[Any, int]:
        """*data* with the counts of x₀ and x₁ exchanged: the same labels, rows and shape, so
        state kept under a key of the data's shape is seen on an instance with another
        history."""
        x, y = self.watched
        swapped = {x: data.get(y, 0), y: data.get(x, 0)}
        return {label: count for label, count in swapped.items() if count}

    def calls(self, seed: int) -> list[Call]:
        return [
            Call(f"release({name} data)", partial(self.releaser.release, data), (data,))
            for name, data in self._datasets(seed).items()
        ]

    def large_calls(self, seed: int) -> list[Call]:
        """A release of a mapping over up to 2¹⁶ labels of the universe and as many rows as n
        allows."""
        labels = universe_labels(self.releaser.universe)
        return large_label_calls("release", self.releaser.release, labels, self.releaser.n, seed)

    def hygiene_problems(self, strict: bool, seed: int) -> list[str]:
        """:data:`RELEASES` releases of each small dataset: dpplug histograms over the
        releaser's universe (dense: a count for every label; sparse: bins in canonical order
        naming labels of the universe), every shown count an integer in [0, n], no empty bin
        from a releaser that declares ``releases_empty_bins = False``, reproducible from the
        seed; a strict-time releaser must draw as often on every dataset of n rows."""
        releaser = self.releaser
        problems: list[str] = []
        draws: dict[str, int] = {}
        for name, data in self._datasets(seed).items():
            counts = releaser.true_counts(data)
            present = {releaser.universe.label(i) for i in counts.indices}
            source = SeededSource(seed)
            releases = [releaser.release(data, source) for _ in range(RELEASES)]
            for release in releases:
                found = _structure_problems(releaser, release)
                found = found or self._count_problems(release, present)
                problems += [f"data {data}: {problem}" for problem in found]
            if problems:
                return problems
            if counts.rows == releaser.n:
                draws[name] = source.draws
            if counts.rows and source.draws == 0:
                problems.append(f"data {data}: drew nothing from the RandomSource")
            again = SeededSource(seed)
            if [_content(r) for r in releases] != [
                _content(releaser.release(data, again)) for _ in range(RELEASES)
            ]:
                problems.append(f"data {data}: {NOT_REPRODUCIBLE}")
            problems += self._order_problems(data, [_content(r) for r in releases], seed)
        return problems + strict_time_problems(strict, draws)

    def _order_problems(self, data: Any, contents: list[object], seed: int) -> list[str]:
        """The same data in other insertion orders (mappings with their keys reordered, rows
        shuffled) must give the same releases from the same seed: a release may not depend on
        the order the caller happened to build the data in."""
        rng = np.random.default_rng(seed)  # reorders test inputs only
        for _ in range(ORDERINGS):
            if isinstance(data, dict):
                keys = list(data)
                reordered: Any = {keys[i]: data[keys[i]] for i in rng.permutation(len(keys))}
            else:
                reordered = [data[i] for i in rng.permutation(len(data))]
            if reordered == data and list(reordered) == list(data):
                continue
            source = SeededSource(seed)
            again = [_content(self.releaser.release(reordered, source)) for _ in range(RELEASES)]
            if again != contents:
                return [
                    f"data {data}: the same data in another insertion order ({reordered}) gave "
                    "other releases from the same seed: the release depends on the order the "
                    "caller built the data in"
                ]
        return []

    def _count_problems(self, release: Any, present: set[Any]) -> list[str]:
        """Every shown count an integer in [0, n]; no empty bin (a label not *present* in the
        data) from a releaser that declares it releases nonempty bins only."""
        releaser = self.releaser
        shown = shown_counts(release, [*self.spot_labels, *present])
        bad = {x: c for x, c in shown.items() if not (_is_integer(c) and 0 <= c <= releaser.n)}
        if bad:
            return [f"released counts {bad} are not integers in [0, n = {releaser.n}]"]
        if releaser.releases_empty_bins:
            return []
        if not isinstance(release, SparseHistogram):
            kind = type(release).__name__
            return [
                f"declares releases_empty_bins = False but returns a {kind}, showing every label"
            ]
        empty = [label for label in release.labels if label not in present]
        return [f"released {empty}, whose true counts are 0"] if empty else []

    # Along the other cells of the surface × dimension matrix.

    def checks(self, settings: Settings) -> list[Check]:
        return [
            Check(
                (("release", Dimension.FORMS),),
                "hygiene",
                Status.CHECKED,
                "the same data in every form",
                lambda s: self._form_problems(s.seed),
            ),
            Check(
                (("release", Dimension.WHOLE),),
                "hygiene",
                Status.CHECKED,
                "the release is a dpplug histogram carrying the mechanism's own declarations",
                lambda s: self._whole_problems(s.seed),
            ),
            Check(
                (("release", Dimension.SIZE), ("release", Dimension.STATE)),
                "hygiene",
                Status.SAMPLED,
                "labels at both ends of a large universe treated alike, within a release and "
                "from one release to the next",
                lambda s: self._size_problems(s),
            ),
            Check(
                (("release", Dimension.WHOLE),),
                "hygiene",
                Status.SAMPLED,
                "each count released as its own label's, on labels spread across universes of "
                + " and ".join(f"{size:,}" for size in PLACEMENT_SIZES)
                + " labels and of text labels in no sorted order",
                lambda s: self._placement_problems(s),
            ),
            Check(
                (("release", Dimension.SIZE),),
                "exact-privacy",
                Status.EXACT,
                f"a label of one row added to {MANY_LABELS} labels of 2 rows (n up its size "
                "ladder), its released count over every outcome of its noise with the others' "
                "noise fixed, exactly",
                lambda s: self._many_labels_problems(s.seed),
            ),
            Check(
                (("release", Dimension.SIZE), ("release", Dimension.NUMBERS)),
                "exact-privacy",
                Status.EXACT,
                f"a count crossing 2^8 and 2^16 at n = {CROSSING_N}, its released count over its "
                "noise's likely outcomes (a lower bound on the divergence)",
                lambda s: self._crossing_problems(s.seed),
            ),
            Check(
                (("release", Dimension.RELATIONS),),
                "exact-privacy",
                Status.EXACT,
                f"neighbours holding up to {SPREAD_LABELS} non-empty labels, exactly (past the "
                f"{EXACT_LABELS} labels of every dataset), where the case takes that many rows",
                lambda s: self._spread_problems(),
                every_case=True,
            ),
        ]

    def _stressed_claims(self, settings: Settings) -> list[Claim]:
        """The per-query bound on the count hardest for it: one label at the smallest count the
        bound covers (its threshold + 1; n where it covers every count), on this case with n
        up its size ladder (declared cases are small enough that a ≥ n often makes a bound hold
        trivially), at the first n ≤ :data:`STRESS_MOST_N` that takes that count; exact from
        the release law at each β of :data:`STRESS_BETAS`, sampled at the first where the law
        cannot be enumerated."""
        claims: list[Claim] = []
        for beta in STRESS_BETAS:
            found = self._stressed_case(beta)
            if found is None:
                continue
            where, releaser, count, a = found
            label = releaser.universe.label(0)
            what = f"{where}, one label of count {count}: its error exceeds a={a}"
            try:
                law = releaser.release_law({label: count})
            except NotSupported:
                if beta == STRESS_BETAS[0]:
                    misses = partial(_label_misses, releaser, label, count, a, settings.seed)
                    # as few releases as the contract's power needs: they may be costly
                    claims.append(SampledClaim(what, beta, 1, misses, MAX_RELEASE_TRIALS))
                continue
            index = releaser.universe.index(label)
            failing = sum(
                (p for out, p in law.items() if abs(dict(out).get(index, 0) - count) > a), mpq(0)
            )
            claims.append(ExactClaim(what, failing, beta))
        return claims

    def _stressed_case(self, beta: Fraction) -> tuple[str, HistogramReleaser, int, int] | None:
        """A case up the n ladder (n ≤ :data:`STRESS_MOST_N`), also at δ = 10⁻⁶ where the
        schema takes a δ, whose per-query bound at *beta* covers a count it can take: the first
        where a label dropped at that count fails the bound (count > a), else the first; with
        that count and the bound's a."""
        found: list[tuple[str, HistogramReleaser, int, int]] = []
        for where, probe in self.ladder():
            if not where.startswith("n="):
                continue
            for shown, changes in (("", {}), (", δ=1e-6", {"delta": STRESS_DELTA})):
                made = probe.variant(changes) if changes else probe
                if made is None:
                    continue
                releaser = cast(ReleaserProbe, made).releaser
                if releaser.n > STRESS_MOST_N:
                    continue
                if isinstance(releaser.exact_structure(), CompactField):
                    return None  # its decoded law covers 3 labels; its sampled claims read 5
                try:
                    bound = releaser.accuracy(beta)
                except BadParameter:  # a β the releaser cannot promise
                    continue
                count = bound.threshold + 1 if bound.threshold else releaser.n
                if count <= releaser.n and _covered(bound, count):
                    found.append((where + shown, releaser, count, bound.per_query.a))
        return next((case for case in found if case[2] > case[3]), found[0] if found else None)

    def _many_labels_problems(self, seed: int) -> list[str]:
        """Exact privacy of one label among many: where the case with n up its size ladder
        takes :data:`MANY_LABELS` labels of 2 rows each and one more row, a release whose
        first served draw is the noise of the data's counts (:class:`ServedDraws`) is
        replayed with the other labels' noise fixed at each of :data:`MANY_DRAWS` seeded
        draws from their law, and a label x of one row added: x's released count, over every
        outcome of its own noise, against the dataset without x, at the declared guarantee. A
        failure is reported only when every fixed draw of the others shows it (the others'
        noise is the same on both sides, so the divergence of the whole release is at least
        that of x's count wherever x's law does not depend on the others'). Code keyed to the
        number of non-empty labels (a vectorised path past 64) is compared here, exactly, and
        code keyed to the universe's size on the same rung over :data:`MANY_UNIVERSES` labels."""
        for where, rung in self.ladder():
            wide = (
                rung.variant(c) for c in ({}, *({p: u} for p in _universes(rung) for u in WIDE))
            )
            probe = next(
                (
                    v
                    for v in wide
                    if v and cast(ReleaserProbe, v).releaser.universe.size > MANY_LABELS
                ),
                None,
            )
            if probe is None or not where.startswith("n="):
                continue
            releaser = cast(ReleaserProbe, probe).releaser
            if releaser.n < 2 * MANY_LABELS + 1:
                continue
            if not isinstance(releaser.exact_structure(), ServedDraws):
                raise NotSupported("its draws are not served: one label's law cannot be isolated")
            problems = _one_among_many(where, releaser, seed)
            larger = (
                rung.variant({p: f"range:0:{size - 1}"})
                for p in _universes(rung)
                for size in MANY_UNIVERSES
            )
            for variant in (v for v in larger if v is not None and not problems):
                wider = cast(ReleaserProbe, variant).releaser
                if isinstance(wider.exact_structure(), ServedDraws):
                    shown = f"{where}, {wider.universe.size} labels"
                    problems = _one_among_many(shown, wider, seed)
            return problems
        raise NotSupported(
            f"no n up the size ladder takes {MANY_LABELS} labels of 2 rows and one more row"
        )

    def _crossing_problems(self, seed: int) -> list[str]:
        """Exact privacy, as a lower bound, of one label whose count crosses a power of two
        (2^8 and 2^16: code splitting counts into bytes or limbs) on a case with n past 2^16
        where the schema takes it, over a universe of 3 labels: x₀'s released count at count
        − 1 and at count, over its noise's most likely outcomes with the others' fixed, where
        the release's first served draw is its noise (:func:`_crossing`)."""
        releaser = self._with_universe("range:0:2", CROSSING_N, FAST_SAMPLER)
        if releaser is None or not isinstance(releaser.exact_structure(), ServedDraws):
            raise NotSupported(f"no case over 3 labels with n = {CROSSING_N} and served draws")
        for count in CROSSING_COUNTS:
            if problems := _crossing(releaser, count, seed):
                return problems
        return []

    def _spread_problems(self) -> list[str]:
        """Exact privacy between datasets of one row on each of the first j labels, j up to
        :data:`SPREAD_LABELS` (as n and the universe allow): the next one a row added, and the
        same rows with one moved from the first label to the next (replaced), so code keyed to
        how many labels are non-empty (a threshold or a batch path growing with them) is
        compared exactly."""
        releaser = self.releaser
        most = min(releaser.n, releaser.universe.size, SPREAD_LABELS)
        if most <= EXACT_LABELS:
            raise NotSupported(
                f"this case takes at most {most} non-empty labels: the exact check's datasets "
                "hold every such histogram already"
            )
        labels = [releaser.universe.label(i) for i in range(most)]
        chain = [dict.fromkeys(labels[:j], 1) for j in range(most + 1)]
        pairs = [(chain[j], chain[j + 1]) for j in range(most)]
        pairs += [({**chain[j], labels[0]: 2}, chain[j + 1]) for j in range(1, most)]
        relation = self.guarantee.neighbouring.relation
        if relation is not Relation.REPLACE_ONE:
            pairs = pairs[:most]  # moving a row is two steps under add/remove
        guarantee = releaser.guarantee
        worst = WorstCase(guarantee.exp_epsilon)
        for d, d2 in pairs:
            worst.compare(
                str(d), str(d2), *_coded(releaser.release_law(d), releaser.release_law(d2))
            )
        return list(worst.failures(guarantee, "datasets with many non-empty labels"))

    def _forms(self, data: dict[Any, int]) -> list[tuple[str, object]]:
        """*data* (a mapping) in the other forms a caller may pass: rows as a list, a tuple, a
        one-shot generator and an iterator, a Counter, numpy counts, and numpy arrays of labels
        of every integer width that holds them."""
        rows = [label for label, count in data.items() for _ in range(count)]
        forms: list[tuple[str, object]] = [
            ("rows", rows),
            ("a tuple of rows", tuple(rows)),
            ("a generator of rows", (row for row in rows)),
            ("an iterator over rows", iter(rows)),
            ("a Counter", Counter(data)),
            ("numpy counts", {label: np.int64(count) for label, count in data.items()}),
        ]
        if rows and all(isinstance(label, int) for label in rows):
            labels = np.array(rows, dtype=np.int64)
            forms.append(("a numpy int64 array of labels", labels))
            forms += [(f"a numpy {name} array of labels", a) for name, a in other_widths(labels)]
        return forms

    def _form_cases(self, seed: int) -> list[tuple[HistogramReleaser, str, dict[Any, int]]]:
        """(releaser, name, data): the small datasets of the case, then those of the case over
        range universes that start elsewhere than 0 (:data:`SHIFTED_STARTS`, where the schema
        takes them), so code that reads labels as offsets from 0 is seen."""
        cases = [
            (self.releaser, name, data)
            for name, data in self._datasets(seed).items()
            if isinstance(data, dict)
        ]
        size = min(self.releaser.universe.size, EXACT_LABELS + 2)
        for start in SHIFTED_STARTS:
            made = self._with_universe(f"range:{start}:{start + size - 1}", None)
            if made is not None:
                labels = [made.universe.label(i) for i in range(size)]
                data = {label: 1 + i % max(1, made.n // size) for i, label in enumerate(labels)}
                while sum(data.values()) > made.n:
                    data.pop(max(data))
                full = {labels[-1]: min(made.n, SHIFTED_ROWS)}
                cases += [(made, f"range from {start}", d) for d in (full, data)]
        return cases

    def _form_problems(self, seed: int) -> list[str]:
        """Each form of each small dataset gives, from the same seed, the release of its
        mapping: the kind validates every form into the same true counts before any draw."""
        for releaser, name, data in self._form_cases(seed):
            expected = _content(releaser.release(data, SeededSource(seed)))
            for form, given in self._forms(data):
                found = _content(releaser.release(given, SeededSource(seed)))
                if found != expected:
                    return [
                        f"the {name} data {data} over {releaser.universe} passed as {form} gave "
                        "another release from the same seed than as a mapping: every form of the "
                        "same data must be released alike"
                    ]
        return []

    def _whole_problems(self, seed: int) -> list[str]:
        """The release is exactly a dpplug histogram over the mechanism's universe, carrying its
        guarantee, its accuracy and its text (:func:`~..whole.whole_problems`), also after an
        instance with other parameters released, and a later release leaves an earlier one as it
        was."""
        releaser = self.releaser
        fixed = {"universe": releaser.universe, "guarantee": releaser.guarantee}
        fixed["mechanism"] = repr(releaser)
        datasets = self._datasets(seed)
        first = next(iter(datasets.values()))
        self.others_first(lambda other: cast(ReleaserProbe, other).releaser.release(first))
        reference = None
        for name, data in datasets.items():
            release = releaser.release(data, SeededSource(seed))
            named = {"releaser": releaser.name, "parameters": params_text(releaser.params)}
            compact = fixed | named if isinstance(release, CompactHistogram) else fixed
            problems = whole_problems(
                releaser, release, _HISTOGRAMS, compact, _LAW_FIELDS, reference
            )
            if problems:
                return [f"{name} data: {problems[0]}"]
            reference = release
            before = _content(release)
            releaser.release(data, SeededSource(seed + 1))
            if _content(release) != before:
                return [f"{name} data: a release changed when the mechanism released again"]
        return []

    def _size_case(self, sizes: tuple[int, ...] | None = None) -> HistogramReleaser | None:
        """The case over the first range universe the schema takes among *sizes* (by default
        from :data:`LARGE_UNIVERSE` labels down: sizes up to the schema's limit), with n at
        least :data:`SIZE_N` where the schema takes it, and, where the releaser takes a
        sampler, the fastest built-in one."""
        n = self.params.get("n")
        # At least SIZE_N units, where n is public: bounded noise at a tiny n cannot miss a.
        bounds = [max(SIZE_N, int(n)), n] if n is not None else [None]
        for size, units in product(sizes or SIZES, bounds):
            made = self._with_universe(f"range:0:{size - 1}", units, FAST_SAMPLER)
            if made is not None:
                return made
        return None

    def _with_universe(
        self, universe: str, n: object, sampler: str | None = None
    ) -> HistogramReleaser | None:
        """The case over *universe* (and *n* and *sampler* where given and declared), or None
        where the schema refuses it."""
        params = dict(self.params)
        declared = {p.name for p in type(self.releaser).schema}
        if "universe" not in declared:
            return None
        params["universe"] = universe
        if sampler is not None and "sampler" in declared:
            params["sampler"] = sampler
        if n is not None:
            params["n"] = n
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", AccuracyWarning)
                made = self.releaser.registry_in_use().create(self.releaser.name, **params)
        except DpplugError:
            return None
        return made if isinstance(made, HistogramReleaser) else None

    def _size_problems(self, settings: Settings) -> list[str]:
        """Over a universe of :data:`LARGE_UNIVERSE` labels (past 2^20, where chunked code ends),
        or the largest of :data:`SIZES` the schema takes, the first and the last label, given the
        same count, and the second and the second to last, both empty, must be released alike: the
        kind's releasers treat labels alike (relabelling the universe relabels the release). From
        as many releases as :data:`SIZE_LABELS` labels allow (between :data:`MIN_SIZE_RELEASES`
        and :data:`SIZE_RELEASES`), an exact McNemar test per event "released count = true count"
        and "within the declared a": under that symmetry, each pair's discordant outcomes are
        equally likely either way, whatever the dependence within a release (false alarm split with
        the other tests of the run's share); and, on data on the first label alone, empty labels at
        both ends repeat from one release to the next alike (:func:`_repeat_problems`)."""
        releaser = self._size_case()
        if releaser is None:
            raise NotSupported(
                f"the schema takes no range universe of {SIZES[-1]} to {LARGE_UNIVERSE} labels "
                "for this case"
            )
        last = releaser.universe.size - 1
        count = max(1, releaser.n // 3)
        data = {0: count, last: count}
        planned = min(SIZE_RELEASES, max(MIN_SIZE_RELEASES, SIZE_LABELS // (last + 1)))
        a = releaser.accuracy(BETAS[0]).per_query.a
        source = SeededSource(settings.seed)
        shown = _timed_releases(releaser, data, source, planned)
        releases = len(shown)
        pairs = (((0, count), (last, count)), ((1, 0), (last - 1, 0)))
        alpha = settings.false_alarm / 2 / (2 * len(pairs) + 2)  # half: the placement check
        everywhere = releaser.accuracy(BETAS[0]).simultaneous
        misses = sum(1 for r in shown if _largest_error(r, data) > everywhere.a)
        if binom.sf(misses - 1, releases, float(everywhere.beta)) < alpha:
            return [
                f"over range:0:{last}, the largest error over every label exceeded the "
                f"simultaneous a = {everywhere.a} in {misses} of {releases} releases, too many "
                f"for β = {everywhere.beta} (binomial p < {alpha:.1e})"
            ]
        events: tuple[tuple[str, Callable[[Any, int, int], bool]], ...] = (
            ("exact", lambda r, z, c: bool(r.count(z) == c)),
            (f"within a = {a}", lambda r, z, c: bool(abs(r.count(z) - c) <= a)),
        )
        for (x, cx), (y, cy) in pairs:
            for what, event in events:
                only_x = sum(1 for r in shown if event(r, x, cx) and not event(r, y, cy))
                only_y = sum(1 for r in shown if event(r, y, cy) and not event(r, x, cx))
                if _mcnemar(only_x, only_y) < alpha:
                    return [
                        f"over range:0:{last}, labels {x} and {y} (true counts {cx} and {cy}) "
                        f"are released differently: '{what}' held for {x} only in {only_x} and "
                        f"for {y} only in {only_y} of {releases} releases (exact McNemar "
                        f"p < {alpha:.1e}); a releaser treats every label alike"
                    ]
        alone = _timed_releases(releaser, {0: count}, source, planned)
        return _repeat_problems(alone, last, alpha)

    def _placement_problems(self, settings: Settings) -> list[str]:
        """Over range universes of :data:`PLACEMENT_SIZES` labels and a universe of text labels
        in no sorted order (:data:`PLACEMENT_LABELS`), where the schema takes them (n at least
        :data:`SIZE_N`), data on labels spread across the universe (the
        first four, 9 to 11, a third, the middle, the last two, and both sides of 2^6, 2^8,
        2^10, 2^12 and 2^16, where chunked code starts a chunk), each with its own count:
        the largest error over those labels and the released ones must stay within the
        declared simultaneous a as often as its β says (a binomial test on
        :data:`PLACEMENT_RELEASES` releases), so a count attributed to another label (a layout
        in another order than the universe's) is seen wherever the labels are."""
        alpha = settings.false_alarm / 2 / (len(PLACEMENT_SIZES) + 1)  # half: the size check
        tried = 0
        n = self.params.get("n")
        shuffled = self._with_universe(
            PLACEMENT_LABELS, None if n is None else max(SIZE_N, int(n)), FAST_SAMPLER
        )
        for releaser in (*(self._size_case((size,)) for size in PLACEMENT_SIZES), shuffled):
            if releaser is None or releaser.n < SIZE_N:
                continue
            tried += 1
            if problems := _placement_of(releaser, settings.seed, alpha):
                return problems
        if not tried:
            raise NotSupported(
                f"the schema takes none of {PLACEMENT_SIZES} labels with n ≥ {SIZE_N}"
            )
        return []


def _placement_of(releaser: HistogramReleaser, seed: int, alpha: float) -> list[str]:
    """:meth:`ReleaserProbe._placement_problems` on one releaser."""
    universe, n = releaser.universe, releaser.n
    size = universe.size
    edges = power_edges((6, 8, 10, 12, 16))
    spread = {0, 1, 2, 3, 9, 10, 11, size // 3, size // 2, size - 2, size - 1, *edges}
    labels = [universe.label(i) for i in sorted(i for i in spread if 0 <= i < size)]
    base = max(1, n // (2 * len(labels)))
    data = {x: base + j for j, x in enumerate(labels)}
    everywhere = releaser.accuracy(BETAS[0]).simultaneous
    shown = _timed_releases(releaser, data, SeededSource(seed), PLACEMENT_RELEASES)

    def largest_error(release: Any) -> int:
        counts = shown_counts(release, labels)
        return max(abs(counts.get(x, 0) - data.get(x, 0)) for x in counts.keys() | data.keys())

    misses = sum(1 for r in shown if largest_error(r) > everywhere.a)
    if binom.sf(misses - 1, len(shown), float(everywhere.beta)) >= alpha:
        return []
    return [
        f"over {size} labels {universe.label(0)!r}, {universe.label(1)!r}, …, data {data}: the "
        f"largest error over those labels and the listed ones exceeded the simultaneous "
        f"a = {everywhere.a} in {misses} of {len(shown)} releases, too many for "
        f"β = {everywhere.beta} (binomial p < {alpha:.1e}): each count must be released as "
        "its own label's"
    ]


def _timed_releases(
    releaser: HistogramReleaser, data: dict[Any, int], source: RandomSource, planned: int
) -> list[Any]:
    """*planned* releases of *data*, or as many as :data:`SIZE_SECONDS` of CPU time allow (at
    least :data:`FEWEST_TIMED`): a dense releaser with a slow sampler over a universe past 2^20
    labels takes seconds per release. Stopping on time, never on what was released, leaves the
    exact tests run on them valid; only their power is smaller."""
    shown: list[Any] = []
    started = time.process_time()
    while len(shown) < planned and (
        len(shown) < FEWEST_TIMED or time.process_time() - started < SIZE_SECONDS
    ):
        shown.append(releaser.release(data, source))
    return shown


def _repeat_problems(shown: list[Any], last: int, alpha: float) -> list[str]:
    """Releases of data on label 0 alone, taken two by two from one instance: the empty labels
    of a block at the start (1 … :data:`REPEAT_BLOCK`) and of one at the end (before *last*),
    which a relabelling fixing label 0 swaps, must repeat from one release to the next alike (an
    exact McNemar test), so noise that a cache keyed to a data-free chunk of the universe serves
    again is seen."""
    near, far = range(1, 1 + REPEAT_BLOCK), range(last - REPEAT_BLOCK, last)

    def repeated(block: range, first: Any, second: Any) -> bool:
        return all(first.count(z) == second.count(z) for z in block)

    twos = list(zip(shown[::2], shown[1::2], strict=False))
    only_near = sum(1 for r, t in twos if repeated(near, r, t) and not repeated(far, r, t))
    only_far = sum(1 for r, t in twos if repeated(far, r, t) and not repeated(near, r, t))
    if _mcnemar(only_near, only_far) >= alpha:
        return []
    return [
        f"over range:0:{last}, two releases from one instance agree on every one of the "
        f"{REPEAT_BLOCK} empty labels before {last} in {only_far} pairs where the first "
        f"{REPEAT_BLOCK} did not, and the reverse in {only_near}, of {len(twos)} pairs (exact "
        f"McNemar p < {alpha:.1e}): noise drawn again for one release must not be served again"
    ]


def _largest_error(release: object, data: dict[int, int]) -> int:
    """The largest error of a dense or sparse release over every label of its range universe
    (labels are their indices); 0 for other releases, which this does not read."""
    if isinstance(release, DenseHistogram):
        truth = np.zeros(len(release.counts), dtype=np.int64)
        truth[list(data)] = list(data.values())
        return int(np.max(np.abs(release.counts - truth)))
    if isinstance(release, SparseHistogram):
        shown = dict(zip(release.indices, release.counts, strict=True))
        errors = [abs(c - data.get(i, 0)) for i, c in shown.items()]
        errors += [count for i, count in data.items() if i not in shown]
        return max(errors, default=0)
    return 0


def _mcnemar(a: int, b: int) -> float:
    """The exact two-sided McNemar p-value of a and b discordant pairs."""
    total = a + b
    if total == 0:
        return 1.0
    return float(min(1.0, 2 * binom.cdf(min(a, b), total, 0.5)))


#: Non-empty labels beside the one added in the many-labels check (past 64, where vectorised
#: code tends to start), and the draws of their noise it fixes in turn.
MANY_LABELS = 65
MANY_DRAWS = 3
#: Universes tried, in turn, where a case's own is too small for the many-labels check.
WIDE = ("range:0:127", "bytes:8")
#: Range universes the many-labels check also runs on, where the schema takes them: past 2^12
#: and 2^16 labels, where dense code tends to change paths.
MANY_UNIVERSES = ((1 << 12) + 77, (1 << 16) + 77)
#: The crossing check: its n, the counts it crosses, and the mass it leaves unexplored.
CROSSING_N = (1 << 16) + 77
CROSSING_COUNTS = (1 << 8, 1 << 16)
CROSSING_TAIL = mpq(1, 1 << 40)
#: Empty labels at each end of the size check's universe compared across releases.
REPEAT_BLOCK = 64
#: Labels of the universe of the size check (past 2^20, with a tail no power of two divides).
LARGE_UNIVERSE = (1 << 20) + 77
#: The universe sizes the size check tries, largest first, where the schema limits the universe.
SIZES = (LARGE_UNIVERSE, *((1 << k) + 77 for k in range(19, 5, -1)))
#: Universe sizes of the placement check (labels past 10, whose text sorts apart from their
#: value, and past 2^12), and its releases.
PLACEMENT_SIZES = ((1 << 6) + 77, (1 << 12) + 77)
PLACEMENT_RELEASES = 16
#: … and a universe of text labels declared in no sorted order.
PLACEMENT_LABELS = "labels:" + json.dumps([f"x{i * 37 % 141:03d}" for i in range(141)])
#: The fewest units the size check's case allows (n), where the schema takes that many.
SIZE_N = 1000
#: The sampler the size check's case uses, where the releaser takes one (the fastest built-in).
FAST_SAMPLER = "fixedpoint-geometric"
#: The most releases of the size check, the fewest, and the labels all its releases may span
#: together: the number of releases depends on the universe only (64 at 2^20 + 77 labels), not
#: on how fast the machine is, unless each batch of releases passes SIZE_SECONDS of CPU time
#: (then at least FEWEST_TIMED are made; a dense releaser with a slow sampler, seconds a release).
SIZE_RELEASES = 200
MIN_SIZE_RELEASES = 24
SIZE_LABELS = 1 << 26
SIZE_SECONDS = 60
FEWEST_TIMED = 8


def _outside(universe: Universe) -> list[object]:
    """Labels that are not in *universe* (of the right type and of wrong ones)."""
    candidates: list[object] = [-1, universe.size, 10**30, "\udc80", "z" * 1000, b"\xff" * 1000]
    candidates += [0.5, None, True, (0,), frozenset()]
    return [label for label in candidates if label not in universe]


def _is_count(value: object, n: int) -> bool:
    return (
        isinstance(value, numbers.Integral) and not isinstance(value, bool) and 0 <= int(value) <= n
    )


def _is_integer(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)


def _content(release: Any) -> object:
    """What two releases must share to be the same release."""
    if isinstance(release, CompactHistogram):
        return release.modulus, release.coefficients
    return bins(release)


def _structure_problems(releaser: HistogramReleaser, release: Any) -> list[str]:
    """Type, universe, dense shape and sparse order; empty if the counts can be read."""
    if not isinstance(release, _HISTOGRAMS):
        return [f"release() returned a {type(release).__name__}, not a dpplug histogram"]
    if release.universe != releaser.universe:
        return [f"released over {release.universe.spec}, not {releaser.universe.spec}"]
    size = releaser.universe.size
    if isinstance(release, DenseHistogram):
        counts = release.counts
        if not isinstance(counts, np.ndarray) or counts.dtype != np.int64:
            shown = getattr(counts, "dtype", type(counts).__name__)
            return [
                f"a dense histogram's counts are {shown}, not an int64 array: their type must "
                "not depend on the data (a narrower one tells that every count fits it)"
            ]
        return [] if counts.shape == (size,) else [f"dense counts of shape {counts.shape}"]
    if isinstance(release, SparseHistogram):
        indices = list(release.indices)
        if not all(_is_integer(i) and 0 <= i < size for i in indices):
            return [f"released indices {indices} name labels outside the universe"]
        if any(a >= b for a, b in pairwise(indices)):
            return [f"bins released in the order {indices}, not in canonical (index) order"]
    return []
