"""The scale benchmark's disk read-ahead (benchmarks/harness/read_ahead.py): which setting holds the sandbox's disk, that it
is set for the run and put back after it, and what is recorded when it cannot be; and the page-cache share of the
source's files (benchmarks/scale/probes.py), on files of a temporary folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchmarks.harness import read_ahead
from benchmarks.scale import probes

MOUNTS = """\
/dev/vda1 / ext4 rw,relatime 0 0
tmpfs /dev/shm tmpfs rw 0 0
/dev/nvme0n1 /data xfs rw 0 0
"""


def fake_sys(root: Path, kb: int = 8192) -> Path:
    """A /sys with disk vda (read-ahead ``kb``) and its partition vda1, linked as the kernel links them."""
    disk = root / "devices" / "virtio0" / "block" / "vda"
    (disk / "queue").mkdir(parents=True)
    (disk / "queue" / "read_ahead_kb").write_text(f"{kb}\n")
    (disk / "vda1").mkdir()
    links = root / "class" / "block"
    links.mkdir(parents=True)
    (links / "vda").symlink_to(disk)
    (links / "vda1").symlink_to(disk / "vda1")
    return disk / "queue" / "read_ahead_kb"


def test_the_device_is_that_of_the_longest_mount_point_holding_the_folder():
    assert read_ahead.mount_of(MOUNTS, Path("/tmp/secure-mirror-scale-x")) == ("/dev/vda1", "ext4")
    assert read_ahead.mount_of(MOUNTS, Path("/data/x")) == ("/dev/nvme0n1", "xfs")
    assert read_ahead.mount_of(MOUNTS, Path("/dev/shm/x")) == ("tmpfs", "tmpfs")
    assert read_ahead.mount_of("", Path("/tmp")) == ("", "unknown")


def test_a_partitions_setting_is_its_disks(tmp_path):
    setting = fake_sys(tmp_path)
    assert read_ahead.setting_file("/dev/vda1", tmp_path) == setting
    assert (
        read_ahead.setting_file("/dev/vda", tmp_path)
        == tmp_path / "class" / "block" / "vda" / "queue" / "read_ahead_kb"
    )
    assert read_ahead.setting_file("tmpfs", tmp_path) is None
    assert read_ahead.setting_file("/dev/sdz", tmp_path) is None


def test_the_read_ahead_is_set_for_the_run_and_put_back_after_it(tmp_path):
    setting = fake_sys(tmp_path, kb=8192)
    with read_ahead.set_for(Path("/tmp/x"), 128, MOUNTS, tmp_path) as disk:
        assert setting.read_text().strip() == "128"
        assert disk == {"device": "/dev/vda1", "read_ahead_kb_before": 8192, "read_ahead_kb": 128}
    assert setting.read_text().strip() == "8192"


def test_the_read_ahead_is_put_back_when_the_run_fails(tmp_path):
    setting = fake_sys(tmp_path, kb=4096)
    with pytest.raises(RuntimeError), read_ahead.set_for(Path("/tmp/x"), 128, MOUNTS, tmp_path):
        raise RuntimeError("a contender failed")
    assert setting.read_text().strip() == "4096"


def test_zero_leaves_the_disk_as_it_is(tmp_path):
    setting = fake_sys(tmp_path, kb=8192)
    with read_ahead.set_for(Path("/tmp/x"), 0, MOUNTS, tmp_path) as disk:
        assert disk["read_ahead_kb"] == 8192
    assert setting.read_text().strip() == "8192"


def test_what_is_no_block_device_is_recorded_as_such(tmp_path):
    fake_sys(tmp_path)
    with read_ahead.set_for(Path("/dev/shm/x"), 128, MOUNTS, tmp_path) as disk:
        assert disk == {"device": "tmpfs", "read_ahead_kb": None, "why": "no block device's setting found"}


def test_a_setting_that_cannot_be_written_is_recorded_with_the_reason(tmp_path, monkeypatch):
    setting = fake_sys(tmp_path, kb=8192)
    real_write = Path.write_text

    def refused(path: Path, text: str, *args, **kwargs):
        if path == setting:
            raise PermissionError(13, "Permission denied")
        return real_write(path, text, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", refused)  # as /sys refuses a user who is not root
    with read_ahead.set_for(Path("/tmp/x"), 128, MOUNTS, tmp_path) as disk:
        assert disk["read_ahead_kb"] == 8192
        assert disk["why"] == "could not set 128: Permission denied"
    assert setting.read_text().strip() == "8192"


@pytest.mark.skipif(shutil.which("fincore") is None, reason="util-linux's fincore is not installed")
def test_the_cached_share_is_of_all_the_files_bytes(tmp_path):
    written = tmp_path / "written.log"
    written.write_bytes(b"x" * 65536)  # just written: in the page cache
    sparse = tmp_path / "sparse.log"
    with open(sparse, "wb") as fh:
        fh.truncate(65536)  # a hole: nothing cached
    assert probes.cached_share([written]) == 1.0
    assert probes.cached_share([written, sparse]) == 0.5
    assert probes.cached_share([]) is None


def test_the_report_says_the_read_ahead_and_whether_the_run_changed_it():
    changed = {"device": "/dev/vda", "read_ahead_kb_before": 8192, "read_ahead_kb": 128}
    assert read_ahead.sentence(changed) == "the disk's read-ahead 128 KiB (set from 8,192 KiB for the run)"
    assert read_ahead.sentence({**changed, "read_ahead_kb": 8192}) == "the disk's read-ahead 8,192 KiB"
    assert read_ahead.sentence(None) == "the disk's read-ahead not recorded"
    assert read_ahead.sentence({"device": "tmpfs", "read_ahead_kb": None}) == "the disk's read-ahead not recorded"
