"""``attncoda.monitor``: the entropy decomposition logged during training (:mod:`attncoda.engine.monitor`).

A plain call for one's own loop::

    from attncoda.monitor import AttentionMonitor
    monitor = AttentionMonitor("attention.jsonl", probe=ids, every=100)   # ids: (windows, tokens) token ids
    monitor.observe(model, step)

or a ``transformers`` Trainer callback: ``Trainer(..., callbacks=[monitor.callback()])``.
"""

from .engine.monitor import SINK_HEAD_MASS, AttentionMonitor, attention_statistics, read_log

__all__ = ["AttentionMonitor", "attention_statistics", "read_log", "SINK_HEAD_MASS"]
