"""The application service: the only package that composes store, embedder, retrieval and jobs.

Every interface (library, HTTP, CLI) calls ``Engine`` and nothing below it.
"""

from omoide.engine.core import EMBED_JOB, Engine

__all__ = ["EMBED_JOB", "Engine"]
