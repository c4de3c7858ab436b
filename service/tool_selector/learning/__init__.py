"""Learning from what the model calls: remembered searches, feedback, evidence per scope."""
