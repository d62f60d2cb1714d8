"""Stateful scheduling around the engine: the queue, the cache and the loop (no I/O of their own)."""
