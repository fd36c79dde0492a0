"""How hard the conformance suite looks: sample sizes, property-test cases, seed, false alarms.

Every statistical contract has a false-alarm rate of at most ``false_alarm`` (1e-6), split by
Bonferroni over the tests it makes, and draws from ``SeededSource(seed)`` so a run is
reproducible and CI never flakes. ``--full`` raises the sample sizes (more power), ``--fast``
lowers them (a quick smoke run).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Mode = Literal["fast", "default", "full"]

_SAMPLES = {"fast": 10_000, "default": 20_000, "full": 1_000_000}
_RELEASES = {"fast": 300, "default": 1_000, "full": 30_000}
_EXAMPLES = {"fast": 40, "default": 100, "full": 2_000}
_DETECTED = {"fast": 6.0, "default": 4.0, "full": 2.0}


@dataclass(frozen=True)
class Settings:
    """One conformance run's parameters."""

    mode: Mode = "default"
    seed: int = 0
    false_alarm: float = 1e-6
    #: Largest n on which exact checks enumerate every count (O(n²) rationals).
    max_exact_n: int = 64

    @property
    def samples(self) -> int:
        """Samples per tested input for goodness of fit, audits and accuracy tests."""
        return _SAMPLES[self.mode]

    @property
    def releases(self) -> int:
        """Releases per tested dataset for histogram releasers, which release one histogram per
        call (not vectorised): the audit and accuracy samples are this size."""
        return _RELEASES[self.mode]

    @property
    def examples(self) -> int:
        """Property-based (hypothesis) cases per plugin for the bad-input contract."""
        return _EXAMPLES[self.mode]

    @property
    def detected_factor(self) -> float:
        """The overclaim f every sampled accuracy claim detects with probability ≥ 1/2: a true
        failure rate of f·β where β is declared."""
        return _DETECTED[self.mode]

    def describe(self) -> str:
        return (
            f"mode {self.mode}: {self.samples} samples per input ({self.releases} releases per "
            f"dataset for histogram releasers), {self.examples} generated "
            f"bad inputs per plugin, false alarm ≤ {self.false_alarm:g} per contract, "
            f"seed {self.seed}"
        )
