"""What histogram releasers return: dense, sparse and compact histograms (Balcer–Vadhan §5–8).

Every output carries the :class:`~dpplug.guarantee.Guarantee` and the
:class:`~dpplug.guarantee.Accuracy` of the release that produced it, and the text of the
mechanism (``mechanism``) that did. Collections are in canonical order, the index order of the
universe (:mod:`dpplug.universe`), never in an order that depends on the data.

- :class:`DenseHistogram`: a noisy count for every label of the universe.
- :class:`SparseHistogram`: a partial vector, the released bins in canonical order; every other
  label reads 0.
- :class:`CompactHistogram`: Balcer–Vadhan's succinct dense histogram (full version Alg. 8.2): a
  polynomial p of degree ≤ n over the prime field F_P, read as h_x = M₀(p(x) + 1), where M₀ is
  the empty-bin law of :class:`EmptyBinLaw`. ``to_bytes``/``from_bytes`` serialise it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import flint
import numpy as np
import numpy.typing as npt

from dpplug.exact import smallest_at_least
from dpplug.guarantee import Accuracy, Guarantee
from dpplug.kinds.histogram_releaser.limb_evaluation import LimbEvaluator
from dpplug.universe import Universe
from dpplug.untrusted import fields, header_and_body, reading, rebuild

if TYPE_CHECKING:
    from dpplug.kinds.sampler.base import CountingQuerySampler
    from dpplug.plugin_registry import Registry


@dataclass(frozen=True)
class DenseHistogram:
    """A noisy count for every label, ``counts[i]`` for the label with index i."""

    universe: Universe
    counts: npt.NDArray[np.int64]
    guarantee: Guarantee
    accuracy: Accuracy
    mechanism: str

    def count(self, label: object) -> int:
        """The released count of *label*."""
        return int(self.counts[self.universe.index(label)])

    def items(self) -> Iterator[tuple[Any, int]]:
        """(label, count) for every label, in canonical order."""
        return ((self.universe.label(i), int(c)) for i, c in enumerate(self.counts))

    def to_dict(self) -> dict[Any, int]:
        return dict(self.items())

    def __len__(self) -> int:
        return len(self.counts)


@dataclass(frozen=True)
class SparseHistogram:
    """The released bins as a partial vector: ``indices`` strictly increasing, one count each."""

    universe: Universe
    indices: tuple[int, ...]
    counts: tuple[int, ...]
    guarantee: Guarantee
    accuracy: Accuracy
    mechanism: str

    def __post_init__(self) -> None:
        if any(a >= b for a, b in zip(self.indices, self.indices[1:], strict=False)):
            raise ValueError("a sparse histogram's bins must be in canonical (index) order")

    @cached_property
    def _by_index(self) -> dict[int, int]:
        return dict(zip(self.indices, self.counts, strict=True))

    def count(self, label: object) -> int:
        """The released count of *label*: 0 for a label that was not released."""
        return self._by_index.get(self.universe.index(label), 0)

    def items(self) -> Iterator[tuple[Any, int]]:
        """(label, count) of the released bins, in canonical order."""
        return ((self.universe.label(i), c) for i, c in zip(self.indices, self.counts, strict=True))

    @property
    def labels(self) -> list[Any]:
        return [self.universe.label(i) for i in self.indices]

    def to_dict(self) -> dict[Any, int]:
        return dict(self.items())

    def __len__(self) -> int:
        return len(self.indices)


class EmptyBinLaw:
    """M₀ of Balcer & Vadhan (full version Alg. 8.2 / Lemma 8.4) for a sampler M with randomness
    size d and a field of size P: the law of M(0, U) moved onto [1, P] by rounding its scaled
    CDF down onto the grid of P points.

    With F the scaled CDF of M(0, ·), T(v) = ⌊P·F(0, v)/d⌋ for v < n and T(n) = P, M₀(u₀) is the
    smallest v with T(v) ≥ u₀: M₀(u₀) = v exactly for u₀ in S_v = (T(v−1), T(v)], whose size s_v
    is strictly within 1 of P·Pr[M(0, U) = v] (and 0 where that probability is 0). So if every
    positive Pr[M(0, U) = v] is at least p, then for every such v

        1 − 1/(P·p) < Pr[M₀(U₀) = v] / Pr[M(0, U) = v] < 1 + 1/(P·p),

    and the e^{ε₂}, e^{ε₃} of Thm 8.3 multiply to at most (P·p + 1)/(P·p − 1). Lemma 8.4's map
    needs P ≥ d and bounds them by (q+1)/q with q = ⌊P/d⌋; rounding the CDF needs only
    P ≥ (2q + 1)/p for the same (q+1)/q, so a sampler with a d of hundreds of bits (FastSample)
    gets a field of about log₂(1/p) bits. When d divides P, M₀ has exactly the law of M(0, U).
    The law is read from the scaled CDF only, so it does not assume M(0, ·) is monotone in u.
    """

    def __init__(self, sampler: CountingQuerySampler, modulus: int) -> None:
        self.sampler = sampler
        self.d = sampler.d if sampler.d is not None else 0
        self.modulus = modulus
        self.n = sampler.count_bounds[1]
        self._thresholds: dict[int, int] = {}

    def threshold(self, v: int) -> int:
        """T(v) = ⌊P·F(0, v)/d⌋ (0 below 0, P from n on): M₀(u₀) ≤ v exactly when u₀ ≤ T(v)."""
        if v < 0:
            return 0
        if v >= self.n:
            return self.modulus
        if v not in self._thresholds:
            self._thresholds[v] = self.modulus * self.sampler.scaled_cdf(v, 0) // self.d
        return self._thresholds[v]

    def interval(self, v: int) -> tuple[int, int]:
        """S_v as (first, size): the u₀ ∈ [1, P] with M₀(u₀) = v."""
        low = self.threshold(v - 1)
        return low + 1, self.threshold(v) - low

    def value(self, u0: int) -> int:
        """M₀(u₀) for u₀ ∈ [1, P]: binary search over v ∈ [0, n]."""
        return smallest_at_least(self.threshold, 0, self.n, u0)


@dataclass(frozen=True)
class CompactHistogram:
    """A dense histogram stored as n + 1 field elements (Balcer & Vadhan, full version Thm 8.3).

    ``count(label)`` evaluates the polynomial at the label's index by rectangular splitting of
    Horner's rule in exact double-precision limbs (:meth:`count`) and maps the field value u₀ − 1
    to a count with :class:`EmptyBinLaw`; ``counts(labels)`` evaluates many labels at once
    (multipoint evaluation). Released nonempty bins read back exactly their noisy counts; every
    other label reads an independent-looking draw of M₀.

    ``releaser`` and ``parameters`` (as text, :func:`~dpplug.param_text.param_text`) name the
    releaser that produced it, so that :meth:`from_bytes` rebuilds it rather than trusting what
    the bytes claim.
    """

    universe: Universe
    modulus: int
    coefficients: tuple[int, ...]
    sampler: CountingQuerySampler
    guarantee: Guarantee
    accuracy: Accuracy
    mechanism: str
    releaser: str
    parameters: dict[str, Any]

    @cached_property
    def _polynomial(self) -> Any:
        return flint.fmpz_mod_poly_ctx(self.modulus)(list(self.coefficients))

    @cached_property
    def _evaluator(self) -> LimbEvaluator:
        """The coefficients' limbs for :meth:`count`, built once
        (:mod:`dpplug.kinds.histogram_releaser.limb_evaluation`)."""
        return LimbEvaluator(self.coefficients, self.modulus)

    @cached_property
    def _law(self) -> EmptyBinLaw:
        return EmptyBinLaw(self.sampler, self.modulus)

    def count(self, label: object) -> int:
        """The count of *label*: p(x) at its index x, then M₀.

        p(x) by rectangular splitting of Horner's rule (Brent & Zimmermann, *Modern Computer
        Arithmetic*, §4.4.3) with exact double-precision products of short limbs
        (:class:`~dpplug.kinds.histogram_releaser.limb_evaluation.LimbEvaluator`): the coefficients'
        limbs are stored once, contiguously, and one evaluation is one BLAS pass over them, about
        2√n multiplications mod P in Python and one reduction
        (docs/mechanisms.md#compact-histogram).
        """
        return self._law.value(self._evaluator(self.universe.index(label)) + 1)

    def counts(self, labels: Iterable[object]) -> list[int]:
        """The counts of many labels, evaluated together."""
        indices = [self.universe.index(label) for label in labels]
        if not indices:
            return []
        values = self._polynomial.multipoint_evaluate(indices)
        return [self._law.value(int(v) + 1) for v in values]

    def to_bytes(self) -> bytes:
        """A JSON header line (the releaser's name and parameters, the modulus, the degree bound
        and, for readers, the guarantee), then the coefficients as fixed-width little-endian
        integers."""
        header = {
            "format": COMPACT_FORMAT,
            "releaser": self.releaser,
            "params": self.parameters,
            "modulus": str(self.modulus),
            "degree_bound": len(self.coefficients) - 1,
            "guarantee": self.guarantee.as_dict(),
        }
        width = _width(self.modulus)
        body = b"".join(c.to_bytes(width, "little") for c in self.coefficients)
        return json.dumps(header, sort_keys=True).encode() + b"\n" + body

    @classmethod
    def from_bytes(cls, data: object, registry: Registry | None = None) -> CompactHistogram:
        """The histogram :meth:`to_bytes` wrote, from untrusted bytes.

        The header is checked field by field (types, ranges, sizes) and the body's length
        against it before anything is built; then the releaser it names is rebuilt through
        *registry* (the default registry when ``None``) from its parameters, refused unless it
        is a histogram releaser, and its modulus, degree bound and guarantee must be the
        header's; the guarantee and accuracy come from the rebuilt releaser, never from the
        bytes (:mod:`dpplug.untrusted`). Anything malformed is :class:`~dpplug.errors.BadData`;
        a releaser or sampler that is not installed is
        :class:`~dpplug.errors.UnknownMechanism`."""
        with reading("a compact histogram"):
            return _read_compact(data, registry)


COMPACT_FORMAT = "dpplug-compact-histogram/2"
#: The most decimal digits of a modulus :meth:`CompactHistogram.from_bytes` reads.
_MAX_MODULUS_DIGITS = 400
#: The fields of the header line, each with its JSON type.
_HEADER_TYPES = {
    "format": str,
    "releaser": str,
    "params": dict,
    "modulus": str,
    "degree_bound": int,
    "guarantee": dict,
}


def _width(modulus: int) -> int:
    return (modulus.bit_length() + 7) // 8


def _read_compact(data: object, registry: Registry | None) -> CompactHistogram:
    from dpplug.kinds import HISTOGRAM_RELEASER

    header, body = header_and_body(data)
    fields(header, _HEADER_TYPES, COMPACT_FORMAT)
    digits = header["modulus"]
    if not (digits.isascii() and digits.isdigit() and len(digits) <= _MAX_MODULUS_DIGITS):
        raise ValueError(f"the modulus must be at most {_MAX_MODULUS_DIGITS} decimal digits")
    modulus, degree = int(digits), header["degree_bound"]
    if modulus < 2 or not 0 <= degree < len(body):
        raise ValueError(f"modulus {modulus} or degree bound {degree} out of range")
    width = _width(modulus)
    if len(body) != width * (degree + 1):
        raise ValueError(f"expected {width * (degree + 1)} bytes of coefficients, got {len(body)}")
    releaser: Any = rebuild(header["releaser"], header["params"], HISTOGRAM_RELEASER, registry)
    if getattr(releaser, "modulus", None) != modulus or releaser.n != degree:
        raise ValueError(
            f"{releaser!r} releases polynomials of degree ≤ {releaser.n} over a field of "
            f"{getattr(releaser, 'modulus', None)}, not of degree ≤ {degree} over {modulus}"
        )
    if Guarantee.from_dict(header["guarantee"]) != releaser.guarantee:
        raise ValueError(f"the header's guarantee is not that of {releaser!r}")
    coefficients = tuple(
        int.from_bytes(body[i : i + width], "little") for i in range(0, len(body), width)
    )
    if max(coefficients) >= modulus:
        raise ValueError(f"a coefficient is not below the modulus {modulus}")
    return CompactHistogram(
        universe=releaser.universe,
        modulus=modulus,
        coefficients=coefficients,
        sampler=releaser.sampler,
        guarantee=releaser.guarantee,
        accuracy=releaser.accuracy(releaser.params["beta"]),
        mechanism=repr(releaser),
        releaser=releaser.name,
        parameters=header["params"],
    )
