"""Sparse multiplicative weights (Blum & Roth 2013, Def. 3.4, Alg. 1, Thm 3.5, Thm 3.8 with the
catalogue's sparse-vector wrapper): the IDC's potential argument checked step by step on
adversarial update sequences, the wrapper's constants, and the session's refusals and hygiene."""

from __future__ import annotations

import dataclasses
import itertools
import math
import pickle
import random
from fractions import Fraction
from typing import Any

import mpmath
import pytest
from gmpy2 import mpq

import dpplug
from dpplug.errors import BadParameter, NotSupported
from dpplug.kinds.query_releaser.queries import label_counts
from dpplug.plugins.queries.multiplicative_weights import SparseWeights
from dpplug.plugins.queries.sparse_mw import (
    SparseMultiplicativeWeightsSession,
    slots,
    update_bound,
)
from dpplug.randomness import SeededSource

#: A releaser whose noise is small against n, so that sessions update often.
LOUD = {
    "n": 10**9,
    "epsilon": 16,
    "delta": mpq(1, 1000),
    "max_queries": 300,
    "sparsity": 4,
    "grid": 4,
}


def zipf_counts(labels: int, n: int, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    weights = [1 / (i + 1) ** 1.1 for i in range(labels)]
    counts: dict[str, int] = {}
    for label in rng.choices([f"x{i}" for i in range(labels)], weights, k=n):
        counts[label] = counts.get(label, 0) + 1
    return counts


def potential(truth: dict[str, float], weights: dict[str, float], assigned: set[str]) -> float:
    """Ψ = Σ_{x assigned at the end} D̂[x]·ln(D̂[x]/𝒟[h(x)])."""
    return math.fsum(p * math.log(p / weights[x]) for x, p in truth.items() if x in assigned and p)


@pytest.mark.parametrize(("m", "alpha", "seed"), [(2, 0.2, 1), (4, 0.1, 2), (8, 0.15, 3)])
def test_the_potential_argument_holds_on_adversarial_update_sequences(
    m: int, alpha: float, seed: int
) -> None:
    """Each step the adversary picks, among many m-sparse queries (over labels in the data and
    outside it), the one the hypothesis answers worst; while its error is at least α it is used
    for an update with the exact answer (a database update sequence, Def. 3.1). Then (Thm 3.5,
    Claim 3.6, Lemma 3.7): Ψ₀ ≤ ln s, every update lowers Ψ by at least α²/4, Ψ ≥ −1/e, so at
    most 4(ln s + 1/e)/α² updates happen, and the structure never fails."""
    rng = random.Random(seed)
    n = 2000
    counts = zipf_counts(40, n, seed)
    truth = {x: c / n for x, c in counts.items()}
    labels = [f"x{i}" for i in range(60)]  # 20 of them never in the data
    pool = [{x: rng.choice([0.25, 0.5, 1.0]) for x in rng.sample(labels, m)} for _ in range(400)]
    s = slots(m, mpq(alpha))
    structure = SparseWeights(s, alpha / 2)
    history: list[dict[str, float]] = []
    updates = 0
    while True:
        history.append({x: structure.weight(x) for x in labels})

        def error(query: dict[str, float]) -> float:
            hypothesis = structure.evaluate(list(query), list(query.values()))
            return sum(q * truth.get(x, 0.0) for x, q in query.items()) - hypothesis

        worst = max(pool, key=lambda q: abs(error(q)))
        if abs(error(worst)) < alpha:
            break
        exact = sum(q * truth.get(x, 0.0) for x, q in worst.items())
        hypothesis = structure.evaluate(list(worst), list(worst.values()))
        structure.update(list(worst), list(worst.values()), increase=exact >= hypothesis)
        updates += 1
        assert updates <= 4 * (math.log(s) + 1 / math.e) / alpha**2
    assigned = set(structure._slot)
    psi = [potential(truth, weights, assigned) for weights in history]
    assert psi[0] <= math.log(s) + 1e-9
    assert all(value >= -1 / math.e - 1e-9 for value in psi)
    assert all(a - b >= alpha**2 / 4 - 1e-9 for a, b in itertools.pairwise(psi))
    assert updates >= 3  # the adversary did force updates
    assert structure.assigned <= m * updates <= s
    assert math.fsum(structure.weight(x) for x in assigned) + (s - structure.assigned) * (
        structure.weight("never assigned")
    ) == pytest.approx(1, abs=1e-9)


def test_slots_and_update_bound_are_thm_3_5s() -> None:
    for m, alpha in [(1, mpq(1)), (10, mpq(1, 10)), (1000, mpq(3, 1000))]:
        s = slots(m, alpha)
        x = 4 * m / float(alpha) ** 2
        with mpmath.workdps(50):
            assert s / (mpmath.log(s) + 1) >= x
            assert (s - 1) / (mpmath.log(s - 1) + 1) < x  # the smallest
            c = update_bound(s, alpha)
            bound = 4 * (mpmath.log(s) + 1) / mpmath.mpf(Fraction(alpha)) ** 2
            assert c == int(mpmath.floor(bound))
        assert m * c <= s  # never more labels than slots within c updates


def test_the_wrapper_constants() -> None:
    releaser = dpplug.create("sparse-multiplicative-weights", **LOUD)
    design = releaser.design
    c, w = design.updates, LOUD["grid"]
    assert design.slots == slots(LOUD["sparsity"], design.alpha)
    assert c == update_bound(design.slots, design.alpha)
    e0 = design.budget.epsilon0
    assert design.budget.steps == 2 * min(c, LOUD["max_queries"])  # r = min(c, k) rounds
    assert (design.threshold_scale, design.query_scale, design.answer_scale) == (
        2 * w / e0,
        4 * w / e0,
        w / e0,
    )
    c2 = (LOUD["epsilon"] / 2) / math.sqrt(8 * c * math.log(2 / float(LOUD["delta"])))
    assert float(e0) > c2  # at least the catalogue's ε₀
    a_rho, a_nu, a_ans = design.noise_bounds(releaser.beta)
    assert design.threshold == design.alpha_grid + design.margin + a_rho + a_nu
    assert a_ans < design.alpha_grid
    a = releaser.accuracy(releaser.beta)
    assert a.simultaneous.a == a.per_query.a == design.threshold - 1 + a_rho + a_nu
    assert releaser.accuracy(Fraction(1, 2)).simultaneous.a <= a.simultaneous.a
    scale = LOUD["n"] * w
    assert releaser.accuracy(Fraction(1, 10**30)).simultaneous.a == scale  # only the trivial bound
    guarantee = releaser.guarantee
    assert guarantee.delta == LOUD["delta"] and guarantee.epsilon <= LOUD["epsilon"] + 1e-12


def test_a_releaser_without_accuracy_to_offer_is_refused() -> None:
    with pytest.raises(BadParameter, match=r"no accuracy to offer.*raise n or ε"):
        dpplug.create(
            "sparse-multiplicative-weights",
            n=1000,
            epsilon=1,
            delta=1e-6,
            max_queries=100,
            sparsity=10,
        )


def adversarial_queries(rng: random.Random, m: int, k: int) -> list[dict[str, float]]:
    """Queries meant to force updates: the heaviest labels, alone and mixed with labels the
    data never has, and sets of fresh labels (whose true answer is 0)."""
    queries: list[dict[str, float]] = []
    for i in range(k):
        if i % 3 == 0:
            queries.append({f"x{rng.randrange(3)}": 1.0})
        elif i % 3 == 1:
            queries.append({f"x{j}": 1.0 for j in rng.sample(range(40), m)})
        else:
            queries.append({f"fresh{i}-{j}": 1.0 for j in range(m)})
    return queries


@pytest.mark.parametrize("seed", [1, 2])
def test_sessions_stay_within_their_update_bound_and_their_accuracy(seed: int) -> None:
    """A loud session under adversarial queries: it updates (so the test exercises the
    wrapper), never more than c times, never fails, never refuses, and every answer is within
    the accuracy declared at β = 1e-9 (the test's false-alarm rate)."""
    params = {**LOUD, "beta": Fraction(1, 10**9)}
    releaser = dpplug.create("sparse-multiplicative-weights", **params)
    counts = zipf_counts(40, 10**5, seed)
    data = {x: c * 10**4 for x, c in counts.items()}  # 10^9 rows, as counts
    session = releaser.start(data, SeededSource(seed))
    queries = adversarial_queries(random.Random(seed), LOUD["sparsity"], LOUD["max_queries"])
    answers = session.answers(queries)
    assert 1 <= session.updates <= session.max_updates
    a = releaser.accuracy(releaser.beta).simultaneous.a
    for query, answer in zip(queries, answers, strict=True):
        truth = Fraction(sum(data.get(x, 0) for x in query), LOUD["n"])
        assert abs(answer - truth) * LOUD["n"] * LOUD["grid"] <= a


def test_a_spent_update_budget_refuses_further_queries_without_drawing() -> None:
    releaser = dpplug.create("sparse-multiplicative-weights", **LOUD)
    design = dataclasses.replace(releaser.design, updates=2)
    counts = label_counts({"x0": 10**9}, releaser.n, None, releaser.name)
    source = SeededSource(4)
    session = SparseMultiplicativeWeightsSession(releaser.declaration(), design, counts, source)
    for _ in range(30):
        try:
            session.answer({"x0": 1})
        except NotSupported as refusal:
            assert "c = 2 updates" in str(refusal)
            break
    assert session.updates == 2
    before = source.draws
    with pytest.raises(NotSupported, match="start a new release"):
        session.answers([{"x0": 1}])
    assert source.draws == before


def test_sessions_keep_their_state_private() -> None:
    releaser = dpplug.create("sparse-multiplicative-weights", **LOUD)
    session = releaser.start({"secret-label": 12345}, SeededSource(5))
    public = {k: v for k, v in vars(session).items() if not k.startswith("_")}
    assert set(public) == {"declaration", "answered", "updates"}
    assert "secret-label" not in repr(session) and "12345" not in repr(session)
    with pytest.raises(NotSupported, match="cannot be pickled"):
        pickle.dumps(session)
    assert session.remaining == LOUD["max_queries"]
    session.answers([{"a": 1}] * 3)
    assert session.remaining == LOUD["max_queries"] - 3 and session.answered == 3


def test_a_session_refuses_past_k_and_bad_queries_before_drawing() -> None:
    releaser = dpplug.create("sparse-multiplicative-weights", **{**LOUD, "max_queries": 3})
    source = SeededSource(6)
    session = releaser.start({"a": 5}, source)
    bad: list[Any] = [{"a": 2}, {f"x{i}": 1 for i in range(5)}, ["a"], {1.5: 1}]
    for query in bad:
        before = source.draws
        with pytest.raises(dpplug.BadData):
            session.answer(query)
        assert source.draws == before
    session.answers([{"a": 1}, {"a": 1}])
    before = source.draws
    with pytest.raises(NotSupported, match="covers k = 3 queries"):
        session.answers([{"a": 1}, {"a": 1}])  # the batch as a whole exceeds k: nothing answered
    assert source.draws == before and session.answered == 2
    session.answer({"a": 1})
    with pytest.raises(NotSupported):
        session.answer({"a": 1})
