"""A local Spark for PipelineDP's ``SparkRDDBackend``, started robustly.

Starting Spark launches a Java gateway; on a busy machine that launch sometimes fails with "Java
gateway process exited before sending its port number" and succeeds when tried again, and on a
machine without Java it fails with the same words. :func:`local_context` checks for Java first,
with a message that says what to install, and retries a failed launch a bounded number of times,
so scripts and CI do not depend on the machine's load.

Workers run the driver's interpreter, ``sys.executable``: pyspark 4 takes the workers' Python from
the ``PYSPARK_PYTHON`` environment variable alone (``spark.pyspark.python`` in the configuration
does not reach local mode), and without it runs ``python3`` from the PATH, which in a virtual
environment that is not activated is another Python, without dpplug or PipelineDP (or with other
versions of them). :func:`local_context` sets ``PYSPARK_PYTHON`` while the context starts (the
context keeps the interpreter it read) and sets the configuration too.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from dpplug.errors import NotSupported

#: Launch attempts before giving up, and the pause before the second one (doubling after).
ATTEMPTS = 4
FIRST_PAUSE_SECONDS = 2.0


def java_available() -> bool:
    """Whether a ``java`` executable is on the PATH or under JAVA_HOME."""
    home = os.environ.get("JAVA_HOME")
    return shutil.which("java") is not None or bool(
        home and os.access(os.path.join(home, "bin", "java"), os.X_OK)
    )


def local_context(
    app_name: str,
    cores: int = 2,
    attempts: int = ATTEMPTS,
    settings: Mapping[str, str] | None = None,
) -> Any:
    """A ``pyspark.SparkContext`` on ``local[cores]`` whose workers run this Python, with the
    web UI and console progress off and Spark's configuration *settings* on top (e.g.
    ``{"spark.driver.memory": "4g"}``); :class:`~dpplug.errors.NotSupported` if Java is missing
    or every launch attempt failed."""
    import pyspark

    if not java_available():
        raise NotSupported(
            "Spark needs Java (17 or later for pyspark 4): install a JDK and put `java` on the "
            "PATH or set JAVA_HOME"
        )
    conf = (
        pyspark.SparkConf()
        .setMaster(f"local[{cores}]")
        .setAppName(app_name)
        .set("spark.ui.enabled", "false")
        .set("spark.ui.showConsoleProgress", "false")
        .set("spark.pyspark.python", sys.executable)
        .set("spark.pyspark.driver.python", sys.executable)
    )
    for key, value in (settings or {}).items():
        conf = conf.set(key, value)
    pause, failures = FIRST_PAUSE_SECONDS, []
    for _ in range(attempts):
        try:
            with _workers_python(sys.executable):
                context = pyspark.SparkContext(conf=conf)
        except RuntimeError as exc:  # "Java gateway process exited before sending its port"
            failures.append(str(exc).splitlines()[0])
            time.sleep(pause)
            pause *= 2
            continue
        context.setLogLevel("ERROR")
        return context
    raise NotSupported(
        f"Spark did not start after {attempts} attempts ({failures[-1]}); check that the JDK "
        "works (`java -version`) and that the machine has memory to spare"
    )


@contextmanager
def _workers_python(executable: str) -> Iterator[None]:
    """``PYSPARK_PYTHON`` set to *executable* inside the block (where the context reads it), and
    as it was after it."""
    before = os.environ.get("PYSPARK_PYTHON")
    os.environ["PYSPARK_PYTHON"] = executable
    try:
        yield
    finally:
        if before is None:
            del os.environ["PYSPARK_PYTHON"]
        else:
            os.environ["PYSPARK_PYTHON"] = before
