"""Checks shared by the kinds whose calls take arrays of integers (a sampler's true counts, a
selector's unit counts), beyond the single elements the exact contracts replay.

- **Size.** One call of :data:`LARGEST_CALL` elements (past 2^18, with a tail no power of two
  divides, so code paths keyed to large batches run), its values drawn from a few classes in a
  seeded interleaving, up to the schema's limits (counts near 2^31, 2^53 and the largest
  accepted, where narrow integers, floats or lookup tables go wrong): the outputs of each class
  must follow that class's exact law (:func:`class_tests`).
- **Batch.** One call of as many elements of one value: pairs of its outputs :data:`LAGS` apart
  must be independent, with the product of the (coarsened) exact law (:func:`lag_tests`), so
  outputs that share, reuse or reflect draws within a call are seen.
- **Tails.** One call of :data:`TAIL_CALL` elements of one value: the outputs beyond the points
  where each tail of the exact law holds 16, 64, 256 and 1024 of them must be as many as
  the law says (:func:`tail_problems`), so code that cuts, caps or thins the far tails (a loop
  stopped after a few rounds, a table that ends early) is seen where the cells of the other
  tests pool those outputs with the bulk.
- **Forms.** The same array as a list, numpy integers of every width that holds it, Fortran order,
  a transposed or strided view, read-only, big-endian (:func:`forms`): the kind hands plugins a
  validated array, so the same draws must give the same outputs (:func:`form_problems`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq
from scipy.stats import binom

from dpplug.conformance.probes.base import LawTest
from dpplug.pmf import Pmf
from dpplug.randomness import RandomSource, SeededSource
from dpplug.surfaces import Dimension

#: Elements of a large call (past 2^17, with a tail that no power of two divides): the lag tests
#: and the exploration of one element.
LARGE_CALL = (1 << 17) + 7
#: Elements of the call of mixed values (past 2^18, where bulk paths keyed to large batches
#: run), one vectorised call per seed.
LARGEST_CALL = (1 << 18) + 7
#: Lags at which pairs of outputs of one large call are tested for independence.
LAGS = (1, 2, 3, 4, 5, 7, 8, 16, 63, 64, 255, 256, 1024, 4096, 1 << 14, 1 << 15)
#: Elements of the call whose far tails are counted (:func:`tail_problems`).
TAIL_CALL = (1 << 20) + 7
#: Expected outputs beyond each far-tail point of :func:`tail_problems`.
TAIL_EXPECTED = (16, 64, 256, 1024)
#: Bins of each output of a pair (cut where the law's cumulative mass crosses multiples of
#: 1/PAIR_BINS), so the product law has few cells.
PAIR_BINS = 6

Outputs = npt.NDArray[np.int64]
Call = Callable[[npt.NDArray[np.int64], RandomSource], Outputs]


def coarsened(law: Pmf, bins: int = PAIR_BINS) -> tuple[list[int], Pmf]:
    """*law* pooled into at most *bins* consecutive bins of about equal mass: the bins' upper
    ends (the last is open) and the exact law of the bin index. Tails beyond the window go to
    the end bins."""
    ends: list[int] = []
    masses: list[Any] = []
    mass = law.prob(law.low - 1) / (1 - law.tail_ratio) if law.tail_ratio is not None else mpq(0)
    cumulative = mass
    for z in law:
        mass += law[z]
        cumulative += law[z]
        if cumulative >= mpq(len(ends) + 1, bins) and mass > 0 and len(ends) < bins - 1:
            ends.append(z)
            masses.append(mass)
            mass = mpq(0)
    masses.append(1 - sum(masses, mpq(0)))
    return ends, Pmf({i: p for i, p in enumerate(masses)})


def pair_product(bins: Pmf) -> Pmf:
    """The law of two independent draws of *bins* (bin indices below :data:`PAIR_BINS`), coded
    a·PAIR_BINS + b."""
    return Pmf({a * PAIR_BINS + b: bins[a] * bins[b] for a in bins for b in bins})


def binned(values: Outputs, ends: list[int]) -> Outputs:
    """The bin of each value (:func:`coarsened`)."""
    return np.searchsorted(np.asarray(ends, dtype=np.int64), values, side="left").astype(np.int64)


def _interleaving(classes: int, size: int, seed: int) -> npt.NDArray[np.int64]:
    """A seeded pattern of class indices, each class about size/classes times."""
    rng = np.random.default_rng(seed)  # builds test inputs only, never a mechanism's noise
    pattern = np.arange(size, dtype=np.int64) % classes
    rng.shuffle(pattern)
    return pattern


class _Memo:
    """One call's outputs per seed, shared by the tests that read parts of it."""

    def __init__(self, call: Call, values: npt.NDArray[np.int64]) -> None:
        self.call, self.values = call, values
        self._outputs: dict[int, Outputs] = {}

    def outputs(self, seed: int) -> Outputs:
        if seed not in self._outputs:
            self._outputs = {seed: np.asarray(self.call(self.values, SeededSource(seed)))}
        return self._outputs[seed]


