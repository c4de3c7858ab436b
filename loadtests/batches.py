"""What batch encoding costs: ``python -m loadtests.batches``.

For each dataset's tool texts (the model's text, as the service builds it): token counts
(mean, p50, p95, max, share over 128 tokens), padded / real tokens when the texts are run
as the service hands them to the encoder (``TOOL_SELECTOR_EMBED_BATCH_SIZE`` texts at a
time, catalog order) and each call padded to its longest text, and the ONNX encoder's
texts per CPU-second (CPU time, so the machine's other tenants count less than in wall time)
both ways: each call padded to its longest (no length groups) and as
``OnnxEncoder.encode`` runs it now (groups of similar length, ``onnx.length_groups``).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

import numpy as np

from loadtests.coldstart import load
from tool_selector.embeddings.onnx import OnnxEncoder
from tool_selector.ranking.catalog import build_catalog
from tool_selector.settings import Settings


def rate(run: Callable[[list[str]], object], texts: list[str], chunk: int) -> float:
    """Texts per CPU-second of ``run`` over ``texts`` in calls of ``chunk``."""
    run(texts[:chunk])
    began = time.process_time()
    for start in range(0, len(texts), chunk):
        run(texts[start : start + chunk])
    return len(texts) / (time.process_time() - began)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--datasets", nargs="+", default=["sealtools", "arcade", "livemcpbench", "eval/agent"]
    )
    parser.add_argument("--tools", type=int, default=4000, help="catalog size (sampled)")
    parser.add_argument("--encode", type=int, default=320, help="texts timed per dataset")
    parser.add_argument("--chunk", type=int, default=Settings().embed_batch_size)
    args = parser.parse_args(argv)
    encoder = OnnxEncoder()
    tokenizer = encoder._tokenizer  # its own truncation
    session = encoder._session

    def padded(texts: list[str]) -> object:
        """One forward pass over the call, padded to its longest text (the old way)."""
        ids = [e.ids for e in tokenizer.encode_batch(texts)]
        return encoder._run(session, ids)

    load_avg = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {load_avg}")
    print(
        "| dataset | texts | tokens mean / p50 / p95 / max | over 128 | padded / real, "
        f"calls of {args.chunk} | texts per CPU-s, padded | grouped (now) | speed-up |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for folder in args.datasets:
        data = load(folder, args.tools, 400)
        texts = [t.dense_text() for t in build_catalog(data.tools).texts]
        lens = np.array([len(e.ids) for e in tokenizer.encode_batch(texts)])
        calls = [lens[i : i + args.chunk] for i in range(0, len(lens), args.chunk)]
        waste = sum(len(c) * c.max() for c in calls) / lens.sum()
        sample = texts[: args.encode]
        before, after = rate(padded, sample, args.chunk), rate(encoder.encode, sample, args.chunk)
        cells = [
            data.name,
            str(len(texts)),
            f"{lens.mean():.0f} / {np.percentile(lens, 50):.0f} / "
            f"{np.percentile(lens, 95):.0f} / {lens.max()}",
            f"{100 * np.mean(lens > 128):.1f}%",
            f"{waste:.2f}",
            f"{before:.1f}",
            f"{after:.1f}",
            f"{after / before:.2f}x",
        ]
        print("| " + " | ".join(cells) + " |", flush=True)
    print(f"# load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
