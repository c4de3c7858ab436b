"""Request bodies built from the public retrieval benchmarks (the bench folder:
``TOOL_SELECTOR_BENCH_DIR``, else ``default_bench_dir``'s search): catalogs of real tool
definitions and a mix of sentence and keyword patterns. Shared by the benchmark and the Locust
file."""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from tool_selector.offline.evaluation.dataset import default_bench_dir

BENCH_DIR = default_bench_dir()
_WORDS = re.compile(r"[A-Z]?[a-z]+|[0-9]+")


@dataclass(frozen=True)
class Corpus:
    """Tools (as provider definitions) and patterns of one benchmark folder."""

    tools: list[dict[str, Any]]
    sentences: list[str]
    keywords: list[str]


@cache
def corpus(name: str = "sealtools") -> Corpus:
    folder = BENCH_DIR / name
    tools = []
    keywords = []
    for line in (folder / "tools.jsonl").read_text().splitlines():
        t = json.loads(line)
        function = {"name": t["name"], "description": t.get("description") or ""}
        if t.get("parameters"):
            function["parameters"] = t["parameters"]
        tools.append(
            {
                "name": t["name"],
                "description": t.get("description") or "",
                "definition": {"type": "function", "function": function},
            }
        )
        keywords.append(" ".join(w.lower() for w in _WORDS.findall(t["name"])[:3]))
    sentences = [
        json.loads(line)["query"] for line in (folder / "queries.jsonl").read_text().splitlines()
    ]
    return Corpus(tools=tools, sentences=sentences, keywords=keywords)


def patterns(rng: random.Random, n: int, name: str = "sealtools") -> list[str]:
    """``n`` patterns: half the benchmark's sentence queries, half keyword-style ones."""
    c = corpus(name)
    return [rng.choice(c.sentences if i % 2 else c.keywords) for i in range(n)]


def catalog(size: int, offset: int = 0, name: str = "sealtools") -> list[dict[str, Any]]:
    """A fixed catalog: ``size`` consecutive tools from ``offset`` (wrapping around)."""
    tools = corpus(name).tools
    return [tools[(offset + i) % len(tools)] for i in range(size)]


def fresh_catalog(rng: random.Random, size: int, name: str = "sealtools") -> list[dict[str, Any]]:
    """A never-seen catalog: sampled tools whose descriptions carry a unique marker, so no
    embedding of it is cached anywhere (the cold path)."""
    marker = f"rev{rng.getrandbits(48):x}"
    out = []
    for tool in rng.sample(corpus(name).tools, size):
        function = dict(tool["definition"]["function"])
        function["description"] = f"{function['description']} ({marker})"
        out.append(
            {
                "name": tool["name"],
                "description": function["description"],
                "definition": {"type": "function", "function": function},
            }
        )
    return out


def body(pattern: str, tools: list[dict[str, Any]], top_k: int = 5) -> bytes:
    return json.dumps({"pattern": pattern, "top_k": top_k, "tools": tools}).encode()


def with_controls(body: bytes, tools: list[dict[str, Any]], rng: random.Random) -> bytes:
    """``body`` with every caller's control in use: filters, budget, min_score, context."""
    request = json.loads(body)
    recent = [str(rng.choice(tools)["name"]) for _ in range(2)]
    request.update(
        filters={"deny": ["*delete*", "*remove*"], "allow_unsafe": False},
        budget={"max_bytes": 12_000, "max_tools": 16},
        min_score=0.05,
        context={
            "messages": [f"Earlier I asked for {recent[0]}.", "Done; here is what it returned."],
            "recent_tools": recent,
        },
    )
    return json.dumps(request).encode()
