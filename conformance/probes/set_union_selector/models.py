"""The law a set-union selector declares (:mod:`dpplug.kinds.set_union_selector.declared`),
enumerated here independently of the code that releases: every uniform choice of Δ₀ labels per
unit, then the declared weighting and keep probabilities.

A :class:`Model` answers what the probe asks of a declaration: the law of a dataset's release,
the keep probability of a label given its total, the totals of labels that n units hold, and the
first round's keep draw on large data. :class:`GaussianModel` re-derives the rounds of weighted
Gaussian noise from their certificates' weights; :class:`PolicyModel` re-derives the ℓ1 descent
one grid unit at a time (the code computes it in closed form).
"""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from gmpy2 import mpq

from dpplug.errors import NotSupported
from dpplug.exact import Rat
from dpplug.kinds.set_union_selector import SetUnionSelector
from dpplug.kinds.set_union_selector.declared import GaussianRounds, GeometricPolicy
from dpplug.kinds.set_union_selector.gaussian_tails import GaussianTail
from dpplug.kinds.set_union_selector.keep_draws import TailLaw, marginal
from dpplug.kinds.set_union_selector.thresholded_geometric import GeometricTail

#: Output (a sorted tuple of released labels) → [lo, hi] ∋ its probability.
Law = dict[tuple[str, ...], tuple[Rat, Rat]]
Sets = list[tuple[Any, ...]]


def _add(law: Law, output: tuple[str, ...], lo: Rat, hi: Rat) -> None:
    found = law.get(output, (mpq(0), mpq(0)))
    law[output] = (found[0] + lo, found[1] + hi)


def independent_keeps(
    keeps: Sequence[tuple[Rat, Rat]],
) -> list[tuple[tuple[bool, ...], Rat, Rat]]:
    """Every outcome of independent decisions with [lo, hi] ∋ each keep probability, and the
    enclosure of its probability."""
    outcomes = []
    for outcome in itertools.product((False, True), repeat=len(keeps)):
        lo, hi = mpq(1), mpq(1)
        for kept, (p_lo, p_hi) in zip(outcome, keeps, strict=True):
            lo, hi = (lo * p_lo, hi * p_hi) if kept else (lo * (1 - p_hi), hi * (1 - p_lo))
        outcomes.append((outcome, lo, hi))
    return outcomes


class Model(ABC):
    """A declared release (module docstring)."""

    def __init__(self, selector: SetUnionSelector) -> None:
        self.cap = selector.max_partitions

    def law(self, data: dict[int, tuple[str, ...]]) -> Law:
        """The declared law of select(data): every uniform choice of Δ₀ labels per unit (units in
        canonical order), then :meth:`bounded_law`."""
        choices = []
        for _, labels in sorted(data.items()):
            distinct = tuple(sorted(set(labels)))
            if len(distinct) <= self.cap:
                choices.append([(distinct, mpq(1))])
                continue
            subsets = list(itertools.combinations(distinct, self.cap))
            choices.append([(subset, mpq(1, len(subsets))) for subset in subsets])
        law: Law = {}
        for picked in itertools.product(*choices):
            weight = mpq(1)
            for _, p in picked:
                weight *= p
            for output, (lo, hi) in self.bounded_law([labels for labels, _ in picked]).items():
                _add(law, output, weight * lo, weight * hi)
        return law

    @abstractmethod
    def bounded_law(self, sets: Sets) -> Law:
        """The law of the release given the units' bounded sets (canonical unit order)."""

    @abstractmethod
    def keep(self, total: int) -> tuple[Rat, Rat]:
        """[lo, hi] ∋ the probability that the first round keeps a label of this total."""

    @abstractmethod
    def shared_total(self, units: int, items: int) -> int:
        """The least total, in the first round, of the *items* labels that *units* units each
        hold (all the same labels)."""

    @abstractmethod
    def missed(self, units: int) -> tuple[Rat, Rat]:
        """[lo, hi] ∋ the probability that a label only *units* single-label units hold is
        never released."""

    @abstractmethod
    def first_draw(self, sets: Sets) -> tuple[TailLaw, tuple[int, ...]]:
        """The noise law and thresholds of the first round's keep draw over the labels of
        *sets* in canonical order (each unit of at most Δ₀ labels)."""


