"""JiuwenMemory's memory_server: its REST routes, wire models and the ``memory-server`` entry."""
