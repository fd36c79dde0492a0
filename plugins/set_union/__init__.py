"""Built-in set-union selectors (Gopi et al. ICML 2020: weighted Gaussian, policy Laplace;
DP-SIPS, Swanberg, Desfontaines, Haney 2023; docs/mechanisms.md#set-union-selectors)."""

from dpplug.hookspecs import Register, hookimpl
from dpplug.plugins.set_union.policy_laplace import PolicyLaplace
from dpplug.plugins.set_union.weighted import DpSips, WeightedGaussian

SELECTORS = (WeightedGaussian, DpSips, PolicyLaplace)


@hookimpl
def register_set_union_selectors(register: Register) -> None:
    for mechanism in SELECTORS:
        register(mechanism)


__all__ = [
    "SELECTORS",
    "DpSips",
    "PolicyLaplace",
    "WeightedGaussian",
    "register_set_union_selectors",
]
