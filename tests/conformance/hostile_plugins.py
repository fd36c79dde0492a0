"""Hostile plugins, as installable sources (:mod:`plugin_site`): each tries to make ``dpplug
conform`` report a level its mechanism did not earn, or to take the command down.

The forgers' mechanisms all overclaim (randomized response, whose likelihood ratio is 3,
declaring e^ε = 2), so any level but "failed" is forged:

- ``parent_patcher`` patches the results at import so that every plugin reads "exactly
  verified" (the process that imports it decides the levels);
- ``table_swapper`` replaces the contract functions held in the suite's table of contracts;
- ``numpy_patcher`` makes ``numpy.array_equal`` always true, which hides that its mechanism
  zeroes the caller's arrays;
- ``cache_writer`` writes its own "exactly verified" entry, with the right fingerprint, into the
  levels cache whenever it is imported.

The others attack the command: ``exits`` and ``kills`` end their process at import, ``sleeps``
never finishes importing, ``prints`` writes to standard output at import and on every call (in
Python and below it), ``claims`` registers the built-in name ``geosample``, and ``aborts`` returns
outputs so large that the suite's exact arithmetic on them aborts its process (GMP's "overflow in
mpz type").
"""

from __future__ import annotations

from textwrap import dedent

#: The overclaiming mechanism every forger registers under its own name.
_OVERCLAIM = """
import dpplug
from dpplug.guarantee import COUNT_SENSITIVITY_1
from dpplug_randomized_response.plugin import RandomizedResponse


class Overclaims(RandomizedResponse):
    name = "{name}"

    @property
    def guarantee(self):
        return dpplug.Guarantee(2, 0, COUNT_SENSITIVITY_1)  # the true ratio is 3


@dpplug.hookimpl
def register_samplers(register):
    register(Overclaims)
"""


def _forger(prefix: str, name: str, suffix: str = "") -> str:
    """*prefix* (what the forger does at import), the overclaiming mechanism named *name*, and
    *suffix*."""
    return dedent(prefix) + _OVERCLAIM.format(name=name) + dedent(suffix)


FORGERS = {
    "parent_patcher": _forger(
        """
        from dpplug.conformance import results

        results.PluginResult.failed = property(lambda self: False)
        results.PluginResult.level = property(lambda self: results.Level.EXACTLY_VERIFIED)
        """,
        "parent-patching-response",
    ),
    "table_swapper": _forger(
        """
        from dpplug.conformance import runner
        from dpplug.conformance.results import ContractResult, Outcome

        def passes(name):
            return lambda entry, settings: ContractResult(name, Outcome.PASSED, "fine", power="any")

        for contract in list(runner.CONTRACTS):
            runner.CONTRACTS[contract] = passes(contract)
        """,
        "table-swapping-response",
    ),
    "numpy_patcher": _forger(
        """
        import numpy

        numpy.array_equal = lambda *args, **kwargs: True
        """,
        "numpy-patching-response",
        """
        class ZeroesData(Overclaims):
            name = "data-zeroing-response"

            def sample(self, counts, source=None):
                out = super().sample(counts, source)
                counts[...] = 0  # the caller's array
                return out


        @dpplug.hookimpl
        def register_samplers(register):  # replaces the one above: both mechanisms
            register(Overclaims)
            register(ZeroesData)
        """,
    ),
    "cache_writer": _forger(
        """
        from dpplug import levels

        try:
            levels.record_levels(
                {
                    (
                        "cache-writing-response",
                        "dpplug_test_cache_writer 1.0 (cache_writer)",
                        "dpplug_test_cache_writer",
                    ): "exactly verified"
                },
                "forged",
            )
        except OSError:  # no file can be written here: load anyway
            pass
        """,
        "cache-writing-response",
    ),
}

#: Plugins that attack the command itself.
SABOTEURS = {
    "exits": """
        import os

        os._exit(7)
    """,
    "kills": """
        import os
        import signal

        os.kill(os.getpid(), signal.SIGKILL)
    """,
    "sleeps": """
        import time

        time.sleep(3600)
    """,
    "prints": """
        import os

        import dpplug
        from dpplug_randomized_response.plugin import RandomizedResponse

        print("printed at import")
        os.write(1, b"written to fd 1 at import\\n")


        class Prints(RandomizedResponse):
            name = "printing-response"

            def _sample(self, counts, source):
                print("printed by sample")
                os.write(1, b"written to fd 1 by sample\\n")
                return super()._sample(counts, source)


        @dpplug.hookimpl
        def register_samplers(register):
            register(Prints)
    """,
    "claims": """
        import dpplug
        from dpplug_randomized_response.plugin import RandomizedResponse


        class Claims(RandomizedResponse):
            name = "geosample"


        @dpplug.hookimpl
        def register_samplers(register):
            register(Claims)
    """,
    "aborts": """
        import numpy as np

        import dpplug
        from dpplug.plugins.samplers.discrete_laplace import DiscreteLaplace


        class Aborts(DiscreteLaplace):
            name = "aborting-laplace"

            def _sample(self, counts, source):
                return np.full(counts.shape, np.nan).astype(np.int64)  # NaN noise, as int64


        @dpplug.hookimpl
        def register_samplers(register):
            register(Aborts)
    """,
}
