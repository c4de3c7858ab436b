"""Request bytes -> an ``Ask``, decoded once, or a ``BadRequest`` saying exactly why.

The body is decoded into its contract's wire type with ``tools`` kept as raw bytes
(``msgspec.Raw``: a scan, no objects; every other field validated as usual). The tools
become a ``ToolSource`` that decodes those bytes (and checks their limits) only when the
catalog store has no catalog for them. A proxy resends the same deferred tools on every
model turn, byte for byte, and decoding them costs far more than ranking (about 100 ms for
4,000 tools on 2 cores), so a tool list of at least ``MIN_RAW_KEY_BYTES`` is named by the
hash of its bytes (``raw:<contract>:<sha1>``): identical bytes decode to identical tools, so
an answer from the catalog built from them cannot differ from a full decode. The catalog
store owns every cache of what was built; the decoder keeps only recent lists' bytes beside
their names (``raw_names.RawNames``), so a list resent byte for byte is named by comparing its
bytes instead of hashing them again, and is not even scanned: where a body holds a held
list's bytes at the place its ``"tools"`` key points to, the body is decoded with that place
holding a mark instead (``Decoder._resent``). When the mark, found once, is the head's
``tools``, the place was the top-level ``tools`` value, and the rest of the body reads as it
would around the list (JSON reads each value from the same state, whatever value stands
before it); otherwise, or on any error, the whole body is decoded as usual. Only lists that
nest at most ``raw_names.SHALLOW`` deep are found so: far from the decoder's own depth limit,
such a list cannot be what makes the whole decode fail, and its tools decode from the same
bytes either way.

The contract comes from the path; on the compress path a body that fails that contract's
decode and has ``pattern`` but no ``query`` (Context Gateway v0.5.2) is the search
contract's (a second scan, for that release only). A pattern longer than
``max_pattern_chars`` is never refused: one proxy line sends the user's whole last message,
and a real message is never bad input. It is ranked on its request parts, the lines and
sentences written to the assistant (``ranking.request_parts``); when it has none, on its
own prose (its first and last prose parts around the paste, ``prose_pattern``); when it
has no prose either (or ``find_request`` is off), cut to its head and tail
(``cut_pattern``).

Strings are text: a lone UTF-16 surrogate escape anywhere in the body (half an emoji) is
read as U+FFFD: msgspec refuses such a body (its scan of the raw tools too), and it is
decoded once more with those escapes rewritten (``surrogates.decode_text``); the raw tools
are then the rewritten bytes, so every string of the request is read alike.

Decoding is strict (msgspec, no lax coercion: ``"top_k": "2"`` is an error); foreign decode
errors become ``BadRequest`` through the one table in ``tool_selector.errors``. Known
difference from decoding all at once: an error inside ``tools`` is reported after one in
the other fields, and a body with ``tools`` twice is answered from the last copy without
the earlier one being checked.
"""

from __future__ import annotations

import re
from functools import cache, partial
from typing import Any

import msgspec

from tool_selector.errors import DECODE_ERRORS, BadRequest, bad_request
from tool_selector.pipeline.ask import Ask, ToolSource
from tool_selector.pipeline.contracts import COMPRESS, CONTRACTS, SEARCH, Contract, is_compress_path
from tool_selector.pipeline.raw_names import RawNames
from tool_selector.pipeline.surrogates import decode_text
from tool_selector.ranking.request_parts import (
    PROSE_CHARS,
    REQUEST_CHARS,
    PatternKind,
    read_message,
)
from tool_selector.settings import Settings
from tool_selector_client.wire import NAME_CONTROLS, CompressTool, Context, Tool

#: A character no name holds (``wire.NAME_CONTROLS``); the wire type's pattern lets a last
#: line break through (its ``$`` matches before one).
_NOT_IN_A_NAME = re.compile(f"[{NAME_CONTROLS}]")
#: Tool arrays smaller than this are cheap to decode; they are not named by their bytes.
MIN_RAW_KEY_BYTES = 4096
#: What stands for a held list while the rest of its body is decoded (``Decoder._resent``).
_MARK = b'"\\u0000 the tools this body resends"'


