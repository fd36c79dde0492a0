"""The sampler probe (:mod:`.probe`)."""

from dpplug.conformance.probes.sampler.probe import SamplerProbe

__all__ = ["SamplerProbe"]
