"""The parameters every built-in releaser shares, and the counting-query sampler it runs.

Balcer–Vadhan parameterise BasicHistogram, StabilityHistogram, KeepHeavy/PureSparseHistogram and
CompactHistogram by a counting-query algorithm M that is (ε/2, 0)-DP for one count (full version,
Def. 4.1). Here M is *any* registered :class:`~dpplug.kinds.CountingQuerySampler`, named by
``sampler``: the releaser creates it with ``n`` (the releaser's n) and ``epsilon`` (the releaser's ε
times a share, ½ for replace-one) when the sampler declares those parameters, γ from the paper's
tables when it declares ``gamma`` and ``sampler_options`` does not set it, and ``sampler_options``
for everything else. A sampler without an ``epsilon`` parameter (a fixed guarantee, such as
randomized response) is used as it is, and ``epsilon`` must then be left out.
"""

from __future__ import annotations

from typing import Any

from gmpy2 import mpq

from dpplug.errors import BadParameter
from dpplug.exact import display_log2
from dpplug.guarantee import Neighbouring, Relation
from dpplug.kinds import SAMPLER, CountingQuerySampler
from dpplug.param_types import OPTIONS, RATIONAL, TEXT, UNIVERSE
from dpplug.params import Param, count_bound_param, probability_param
from dpplug.plugin_registry import Registry

#: Balcer–Vadhan's relation: one row replaced by another, n public.
REPLACE_ONE = Neighbouring(Relation.REPLACE_ONE)
#: The sampler's share of ε when one replacement changes two counts.
HALF = mpq(1, 2)


#: The largest n of a releaser whose cost does not grow with n (the samplers' own limit).
MAX_N = 1 << 40


def releaser_params(
    default_sampler: str, max_n: int = MAX_N, beyond: str = ""
) -> tuple[Param, ...]:
    """universe, n (at most *max_n*; *beyond* says what to use past it), epsilon, sampler,
    sampler_options and beta, in that order."""
    return (
        Param(
            "universe",
            UNIVERSE,
            "The public label set X: range:LOW:HIGH, bytes:L, text:L or labels:[…].",
            example='"range:0:999"',
        ),
        count_bound_param(high=max_n, beyond=beyond),
        Param(
            "epsilon",
            RATIONAL,
            "Total ε for replacing one row; the sampler gets its share (leave out for samplers "
            "with a fixed guarantee).",
            low=0,
            low_open=True,
            high=64,
            optional=True,
            example="1",
        ),
        Param(
            "sampler",
            TEXT,
            "Name of any registered counting-query sampler (Balcer–Vadhan's M).",
            default=default_sampler,
        ),
        Param(
            "sampler_options",
            OPTIONS,
            "Further parameters of the sampler, e.g. gamma=1/1000.",
            default="",
        ),
        probability_param(
            "beta",
            "Failure probability of the accuracy attached to each release (and of the paper's "
            "β splits and γ choices).",
            high=mpq(1, 2),
            default=mpq(1, 20),
        ),
    )


