"""Offline evaluation of ranking quality on ``../shared/bench`` (``tool-selector eval``)."""
