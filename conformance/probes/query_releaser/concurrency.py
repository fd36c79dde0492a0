"""A session shared by threads: its k-answer bound is a privacy bound, so it must hold under any
interleaving of concurrent calls (an OpenDP Queryable, a web service, a thread pool), not only
for one caller. The check provokes interleavings (a switch interval of a microsecond, the
threads released together by a barrier) and counts the answers every thread got."""

from __future__ import annotations

import sys
import threading
from typing import Any

from dpplug.errors import NotSupported
from dpplug.kinds import QueryReleaser
from dpplug.randomness import SeededSource

#: Threads sharing each session, and sessions tried.
THREADS = 8
SESSIONS = 24
#: The interpreter's switch interval during the check (seconds): threads interleave often.
SWITCH_INTERVAL = 1e-6


def shared_session_problems(releaser: QueryReleaser, data: Any, query: Any, seed: int) -> list[str]:
    """Each of :data:`SESSIONS` sessions, shared by :data:`THREADS` threads that each ask
    *query* up to k + 1 times (stopping at the first refusal), answers at most k queries in all;
    an error other than the refusal is a problem too."""
    k = releaser.declaration().workload.max_queries
    saved = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    try:
        for trial in range(SESSIONS):
            answered, errors = _shared(releaser.start(data, SeededSource(seed + trial)), query, k)
            if errors:
                return [f"a session shared by {THREADS} threads raised {errors[0]}"]
            if answered > k:
                return [
                    f"a session shared by {THREADS} threads answered {answered} queries, more "
                    f"than its k = {k} (session {trial + 1} of {SESSIONS}): the k-answer bound "
                    "is a privacy bound and must hold under concurrent calls (hold a lock from "
                    "the check against k to the answer)"
                ]
    finally:
        sys.setswitchinterval(saved)
    return []


def _shared(session: Any, query: Any, k: int) -> tuple[int, list[str]]:
    """How many answers :data:`THREADS` threads got from *session*, and the unexpected errors."""
    barrier = threading.Barrier(THREADS)
    counts = [0] * THREADS
    errors: list[str] = []

    def ask(index: int) -> None:
        barrier.wait()
        for _ in range(k + 1):
            try:
                session.answer(query)
            except NotSupported:
                return
            except Exception as exc:  # a plugin's bug, reported as a finding
                errors.append(f"{type(exc).__name__}: {exc}")
                return
            counts[index] += 1

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(counts), errors
