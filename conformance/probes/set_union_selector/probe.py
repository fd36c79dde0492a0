"""The probe of the set-union-selector kind: small datasets of units over the labels a, b, c in,
the released labels out, coded as a bitmask (a = 1, b = 2, c = 4).

**Laws.** A release's law is computed from the real call: its draws are served
(:class:`~dpplug.structures.ServedDraws`), so :func:`dpplug.program.served_steps` replays it
along every path of outcomes; uniform draws (the contribution bound) have exact laws, and the
weighted Gaussian's keep decisions (:class:`~dpplug.kinds.set_union_selector.thresholded_gaussian
.GaussianKeeps`) have irrational ones, enclosed at 256 bits (:meth:`GaussianKeeps.enclosed`): each
output gets an interval [lo, hi] holding its probability (:func:`enclosed_law`), and the width
Σ(hi − lo) is stated in the verdict.

**Exact privacy.** Declared Gaussian rounds must weight every unit with ℓ₂ norm ≤ 1 and declare
at least the δ their composition gives (recomputed from the rounds' certificates). Every pair of
small datasets one unit apart (added or removed, and replaced for replace-one guarantees), with
the added or replaced unit holding every non-empty subset of {a, b, c} (so every item count from
1 to 3, and the bound to Δ₀ < 3 is exercised), is compared in both directions:
Σ_S max(0, hi_P(S) − e^ε·lo_Q(S)) ≤ δ passes (an upper bound of the hockey-stick divergence),
Σ_S max(0, lo_P(S) − e^ε·hi_Q(S)) > δ fails.

**The code against its law.** An independent enumeration of the law the mechanism declares
(:mod:`.models`: every uniform choice of Δ₀ labels, then the declared rounds' weights or the
policy's descent one grid unit at a time, and the declared keep probabilities) must overlap the
law of the real call output by output.

Laws of the real call are cached by mechanism class and parameters (construction is
deterministic), so the contracts that ask for the same law compute it once.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from functools import partial
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq
from hypothesis import strategies as st

from dpplug.conformance.coverage import Status
from dpplug.conformance.privacy_check import PrivacyCheck
from dpplug.conformance.probes.base import (
    BETAS,
    EXACT_BETAS,
    Call,
    Check,
    Claim,
    DataSpace,
    ExactClaim,
    LawTest,
    Probe,
    strict_time_problems,
)
from dpplug.conformance.probes.set_union_selector.bounding import bounding_tests
from dpplug.conformance.probes.set_union_selector.distributed import (
    distributed_select,
    has_rounds,
)
from dpplug.conformance.probes.set_union_selector.models import Model, model_of
from dpplug.conformance.settings import Settings
from dpplug.errors import BadParameter, DpplugError, NotSupported
from dpplug.exact import Rat
from dpplug.guarantee import Relation
from dpplug.kinds.set_union_selector import SetUnionSelector, canonical_labels, unit_sets
from dpplug.kinds.set_union_selector.declared import GaussianRounds, compose_rounds
from dpplug.kinds.set_union_selector.keep_draws import Keeps
from dpplug.param_text import params_text
from dpplug.pmf import Pmf
from dpplug.program import Draw, recording, served_steps
from dpplug.randomness import RandomSource, SeededSource
from dpplug.surfaces import Dimension

Law = dict[int, tuple[Rat, Rat]]

LABELS = ("a", "b", "c")
#: Every non-empty subset of the labels: a unit of each item count 1 … 3.
SUBSETS = tuple(subset for size in (1, 2, 3) for subset in itertools.combinations(LABELS, size))
#: The datasets the statistical contracts use: a chain, each one unit more than the last.
CHAIN: tuple[dict[int, tuple[str, ...]], ...] = (
    {},
    {1: ("a", "b")},
    {1: ("a", "b"), 2: ("a",)},
    {1: ("a", "b"), 2: ("a",), 3: ("a", "b", "c")},
)
#: The datasets neighbours are built from (a unit added to, or replacing unit 1 of, each).
BASES: tuple[dict[int, tuple[str, ...]], ...] = (
    {},
    {1: ("a",)},
    {1: ("a", "b"), 2: ("b", "c")},
)
#: Units of the size check: many labels each held by the same number of units.
SIZE_LABELS = 2_000
#: Labels of the batch law test, each held by the same single-label units.
BATCH_LABELS = 20_000
#: The most paths one enclosed law may take.
MAX_PATHS = 50_000


def code(released: list[Any]) -> int:
    return sum(1 << LABELS.index(label) for label in released)


def enclosed_law(call: Callable[[RandomSource], list[Any]]) -> Law:
    """Output code → [lo, hi] ∋ its probability, from the real call's served draws."""
    step = served_steps(call)
    law: Law = {}
    paths = 0

    def explore(prefix: list[Any], lo: Rat, hi: Rat) -> None:
        nonlocal paths
        draw, output = step(prefix)
        if draw is None:
            paths += 1
            if paths > MAX_PATHS:
                raise NotSupported(f"the release has more than {MAX_PATHS} paths")
            found = law.get(code(output), (mpq(0), mpq(0)))
            law[code(output)] = (found[0] + lo, found[1] + hi)
            return
        for outcome, (p_lo, p_hi) in _outcomes(draw).items():
            if p_hi > 0:
                explore([*prefix, outcome], lo * p_lo, hi * p_hi)

    explore([], mpq(1), mpq(1))
    return law


