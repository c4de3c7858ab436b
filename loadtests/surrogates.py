"""What reading lone surrogate escapes would cost if every body were rewritten first:

    PYTHONPATH=service:. python -m loadtests.surrogates [--tools 4000] [--calls 50]

One body of ``--tools`` tools with full definitions, ``<`` escaped as ``\\u003c`` as Context
Gateway sends it; prints the mean of ``--calls`` head decodes (``decoding._head``, what a
warm request decodes), of ``mend_surrogates`` on the same bytes (the rewrite's scan), and of
a whole ``Decoder.decode`` of the same body with one lone surrogate escape in its pattern
(refused, rewritten, decoded again) beside the valid body's. docs/performance.md says why
only refused bodies are rewritten.
"""

from __future__ import annotations

import argparse
import json
import timeit
from collections.abc import Callable

from tool_selector.pipeline.decoding import Decoder, _head
from tool_selector.pipeline.surrogates import mend_surrogates
from tool_selector.settings import Settings

SEARCH = "/v1/tool-discovery/search"


def body(tools: int, pattern: str = "send a message") -> bytes:
    listed = [
        {
            "name": f"tool_{i}",
            "description": f'Does <thing> {i} & "more".\nSee the docs.',
            "definition": {
                "type": "function",
                "function": {
                    "name": f"tool_{i}",
                    "parameters": {
                        "type": "object",
                        "properties": {"a": {"type": "string", "description": "the <a> value"}},
                    },
                },
            },
        }
        for i in range(tools)
    ]
    return json.dumps({"pattern": pattern, "tools": listed}).encode().replace(b"<", b"\\u003c")


def mean_ms(work: Callable[[], object], calls: int) -> float:
    return timeit.timeit(work, number=calls) / calls * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", type=int, default=4000)
    parser.add_argument("--calls", type=int, default=50)
    args = parser.parse_args()
    valid, cut = body(args.tools), body(args.tools, "send a message \ud83d")
    decoder = Decoder(Settings(max_tools=max(args.tools, 1)))
    head = mean_ms(lambda: _head(valid, SEARCH), args.calls)
    scan = mean_ms(lambda: mend_surrogates(valid), args.calls)
    whole = mean_ms(lambda: decoder.decode(valid, SEARCH), args.calls)
    again = mean_ms(lambda: decoder.decode(cut, SEARCH), args.calls)
    print(
        f"{len(valid) / 1e6:.2f} MB, {args.tools} tools: head decode {head:.2f} ms, "
        f"rewrite scan {scan:.2f} ms ({scan / head:.2f}x); Decoder.decode {whole:.2f} ms, "
        f"of the body with a lone surrogate (refused, rewritten, decoded) {again:.2f} ms"
    )


if __name__ == "__main__":
    main()
