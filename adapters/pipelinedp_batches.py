"""Whole batches of a PipelineDP collection for one call, on each backend, and the per-unit
contribution bounding of dpplug's counting graphs (:mod:`dpplug.adapters.pipelinedp`).

PipelineDP's backends hand a function one element at a time (``map``, ``filter``); a partition
selector or a count sampler decides a whole numpy array with one vectorised call
(``PartitionSelector.select``, ``CountingQuerySampler.sample``), one draw per element as the
scalar path makes, so :func:`per_batch` gives the function lists of up to :data:`BATCH` elements
instead, where the backend runs them:

- ``LocalBackend``: consecutive elements of the (lazy) collection;
- ``SparkRDDBackend``: consecutive elements of each RDD partition (``mapPartitions``);
- ``BeamBackend``: Beam's ``BatchElements`` within each bundle;
- any other backend: batches of one element (``flat_map``), correct and slower.

The batches' outputs are concatenated; nothing in the law depends on how the elements are cut,
since every element gets its own independent draws.
"""

from __future__ import annotations

import collections
import functools
import itertools
import operator
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pipeline_dp
from pipeline_dp import pipeline_backend, sampling_utils

#: The most elements one call of a batch function gets.
BATCH = 4096

Batch = Callable[[list[Any]], Iterable[Any]]


def per_batch(backend: Any, col: Any, fn: Batch, stage_name: str) -> Any:
    """The collection of what *fn* returns for batches of *col*'s elements (see the module
    docstring), on *backend*."""
    if isinstance(backend, pipeline_dp.LocalBackend):
        return pipeline_backend.ReiterableLazyIterable(batched(fn, col))
    if isinstance(backend, pipeline_dp.SparkRDDBackend):
        return col.mapPartitions(functools.partial(batched, fn))
    if isinstance(backend, pipeline_dp.BeamBackend):
        import apache_beam as beam

        label = backend.unique_lable_generator.unique(stage_name)
        return (
            col
            | f"{label}: batch" >> beam.BatchElements(min_batch_size=1, max_batch_size=BATCH)
            | f"{label}: per batch" >> beam.FlatMap(fn)
        )
    return backend.flat_map(col, functools.partial(_alone, fn), stage_name)


def units_per_partition(
    backend: Any, col: Any, unit_and_partition: Callable[[Any], tuple[Any, Any]], l0: int
) -> Any:
    """(partition, privacy units) after PipelineDP's ``select_partitions`` contribution bounding
    (:func:`bounded_partitions`: at most *l0* distinct partitions per unit), from rows whose
    (unit, partition) *unit_and_partition* extracts. On Spark each RDD partition's rows are
    grouped by unit in one pass and each group's chosen partitions counted in one ``Counter``
    (Python calls per row cost more there than anything else); on ``LocalBackend`` all rows
    so, in one lazy pass (where PipelineDP's stages each keep a list of their output); elsewhere
    PipelineDP's backend operations, in PipelineDP's order."""
    if isinstance(backend, pipeline_dp.LocalBackend):
        return pipeline_backend.ReiterableLazyIterable(_units_lazily(l0, unit_and_partition, col))
    if isinstance(backend, pipeline_dp.SparkRDDBackend):
        grouped = col.mapPartitions(functools.partial(_grouped_rows, unit_and_partition))
        chosen = grouped.reduceByKey(_joined).mapPartitions(functools.partial(_chosen, l0))
        return chosen.reduceByKey(operator.add)
    pairs = backend.map(col, unit_and_partition, "Extract (privacy_id, partition_key)")
    grouped = backend.group_by_key(pairs, "Group by privacy_id")
    keys = backend.flat_map(
        grouped,
        functools.partial(bounded_partitions, l0),
        "Sample cross-partition contributions",
    )
    return backend.count_per_element(keys, "Count privacy units per partition")


def _units_lazily(
    l0: int, unit_and_partition: Callable[[Any], tuple[Any, Any]], rows: Iterable[Any]
) -> Iterator[tuple[Any, int]]:
    """:func:`units_per_partition` of all *rows* at once, computed when first iterated."""
    yield from _chosen(l0, _grouped_rows(unit_and_partition, rows))


def _grouped_rows(
    unit_and_partition: Callable[[Any], tuple[Any, Any]], rows: Iterable[Any]
) -> Iterable[tuple[Any, list[Any]]]:
    return _grouped(map(unit_and_partition, rows))


def _chosen(l0: int, groups: Iterable[tuple[Any, list[Any]]]) -> Iterable[tuple[Any, int]]:
    """How many units chose each partition, of these units' groups (:func:`bounded_partitions`)."""
    counts: collections.Counter[Any] = collections.Counter()
    for group in groups:
        counts.update(bounded_partitions(l0, group))
    return counts.items()


