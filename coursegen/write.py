"""Write stage: the only code that writes to disk. Builds into a temporary folder, then swaps."""
from __future__ import annotations

import os
import shutil
from pathlib import Path


def write_site(outputs: dict[str, bytes], site: Path) -> None:
    """Replace `site` with exactly `outputs`; on any failure the previous site stays as it was."""
    site = site.resolve()
    staging = site.with_name(f".{site.name}.staging-{os.getpid()}")
    retired = site.with_name(f".{site.name}.retired-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        for folder in sorted({(staging / rel).parent for rel in outputs}):  # each folder once, not per file
            folder.mkdir(parents=True, exist_ok=True)
        for rel, data in outputs.items():
            (staging / rel).write_bytes(data)
        if site.exists():
            site.rename(retired)
        staging.rename(site)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(retired, ignore_errors=True)


def update_site(outputs: dict[str, bytes], previous: dict[str, bytes], site: Path) -> list[str]:
    """Write only the files that changed since `previous` and delete vanished ones; return changed paths."""
    changed = [rel for rel, data in outputs.items() if previous.get(rel) != data]
    for rel in changed:
        target = site / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_bytes(outputs[rel])
        tmp.replace(target)
    for rel in set(previous) - set(outputs):
        (site / rel).unlink(missing_ok=True)
    return changed
