"""A catalog report asked over HTTP: body bytes -> the catalog -> ``report.lint``.

The body is ``LintRequest``: ``catalog``, a key the catalog store holds (the ``catalog``
field of the search log line), or ``tools``, decoded and checked against the same limits
as a search request's tools and named as identical search bytes are, so a list a proxy has
sent is found, not rebuilt; the other one absent or ``null`` (the wire type encodes the
field it was not given as ``null``). The probes are ranked by a selector that shares everything
with the serving one (catalogs, embedding caches, encoder, static arm, fusion, jobs, the
embedding deadline) except the query-vector cache: the probes do not evict real queries.
"""

from __future__ import annotations

from dataclasses import replace

import msgspec

from tool_selector.errors import DECODE_ERRORS, BadRequest, NotFound, bad_request
from tool_selector.lint.report import lint
from tool_selector.lru import BoundedLRU
from tool_selector.pipeline.ask import ToolSource
from tool_selector.pipeline.decoding import Decoder
from tool_selector.pipeline.selector import Selector
from tool_selector.pipeline.surrogates import decode_text
from tool_selector_client.catalog_lint import LintReport
from tool_selector_client.wire import Tool

#: Probe query vectors one report keeps (a 1,000-tool catalog has about 3,500 probes).
PROBE_VECTORS = 8192


class _Head(msgspec.Struct, frozen=True):
    catalog: str | None = None
    tools: msgspec.Raw = msgspec.Raw()


_HEAD = msgspec.json.Decoder(_Head)


def probing(selector: Selector) -> Selector:
    """A selector answering as ``selector`` does, with its own query-vector cache."""
    return Selector(
        encoder=selector.encoder,
        cache=selector.cache,
        rules=replace(selector.rules, steps=None),
        catalogs=selector.catalogs,
        queries=BoundedLRU(PROBE_VECTORS),
        jobs=selector.jobs,
        embed_deadline=selector.vectors.embed_deadline,
        batch_size=selector.vectors.batch_size,
        static=selector.static,
    )


def lint_body(
    body: bytes, decoder: Decoder, selector: Selector, scope: str | None = None
) -> LintReport:
    """The report the body asks for, with the tools' use in ``scope`` (learned feedback)
    when learning is on; raises ``BadRequest`` / ``NotFound``."""
    if not body.strip():
        raise BadRequest("empty_body", "request body is empty; send a JSON object")
    try:
        head = decode_text(_HEAD.decode, body, DECODE_ERRORS)  # lone surrogates: U+FFFD
    except DECODE_ERRORS as exc:
        raise bad_request(exc) from exc
    if bytes(head.tools) == b"null":  # as absent: ``LintRequest(catalog=key)`` encodes it so
        head = msgspec.structs.replace(head, tools=msgspec.Raw())
    if (head.catalog is None) == (not head.tools):
        raise BadRequest("invalid_request", "send exactly one of `catalog` (a key) or `tools`")
    learner = selector.learning
    usage = None if learner is None or scope is None else learner.usage(scope)
    return lint(probing(selector), _source(head, decoder, selector), usage=usage)


def _source(head: _Head, decoder: Decoder, selector: Selector) -> ToolSource:
    if head.catalog is None:
        return decoder.tool_source(head.tools)
    key = head.catalog
    if selector.catalogs.get(key) is None:
        raise NotFound(
            "unknown_catalog",
            f"catalog {key!r} is not held (evicted, or never sent); send its `tools` instead",
        )

    def evicted() -> list[Tool]:
        raise NotFound("unknown_catalog", f"catalog {key!r} was evicted; send its `tools`")

    return ToolSource.keyed(key, evicted)
