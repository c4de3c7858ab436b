"""Request bytes -> a validated ``SearchRequest``, or a ``BadRequest`` saying exactly why.

Either contract's body (``tool_selector.pipeline.contracts``) is decoded into its own wire type and
adapted to a ``SearchRequest``; the limits are checked on that, in the contract's own field
names. A pattern longer than ``max_pattern_chars`` is cut, never refused (``cut_pattern``):
one proxy line sends the user's whole last message, and a real message is never bad input.

Decoding is strict (msgspec, no lax coercion: ``"top_k": "2"`` is an error). msgspec raises
``UnicodeDecodeError`` on invalid UTF-8 and ``RecursionError`` on absurd nesting rather than
its own errors; both are translated here so the edge never sees a foreign exception.
"""

from __future__ import annotations

from typing import Any

import msgspec

from tool_selector.errors import BadRequest
from tool_selector.pipeline.contracts import CONTRACTS, SEARCH, Contract
from tool_selector.settings import Settings
from tool_selector_client.wire import SearchRequest

_DECODERS = {c.name: msgspec.json.Decoder(c.wire) for c in CONTRACTS}
#: A cut pattern keeps this share of its budget from its start, the rest from its end.
HEAD_SHARE = 0.5


def checked(request: SearchRequest, settings: Settings, contract: Contract) -> SearchRequest:
    """``request`` with its pattern cut to ``max_pattern_chars``, once the limits pass."""
    check_limits(request, settings, contract)
    pattern = cut_pattern(request.pattern, settings.max_pattern_chars)
    if pattern is request.pattern:
        return request
    return msgspec.structs.replace(request, pattern=pattern)


def cut_pattern(pattern: str, max_chars: int) -> str:
    """``pattern`` itself when it fits, else its first ``HEAD_SHARE`` of ``max_chars``
    characters and its last ones, joined by a space, without the words the cuts split.

    Why head and tail: a long message states its need at the start or asks it at the end,
    with pasted material between; measured on the long queries of ``../shared/bench``
    (docs/long-patterns.md). The embedding model reads about 1,000 characters
    (256 tokens) anyway; BM25 would read all, and a pasted blob only adds noise to it.
    """
    if len(pattern) <= max_chars:
        return pattern
    pattern = pattern.strip()  # both cut ends then start on a character, never a blank
    if len(pattern) <= max_chars:
        return pattern
    head = max(int(max_chars * HEAD_SHARE), 1)
    tail = max_chars - head
    start = pattern[:head]
    if not (pattern[head].isspace() or start[-1].isspace()):
        start = _drop_partial(start, last=True)
    if not tail:
        return start.rstrip()
    end = pattern[len(pattern) - tail :]
    if not (pattern[len(pattern) - tail - 1].isspace() or end[0].isspace()):
        end = _drop_partial(end, last=False)
    return f"{start.rstrip()} {end.lstrip()}"


def _drop_partial(text: str, *, last: bool) -> str:
    """``text`` without its last (or first) word, when it has another word to keep."""
    parts = text.rsplit(None, 1) if last else text.split(None, 1)
    if len(parts) < 2:
        return text  # one unbroken run (a blob): keep the characters
    return parts[0] if last else parts[1]


def decode_wire(body: bytes, contract: Contract = SEARCH) -> Any:
    """The body as ``contract``'s wire struct; foreign decode errors become ``BadRequest``."""
    if not body.strip():
        raise BadRequest("empty_body", "request body is empty; send a JSON object")
    try:
        return _DECODERS[contract.name].decode(body)
    except msgspec.ValidationError as exc:
        raise BadRequest("invalid_request", str(exc)) from exc
    except msgspec.DecodeError as exc:
        raise BadRequest("malformed_json", f"body is not valid JSON: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise BadRequest("invalid_utf8", f"body is not valid UTF-8: {exc.reason}") from exc
    except RecursionError as exc:
        raise BadRequest("too_deep", "JSON nesting is too deep") from exc


def check_limits(request: SearchRequest, settings: Settings, contract: Contract = SEARCH) -> None:
    """Apply the operator-tunable limits that the wire types cannot know."""
    if request.top_k > settings.max_top_k:
        raise BadRequest(
            "top_k_out_of_range",
            f"{contract.field('top_k')} must be between 1 and {settings.max_top_k}, "
            f"got {request.top_k}",
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