def class_tests(
    surface: str,
    what: str,
    call: Call,
    classes: list[int],
    law_of: Callable[[int], tuple[Pmf, Any]],
    salt: int,
) -> list[LawTest]:
    """One test per class of one :data:`LARGEST_CALL`-element call on *classes* interleaved (see
    the module docstring); *salt* separates its seeds from other tests'."""
    pattern = _interleaving(len(classes), LARGEST_CALL, salt)
    values = np.asarray(classes, dtype=np.int64)[pattern]
    memo = _Memo(call, values)
    tests = []
    for i, value in enumerate(classes):
        where = pattern == i

        def sample(seed: int, where: Any = where) -> Outputs:
            outputs: Outputs = memo.outputs(seed * 7919 + salt)[where]
            return outputs

        tests.append(
            LawTest(
                surface,
                (Dimension.LAW, Dimension.SIZE),
                f"{what}: the {value} elements of one call of {LARGEST_CALL} mixed values",
                sample,
                partial(law_of, value),
            )
        )
    return tests


def lag_tests(
    surface: str,
    what: str,
    call: Call,
    value: int,
    law_of: Callable[[int], tuple[Pmf, Any]],
    salt: int,
) -> list[LawTest]:
    """For each of :data:`LAGS`: the pairs (y_i, y_{i+L}) of one :data:`LARGE_CALL`-element call
    on *value*, each output used in one pair only (i in blocks of 2L), against the product of
    the coarsened law (independent outputs of one law)."""
    memo = _Memo(call, np.full(LARGE_CALL, value, dtype=np.int64))
    tests = []
    for lag in LAGS:
        starts = np.arange(LARGE_CALL - lag)
        starts = starts[(starts // lag) % 2 == 0]

        def sample(seed: int, starts: Any = starts, lag: int = lag) -> Outputs:
            ends, _ = coarsened(law_of(value)[0])
            outputs = binned(memo.outputs(seed * 7919 + salt), ends)
            pairs: Outputs = outputs[starts] * PAIR_BINS + outputs[starts + lag]
            return pairs

        def law(lag: int = lag) -> tuple[Pmf, Any]:
            marginal, slack = law_of(value)
            return pair_product(coarsened(marginal)[1]), 2 * mpq(slack)

        tests.append(
            LawTest(
                surface,
                (Dimension.BATCH,),
                f"{what}: outputs {lag} apart in one call of {LARGE_CALL} (independent pairs)",
                sample,
                law,
            )
        )
    return tests


def far_tail_points(law: Pmf, size: int) -> list[tuple[int, int]]:
    """The tail cells of :func:`tail_problems`, as (point, direction): on each side of the law,
    the farthest points whose tail (outwards) holds at least each of :data:`TAIL_EXPECTED`
    outputs of *size* (found in floats: they only place the cells, whose masses are exact)."""
    r = law.tail_ratio
    points = set()
    for step, end, inward in ((1, law.high, list(law)[::-1]), (-1, law.low, list(law))):
        beyond = float(law.prob(end + step) / (1 - r)) if r is not None else 0.0
        for expected in TAIL_EXPECTED:
            points.add((_tail_point(end, inward, law, beyond, r, expected / size, step), step))
    return sorted(points)


def _tail_point(
    end: int, inward: list[int], law: Pmf, beyond: float, r: Any, target: float, step: int
) -> int:
    """The farthest point from the centre whose tail (outwards, by *step*) holds *target*."""
    if beyond >= target:  # past the window: P(tail from end + k·step) = beyond·r^(k−1)
        return end + step * (1 + int(math.log(target / beyond) / math.log(float(r))))
    mass = beyond
    for z in inward:
        mass += float(law[z])
        if mass >= target:
            return z
    return inward[-1]


def tail_problems(
    call: Call, value: int, law: Pmf, slack: Any, seed: int, false_alarm: float
) -> list[str]:
    """The far tails of one :data:`TAIL_CALL`-element call on *value* (see the module
    docstring): at each point of :func:`far_tail_points`, the number of outputs at or beyond it
    against the exact law's mass there (widened by the tested law's distance *slack* to the
    true one), by an exact two-sided binomial test; the false-alarm rate is split over the
    points."""
    points = far_tail_points(law, TAIL_CALL)
    outputs = np.asarray(call(np.full(TAIL_CALL, value, dtype=np.int64), SeededSource(seed)))
    level = false_alarm / len(points)
    for point, step in points:
        mass = _tail_mass(law, point, step)
        seen = int(np.count_nonzero((outputs - point) * step >= 0))
        low = float(max(mpq(0), mass - slack))
        high = float(min(mpq(1), mass + slack))
        few, many = binom.cdf(seen, TAIL_CALL, high), binom.sf(seen - 1, TAIL_CALL, low)
        if min(few, many) < level / 2:
            side = "at least" if step > 0 else "at most"
            return [
                f"{seen} of {TAIL_CALL} outputs of {value} are {side} {point}, where the law "
                f"expects {TAIL_CALL * float(mass):.1f} (p = {min(few, many) * 2:.1e} < "
                f"{level:.1e}): the code's far tails are not the declared law's"
            ]
    return []


def _tail_mass(law: Pmf, point: int, step: int) -> Any:
    """P(X ≥ point) (step 1) or P(X ≤ point) (step −1), exactly, tails beyond the window in
    closed form."""
    inside = sum((p for z, p in law.items() if (z - point) * step >= 0), mpq(0))
    if law.tail_ratio is None:
        return inside
    edge = law.high if step > 0 else law.low
    first = edge + step if (edge - point) * step >= 0 else point  # first point past the window
    return inside + law.prob(first) / (1 - law.tail_ratio)


def other_widths(values: npt.NDArray[np.int64]) -> list[tuple[str, npt.NDArray[Any]]]:
    """*values* in every numpy integer type other than int64 that holds all of them, each named
    by its type."""
    low, high = int(values.min()), int(values.max())
    return [
        (np.dtype(dtype).name, values.astype(dtype))
        for dtype in (np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32, np.uint64)
        if np.iinfo(dtype).min <= low and high <= np.iinfo(dtype).max
    ]


def forms(counts: npt.NDArray[np.int64]) -> list[tuple[str, object]]:
    """The same 2-D array of integers in every other form a caller may pass (see the module
    docstring); integer widths only where they hold every value."""
    found: list[tuple[str, object]] = [
        ("a nested list of ints", counts.tolist()),
        ("a list of numpy integers", [[np.int64(v) for v in row] for row in counts]),
    ]
    found += other_widths(counts)
    readonly = counts.copy()
    readonly.setflags(write=False)
    found += [
        ("a Fortran-ordered array", np.asfortranarray(counts)),
        ("a transposed view", np.ascontiguousarray(counts.T).T),
        ("a strided view", np.repeat(counts, 2, axis=1)[:, ::2]),
        ("a read-only array", readonly),
        ("big-endian int64", counts.astype(">i8")),
    ]
    return found


def form_problems(
    call: Callable[[object, RandomSource], Any],
    counts: npt.NDArray[np.int64],
    same: Callable[[Any, Any], bool],
    seed: int,
) -> list[str]:
    """The call on each of :func:`forms` of *counts* must give, from the same seed, what it gives
    on a C-ordered int64 copy (*same* compares outputs)."""
    canonical = call(np.array(counts, dtype=np.int64, order="C"), SeededSource(seed))
    for name, form in forms(counts):
        if not same(call(form, SeededSource(seed)), canonical):
            return [
                f"the same {counts.shape[0]}×{counts.shape[1]} values as {name} gave other "
                "outputs from the same seed than as a C-ordered int64 array: the kind hands "
                "plugins validated arrays, so every form of the same data must be treated "
                "alike (memory order, integer width, views)"
            ]
    return []


def aliasing_problems(
    call: Callable[[object, RandomSource], Any],
    arrays: Callable[[Any], list[npt.NDArray[Any]]],
    counts: npt.NDArray[np.int64],
    seed: int,
) -> list[str]:
    """What a call returns is the caller's own: no returned array shares memory with the input
    or with what an earlier call returned, and a returned array stays as it was after later
    calls (*arrays* lists the arrays an output holds)."""
    given = np.array(counts, dtype=np.int64)
    first = call(given, SeededSource(seed))
    kept = [a.copy() for a in arrays(first)]
    second = call(given, SeededSource(seed + 1))
    for a in arrays(first):
        if np.shares_memory(a, given):
            return ["a returned array shares memory with the caller's input"]
        if any(np.shares_memory(a, b) for b in arrays(second)):
            return ["two calls returned arrays sharing memory (an internal buffer reused)"]
    if not all(np.array_equal(a, b) for a, b in zip(arrays(first), kept, strict=True)):
        return ["a returned array changed when the mechanism was called again"]
    return []