def _outcomes(draw: Draw) -> dict[Any, tuple[Rat, Rat]]:
    if isinstance(draw, Keeps):
        return draw.enclosed()
    return {outcome: (mpq(p), mpq(p)) for outcome, p in draw.law().items()}


def width(law: Law) -> Rat:
    return sum((hi - lo for lo, hi in law.values()), mpq(0))


def divergence(p: Law, q: Law, exp_epsilon: Rat) -> tuple[Rat, Rat]:
    """(lower, upper) bounds on the hockey-stick divergence of P from Q at e^ε."""
    low = sum(
        (max(mpq(0), lo - exp_epsilon * q.get(s, (0, 0))[1]) for s, (lo, _) in p.items()), mpq(0)
    )
    high = sum(
        (max(mpq(0), hi - exp_epsilon * q.get(s, (0, 0))[0]) for s, (_, hi) in p.items()), mpq(0)
    )
    return low, high


class SetUnionProbe(Probe):
    """A set-union selector on small datasets over {a, b, c} (see the module docstring)."""

    call_surfaces = ("select",)
    law_surface = "select"

    @property
    def selector(self) -> SetUnionSelector:
        return cast(SetUnionSelector, self.mechanism)

    @functools.cached_property
    def model(self) -> Model:
        """The declared release, enumerated independently (:mod:`.models`)."""
        return model_of(self.selector)

    @property
    def inputs(self) -> tuple[int, ...]:
        return tuple(range(len(CHAIN)))

    @property
    def law_inputs(self) -> tuple[int, ...]:
        """The chain and a dataset whose law is balanced (:meth:`_balanced`): the chain's small
        datasets release little for cases of small ε, too little for the test's power check."""
        return (*self.inputs, len(CHAIN))

    @property
    def pairs(self) -> tuple[tuple[int, int], ...]:
        return tuple((i, i + 1) for i in range(len(CHAIN) - 1))

    def sample_size(self, settings: Settings) -> int:
        return settings.releases // 2

    def _dataset(self, value: int) -> dict[int, tuple[str, ...]]:
        return CHAIN[value] if value < len(CHAIN) else self._balanced()

    def _balanced(self) -> dict[int, tuple[str, ...]]:
        """Units of label a, as many as make it released about half the time, and one unit
        holding a, b and c (bounded when Δ₀ < 3)."""
        units = self._batch_units()
        return {**{u: ("a",) for u in range(units)}, units: ("a", "b", "c")}

    def draw(self, value: int, size: int, source: RandomSource) -> npt.NDArray[Any]:
        data = self._dataset(value)
        return np.array([code(self.selector.select(data, source)) for _ in range(size)])

    def _law(self, data: dict[int, tuple[str, ...]]) -> Law:
        return _cached_law(self.selector, tuple(sorted(data.items())))

    def law(self, value: int) -> Pmf:
        return self.tested_law(value)[0]

    def tested_law(self, value: int) -> tuple[Pmf, Any]:
        """A law inside the enclosure (lower bounds, the rest on the likeliest output) and the
        enclosure's width, which bounds its distance to the true law."""
        law = self._law(self._dataset(value))
        centre = max(law, key=lambda s: law[s][0])
        probs = {s: lo for s, (lo, _) in law.items() if s != centre}
        probs[centre] = 1 - sum(probs.values(), mpq(0))
        return Pmf(probs), width(law)

    def show_input(self, value: int) -> str:
        return str(self._dataset(value))

    def show_output(self, value: int) -> str:
        return str([label for i, label in enumerate(LABELS) if value >> i & 1])

    # Exact privacy and the code against its law.

    def _neighbours(self) -> list[tuple[dict[int, Any], dict[int, Any]]]:
        pairs = []
        for base in BASES:
            for subset in SUBSETS:
                pairs.append((base, {**base, 9: subset}))
                if self.guarantee.neighbouring.relation is Relation.REPLACE_ONE and base:
                    pairs.append((base, {**base, 1: subset}))
        return pairs

    def _rounds_problems(self) -> list[str]:
        """Declared Gaussian rounds: every unit's weight vector of ℓ₂ norm ≤ 1 (t·w_t² ≤ G²),
        and the declared δ at least the composition of the rounds at the declared e^ε
        (:func:`~dpplug.kinds.set_union_selector.declared.compose_rounds`)."""
        declared = self.selector.declared_release()
        if not isinstance(declared, GaussianRounds):
            return []
        for r, certificate in enumerate(declared.rounds, start=1):
            grid = certificate.grid
            for t, w in enumerate(certificate.weights, start=1):
                if t * w * w > grid * grid:
                    return [
                        f"round {r} gives each of a unit's {t} labels {w}/{grid}: a weight "
                        f"vector of ℓ₂ norm {float(w * t**0.5 / grid):.6g} > 1"
                    ]
        guarantee = self.guarantee
        units = 2 if guarantee.neighbouring.relation is Relation.REPLACE_ONE else 1
        composed = compose_rounds(declared.rounds, guarantee.exp_epsilon, units)
        if guarantee.delta < composed.delta:
            return [
                f"the declared guarantee {guarantee.describe()} is below the composition of its "
                f"{len(declared.rounds)} rounds (δ ≥ {float(composed.delta):.6g})"
            ]
        return []

    def exact_privacy(self, settings: Settings) -> PrivacyCheck:
        guarantee = self.guarantee
        problems = self._rounds_problems()
        if problems:
            return PrivacyCheck(tuple(problems), "")
        worst, widest = mpq(0), mpq(0)
        pairs = self._neighbours()
        for first, second in pairs:
            p, q = self._law(first), self._law(second)
            widest = max(widest, width(p), width(q))
            for a, b, shown in ((p, q, (first, second)), (q, p, (second, first))):
                low, high = divergence(a, b, guarantee.exp_epsilon)
                if low > guarantee.delta:
                    return PrivacyCheck(
                        (
                            f"{shown[0]} against {shown[1]}: hockey-stick divergence ≥ "
                            f"{float(low):.6g} at e^ε = {float(guarantee.exp_epsilon):.6g}, above "
                            f"δ = {float(guarantee.delta):.6g}",
                        ),
                        "",
                    )
                if high > guarantee.delta:
                    raise NotSupported(
                        f"{shown[0]} against {shown[1]}: the enclosure (width "
                        f"{float(width(a)):.2g}) "
                        "cannot decide the divergence against δ"
                    )
                worst = max(worst, high)
        return PrivacyCheck(
            (),
            f"divergence ≤ {float(worst):.4g} ≤ δ on {len(pairs)} pairs of datasets one unit "
            f"apart (units of 1–3 labels; enclosures of width ≤ {float(widest):.2g})",
        )

    def implementation_check(self, settings: Settings) -> PrivacyCheck:
        selector = self.selector
        problems = _option_problems(selector) or self._layout_problems()
        datasets = [*CHAIN, *(second for _, second in self._neighbours()[:8])]
        routes = [("select()", self._law)]
        if has_rounds(selector):
            routes.append(
                (
                    "the distributed route (bound, round_weight, round_keep: what Beam, Spark and "
                    "PipelineDP's local runs call)",
                    lambda data: enclosed_law(partial(distributed_select, selector, data)),
                )
            )
        for data, (route, law) in itertools.product(datasets, routes):
            if problems:
                break
            found = _mismatch(law(data), _coded(self.model.law(data)))
            if found is not None:
                s, r, d = found
                problems.append(
                    f"{route} on {data} releases {self.show_output(s)} with probability in "
                    f"[{float(r[0]):.6g}, {float(r[1]):.6g}], but the declared rounds give "
                    f"[{float(d[0]):.6g}, {float(d[1]):.6g}]"
                )
        summary = (
            f"select() enumerated through its served draws on {len(datasets)} datasets against "
            "the law of its declared release; options' meaning"
        )
        if len(routes) > 1:
            summary += "; the distributed route (bound, round_weight, round_keep) alike"
        return PrivacyCheck(tuple(problems[:1]), summary)

    def _layout_problems(self) -> list[str]:
        """A distributed run lays out ``pipeline_rounds`` of the complete parameters: as many
        rounds as the mechanism declares."""
        selector = self.selector
        declared = selector.declared_release()
        if not has_rounds(selector) or not isinstance(declared, GaussianRounds):
            return []
        laid_out = type(selector).pipeline_rounds(selector.params)
        if laid_out != len(declared.rounds):
            return [
                f"pipeline_rounds({params_text(selector.params)}) = {laid_out}: a distributed run "
                f"takes that many rounds, but the mechanism declares {len(declared.rounds)}"
            ]
        return []

    # Accuracy.

    def accuracy_claims(self, settings: Settings) -> list[Claim]:
        """Exact bounds: the label of threshold + 1 single-label units is dropped by the first
        round with probability at most 1 − lo(π) (later rounds only add releases). A β the
        mechanism refuses (BadParameter: its bound cannot reach it) is not claimed, nor one
        inside the enclosure [1 − hi, 1 − lo] of the drop probability, which it cannot decide."""
        claims: list[Claim] = []
        model = self.model
        for beta in EXACT_BETAS:
            try:
                kept = self.selector.accuracy(beta).threshold + 1
            except BadParameter:
                continue
            lo, hi = model.keep(model.shared_total(kept, 1))
            if 1 - hi <= beta < 1 - lo:  # the enclosure (width about 2^-256) cannot decide it
                continue
            claims.append(ExactClaim(f"Pr[a label of {kept} units dropped]", 1 - lo, beta))
        return claims

    def _units_needed_problems(self) -> list[str]:
        model, selector = self.model, self.selector
        for beta in BETAS:
            for items in range(1, selector.max_partitions + 1):
                try:
                    n = selector.units_needed(beta, items)
                except BadParameter:
                    _, hi = model.keep(model.shared_total(1 << 40, items))
                    if hi >= 1 - beta:
                        return [f"units_needed({beta}, {items}) refuses a β it can reach"]
                    continue
                lo, _ = model.keep(model.shared_total(n, items))
                if lo < 1 - beta:
                    return [
                        f"units_needed({beta}, {items}) = {n}, but {n} units keep the label with "
                        f"probability ≥ {float(lo):.6g} only"
                    ]
                _, hi = model.keep(model.shared_total(n - 2, items))
                if n > 2 and hi >= 1 - beta:
                    return [f"units_needed({beta}, {items}) = {n} is not tight: {n - 2} suffice"]
        return []

    # Bad input, calls and hygiene.

    def bad_data(self, source: SeededSource) -> list[tuple[str, Callable[[], object]]]:
        s = self.selector
        bad: list[object] = [5, "ab", {1: "ab"}, [(1,)], {1: [1.5]}, {None: ["a"]}, [(1, None)]]
        calls: list[tuple[str, Callable[[], object]]] = [
            (f"select({data!r})", partial(s.select, data, source)) for data in bad
        ]
        for beta, items in ((mpq(1, 20), 0), (mpq(1, 20), s.max_partitions + 1), (2, 1)):
            calls.append((f"units_needed({beta}, {items})", partial(s.units_needed, beta, items)))
        return calls

    def data_space(self) -> DataSpace:
        atom = st.one_of(st.integers(-3, 3), st.text(max_size=2), st.floats(), st.none())
        data = st.one_of(
            st.dictionaries(atom, st.lists(atom, max_size=3), max_size=3),
            st.lists(st.tuples(atom, atom), max_size=4),
            atom,
        )

        def valid(value: object) -> bool:
            try:
                unit_sets(value)
            except DpplugError:
                return False
            return True

        return DataSpace(data, valid, self.selector.select)

    def _datasets(self) -> dict[str, object]:
        """Small datasets, and one whose first units hold the labels out of canonical order, each
        label by twice as many units as release it half the time (so its release order shows)."""
        many = 2 * self._batch_units()
        backwards = {u: ["c"] for u in range(many)} | {many + u: ["b", "a"] for u in range(many)}
        return {
            "empty": {},
            "mapping": {1: ["a", "b"], 2: ["a"], "x": ["c", "a", "b"]},
            "pairs": [(1, "a"), (1, "b"), (2, "a"), ("x", "c")],
            "labels first held out of order": backwards,
        }

    def calls(self, seed: int) -> list[Call]:
        return [
            Call(f"select({name} data)", partial(self.selector.select, data), (data,))
            for name, data in self._datasets().items()
        ]

    def large_calls(self, seed: int) -> list[Call]:
        data = _large_data(seed, 2)
        return [Call(f"select({len(data)} units)", partial(self.selector.select, data), (data,))]

    def hygiene_problems(self, strict: bool, seed: int) -> list[str]:
        problems: list[str] = []
        draws: dict[str, int] = {}
        for name, data in self._datasets().items():
            union = {label for _, labels in unit_sets(data) for label in labels}
            source = SeededSource(seed)
            out = self.selector.select(data, source)
            draws[name] = source.draws
            if type(out) is not list or not set(out) <= union:
                problems.append(f"{name}: released {out!r}, not a list of the data's labels")
            elif out != canonical_labels(out):
                problems.append(f"{name}: released {out!r}, not in canonical order")
            if union and source.draws == 0:
                problems.append(f"{name}: drew nothing from the RandomSource")
            if out != self.selector.select(data, SeededSource(seed)):
                problems.append(f"{name}: the same seed gave another release")
        return problems + strict_time_problems(strict, draws)

    # Along the other cells of the surface × dimension matrix.

    def checks(self, settings: Settings) -> list[Check]:
        return [
            Check(
                (("select", Dimension.FORMS),),
                "hygiene",
                Status.CHECKED,
                "the same data as mappings of lists, sets and tuples, pairs and generators",
                lambda s: self._form_problems(s.seed),
            ),
            Check(
                (("select", Dimension.WHOLE),),
                "hygiene",
                Status.CHECKED,
                "the release is exactly a list of the data's labels, a fresh one per call",
                lambda s: self._whole_problems(s.seed),
            ),
            Check(
                (("select", Dimension.SIZE),),
                "exact-privacy",
                Status.EXACT,
                f"a call of {SIZE_LABELS} labels and {4 * SIZE_LABELS} units of every item count "
                "up to 9 and past each power of two up to Δ₀, also with Δ₀ and the other integer "
                "parameters up their size ladder: its first served keep draw asks exactly "
                "T − (weighted total) for every label",
                lambda s: self._size_problems(s.seed),
            ),
            Check(
                (("units_needed", Dimension.NUMBERS),),
                "accuracy",
                Status.EXACT,
                "units_needed(β, t) against enclosed keep probabilities, every t ≤ Δ₀",
                lambda s: self._units_needed_problems(),
            ),
        ]

    def law_tests(self, settings: Settings) -> list[LawTest]:
        """The labels of one large call (each held by the same units) released independently,
        each with the declared probability of being released in some round; the bound to Δ₀ of
        large units (:mod:`.bounding`)."""
        units = self._batch_units()

        def sample(seed: int) -> npt.NDArray[np.int64]:
            sets: dict[int, list[str]] = {}
            unit = 0
            for i in range(BATCH_LABELS):
                for _ in range(units):
                    sets[unit] = [f"x{i}"]
                    unit += 1
            released = set(self.selector.select(sets, SeededSource(seed + 41)))
            return np.array([int(f"x{i}" in released) for i in range(BATCH_LABELS)])

        def law() -> tuple[Pmf, Any]:
            missed_lo, missed_hi = self.model.missed(units)
            return Pmf({0: missed_hi, 1: 1 - missed_hi}), missed_hi - missed_lo

        return [
            LawTest(
                "select",
                (Dimension.BATCH, Dimension.LAW),
                f"{self.where}: {BATCH_LABELS} labels of {units} single-label units in one call",
                sample,
                law,
            ),
            *bounding_tests(self.selector, self.where, settings.samples),
        ]

    def _batch_units(self) -> int:
        """Single-label units per label so that the label is released with probability nearest
        ½ (over every round)."""
        model = self.model
        units = 1
        while model.missed(units + 1)[1] > mpq(1, 2) and units < 1 << 20:
            units += 1
        above = abs(model.missed(units + 1)[1] - mpq(1, 2))
        return units + 1 if above < abs(model.missed(units)[1] - mpq(1, 2)) else units

    def _form_problems(self, seed: int) -> list[str]:
        data = {1: ["a", "b"], 2: ["a"], 3: ["c", "a", "b"]}
        expected = self.selector.select(data, SeededSource(seed))
        pairs = [(u, label) for u, labels in data.items() for label in labels]
        forms: dict[str, object] = {
            "sets": {u: set(labels) for u, labels in data.items()},
            "tuples": {u: tuple(labels) for u, labels in data.items()},
            "pairs": pairs,
            "reversed pairs": pairs[::-1],
            "a generator of pairs": (p for p in pairs),
            "numpy units": {np.int64(u): labels for u, labels in data.items()},
            "duplicated labels": {u: [*labels, *labels] for u, labels in data.items()},
            "duplicated pairs": [*pairs, *pairs],
        }
        for name, given in forms.items():
            if self.selector.select(given, SeededSource(seed)) != expected:
                return [f"the data as {name} gave another release from the same seed"]
        # Pairs listed label by label, so a unit's pairs are apart, and each pair listed twice
        # (a unit holds a label once however often it is listed): the law, exactly.
        apart = sorted(pairs, key=lambda pair: (pair[1], pair[0]))
        law = self._law({u: tuple(labels) for u, labels in data.items()})
        for how, listing, why in (
            ("listed label by label", apart, "a unit's pairs need not be adjacent"),
            (
                "each listed twice",
                [*apart, *pairs[::-1]],
                "a unit holds a label once, however often it is listed",
            ),
        ):
            found = _mismatch(enclosed_law(partial(self.selector.select, listing)), law)
            if found is not None:
                s, r, d = found
                return [
                    f"the data as pairs {how} ({listing}) releases {self.show_output(s)} with "
                    f"probability in [{float(r[0]):.6g}, {float(r[1]):.6g}], but as a mapping "
                    f"in [{float(d[0]):.6g}, {float(d[1]):.6g}]: {why}"
                ]
        # Units and labels renamed, in the same canonical order, to integers equal mod 2^32.
        alike = {label: 1 + (i << 32) for i, label in enumerate(LABELS)}
        renamed = {1 + (u << 32): [alike[x] for x in labels] for u, labels in data.items()}
        if self.selector.select(renamed, SeededSource(seed)) != [alike[x] for x in expected]:
            return [
                f"the data with its units and labels renamed {alike} (distinct integers equal "
                "modulo 2^32, in the same order) gave another release from the same seed"
            ]
        return []

    def _whole_problems(self, seed: int) -> list[str]:
        data = {1: ["a", "b"], 2: ["a"]}
        first = self.selector.select(data, SeededSource(seed))
        second = self.selector.select(data, SeededSource(seed))
        if type(first) is not list:
            return [f"select() returned a {type(first).__name__}, not a list"]
        if first is second:
            return ["select() returned the same list object twice"]
        return []

    def _size_problems(self, seed: int) -> list[str]:
        """:meth:`_first_draw_problems` on this case and on it with each integer parameter up
        its size ladder (Δ₀ past 8, 64 and 1024, to the schema's top)."""
        problems = self._first_draw_problems(seed)
        for where, probe in self.ladder():
            if problems:
                break
            found = cast(SetUnionProbe, probe)._first_draw_problems(seed)
            problems = [f"{where}: {problem}" for problem in found]
        return problems

    def _first_draw_problems(self, seed: int) -> list[str]:
        """The first round's keep draw against the declared model's, on :func:`_large_data` and
        on it with every unit cut to its first 1, 2 and Δ₀ − 1 labels (where that is fewer than
        Δ₀): what a unit gives its labels must not depend on the other units (the largest unit
        present, say)."""
        most = self.selector.max_partitions
        full = _large_data(seed, most)
        if any(len(labels) > most for _, labels in unit_sets(full)):
            raise NotSupported("the size check's units hold at most Δ₀ labels")
        cuts = sorted({1, 2, most - 1} & set(range(1, most)))
        for cut in (None, *cuts):
            data = full if cut is None else {u: labels[:cut] for u, labels in full.items()}
            sets = unit_sets(data)
            with recording() as transcript:
                self.selector.select(data, SeededSource(seed))
            keeps = [draw for draw, _ in transcript if isinstance(draw, Keeps)]
            shown = "" if cut is None else f" (every unit cut to at most {cut} labels)"
            if not keeps:
                return [f"the release made no served keep draw{shown}"]
            tail, thresholds = self.model.first_draw([labels for _, labels in sets])
            if keeps[0].tail != tail or keeps[0].thresholds != thresholds:
                return [
                    f"the first round's keep draw does not ask its declared noise and "
                    f"thresholds{shown}"
                ]
        return []


