"""dpplug mechanisms inside a PipelineDP pipeline on Spark: private page-visit statistics.

A synthetic log of visits (``--visits`` visits by ``--users`` users over ``--pages`` pages, page
popularity Zipf-distributed, each visit by a uniformly chosen user) is aggregated per page with
PipelineDP 0.3.1 on Spark ``local[2]``: COUNT (visits) and PRIVACY_ID_COUNT (visitors), each user
bounded to 5 pages and 2 visits per page. Which pages are released is decided by dpplug's
``optimal-partition-selection`` (with a pre-threshold of 5 visitors), and the counts get dpplug's
exact ``discrete-laplace`` noise (integers) instead of PipelineDP's floating-point Laplace. The
script prints the most visited released pages (true values beside them, for comparison only: they
are not part of any release) and PipelineDP's explain report, which names the plugins.

Run from the repository root (Java 17 and ``pip install -e .[pipelinedp]``; about 30 s)::

    python examples/pipelinedp_spark.py [--visits 100000] [--users 20000] [--pages 500]
"""

from __future__ import annotations

import argparse
import operator
import time
from collections import Counter

import numpy as np
import pipeline_dp

from dpplug.adapters.pipelinedp import DPEngine, partition_selection, sampler
from dpplug.adapters.spark import local_context

EPSILON, DELTA = 1.0, 1e-6
MAX_PAGES_PER_USER, MAX_VISITS_PER_PAGE = 5, 2
PRE_THRESHOLD = 5
ZIPF_EXPONENT = 1.1


def visits(n_visits: int, n_users: int, n_pages: int, seed: int) -> list[tuple[int, str]]:
    """(user, page) rows: the page of rank k with probability ∝ k^-1.1, the user uniformly.

    The seed only makes the synthetic data; the mechanisms draw from the OS CSPRNG.
    """
    rng = np.random.default_rng(seed)
    weights = np.arange(1, n_pages + 1, dtype=float) ** -ZIPF_EXPONENT
    pages = rng.choice(n_pages, size=n_visits, p=weights / weights.sum())
    users = rng.integers(n_users, size=n_visits)
    return [(int(u), f"/page/{p:03d}") for u, p in zip(users, pages, strict=True)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--visits", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=20_000)
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--seed", type=int, default=2024, help="seed of the synthetic data only")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    rows = visits(args.visits, args.users, args.pages, args.seed)
    true_visits = Counter(page for _, page in rows)
    true_visitors = Counter(page for _, page in set(rows))

    context = local_context("dpplug-pipelinedp-example")
    try:
        accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=EPSILON, total_delta=DELTA)
        engine = DPEngine(
            accountant,
            pipeline_dp.SparkRDDBackend(context),
            count_noise=sampler("discrete-laplace"),
        )
        params = pipeline_dp.AggregateParams(
            metrics=[pipeline_dp.Metrics.COUNT, pipeline_dp.Metrics.PRIVACY_ID_COUNT],
            max_partitions_contributed=MAX_PAGES_PER_USER,
            max_contributions_per_partition=MAX_VISITS_PER_PAGE,
            partition_selection_strategy=partition_selection("optimal-partition-selection"),
            pre_threshold=PRE_THRESHOLD,
            output_noise_stddev=True,
        )
        extractors = pipeline_dp.DataExtractors(
            privacy_id_extractor=operator.itemgetter(0),
            partition_extractor=operator.itemgetter(1),
            value_extractor=lambda row: 1,
        )
        result = engine.aggregate(context.parallelize(rows, 4), params, extractors)
        accountant.compute_budgets()  # before Spark runs anything
        released = result.collect()
    finally:
        context.stop()
    elapsed = time.perf_counter() - start

    released.sort(key=lambda kv: -kv[1].privacy_id_count)
    print(
        f"{args.visits} visits by {args.users} users over {args.pages} pages "
        f"({len(true_visits)} pages visited); released {len(released)} pages "
        f"with (ε, δ) = ({EPSILON}, {DELTA}) in {elapsed:.1f} s\n"
    )
    if released:
        first = released[0][1]
        print(
            f"noise std: visits {first.count_noise_stddev:.2f}, "
            f"visitors {first.privacy_id_count_noise_stddev:.2f} (exact, from the sampler's law)\n"
        )
    print(f"{'page':<10} {'visitors':>9} {'(true)':>7} {'visits':>8} {'(true)':>7}")
    for page, m in released[: args.top]:
        print(
            f"{page:<10} {m.privacy_id_count:>9} {true_visitors[page]:>7} "
            f"{m.count:>8} {true_visits[page]:>7}"
        )
    print(
        "\n(true values are shown for comparison only; the visits are bounded to "
        f"{MAX_VISITS_PER_PAGE} per user and page and {MAX_PAGES_PER_USER} pages per user)\n"
    )
    print("\n".join(engine.explain_computations_report()))


if __name__ == "__main__":
    main()
