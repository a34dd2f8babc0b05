"""WilmerAI discussion memory: chunk and vector memories of a discussion, and their search."""

from __future__ import annotations


class DiscussionsMixin:
    pass
