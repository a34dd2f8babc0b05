"""What the processes omoide starts for itself (``omoide serve``, ``omoide worker``, ``omoide mcp``
and the compat servers) set for the whole process, where a library must leave its caller's
process alone."""

from __future__ import annotations


def limit_blas_threads(threads: int) -> None:
    """numpy's BLAS on ``threads`` threads (0: leave its default, one per core).

    A search's vector scan is one matrix-vector product, which BLAS splits over every core;
    beside it the same search embeds its query and ranks its keyword half on other threads,
    and other requests and the job workers run too. On a machine with few cores the split
    product then waits for its slowest part, and its idle threads spin on cores the others
    need: one thread answers sooner (bench/README.md, "numpy's BLAS threads")."""
    if threads <= 0:
        return
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=threads, user_api="blas")
