"""tool-selector: picks the few tools an LLM needs out of a catalog of hundreds."""

__version__ = "0.1.0"
