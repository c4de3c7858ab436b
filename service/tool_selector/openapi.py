"""The OpenAPI document of the service, generated from the wire Structs and the settings.

The committed ``openapi.yaml`` is this function's output for default settings; a test fails
when they drift (regenerate with ``tool-selector export-openapi``).
"""

from __future__ import annotations

from typing import Any

import msgspec
import yaml

from tool_selector import __version__
from tool_selector.api import RANKING_HEADER, SEARCH_PATH
from tool_selector.settings import Settings
from tool_selector_client.wire import ErrorBody, SearchRequest, SearchResponse

_REF = "#/components/schemas/{name}"


def _error(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": _REF.format(name="ErrorBody")}}},
    }


#: Service tokens (``TOOL_SELECTOR_API_KEYS``); either header works. mTLS sits below HTTP.
SECURITY_SCHEMES: dict[str, Any] = {
    "bearerAuth": {
        "type": "http",
        "scheme": "bearer",
        "description": "A service token from TOOL_SELECTOR_API_KEYS(_FILE).",
    },
    "apiKeyHeader": {
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
        "description": "The same service token, as newer proxies send it.",
    },
}


def _with_headers(response: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    response["headers"] = {
        name: {"description": text, "schema": {"type": "string"}} for name, text in headers.items()
    }
    return response


def build_openapi(settings: Settings) -> dict[str, Any]:
    """The OpenAPI 3.1 document for ``settings`` (limits appear as schema bounds)."""
    (_, _, _), components = msgspec.json.schema_components(
        [SearchRequest, SearchResponse, ErrorBody], ref_template=_REF
    )
    _apply_limits(components, settings)
    search = {
        "summary": "Pick the tools that fit a search pattern",
        "operationId": "searchTools",
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": _REF.format(name="SearchRequest")}}
            },
        },
        "responses": {
            "200": {
                "description": "Selected tool names, best first; empty means no useful match.",
                "headers": {
                    RANKING_HEADER: {
                        "description": "Which ranker answered: hybrid (BM25 + the model's "
                        "embeddings), static (BM25 + static embeddings, while the model embeds "
                        "a new catalog) or lexical (BM25 alone).",
                        "schema": {"type": "string", "enum": ["hybrid", "static", "lexical"]},
                    }
                },
                "content": {
                    "application/json": {"schema": {"$ref": _REF.format(name="SearchResponse")}}
                },
            },
            "400": _error("Malformed JSON, wrong types or a limit exceeded."),
            "401": _with_headers(
                _error("Missing or wrong service token (when tokens are configured)."),
                {"WWW-Authenticate": "Always `Bearer`."},
            ),
            "408": _error("The request body did not arrive within the body timeout."),
            "413": _error("Body larger than the configured cap."),
            "415": _error("Content-Type is not application/json."),
            "503": _with_headers(
                _error(
                    "`overloaded` (in-flight cap reached, with Retry-After) or "
                    "`deadline_exceeded` (no answer within the request deadline); fail open."
                ),
                {"Retry-After": "Seconds to wait before retrying (overload only)."},
            ),
        },
        "security": [{"bearerAuth": []}, {"apiKeyHeader": []}, {}],
    }
    plain = {"type": "object", "properties": {"status": {"type": "string"}}}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "tool-selector",
            "version": __version__,
            "description": "Picks the few tools an LLM needs out of a catalog of hundreds.",
        },
        "paths": {
            SEARCH_PATH: {"post": search},
            "/healthz": {
                "get": {
                    "summary": "Liveness",
                    "operationId": "healthz",
                    "responses": {
                        "200": {
                            "description": "Alive",
                            "content": {"application/json": {"schema": plain}},
                        }
                    },
                }
            },
            "/readyz": {
                "get": {
                    "summary": "Readiness (model loaded)",
                    "operationId": "readyz",
                    "responses": {
                        "200": {
                            "description": "Ready",
                            "content": {"application/json": {"schema": plain}},
                        },
                        "503": _error("Not ready yet."),
                    },
                }
            },
        },
        "components": {"schemas": components, "securitySchemes": SECURITY_SCHEMES},
    }


def _apply_limits(components: dict[str, Any], settings: Settings) -> None:
    request = components["SearchRequest"]["properties"]
    request["top_k"]["maximum"] = settings.max_top_k
    request["pattern"]["maxLength"] = settings.max_pattern_chars
    request["tools"]["maxItems"] = settings.max_tools
    request["always_keep"]["maxItems"] = settings.max_tools
    request["always_keep"]["items"]["maxLength"] = settings.max_name_chars
    # always_keep names are checked like tool names (non-empty, no control characters)
    name = components["Tool"]["properties"]["name"]
    request["always_keep"]["items"].update(minLength=1, pattern=name["pattern"])
    tool = components["Tool"]["properties"]
    tool["name"]["maxLength"] = settings.max_name_chars
    description = tool["description"]["anyOf"][0]
    description["maxLength"] = settings.max_description_chars


def openapi_yaml(settings: Settings) -> str:
    text: str = yaml.safe_dump(build_openapi(settings), sort_keys=False, allow_unicode=True)
    return text