class GaussianModel(Model):
    """Rounds of the weighted Gaussian (:class:`GaussianRounds`)."""

    def __init__(self, selector: SetUnionSelector, declared: GaussianRounds) -> None:
        super().__init__(selector)
        self.rounds = declared.rounds

    def _totals(self, r: int, sets: Sets, released: frozenset[str]) -> dict[Any, int]:
        weights = self.rounds[r].weights
        totals: dict[Any, int] = {}
        for labels in sets:
            remaining = [x for x in labels if x not in released]
            for x in remaining:
                totals[x] = totals.get(x, 0) + weights[len(remaining) - 1]
        return totals

    def bounded_law(self, sets: Sets) -> Law:
        return self._rounds_law(sets, frozenset(), 0)

    def _rounds_law(self, sets: Sets, released: frozenset[str], r: int) -> Law:
        totals = self._totals(r, sets, released) if r < len(self.rounds) else {}
        if not totals:
            return {tuple(sorted(released)): (mpq(1), mpq(1))}
        candidates = sorted(totals)
        certificate = self.rounds[r]
        keeps = [certificate.keep(totals[x]) for x in candidates]
        law: Law = {}
        for outcome, lo, hi in independent_keeps(keeps):
            now = released | {x for x, kept in zip(candidates, outcome, strict=True) if kept}
            for output, (a, b) in self._rounds_law(sets, now, r + 1).items():
                _add(law, output, lo * a, hi * b)
        return law

    def keep(self, total: int) -> tuple[Rat, Rat]:
        lo, hi = self.rounds[0].keep(total)
        return lo, hi

    def shared_total(self, units: int, items: int) -> int:
        return units * self.rounds[0].weights[items - 1]

    def missed(self, units: int) -> tuple[Rat, Rat]:
        lo, hi = mpq(1), mpq(1)
        for certificate in self.rounds:  # its total stays n·G until it is released
            p_lo, p_hi = certificate.keep(units * certificate.weights[0])
            lo, hi = lo * (1 - p_hi), hi * (1 - p_lo)
        return lo, hi

    def first_draw(self, sets: Sets) -> tuple[TailLaw, tuple[int, ...]]:
        first = self.rounds[0]
        totals = self._totals(0, sets, frozenset())
        thresholds = tuple(first.threshold - totals[x] for x in sorted(totals))
        return GaussianTail(first.sigma2), thresholds


class PolicyModel(Model):
    """Gopi et al.'s ℓ1 descent with geometric noise (:class:`GeometricPolicy`)."""

    def __init__(self, selector: SetUnionSelector, declared: GeometricPolicy) -> None:
        super().__init__(selector)
        self.policy = declared
        self.tail = GeometricTail(mpq(declared.alpha))

    def totals(self, sets: Sets) -> dict[Any, int]:
        """Each unit in turn gives its labels below the cutoff one grid unit at a time, to the
        one that has received the fewest so far (ties: canonical order): round after round of
        one unit each, in canonical order, the rounds in which no label reaches the cutoff
        given at once."""
        cutoff = self.policy.cutoff
        totals: dict[Any, int] = {}
        for labels in sets:
            left = self.policy.grid
            while left:
                below = [x for x in labels if totals.get(x, 0) < cutoff]
                if not below:
                    break
                if left < len(below):  # a last, partial round
                    for x in below[:left]:
                        totals[x] = totals.get(x, 0) + 1
                    break
                rounds = min(left // len(below), *(cutoff - totals.get(x, 0) for x in below))
                for x in below:
                    totals[x] = totals.get(x, 0) + rounds
                left -= rounds * len(below)
        return totals

    def bounded_law(self, sets: Sets) -> Law:
        totals = self.totals(sets)
        candidates = sorted({x for labels in sets for x in labels})
        keeps = [self.keep(totals.get(x, 0)) for x in candidates]
        law: Law = {}
        for outcome, lo, hi in independent_keeps(keeps):
            output = tuple(x for x, kept in zip(candidates, outcome, strict=True) if kept)
            _add(law, output, lo, hi)
        return law

    def keep(self, total: int) -> tuple[Rat, Rat]:
        return marginal(self.tail, self.policy.threshold - total)

    def shared_total(self, units: int, items: int) -> int:
        return min(self.policy.cutoff, units * (self.policy.grid // items))

    def missed(self, units: int) -> tuple[Rat, Rat]:
        lo, hi = self.keep(min(self.policy.cutoff, units * self.policy.grid))
        return 1 - hi, 1 - lo

    def first_draw(self, sets: Sets) -> tuple[TailLaw, tuple[int, ...]]:
        totals = self.totals(sets)
        candidates = sorted({x for labels in sets for x in labels})
        return self.tail, tuple(self.policy.threshold - totals.get(x, 0) for x in candidates)


def model_of(selector: SetUnionSelector) -> Model:
    """The model of what *selector* declares (``NotSupported`` if it declares neither form)."""
    declared = selector.declared_release()
    if isinstance(declared, GaussianRounds):
        return GaussianModel(selector, declared)
    if isinstance(declared, GeometricPolicy):
        return PolicyModel(selector, declared)
    raise NotSupported(f"{selector.name} declares a release the probe cannot enumerate")
