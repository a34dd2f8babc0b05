"""Durable background work: the worker thread and one handler per job kind."""
