"""SQLite reads and writes of projects (nexusAI seed)."""

from __future__ import annotations


class ProjectsStoreMixin:
    pass


class ProjectsTxMixin:
    pass