def count_per_element(backend: Any, col: Any, stage_name: str) -> Any:
    """PipelineDP's ``count_per_element`` (element → how many times it occurs); on Spark each
    RDD partition is counted by a ``collections.Counter`` before the shuffle, where PipelineDP's
    backend combines the pairs (element, 1) one by one in Python."""
    if isinstance(backend, pipeline_dp.SparkRDDBackend):
        return col.mapPartitions(_counted).reduceByKey(operator.add)
    return backend.count_per_element(col, stage_name)


def group_by_key(backend: Any, col: Any, stage_name: str) -> Any:
    """PipelineDP's ``group_by_key`` ((key, value) → (key, values)); on Spark each RDD partition
    is grouped in one pass before the shuffle and the groups' lists are joined in place after
    it, where Spark's ``groupByKey`` groups through its external merger."""
    if isinstance(backend, pipeline_dp.SparkRDDBackend):
        return col.mapPartitions(_grouped).reduceByKey(_joined)
    return backend.group_by_key(col, stage_name)


def sum_per_key(backend: Any, col: Any, stage_name: str) -> Any:
    """PipelineDP's ``sum_per_key`` ((key, number) → (key, their sum)); on Spark each RDD
    partition is summed in one pass before the shuffle, where PipelineDP's backend adds the
    pairs one by one in Python."""
    if isinstance(backend, pipeline_dp.SparkRDDBackend):
        return col.mapPartitions(_summed).reduceByKey(operator.add)
    return backend.sum_per_key(col, stage_name)


def _counted(elements: Iterable[Any]) -> Iterable[tuple[Any, int]]:
    return collections.Counter(elements).items()


def _summed(pairs: Iterable[tuple[Any, Any]]) -> Iterable[tuple[Any, Any]]:
    sums: dict[Any, Any] = {}
    for key, value in pairs:
        sums[key] = sums.get(key, 0) + value
    return sums.items()


def _grouped(pairs: Iterable[tuple[Any, Any]]) -> Iterable[tuple[Any, list[Any]]]:
    groups: dict[Any, list[Any]] = {}
    for key, value in pairs:
        group = groups.get(key)
        if group is None:
            groups[key] = [value]
        else:
            group.append(value)
    return groups.items()


def _joined(a: list[Any], b: list[Any]) -> list[Any]:
    """Two groups of one key as one list: *a* extended (every list here is one of
    :func:`_grouped`'s or this function's, never the caller's)."""
    a.extend(b)
    return a


def batched(fn: Batch, elements: Iterable[Any]) -> Iterator[Any]:
    """What *fn* returns for consecutive batches of up to :data:`BATCH` *elements*."""
    for batch in chunks(elements):
        yield from fn(batch)


def chunks(elements: Iterable[Any]) -> Iterator[list[Any]]:
    """Consecutive lists of up to :data:`BATCH` *elements*."""
    rest = iter(elements)
    while batch := list(itertools.islice(rest, BATCH)):
        yield batch


def _alone(fn: Batch, element: Any) -> Iterable[Any]:
    return fn([element])


def bounded_partitions(l0: int, unit_partitions: tuple[Any, Iterable[Any]]) -> list[Any]:
    """At most *l0* of the distinct partitions one privacy unit contributes to, chosen as
    PipelineDP's ``select_partitions`` chooses them (uniformly, with its own sampler: contribution
    bounding, on which no privacy claim rests, since any choice of ℓ₀ partitions bounds the
    unit's contribution)."""
    return sampling_utils.choose_from_list_without_replacement(  # type: ignore[no-any-return]
        list(set(unit_partitions[1])), l0
    )


def bounded_contributions(
    l0: int, linf: int, unit_rows: tuple[Any, Iterable[tuple[Any, int]]]
) -> list[tuple[Any, tuple[int, int]]]:
    """(partition, (rows counted, 1)) for at most *l0* partitions of one privacy unit (chosen as
    :func:`bounded_partitions` chooses them), its rows in each counted up to *linf*: what
    PipelineDP's cross- and per-partition contribution bounding leaves of COUNT and
    PRIVACY_ID_COUNT (its per-partition sample of up to ℓ∞ rows counts min(rows, ℓ∞))."""
    chosen = sampling_utils.choose_from_list_without_replacement(list(unit_rows[1]), l0)
    return [(partition, (min(rows, linf), 1)) for partition, rows in chosen]


def add_pairs(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    return a[0] + b[0], a[1] + b[1]