def _head_type(wire: type[msgspec.Struct]) -> type[msgspec.Struct]:
    """``wire`` with ``tools`` left as raw bytes (derived, so it tracks the wire type)."""
    fields: list[tuple[str, object, object]] = []
    for f in msgspec.structs.fields(wire):
        kind = msgspec.Raw if f.name == "tools" else f.type
        if f.default is not msgspec.NODEFAULT:
            fields.append((f.name, kind, f.default))
        elif f.default_factory is not msgspec.NODEFAULT:
            fields.append((f.name, kind, msgspec.field(default_factory=f.default_factory)))
        else:
            fields.append((f.name, kind, msgspec.NODEFAULT))
    required = [(n, k) for n, k, d in fields if d is msgspec.NODEFAULT]
    optional = [(n, k, d) for n, k, d in fields if d is not msgspec.NODEFAULT]
    return msgspec.defstruct(f"{wire.__name__}Head", [*required, *optional], frozen=True)


_HEADS = {c.name: msgspec.json.Decoder(_head_type(c.wire)) for c in CONTRACTS}
_WHOLE = {c.name: msgspec.json.Decoder(c.wire) for c in CONTRACTS}
_TOOLS = {c.name: msgspec.json.Decoder(list[c.tool]) for c in CONTRACTS}  # type: ignore[name-defined]


class _Shape(msgspec.Struct):
    """Which of the two request fields a body has (empty ``Raw``: absent)."""

    pattern: msgspec.Raw = msgspec.Raw()
    query: msgspec.Raw = msgspec.Raw()


_SHAPE = msgspec.json.Decoder(_Shape)


