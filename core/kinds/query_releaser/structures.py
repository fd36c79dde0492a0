"""The exact structures a query releaser may declare (:mod:`dpplug.structures`), besides the
sparse-vector rounds of :mod:`.sparse_vector`.

- :class:`IndependentAnswers`: a session whose answers are independent given the queries asked,
  each with a law that depends on its true answer alone (fresh noise per answer, as the Laplace
  mechanism composed). Its guarantee is the adaptive composition of k such answers, which the
  conformance suite decides exactly (docs/conformance.md#composed-sessions), and it replays the
  session's code against the declared laws.
- :class:`NoisyCoordinates`: a non-interactive release whose private part is T integer
  coordinates, each a value that one row added or removed moves by at most 1 plus its own
  independent noise (a random projection's column sums). The suite decides the guarantee as the
  divergence of the T coordinates all moved by one (docs/conformance.md#projected-coordinates),
  and tests the noise of real releases against the declared law, computing it itself from the
  release (a :class:`~dpplug.SparseProjection`'s sums minus the column sums of the data under its
  hash), so nothing the plugin reports is trusted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dpplug.kinds.query_releaser.coordinate_noise import CoordinateNoise
from dpplug.kinds.query_releaser.polynomial_law import PolynomialLaw
from dpplug.structures import ExactStructure


@dataclass(frozen=True)
class IndependentAnswers(ExactStructure):
    """``answer_law(scaled)``: the exact law of a released answer, in grid units, to a query
    whose true scaled answer n·W·Q(D) is *scaled* (0 ≤ scaled ≤ n·W), the same for every answer
    of a session and independent of the others given the queries."""

    answer_law: Callable[[int], PolynomialLaw]


@dataclass(frozen=True)
class NoisyCoordinates(ExactStructure):
    """The noise each of the release's T coordinates gets (:class:`.CoordinateNoise`)."""

    noise: CoordinateNoise