def _large_data(seed: int, most: int) -> dict[int, list[str]]:
    """Units of one and two labels over SIZE_LABELS labels, and a few of each item count where a
    table keyed to it may end (1 … 9, 2^k and 2^k + 1) up to Δ₀ = *most*; each unit's labels
    distinct."""
    rng = np.random.default_rng(seed)  # builds test inputs only
    counts = sorted({*range(1, 10), *(c for k in range(4, 11) for c in (1 << k, (1 << k) + 1))})
    large = [c for c in counts if c <= most] + [most]
    units = 4 * SIZE_LABELS
    sizes = [
        large[u % len(large)] if u < 4 * len(large) else 1 + u % min(2, most) for u in range(units)
    ]

    def labels(size: int) -> Any:
        if size <= 2:
            return rng.integers(0, SIZE_LABELS, size=size)
        return rng.choice(SIZE_LABELS, size=size, replace=False)

    return {u: [f"x{int(i):05d}" for i in labels(size)] for u, size in enumerate(sizes)}


#: Laws of real calls by (class, parameters, data); cleared when it reaches :data:`MAX_LAWS`.
_LAWS: dict[tuple[type, Any, Any], Law] = {}
MAX_LAWS = 4096


def _cached_law(selector: SetUnionSelector, data: tuple[tuple[int, tuple[str, ...]], ...]) -> Law:
    """The law of the real call, cached by class and parameters (module docstring)."""
    params = tuple(sorted(selector.params.items()))
    try:
        key = (type(selector), params, data)
        found = _LAWS.get(key)
    except TypeError:  # unhashable parameters: not cached
        return enclosed_law(partial(_select_on, selector, dict(data)))
    if found is None:
        if len(_LAWS) >= MAX_LAWS:
            _LAWS.clear()
        found = _LAWS[key] = enclosed_law(partial(_select_on, selector, dict(data)))
    return found


