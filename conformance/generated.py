"""Cases the suite derives from a plugin's schema, besides the ones its author declared.

An author's cases show what the author thought of; a flaw that only appears with ℓ₀ > 1, a
pre-threshold, bounded DP, another sampler or an ε the author never tried passes them. Two sets
of cases are derived from the schema, each covered whatever the run's seed:

- **Every value of every parameter**, one parameter moved on a declared case: the values its
  type offers (:meth:`~dpplug.param_types.ParamType.candidates`): both booleans, the smallest
  integers, a ladder of rationals within range (ε from 1/1000 to 64, and the range's bounds,
  which stand for rungs within a factor 5/4 of them) with one seeded log-uniform rational inside
  each gap of the ladder wider than a factor :attr:`~dpplug.param_types.RationalType.GAP` (so a
  flaw on a whole gap, such as 2 < ε < 8, is found), for text parameters (a releaser's
  ``sampler``) the name of every built-in mechanism and of every other mechanism of the
  plugin's own distribution.
- **Options pairwise**: the options (boolean and integer parameters a caller may leave out, such
  as a selector's ℓ₀, ``pre_threshold`` and ``replace_one``), each left out or set to its first
  other value, are set together on a declared case so that every two settings of two options
  appear in one case (a greedy covering array: ℓ₀ = 2 with ``pre_threshold`` = 2, each with and
  without bounded DP, …), so a flaw that needs two options together does not depend on the seed.
- **Options for another mechanism** (a releaser's ``sampler_options``) that name what the
  releaser derives for it, ε and n: the plugin must refuse them or honour them in its guarantee;
  and the **smallest universes**, of one and two labels. These cases are kept whatever the
  seed.

Each such case is tried on the declared cases in a seeded rotation, and the first the plugin
accepts that is small enough for the exact checks
(:meth:`~dpplug.conformance.probes.base.Probe.small`) is kept, built only when asked for. Every
case is kept for a probe marked ``exhaustive`` (samplers, selectors; at most
:data:`MAX_GENERATED`); releasers, whose release laws are costly to enumerate, keep a seeded
choice of :data:`MAX_GENERATED_OTHERS`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from itertools import combinations, zip_longest
from typing import Any, TypeVar

from dpplug.errors import DpplugError
from dpplug.param_types import BooleanType, IntegerType, OptionsType, TextType, UniverseType
from dpplug.params import Param
from dpplug.plugin_registry import Entry

#: The most generated cases per plugin whose probe is exhaustive (``Probe.exhaustive``: samplers,
#: selectors, cheap to check exactly): every group (the built-ins need fewer).
MAX_GENERATED = 48
#: The most generated cases per plugin of another probe (releasers, whose release laws are costly
#: to enumerate): a seeded choice of the groups.
MAX_GENERATED_OTHERS = 12
#: The universe of the size ladder's cases where the declared one is too small: 2^64 labels.
LADDER_UNIVERSE = "bytes:8"
#: An option left out of a case (its default, or absent for an optional one).
_ABSENT = "<absent>"

Case = dict[str, Any]
T = TypeVar("T")


def _values(param: Param, entry: Entry, rng: random.Random) -> list[object]:
    """Values of *param* worth trying, all inside its declared range; names of mechanisms only
    of trusted ones, the built-ins and the plugin's own, so no other plugin's flaw becomes this
    one's."""
    trusted = {"dpplug", entry.source.distribution}
    names = [
        other.name
        for other in entry.registry or ()
        if other.name != entry.name and other.source.distribution in trusted
    ]
    return param.candidates(names, rng)


def _normal(case: Mapping[str, Any], entry: Entry) -> Case:
    """*case* without the parameters set to their defaults: two cases that build the same
    mechanism compare equal."""
    return {
        p.name: case[p.name]
        for p in entry.cls.schema
        if p.name in case and (p.required or case[p.name] != p.default)
    }


def _options(entry: Entry, values: dict[str, list[object]]) -> dict[str, list[object]]:
    """The options for the pairwise cases, each with two values: left out (its default, or
    absent), and the first other value tried (ℓ₀ = 2, a pre-threshold of 2, bounded DP, the
    lowest public threshold); the others are each tried on their own."""
    return {
        p.name: [_ABSENT, *[v for v in values[p.name] if v != p.default][:1]]
        for p in entry.cls.schema
        if isinstance(p.type, BooleanType | IntegerType) and not p.required
    }


def pairwise_settings(options: dict[str, list[object]]) -> list[dict[str, object]]:
    """Settings of the options in which every two values of two options appear together, found
    greedily (each setting starts from a pair not yet covered and gives every other option the
    value covering most new pairs); :data:`_ABSENT` marks an option left out."""
    names = list(options)
    if len(names) < 2:
        return []
    uncovered = {
        ((a, x), (b, y)) for a, b in combinations(names, 2) for x in options[a] for y in options[b]
    }
    settings: list[dict[str, object]] = []
    while uncovered:
        first = min(uncovered, key=lambda pair: (names.index(pair[0][0]), names.index(pair[1][0])))
        setting = dict(first)
        for name in names:
            if name not in setting:
                setting[name] = max(
                    options[name],
                    key=lambda v: sum(
                        ((a, x), (name, v)) in uncovered or ((name, v), (a, x)) in uncovered
                        for a, x in setting.items()
                    ),
                )
        uncovered -= {((a, setting[a]), (b, setting[b])) for a, b in combinations(names, 2)}
        settings.append(setting)
    return settings


