"""Enclosed laws: an exact law is one of width 0, and the exact law inside an enclosure is within
its width of every law the enclosure contains (dpplug.enclosed_law)."""

from __future__ import annotations

import pytest
from gmpy2 import mpq

from dpplug.enclosed_law import EnclosedLaw
from dpplug.pmf import Pmf

TAILED = Pmf({-1: mpq(1, 6), 0: mpq(1, 3), 1: mpq(1, 6)}, tail_ratio=mpq(1, 2))


def test_an_exact_law_is_an_enclosure_of_width_zero() -> None:
    enclosed = EnclosedLaw.of_pmf(TAILED)
    assert (enclosed.low, enclosed.high) == (-1, 1)
    assert all(enclosed.lo(y) == enclosed.hi(y) == TAILED[y] for y in TAILED)
    assert enclosed.outside == TAILED.outside_mass == mpq(1, 3)
    assert enclosed.width() == mpq(1, 3)
    assert enclosed.lo(5) == 0 and enclosed.hi(5) == mpq(1, 3)


def test_the_nearest_law_is_exact_and_within_the_width_of_the_true_one() -> None:
    true = {-1: mpq(1, 5), 0: mpq(1, 2), 1: mpq(1, 5), 2: mpq(1, 10)}
    enclosed = EnclosedLaw(
        -1, ((mpq(3, 16), mpq(1, 4)), (mpq(1, 2), mpq(1, 2)), (mpq(3, 16), mpq(1, 4))), mpq(1, 8)
    )
    nearest = enclosed.nearest_pmf(0)
    assert nearest.total() == 1 and nearest.bounded
    distance = sum(abs(nearest.prob(y) - p) for y, p in true.items()) / 2
    assert distance <= enclosed.width() == mpq(1, 8) + mpq(1, 8)
    assert nearest.prob(0) == 1 - 2 * mpq(3, 16)


@pytest.mark.parametrize(
    ("bounds", "outside"),
    [((), mpq(0)), (((mpq(1, 2), mpq(1, 3)),), mpq(0)), (((mpq(0), mpq(1)),), mpq(-1))],
)
def test_inconsistent_bounds_are_refused(bounds: tuple, outside: mpq) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValueError, match="enclosed law"):
        EnclosedLaw(0, bounds, outside)
