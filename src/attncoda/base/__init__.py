"""The base layer: errors, folders, checksums, atomic and hashed files, provenance.

It imports nothing else of attncoda, so every other layer may use it.
"""
