"""``dpplug.adapters.spark.local_context`` starts Spark workers on the driver's interpreter.

pyspark 4 takes the workers' Python from ``PYSPARK_PYTHON`` alone and otherwise runs ``python3``
from the PATH: in a virtual environment that is not activated (its Python called by path, as
CI and scripts do) that is another Python, and every ``PrivateRDD`` job failed with
``ModuleNotFoundError``. The test runs a fresh interpreter exactly so: this environment's Python
by path, with a PATH that does not contain it and no ``VIRTUAL_ENV`` or ``PYSPARK_PYTHON``; the
caller's Spark settings reach the context.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pipeline_dp")

from support.fresh_interpreter import REPO

SCRIPT = textwrap.dedent(
    """
    import json, operator, os, sys
    import pipeline_dp
    from dpplug.adapters import pipelinedp_spark
    from dpplug.adapters.pipelinedp import sampler
    from dpplug.adapters.spark import local_context

    context = local_context("dpplug-spark-interpreter", settings={"spark.task.maxFailures": "2"})
    setting = context.getConf().get("spark.task.maxFailures")
    rows = [(f"u{i}", f"p{i % 2}") for i in range(200)]
    rdd = context.parallelize(rows, 2)
    workers = sorted(set(rdd.map(lambda _: __import__("sys").executable).collect()))
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=4, total_delta=1e-6)
    private = pipelinedp_spark.make_private(rdd, accountant, operator.itemgetter(0))
    counts = private.count(pipeline_dp.CountParams(
        noise_kind=sampler("discrete-laplace"), max_partitions_contributed=1,
        max_contributions_per_partition=1, partition_extractor=lambda row: row[1]))
    accountant.compute_budgets()
    released = dict(counts.collect())
    context.stop()
    print(json.dumps({"driver": sys.executable, "workers": workers, "released": released,
                      "env": os.environ.get("PYSPARK_PYTHON"), "setting": setting}))
    """
)


def test_workers_run_the_drivers_interpreter_from_a_venv_that_is_not_activated() -> None:
    interpreter_dir = str(Path(sys.executable).parent)
    path = os.pathsep.join(
        entry
        for entry in os.environ.get("PATH", "").split(os.pathsep)
        if entry and Path(entry).resolve() != Path(interpreter_dir).resolve()
    )
    # The premise: the PATH's python3, if any, is not this interpreter.
    found = shutil.which("python3", path=path)
    assert found is None or Path(found).parent.resolve() != Path(interpreter_dir).resolve()
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("VIRTUAL_ENV", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")
    }
    env["PATH"] = path
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["workers"] == [out["driver"]] == [sys.executable]
    assert sorted(out["released"]) == ["p0", "p1"]
    assert all(abs(count - 100) <= 30 for count in out["released"].values())  # ε = 2 per count
    assert out["env"] is None  # PYSPARK_PYTHON is set only while the context starts
    assert out["setting"] == "2"  # the caller's settings reach Spark
