"""Request bytes -> a validated ``SearchRequest``, or a ``BadRequest`` saying exactly why.

Decoding is strict (msgspec, no lax coercion: ``"top_k": "2"`` is an error). msgspec raises
``UnicodeDecodeError`` on invalid UTF-8 and ``RecursionError`` on absurd nesting rather than
its own errors; both are translated here so the edge never sees a foreign exception.
"""

from __future__ import annotations

from typing import Any

import msgspec

from tool_selector.errors import BadRequest
from tool_selector.settings import Settings
from tool_selector_client.wire import SearchRequest

_DECODER = msgspec.json.Decoder(SearchRequest)


def decode_request(body: bytes, settings: Settings) -> SearchRequest:
    """Decode and check one search request against the configured limits."""
    if not body.strip():
        raise BadRequest("empty_body", "request body is empty; send a JSON object")
    try:
        request = _DECODER.decode(body)
    except msgspec.ValidationError as exc:
        raise BadRequest("invalid_request", str(exc)) from exc
    except msgspec.DecodeError as exc:
        raise BadRequest("malformed_json", f"body is not valid JSON: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise BadRequest("invalid_utf8", f"body is not valid UTF-8: {exc.reason}") from exc
    except RecursionError as exc:
        raise BadRequest("too_deep", "JSON nesting is too deep") from exc
    check_limits(request, settings)
    return request


def check_limits(request: SearchRequest, settings: Settings) -> None:
    """Apply the operator-tunable limits that the wire types cannot know."""
    if len(request.pattern) > settings.max_pattern_chars:
        raise BadRequest(
            "pattern_too_long",
            f"pattern has {len(request.pattern)} characters; "
            f"the limit is {settings.max_pattern_chars}",
        )
    if request.top_k > settings.max_top_k:
        raise BadRequest(
            "top_k_out_of_range",
            f"top_k must be between 1 and {settings.max_top_k}, got {request.top_k}",
        )
    if len(request.tools) > settings.max_tools:
        raise BadRequest(
            "too_many_tools", f"{len(request.tools)} tools sent; the limit is {settings.max_tools}"
        )
    if len(request.always_keep) > settings.max_tools:
        raise BadRequest(
            "too_many_always_keep",
            f"{len(request.always_keep)} always_keep names; the limit is {settings.max_tools}",
        )
    for i, name in enumerate(request.always_keep):
        _check_name(name, f"always_keep[{i}]", settings)
    for i, tool in enumerate(request.tools):
        _check_name(tool.name, f"tools[{i}].name", settings)
        if tool.description is not None and len(tool.description) > settings.max_description_chars:
            raise BadRequest(
                "description_too_long",
                f"tools[{i}].description has {len(tool.description)} characters; "
                f"the limit is {settings.max_description_chars}",
            )
        if tool.definition is not None:
            _check_definition(tool.definition, f"tools[{i}].definition", settings)


def _check_name(name: str, where: str, settings: Settings) -> None:
    if len(name) > settings.max_name_chars:
        raise BadRequest(
            "name_too_long",
            f"{where} has {len(name)} characters; the limit is {settings.max_name_chars}",
        )
    if not name.strip() or any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise BadRequest("invalid_name", f"{where} is blank or contains control characters")


def _check_definition(definition: dict[str, Any], where: str, settings: Settings) -> None:
    """Nesting depth and description lengths inside one definition, without recursion."""
    limit = settings.max_definition_depth
    stack: list[tuple[Any, int]] = [(definition, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            raise BadRequest("definition_too_deep", f"{where} nests deeper than {limit} levels")
        if isinstance(node, dict):
            desc = node.get("description")
            if isinstance(desc, str) and len(desc) > settings.max_description_chars:
                raise BadRequest(
                    "description_too_long",
                    f"a description in {where} has {len(desc)} characters; "
                    f"the limit is {settings.max_description_chars}",
                )
            stack.extend((v, depth + 1) for v in node.values() if isinstance(v, dict | list))
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node if isinstance(v, dict | list))
