"""How a static table reads a text: the words and how many of their pieces.

Shared by the static encoder (``embeddings/static.py``) and the fit of a table to its model
(``embeddings/refit.py``), so the fit moves the rows for the texts exactly as they are read.
"""

from __future__ import annotations

import re

#: BERT's pre-tokeniser's words, lower-cased first (punctuation and ``_`` split and dropped).
WORD = re.compile(r"[^\W_]+")
#: Longest text looked at, in tokens (a lookup per token: cheap, but bounded).
MAX_TOKENS = 512
