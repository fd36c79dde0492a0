"""The compact field structure (:class:`CompactField`) and the exact law it gives compact
histogram releases (Balcer & Vadhan, full version Alg. 8.2, Thm 8.3;
docs/conformance.md#compact-histograms), through certified components and a closed form: the
release draws one field value per label of its n + 1 points, far too many outcomes to enumerate.

**Components**, each checked by the conformance suite by replaying the releaser's own
``release`` with scripted randomness (every U(k) it draws answered from a script, its sampler's
noisy counts too), for every combination of noisy counts of the nonempty bins A:

1. the sampler is asked once, for the true counts of A (its noisy counts are M(c_x, U), and the
   sampler's law is exactly verified by its own conformance run);
2. for each x ∈ A in order, a draw U(k) with k = |S_{c̃_x}|, the number of field elements the
   released histogram decodes to c̃_x (S_v = (T(v−1), T(v)] of the decoder,
   :class:`~dpplug.kinds.histogram_releaser.outputs.EmptyBinLaw`), and p(x) = first(S_{c̃_x}) + u −
   2 at the scripted u = 1, ⌈k/2⌉ and k, each decoding to c̃_x: u_x covers exactly S_{c̃_x};
3. then n + 1 − |A| draws U(P) (the whole field) and p(z_j) = (draw − 1) at the smallest labels
   z_j outside A, at the scripted values 1, ⌈P/2⌉ and P;
4. the released polynomial has n + 1 coefficients mod P and the scripted release's ``count``
   reads c̃_x at every x ∈ A.

**Closed form.** Given 1–4, interpolation through n + 1 distinct points is a bijection, so the
release p has Pr[p | D] = P^{−(n+1−|A|)} · Π_{x∈A} Pr[M(c_x, U) = M₀(p(x))] / |S_{M₀(p(x))}|
(Alg. 8.2 / Thm 8.3; docs/mechanisms.md#compact-histogram). For a set L of labels with A ⊆ L and
|L| ≤ n + 1, the values of p on L therefore have the law
Π_{x∈L∩A} Pr[M(c_x) = M₀(w_x)]/|S_{M₀(w_x)}| · P^{−|L∖A|}, and Pr[p | D] is that times
P^{−(n+1−|L|)}, a factor the same for every dataset. Both depend on w only through the decoded
counts v_x = M₀(w_x), constant on each class S_v. So for neighbours D, D′ whose nonempty bins lie
in L, the likelihood ratio of every release p equals the ratio of the laws of the decoded counts
(v_x)_{x∈L}, and the hockey-stick divergence of the releases equals theirs (summing over a class
multiplies both sides by its size): the law of the decoded counts at L (:func:`decoded_law`),
the product over x ∈ L of Pr[M(c_x) = v] (x ∈ A) or |S_v|/P (x ∉ A), is an exact stand-in for
the release law in the exact privacy check, and the exact law of what the sampling-law probe
reads. It is computed for L the universe's first :data:`LABELS` labels, so n ≥ 2 is needed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import product
from typing import TYPE_CHECKING, Any

from gmpy2 import mpq

from dpplug.errors import NotSupported
from dpplug.kinds.histogram_releaser.outputs import EmptyBinLaw
from dpplug.kinds.sampler.base import CountingQuerySampler
from dpplug.structures import ExactStructure

if TYPE_CHECKING:
    from dpplug.kinds.histogram_releaser.base import HistogramReleaser

#: The decoded law is over the universe's first this many labels (the exact check's datasets').
LABELS = 3


@dataclass(frozen=True)
class CompactField(ExactStructure):
    """A release of Alg. 8.2 over the field of ``decoder.modulus`` elements: the sampler's noisy
    counts of the nonempty bins (one served :func:`~dpplug.program.noise` draw of *sampler*),
    then, for each nonempty bin in order, p(x) uniform on the class S_c̃ of *decoder* (the
    empty-bin law M₀) the noisy count decodes to, and a uniform field value at each other of
    the n + 1 points (the module docstring's components and closed form)."""

    sampler: CountingQuerySampler
    decoder: EmptyBinLaw


def _classes(decoder: EmptyBinLaw, n: int) -> dict[int, int]:
    """|S_v| for v ∈ [0, n] with S_v nonempty; NotSupported unless the classes partition [1, P]."""
    sizes = {v: decoder.interval(v)[1] for v in range(n + 1)}
    if any(size < 0 for size in sizes.values()) or sum(sizes.values()) != decoder.modulus:
        raise NotSupported("the decoder's classes S_v do not partition the field")
    return {v: size for v, size in sizes.items() if size}


def decoded_law(
    releaser: HistogramReleaser, structure: CompactField, data: Mapping[Any, int]
) -> dict[Any, Any]:
    """The exact law of the counts the release decodes at the first :data:`LABELS` labels, as
    ((index, count), …) (see the module docstring for why it stands for the release law)."""
    counts = releaser.true_counts(data)
    n, size = releaser.n, releaser.universe.size
    labels = range(min(LABELS, size))
    nonempty = {int(i): int(c) for i, c in zip(counts.indices, counts.counts, strict=True)}
    if len(labels) > n + 1 or not set(nonempty) <= set(labels):
        raise NotSupported(
            f"the decoded law over {len(labels)} labels stands for the release law only for "
            f"n ≥ {len(labels) - 1} and data on those labels"
        )
    decoder, sampler = structure.decoder, structure.sampler
    empty = {v: mpq(s, decoder.modulus) for v, s in _classes(decoder, n).items()}
    marginals = [dict(sampler.pmf(nonempty[x]).items()) if x in nonempty else empty for x in labels]
    law: dict[Any, Any] = {}
    for values in product(*(m.keys() for m in marginals)):
        p = math.prod((m[v] for m, v in zip(marginals, values, strict=True)), start=mpq(1))
        if p:
            law[tuple(zip(labels, (int(v) for v in values), strict=True))] = p
    return law
