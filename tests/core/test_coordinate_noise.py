"""Coordinate noise: enclosures that contain the exact probabilities, and unit losses that are
the exact log-ratios of neighbouring probabilities."""

from __future__ import annotations

import pytest
from gmpy2 import mpq

from dpplug.bounds import ball, lower, precise, upper
from dpplug.discrete_noise import laplace_enclosure, laplace_tail
from dpplug.errors import NotSupported
from dpplug.kinds.query_releaser.coordinate_noise import GaussianCoordinates, LaplaceCoordinates


def test_the_laplace_enclosure_contains_its_probabilities_and_bounds_its_tail() -> None:
    scale = mpq(5, 2)
    law = laplace_enclosure(scale, 100)
    with precise(200):
        q = (-1 / ball(scale)).exp()
        for y in (-3, 0, 7, law.high):
            exact = (1 - q) / (1 + q) * q ** abs(y)
            assert law.lo(y) <= lower(exact) and upper(exact) <= law.hi(y)
    assert laplace_tail(scale, law.high) <= law.outside < mpq(1, 2**100)
    assert law.low == -law.high and sum(hi for _, hi in law.bounds) >= 1 - law.outside


def test_a_laplace_too_wide_to_enclose_is_refused() -> None:
    with pytest.raises(NotSupported, match="window"):
        laplace_enclosure(mpq(10**6), 128)


@pytest.mark.parametrize(
    "noise", [LaplaceCoordinates(mpq(7, 3), 4), GaussianCoordinates(mpq(9, 2), 4)]
)
def test_unit_losses_are_the_log_ratios_of_the_enclosed_law(noise: object) -> None:
    assert isinstance(noise, LaplaceCoordinates | GaussianCoordinates)
    law = noise.enclosed(128)
    with precise(256):
        for z in range(-5, 6):
            ratio = ball(noise.unit_loss(z)).exp()
            assert law.lo(z) / law.hi(z - 1) <= upper(ratio)
            assert lower(ratio) <= law.hi(z) / law.lo(z - 1)


def test_laplace_losses_are_plus_or_minus_one_over_the_scale() -> None:
    noise = LaplaceCoordinates(mpq(3), 2)
    assert [noise.unit_loss(z) for z in (-2, 0, 1, 5)] == [mpq(1, 3)] * 2 + [mpq(-1, 3)] * 2
    assert GaussianCoordinates(mpq(2), 2).unit_loss(3) == mpq(-5, 4)
