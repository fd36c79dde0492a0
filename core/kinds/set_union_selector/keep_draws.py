"""Keep decisions of thresholded noise, exact and vectorised: for integer thresholds m₁ … m_n
and a noise law Z on ℤ, independent decisions Z_i ≥ m_i, each Bernoulli(p_i) with
p_i = Pr[Z ≥ m_i] exactly (:func:`keep_decisions`).

A decision compares a uniform U_i ∈ [0, 1) with p_i, reading U_i's bits only as far as needed:
its first 63 bits u_i come from one :meth:`~dpplug.randomness.RandomSource.bits_array` call for
all thresholds, and the law's :meth:`TailLaw.bracket` gives integers (a, b) with
a ≤ p_i·2^63 ≤ b. If u_i < a then U_i < (u_i + 1)/2^63 ≤ p_i (keep); if u_i ≥ b then
U_i ≥ p_i (drop); otherwise (probability (b − a)/2^63, a few times 2^−63 for a tight bracket)
further bits of U_i are drawn and p_i enclosed ever more tightly (:meth:`TailLaw.enclose`) until
U_i is on one side (:func:`_refined`). So Pr[keep] = Pr[U_i < p_i] = p_i exactly, whatever the
brackets (they only decide how often the slow path runs), and numpy does the work for almost
every label. The probabilities may be irrational (the discrete Gaussian's): only enclosures of
them are ever compared, never floats.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Sequence
from itertools import product
from typing import Any, ClassVar

import numpy as np
from gmpy2 import mpq

from dpplug.errors import NotSupported
from dpplug.exact import Rat
from dpplug.program import Draw
from dpplug.randomness import RandomSource

#: Bits of each decision's first uniform draw.
FIRST_BITS = 63
#: Calls with at most this many thresholds compare in Python rather than numpy.
SHORT = 64
#: Width (as bits) of the enclosures :class:`Keeps` gives for irrational probabilities.
ENCLOSED_BITS = 256


class TailLaw(ABC):
    """The tail Pr[Z ≥ m], m an integer, of a noise law Z on ℤ. Subclasses are hashable values
    (their brackets and enclosures are cached by law and threshold); ``exact`` ones enclose
    every probability by itself (lo = hi, a rational)."""

    exact: ClassVar[bool] = False

    @abstractmethod
    def enclose(self, m: int, bits: int) -> tuple[Rat, Rat]:
        """Rationals lo ≤ Pr[Z ≥ m] ≤ hi with hi − lo ≤ 2^−bits."""

    def bracket(self, m: int) -> tuple[int, int]:
        """Integers a ≤ Pr[Z ≥ m]·2^63 ≤ b, close to each other (from :meth:`enclose` by
        default; a law may give them faster)."""
        return scaled_bracket(*self.enclose(m, FIRST_BITS + 16))


def scaled_bracket(lo: Rat, hi: Rat) -> tuple[int, int]:
    """(⌊lo·2^63⌋, ⌈hi·2^63⌉)."""
    low, high = lo * (1 << FIRST_BITS), hi * (1 << FIRST_BITS)
    return int(low.numerator // low.denominator), -int(-high.numerator // high.denominator)


@functools.lru_cache(maxsize=1 << 16)
def _bracket(law: TailLaw, m: int) -> tuple[int, int]:
    return law.bracket(m)


@functools.lru_cache(maxsize=1 << 14)
def marginal(law: TailLaw, m: int) -> tuple[Rat, Rat]:
    """[lo, hi] ∋ Pr[Z ≥ m], of width at most 2^−256 (exact for an exact law)."""
    return law.enclose(m, ENCLOSED_BITS)


def keep_decisions(law: TailLaw, thresholds: Sequence[int], source: RandomSource) -> list[bool]:
    """Independent decisions Z_i ≥ m_i, exactly (module docstring): one 63-bit draw per
    threshold, in order, then more bits for the rare undecided ones, in order. Long calls compare
    in numpy, short ones in Python (the same draws and the same decisions)."""
    u = source.bits_array(FIRST_BITS, len(thresholds))
    if len(thresholds) > SHORT:
        distinct, index = np.unique(np.asarray(thresholds, dtype=np.int64), return_inverse=True)
        table = np.array([_bracket(law, int(m)) for m in distinct], dtype=np.uint64)
        low, high = table[index, 0], table[index, 1]
        decisions: list[bool] = (u < low).tolist()
        undecided: list[int] = np.flatnonzero((u >= low) & (u < high)).tolist()
    else:
        decisions, undecided = [], []
        for i, (m, value) in enumerate(zip(thresholds, u.tolist(), strict=True)):
            below, above = _bracket(law, int(m))
            decisions.append(value < below)
            if below <= value < above:
                undecided.append(i)
    for i in undecided:
        decisions[i] = _refined(law, int(thresholds[i]), int(u[i]), source)
    return decisions


def _refined(law: TailLaw, m: int, prefix: int, source: RandomSource) -> bool:
    """Whether U < Pr[Z ≥ m] for U uniform in [0, 1) whose leading 63 bits are *prefix*: more
    bits of U, and a tighter enclosure of the probability, until U is on one side."""
    known, bits = FIRST_BITS, 2 * FIRST_BITS
    while True:
        lo, hi = law.enclose(m, bits + 8)
        prefix = (prefix << (bits - known)) | source.bits(bits - known)
        known = bits
        if prefix + 1 <= lo * (1 << known):
            return True
        if prefix >= hi * (1 << known):
            return False
        bits *= 2


class Keeps(Draw):
    """One round's keep decisions, served (:func:`dpplug.program.run`) so a release can be
    replayed: for thresholds m₁ … m_n, the tuple of Z_i ≥ m_i for independent Z_i of the law
    ``tail`` (:func:`keep_decisions`). :meth:`law` is the exact law where the tail's
    probabilities are rational; :meth:`enclosed` gives, for each outcome, an interval holding
    its probability (a point for an exact tail)."""

    def __init__(self, tail: TailLaw, thresholds: tuple[int, ...]) -> None:
        self.tail, self.thresholds = tail, thresholds

    def sample(self, source: RandomSource) -> tuple[bool, ...]:
        return tuple(keep_decisions(self.tail, self.thresholds, source))

    def marginals(self) -> list[tuple[Rat, Rat]]:
        """[lo, hi] ∋ Pr[Z ≥ m_i] for each threshold (:func:`marginal`)."""
        return [marginal(self.tail, m) for m in self.thresholds]

    def enclosed(self) -> dict[tuple[bool, ...], tuple[Rat, Rat]]:
        """Each outcome with [lo, hi] ∋ its probability (products of the marginals)."""
        laws = self.marginals()
        result: dict[tuple[bool, ...], tuple[Rat, Rat]] = {}
        for outcome in product((False, True), repeat=len(laws)):
            lo, hi = mpq(1), mpq(1)
            for kept, (p_lo, p_hi) in zip(outcome, laws, strict=True):
                lo, hi = (lo * p_lo, hi * p_hi) if kept else (lo * (1 - p_hi), hi * (1 - p_lo))
            result[outcome] = (lo, hi)
        return result

    def law(self) -> dict[Any, Any]:
        if not self.tail.exact:
            raise NotSupported("these keep decisions have irrational probabilities: use enclosed()")
        return {outcome: lo for outcome, (lo, _) in self.enclosed().items()}