def _select_on(selector: SetUnionSelector, data: dict[int, Any], source: RandomSource) -> Any:
    return selector.select(data, source)


def _mismatch(real: Law, declared: Law) -> tuple[int, tuple[Rat, Rat], tuple[Rat, Rat]] | None:
    """An output whose enclosures under *real* and *declared* do not overlap, with both."""
    for s in real.keys() | declared.keys():
        r, d = real.get(s, (mpq(0), mpq(0))), declared.get(s, (mpq(0), mpq(0)))
        if r[0] > d[1] or d[0] > r[1]:
            return s, r, d
    return None


def _coded(law: dict[tuple[str, ...], tuple[Rat, Rat]]) -> Law:
    return {code(list(output)): bounds for output, bounds in law.items()}


def _option_problems(selector: SetUnionSelector) -> list[str]:
    declared = selector.guarantee.neighbouring
    options = selector.params
    problems = []
    if declared.max_partitions != options.get("max_partitions_contributed"):
        problems.append(
            f"max_partitions_contributed={options.get('max_partitions_contributed')}, but the "
            f"guarantee is stated for ℓ₀ = {declared.max_partitions}"
        )
    wanted = Relation.REPLACE_ONE if options.get("replace_one") else Relation.ADD_REMOVE
    if declared.relation is not wanted:
        problems.append(
            f"replace_one={options.get('replace_one')}, but the guarantee is for "
            f"{declared.relation.value}"
        )
    return problems
