"""The sampler kind: counting-query samplers (:mod:`.base`)."""

from dpplug.kinds.sampler.base import (
    SAMPLER,
    UNBOUNDED_COUNT,
    CountingQuerySampler,
    register_samplers,
)

__all__ = ["SAMPLER", "UNBOUNDED_COUNT", "CountingQuerySampler", "register_samplers"]
