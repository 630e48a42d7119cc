"""Sample student answers used by the demo and by the grading tests (one module per notebook)."""
