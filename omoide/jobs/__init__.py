"""Durable background work: typed job kinds, one retry policy, and the worker that runs them.

Why durable: a job is a row committed in the same transaction as the data that caused it (the
messages to extract, the memories to embed), so a crash between "stored" and "processed" loses
nothing; a job whose worker died is claimed again when its lease expires.

Why idempotent handlers: because of that lease, a job can run twice (a slow worker and its
successor), and a retried job runs again after a partial failure. A handler must make a second
run harmless: re-check what it reads before it writes, record steps as it goes
(``tx.jobs.claim_step`` / ``record_step``), and finish the job in the transaction of its writes.

Why versioned payloads: a stored payload outlives the code that wrote it (an upgrade with jobs
still queued, a failed job retried months later). Each kind's payload is a pydantic model with a
version ``v``; a newer model upgrades older rows, and a row that cannot be read fails that one
job visibly instead of crashing the worker.

Modules: ``policy`` (``RetryPolicy``: backoff and give-up), ``kinds`` (one module per kind:
payload model and ``JobKind``), ``queue`` (``enqueue``), ``worker`` (``Registration``,
``run_batch``, ``Worker``), ``errors`` (``InvalidJobPayload``, ``JobFailed``).
"""
