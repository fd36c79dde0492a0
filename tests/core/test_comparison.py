"""``dpplug.compare``: every mechanism of a kind built from public parameters and ranked by the
accuracy it declares, checked against the mechanisms built directly; third-party and broken
plugins; the histogram releasers as query answerers; sweeps and their crossovers; the CLI."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import pytest

import dpplug
from dpplug.cli import main
from dpplug.comparison import APART, BROKEN, RANKED, REFUSED, compare
from dpplug.comparison_views import figure, plot_data, sweep_table
from dpplug.errors import NotSupported
from dpplug.plugins.samplers.geosample import GeoSample

from support.example_plugin import RandomizedResponse

SELECTION = {"epsilon": 1, "delta": Fraction(1, 10**5)}
SELECTORS = (
    "gaussian-thresholding",
    "laplace-thresholding",
    "optimal-partition-selection",
    "truncated-geometric-thresholding",
)


def kept_from(name: str, **params: Any) -> int:
    """The unit count a selector keeps with probability ≥ 19/20, built directly."""
    return int(dpplug.create(name, **params).kept_from(Fraction(1, 20)))


def test_selectors_are_ranked_by_the_units_they_keep_partitions_from() -> None:
    comparison = compare("partition-selector", l0=10, **SELECTION)
    assert {r.name for r in comparison.rows} == set(SELECTORS)
    ranked = comparison.ranked
    assert [r.rank for r in ranked] == list(range(1, len(ranked) + 1))
    direct = {
        name: kept_from(name, max_partitions_contributed=10, **SELECTION) for name in SELECTORS
    }
    assert [r.measure.value for r in ranked if r.measure] == sorted(direct.values())
    assert all(r.measure and r.measure.value == direct[r.name] for r in ranked)
    assert comparison.best and comparison.best.name == min(direct, key=lambda n: direct[n])
    for row in ranked:
        assert (
            row.guarantee
            == dpplug.create(row.name, max_partitions_contributed=10, **SELECTION).guarantee
        )
        assert row.time == ("strict" if row.strict_time else "expected")


def test_best_names_the_top_mechanism_and_why_and_refuses_when_none_fits() -> None:
    choice = compare.best("partition-selector", l0=10, **SELECTION)
    assert choice.name == compare("partition-selector", l0=10, **SELECTION).ranked[0].name
    assert choice.name in choice.why and "β = 1/20" in choice.why and "next" in choice.why
    with pytest.raises(NotSupported, match="needs δ"):
        compare.best("partition-selector", epsilon=1)  # every selector needs δ


def test_a_third_party_mechanism_is_ranked_and_a_broken_one_is_listed_apart() -> None:
    class Broken(GeoSample):
        name = "broken-accuracy"

        def _accuracy(self, beta: Any) -> Any:
            raise RuntimeError("boom")

    class Plugin:
        @staticmethod
        @dpplug.hookimpl
        def register_samplers(register: Any) -> None:
            register(RandomizedResponse)
            register(Broken)

    registry = dpplug.Registry.load([Plugin()], entry_points=False)
    comparison = compare("sampler", n=1, epsilon=1, registry=registry)
    rows = {r.name: r for r in comparison.rows}
    assert rows["randomized-response"].status == RANKED  # a fixed guarantee: takes no epsilon
    assert rows["randomized-response"].source.startswith("(runtime)")
    assert rows["broken-accuracy"].status == BROKEN and "boom" in rows["broken-accuracy"].note
    assert rows["fastsample"].status == REFUSED and rows["fastsample"].note == "needs gamma"
    assert rows["geosample"].status == RANKED


def test_an_anonymized_releaser_that_declares_only_its_total_is_not_ranked_against_ranks() -> None:
    comparison = compare("anonymized-histogram-releaser", epsilon=1, length=1000)
    rows = {r.name: r for r in comparison.rows}
    assert rows["sorted-histogram"].rank == 1
    assert rows["privhist"].status == APART and rows["privhist"].rank is None
    alone = compare("anonymized-histogram-releaser", epsilon=1)  # no public length
    assert {r.name: r.status for r in alone.rows}["sorted-histogram"] == REFUSED
    assert alone.best and alone.best.name == "privhist"  # ranked when it is the only one


QUERIES = {
    "universe": "bytes:16",
    "n": 10**5,
    "epsilon": 1,
    "delta": Fraction(1, 10**6),
    "m": 10,
    "k": 1000,
}


def test_a_query_task_ranks_histogram_releasers_as_answerers_at_m_a_over_n() -> None:
    comparison = compare("query-releaser", **QUERIES)
    answerers = {r.name: r for r in comparison.rows if r.answerer}
    stability = answerers["stability-histogram"]
    assert stability.status == RANKED and stability.label == "stability-histogram (answerer)"
    direct = dpplug.create(
        "stability-histogram", universe="bytes:16", n=10**5, epsilon=1, delta=Fraction(1, 10**6)
    )
    a = direct.accuracy(Fraction(1, 20)).simultaneous.a
    assert stability.measure and stability.measure.value == pytest.approx(10 * a / 10**5)
    laplace = {r.name: r for r in comparison.rows if not r.answerer}["independent-laplace"]
    releaser = dpplug.create(
        "independent-laplace",
        n=10**5,
        epsilon=1,
        delta=Fraction(1, 10**6),
        max_queries=1000,
        sparsity=10,
    )
    alpha = Fraction(releaser.accuracy(Fraction(1, 20)).simultaneous.a, 10**5 * (1 << 16))
    assert laplace.measure and laplace.measure.value == pytest.approx(float(alpha))
    assert comparison.best and comparison.best.answerer  # at k = 1000 the histogram wins
    no_universe = compare("query-releaser", **{k: v for k, v in QUERIES.items() if k != "universe"})
    assert all(r.note == "needs universe" for r in no_universe.rows if r.answerer)


def test_a_sweep_finds_the_crossover_and_each_side_is_confirmed_directly() -> None:
    sweep = compare.sweep("partition-selector", "l0", 1, 16, points=5, **SELECTION)
    assert sweep.values[0] == 1 and sweep.values[-1] == 16
    (crossover,) = sweep.crossovers
    at = int(crossover.at)  # type: ignore[call-overload]
    above, below = crossover.above, crossover.below

    def units(name: str, l0: int) -> int:
        return kept_from(name, max_partitions_contributed=l0, **SELECTION)

    assert units(above, at) < units(below, at)
    assert units(above, at - 1) >= units(below, at - 1)
    assert crossover.describe() == f"{above} from ℓ₀ ≥ {at} ({below} below)"
    data = plot_data(sweep)
    assert data["x"] == [float(v) for v in sweep.values]  # type: ignore[arg-type]
    assert set(data["series"]) == {r.label for c in sweep.comparisons for r in c.ranked}
    assert figure(sweep).axes[0].get_xlabel() == "ℓ₀"
    text = sweep_table(sweep)
    assert crossover.describe() in text and max(len(line) for line in text.splitlines()) <= 80


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


TASKS = [
    ("sampler", "n=1000", "epsilon=1", "delta=1e-6"),
    ("partition-selector", "epsilon=1", "delta=1e-5", "l0=10"),
    ("histogram-releaser", "universe=bytes:16", "n=10000", "epsilon=1", "delta=1e-6"),
    ("anonymized-histogram-releaser", "epsilon=1", "length=100000"),
    (
        "query-releaser",
        "universe=bytes:16",
        "n=100000",
        "epsilon=1",
        "delta=1e-6",
        "m=10",
        "k=1000",
    ),
]


@pytest.mark.parametrize("argv", TASKS, ids=[t[0] for t in TASKS])
def test_the_command_prints_an_80_column_table_and_json(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    status, out, err = run(capsys, "compare", *argv)
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "nothing private is read" in out
    status, out, _ = run(capsys, "compare", *argv, "--json")
    data = json.loads(out)
    assert status == 0 and data["task"]["kind"] == argv[0]
    assert "nothing private is read" in data["public_only"]
    ranked = [row for row in data["rows"] if row["status"] == RANKED]
    assert ranked and [row["rank"] for row in ranked] == list(range(1, len(ranked) + 1))


def test_the_command_sweeps_and_refuses_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        capsys,
        "compare",
        "partition-selector",
        "epsilon=1",
        "delta=1e-5",
        "--sweep",
        "l0=1:16",
        "--points",
        "5",
    )
    assert status == 0 and "from ℓ₀ ≥" in out
    status, _, err = run(capsys, "compare", "partition-selector", "--sweep", "l0")
    assert status == 2 and "NAME=LOW:HIGH" in err
    status, _, err = run(capsys, "compare", "no-such-kind")
    assert status == 2 and "no kind of mechanism is called" in err
    status, _, err = run(capsys, "compare", "sampler", "beta=2")
    assert status == 2 and "beta must be in (0, 1)" in err
