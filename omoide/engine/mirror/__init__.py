"""The markdown mirror (``INDEX_BACKEND=file``): memories as files a person can edit."""

from omoide.engine.mirror.service import MarkdownMirror

__all__ = ["MarkdownMirror"]
