"""Noise added independently to each coordinate of a release whose coordinates one row moves by
at most 1 each (a random projection's column sums, Blum & Roth 2013, Alg. 2): what a
non-interactive query releaser declares so that its guarantee can be checked exactly
(:meth:`dpplug.QueryReleaser.coordinate_noise`, docs/conformance.md#projected-coordinates).

A :class:`CoordinateNoise` gives the law of one noise, enclosed
(:class:`~dpplug.enclosed_law.EnclosedLaw`), and the exact privacy loss of a unit shift,
ℓ(z) = ln(N(z)/N(z − 1)), which for both exact noises of :mod:`dpplug.discrete_noise` is a
rational although N(z) is not:

- discrete Laplace of scale b: N(z)/N(z − 1) = q^{|z| − |z−1|}, so ℓ(z) = 1/b for z ≤ 0 and
  −1/b for z ≥ 1 (Canonne, Kamath, Steinke 2020, Alg. 2's law);
- discrete Gaussian of variance parameter σ²: the normaliser cancels, so
  ℓ(z) = ((z − 1)² − z²)/(2σ²) = (1 − 2z)/(2σ²) (CKS 2020, Def. 1).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from gmpy2 import mpq

from dpplug.discrete_noise import gaussian_enclosure, laplace_enclosure
from dpplug.enclosed_law import EnclosedLaw
from dpplug.exact import Rat


class CoordinateNoise(ABC):
    """Independent noise on each of ``coordinates`` integer coordinates (see the module
    docstring)."""

    coordinates: int

    @abstractmethod
    def enclosed(self, bits: int) -> EnclosedLaw:
        """The law of one coordinate's noise, enclosed at *bits* bits."""

    @abstractmethod
    def unit_loss(self, z: int) -> Rat:
        """ln(N(z)/N(z − 1)), exactly."""

    def largest_loss(self) -> Rat | None:
        """sup_z |ℓ(z)|, exactly, where the loss is bounded (None: unbounded, or not declared)."""
        return None


@dataclass(frozen=True)
class LaplaceCoordinates(CoordinateNoise):
    """Discrete Laplace noise of rational ``scale`` on each coordinate."""

    scale: Rat
    coordinates: int

    def enclosed(self, bits: int) -> EnclosedLaw:
        return laplace_enclosure(self.scale, bits)

    def unit_loss(self, z: int) -> Rat:
        return (1 if z <= 0 else -1) / mpq(self.scale)

    def largest_loss(self) -> Rat:
        return 1 / mpq(self.scale)


@dataclass(frozen=True)
class GaussianCoordinates(CoordinateNoise):
    """Discrete Gaussian noise of rational variance parameter ``sigma2`` on each coordinate."""

    sigma2: Rat
    coordinates: int

    def enclosed(self, bits: int) -> EnclosedLaw:
        return gaussian_enclosure(self.sigma2, 0, bits)

    def unit_loss(self, z: int) -> Rat:
        return mpq(1 - 2 * z) / (2 * mpq(self.sigma2))
