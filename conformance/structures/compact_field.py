"""The verifier of :class:`~dpplug.kinds.histogram_releaser.compact_law.CompactField`: the
components the compact law rests on, checked by replaying the real release with scripted draws
(Balcer & Vadhan, full version Alg. 8.2; the argument is in
:mod:`dpplug.kinds.histogram_releaser.compact_law` and docs/conformance.md#compact-histograms).

For every combination of noisy counts of the nonempty bins (at most :data:`MAX_COMBINATIONS`)
and three scripted choices of every U(k) (1, ⌈k/2⌉ and k), the release must ask for its noisy
counts once, for the true counts; draw u_x from U(|S_c̃|) for each nonempty bin with p(x) the
u-th element of S_c̃ − 1; draw U(P) at each other of the n + 1 points with p taking the drawn
value there; and release n + 1 coefficients that read back the noisy counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import islice, product
from typing import TYPE_CHECKING, Any

from dpplug.conformance.privacy_check import PrivacyCheck
from dpplug.conformance.settings import Settings
from dpplug.conformance.structures.verifier import Verifier
from dpplug.errors import NotSupported
from dpplug.kinds.histogram_releaser import CompactHistogram, EmptyBinLaw, HistogramReleaser
from dpplug.kinds.histogram_releaser.compact_law import CompactField
from dpplug.program import Draw, Noise
from dpplug.randomness import RandomSource

if TYPE_CHECKING:
    from dpplug.conformance.probes.histogram_releaser.probe import ReleaserProbe

#: The most combinations of noisy counts :func:`component_problems` replays per dataset.
MAX_COMBINATIONS = 256


class _Script(RandomSource):
    """Serves the sampler's noisy counts from a script and answers each U(k) with the script's
    choice for it (``low``, ``middle`` or ``high``: 1, ⌈k/2⌉ or k), recording what was asked;
    refuses every other draw."""

    def __init__(self, noisy: tuple[int, ...], choice: str) -> None:
        super().__init__()
        self.noisy, self.choice = noisy, choice
        self.asked: list[list[int]] = []
        self.bounds: list[int] = []
        self.answers: list[int] = []

    def serve(self, draw: Draw) -> Any:
        if not isinstance(draw, Noise):
            raise NotSupported(f"the release draws a {type(draw).__name__}, not its noisy counts")
        self.asked.append(list(draw.counts))
        return self.noisy

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


def component_problems(
    releaser: HistogramReleaser, structure: CompactField, data: Mapping[Any, int]
) -> list[str]:
    """Components 1–4 of the compact law (:mod:`dpplug.kinds.histogram_releaser.compact_law`)
    on *data*, by replaying the real release: what is wrong, in words."""
    counts = releaser.true_counts(data)
    indices, true = [int(i) for i in counts.indices], [int(c) for c in counts.counts]
    n, decoder, sampler = releaser.n, structure.decoder, structure.sampler
    modulus = decoder.modulus
    supports = [sorted(v for v, p in sampler.pmf(c).items() if p) for c in true]
    fill = [z for z in range(n + 1 + len(indices)) if z not in indices][: n + 1 - len(indices)]
    for noisy in islice(product(*supports), MAX_COMBINATIONS):
        for choice in ("low", "middle", "high"):
            source = _Script(tuple(noisy), choice)
            where = f"data {dict(data)}, noisy counts {list(noisy)}"
            release = releaser.release(data, source)
            if source.asked != [true]:
                return [f"{where}: asked its sampler for {source.asked}, not once for {true}"]
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


class CompactFieldVerifier(Verifier):
    """A compact histogram releaser (:class:`~dpplug.kinds.histogram_releaser.compact_law
    .CompactField`): its release law is the decoded law of the core enumerator
    (:meth:`~dpplug.HistogramReleaser.release_law`), which stands for it once the components are
    certified here, on every small dataset of the probe."""

    structure = CompactField
    probe: ReleaserProbe
    declared: CompactField

    def implementation_check(self, settings: Settings) -> PrivacyCheck:
        releaser, datasets = self.probe.releaser, self.probe.small_datasets()
        for data in datasets:
            problems = component_problems(releaser, self.declared, data)
            if problems:
                return PrivacyCheck(tuple(problems), "")
        return PrivacyCheck(
            (),
            f"Alg. 8.2's components replayed on {len(datasets)} datasets (noisy counts from the "
            "sampler, u_x uniform on exactly S_c̃, other points uniform on the field, "
            "interpolated)",
        )
