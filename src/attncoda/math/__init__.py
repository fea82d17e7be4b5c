"""The math layer: Aitchison geometry, classical metrics, verdicts, synthetic rows, row statistics.

numpy (and numba for :mod:`.rowstats`) only; it never imports the engine, the studies or the face.
"""
