"""nexusAI's memory-service: its REST routes, wire shapes and the ``nexus-memory-service`` entry."""
