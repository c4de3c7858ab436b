"""Tool text: what the ranker reads out of each provider's tool definition.

Supported shapes (SPEC.md): OpenAI Chat ``{type, function: {name, description,
parameters}}``, OpenAI Responses ``{type, name, description, parameters}``, Anthropic
``{name, description, input_schema}``, MCP ``{name, description, inputSchema}`` and
Gemini function declarations (``parameters`` / ``parametersJsonSchema``, optionally
wrapped in ``functionDeclarations``). Parameter names, descriptions and enum values
are read from JSON schemas walked to a bounded depth.
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

    def name_tokens(self) -> list[str]:
        return terms(self.bare_name)

    def namespace_tokens(self) -> list[str]:
        return terms(self.namespace)

    def description_tokens(self) -> list[str]:
        return tokenize(self.description)

    def param_tokens(self) -> list[str]:
        return tokenize(self.params)

    def dense_text(self) -> str:
        """The text embedded for this tool (versioned by ``TEXT_FORMAT_VERSION``)."""
        words = " ".join(split_identifier(self.bare_name))
        head = f"{self.namespace} {words}".strip() if self.namespace else words
        parts = [head]
        if self.description:
            parts.append(self.description)
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
    return ToolText(
        name=tool.name,
        bare_name=bare,
        namespace=namespace,
        description=description.strip(),
        params=" ".join(params)[:_MAX_PARAM_CHARS],
    )


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
