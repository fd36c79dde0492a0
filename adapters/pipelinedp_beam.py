"""dpplug specs through PipelineDP 0.3.1's Beam front end (``pipeline_dp.private_beam``).

``Count``, ``PrivacyIdCount`` and ``SelectPartitions`` are PipelineDP's transforms, run with
dpplug's engine (:mod:`dpplug.adapters.pipelinedp_frontends`), so ``CountParams(noise_kind=
sampler(...))``, ``PrivacyIdCountParams(noise_kind=sampler(...))`` and
``SelectPartitionsParams(partition_selection_strategy=partition_selection(...))`` work in them;
:class:`Release` runs :meth:`DPEngine.release <dpplug.adapters.pipelinedp.DPEngine.release>`
(histogram releasers and every central release) on a ``PrivatePCollection``. Apply them with
PipelineDP's own ``MakePrivate`` and ``PrivatePCollection``:

    private = pcol | private_beam.MakePrivate(accountant, privacy_id_extractor=...)
    counts = private | pipelinedp_beam.Count(pipeline_dp.CountParams(noise_kind=sampler(...), ...))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pipeline_dp import private_beam

from dpplug.adapters.pipelinedp import DPEngine, PluginSpec
from dpplug.adapters.pipelinedp_frontends import element_extractors, engine_bound
from dpplug.errors import BadParameter
from dpplug.kind import PipelineRole, check_role


class Count(private_beam.Count):
    """PipelineDP's ``Count`` on dpplug's engine: ``noise_kind`` may be a dpplug sampler."""

    expand = engine_bound(private_beam.Count.expand, DPEngine=DPEngine)


class PrivacyIdCount(private_beam.PrivacyIdCount):
    """PipelineDP's ``PrivacyIdCount`` on dpplug's engine: ``noise_kind`` may be a dpplug
    sampler."""

    expand = engine_bound(private_beam.PrivacyIdCount.expand, DPEngine=DPEngine)


class SelectPartitions(private_beam.SelectPartitions):
    """PipelineDP's ``SelectPartitions`` on dpplug's engine: ``partition_selection_strategy``
    may be a dpplug selector."""

    expand = engine_bound(private_beam.SelectPartitions.expand, DPEngine=DPEngine)


class Release(private_beam.PrivatePTransform):
    """A one-element PCollection with what the mechanism of a
    :func:`~dpplug.adapters.pipelinedp.central_release` spec releases from the labels
    *partition_extractor* reads from each element (one row per privacy unit is kept)."""

    _create_dp_engine = engine_bound(
        private_beam.PrivatePTransform._create_dp_engine, DPEngine=DPEngine
    )

    def __init__(
        self, spec: PluginSpec, partition_extractor: Callable[[Any], Any], label: str | None = None
    ) -> None:
        if not isinstance(spec, PluginSpec):
            raise BadParameter(
                f"Release needs dpplug.adapters.pipelinedp.central_release(name, ...), got {spec!r}"
            )
        check_role(spec.kind, PipelineRole.CENTRAL_RELEASE, "Release")
        super().__init__(return_anonymized=True, label=label)
        self._spec = spec
        self._partition_extractor = partition_extractor

    def expand(self, pcol: Any) -> Any:
        _, engine = self._create_dp_engine()
        return engine.release(pcol, self._spec, element_extractors(self._partition_extractor))
