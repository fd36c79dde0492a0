"""Windows and couplings of noise transcripts (dpplug.conformance.structures.noise_window) on tiny
adaptive programs of discrete-Laplace requests."""

from __future__ import annotations

from functools import partial
from typing import Any

from gmpy2 import mpq

import dpplug
from dpplug.conformance.structures.noise_window import Replays, cell_of, coupled_ratio, window_law
from dpplug.program import Noise, Program, program_steps, recording, run
from dpplug.randomness import SeededSource

SAMPLER = dpplug.create("discrete-laplace", epsilon=1)


def _noise_sized(count: int) -> Program[Any]:
    """A second request whose length is the first request's noise (clipped to 0…2): aligned by
    the same noise, not by the same outcome."""
    (y,) = yield Noise(SAMPLER, [count])
    length = min(max(y - count, 0), 2)
    rest = yield Noise(SAMPLER, [5] * length)
    return y - count, rest


def _released(count: int) -> Program[Any]:
    """The first noisy value released, and a second request that depends on it."""
    (y,) = yield Noise(SAMPLER, [count])
    (z,) = yield Noise(SAMPLER, [count + min(max(y, 0), 3)])
    return y, z - min(max(y, 0), 3)


def _replays(program: Any, count: int) -> Replays:
    return Replays(program_steps(partial(program, count)), {})


def test_the_window_law_sums_to_one_and_real_runs_fall_in_its_cells() -> None:
    replays = _replays(_released, 2)
    cells = window_law(replays, mpq(1, 1000), repr)
    assert sum(cells.values()) == 1
    assert any(cell[0] == "left" for cell in cells)
    source = SeededSource(3)
    for _ in range(50):
        with recording() as transcript:
            output = run(partial(_released, 2), source)
        assert cell_of(replays, transcript, output, mpq(1, 1000), repr) in cells


def test_a_request_sized_by_earlier_noise_is_aligned_by_the_same_noise() -> None:
    bound = SAMPLER.guarantee.exp_epsilon
    ratio = coupled_ratio(_replays(_noise_sized, 1), _replays(_noise_sized, 2), bound, _equal)
    assert ratio == 1  # the output is noise alone; paired by the same outcome, lengths differ


def test_a_second_request_whose_counts_differ_adds_its_ratio() -> None:
    bound = SAMPLER.guarantee.exp_epsilon
    ratio = coupled_ratio(_replays(_released, 1), _replays(_released, 2), bound, _equal)
    assert ratio == bound**2  # both requests' counts differ by one: over the bound


def _equal(a: object, b: object) -> bool:
    return a == b
