"""Where the tasks of a long command run: in this process, on a local process pool, or on a
Dask cluster (a `concurrent.futures.Executor` each; the work does not care which)."""

from __future__ import annotations

import logging
import multiprocessing
import os
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable

from ..core.errors import BgbotError

__all__ = ["Executing", "executor_for"]

DASK_HELP = ("run on Dask: 'local' starts a LocalCluster on this machine (--concurrency "
             "workers, default 2), tcp://HOST:PORT joins a running scheduler (needs "
             "bgbot[cluster])")


@dataclass
class Executing:
    """An executor, how many tasks to keep in flight on it, and how to let it go."""

    executor: Executor
    window: int
    release: Callable[[], None]

    def __enter__(self) -> Executing:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def executor_for(concurrency: int, dask: str | None = None) -> Executing:
    """The executor of ``--concurrency N`` (1: this process; N: a local process pool) or of
    ``--dask ADDRESS|local``."""
    if concurrency < 1:
        raise BgbotError(f"--concurrency must be at least 1, got {concurrency}")
    if dask:
        return _dask(dask, concurrency)
    if concurrency == 1:
        from ..rollout.runner import InlineExecutor

        return Executing(InlineExecutor(), 1, lambda: None)
    pool = ProcessPoolExecutor(concurrency, mp_context=multiprocessing.get_context("forkserver"))
    return Executing(pool, 2 * concurrency,
                     lambda: pool.shutdown(wait=True, cancel_futures=True))


def _quiet_dask() -> None:
    """Dask's distributed logs at INFO by default: every worker's start and stop and, when a
    cluster closes while a worker still talks, that closed connection with its traceback, all
    on the terminal of a command that went well. Keep its warnings and errors only, here and
    in the worker processes (which read the environment), unless the user chose a level
    (DASK_LOGGING__DISTRIBUTED=info shows everything again)."""
    if "DASK_LOGGING__DISTRIBUTED" in os.environ:
        return
    os.environ["DASK_LOGGING__DISTRIBUTED"] = "warning"
    logging.getLogger("distributed").setLevel(logging.WARNING)


def _dask(address: str, concurrency: int) -> Executing:
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise BgbotError("--dask needs Dask: pip install 'bgbot[cluster]'") from None
    _quiet_dask()
    cluster: Any = None
    if address == "local":
        workers = concurrency if concurrency > 1 else 2
        cluster = LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
        client: Any = Client(cluster)  # type: ignore[no-untyped-call]
    elif "://" in address:
        try:
            client = Client(address, timeout=30)  # type: ignore[no-untyped-call]
        except OSError as exc:
            raise BgbotError(f"--dask {address}: cannot reach the scheduler ({exc})") from None
    else:
        raise BgbotError(f"--dask {address!r}: give 'local' or a scheduler address such as "
                         "tcp://HOST:8786")
    threads = sum(client.nthreads().values()) or 1

    def release() -> None:
        client.close()
        if cluster is not None:
            cluster.close()

    return Executing(client.get_executor(), 2 * threads, release)
