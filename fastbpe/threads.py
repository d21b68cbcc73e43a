"""Thread counts and the thread pools the batch calls run on."""
from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS reports it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return os.cpu_count() or 1


# more worker threads than this per core only cost memory (each has its buffers or tables)
_MAX_THREADS_PER_CORE = 8


def useful_threads(num_threads: int) -> int:
    """A requested worker count, capped at what the cores can use: a huge request (say
    10**20) would otherwise allocate per-thread state until memory runs out."""
    return min(num_threads, _MAX_THREADS_PER_CORE * available_cores())


def check_threads(num_threads) -> None:
    """ValueError for a thread count below 1.  None and floats pass, as in tiktoken
    (ThreadPoolExecutor takes them); 0 and negatives would raise there too."""
    if num_threads is not None and not isinstance(num_threads, bool) and num_threads < 1:
        raise ValueError(f"num_threads must be at least 1, not {num_threads!r}")


def parallel_map(fn_chunk, items, num_threads: int, keep_threads: bool = False) -> list:
    """fn_chunk over contiguous chunks of items on up to num_threads threads, results
    concatenated in order.  Few, large chunks: each thread makes few calls into the kernels,
    so the threads rarely wait for the GIL.  keep_threads: run on a pool that outlives the
    call, so each thread's piece cache (see _core.PieceCache) stays warm from one batch to
    the next instead of starting empty in a new thread."""
    items = list(items)
    if num_threads is None or num_threads <= 1 or len(items) <= 1:
        return fn_chunk(items)
    n_chunks = min(len(items), num_threads * 2)
    size = -(-len(items) // n_chunks)
    chunks = [items[i:i + size] for i in range(0, len(items), size)]
    if keep_threads:
        return [r for part in kept_pool(num_threads).map(fn_chunk, chunks) for r in part]
    from concurrent.futures import ThreadPoolExecutor   # imported by the first threaded call only
    with ThreadPoolExecutor(min(num_threads, len(chunks))) as pool:
        return [r for part in pool.map(fn_chunk, chunks) for r in part]


_kept_pools: dict = {}
_kept_pools_lock = threading.Lock()


def kept_pool(num_threads: int) -> ThreadPoolExecutor:
    """The process's pool of num_threads threads, made on first use (and again after a
    fork: a pool copied into a child process has no threads)."""
    key = (os.getpid(), num_threads)
    pool = _kept_pools.get(key)
    if pool is None:
        from concurrent.futures import ThreadPoolExecutor
        with _kept_pools_lock:
            pool = _kept_pools.get(key)
            if pool is None:
                for k in [k for k in _kept_pools if k[0] != key[0]]:
                    del _kept_pools[k]  # the parent's pools: their threads are not here
                pool = _kept_pools[key] = ThreadPoolExecutor(num_threads, thread_name_prefix="fastbpe-batch")
    return pool
