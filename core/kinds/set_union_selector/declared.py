"""What a set-union selector declares its release to be
(:meth:`~.base.SetUnionSelector.declared_release`), so that the conformance suite can enumerate
the release's law independently of the code that makes it.

- :class:`GaussianRounds`: rounds of the weighted Gaussian (Gopi et al. ICML 2020; DP-SIPS).
  In round r, a unit whose t bounded labels are not yet released gives each of them
  ``rounds[r].weights[t − 1]`` grid units; a label is kept iff its total plus N_ℤ(0, σ_r²) noise
  is at least T_r; the labels kept leave the units' sets before the next round.
- :class:`GeometricPolicy`: Gopi et al.'s ℓ1-descent policy. The units, in canonical order, each
  spend ``grid`` units on their bounded labels below ``cutoff``, one at a time to the label below
  the cutoff that has received the fewest of them so far (ties: canonical order); a label is kept
  iff its total plus two-sided geometric noise of ratio ``alpha`` is at least ``threshold``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpplug.kinds.set_union_selector.thresholded_gaussian import RoundCertificate

Rat = Any  # gmpy2.mpq


@dataclass(frozen=True)
class GaussianRounds:
    """Rounds of the weighted Gaussian (module docstring)."""

    rounds: tuple[RoundCertificate, ...]


@dataclass(frozen=True)
class GeometricPolicy:
    """The ℓ1-descent policy with two-sided geometric noise (module docstring)."""

    grid: int
    alpha: Rat
    threshold: int
    cutoff: int
