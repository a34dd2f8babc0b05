"""The emulated products, one folder each: their routes, wire models, logic and entry points.

``jiuwen/`` (JiuwenMemory's memory_server), ``nexus/`` (nexusAI's memory-service), ``wilmer/``
(WilmerAI's discussion memory) and ``mem0/`` (a mem0-shaped library shim). Only this package
and the composition root (``omoide.serve``) name these products; the core never does.
"""
