"""The histogram-releaser probe (:mod:`.probe`)."""

from dpplug.conformance.probes.histogram_releaser.probe import ReleaserProbe

__all__ = ["ReleaserProbe"]
