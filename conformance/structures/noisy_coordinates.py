"""The verifier of :class:`~dpplug.kinds.query_releaser.structures.NoisyCoordinates`: exact
privacy of a release of T noisy coordinates, each moved by at most 1 by one row (a random
projection's column sums, Blum & Roth 2013, Alg. 2), decided rigorously from the declared noise
(docs/conformance.md#projected-coordinates), and the noise of real releases tested against it
(:class:`NoisyCoordinatesVerifier`).

With independent noise N on every coordinate, the worst neighbouring pair moves all T
coordinates by one: a coordinate left in place is a pair of equal laws, which a product can only
gain from (by post-processing, the product's divergence is at least any factor's), and the two
signs are the two directions checked. So the guarantee holds exactly when the hockey-stick
divergence of N^T against (N shifted by one)^T at e^ε is at most δ, in both directions:
E_{N^T}[max(0, 1 − e^ε·e^{−L})] for the summed loss L, where one coordinate's loss
ℓ(z) = ln(N(z)/N(z − 1)) is an exact rational (:meth:`CoordinateNoise.unit_loss`). The summed
loss takes values (T·j₀ + i·g)/D for integers i (the losses j(z)/D on a common denominator D,
j₀ the smallest, g the gcd of their gaps), so its distribution is the T-th power of one
coordinate's polynomial Σ_z N(z)·x^{(j(z) − j₀)/g}, computed in balls from the enclosure's lower
bounds (a lower bound on the divergence) and upper bounds plus T times the mass outside the
window (an upper bound). The declared loss is first checked against the declared law: the
enclosure of N(z)/N(z − 1) must contain e^{ℓ(z)} at every z of the window.

The guarantee passes when the upper bound is within δ, fails when the lower bound exceeds it,
and is recomputed at the next of :data:`~.divergence.ENCLOSURE_PRECISIONS` in between.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.bounds import ball, lower, precise, upper
from dpplug.composition import exp_exceeds
from dpplug.conformance.divergence import ENCLOSURE_PRECISIONS, exact_text, summed_loss_divergence
from dpplug.conformance.privacy_check import PrivacyCheck
from dpplug.conformance.settings import Settings
from dpplug.conformance.structures.verifier import Verifier
from dpplug.enclosed_law import EnclosedLaw
from dpplug.errors import NotSupported
from dpplug.exact import Rat
from dpplug.guarantee import Guarantee
from dpplug.kinds.query_releaser.coordinate_noise import CoordinateNoise
from dpplug.kinds.query_releaser.projections import SparseProjection
from dpplug.kinds.query_releaser.structures import NoisyCoordinates
from dpplug.pmf import Pmf
from dpplug.randomness import RandomSource

if TYPE_CHECKING:
    from dpplug.conformance.probes.query_releaser.probe import QueryReleaserProbe
    from dpplug.kinds import QueryReleaser


def loss_disagreement(noise: CoordinateNoise, law: EnclosedLaw) -> str | None:
    """Where the declared unit loss ℓ(z) contradicts the declared law's enclosure: e^{ℓ(z)}
    outside [lo(z)/hi(z − 1), hi(z)/lo(z − 1)] (None: nowhere in the window)."""
    for z in range(law.low + 1, law.high + 1):
        if law.lo(z - 1) == 0:
            continue
        ratio = ball(noise.unit_loss(z)).exp()
        least, most = law.lo(z) / law.hi(z - 1), law.hi(z) / law.lo(z - 1)
        if upper(ratio) < least or lower(ratio) > most:
            return (
                f"the declared loss ln(N({z})/N({z - 1})) = {exact_text(noise.unit_loss(z))} "
                f"contradicts the declared noise law, whose ratio there lies in "
                f"[{float(least):.6g}, {float(most):.6g}]"
            )
    return None


def product_divergence(
    noise: CoordinateNoise, law: EnclosedLaw, exp_epsilon: Rat, shift: int
) -> tuple[Rat, Rat]:
    """Rational (lower, upper) bounds on the hockey-stick divergence at e^ε of N^T against its
    shift by *shift* (+1 or −1) on every coordinate (see the module docstring), at the working
    precision."""
    # Under P: z ~ N. Shift +1: Q(z) = N(z − 1), the loss is ℓ(z); shift −1 (P is N moved
    # up by one against Q = N): the loss at P's z + 1 is −ℓ(z + 1).
    losses = {
        z: noise.unit_loss(z) if shift == 1 else -noise.unit_loss(z + 1) for z in law.window()
    }
    t = noise.coordinates
    low = summed_loss_divergence([(losses[z], ball(law.lo(z))) for z in losses], t, exp_epsilon)
    high = summed_loss_divergence([(losses[z], ball(law.hi(z))) for z in losses], t, exp_epsilon)
    return max(mpq(0), lower(low)), upper(high) + t * law.outside


def coordinate_privacy(noise: CoordinateNoise, guarantee: Guarantee) -> tuple[str | None, str]:
    """The declared guarantee of a release of ``noise.coordinates`` coordinates, each moved by at
    most one by a row, with this noise on each, decided rigorously: (why it fails, in words, or
    None; what was proved)."""
    e, delta = mpq(guarantee.exp_epsilon), mpq(guarantee.delta)
    t = noise.coordinates
    for bits in ENCLOSURE_PRECISIONS:
        law = noise.enclosed(bits)
        with precise(bits):
            problem = loss_disagreement(noise, law)
            if problem is not None:
                return problem, ""
            largest = noise.largest_loss()
            if delta == 0 and largest is not None and exp_exceeds(t * largest, e) is False:
                return None, (
                    f"T = {t} noisy coordinates, all moved by one: the summed loss is at most "
                    f"T·max|ℓ| = {exact_text(t * largest)} ≤ ε (pure)"
                )
            bounds = [product_divergence(noise, law, e, shift) for shift in (1, -1)]
        low, high = max(b[0] for b in bounds), max(b[1] for b in bounds)
        if low > delta:
            return (
                f"moving all T = {t} coordinates by one gives hockey-stick divergence "
                f"≥ {float(low):.6g} at e^ε = {exact_text(e)}, above δ = {exact_text(delta)}"
            ), ""
        if high <= delta:
            return None, (
                f"T = {t} noisy coordinates, all moved by one: divergence in "
                f"[{float(low):.3g}, {float(high):.3g}] ≤ δ = {exact_text(delta)} at "
                f"{bits} bits"
            )
    raise NotSupported(
        f"the divergence of T = {t} shifted coordinates is neither proved nor refuted at "
        f"{ENCLOSURE_PRECISIONS[-1]} bits"
    )


#: The most coordinates whose declared noise is checked exactly (the T-th power of one
#: coordinate's loss polynomial).
MAX_COORDINATES = 4096


class NoisyCoordinatesVerifier(Verifier):
    """A release of noisy coordinates
    (:class:`~dpplug.kinds.query_releaser.structures.NoisyCoordinates`): the guarantee decided as
    the divergence of all T coordinates moved by one (:func:`coordinate_privacy`), and the noise
    of real releases, computed here from each release (a
    :class:`~dpplug.SparseProjection`'s sums minus the column sums of the data under its hash),
    tested against the declared law."""

    structure = NoisyCoordinates
    probe: QueryReleaserProbe
    declared: NoisyCoordinates

    def law_draw(self, value: int, size: int, source: RandomSource) -> npt.NDArray[Any]:
        """The noise of every coordinate of ⌈size/T⌉ releases on {x₀: value}, the first *size*
        of them (independent when the declaration holds)."""
        releaser, data = self.probe.releaser, self.probe.dataset(value)
        noise: list[int] = []
        while len(noise) < size:
            noise += release_noise(releaser, releaser.start(data, source), data)
        return np.array(noise[:size], dtype=np.int64)

    def tested_law(self, value: int) -> tuple[Pmf, Any]:
        """A coordinate's declared noise law, as the exact law inside its enclosure nearest to
        its lower bounds, with the enclosure's width."""
        noise = self.declared.noise.enclosed(ENCLOSURE_PRECISIONS[0])
        return noise.nearest_pmf(0), noise.width()

    def small(self, settings: Settings) -> bool:
        """At most :data:`MAX_COORDINATES` coordinates and a noise narrow enough to enclose."""
        noise = self.declared.noise
        if noise.coordinates > MAX_COORDINATES:
            return False
        try:
            noise.enclosed(ENCLOSURE_PRECISIONS[0])
        except NotSupported:
            return False
        return True

    def exact_privacy(self, settings: Settings) -> PrivacyCheck:
        noise = self.declared.noise
        if noise.coordinates > MAX_COORDINATES:
            raise NotSupported(
                f"T = {noise.coordinates} coordinates are too many to check exactly (the limit "
                f"is {MAX_COORDINATES})"
            )
        failure, summary = coordinate_privacy(noise, self.probe.guarantee)
        return PrivacyCheck(() if failure is None else (failure,), summary)

    def implementation_check(self, settings: Settings) -> PrivacyCheck:
        return PrivacyCheck(
            (), "coordinate noise not replayed (the sampling law tests its law)", 1.0
        )


def release_noise(releaser: QueryReleaser, release: object, data: object) -> list[int]:
    """Y − S: the sums *release* published minus the column sums of *data* under its hash."""
    if not isinstance(release, SparseProjection):
        raise NotSupported(
            f"{releaser.name} declares noisy coordinates but releases a {type(release).__name__}, "
            "not a SparseProjection whose coordinates the suite can read"
        )
    counts = releaser.label_counts(data)
    universe = releaser.universe
    if universe is None:
        raise NotSupported("a projection's columns are indexed by a declared universe")
    indices = [universe.index(x) for x in counts.labels]
    sums = release.hash.column_sums(indices, counts.counts)
    return [y - s for y, s in zip(release.sums, sums, strict=True)]