def build_sampler(
    releaser: str,
    params: dict[str, Any],
    registry: Registry,
    epsilon_share: Any = HALF,
    gamma: tuple[Any, str] | None = None,
) -> CountingQuerySampler:
    """The sampler *params* name, built for this releaser (see the module docstring); *gamma*
    is the γ to give a sampler that takes one, with the formula it comes from (for messages)."""
    name = params["sampler"]
    entry = registry.get(name)
    if entry.kind is not SAMPLER:
        raise BadParameter(
            f"sampler={name!r} is a {entry.kind.name}, not a counting-query sampler; run "
            f"`dpplug list` and pick a sampler, e.g. sampler='fastsample'"
        )
    declared = {p.name for p in entry.cls.schema}
    options = dict(params["sampler_options"])
    for reserved in ("n", "epsilon"):
        if reserved in options:
            raise BadParameter(
                f"set {reserved} on {releaser} itself, not in sampler_options: the releaser "
                f"derives the sampler's {reserved} from its own"
            )
    given: dict[str, object] = {}
    if "n" in declared:
        given["n"] = params["n"]
    epsilon = params["epsilon"]
    if "epsilon" in declared:
        if epsilon is None:
            raise BadParameter(f"missing parameter epsilon for {releaser}: pass epsilon=…, e.g. 1")
        given["epsilon"] = epsilon * epsilon_share
    elif epsilon is not None:
        raise BadParameter(
            f"{name} has a fixed guarantee and no epsilon parameter; leave epsilon out of "
            f"{releaser}, or pick a sampler that takes one"
        )
    if "gamma" in declared and "gamma" not in options and gamma is not None:
        given["gamma"] = gamma[0]
    for param in entry.cls.schema:
        if param.name in ("n", "epsilon") and param.name in given:
            _check_derived(releaser, name, param, given[param.name], epsilon_share)
        elif param.name == "gamma" and "gamma" in given and gamma is not None:
            _check_gamma(releaser, name, param, gamma)
    sampler = entry.create(**given, **options)
    assert isinstance(sampler, CountingQuerySampler)
    low, high = sampler.count_bounds
    if low > 0 or high < params["n"]:
        raise BadParameter(
            f"{name} accepts counts in [{low}, {high}] but {releaser} with n = {params['n']} "
            f"needs [0, {params['n']}]; lower n or pick a sampler for larger counts"
        )
    return sampler


def require_bounded(releaser: str, sampler: CountingQuerySampler, n: int) -> int:
    """The sampler's randomness size d, for releasers that read its scaled CDF on [0, n] and
    need its outputs in [0, n] (Balcer–Vadhan's M : [n] × [d] → [n])."""
    if sampler.d is None or sampler.count_bounds != (0, n):
        raise BadParameter(
            f"{releaser} needs a sampler with outputs in [0, n] and a scaled CDF (a finite d), "
            f"as Balcer–Vadhan's M : [n]×[d]→[n]; {sampler.name} does not qualify — use "
            f"fastsample, geosample, fixedpoint-geometric or truncated-geometric"
        )
    if not sampler.guarantee.pure:
        raise BadParameter(f"{releaser} needs a pure-DP sampler; {sampler.name} is approximate")
    return sampler.d


def _check_gamma(releaser: str, sampler: str, param: Param, gamma: tuple[Any, str]) -> None:
    """The γ the releaser derives (from β and |X|, or δ) within the sampler's range, or a message
    naming what to change."""
    value, formula = gamma
    try:
        param.coerce(value)
    except BadParameter:
        shown = f"2^{display_log2(value):.1f}"
        raise BadParameter(
            f"{releaser} runs {sampler} with γ = {formula} ≈ {shown}, outside {sampler}'s range "
            f"{param.range_text()}; declare a smaller universe or a larger beta (or delta), set "
            f"gamma in sampler_options, or pick another sampler (e.g. "
            f"sampler='geosample')"
        ) from None


def _check_derived(
    releaser: str, sampler: str, param: Param, value: object, epsilon_share: Any
) -> None:
    """The sampler's *param* derived from the releaser's own, checked against the sampler's
    schema with a message in the releaser's terms: its parameter, and the bound it must meet."""
    try:
        param.coerce(value)
    except BadParameter:
        share = mpq(epsilon_share) if param.name == "epsilon" else mpq(1)
        derived = mpq(value)
        if param.low is not None and derived <= param.low:
            bound = f"{'>' if param.low_open else '≥'} {mpq(param.low) / share}"
        else:
            bound = f"{'<' if param.high_open else '≤'} {mpq(param.high) / share}"
        gives = f"{param.name}·{share}" if share != 1 else param.name
        shown = str(derived) if derived.denominator == 1 else f"{float(derived):.6g}"
        raise BadParameter(
            f"{releaser} runs {sampler} with {gives} = {shown}, outside {sampler}'s "
            f"range {param.range_text()}; give {releaser} {param.name} {bound}, or pick another "
            f"sampler (sampler=…)"
        ) from None
