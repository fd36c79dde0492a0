"""What a mechanism promises: its privacy :class:`Guarantee` and its :class:`Accuracy`.

Privacy bounds are exact rationals. A pure-DP bound is stated as a rational bound on e^ε (for
GeoSample it is (x+1)/x exactly), so every check compares rationals; the float ε is for display.
The neighbouring relation is part of the guarantee, because the seed papers differ:
Balcer–Vadhan replace one row (n public), Desfontaines et al. add or remove a user, and a
counting-query sampler is private for counts that differ by one.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

import gmpy2
from gmpy2 import RoundDown, RoundUp, mpfr, mpq

from dpplug.exact import as_rational, display_ln


class Relation(StrEnum):
    """Which inputs are neighbours."""

    #: Two counts (or count vectors) that differ by at most the sensitivity: the relation of
    #: a counting-query sampler (Balcer–Vadhan Def. 4.1), OpenDP's ``absolute_distance``.
    COUNT = "count"
    #: One privacy unit added or removed (Desfontaines et al.; OpenDP's ``symmetric_distance``).
    ADD_REMOVE = "add-remove"
    #: One row replaced by another, dataset size n fixed and public (Balcer–Vadhan).
    REPLACE_ONE = "replace-one"
    #: Anonymized histograms (multisets of counts) at sorted-ℓ₁ distance at most the sensitivity
    #: (Suresh 2019, Def. 1 and Lemma 1): one count changes by one, and a count of 1 may appear
    #: or vanish, i.e. one row added to or removed from the labelled data.
    SORTED_L1 = "sorted-l1"


@dataclass(frozen=True)
class Neighbouring:
    """A neighbouring relation with its contribution bounds.

    ``sensitivity``: for :attr:`Relation.COUNT`, how far neighbouring counts may be apart.
    ``max_partitions`` (ℓ₀) and ``max_contributions`` (ℓ∞): how many partitions one privacy unit
    may touch and how much it may add to each; ``None`` where the relation does not use them.
    """

    relation: Relation
    sensitivity: int = 1
    max_partitions: int | None = None
    max_contributions: int | None = None

    def describe(self) -> str:
        if self.relation is Relation.COUNT:
            text = f"counts differing by at most {self.sensitivity}"
        elif self.relation is Relation.ADD_REMOVE:
            text = "add or remove one privacy unit"
        elif self.relation is Relation.SORTED_L1:
            text = f"anonymized histograms at sorted-ℓ₁ distance {self.sensitivity} (one count ±1)"
        else:
            text = "replace one row (n fixed)"
        bounds = []
        if self.max_partitions is not None:
            bounds.append(f"ℓ₀ ≤ {self.max_partitions}")
        if self.max_contributions is not None:
            bounds.append(f"ℓ∞ ≤ {self.max_contributions}")
        return text + (f" ({', '.join(bounds)})" if bounds else "")

    def as_dict(self) -> dict[str, Any]:
        return {
            "relation": self.relation.value,
            "sensitivity": self.sensitivity,
            "max_partitions": self.max_partitions,
            "max_contributions": self.max_contributions,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Neighbouring:
        return cls(
            Relation(data["relation"]),
            data["sensitivity"],
            data["max_partitions"],
            data["max_contributions"],
        )


def _short(value: Any) -> str:
    """An exact rational as text, or a note of its size when it is too long to read."""
    text = str(value)
    if len(text) <= 32:
        return text
    return f"exact rational with a {int(value.denominator).bit_length()}-bit denominator"


#: The relation under which every counting-query sampler states its guarantee.
COUNT_SENSITIVITY_1 = Neighbouring(Relation.COUNT, sensitivity=1)


@dataclass(frozen=True)
class Guarantee:
    """(ε, δ)-differential privacy with ε = ln(``exp_epsilon``) under ``neighbouring``.

    ``exp_epsilon`` is an exact rational: every likelihood ratio of neighbouring outputs is at
    most ``exp_epsilon`` (pure DP), or the hockey-stick divergence at ``exp_epsilon`` is at most
    ``delta`` (approximate DP). ``delta`` is exact too (0 for pure DP).
    """

    exp_epsilon: Any  # mpq ≥ 1
    delta: Any  # mpq in [0, 1)
    neighbouring: Neighbouring

    def __post_init__(self) -> None:
        object.__setattr__(self, "exp_epsilon", mpq(self.exp_epsilon))
        object.__setattr__(self, "delta", mpq(self.delta))
        if self.exp_epsilon < 1 or not 0 <= self.delta < 1:
            raise ValueError(f"invalid guarantee: e^ε={self.exp_epsilon}, δ={self.delta}")

    @property
    def epsilon(self) -> float:
        """ε = ln(exp_epsilon) as a float, for display."""
        return display_ln(self.exp_epsilon)

    @property
    def pure(self) -> bool:
        return bool(self.delta == 0)

    @property
    def form(self) -> str:
        """``"pure"`` or ``"approximate"``."""
        return "pure" if self.pure else "approximate"

    def group(self, steps: int) -> LossBound:
        """Group privacy for inputs k = *steps* neighbouring steps apart: (k·ε, δ·Σ_{i<k} e^{iε}),
        as rigorous upper bounds, in time logarithmic in k (see :class:`LossBound`)."""
        L, delta = self.exp_epsilon, self.delta
        if steps == 0:
            return LossBound(mpfr(0), mpfr(0))
        with gmpy2.context(gmpy2.get_context(), precision=LossBound.PRECISION, round=RoundDown):
            spread_below = mpfr(L - 1)  # the denominator, rounded down
        with gmpy2.context(gmpy2.get_context(), precision=LossBound.PRECISION, round=RoundUp):
            epsilon = steps * gmpy2.log(mpfr(L))
            # Σ_{i<k} L^i = (L^k − 1)/(L − 1), or k for L = 1.
            spread = mpfr(steps) if L == 1 else (gmpy2.exp(epsilon) - 1) / spread_below
            # δ is a probability: past 1 (or past MPFR's range) the bound says nothing more.
            group_delta = min(mpfr(delta) * spread, mpfr(1)) if delta else mpfr(0)
            return LossBound(epsilon, group_delta)

    def describe(self) -> str:
        eps = f"ε = ln({_short(self.exp_epsilon)}) ≈ {self.epsilon:.6g}"
        delta = "δ = 0" if self.pure else f"δ = {_short(self.delta)} ≈ {float(self.delta):.3g}"
        return f"({eps}, {delta})-DP for {self.neighbouring.describe()}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "form": self.form,
            "epsilon": self.epsilon,
            "exp_epsilon": str(self.exp_epsilon),
            "delta": str(self.delta),
            "neighbouring": self.neighbouring.as_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Guarantee:
        """The guarantee :meth:`as_dict` described (exact: e^ε and δ are read as rationals)."""
        return cls(
            mpq(data["exp_epsilon"]),
            mpq(data["delta"]),
            Neighbouring.from_dict(data["neighbouring"]),
        )


#: The most bits of precision :func:`within_budget` spends on an enclosure of e^ε before it
#: treats the comparison as undecided (and the guarantee as not within the budget).
MAX_BUDGET_BITS = 1 << 16


def within_budget(guarantee: Guarantee, epsilon: object, delta: object = 0) -> bool:
    """Whether *guarantee* spends at most the budget (*epsilon*, *delta*): e^ε̃ ≤ e^ε and
    δ̃ ≤ δ, decided exactly.

    The budget is read exactly (:func:`dpplug.exact.as_rational`: a float is the dyadic rational
    it is, so ``epsilon=0.5`` from a framework is exactly 1/2), and ``math.inf`` means no bound.
    e^ε̃ is the guarantee's exact rational; e^ε is irrational for every rational ε ≠ 0
    (Lindemann–Weierstrass), so the two are never equal and a rigorous enclosure of e^ε
    (MPFR rounded outwards, :mod:`dpplug.enclosure`) separates them once its precision is high
    enough; the precision doubles from 128 bits until it does. A comparison still undecided at
    :data:`MAX_BUDGET_BITS` bits (a bound within 2^-65536 of the budget, relatively) counts as
    over the budget, so the answer is never "within" unless it is.

    This is the one comparison of achieved against requested privacy loss: the adapters refuse a
    plugin for which it is false before any data is touched, and the conformance suite uses it
    to check that a mechanism spends no more than it was asked for.
    """
    allowed_delta = _budget(delta, "delta")
    if allowed_delta is not None and guarantee.delta > allowed_delta:
        return False
    allowed_epsilon = _budget(epsilon, "epsilon")
    if allowed_epsilon is None:
        return True
    L = guarantee.exp_epsilon
    if allowed_epsilon <= 0:  # e^ε ≤ 1 ≤ L, equal only for ε = 0 and L = 1
        return bool(allowed_epsilon == 0 and L == 1)
    bits = 128
    while bits <= MAX_BUDGET_BITS:
        with gmpy2.context(gmpy2.get_context(), precision=bits, round=RoundDown):
            below = mpq(gmpy2.exp(mpfr(allowed_epsilon)))
        if L <= below:
            return True
        with gmpy2.context(gmpy2.get_context(), precision=bits, round=RoundUp):
            above = mpq(gmpy2.exp(mpfr(allowed_epsilon)))
        if L > above:
            return False
        bits *= 2
    return False


def _budget(value: object, what: str) -> Any:
    """A budget coordinate as an exact ``mpq``, or ``None`` for ``math.inf`` (no bound)."""
    if isinstance(value, float) and value == float("inf"):
        return None
    try:
        return as_rational(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"a budget's {what} must be a number or math.inf ({exc})") from None


@dataclass(frozen=True)
class LossBound:
    """Rigorous upper bounds on (ε, δ), as MPFR numbers rounded up at every step: what a
    privacy map reports for inputs some distance apart. ε itself, not e^ε, so that the bound
    stays small and fast for any distance (e^{kε} exactly would have k times the bits)."""

    #: Bits of working precision; far beyond the float the frameworks receive.
    PRECISION: ClassVar[int] = 128

    epsilon: Any  # mpfr ≥ the true ε
    delta: Any  # mpfr ≥ the true δ

    @classmethod
    def of(cls, exp_epsilon: Any, delta: Any) -> LossBound:
        """The bound for an exact rational e^ε ≥ 1 and δ ≥ 0: ln(e^ε) and δ rounded up, δ
        saturating at 1."""
        with gmpy2.context(gmpy2.get_context(), precision=cls.PRECISION, round=RoundUp):
            return cls(gmpy2.log(mpfr(mpq(exp_epsilon))), min(mpfr(mpq(delta)), mpfr(1)))

    def compose(self, parts: int, epsilon_multiple: int) -> LossBound:
        """*parts* independent releases of this (ε, δ) with ε counted *epsilon_multiple* times
        in all: (that multiple of ε, 1 − (1 − δ)^parts), rounded up."""
        ctx = gmpy2.get_context()
        with gmpy2.context(ctx, precision=self.PRECISION, round=RoundDown):
            kept = (1 - self.delta) ** parts  # rounded down
        with gmpy2.context(ctx, precision=self.PRECISION, round=RoundUp):
            return LossBound(self.epsilon * epsilon_multiple, 1 - kept)


@dataclass(frozen=True)
class ErrorBound:
    """Pr[error > a] ≤ β, with a an integer and β an exact rational."""

    a: int
    beta: Any  # mpq

    def as_dict(self) -> dict[str, Any]:
        return {"a": self.a, "beta": str(self.beta)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ErrorBound:
        return cls(int(data["a"]), mpq(data["beta"]))


@dataclass(frozen=True)
class Accuracy:
    """(a, β)-accuracy as the paper states it.

    ``per_query``: each released count is within a of the truth except with probability β,
    for true counts above ``threshold`` (0 where the bound holds for every count).
    ``simultaneous``: all counts of one release at once; for a single count it equals per-query.
    ``formula``: how a was derived, e.g. "smallest a with 2x·x^a ≤ β(2x+1)(x+1)^a".
    """

    per_query: ErrorBound
    simultaneous: ErrorBound
    threshold: int = 0
    formula: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "per_query": self.per_query.as_dict(),
            "simultaneous": self.simultaneous.as_dict(),
            "threshold": self.threshold,
            "formula": self.formula,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Accuracy:
        return cls(
            ErrorBound.from_dict(data["per_query"]),
            ErrorBound.from_dict(data["simultaneous"]),
            int(data["threshold"]),
            data["formula"],
        )
