"""mem0's ``Memory``, over omoide: a mem0 user changes one import.

    from omoide.compat.mem0 import Memory      # was: from mem0 import Memory

    m = Memory()
    m.add(messages, user_id="alex")
    m.search("What do you know about me?", filters={"user_id": "alex"})["results"]

Results are mem0's dicts (``{"results": [{"id", "memory", "score", "metadata",
"created_at", ...}]}``). ``agent_id`` is omoide's ``scope_id`` and ``run_id`` its session (see
``shape``). Operations by memory id (``get``, ``update``, ``delete``, ``history``) need no
``user_id``: the id names its tenant. ``omoide.Memory`` stays omoide's own typed API; this
class wraps one (``.omoide``) for everything mem0 has no word for. ``AsyncMemory`` (``aio``) is
mem0's awaited twin of ``Memory``.
"""

from omoide.compat.mem0.aio import AsyncMemory
from omoide.compat.mem0.errors import MemoryNotFound
from omoide.compat.mem0.memory import Memory

__all__ = ["AsyncMemory", "Memory", "MemoryNotFound"]
