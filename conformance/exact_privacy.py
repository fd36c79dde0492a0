"""Exact privacy checks on rational output laws (DESIGN.md "Conformance", check 2).

Everything here is exact ``gmpy2.mpq`` arithmetic; no float enters a decision.

- :func:`max_likelihood_ratio`: the pure-DP quantity max_z max(P(z)/Q(z), Q(z)/P(z)), compared
  with a declared rational bound on e^ε (MECHANISMS.md A3 "the exact check is pmf(c,z) ≤
  ((x+1)/x)·pmf(c±1,z)", A4, B1).
- :func:`hockey_stick`: the approximate-DP quantity Σ_z max(0, P(z) − e^ε·Q(z))
  (MECHANISMS.md B3: the k-TSGD divergence at e^ε is exactly δ′ = Pr[X = k]; A7).
- :func:`sampler_privacy`: both, over every neighbouring pair of counts a counting-query sampler
  accepts (Balcer–Vadhan Def. 4.1: counts differing by one), in both directions, with a check
  that each pmf sums to exactly 1 (MECHANISMS.md §E, "Exact rational check").

Laws with geometric tails (:class:`dpplug.Pmf` with ``tail_ratio``, e.g. the discrete Laplace of
MECHANISMS.md A1) are handled exactly: beyond the union of the two windows both laws continue
geometrically, so the tails are summed in closed form instead of enumerated.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise, product
from typing import Any

from gmpy2 import mpq

from dpplug.conformance.cases import probes
from dpplug.conformance.release_law import Law, release_law
from dpplug.conformance.results import ContractResult, Outcome
from dpplug.conformance.settings import Settings
from dpplug.errors import NotSupported
from dpplug.guarantee import Guarantee, Relation
from dpplug.kinds import CountingQuerySampler, HistogramReleaser, PartitionSelector
from dpplug.pmf import Pmf
from dpplug.registry import Entry

Rat = Any  # gmpy2.mpq (gmpy2 ships no type stubs)

#: Counts checked for samplers without a count bound (noise addition on every integer).
UNBOUNDED_COUNTS = (-3, 3)


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
    (MECHANISMS.md B3). *exp_epsilon* is the rational e^ε (int, ``Fraction`` or ``mpq``).

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


@dataclass(frozen=True)
class PrivacyReport:
    """The outcome of :func:`sampler_privacy`.

    ``counts`` is the inclusive range of true counts checked and ``pairs`` the number of
    neighbouring pairs (each checked in both directions). ``worst_ratio`` is the largest
    likelihood ratio over all pairs and outputs (``None`` means infinite, as for k-TSGD, whose
    extreme outputs have no counterpart); ``worst_divergence`` the largest hockey-stick divergence
    at ``guarantee.exp_epsilon`` over pairs and directions. A pure guarantee passes iff
    ``worst_ratio ≤ exp_epsilon``; an approximate one iff ``worst_divergence ≤ delta``; both also
    need every pmf to sum to exactly 1. ``failures`` says what failed, in words.
    """

    mechanism: str
    guarantee: Guarantee
    counts: tuple[int, int]
    pairs: int
    totals_exact: bool
    worst_ratio: Rat | None
    worst_ratio_pair: tuple[int, int] | None
    worst_divergence: Rat
    worst_divergence_pair: tuple[int, int] | None
    passed: bool
    failures: tuple[str, ...]


class _Worst:
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
        e, delta = _text(guarantee.exp_epsilon), _text(guarantee.delta)
        if guarantee.pure and (self.ratio is None or self.ratio > guarantee.exp_epsilon):
            shown = "∞" if self.ratio is None else _text(self.ratio)
            pair = _pair(self.ratio_pair)
            return [f"likelihood ratio {shown} for {inputs} {pair} exceeds e^ε = {e}"]
        if not guarantee.pure and self.divergence > guarantee.delta:
            divergence, pair = _text(self.divergence), _pair(self.divergence_pair)
            return [
                f"hockey-stick divergence {divergence} at e^ε = {e} for {inputs} {pair} "
                f"exceeds δ = {delta}"
            ]
        return []


def _text(value: Rat) -> str:
    """An exact rational as text, or its float value when the fraction is too long to read."""
    text = str(value)
    return text if len(text) <= 32 else f"≈{float(value):.9g}"


def _pair(pair: tuple[Any, Any] | None) -> str:
    return "" if pair is None else f"{pair[0]} and {pair[1]}"


def sampler_privacy(
    sampler: CountingQuerySampler, unbounded_counts: tuple[int, int] = UNBOUNDED_COUNTS
) -> PrivacyReport:
    """Check a counting-query sampler's declared guarantee exactly over its neighbouring counts.

    Counts are every c in [0, n] for a bounded sampler and *unbounded_counts* (inclusive) for a
    sampler without a count bound. Neighbours are counts at most ``sensitivity`` apart
    (Balcer–Vadhan Def. 4.1; ``Relation.COUNT``), each pair checked in both directions: the max
    likelihood ratio against ``guarantee.exp_epsilon`` for a pure guarantee (MECHANISMS.md A3–A5),
    the hockey-stick divergence at ``exp_epsilon`` against ``guarantee.delta`` for an
    approximate one (B3). Every pmf must sum to exactly 1.
    """
    guarantee = sampler.guarantee
    neighbouring = guarantee.neighbouring
    if neighbouring.relation is not Relation.COUNT:
        raise ValueError(
            f"{sampler.name} states its guarantee for {neighbouring.describe()}; "
            f"sampler_privacy checks counting-query samplers (Relation.COUNT)"
        )
    low, high = (0, sampler.n) if sampler.n is not None else unbounded_counts
    pmfs = {c: sampler.pmf(c) for c in range(low, high + 1)}
    failures = [
        f"pmf({c}) sums to {pmf.total()}, not 1" for c, pmf in pmfs.items() if pmf.total() != 1
    ]
    worst = _Worst(guarantee.exp_epsilon)
    pairs = [
        (c, c + j) for j in range(1, neighbouring.sensitivity + 1) for c in range(low, high - j + 1)
    ]
    for c, c2 in pairs:
        worst.compare(c, c2, pmfs[c], pmfs[c2])
    failures += worst.failures(guarantee, "counts")
    return PrivacyReport(
        mechanism=sampler.name,
        guarantee=guarantee,
        counts=(low, high),
        pairs=len(pairs),
        totals_exact=all(pmf.total() == 1 for pmf in pmfs.values()),
        worst_ratio=worst.ratio,
        worst_ratio_pair=worst.ratio_pair,
        worst_divergence=worst.divergence,
        worst_divergence_pair=worst.divergence_pair,
        passed=not failures,
        failures=tuple(failures),
    )


#: The exact releaser check uses datasets over at most this many labels (the universe's first).
RELEASER_LABELS = 3
#: … and gives up (NotSupported) when there would be more datasets than this.
MAX_DATASETS = 500


@dataclass(frozen=True)
class ReleaserReport:
    """The outcome of :func:`releaser_privacy`: how many datasets and neighbouring pairs were
    compared, the worst ratio (``None``: infinite) and divergence, and the failures in words."""

    datasets: int
    pairs: int
    worst_ratio: Rat | None
    worst_divergence: Rat
    failures: tuple[str, ...]


def releaser_privacy(releaser: HistogramReleaser) -> ReleaserReport:
    """Check a histogram releaser's declared guarantee exactly on tiny datasets.

    The datasets are every count vector over the first :data:`RELEASER_LABELS` labels of the
    universe with at most n rows; neighbours are one row apart under the guarantee's relation
    (replace-one: a row moves to another label; add-remove: a row is added, keeping ≤ n rows).
    Their exact release laws (:mod:`.release_law`, NotSupported where they cannot be
    enumerated) are compared as in :func:`sampler_privacy`, and each must sum to exactly 1.
    """
    guarantee = releaser.guarantee
    relation = guarantee.neighbouring.relation
    if relation is Relation.COUNT:
        raise ValueError(
            f"{releaser.name} states its guarantee for {guarantee.neighbouring.describe()}; "
            "a histogram releaser must state it for datasets (replace-one or add-remove)"
        )
    labels = [
        releaser.universe.label(i) for i in range(min(RELEASER_LABELS, releaser.universe.size))
    ]
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

    def show(counts: tuple[int, ...]) -> str:
        return str({label: c for label, c in zip(labels, counts, strict=True) if c})

    laws = {
        d: release_law(releaser, {x: c for x, c in zip(labels, d, strict=True) if c})
        for d in datasets
    }
    failures = [
        f"the release law of {show(d)} sums to {total}"
        for d, law in laws.items()
        if (total := sum(law.values(), mpq(0))) != 1
    ]
    worst = _Worst(guarantee.exp_epsilon)
    pairs = [(d, d2) for d in datasets for d2 in _neighbours(d, relation, releaser.n)]
    for d, d2 in pairs:
        worst.compare(show(d), show(d2), *_coded(laws[d], laws[d2]))
    failures += worst.failures(guarantee, "datasets")
    return ReleaserReport(len(datasets), len(pairs), worst.ratio, worst.divergence, tuple(failures))


def _neighbours(counts: tuple[int, ...], relation: Relation, n: int) -> list[tuple[int, ...]]:
    """The datasets one row from *counts* under *relation* that sort after it (so each pair is
    listed once)."""
    found = []
    for j in range(len(counts)):
        if relation is Relation.ADD_REMOVE:
            if sum(counts) < n:
                found.append(tuple(c + (i == j) for i, c in enumerate(counts)))
            continue
        for i in range(len(counts)):
            if i != j and counts[i] > 0:
                found.append(tuple(c - (k == i) + (k == j) for k, c in enumerate(counts)))
    return [other for other in found if other > counts]


def _coded(p: Law, q: Law) -> tuple[Pmf, Pmf]:
    """Two release laws as Pmfs over shared integer codes of their outputs."""
    codes = {output: code for code, output in enumerate(p.keys() | q.keys())}
    return (
        Pmf({codes[output]: prob for output, prob in p.items()}),
        Pmf({codes[output]: prob for output, prob in q.items()}),
    )


NAME = "exact-privacy"


def selector_privacy(selector: PartitionSelector) -> list[str]:
    """Failures of a partition selector's exact checks (MECHANISMS.md B1, B7; empty: passed).

    For every unit count n up to the saturation, in both directions, the hockey-stick divergence
    of one partition's output law at n and n + 1 at the per-partition e^ε is at most the
    per-partition δ; for selectors that only keep or drop this is exactly the four inequalities
    of B1 (the divergence between two Bernoulli laws is the largest of them). π(0) must be 0,
    each law must sum to 1, and the selection's guarantee must be at least the composition
    (L^c, 1 − (1 − δ)^c) over the c partitions one unit may change (ℓ₀, or 2ℓ₀ for replace-one).
    """
    per = selector.per_partition
    failures: list[str] = []
    if selector.keep_probability(0) != 0:
        failures.append(f"π(0) = {selector.keep_probability(0)}: absent partitions are released")
    laws = [selector.output_pmf(n) for n in range(selector.saturation + 2)]
    failures += [
        f"the law at {n} units sums to {law.total()}"
        for n, law in enumerate(laws)
        if law.total() != 1
    ]
    for n, (p, q) in enumerate(pairwise(laws)):
        worst = max(hockey_stick(p, q, per.exp_epsilon), hockey_stick(q, p, per.exp_epsilon))
        if worst > per.delta:
            failures.append(
                f"units {n} and {n + 1}: divergence {float(worst):.3g} at e^ε = "
                f"{float(per.exp_epsilon):.6g} exceeds the per-partition δ = {float(per.delta):.3g}"
            )
            break
    declared = selector.guarantee
    c = (declared.neighbouring.max_partitions or 1) * (
        2 if declared.neighbouring.relation is Relation.REPLACE_ONE else 1
    )
    if declared.exp_epsilon < per.exp_epsilon**c or declared.delta < 1 - (1 - per.delta) ** c:
        failures.append(
            f"the declared guarantee {declared.describe()} is below the composition of {c} "
            "per-partition releases"
        )
    return failures


def check(entry: Entry, settings: Settings) -> ContractResult:
    """Contract 3: exact privacy on every conformance case (rationals, no false alarms)."""
    shown: list[str] = []
    for probe in probes(entry):
        mechanism = probe.mechanism
        if isinstance(mechanism, HistogramReleaser):
            try:
                released = releaser_privacy(mechanism)
            except NotSupported as exc:
                raise NotSupported(
                    f"{probe.where}: {exc}; the audit checks this releaser statistically"
                ) from None
            if released.failures:
                failure = released.failures[0]
                return ContractResult(NAME, Outcome.FAILED, f"{probe.where}: {failure}")
            shown.append(_releaser_summary(released, probe.guarantee))
            continue
        if isinstance(mechanism, PartitionSelector):
            failures = selector_privacy(mechanism)
            if failures:
                return ContractResult(NAME, Outcome.FAILED, f"{probe.where}: {failures[0]}")
            shown.append(f"{mechanism.saturation + 1} neighbouring unit counts")
            continue
        assert isinstance(mechanism, CountingQuerySampler)
        if mechanism.n is not None and mechanism.n > settings.max_exact_n:
            raise NotSupported(
                f"{probe.where}: n > {settings.max_exact_n} is too large to enumerate"
            )
        report = sampler_privacy(mechanism)
        if not report.passed:
            return ContractResult(
                NAME, Outcome.FAILED, f"{probe.where}: {'; '.join(report.failures)}"
            )
        if report.guarantee.pure:
            worst = "∞" if report.worst_ratio is None else f"{float(report.worst_ratio):.6g}"
            shown.append(f"ratio {worst} ≤ e^ε = {float(report.guarantee.exp_epsilon):.6g}")
        else:
            shown.append(f"divergence {float(report.worst_divergence):.3g} ≤ δ")
    return ContractResult(NAME, Outcome.PASSED, "; ".join(shown) + " (every neighbouring pair)")


def _releaser_summary(report: ReleaserReport, guarantee: Guarantee) -> str:
    where = f"{report.pairs} pairs of {report.datasets} datasets"
    if guarantee.pure:
        worst = "∞" if report.worst_ratio is None else f"{float(report.worst_ratio):.6g}"
        return f"ratio {worst} ≤ e^ε = {float(guarantee.exp_epsilon):.6g} on {where}"
    return f"divergence {float(report.worst_divergence):.3g} ≤ δ on {where}"