def _structural(case: Case, entry: Entry) -> bool:
    """Whether *case* passes options on to another mechanism or sets a universe from the
    type's candidates (the smallest ones): those cases are kept whatever the seed, as few as
    they are."""
    return any(
        isinstance(p.type, OptionsType | UniverseType)
        and p.name in case
        and case[p.name] in p.type.candidates(p, (), random.Random(0))  # rng unused by these
        for p in entry.cls.schema
    )


def candidate_groups(entry: Entry, seed: int) -> list[list[Case]]:
    """The cases to cover (see the module docstring), each as the declared cases it may be made
    from, in a seeded rotation."""
    declared = [dict(case) for case in entry.cls.conformance_cases]
    if not declared:
        return []
    rng = random.Random(f"{seed}:{entry.name}")  # chooses test points only

    def rotated(changes: dict[str, object]) -> list[Case]:
        start = rng.randrange(len(declared))
        return [
            {k: v for k, v in {**case, **changes}.items() if v is not _ABSENT}
            for case in declared[start:] + declared[:start]
        ]

    values = {p.name: _values(p, entry, rng) for p in entry.cls.schema}
    groups = [rotated(setting) for setting in pairwise_settings(_options(entry, values))]
    per_param = [[{name: v} for v in vs] for name, vs in values.items()]
    for changes in (c for row in zip_longest(*per_param) for c in row if c is not None):
        groups.append(rotated(changes))
    return groups


def ladder_changes(schema: Iterable[Param]) -> list[tuple[str, list[Case]]]:
    """For each integer parameter of *schema* and each value up its size ladder
    (:meth:`~dpplug.param_types.IntegerType.ladder`), ``name=value`` and the changes to a case
    that set it: the value alone, then with every universe as large as :data:`LADDER_UNIVERSE`
    (a bound n on rows may need more labels)."""
    params = list(schema)
    universes = {p.name: LADDER_UNIVERSE for p in params if isinstance(p.type, UniverseType)}
    return [
        (
            f"{p.name}={value}",
            [{p.name: value}, *([{p.name: value, **universes}] if universes else [])],
        )
        for p in params
        if isinstance(p.type, IntegerType)
        for value in p.type.ladder(p)
    ]


def ladder_groups(entry: Entry) -> list[list[Case]]:
    """The declared cases with each change of :func:`ladder_changes`: cases too large for the
    exact checks, for the checks whose cost does not grow with them (the budget)."""
    declared = [dict(case) for case in entry.cls.conformance_cases]
    return [
        [{**case, **change} for change in changes for case in declared]
        for _, changes in ladder_changes(entry.cls.schema)
    ]


def text_cases(entry: Entry, seed: int) -> list[Case]:
    """The first declared case with each text parameter (a releaser's ``sampler``) set to each
    other value its type offers (every trusted mechanism's name): a guarantee that holds only
    for the mechanisms the author had in mind is found whichever of them the seeded choice of
    generated cases keeps."""
    declared = [dict(case) for case in entry.cls.conformance_cases]
    if not declared:
        return []
    rng = random.Random(f"{seed}:{entry.name}")  # chooses test points only
    cases = []
    for p in entry.cls.schema:
        if not isinstance(p.type, TextType):
            continue
        for value in _values(p, entry, rng):
            if value != declared[0].get(p.name):
                cases.append({**declared[0], p.name: value})
                cases += [{**cases[-1], **options} for options in _options_for(entry, value)]
    return cases


def _options_for(entry: Entry, name: object) -> list[Case]:
    """For the mechanism *name* (a releaser's ``sampler``), the releaser's options parameter
    set to an example of each required parameter of that mechanism which the releaser does not
    have itself (it derives ε and n for it; a truncated geometric's δ comes from the options)."""
    other = next((e for e in entry.registry or () if e.name == name), None)
    own = {p.name for p in entry.cls.schema}
    if other is None:
        return []
    needed = {
        p.name: p.example
        for p in other.cls.schema
        if p.required and p.example is not None and p.name not in own
    }
    text = ",".join(f"{key}={example}" for key, example in needed.items())
    return [{p.name: text} for p in entry.cls.schema if isinstance(p.type, OptionsType) and text]


def generated_cases(
    entry: Entry, seed: int, build: Callable[[Case, Any], T | None], exhaustive: bool
) -> list[T]:
    """What *build* makes of one case per group of :func:`candidate_groups`: of a group's cases,
    the first the plugin accepts and *build* does not refuse (None: too large for the checks),
    each built only when asked for; a group with a case already kept or declared is covered;
    at most :data:`MAX_GENERATED` (:data:`MAX_GENERATED_OTHERS` unless *exhaustive*), a seeded
    choice of the groups if there are more."""
    kept = [_normal(case, entry) for case in entry.cls.conformance_cases]
    refused: list[Case] = []
    found: list[T] = []
    most = MAX_GENERATED if exhaustive else MAX_GENERATED_OTHERS
    groups = candidate_groups(entry, seed)
    if len(groups) > most:  # more than can be kept: a seeded choice, structural cases first
        random.Random(seed).shuffle(groups)
        groups.sort(key=lambda group: not _structural(group[0], entry))
    for group in groups:
        if len(found) == most:
            break
        for params in group:
            normal = _normal(params, entry)
            if normal in kept:
                break
            if normal in refused:
                continue
            try:
                made = build(params, entry.create(**params))
            except DpplugError:
                made = None
            if made is None:
                refused.append(normal)
                continue
            kept.append(normal)
            found.append(made)
            break
    return found
