"""The read-ahead of the disk under the brokers' logs, set for a benchmark's run and put back after it.

Why it matters (benchmarks/NOTES.md section 16): a broker preallocates two sparse index files of 10 MiB for every
partition it creates (``segment.index.bytes``) and maps them. The first write into a mapped file page-faults, and the
kernel reads ahead around the fault as far as the disk's ``read_ahead_kb``. With Linux's default of 128 KiB a fresh
partition costs the page cache 256 KiB; on a disk set to 8,192 KiB (as this project's machines are) it costs 16 MiB,
so the 1,000 source and 1,000 target partitions of a scale run fill the page cache with some 17 GB of zeros each
side, the source's records are evicted, and a contender then waits on the disk for them. ``--read-ahead-kb`` (default
128) sets the disk to Linux's default for the run when the harness may write the setting, and the results say what it
was and what it ran with. A harness stopped by SIGKILL cannot put it back: ``read_ahead_kb_before`` in its results
says what to write into ``/sys/block/<disk>/queue/read_ahead_kb``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LINUX_DEFAULT_KB = 128
SYS = Path("/sys")


def mount_of(mounts: str, folder: Path) -> tuple[str, str]:
    """The device and file system type (``/dev/vda``, ``ext4``) of the longest mount point holding ``folder``, from
    ``/proc/mounts``'s text; ``("", "unknown")`` when none does."""
    best, found = "", ("", "unknown")
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = str(folder) == point or str(folder).startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, found = point, (fields[0], fields[2])
    return found


def setting_file(device: str, sys_root: Path = SYS) -> Path | None:
    """The ``read_ahead_kb`` file of the disk holding block device ``device`` (a partition's is its disk's), or None
    for what is no block device (tmpfs, overlay)."""
    if not device.startswith("/dev/"):
        return None
    block = sys_root / "class" / "block" / Path(device).name
    for candidate in (block, block.resolve().parent if block.exists() else None):
        if candidate is not None and (candidate / "queue" / "read_ahead_kb").exists():
            return candidate / "queue" / "read_ahead_kb"
    return None


@contextmanager
def set_for(folder: Path, kb: int, mounts: str, sys_root: Path = SYS) -> Iterator[dict]:
    """While the block runs, the read-ahead of the disk under ``folder`` is ``kb`` (0: left as it is); put back
    after. Yields what was found and done, for the results: the device, the setting before and during the run, or
    why it was not set."""
    device, _ = mount_of(mounts, folder)
    path = setting_file(device, sys_root)
    if path is None:
        yield {"device": device or None, "read_ahead_kb": None, "why": "no block device's setting found"}
        return
    before = int(path.read_text().strip())
    record: dict = {"device": device, "read_ahead_kb_before": before, "read_ahead_kb": before}
    if kb <= 0 or kb == before:
        yield record
        return
    try:
        path.write_text(f"{kb}\n")
    except OSError as exc:
        yield {**record, "why": f"could not set {kb}: {exc.strerror or exc}"}
        return
    record["read_ahead_kb"] = kb
    try:
        yield record
    finally:
        path.write_text(f"{before}\n")


def sentence(disk: dict | None) -> str:
    """The sandbox disk's read-ahead for a report (a results file from before it was recorded has none)."""
    if not disk or disk.get("read_ahead_kb") is None:
        return "the disk's read-ahead not recorded"
    before = disk.get("read_ahead_kb_before", disk["read_ahead_kb"])
    changed = f" (set from {before:,} KiB for the run)" if before != disk["read_ahead_kb"] else ""
    return f"the disk's read-ahead {disk['read_ahead_kb']:,} KiB{changed}"
