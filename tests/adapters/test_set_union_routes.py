"""Set-union selectors through OpenDP (pairs) and PipelineDP (local and Beam)."""

import pytest

pytest.importorskip("opendp")
pytest.importorskip("pipeline_dp")

import pipeline_dp

from dpplug.adapters import pipelinedp as dpplug_pdp
from dpplug.adapters.opendp import enable_features, make_measurement
from dpplug.errors import NotSupported

ROWS = [(u, "common") for u in range(300)] + [(u, f"rare{u}") for u in range(300)]
EXTRACT = pipeline_dp.DataExtractors(
    privacy_id_extractor=lambda r: r[0],
    partition_extractor=lambda r: r[1],
    value_extractor=lambda r: 1,
)


def test_opendp_measurement_on_unit_label_pairs() -> None:
    enable_features()
    m = make_measurement("weighted-gaussian", epsilon=1, delta=1e-5, max_partitions_contributed=2)
    assert m(ROWS) == ["common"]
    epsilon, delta = m.map(1)
    assert epsilon <= 1 and delta <= 1e-5


@pytest.mark.parametrize("name", ["weighted-gaussian", "dp-sips"])
def test_pipelinedp_local_select_partitions(name: str) -> None:
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=1, total_delta=1e-5)
    engine = dpplug_pdp.DPEngine(accountant, pipeline_dp.LocalBackend())
    params = pipeline_dp.SelectPartitionsParams(
        max_partitions_contributed=2, partition_selection_strategy=dpplug_pdp.set_union(name)
    )
    result = engine.select_partitions(ROWS, params, EXTRACT)
    accountant.compute_budgets()
    assert list(result) == ["common"]


def test_pipelinedp_local_aggregate_says_what_to_do() -> None:
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=1, total_delta=1e-5)
    engine = dpplug_pdp.DPEngine(accountant, pipeline_dp.LocalBackend())
    params = pipeline_dp.AggregateParams(
        metrics=[pipeline_dp.Metrics.COUNT],
        max_partitions_contributed=2,
        max_contributions_per_partition=1,
        partition_selection_strategy=dpplug_pdp.set_union("weighted-gaussian"),
    )
    with pytest.raises(NotSupported):
        engine.aggregate(ROWS, params, EXTRACT)
