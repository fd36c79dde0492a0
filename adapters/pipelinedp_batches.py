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

import functools
import itertools
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


def batched(fn: Batch, elements: Iterable[Any]) -> Iterator[Any]:
    """What *fn* returns for consecutive batches of up to :data:`BATCH` *elements*."""
    rest = iter(elements)
    while batch := list(itertools.islice(rest, BATCH)):
        yield from fn(batch)


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
