"""Policy Laplace set union (Gopi, Gulhane, Kulkarni, Shen, Shokouhi, Yekhanin, "Differentially
Private Set Union", ICML 2020: the ℓ1-descent policy with Laplace noise), exact: integer weights
and two-sided geometric noise (:mod:`dpplug.kinds.set_union_selector.thresholded_geometric`).

**The release.** Every unit is bounded to Δ₀ labels by a uniform choice. Weight 1 is G grid
units (G = 2^⌈log₂ max(128, 64·Δ₀)⌉). The units, in canonical order, each spend G units on their
labels below the cutoff Γ, as Gopi et al.'s ℓ1 descent does with weight 1: all of them rise by
the same amount, those reaching Γ stop there, in integers the last G mod (labels still below)
units going one each to the first labels in canonical order (:func:`descend`). Then every label
of the union is kept iff its total h plus noise Z ≥ T, Z two-sided geometric of ratio
α ≈ e^{−ε/G} (one served draw over the labels in canonical order).

**Contraction.** A unit's turn F (identity off its labels) is monotone: if u ≤ v, v's gaps to Γ
are smaller, so its common rise is at least u's, and with equal rises the labels that get one of
the last units under u and are still below Γ under v come no later among v's fewer such labels,
of which v pays at least as many. And F absorbs min(G, Σ gaps) units, which does not increase
with the vector. So (the argument of Crandall and Tartar) Σ(F(u) − F(v))⁺ ≤
Σ(F(u ∨ v) − F(v)) ≤ Σ(u ∨ v − v) = Σ(u − v)⁺, and with the same for (v − u)⁺,
‖F(u) − F(v)‖₁ ≤ ‖u − v‖₁. So for D and D' = D plus one unit u the totals agree before u's
turn, u moves them by at most G in ℓ1, and the later turns (the same units, none holding a label
only u holds) do not increase the distance: Σ|H − H'| ≤ G, a = Σ_{x∈A} H'(x) of it on the set A
of labels only u holds.

**Privacy** (Gopi et al.'s argument, exact). On the labels of D the decisions are independent
with likelihood ratios within α^{−|H−H'|} per label, at most α^{−(G−a)} ≤ L·α^a in all, where
α^{−G} ≤ L ≤ e^ε. The labels of A start at 0 when u's turn comes, so u raises them first and
evenly: t = |A| ≤ Δ₀ ≤ G labels, each at least 1, the totals dominated by G split as evenly as
possible (q = ⌊G/t⌋, r = G mod t of them at q + 1). With p(h) = Pr[Z ≥ T − h] and
P₀ = Π_{x∈A}(1 − p(H'(x))):

- D' against D: Pr[M(D') ∈ S] ≤ P₀·L·α^a·Pr[M(D) ∈ S] + (1 − P₀) ≤ L·Pr[M(D) ∈ S] + δ_A, with
  δ_A = max_t 1 − (1 − p(q + 1))^r·(1 − p(q))^{t−r};
- D against D': Pr[M(D) ∈ S] ≤ L·α^a·Pr[M(D')_D ∈ S] ≤ L·Pr[M(D') ∈ S] + L·(α^a − P₀)⁺, and
  α^a − P₀ ≤ Σ_{x∈A}(α^h − 1 + p(h))⁺ ≤ Δ₀·max_{1≤h≤G}(α^h − 1 + p(h))⁺, the maximum at h = 1 or
  h = G (a convex function of h, as T > G).

So the release is (ε, δ)-DP, e^ε = L and δ = max(δ_A, L·Δ₀·c), every term a rigorous rational
upper bound (balls). Replace-one is two such steps (group privacy): e^ε = L², δ = δ₁(1 + L), each
step calibrated to ε/2 and δ/(1 + L). The probe checks the law exactly on small datasets.

**The choice** (floats, then checked by the bound above): T the smallest integer above G whose
declared δ fits, from Gopi et al.'s ρ = max_t 1/t + ln(1/(2(1 − (1 − δ)^{1/t})))/ε as a start;
Γ = T + ⌈c·G/ε⌉ with c = ``cutoff`` noise scales (5 by default, the command-line default of the
authors' code; larger c favours frequent labels, smaller spreads budget to rare ones).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any

from gmpy2 import mpq

from dpplug.bounds import Ball, ball, log_float, lower, precise, upper
from dpplug.errors import BadParameter
from dpplug.exact import Rat, exp_lower, smallest_at_least
from dpplug.guarantee import Accuracy, ErrorBound, Guarantee, Neighbouring, Relation
from dpplug.kinds.set_union_selector import SetUnionSelector, UnitSets, canonical_labels
from dpplug.kinds.set_union_selector.declared import GeometricPolicy
from dpplug.kinds.set_union_selector.thresholded_geometric import GeometricKeeps, GeometricTail
from dpplug.param_types import RATIONAL
from dpplug.params import Param, Schema
from dpplug.plugins.set_union.common import COMMON_PARAMS, one_draw
from dpplug.program import run
from dpplug.randomness import RandomSource
from dpplug.structures import ExactStructure, ServedDraws

#: Bits of the dyadic e^ε and of the dyadic noise ratio α.
EXP_BITS = 48
ALPHA_BITS = 40
#: Precision (bits) of the balls the declared δ is bounded in.
DELTA_BITS = 128


def grid_for(items: int) -> int:
    """G = 2^⌈log₂ max(128, 64·Δ₀)⌉: a unit of t ≤ Δ₀ labels gives each ⌊G/t⌋ or ⌈G/t⌉ ≥ 64
    units, within 1/64 of its share."""
    return 1 << max(7, (64 * items - 1).bit_length())


def descend(totals: dict[Any, int], labels: tuple[Any, ...], budget: int, cutoff: int) -> None:
    """One unit's turn (the module docstring's ℓ1 descent), in closed form: every label of
    *labels* (canonical order) below *cutoff* rises by the same c, those that would pass the
    cutoff stop at it, c the largest that *budget* pays for; what is left (fewer units than
    labels still below) goes one each to the first of those labels in canonical order."""
    gaps = sorted(
        (cutoff - totals.get(label, 0), rank, label)
        for rank, label in enumerate(labels)
        if totals.get(label, 0) < cutoff
    )
    rise, left, capped = 0, budget, 0
    while capped < len(gaps):
        cost = (gaps[capped][0] - rise) * (len(gaps) - capped)
        if cost > left:
            break
        left -= cost
        rise = gaps[capped][0]
        capped += 1
    for _, _, label in gaps[:capped]:
        totals[label] = cutoff
    if capped == len(gaps):
        return
    more, extra = divmod(left, len(gaps) - capped)
    rest = sorted(gaps[capped:], key=lambda entry: entry[1])
    for k, (gap, _, label) in enumerate(rest):
        totals[label] = cutoff - gap + rise + more + (1 if k < extra else 0)


@dataclass(frozen=True)
class PolicyCalibration:
    """The declared release: grid G, noise ratio α, threshold T, cutoff Γ (grid units), the
    per-unit e^ε bound L and δ, and the guarantee they give (module docstring)."""

    grid: int
    alpha: Rat
    threshold: int
    cutoff: int
    unit_exp_epsilon: Rat
    unit_delta: Rat
    exp_epsilon: Rat
    delta: Rat

    @property
    def tail(self) -> GeometricTail:
        return GeometricTail(self.alpha)


def _p(alpha: Ball, m: int) -> Ball:
    """Pr[Z ≥ m] as a ball."""
    return alpha**m / (1 + alpha) if m >= 1 else 1 - alpha ** (1 - m) / (1 + alpha)


def unit_delta(alpha: Rat, grid: int, threshold: int, items: int, exp_epsilon: Rat) -> Rat:
    """A rational ≥ max(δ_A, L·Δ₀·c) for one unit added or removed (module docstring)."""
    with precise(DELTA_BITS):
        a = ball(alpha)
        appear = mpq(0)
        for t in range(1, items + 1):
            q, r = divmod(grid, t)
            kept = 1 - (1 - _p(a, threshold - q - 1)) ** r * (1 - _p(a, threshold - q)) ** (t - r)
            appear = max(appear, upper(kept))
        excess = max(mpq(0), *(upper(a**h - 1 + _p(a, threshold - h)) for h in (1, grid)))
        return max(appear, upper(ball(exp_epsilon) * items * ball(excess)))


def _estimate(epsilon: float, delta: float, items: int, grid: int) -> int:
    """Gopi et al.'s ρ·G, at least G + 1 (floats: a start for the search)."""
    rho = max(
        1 / t + math.log(1 / (2 * -math.expm1(math.log1p(-delta) / t))) / epsilon
        for t in range(1, items + 1)
    )
    return max(grid + 1, math.ceil(rho * grid))