class Decoder:
    """Body bytes of either contract -> ``(contract, Ask)``. ``name_by_bytes=False`` never
    names a tool list by its bytes (the store then fingerprints every decoded list)."""

    def __init__(self, settings: Settings, *, name_by_bytes: bool = True) -> None:
        self._settings = settings
        self._name_by_bytes = name_by_bytes
        self._names = RawNames(settings.raw_names_bytes)

    def decode(self, body: bytes, path: str) -> tuple[Contract, Ask]:
        """Decode and validate ``body`` sent to ``path``; raises ``BadRequest``."""
        if not body.strip():
            raise BadRequest("empty_body", "request body is empty; send a JSON object")
        contract, head, resent = self._read_head(body, path)
        _check_head(head, self._settings, contract)
        sent: str = contract.read(head, "pattern")
        pattern, kind = self._pattern(sent)
        ask = Ask(
            pattern=pattern,
            tools=self._source(contract, head.tools) if resent is None else resent,
            top_k=contract.read(head, "top_k"),
            always_keep=tuple(contract.read(head, "always_keep") or ()),
            explain=contract.read(head, "explain", False),
            pattern_chars=len(sent),
            filters=contract.read(head, "filters"),
            budget=contract.read(head, "budget"),
            min_score=contract.read(head, "min_score"),
            context=_context(contract.read(head, "context"), self._settings),
            pattern_kind=kind,
        )
        return contract, ask

    def _read_head(self, body: bytes, path: str) -> tuple[Contract, Any, ToolSource | None]:
        """The body's contract and decoded head, and the held tool list it resends as its
        top-level ``tools`` (``_resent``: the head then decoded without the list's bytes)."""
        resent = self._resent(body, path)
        if resent is not None:
            return resent
        return *_whole_head(body, path), None

    def _resent(self, body: bytes, path: str) -> tuple[Contract, Any, ToolSource] | None:
        """The body's contract and head decoded with ``_MARK`` where ``RawNames.resent``
        finds a held list, and that list named, when the mark, found once in that body, is
        its top-level ``tools`` and the contract is the list's (see the module); ``None``
        otherwise, the whole body's own decode then saying what it says."""
        found = self._names.resent(body) if self._name_by_bytes else []
        if not found:
            return None
        start, held = found[0][:2]
        rest = body[:start] + _MARK + body[start + len(held) :]
        if rest.count(_MARK) != 1:
            return None
        try:
            contract, head = _whole_head(rest, path)
        except BadRequest:
            return None
        named = [n for _, b, n, c in found if c == contract.name and (b is held or b == held)]
        if bytes(head.tools) != _MARK or not named:
            return None
        load = partial(self._tools, contract, msgspec.Raw(held))
        return contract, head, ToolSource.keyed(named[0], load)

    def _pattern(self, sent: str) -> tuple[str, PatternKind | None]:
        """``sent`` as ranked, and which reading gave it: itself (``None``) when it fits the
        budget; else, when finding the request is on, its request parts or else its own
        prose (``read_message``); else (or when it has neither) cut."""
        budget = self._settings.max_pattern_chars
        if len(sent) <= budget:
            return sent, None
        found = None
        if self._settings.find_request:
            found = read_message(sent, min(budget, REQUEST_CHARS), min(budget, PROSE_CHARS))
        return found or (cut_pattern(sent, budget), "positional_cut")

    def tool_source(self, raw: msgspec.Raw) -> ToolSource:
        """Raw ``tools`` bytes of the search contract as a ``ToolSource``, named as a search
        request's identical bytes are (so the catalog report finds the same catalog)."""
        return self._source(SEARCH, raw)

    def _source(self, contract: Contract, raw: msgspec.Raw) -> ToolSource:
        """``raw`` as a ``ToolSource`` named by its bytes' hash (worked out once, when the
        catalog store first asks: ``ToolSource.named``), or unnamed when small or off."""
        named = self._name_by_bytes and len(raw) >= MIN_RAW_KEY_BYTES
        key = cache(partial(self._names.name, contract.name, raw)) if named else _unnamed
        return ToolSource(key, partial(self._tools, contract, raw))

    def _tools(self, contract: Contract, raw: msgspec.Raw) -> list[Tool]:
        """The raw tool bytes decoded, as the pipeline's ``Tool``, within the limits."""
        try:
            sent = _TOOLS[contract.name].decode(raw)
        except DECODE_ERRORS as exc:
            raise bad_request(exc, "$.tools") from exc
        tools = sent if contract.to_tool is None else [contract.to_tool(t) for t in sent]
        _check_tools(tools, sent, self._settings)
        return tools


def _unnamed() -> None:
    return None


def _whole_head(body: bytes, path: str) -> tuple[Contract, Any]:
    """``_head`` of ``body``, decoded once more with lone surrogate escapes rewritten when it
    is refused and holds one (``surrogates.decode_text``)."""
    return decode_text(partial(_head, path=path), body, (BadRequest,))


def _head(body: bytes, path: str) -> tuple[Contract, Any]:
    """The contract of ``body`` on ``path`` and its decoded head (see the module)."""
    if not is_compress_path(path):
        return SEARCH, _decode(SEARCH, body)
    try:
        return COMPRESS, _decode(COMPRESS, body)
    except BadRequest:
        if not _search_shaped(body):
            raise
    return SEARCH, _decode(SEARCH, body)


def _decode(contract: Contract, body: bytes) -> Any:
    """The body's head; a body too deep to scan is decoded whole, which names its first
    wrong type when it has one (``"tools": [[[...]]]`` is a wrong type, not a depth)."""
    try:
        return _HEADS[contract.name].decode(body)
    except RecursionError:
        try:
            _WHOLE[contract.name].decode(body)
        except DECODE_ERRORS as exc:
            raise bad_request(exc) from exc
        raise BadRequest("too_deep", "JSON nesting is too deep") from None
    except DECODE_ERRORS as exc:
        raise bad_request(exc) from exc


def _search_shaped(body: bytes) -> bool:
    """Whether ``body`` has ``pattern`` and no ``query`` (a scan that builds no objects)."""
    try:
        shape = _SHAPE.decode(body)
    except DECODE_ERRORS:
        return False
    return bool(shape.pattern) and not shape.query


