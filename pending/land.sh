#!/usr/bin/env bash
# Land what waits in pending/ with a rebuilt record (pending/README.md): apply every patch in the README's order,
# unpack every cache that fits this CPU, and rebuild the book. Run it from the checkout's root on main, with a clean
# work tree and nothing else on the machine. It commits nothing: compare the new record with the old one first.
set -euo pipefail

test -f pending/README.md || { echo "land.sh: run it from the checkout's root" >&2; exit 1; }
test -z "$(git status --porcelain)" || { echo "land.sh: the work tree has changes; commit or stash them first" >&2; exit 1; }
before=$(git rev-parse --short HEAD)

for patch in $(grep -o '^| `[A-Za-z0-9_.-]*\.patch`' pending/README.md | tr -d '|` '); do
  git am -q "pending/$patch"
  echo "applied $patch"
done

make venv models
# a cache file: a manifest line, then {"path", "entry"} lines; written only on a CPU of the kind that computed it (a
# float32 evaluation's cache key does not name the CPU), and never over an entry that is there
for cache_file in pending/*.jsonl; do
  [ -e "$cache_file" ] || continue
  .venv/bin/python - "$cache_file" <<'PY'
import json, os, sys
from pathlib import Path

from attncoda.base.paths import cache_dir
from attncoda.engine.bf16_products import native_bf16_cpu

source = Path(sys.argv[1])
lines = source.read_text().splitlines()
manifest = json.loads(lines[0])["manifest"]
if manifest["native_bf16"] != native_bf16_cpu():
    print(f"skipped {source}: computed on {manifest['cpu']} ({manifest['capability']}), a CPU of another kind than this one")
    sys.exit(0)
root, written = cache_dir(), 0
for line in lines[1:]:
    item = json.loads(line)
    path = root / item["path"]
    if path.exists():
        continue
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".part")
    partial.write_text(json.dumps(item["entry"]))
    os.replace(partial, path)
    written += 1
print(f"{source}: {written} of {len(lines) - 1} entries written into {root} (computed on {manifest['cpu']}, {manifest['capability']})")
PY
done

/usr/bin/time -v make book 2> /tmp/land-book-time.txt
grep -E "Elapsed|Maximum resident" /tmp/land-book-time.txt || true
echo
echo "The record is rebuilt. Next (pending/README.md):"
echo "  git rm pending/*.patch pending/*.tar.gz, empty the README's table, and commit with data/results"
echo "  .venv/bin/python -m attncoda.face.cross_machine $before HEAD '<the two CPUs>' --record   # if this CPU is not the record's; commit data/verify"
