"""Embedding model adapters and embedding caches (behind protocols, with in-memory references)."""
