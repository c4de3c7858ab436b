"""Offline evaluation of ranking quality on the public bench sets (``tool-selector eval``)."""
