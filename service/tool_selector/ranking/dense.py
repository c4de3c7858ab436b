"""Dense similarity: cosine between L2-normalised query and tool embeddings.

A pattern longer than the model can read (all-MiniLM-L6-v2 reads 256 tokens, about 1,000
characters) is embedded in windows of whole sentences, and each tool takes its best window
(MaxP: Dai & Callan 2019, "Deeper Text Understanding for IR with Contextual Neural Language
Modeling"): a request stated in one sentence of a long message, around pasted material,
is then seen by the model instead of being cut off or drowned.
"""

from __future__ import annotations

import re

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]

#: Patterns up to this many characters are embedded whole (what the model reads at once).
WHOLE_CHARS = 1000
#: Most characters of one window of a longer pattern.
WINDOW_CHARS = 400
#: A sentence's or a line's end. The line break's blanks are tried only where a run of
#: blanks starts (``(?<!\s)``), not from each of its blanks (the square of the run's
#: length); a break anywhere in a run is found from its start, so the cuts are the same
#: (tests/unit/test_blank_runs_linear.py).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<!\s)\s*\n\s*")


def windows(text: str, whole: int = WHOLE_CHARS, size: int = WINDOW_CHARS) -> list[str]:
    """``[text]`` when it has at most ``whole`` characters, else its sentences (and lines)
    packed in order into windows of at most ``size`` characters (a longer sentence is split
    by characters)."""
    if len(text) <= whole:
        return [text]
    out: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(text):
        for piece in (sentence[i : i + size] for i in range(0, len(sentence), size)):
            if current and len(current) + 1 + len(piece) > size:
                out.append(current)
                current = ""
            current = f"{current} {piece}" if current else piece
    if current:
        out.append(current)
    return out or [text[:size]]


def cosine_scores(query: FloatArray, matrix: FloatArray) -> FloatArray:
    """Cosine similarity of ``query`` to each row of ``matrix`` (n, d); inputs unit-length.

    ``query`` is one vector (d,) or one per window (w, d): then each tool takes its best
    window (``windows``).
    """
    if matrix.shape[0] == 0:
        return np.zeros(0, dtype=np.float32)
    if query.ndim == 1:
        return np.asarray(matrix @ query, dtype=np.float32)
    return np.asarray((matrix @ query.T).max(axis=1), dtype=np.float32)


def normalise_rows(matrix: FloatArray) -> FloatArray:
    """Scale each row to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.asarray(matrix / norms, dtype=np.float32)
