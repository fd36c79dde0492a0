"""The probe of the partition-selector kind: one partition's unit count in, what it releases out
(0 dropped, 1 kept, or the noisy count of a thresholding selector).

Neighbours are unit counts one apart and the guarantee compared is
:attr:`~dpplug.PartitionSelector.per_partition`; :func:`selector_privacy` also checks that the
selection's declared guarantee is at least the composition over the partitions one unit touches.
Accuracy is exact: the declared threshold is kept with probability at least 1 − β, and released
counts are within a at saturation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import cache, partial
from itertools import pairwise
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.conformance.coverage import Status
from dpplug.conformance.default_source import SeededSystemSource, as_default
from dpplug.conformance.divergence import hockey_stick
from dpplug.conformance.privacy_check import PrivacyCheck
from dpplug.conformance.probes.arrays import (
    LARGE_CALL,
    PAIR_BINS,
    aliasing_problems,
    class_tests,
    form_problems,
    lag_tests,
    pair_product,
)
from dpplug.conformance.probes.base import (
    EXACT_BETAS,
    AuditStatistic,
    Call,
    Check,
    Claim,
    DataSpace,
    ExactClaim,
    LawTest,
    Probe,
    array_hygiene,
    bad_count_arrays,
    count_inputs,
    count_space,
    large_counts,
    strict_time_problems,
)
from dpplug.conformance.replay import (
    ImplementationMismatch,
    implementation_law,
    one_element_law,
)
from dpplug.conformance.settings import Settings
from dpplug.errors import NotSupported
from dpplug.exact import smallest_at_least
from dpplug.guarantee import Guarantee, Relation
from dpplug.kinds import UNBOUNDED_COUNT, PartitionSelector, Selection
from dpplug.kinds.partition_selector.gaussian_dp import pair_slack
from dpplug.pmf import Pmf
from dpplug.randomness import RandomSource, SeededSource
from dpplug.surfaces import Dimension


def selector_privacy(selector: PartitionSelector) -> list[str]:
    """Failures of a partition selector's exact checks (empty: passed).

    For every unit count n up to the saturation, in both directions, the hockey-stick divergence
    of one partition's output law at n and n + j at the per-partition e^ε is at most the
    per-partition δ, for j = 1 … ℓ∞ (the declared ``max_contributions``: how many units one
    privacy unit may add to a partition); for selectors that only keep or drop this is exactly
    the four inequalities of Desfontaines et al. (Lemma 1: the divergence between two Bernoulli
    laws is the largest of them). π(0) must be 0, π non-decreasing, each law must sum to 1, and
    the selection's guarantee must be at least the composition (L^c, 1 − (1 − δ)^c) over the c
    partitions one unit may change (ℓ₀, or 2ℓ₀ for replace-one), or, for selectors composed in
    ℓ₂ (Gaussian thresholding), their Gaussian-DP composition, with every pair re-checked.
    """
    per = selector.per_partition
    linf = _linf(selector)
    failures: list[str] = []
    if selector.keep_probability(0) != 0:
        failures.append(f"π(0) = {selector.keep_probability(0)}: absent partitions are released")
    laws = [selector.output_pmf(n) for n in range(selector.saturation + linf + 1)]
    failures += [
        f"the law at {n} units sums to {law.total()}"
        for n, law in enumerate(laws)
        if law.total() != 1
    ]
    for n, m in _neighbours(len(laws), linf):
        p, q = laws[n], laws[m]
        worst = max(hockey_stick(p, q, per.exp_epsilon), hockey_stick(q, p, per.exp_epsilon))
        if worst > per.delta:
            apart = f" (ℓ∞ = {linf}: one unit may add {m - n})" if m - n > 1 else ""
            failures.append(
                f"units {n} and {m}{apart}: divergence {float(worst):.3g} at e^ε = "
                f"{float(per.exp_epsilon):.6g} exceeds the per-partition δ = {float(per.delta):.3g}"
            )
            break
    keep = [selector.keep_probability(n) for n in range(len(laws))]
    if any(p > q for p, q in pairwise(keep)):
        failures.append("the keep probability decreases somewhere: π must be non-decreasing")
    if selector.gaussian is not None:
        failures += _gaussian_failures(selector, laws, keep, _changed(selector), linf)
    else:
        failures += _composition_failures(selector)
    return failures


def _changed(selector: PartitionSelector) -> int:
    """How many partitions one privacy unit changes: ℓ₀, or 2ℓ₀ for replace-one."""
    neighbouring = selector.guarantee.neighbouring
    replace = neighbouring.relation is Relation.REPLACE_ONE
    return (neighbouring.max_partitions or 1) * (2 if replace else 1)


def _composition_failures(selector: PartitionSelector) -> list[str]:
    """The declared guarantee against the basic composition (L^c, 1 − (1 − δ)^c) of the
    per-partition guarantee over the c partitions one unit changes."""
    per, declared, c = selector.per_partition, selector.guarantee, _changed(selector)
    if declared.exp_epsilon < per.exp_epsilon**c or declared.delta < 1 - (1 - per.delta) ** c:
        return [
            f"the declared guarantee {declared.describe()} is below the composition of {c} "
            "per-partition releases"
        ]
    return []


def _linf(selector: PartitionSelector) -> int:
    """ℓ∞ of the declared relation: how many units one privacy unit may add to a partition."""
    return selector.guarantee.neighbouring.max_contributions or 1


def _neighbours(count: int, linf: int) -> list[tuple[int, int]]:
    """Pairs of unit counts in [0, count) at most *linf* apart (one privacy unit's change)."""
    return [(n, n + j) for j in range(1, linf + 1) for n in range(count - j)]


def _gaussian_failures(
    selector: PartitionSelector, laws: list[Pmf], keep: list[Any], c: int, linf: int
) -> list[str]:
    """A selector composed in ℓ₂
    (:class:`~dpplug.kinds.partition_selector.gaussian_dp.GaussianPairs`): it must only keep or
    drop, every pair of neighbouring positive keep probabilities must be μ-GDP up to the declared
    slack (checked rigorously), and the declared δ must be at least the composition over the c
    partitions one unit changes."""
    gaussian = selector.gaussian
    assert gaussian is not None
    if any(z > 1 for law in laws for z in law):
        return ["Gaussian (ℓ₂) composition applies to selectors that only keep or drop"]
    pairs = _neighbours(len(keep), linf)
    slacks = (pair_slack(keep[n], keep[m], gaussian.mu) for n, m in pairs if keep[n] > 0)
    slack = max(slacks, default=mpq(0))
    if slack > gaussian.slack:
        return [
            f"a pair of keep probabilities is {float(slack):.3g} from μ-GDP (declared slack "
            f"{float(gaussian.slack):.3g}, μ = {float(gaussian.mu):.6g})"
        ]
    declared = selector.guarantee
    appear = next(p for p in keep if p > 0)
    needed = gaussian.delta(declared.exp_epsilon, c, c, c, appear)
    if declared.delta < needed:
        return [
            f"the declared δ = {float(declared.delta):.6g} is below the ℓ₂ composition of "
            f"{c} partitions, {float(needed):.6g}"
        ]
    return []


class SelectorProbe(Probe):
    """A partition selector: one partition's unit count in, what it releases out."""

    call_surfaces = ("select",)
    law_surface = "keep_probability"

    exhaustive = True

    @property
    def selector(self) -> PartitionSelector:
        return cast(PartitionSelector, self.mechanism)

    @property
    def guarantee(self) -> Guarantee:
        return self.selector.per_partition

    @property
    def inputs(self) -> tuple[int, ...]:
        selector = self.selector
        middle = next(
            n for n in range(selector.saturation + 1) if selector.keep_probability(n) >= mpq(1, 2)
        )
        return tuple(sorted({0, 1, middle, selector.saturation}))

    @property
    def pairs(self) -> tuple[tuple[int, int], ...]:
        return tuple((n, n + 1) for n in self.inputs if n < self.inputs[-1])

    def draw(self, value: int, size: int, source: RandomSource) -> npt.NDArray[Any]:
        selection = self.selector.select(np.full(size, value, dtype=np.int64), source)
        if selection.noisy_counts is None:
            return np.asarray(selection.keep).astype(np.int64)
        return np.where(selection.keep, selection.noisy_counts, 0)

    def law(self, value: int) -> Pmf:
        return self.selector.output_pmf(value)

    def audit_statistics(self, settings: Settings) -> tuple[AuditStatistic, ...]:
        """What ``select`` releases, and, for a selector that takes public partitions, whether
        a public partition is kept: with a public threshold τ (the case's, or
        :data:`PUBLIC_THRESHOLD`) at unit counts (τ − 1, τ), (τ, τ + 1) and (0, 1), without one
        at (0, 1) and (1, 2). The public branch's decisions must be as private as the rest (no
        declared law covers them)."""
        own = super().audit_statistics(settings)
        names = {p.name for p in type(self.selector).schema}
        threshold = self.params.get("public_threshold", PUBLIC_THRESHOLD)
        made: Probe | None
        if "public_threshold" in names:
            made = self.variant({"public_threshold": threshold})
            label = f"a public partition kept (public_threshold={threshold}),"
            units = {max(0, threshold - 1), max(0, threshold), 0}
        else:
            made = self if self._takes_public() else None
            label, units = "a public partition kept,", {0, 1}
        if made is None:
            return own
        pairs = tuple((n, n + 1) for n in sorted(units))
        public = AuditStatistic(
            label,
            cast(SelectorProbe, made)._public_kept,
            str,
            pairs,
            None,
            (("select", Dimension.RELATIONS),),
        )
        return (*own, public)

    def _takes_public(self) -> bool:
        """Whether ``select`` accepts public partitions (a selector without them refuses the
        mask with :class:`~dpplug.errors.NotSupported`)."""
        try:
            self.selector.select([0], SeededSource(0), public=[True])
        except NotSupported:
            return False
        return True

    def _public_kept(self, value: int, size: int, source: RandomSource) -> npt.NDArray[Any]:
        counts = np.full(size, value, dtype=np.int64)
        selection = self.selector.select(counts, source, public=np.ones(size, dtype=bool))
        return np.asarray(selection.keep).astype(np.int64)

    def small(self, settings: Settings) -> bool:
        return self.selector.saturation <= MAX_SMALL_SATURATION

    def implementation_check(self, settings: Settings) -> PrivacyCheck:
        """What ``select`` does for one partition (replayed exactly) against ``output_pmf`` at
        :func:`replayed_units`, and the documented meaning of the options the selector
        takes: no partition below ``pre_threshold`` units is ever kept, the declared ℓ₀ and
        relation are those of ``max_partitions_contributed`` and ``replace_one``, and public
        partitions at the lowest ``public_threshold`` are always released."""
        selector = self.selector
        problems = _option_problems(selector, self.params)
        units, code_tv = replayed_units(selector), 0.0
        for n in units:
            if problems:
                break
            declared = {z: p for z, p in selector.output_pmf(n).items() if p}
            try:
                replay = implementation_law(
                    partial(self._decide_one, n), max_runs=REPLAY_RUNS, seed=settings.seed
                )
            except NotSupported:
                return PrivacyCheck(tuple(problems), "")
            except ImplementationMismatch as exc:
                problems.append(f"select() at {n} units: {exc}")
                break
            code_tv = max(code_tv, replay.code_tv)
            if replay.law != declared:
                problems.append(
                    f"select() at {n} units releases {dict(sorted(replay.law.items()))}, but "
                    f"output_pmf({n}) declares {dict(sorted(declared.items()))}"
                )
        summary = f"select() replayed exactly at {len(units)} unit counts; options' meaning"
        return PrivacyCheck(tuple(problems[:1]), summary, code_tv)

    def _decide_one(self, units: int, source: RandomSource) -> int:
        return int(self.draw(units, 1, source)[0])

    def exact_privacy(self, settings: Settings) -> PrivacyCheck:
        failures = selector_privacy(self.selector)
        summary = f"{self.selector.saturation + 1} neighbouring unit counts"
        return PrivacyCheck(tuple(failures), summary)

    def accuracy_claims(self, settings: Settings) -> list[Claim]:
        """Exact, at each β of :data:`EXACT_BETAS`: the threshold + 1 units are kept with
        probability ≥ 1 − β, and, where counts are released, their error at saturation exceeds
        a with probability ≤ β."""
        selector = self.selector
        claims: list[Claim] = []
        for beta in EXACT_BETAS:
            claim = selector.accuracy(beta)
            kept = claim.threshold + 1
            dropped = 1 - selector.keep_probability(kept)
            claims.append(ExactClaim(f"Pr[{kept} units dropped]", dropped, beta))
            n = selector.saturation
            law = selector.output_pmf(n)
            if any(z > 1 for z in law):
                a = claim.per_query.a
                miss = sum((p for z, p in law.items() if z != 0 and abs(z - n) > a), mpq(0))
                claims.append(ExactClaim(f"Pr[|count error| > {a}] at {n} units", miss, beta))
        return claims

    def accuracy_plot(self, settings: Settings) -> dict[str, Any]:
        """The keep-probability curve, with empirical keep rates at the probe's inputs."""
        selector = self.selector
        units = list(range(selector.saturation + 2))
        samples = settings.samples // 10
        return {
            "case": self.where,
            "units": units,
            "keep": [float(selector.keep_probability(n)) for n in units],
            "empirical": {
                n: float(np.mean(self.draw(n, samples, SeededSource(settings.seed + n)) != 0))
                for n in self.inputs
            },
        }

    def bad_data(self, source: SeededSource) -> list[tuple[str, Callable[[], object]]]:
        selector = self.selector
        calls: list[tuple[str, Callable[[], object]]] = [
            (f"select({counts!r})", partial(selector.select, counts, source))
            for counts in bad_count_arrays(0, UNBOUNDED_COUNT)
        ]
        for bad in (-1, 0.5, True):
            calls.append((f"keep_probability({bad!r})", partial(selector.keep_probability, bad)))
        for mask in (np.ones(3, dtype=np.int64), np.ones(2, dtype=np.bool_)):
            call = partial(selector.select, [1, 2, 3], source, public=mask)
            calls.append((f"select(public={mask!r})", call))
        return calls

    def data_space(self) -> DataSpace:
        return count_space(self.selector.select, 0, UNBOUNDED_COUNT)

    def calls(self, seed: int) -> list[Call]:
        inputs = count_inputs(0, self.selector.saturation + 5, seed)
        return [
            Call(f"select({label} unit counts)", partial(self.selector.select, units), (units,))
            for label, units in inputs.items()
        ]

    def large_calls(self, seed: int) -> list[Call]:
        units = large_counts(0, self.selector.saturation + 5, seed)
        return [
            Call(
                f"select({units.size} unit counts)", partial(self.selector.select, units), (units,)
            )
        ]

    def hygiene_problems(self, strict: bool, seed: int) -> list[str]:
        """:func:`~..base.array_hygiene` of ``select``, and, for a strict-time selector, a
        decider's decisions drawing as many values at every unit count (0, 1, the middle, the
        saturation and past it): a decision that skips its draw where its outcome is certain
        tells the unit count by its running time."""
        problems = array_hygiene(
            self.selector.select,
            _selection_problems,
            _same_selection,
            count_inputs(0, self.selector.saturation + 5, seed),
            strict,
            seed,
        )
        if strict and not problems:
            draws = {}
            for units in (*self.inputs, self.selector.saturation + 5):
                source = SeededSource(seed)
                self.selector.decider(source)(units)
                draws[f"decider at {units} units"] = source.draws
            problems = strict_time_problems(strict, draws)
        return problems

    # Along the other cells of the surface × dimension matrix.

    def _classes(self) -> list[int]:
        """Unit counts of the large mixed calls: 0, 1, the middle, the saturation and past it,
        the first count a partition may be kept at and its neighbours (where a pre-threshold's
        comparison lives), and counts up to the largest accepted (near 2^16, 2^31, 2^53 and
        2^62)."""
        s = self.selector.saturation
        huge = [(1 << 16) - 1, 1 << 16, (1 << 31) + 1, (1 << 53) + 1, UNBOUNDED_COUNT - 1]
        first = self._first_kept()
        edge = [u for u in range(first - 1, first + 3) if 0 <= u]
        return sorted({0, 1, self.inputs[len(self.inputs) // 2], s, s + 1, *edge, *huge})

    def _first_kept(self) -> int:
        """The smallest unit count kept with positive probability (keep probabilities grow
        with the units; found by bisection up to the saturation)."""
        top = self.selector.saturation + 1
        kept = smallest_at_least(lambda u: int(self.selector.keep_probability(u) > 0), 0, top, 1)
        return min(kept, top)

    def _drawn_problems(self, seed: int) -> list[str]:
        """A large call of one unit count whose declared law is random (the first counts that
        may be kept, the middle, the saturation) draws from its source: a bulk path that
        decides such partitions without a draw gives them a law other than the declared one."""
        first = self._first_kept()
        for units in sorted({first, first + 1, self.inputs[len(self.inputs) // 2]}):
            keep = self.selector.keep_probability(units)
            if not 0 < keep < 1:
                continue
            source = SeededSource(seed)
            self.selector.select(np.full(LARGE_CALL, units, dtype=np.int64), source)
            if source.draws == 0:
                return [
                    f"select() of {LARGE_CALL} partitions of {units} units drew nothing from "
                    f"its source, but keep_probability({units}) = {float(keep):.3g}: their "
                    "decisions are not the declared ones"
                ]
        return []

    def _law(self, units: int) -> tuple[Pmf, Any]:
        return self.selector.output_pmf(units), 0

    def _selected(self, units: npt.NDArray[np.int64], source: RandomSource) -> Any:
        """What ``select`` releases per partition, coded as :meth:`draw` codes it."""
        selection = self.selector.select(units, source)
        if selection.noisy_counts is None:
            return np.asarray(selection.keep).astype(np.int64)
        return np.where(selection.keep, selection.noisy_counts, 0)

    def _decided(self, units: npt.NDArray[np.int64], source: RandomSource) -> Any:
        """One decider's decisions, one call per partition, in order."""
        decide = self.selector.decider(source)
        return np.array([int(bool(decide(int(u)))) for u in units], dtype=np.int64)

    def law_tests(self, settings: Settings) -> list[LawTest]:
        """``select`` and ``decider`` on one large call of mixed unit counts (every class's law)
        and of one unit count (independent outputs at each lag)."""
        middle = self.inputs[len(self.inputs) // 2]
        classes = self._classes()
        select, decide = f"{self.where}: select()", f"{self.where}: decider()"
        tests = [
            *class_tests("select", select, self._selected, classes, self._law, 11),
            *lag_tests("select", select, self._selected, middle, self._law, 12),
        ]
        decided = class_tests("decider", decide, self._decided, classes, self._keep_law, 13)
        lagged = lag_tests("decider", decide, self._decided, middle, self._keep_law, 14)
        tests += [
            dataclasses.replace(t, dimensions=(*t.dimensions, Dimension.BATCH)) for t in decided
        ]
        tests += [dataclasses.replace(t, dimensions=(Dimension.STATE,)) for t in lagged]
        fresh = f"{decide}: two deciders made with the source left out, one decision each"
        tests.append(
            LawTest(
                "decider",
                (Dimension.FORMS,),
                fresh,
                partial(self._fresh_decisions, middle, settings.samples),
                partial(self._pair_law, middle),
            )
        )
        return tests

    def _fresh_decisions(self, units: int, pairs: int, seed: int) -> Any:
        """Pairs of first decisions of two deciders made one after the other with the source
        left out (a :class:`~...default_source.SeededSystemSource` the default), coded as
        :func:`~..arrays.pair_product` codes them:
        a decider that seeds itself when given no source decides alike every time."""
        decisions = np.zeros(pairs, dtype=np.int64)
        with as_default(SeededSystemSource(seed * 7919 + 15)):
            for i in range(pairs):
                first, second = self.selector.decider(), self.selector.decider()
                decisions[i] = PAIR_BINS * int(bool(first(units))) + int(bool(second(units)))
        return decisions

    def _pair_law(self, units: int) -> tuple[Pmf, Any]:
        """Two independent decisions at *units* (:func:`~..arrays.pair_product`)."""
        return pair_product(self._keep_law(units)[0]), 0

    def _keep_law(self, units: int) -> tuple[Pmf, Any]:
        keep = self.selector.keep_probability(units)
        return Pmf({0: 1 - keep, 1: keep}), 0

    def checks(self, settings: Settings) -> list[Check]:
        selector = self.selector
        units = count_inputs(0, selector.saturation + 5, settings.seed)["mixed"][:4, :4]
        checks = [
            Check(
                (("select", Dimension.SIZE),),
                "hygiene",
                Status.CHECKED,
                f"a call of {LARGE_CALL} partitions of one unit count whose law is random draws "
                "from its source",
                lambda s: self._drawn_problems(s.seed),
            ),
            Check(
                (("select", Dimension.FORMS),),
                "hygiene",
                Status.CHECKED,
                "the same unit counts in every form",
                lambda s: form_problems(selector.select, units, _same_selection, s.seed),
            ),
            Check(
                (("select", Dimension.WHOLE),),
                "hygiene",
                Status.CHECKED,
                "a Selection of the input's shape, 0 where dropped, the caller's own",
                lambda s: self._whole_problems(units, s.seed),
            ),
            Check(
                (("select", Dimension.SIZE),),
                "exact-privacy",
                Status.EXACT,
                "select() replayed at unit counts up to 2^62, and one partition of a call of "
                f"{LARGE_CALL} explored exactly with the others' draws fixed",
                lambda s: self._huge_replay_problems() or self._element_problems(s.seed),
            ),
            Check(
                (("select", Dimension.SIZE), ("keep_probability", Dimension.SIZE)),
                "exact-privacy",
                Status.EXACT,
                f"δ at {', '.join(str(d) for d in TINY_DELTAS)} (saturation past every small "
                "case's): select() replayed (where its draws split outcome by outcome) and "
                "neighbouring laws compared at unit counts 2^k, 10^k and their neighbours below "
                "it",
                lambda s: self._tiny_delta_problems(),
            ),
            Check(
                (("keep_probability", Dimension.SIZE),),
                "exact-privacy",
                Status.EXACT,
                "neighbouring laws compared at unit counts up to 2^62",
                lambda s: self._huge_law_problems(),
            ),
            Check(
                (("guarantee", Dimension.SIZE), ("keep_probability", Dimension.SIZE)),
                "exact-privacy",
                Status.EXACT,
                "each integer parameter up its size ladder (ℓ₀ past 8, 64 and 1024, to the "
                "schema's top): the exact checks on every unit count up to a saturation of "
                f"{LADDER_SATURATION}, past it at 2^k and 10^k, and the composition over ℓ₀",
                lambda s: self._ladder_problems(),
            ),
            Check(
                (("kept_from", Dimension.NUMBERS),),
                "accuracy",
                Status.EXACT,
                "kept_from(β) against the exact keep probabilities",
                lambda s: self._kept_from_problems(),
                every_case=True,
            ),
        ]
        checks.append(
            Check(
                (("decider", Dimension.LAW), ("decider", Dimension.SIZE)),
                "exact-privacy",
                Status.EXACT,
                "a decider's decision replayed at the replayed unit counts and up to 2^62",
                lambda s: self._decider_problems(),
                every_case=True,
            )
        )
        return checks

    def _ladder_problems(self) -> list[str]:
        """:func:`selector_privacy` on this case with each integer parameter moved up its size
        ladder (:meth:`~dpplug.conformance.probes.base.Probe.ladder`: ℓ₀ past 8, 64 and 1024,
        a pre-threshold past 2^16, …); past a saturation of :data:`LADDER_SATURATION`, the
        neighbouring laws at the unit counts of :func:`ladder_units` and, for a selector composed
        in ℓ₁, the composition over the partitions one unit changes."""
        checked = 0
        for where, probe in self.ladder():
            selector = cast(SelectorProbe, probe).selector
            if selector.saturation <= LADDER_SATURATION:
                problems = selector_privacy(selector)
            else:
                units = ladder_units(selector.saturation, (-1, 0))  # each with units + 1
                law = cache(selector.output_pmf)
                problems = [p for n in units for p in _neighbour_problems(selector, n, law)][:1]
                if selector.gaussian is None:
                    problems += _composition_failures(selector)
            if problems:
                return [f"{where}: {problems[0]}"]
            checked += 1
        if not checked:
            raise NotSupported("the schema takes no integer parameter up its size ladder")
        return []

    def _whole_problems(self, units: npt.NDArray[np.int64], seed: int) -> list[str]:
        selection = self.selector.select(units, SeededSource(seed))
        if type(selection) is not Selection:
            return [f"select() returned a {type(selection).__name__}, not a dpplug Selection"]
        if selection.noisy_counts is not None and np.any(selection.noisy_counts[~selection.keep]):
            return ["a dropped partition has a noisy count other than 0"]
        return aliasing_problems(self.selector.select, _selection_arrays, units, seed)

    def _replay(
        self, call: Callable[[RandomSource], int], units: int, declared: dict[int, Any]
    ) -> list[str]:
        """*call*'s exact law at *units* against *declared*."""
        try:
            replay = implementation_law(call, max_runs=REPLAY_RUNS)
        except ImplementationMismatch as exc:
            return [f"at {units} units: {exc}"]
        if replay.law != declared:
            return [
                f"at {units} units it releases {dict(sorted(replay.law.items()))}, but "
                f"output_pmf({units}) declares {dict(sorted(declared.items()))}"
            ]
        return []

    def _tiny_delta_problems(self) -> list[str]:
        """For each δ of :data:`TINY_DELTAS` the schema takes on this case, ``select`` replayed
        exactly against ``output_pmf`` and the neighbouring laws compared (per-partition
        guarantee) at the unit counts :func:`ladder_units` below the saturation, where a fast
        path keyed to a fixed count (rather than to the saturation) lives."""
        if "delta" not in {p.name for p in type(self.selector).schema}:
            raise NotSupported("the selector takes no δ parameter")
        checked = 0
        for delta in TINY_DELTAS:
            found = self.variant({"delta": delta})
            if found is None:
                continue
            probe = cast(SelectorProbe, found)
            made = probe.selector
            for units in ladder_units(made.saturation):
                law = {z: p for z, p in made.output_pmf(units).items() if p}
                try:
                    problems = probe._replay(partial(probe._decide_one, units), units, law)
                except NotSupported:  # a draw too large to replay: the laws are still compared
                    problems = []
                if problems:
                    return [f"δ = {delta}: select() {problems[0]}"]
                problems = _neighbour_problems(made, units)
                if problems:
                    return [f"δ = {delta}: {problems[0]}"]
            checked += 1
        if not checked:
            raise NotSupported(f"the schema takes none of δ = {TINY_DELTAS} on this case")
        return []

    def _huge_replay_problems(self) -> list[str]:
        """``select`` replayed exactly at the huge unit counts of :meth:`_classes`."""
        for units in self._classes():
            if units >= 1 << 16:
                law = {z: p for z, p in self.selector.output_pmf(units).items() if p}
                problems = self._replay(partial(self._decide_one, units), units, law)
                if problems:
                    return [f"select() {problems[0]}"]
        return []

    def _element_problems(self, seed: int) -> list[str]:
        """The last partition of one large mixed call of ``select`` and of a decider
        (:func:`~..replay.one_element_law`), each where it makes one draw per partition: at
        2^16 units (past every 16-bit index), and for ``select`` also at the first count a
        partition may be kept at (where a pre-threshold's comparison lives)."""
        classes = self._classes()
        values = np.asarray(classes, dtype=np.int64)[np.arange(LARGE_CALL) % len(classes)]
        values[-1] = 1 << 16
        edge = values.copy()
        edge[-1] = self._first_kept()
        selector = self.selector

        def output_law(units: int) -> dict[Any, Any]:
            return dict(selector.output_pmf(units).items())

        def keep_law(units: int) -> dict[Any, Any]:
            keep = selector.keep_probability(units)
            return {0: 1 - keep, 1: keep}

        problems = []
        for what, call, law, explored in (
            ("select()", self._selected, output_law, values),
            ("select()", self._selected, output_law, edge),
            ("decider()", self._decided, keep_law, values),
        ):
            try:
                found = one_element_law(call, explored, law, seed)
            except NotSupported:
                continue
            if found is not None:
                problems.append(f"{what}: {found}")
        return problems

    def _huge_law_problems(self) -> list[str]:
        """The per-partition guarantee between the declared laws at u and u + 1 for the huge u of
        :meth:`_classes` (the exact check compares neighbours only up to the saturation, past
        which the kind says they repeat)."""
        for units in self._classes():
            problems = _neighbour_problems(self.selector, units) if units >= 1 << 16 else []
            if problems:
                return problems
        return []

    def _decider_problems(self) -> list[str]:
        """A fresh decider's first decision, replayed exactly, at the unit counts ``select`` is
        replayed at and at the huge ones, against the keep probability."""
        for units in sorted({*replayed_units(self.selector), *self._classes()}):
            keep = self.selector.keep_probability(units)
            law = {z: p for z, p in {0: 1 - keep, 1: keep}.items() if p}
            problems = self._replay(partial(_first_decision, self.selector, units), units, law)
            if problems:
                return [f"decider() {problems[0]}"]
        return []

    def _kept_from_problems(self) -> list[str]:
        selector = self.selector
        keep = [selector.keep_probability(n) for n in range(selector.saturation + 1)]
        for beta in EXACT_BETAS:
            declared = selector.kept_from(beta)
            true = next((n for n, p in enumerate(keep) if p >= 1 - beta), selector.saturation)
            if declared != true:
                return [
                    f"kept_from({beta}) = {declared}, but {true} is the smallest unit count kept "
                    f"with probability ≥ 1 − β"
                ]
        return []


def _first_decision(selector: PartitionSelector, units: int, source: RandomSource) -> int:
    return int(bool(selector.decider(source)(units)))


def _selection_arrays(selection: Any) -> list[npt.NDArray[Any]]:
    if not isinstance(selection, Selection):
        raise TypeError(f"select() returned {type(selection).__name__}, not a Selection")
    arrays = [np.asarray(selection.keep)]
    return arrays if selection.noisy_counts is None else [*arrays, selection.noisy_counts]


def _selection_problems(counts: npt.NDArray[np.int64], out: Any) -> list[str]:
    if not isinstance(out, Selection) or np.asarray(out.keep).dtype != np.bool_:
        return ["select() must return a Selection with a boolean keep mask"]
    problems = [] if out.keep.shape == counts.shape else [f"keep shape {out.keep.shape}"]
    if np.any(out.keep[counts == 0]):
        problems.append("a partition with 0 units was released")
    if out.noisy_counts is not None and (
        out.noisy_counts.dtype.kind not in "iu" or out.noisy_counts.shape != counts.shape
    ):
        problems.append("noisy counts must be an integer array of the input's shape")
    return problems


def _same_selection(a: Any, b: Any) -> bool:
    if not (isinstance(a, Selection) and isinstance(b, Selection)):
        return False
    same_counts = (a.noisy_counts is None and b.noisy_counts is None) or (
        a.noisy_counts is not None
        and b.noisy_counts is not None
        and np.array_equal(a.noisy_counts, b.noisy_counts)
    )
    return bool(np.array_equal(a.keep, b.keep)) and same_counts


#: The small δs the size check builds the first declared case with.
TINY_DELTAS = (mpq(1, 10**6), mpq(1, 10**9))
#: Generated cases saturating above this many units are too large for the exact checks.
MAX_SMALL_SATURATION = 256
#: The public threshold the audit gives a selector whose case sets none.
PUBLIC_THRESHOLD = 2
#: The largest saturation at which a size-ladder case's laws are all compared
#: (:meth:`SelectorProbe._ladder_problems`): a thresholding selector's laws grow with it, so
#: comparing every pair costs its square.
LADDER_SATURATION = MAX_SMALL_SATURATION
#: The most replays of one ``select`` call (a larger law is left to the sampling-law contract).
REPLAY_RUNS = 20_000
#: Unit counts whose ``select`` law is replayed per case spread over [0, saturation], besides
#: the edges (:func:`replayed_units`).
MAX_REPLAYED_UNITS = 12


def replayed_units(selector: PartitionSelector) -> list[int]:
    """Unit counts at which ``select`` is replayed: those where code branches (0, 1, 2, around the
    pre-threshold m, the saturation s and the saturation shifted by the pre-threshold either way:
    m − 1, m, m + 1, s − 1, s, s + 1, s ± (m − 2), s ± (m − 1), s ± m and s + ℓ∞) and
    :data:`MAX_REPLAYED_UNITS` spread over [0, s]."""
    s = selector.saturation
    m = selector.params.get("pre_threshold") or 1
    edges = {0, 1, 2, m - 1, m, m + 1, s - 1, s, s + 1, s + _linf(selector)}
    edges |= {s + sign * shift for sign in (-1, 1) for shift in (m - 2, m - 1, m)}
    return sorted({n for n in edges if n >= 0} | set(_spread(s + 1, MAX_REPLAYED_UNITS)))


def _neighbour_problems(
    selector: PartitionSelector, units: int, law: Callable[[int], Pmf] | None = None
) -> list[str]:
    """The per-partition guarantee between the declared laws at *units* and *units* + 1 (*law*:
    the selector's ``output_pmf`` unless a cached one is given)."""
    per = selector.per_partition
    law = law or selector.output_pmf
    p, q = law(units), law(units + 1)
    worst = max(hockey_stick(p, q, per.exp_epsilon), hockey_stick(q, p, per.exp_epsilon))
    if worst <= per.delta:
        return []
    return [
        f"the laws at {units} and {units + 1} units have divergence {float(worst):.3g} above "
        f"the per-partition δ = {float(per.delta):.3g}"
    ]


def ladder_units(saturation: int, steps: tuple[int, ...] = (-1, 0, 1)) -> list[int]:
    """Unit counts 2^k and 10^k and their neighbours (*steps* away), from 1 to one past
    *saturation*."""
    powers = {*(1 << k for k in range(63)), *(10**k for k in range(19))}
    near = {n + step for n in powers for step in steps}
    return sorted(n for n in near if 1 <= n <= saturation + 1)


def _spread(count: int, most: int) -> list[int]:
    """*most* integers spread over [0, count) (all of them if there are few)."""
    if count <= most:
        return list(range(count))
    return sorted({round(i * (count - 1) / (most - 1)) for i in range(most)})


def _option_problems(selector: PartitionSelector, params: dict[str, Any]) -> list[str]:
    """The options a selector takes must mean what the kind documents."""
    declared = selector.guarantee.neighbouring
    options = selector.params
    problems = []
    if "max_partitions_contributed" in options:
        l0 = options["max_partitions_contributed"]
        if declared.max_partitions != l0:
            problems.append(
                f"max_partitions_contributed={l0}, but the guarantee is stated for ℓ₀ = "
                f"{declared.max_partitions}"
            )
    if "replace_one" in options:
        wanted = Relation.REPLACE_ONE if options["replace_one"] else Relation.ADD_REMOVE
        if declared.relation is not wanted:
            problems.append(
                f"replace_one={options['replace_one']}, but the guarantee is stated for "
                f"{declared.relation.value}"
            )
    threshold = options.get("pre_threshold") or 1
    for n in range(min(threshold, selector.saturation + 2)):
        if selector.keep_probability(n) != 0:
            problems.append(
                f"pre_threshold={threshold}, but a partition of {n} units is kept with "
                f"probability {selector.keep_probability(n)}"
            )
            break
    if "public_threshold" in options:
        problems += _public_problems(selector, params)
    return problems


def _public_problems(selector: PartitionSelector, params: dict[str, Any]) -> list[str]:
    """At the lowest public threshold the schema allows, public partitions are always released,
    even with no units; a partition that is neither present nor public never is."""
    lowest = next(p.low for p in type(selector).schema if p.name == "public_threshold")
    public = cast(
        PartitionSelector,
        selector.registry_in_use().create(selector.name, **{**params, "public_threshold": lowest}),
    )
    assert isinstance(public, PartitionSelector)
    counts = np.array([0, 0, 3, 0], dtype=np.int64)
    mask = np.array([True, True, True, False])
    for seed in range(50):
        keep = public.select(counts, SeededSource(seed), public=mask).keep
        if not keep[:3].all() or keep[3]:
            return [
                f"with public_threshold={lowest}, select() released {keep.tolist()} for public "
                f"{mask.tolist()} and unit counts {counts.tolist()}: public partitions must "
                "always be released there, and absent private ones never"
            ]
    return []
