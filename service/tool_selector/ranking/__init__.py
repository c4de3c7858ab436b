"""Pure ranking: tool text, BM25, dense scores, fusion. No framework, Redis or HTTP code."""
