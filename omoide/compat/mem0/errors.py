"""The shim's exceptions: mem0's types where code written for mem0 catches them, still
omoide's own for code that catches those."""

from omoide.errors import NotFound


class MemoryNotFound(NotFound, ValueError):
    """An unknown memory id: omoide's ``NotFound`` and, as mem0 raises for it, a ``ValueError``
    (code written for mem0 catches ``ValueError``)."""
