"""The studies: one module per question a chapter asks. Each takes signatures (arrays), not model names,
except :mod:`.measurement`, which gathers one model's numbers for the measurement chapter."""
