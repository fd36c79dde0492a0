"""Exact laws of compact histogram releases (Balcer & Vadhan, full version Alg. 8.2, Thm 8.3;
docs/conformance.md#compact-histograms), through certified components and a closed form: the
release draws one field value per label of its n + 1 points, far too many outcomes to enumerate.

**Components** (:func:`component_problems`), each checked by replaying the releaser's own
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

import copy
import math
from collections.abc import Mapping
from itertools import islice, product
from typing import TYPE_CHECKING, Any

from gmpy2 import mpq

from dpplug.errors import NotSupported
from dpplug.kinds.histogram_releaser.outputs import CompactHistogram, EmptyBinLaw
from dpplug.randomness import RandomSource

if TYPE_CHECKING:
    from dpplug.kinds.histogram_releaser.base import HistogramReleaser

#: The decoded law is over the universe's first this many labels (the exact check's datasets').
LABELS = 3
#: The most combinations of noisy counts :func:`component_problems` replays per dataset.
MAX_COMBINATIONS = 256


def is_compact(releaser: HistogramReleaser) -> bool:
    """Whether *releaser* releases a compact histogram decoded by an EmptyBinLaw ``law`` over
    a field of size ``modulus`` (the route of :func:`decoded_law`)."""
    return isinstance(getattr(releaser, "law", None), EmptyBinLaw) and isinstance(
        getattr(releaser, "modulus", None), int
    )


def _classes(decoder: EmptyBinLaw, n: int) -> dict[int, int]:
    """|S_v| for v ∈ [0, n] with S_v nonempty; NotSupported unless the classes partition [1, P]."""
    sizes = {v: decoder.interval(v)[1] for v in range(n + 1)}
    if any(size < 0 for size in sizes.values()) or sum(sizes.values()) != decoder.modulus:
        raise NotSupported("the decoder's classes S_v do not partition the field")
    return {v: size for v, size in sizes.items() if size}


def decoded_law(releaser: HistogramReleaser, data: Mapping[Any, int]) -> dict[Any, Any]:
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
    decoder: EmptyBinLaw = releaser.law  # type: ignore[attr-defined]
    empty = {v: mpq(s, decoder.modulus) for v, s in _classes(decoder, n).items()}
    sampler = releaser.sampler  # type: ignore[attr-defined]
    marginals = [dict(sampler.pmf(nonempty[x]).items()) if x in nonempty else empty for x in labels]
    law: dict[Any, Any] = {}
    for values in product(*(m.keys() for m in marginals)):
        p = math.prod((m[v] for m, v in zip(marginals, values, strict=True)), start=mpq(1))
        if p:
            law[tuple(zip(labels, (int(v) for v in values), strict=True))] = p
    return law


class _Script(RandomSource):
    """Answers each U(k) with the script's choice for it (``low``, ``middle`` or ``high``: 1,
    ⌈k/2⌉ or k) and records k; refuses every other draw."""

    def __init__(self, choice: str) -> None:
        super().__init__()
        self.choice = choice
        self.bounds: list[int] = []
        self.answers: list[int] = []

    def uniform(self, d: int) -> int:
        k = int(d)
        answer = {"low": 1, "middle": (k + 1) // 2, "high": k}[self.choice]
        self.bounds.append(k)
        self.answers.append(answer)
        return answer

    def random_bytes(self, count: int) -> bytes:
        if count:
            raise NotSupported("the release draws other than U(k) from its RandomSource")
        return b""


def _evaluate(coefficients: tuple[int, ...], x: int, modulus: int) -> int:
    value = 0
    for c in reversed(coefficients):
        value = (value * x + c) % modulus
    return value


def component_problems(releaser: HistogramReleaser, data: Mapping[Any, int]) -> list[str]:
    """Components 1–4 of the module docstring on *data*, by replay: what is wrong, in words."""
    from dpplug.kinds.histogram_releaser.release_law import (  # (release_law imports this)
        NeedNoise,
        ScriptedSampler,
    )

    counts = releaser.true_counts(data)
    indices, true = [int(i) for i in counts.indices], [int(c) for c in counts.counts]
    n, decoder = releaser.n, releaser.law  # type: ignore[attr-defined]
    modulus: int = releaser.modulus  # type: ignore[attr-defined]
    sampler = releaser.sampler  # type: ignore[attr-defined]
    supports = [sorted(v for v, p in sampler.pmf(c).items() if p) for c in true]
    fill = [z for z in range(n + 1 + len(indices)) if z not in indices][: n + 1 - len(indices)]
    for noisy in islice(product(*supports), MAX_COMBINATIONS):
        for choice in ("low", "middle", "high"):
            script = ScriptedSampler(sampler, [tuple(noisy)])
            replay = copy.copy(releaser)
            replay.sampler = script  # type: ignore[attr-defined]
            source = _Script(choice)
            where = f"data {dict(data)}, noisy counts {list(noisy)}"
            try:
                release = replay.release(data, source)
            except NeedNoise:
                return [f"{where}: asked its sampler {script.asked}, not once for {true}"]
            if script.asked != [true]:
                return [f"{where}: asked its sampler for {script.asked}, not once for {true}"]
            problems = _point_problems(release, source, indices, list(noisy), fill, decoder)
            if not isinstance(release, CompactHistogram) or release.modulus != modulus:
                problems.append("does not release a compact histogram over its field")
            if problems:
                return [f"{where}: {problem}" for problem in problems]
    return []


def _point_problems(
    release: Any,
    source: _Script,
    indices: list[int],
    noisy: list[int],
    fill: list[int],
    decoder: EmptyBinLaw,
) -> list[str]:
    """Components 2–4 for one scripted release."""
    modulus = decoder.modulus
    expected = [decoder.interval(v)[1] for v in noisy] + [modulus] * len(fill)
    if len(source.bounds) != len(expected):
        return [
            f"draws {len(source.bounds)} uniform values, not one per nonempty bin and one per "
            f"other point ({len(expected)}): U(k) for k = {source.bounds}"
        ]
    whats = [
        f"u_x for the nonempty bin {x} (S_{v} has {k} elements)"
        for x, v, k in zip(indices, noisy, expected, strict=False)
    ] + [f"the value at point {z} (the field F_{modulus} has {modulus})" for z in fill]
    wrong = [
        f"draws {what} from U({k}), not U({need})"
        for what, k, need in zip(whats, source.bounds, expected, strict=True)
        if k != need
    ]
    if wrong:
        return wrong
    coefficients = tuple(int(c) for c in release.coefficients)
    if len(coefficients) != len(indices) + len(fill):
        return [f"releases {len(coefficients)} coefficients, not n + 1"]
    problems = []
    for x, v, u in zip(indices, noisy, source.answers, strict=False):
        first = decoder.interval(v)[0]
        value = _evaluate(coefficients, x, modulus)
        if value != first + u - 2 or decoder.value(value + 1) != v:
            problems.append(
                f"at label index {x}, u = {u} of S_{v} gives p(x) = {value}, not the u-th "
                f"element {first + u - 2} of S_{v} − 1 (decoding to {v})"
            )
    for z, answer in zip(fill, source.answers[len(indices) :], strict=True):
        if _evaluate(coefficients, z, modulus) != answer - 1:
            problems.append(f"p does not take the drawn value {answer - 1} at label index {z}")
    label = release.universe.label
    read = [release.count(label(x)) for x in indices]
    if not problems and read != noisy:
        problems.append(f"the release reads {read} at the nonempty bins, not {noisy}")
    return problems
