"""What anonymized-histogram releasers return (Suresh, "Differentially private anonymized
histograms", NeurIPS 2019): the released multiset of counts, in prevalence form, with the
released total, and the symmetric-property estimators of its §3.2 as post-processing.

An anonymized histogram is the multiset of a dataset's positive counts, without labels. Its
prevalence φ_r is the number of counts equal to r, and φ_{r+} = Σ_{s≥r} φ_s is its cumulative
prevalence. Two histograms are compared by the sorted-ℓ₁ distance (Lemma 1),
ℓ₁(h₁, h₂) = Σ_i |n_(i)(h₁) − n_(i)(h₂)| over the counts sorted in non-increasing order (padded
with zeros), which equals Σ_{r≥1} |φ_{r+}(h₁) − φ_{r+}(h₂)|: :func:`sorted_l1`.

:class:`AnonymizedHistogram` is one release: ``prevalences`` (r → φ_r, canonical order by r,
positive integers only), ``total`` (the released number of items N), the
:class:`~dpplug.guarantee.Guarantee` and :class:`~dpplug.guarantee.Accuracy` of the release,
and the mechanism (name and exact parameters) that made it. ``to_bytes``/``from_bytes``
serialise it; bytes read back are untrusted: every field is validated (:class:`BadData`) and the
guarantee and accuracy are recomputed from the mechanism's parameters, never read from the bytes.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from dpplug.errors import BadParameter
from dpplug.guarantee import Accuracy, Guarantee
from dpplug.param_text import params_text
from dpplug.untrusted import document, fields, reading, rebuild

if TYPE_CHECKING:
    from dpplug.kinds.anonymized_histogram_releaser.base import AnonymizedHistogramReleaser
    from dpplug.plugin_registry import Registry

FORMAT = "dpplug-anonymized-histogram/1"
#: The most items (Σ r·φ_r) an anonymized histogram may hold, released or read back.
MAX_ITEMS = 10**12
#: The most (r, φ_r) pairs :meth:`AnonymizedHistogram.from_bytes` reads: a histogram of at most
#: MAX_ITEMS items has fewer than √(2·MAX_ITEMS) distinct counts.
MAX_PAIRS = math.isqrt(2 * MAX_ITEMS) + 1
#: The fields of :meth:`AnonymizedHistogram.to_bytes`' document, each with its JSON type.
_FIELDS = {"format": str, "mechanism": str, "params": dict, "total": int, "prevalences": list}
#: The longest document :meth:`AnonymizedHistogram.from_bytes` parses: MAX_PAIRS pairs of two
#: 13-digit counts, and room for the rest.
_MAX_DOCUMENT_BYTES = MAX_PAIRS * 32 + (1 << 16)
#: The most counts :meth:`AnonymizedHistogram.linear_estimate` scans for a Lipschitz constant.
MAX_SCANNED_COUNTS = 10**7


def sorted_l1(a: Mapping[int, int], b: Mapping[int, int]) -> int:
    """The sorted-ℓ₁ distance between two anonymized histograms in prevalence form, computed as
    Σ_{r≥1} |φ_{r+}(a) − φ_{r+}(b)| (Suresh 2019, Lemma 1) in O(#pairs) exact integer steps."""
    points = sorted({*a, *b}, reverse=True)
    distance, above_a, above_b = 0, 0, 0
    for r, below in zip(points, [*points[1:], 0][: len(points)], strict=True):
        above_a += a.get(r, 0)
        above_b += b.get(r, 0)
        distance += (r - below) * abs(above_a - above_b)  # φ_{s+} constant for s in (below, r]
    return distance


@dataclass(frozen=True)
class Estimate:
    """A symmetric-property estimate f̂^dp = Σ_r f(r, N)·φ_r(H) from a release (Suresh 2019,
    §3.2), with what Cor. 1 needs to turn the release's error into the estimate's.

    ``lipschitz`` is L^N = max(f(1, N), max_r |f(r, N) − f(r + 1, N)|): with the same N,
    |f̂(H) − f̂(h)| ≤ L^N·ℓ₁(h, H). ``gamma`` is the γ with L^N = N^{γ−1} (``None`` for N ≤ 1),
    and ``corollary_applies`` says whether γ ≤ 1/2, the condition of Cor. 1 (which then bounds
    the extra samples the private estimate needs by O((log(2/ε)/(α²ε))^{1/(1−2γ)} +
    (1/ε)·log(f_max/(αε))) for ε ≤ 1, and O((1/(α·e^{cε}))^{2/(1−2γ)} + (1/ε)·log(f_max/α))
    for ε > 1, constants unspecified).
    """

    value: float
    lipschitz: float
    gamma: float | None
    corollary_applies: bool
    formula: str


def _estimate(value: float, lipschitz: float, total: int, formula: str) -> Estimate:
    gamma = None if total <= 1 or lipschitz <= 0 else 1 + math.log(lipschitz) / math.log(total)
    return Estimate(value, lipschitz, gamma, gamma is not None and gamma <= 0.5, formula)


def _count(value: object, low: int, high: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{what} must be an integer, got {value!r}")
    if not low <= int(value) <= high:
        raise ValueError(f"{what} must be in [{low}, {high}], got {value}")
    return int(value)


@dataclass(frozen=True)
class AnonymizedHistogram:
    """One released anonymized histogram (see the module docstring).

    ``mechanism`` and ``params`` name the mechanism and its exact parameters (as
    :func:`~dpplug.param_text.param_text` writes them), so that :meth:`from_bytes` can rebuild it
    and recompute the guarantee and accuracy.
    """

    prevalences: dict[int, int]
    total: int
    guarantee: Guarantee
    accuracy: Accuracy
    mechanism: str
    params: dict[str, Any]

    def __post_init__(self) -> None:
        keys = list(self.prevalences)
        if keys != sorted(keys) or any(r < 1 or phi < 1 for r, phi in self.prevalences.items()):
            raise ValueError("prevalences must be positive, keyed by increasing counts r ≥ 1")

    @property
    def items(self) -> int:
        """Σ_r r·φ_r: the number of items of the released histogram itself (noisier than
        :attr:`total`, which PrivHist releases separately)."""
        return sum(r * phi for r, phi in self.prevalences.items())

    def sorted_counts(self) -> list[int]:
        """Every released count, non-increasing (one entry per count: O(Σ φ_r) memory)."""
        return [
            r for r in sorted(self.prevalences, reverse=True) for _ in range(self.prevalences[r])
        ]

    def support_size(self) -> Estimate:
        """Σ_r φ_r, the number of counts (f(r, N) = 1; L^N = 1: a count appearing or vanishing
        changes it by one)."""
        return _estimate(
            float(sum(self.prevalences.values())), 1.0, self.total, "Σ_r φ_r (f(r, N) = 1)"
        )

    def entropy(self) -> Estimate:
        """The plug-in entropy (nats) with the released N, Σ_r φ_r·(r/N)·ln(N/r) (Suresh 2019,
        §3.2: the DP estimate uses N, not the noisier Σ_r r·φ_r), and L^N ≤ (1 + ln N)/N."""
        n = self.total
        if n == 0:
            return _estimate(0.0, 0.0, 0, "no items: 0")
        value = sum(
            phi * (r / n) * (math.log(n) - math.log(r)) for r, phi in self.prevalences.items()
        )
        return _estimate(value, (1 + math.log(n)) / n, n, "Σ_r φ_r·(r/N)·ln(N/r), L^N ≤ (1+ln N)/N")

    def linear_estimate(
        self, f: Callable[[int, int], float], lipschitz: float | None = None
    ) -> Estimate:
        """f̂^dp = Σ_r f(r, N)·φ_r for a caller's coefficients f(r, n) (Suresh 2019, §3.2).

        *lipschitz* is f's L^N if the caller knows it; otherwise it is computed over every
        r ≤ max(N, largest released count) + 1, which costs O(N) calls of f and is refused
        (:class:`BadParameter`) above :data:`MAX_SCANNED_COUNTS`.
        """
        n = self.total
        value = sum(f(r, n) * phi for r, phi in self.prevalences.items())
        if lipschitz is None:
            top = max(n, *self.prevalences, 0) + 1
            if top > MAX_SCANNED_COUNTS:
                raise BadParameter(
                    f"computing f's Lipschitz constant would scan {top} counts (more than "
                    f"{MAX_SCANNED_COUNTS}); pass lipschitz=… (f's L^N) instead"
                )
            lipschitz = max(
                abs(f(1, n)), max((abs(f(r, n) - f(r + 1, n)) for r in range(1, top)), default=0)
            )
        return _estimate(float(value), float(lipschitz), n, "Σ_r f(r, N)·φ_r")

    def to_dict(self) -> dict[str, Any]:
        """Plain values: the prevalences (r → φ_r, increasing r) and the total."""
        return {"prevalences": dict(self.prevalences), "total": self.total}

    def to_bytes(self) -> bytes:
        """One JSON document: the format, the mechanism and its exact parameters, the total and
        the (r, φ_r) pairs. The guarantee and accuracy are not written: they follow from the
        mechanism."""
        document = {
            "format": FORMAT,
            "mechanism": self.mechanism,
            "params": self.params,
            "total": self.total,
            "prevalences": [[r, phi] for r, phi in self.prevalences.items()],
        }
        return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()

    @classmethod
    def from_bytes(cls, data: bytes, registry: Registry | None = None) -> AnonymizedHistogram:
        """The histogram :meth:`to_bytes` wrote, from untrusted bytes (:mod:`dpplug.untrusted`):
        every field is checked (:class:`BadData` saying what is wrong) and the mechanism is
        rebuilt through *registry* (the default registry when ``None``) to recompute the
        guarantee and the accuracy; a mechanism that is not installed is
        :class:`~dpplug.errors.UnknownMechanism`."""
        from dpplug.kinds import ANONYMIZED_HISTOGRAM_RELEASER

        with reading("an anonymized histogram"):
            found = document(data, _MAX_DOCUMENT_BYTES)
            fields(found, _FIELDS, FORMAT)
            pairs = found["prevalences"]
            if len(pairs) > MAX_PAIRS:
                raise ValueError(f"prevalences must be a list of at most {MAX_PAIRS} pairs")
            total = _count(found["total"], 0, 2 * MAX_ITEMS, "total")
            prevalences: dict[int, int] = {}
            for pair in pairs:
                if not isinstance(pair, list) or len(pair) != 2:
                    raise ValueError(f"each prevalence is a pair [r, φ_r], got {pair!r}")
                r = _count(pair[0], 1, MAX_ITEMS, "r")
                phi = _count(pair[1], 1, MAX_ITEMS, f"φ_{r}")
                if prevalences and r <= next(reversed(prevalences)):
                    raise ValueError("prevalences must be listed by strictly increasing r")
                prevalences[r] = phi
            if sum(r * phi for r, phi in prevalences.items()) > 2 * MAX_ITEMS:
                raise ValueError(f"more than {2 * MAX_ITEMS} items")
            name = found["mechanism"]
            mechanism = cast(
                "AnonymizedHistogramReleaser",
                rebuild(name, found["params"], ANONYMIZED_HISTOGRAM_RELEASER, registry),
            )
        return cls(
            prevalences=prevalences,
            total=total,
            guarantee=mechanism.guarantee,
            accuracy=mechanism.release_accuracy(),
            mechanism=name,
            params=params_text(mechanism.params),
        )