def calibrate(
    epsilon: Rat, delta: Rat, items: int, replace_one: bool, cutoff: Rat
) -> PolicyCalibration:
    unit_epsilon = mpq(epsilon) / (2 if replace_one else 1)
    bound = exp_lower(unit_epsilon, EXP_BITS)
    target = mpq(delta) / (1 + bound) if replace_one else mpq(delta)
    grid = grid_for(items)
    with precise(DELTA_BITS):
        ratio = (-(ball(bound).log()) / grid).exp()
        alpha = -(-upper(ratio) * (1 << ALPHA_BITS) // 1) / mpq(1 << ALPHA_BITS)
    if alpha >= 1:
        raise BadParameter("epsilon is too small for this grid: raise it")
    log_bound = log_float(bound)
    start = _estimate(log_bound, float(target), items, grid)

    def fits(threshold: int) -> bool:
        return bool(unit_delta(alpha, grid, threshold, items, bound) <= target)

    high = start
    while not fits(high):
        high += max(1, grid // 8)
    threshold = smallest_at_least(fits, grid + 1, high, True)
    found = unit_delta(alpha, grid, threshold, items, bound)
    top = threshold + math.ceil(float(cutoff) * grid / log_bound)
    exp_epsilon, declared = (bound**2, found * (1 + bound)) if replace_one else (bound, found)
    return PolicyCalibration(grid, alpha, threshold, top, bound, found, exp_epsilon, declared)


class PolicyLaplace(SetUnionSelector):
    name = "policy-laplace"
    summary = "Policy Laplace set union (Gopi et al.): integer ℓ1 descent, two-sided geometric."
    reference = (
        "Gopi, Gulhane, Kulkarni, Shen, Shokouhi, Yekhanin 2020 (policy Laplace, ℓ1 descent)"
    )
    sequential = True
    schema = Schema(
        (
            *COMMON_PARAMS,
            Param(
                "cutoff",
                RATIONAL,
                "Γ − T in noise scales (1/ε): a label's total stops rising that far above the "
                "threshold.",
                low=0,
                high=64,
                default=5,
            ),
        )
    )
    conformance_cases = (
        {"epsilon": 1, "delta": mpq(1, 20), "max_partitions_contributed": 2},
        {"epsilon": 2, "delta": mpq(1, 10), "max_partitions_contributed": 1, "replace_one": True},
    )

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.max_partitions = self.params["max_partitions_contributed"]
        self.policy = calibrate(
            self.params["epsilon"],
            self.params["delta"],
            self.max_partitions,
            self.params["replace_one"],
            self.params["cutoff"],
        )
        policy = self.policy
        self.derived.update(
            grid=policy.grid,
            noise_scale=1 / (-log_float(policy.alpha) * policy.grid),
            threshold=policy.threshold / policy.grid,
            cutoff=policy.cutoff / policy.grid,
        )

    @property
    def guarantee(self) -> Guarantee:
        relation = Relation.REPLACE_ONE if self.params["replace_one"] else Relation.ADD_REMOVE
        return Guarantee(
            self.policy.exp_epsilon,
            self.policy.delta,
            Neighbouring(relation, max_partitions=self.max_partitions),
        )

    def exact_structure(self) -> ExactStructure:
        return ServedDraws()

    def declared_release(self) -> GeometricPolicy:
        policy = self.policy
        return GeometricPolicy(policy.grid, policy.alpha, policy.threshold, policy.cutoff)

    def _totals(self, sets: list[tuple[Any, ...]]) -> dict[Any, int]:
        """The policy's totals (grid units) of bounded unit sets taken in this order."""
        totals: dict[Any, int] = {}
        for labels in sets:
            descend(totals, labels, self.policy.grid, self.policy.cutoff)
        return totals

    def _select(self, units: UnitSets, source: RandomSource) -> list[Any]:
        sets = [self.bound(labels, source) for _, labels in units]
        totals = self._totals(sets)
        candidates = canonical_labels({label for labels in sets for label in labels})
        if not candidates:
            return []
        draw = GeometricKeeps(
            self.policy.alpha,
            tuple(self.policy.threshold - totals.get(label, 0) for label in candidates),
        )
        keeps = run(partial(one_draw, draw), source)
        return [label for label, keep in zip(candidates, keeps, strict=True) if keep]

    def _units_needed(self, beta: Any, items: int) -> int:
        policy = self.policy
        share = policy.grid // items  # the least a unit of t labels gives each of them
        most = -(-policy.cutoff // share)

        def kept(n: int) -> bool:
            total = min(policy.cutoff, n * share)
            with precise(DELTA_BITS):
                probability = _p(ball(policy.alpha), policy.threshold - total)
                return bool(lower(probability) >= 1 - beta)

        if not kept(most):
            raise BadParameter(
                f"β = {float(beta):.3g} is below what the cutoff allows (a label's total stops "
                "at Γ): raise cutoff"
            )
        return smallest_at_least(kept, 1, most, True)

    def _accuracy(self, beta: Any) -> Accuracy:
        """A label that more than ``threshold`` units hold, each with that one label, is
        released with probability ≥ 1 − β (a rigorous lower bound)."""
        bound = ErrorBound(0, beta)
        needed = self._units_needed(beta, 1)
        return Accuracy(
            bound,
            bound,
            threshold=needed - 1,
            formula="fewest single-label units keeping a label w.p. ≥ 1 − β (membership only)",
        )
