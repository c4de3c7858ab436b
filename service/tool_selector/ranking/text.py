"""Tool text: what the ranker reads out of each provider's tool definition.

Supported shapes (SPEC.md): OpenAI Chat ``{type, function: {name, description,
parameters}}``, OpenAI Responses ``{type, name, description, parameters}``, Anthropic
``{name, description, input_schema}``, MCP ``{name, description, inputSchema}`` and
Gemini function declarations (``parameters`` / ``parametersJsonSchema``, optionally
wrapped in ``functionDeclarations``). Parameter names, descriptions and enum values
are read from JSON schemas walked to a bounded depth.

Search-only text (``Tool.search_text``, else the definition's MCP ``_meta`` key
``SEARCH_TEXT_META``) joins the description in BM25 and in the embedded text; the model
never sees it. Absent, it adds nothing to any text (BM25 documents, embedded text and
embedding-cache keys are those of the tool alone).
"""

from __future__ import annotations

from typing import Any

import msgspec

from tool_selector.ranking.tokenize import split_identifier, terms, tokenize
from tool_selector_client.policy import split_namespace
from tool_selector_client.wire import Tool

__all__ = ["TEXT_FORMAT_VERSION", "ToolText", "split_namespace", "tool_text"]

#: Bump when the text fed to the embedding model changes; part of the cache key.
TEXT_FORMAT_VERSION = 1

_SCHEMA_KEYS = (
    "parameters",
    "input_schema",
    "inputSchema",
    "parametersJsonSchema",
    "parameters_json_schema",
)
_DECLARATION_KEYS = ("functionDeclarations", "function_declarations")
_NESTED_KEYS = ("items", "additionalProperties")
_VARIANT_KEYS = ("anyOf", "oneOf", "allOf")
_MAX_SCHEMA_DEPTH = 6
_MAX_PARAM_CHARS = 4000
#: The MCP ``_meta`` key a definition may carry its search-only text under.
SEARCH_TEXT_META = "tool-selector/search_text"


class ToolText(msgspec.Struct, frozen=True, gc=False):
    """The searchable fields of one tool.

    ``gc=False``: it holds only strings, so it can never be part of a reference cycle, and
    the garbage collector need not walk the thousands of them a catalog cache keeps.
    """

    name: str
    bare_name: str
    namespace: str
    description: str
    params: str
    search_text: str = ""
    #: Each required top-level parameter's description (its name's words when it has none).
    required: tuple[str, ...] = ()
    #: Top-level parameters, and how many of them have a description (``catalog lint``).
    param_count: int = 0
    described_params: int = 0

    def name_tokens(self) -> list[str]:
        return terms(self.bare_name)

    def namespace_tokens(self) -> list[str]:
        return terms(self.namespace)

    def description_tokens(self) -> list[str]:
        return tokenize(self.description)

    def param_tokens(self) -> list[str]:
        return tokenize(self.params)

    def search_tokens(self) -> list[str]:
        return tokenize(self.search_text)

    def dense_text(self) -> str:
        """The text embedded for this tool (versioned by ``TEXT_FORMAT_VERSION``)."""
        words = " ".join(split_identifier(self.bare_name))
        head = f"{self.namespace} {words}".strip() if self.namespace else words
        parts = [head]
        if self.description:
            parts.append(self.description)
        if self.search_text:
            parts.append(self.search_text)
        if self.params:
            parts.append(f"Parameters: {self.params}")
        return ". ".join(parts)


def tool_text(tool: Tool) -> ToolText:
    """Extract the searchable fields of ``tool``; top-level ``description`` wins when present."""
    fn = _function_object(tool.definition or {}, tool.name)
    description = tool.description
    if not description:
        raw = fn.get("description")
        description = raw if isinstance(raw, str) else ""
    schema = next((fn[k] for k in _SCHEMA_KEYS if isinstance(fn.get(k), dict)), None)
    params: list[str] = []
    if schema is not None:
        _walk_schema(schema, params, depth=0)
    namespace, bare = split_namespace(tool.name)
    required, count, described = _top_level(schema or {})
    return ToolText(
        name=tool.name,
        bare_name=bare,
        namespace=namespace,
        description=description.strip(),
        params=" ".join(params)[:_MAX_PARAM_CHARS],
        search_text=_search_text(tool, fn),
        required=required,
        param_count=count,
        described_params=described,
    )


def _top_level(schema: dict[str, Any]) -> tuple[tuple[str, ...], int, int]:
    """The required parameters' descriptions (else name words), the parameter count and how
    many are described, of a schema's top-level ``properties``."""
    props = schema.get("properties")
    if not isinstance(props, dict):
        return (), 0, 0
    needed = schema.get("required")
    names = [n for n in needed if isinstance(n, str)] if isinstance(needed, list) else []
    described = {
        str(k): v["description"].strip()
        for k, v in props.items()
        if isinstance(v, dict)
        and isinstance(v.get("description"), str)
        and v["description"].strip()
    }
    required = tuple(described.get(n) or " ".join(split_identifier(n)) for n in names if n in props)
    return required, len(props), len(described)


def _search_text(tool: Tool, fn: dict[str, Any]) -> str:
    """The tool's search-only text: the wire field, else the MCP ``_meta`` key, else ``""``."""
    if isinstance(tool.search_text, str) and tool.search_text.strip():
        return tool.search_text.strip()
    meta = fn.get("_meta")
    text = meta.get(SEARCH_TEXT_META) if isinstance(meta, dict) else None
    return text.strip() if isinstance(text, str) else ""


def _function_object(definition: dict[str, Any], name: str) -> dict[str, Any]:
    """The dict holding name/description/schema, whichever provider shape wraps it."""
    inner = definition.get("function")
    if isinstance(inner, dict):
        return inner
    for key in _DECLARATION_KEYS:
        decls = definition.get(key)
        if isinstance(decls, list):
            dicts = [d for d in decls if isinstance(d, dict)]
            match = next((d for d in dicts if d.get("name") == name), None)
            return match or (dicts[0] if dicts else {})
    return definition


def _walk_schema(schema: dict[str, Any], out: list[str], depth: int) -> None:
    """Append property names, descriptions and enum values, depth-first, bounded."""
    if depth > _MAX_SCHEMA_DEPTH:
        return
    props = schema.get("properties")
    if isinstance(props, dict):
        for prop_name, prop in props.items():
            out.append(" ".join(split_identifier(str(prop_name))))
            if isinstance(prop, dict):
                _describe(prop, out)
                _walk_schema(prop, out, depth + 1)
    for key in _NESTED_KEYS:
        nested = schema.get(key)
        if isinstance(nested, dict):
            _describe(nested, out)
            _walk_schema(nested, out, depth + 1)
    for key in _VARIANT_KEYS:
        variants = schema.get(key)
        if isinstance(variants, list):
            for variant in variants:
                if isinstance(variant, dict):
                    _walk_schema(variant, out, depth + 1)


def _describe(prop: dict[str, Any], out: list[str]) -> None:
    desc = prop.get("description")
    if isinstance(desc, str) and desc.strip():
        out.append(desc.strip())
    enum = prop.get("enum")
    if isinstance(enum, list):
        out.extend(str(v) for v in enum if isinstance(v, str | int | float) and str(v))
