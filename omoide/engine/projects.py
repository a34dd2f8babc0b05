"""Projects: named groupings of a tenant's sessions, optionally isolated (nexusAI seed)."""

from __future__ import annotations


class ProjectsMixin:
    pass
