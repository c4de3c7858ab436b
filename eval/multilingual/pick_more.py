"""Print the agent ids of the multilingual set's second batch, in the order they were added.

The first batch took the first 50 `sentence` and the first 10 `paraphrase` queries with a
gold tool from `eval/agent/queries.jsonl`, in the order of `sha256("multilingual:" + id)`.
The second batch takes the next ones in that same order, skipping the first batch's needs
(the first 60 lines of `queries.jsonl`, matched on `source`): 51 sentence queries (all that
remain) and 9 paraphrase queries, filled up with more paraphrases if fewer sentence queries
remain.

    python eval/multilingual/pick_more.py
"""

import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
AGENT = HERE.parent / "agent" / "queries.jsonl"
PRESENT = HERE / "queries.jsonl"
WANT = {"sentence": 51, "paraphrase": 9}
TOTAL = sum(WANT.values())


def _order(agent_id: str) -> str:
    return hashlib.sha256(("multilingual:" + agent_id).encode()).hexdigest()


def _candidates(category: str, present: set[str]) -> list[str]:
    with AGENT.open(encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    ids = [r["id"] for r in rows if r["category"] == category and r.get("gold")]
    return [i for i in sorted(ids, key=_order) if i not in present]


def pick(present: set[str]) -> list[str]:
    """The next sentence ids, then the next paraphrase ids, `TOTAL` in all."""
    sentences = _candidates("sentence", present)[: WANT["sentence"]]
    paraphrases = _candidates("paraphrase", present)[: TOTAL - len(sentences)]
    return sentences + paraphrases


def _present_before_batch() -> set[str]:
    # The first 60 lines are the first batch; later lines are this batch's own output.
    with PRESENT.open(encoding="utf-8") as f:
        lines = [line for line in f if line.strip()][:60]
    return {json.loads(line)["source"] for line in lines}


def main() -> None:
    for agent_id in pick(_present_before_batch()):
        sys.stdout.write(agent_id + "\n")


if __name__ == "__main__":
    main()
