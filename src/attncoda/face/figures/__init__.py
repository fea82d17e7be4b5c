"""The book's figures, one module per part: :mod:`.theory` (chapters 1-2), :mod:`.measurement` (3), :mod:`.collapse` (4),
:mod:`.clustering` (5) and :mod:`.pruning` (6); what they share is in :mod:`attncoda.face.plots`."""
