"""Routers that let clients of other memory services talk to omoide unchanged.

``jiuwen``: the JiuwenMemory ``memory_server`` endpoints (``OMOIDE_COMPAT_JIUWEN``, on by default).
"""
