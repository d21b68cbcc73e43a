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


# a batch of fewer characters runs on the calling thread: one thread encodes it in ~100 µs or
# less (~100 characters a µs), about what handing it to the pool costs (~25 µs of CPU, a thread's
# wake-up); on threads a batch of sixteen 100-character texts took 3-4x the CPU time of one thread
SMALL_BATCH_CHARS = 8192


def batch_threads(texts, num_threads):
    """num_threads for a batch of texts, or 1 when they hold fewer than SMALL_BATCH_CHARS
    characters in all (the ids are the same on any number of threads).  Anything but a list
    of str keeps num_threads: its errors come from the usual place."""
    if num_threads is None or num_threads <= 1 or type(texts) is not list:
        return num_threads
    total = 0
    for text in texts:
        if type(text) is not str:
            return num_threads
        total += len(text)
        if total >= SMALL_BATCH_CHARS:
            return num_threads
    return 1


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
        return [r for part in _with_kept_pool(fn_chunk, chunks, num_threads) for r in part]
    from concurrent.futures import ThreadPoolExecutor   # imported by the first threaded call only
    with ThreadPoolExecutor(min(num_threads, len(chunks))) as pool:
        return [r for part in pool.map(fn_chunk, chunks) for r in part]


def _with_kept_pool(fn_chunk, chunks: list, num_threads: int) -> list:
    """fn_chunk of each chunk, in order, run by the calling thread and num_threads - 1 threads
    of the kept pool, each taking the next chunk no one has taken: one future a helper, not
    one a chunk, and the caller works instead of waiting (the pool's futures and wake-ups were
    ~290k instructions and ~50 µs of CPU a two-thread call).  An error stops the thread that
    met it; the others finish the chunk they hold and take no other, and the first failing
    chunk's error is raised (Ctrl-C on a long batch is not held up by the rest of it)."""
    results, errors = [None] * len(chunks), {}
    taken, lock = [0], threading.Lock()   # (a lock, not a shared iterator: free-threaded builds)
    stop = []   # non-empty: the caller was interrupted; take no other chunk

    def work() -> None:
        while True:
            with lock:
                i = taken[0]
                if i >= len(chunks) or errors or stop:
                    return
                taken[0] = i + 1
            try:
                results[i] = fn_chunk(chunks[i])
            except BaseException as e:   # noqa: B036 - raised below, after every thread has stopped
                with lock:
                    errors[i] = e
                return

    pool = kept_pool(num_threads)
    helpers = [pool.submit(work) for _ in range(min(num_threads, len(chunks)) - 1)]
    try:
        work()
        for helper in helpers:
            helper.result()
    except BaseException:   # (KeyboardInterrupt between chunks or while waiting)
        stop.append(True)
        raise
    if errors:
        raise errors[min(errors)]
    return results


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
