"""The anchors the benchmarks compare dpplug with, built one way for every benchmark: OpenDP's
Laplace thresholding at one threshold (``partition_selection.py`` and ``opendp_adapter.py``).

OpenDP 0.16's ``make_laplace_threshold`` releases a partition when its count plus discrete
Laplace noise X of scale 1/ε reaches the threshold τ, so a partition of one unit is released
with probability Pr[1 + X ≥ τ] = α^(τ−1)/(1 + α), α = e^(−1/scale): δ. Its own privacy map omits
the mass at exactly τ (OpenDP issue #2922, see tests/adapters/test_opendp.py) and certifies one
threshold too low, so the anchor is the smallest integer τ whose *true* δ is at most the δ
asked for, the one that spends what dpplug's ``laplace-thresholding`` spends.
"""

from __future__ import annotations

from typing import Any

import gmpy2


def laplace_threshold(scale: float, delta: float) -> int:
    """The smallest integer τ with Pr[1 + X ≥ τ] = α^(τ−1)/(1 + α) ≤ *delta*, X discrete
    Laplace with α = e^(−1/scale) (what make_laplace_threshold releases; 128-bit arithmetic)."""
    with gmpy2.context(gmpy2.get_context(), precision=128):
        alpha = gmpy2.exp(-1 / gmpy2.mpfr(scale))
        tau = 1
        while alpha ** (tau - 1) / (1 + alpha) > gmpy2.mpfr(delta):
            tau += 1
    return tau


def opendp_laplace_threshold(epsilon: float, delta: float) -> tuple[Any, int]:
    """OpenDP's ``make_laplace_threshold`` on label counts ({str: i64} with
    ``l01inf_distance``), scale 1/ε, at :func:`laplace_threshold`; and that threshold."""
    import opendp.prelude as dp

    domain = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T="i64"))
    metric = dp.l01inf_distance(dp.absolute_distance(T="i64"))
    tau = laplace_threshold(1 / epsilon, delta)
    return dp.m.make_laplace_threshold(domain, metric, scale=1 / epsilon, threshold=tau), tau