#: A cut pattern keeps this share of its budget from its start, the rest from its end.
HEAD_SHARE = 0.5


def cut_pattern(pattern: str, max_chars: int) -> str:
    """``pattern`` itself when it fits, else its first ``HEAD_SHARE`` of ``max_chars``
    characters and its last ones, joined by a space, without the words the cuts split.

    Why head and tail: a long message states its need at the start or asks it at the end,
    with pasted material between; measured on the long queries of the bench sets
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


def _context(context: Context | None, settings: Settings) -> Context | None:
    """``context`` with each message cut like the pattern (a real message is never refused
    for its length), blank ones dropped, and the recent tools no catalog can name (longer
    than ``max_name_chars``) dropped too."""
    if context is None:
        return None
    messages = [cut_pattern(m, settings.max_pattern_chars) for m in context.messages if m.strip()]
    tools = [t for t in context.recent_tools if len(t) <= settings.max_name_chars]
    return Context(messages=messages, recent_tools=tools)


def _check_head(head: Any, settings: Settings, contract: Contract) -> None:
    """The operator-tunable limits on a request's own fields (its tools: ``_check_tools``)."""
    top_k = contract.read(head, "top_k")
    if top_k > settings.max_top_k:
        raise BadRequest(
            "top_k_out_of_range",
            f"{contract.field('top_k')} must be between 1 and {settings.max_top_k}, got {top_k}",
        )
    always_keep = contract.read(head, "always_keep") or []
    if len(always_keep) > settings.max_tools:
        raise BadRequest(
            "too_many_always_keep",
            f"{len(always_keep)} always_keep names; the limit is {settings.max_tools}",
        )
    for i, name in enumerate(always_keep):
        check_name(name, f"always_keep[{i}]", settings)


def _check_tools(tools: list[Tool], sent: list[Any], settings: Settings) -> None:
    """The operator-tunable limits on the tools, which the wire types cannot know; a
    definition as it was sent (``_sent_definition``)."""
    if len(tools) > settings.max_tools:
        raise BadRequest(
            "too_many_tools", f"{len(tools)} tools sent; the limit is {settings.max_tools}"
        )
    for i, tool in enumerate(tools):
        check_name(tool.name, f"tools[{i}].name", settings)
        if tool.description is not None and len(tool.description) > settings.max_description_chars:
            raise BadRequest(
                "description_too_long",
                f"tools[{i}].description has {len(tool.description)} characters; "
                f"the limit is {settings.max_description_chars}",
            )
        text = tool.search_text
        if isinstance(text, str) and len(text) > settings.max_description_chars:
            raise BadRequest(
                "search_text_too_long",
                f"tools[{i}].search_text has {len(text)} characters; "
                f"the limit is {settings.max_description_chars}",
            )
        field, definition = _sent_definition(sent[i])
        if definition is not None:
            _check_definition(definition, f"tools[{i}].{field}", settings)


def _sent_definition(sent: Tool | CompressTool) -> tuple[str, dict[str, Any] | None]:
    """The field a tool's definition came in and its value as sent: the compress contract's
    ``parameters`` when it sends no ``definition`` (``compress_tool`` may wrap it in a level
    of its own: its limits are the sent value's, and its errors name ``parameters``)."""
    if sent.definition is None and isinstance(sent, CompressTool):
        return "parameters", sent.parameters
    return "definition", sent.definition


def check_name(name: str, where: str, settings: Settings) -> None:
    """A tool name as a search takes it (a feedback's ``called`` too): at most
    ``max_name_chars``, not blank, no control character (a last line break included)."""
    if len(name) > settings.max_name_chars:
        raise BadRequest(
            "name_too_long",
            f"{where} has {len(name)} characters; the limit is {settings.max_name_chars}",
        )
    if not name.strip() or _NOT_IN_A_NAME.search(name):
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
