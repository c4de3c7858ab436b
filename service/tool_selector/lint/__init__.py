"""The catalog report (``tool-selector lint``, ``POST /v1/catalog/lint``): why a tool is not
found, and what its operator can write to fix it.

Framework-free, like ``pipeline/`` and ``ranking/``: it ranks with the service's own
``Selector``, so what it reports is what the endpoint answers.

- ``checks``: collisions and weak text, from the tool texts alone;
- ``probes``: each tool's own probe queries through the real ranking (``unreachable``);
- ``siblings``: tools near-identical to the ranker (dense and BM25) that its answers
  confuse;
- ``words``: the content words advice names;
- ``report``: all of them over one catalog, and the text rendering.
"""
