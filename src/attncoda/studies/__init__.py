"""The studies: one module per question a chapter asks. Most take signatures (arrays). Those that gather a chapter's
numbers take a model name (or checkpoints) and get their signatures from the engine: :mod:`.measurement`,
:mod:`.collapse` (``walk``, ``endpoint``), :mod:`.pruning` (``sweep``) and :mod:`.sink_search` (which also trains)."""
