"""The cases derived from a schema cover what they promise whatever the seed: every gap of the
rational ladder, and every two values of two options together."""

from __future__ import annotations

from itertools import combinations, pairwise

import pytest
from gmpy2 import mpq

from dpplug import Registry
from dpplug.conformance.generated import candidate_groups, pairwise_settings
from dpplug.param_types import RationalType

BUILTINS = Registry.load(entry_points=False)


def test_pairwise_settings_put_every_two_values_of_two_options_together() -> None:
    options: dict[str, list[object]] = {
        "l0": ["absent", 2, 3],
        "pre": ["absent", 2, 3],
        "replace": ["absent", True],
        "public": ["absent", -5],
    }
    settings = pairwise_settings(options)
    for a, b in combinations(options, 2):
        for x in options[a]:
            for y in options[b]:
                assert any(s[a] == x and s[b] == y for s in settings), (a, x, b, y)
    assert len(settings) <= 3 * 3 + 3  # near the 9 that l0 × pre alone need


@pytest.mark.parametrize("seed", range(4))
def test_each_wide_gap_of_the_ladder_gets_a_point_whatever_the_seed(seed: int) -> None:
    entry = BUILTINS.get("geosample")
    tried = sorted(
        {change["epsilon"] for group in candidate_groups(entry, seed) for change in group[:1]}
    )
    ladder = [v for v in tried if v in {mpq(1, 1000), mpq(1, 20), mpq(1, 4), 2, 8, 64}]
    for low, high in pairwise(ladder):
        if high > RationalType.GAP * low:
            assert any(low < v < high for v in tried), (low, high)


def test_the_options_of_a_selector_are_combined_whatever_the_seed() -> None:
    entry = BUILTINS.get("optimal-partition-selection")
    for seed in range(4):
        cases = [group[0] for group in candidate_groups(entry, seed)]
        assert any(
            case.get("max_partitions_contributed", 1) > 1
            and case.get("pre_threshold", 1) > 1
            and not case.get("replace_one", False)
            for case in cases
        )
