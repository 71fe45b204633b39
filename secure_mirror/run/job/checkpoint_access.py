"""The checkpoint folder as the job sees it, through Hadoop's FileSystem, and the fingerprint that guards it."""

from __future__ import annotations

import json

from secure_mirror.errors import EXIT_BAD_INPUT
from secure_mirror.profile.job_settings import FINGERPRINT_FILE
from secure_mirror.run.checkpoint import fingerprint_mismatch
from secure_mirror.run.job.outcome import JobRefused


class Checkpoint:
    """The checkpoint folder through Hadoop's FileSystem (a local path, hdfs://, s3a:// ...)."""

    def __init__(self, spark, location: str):
        self.jvm = spark._jvm
        self.location = location.rstrip("/")
        self.path = self.jvm.org.apache.hadoop.fs.Path(self.location)
        self.fs = self.path.getFileSystem(spark._jsc.hadoopConfiguration())

    def _child(self, name: str):
        return self.jvm.org.apache.hadoop.fs.Path(self.location + "/" + name)

    def has_offsets(self) -> bool:
        offsets = self._child("offsets")
        return bool(self.fs.exists(offsets)) and len(self.fs.listStatus(offsets)) > 0

    def latest_commit(self) -> int:
        """The newest batch or epoch id in the commit log, -1 when none."""
        commits = self._child("commits")
        if not self.fs.exists(commits):
            return -1
        names = [status.getPath().getName() for status in self.fs.listStatus(commits)]
        return max((int(name) for name in names if name.isdigit()), default=-1)

    def modified_ms(self, name: str) -> int | None:
        """When a file of the checkpoint was last written (ms since the epoch), None when it is not there."""
        path = self._child(name)
        return int(self.fs.getFileStatus(path).getModificationTime()) if self.fs.exists(path) else None

    def read(self, name: str) -> str | None:
        path = self._child(name)
        if not self.fs.exists(path):
            return None
        stream = self.fs.open(path)
        try:
            return self.jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8")
        finally:
            stream.close()

    def write(self, name: str, text: str) -> None:
        self.fs.mkdirs(self.path)
        stream = self.fs.create(self._child(name), True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()


def check_fingerprint(checkpoint: Checkpoint, expected: dict) -> None:
    """Refuse a checkpoint written for other topics or another rename rule; stamp a new one."""
    stored_text = checkpoint.read(FINGERPRINT_FILE)
    if stored_text is None:
        if checkpoint.has_offsets():
            raise JobRefused(
                f"the checkpoint {checkpoint.location} holds offsets but no {FINGERPRINT_FILE}, so it "
                "may belong to another job; point mirror.checkpoint_location at a new folder",
                EXIT_BAD_INPUT,
            )
        checkpoint.write(FINGERPRINT_FILE, json.dumps(expected, indent=2, sort_keys=True) + "\n")
        return
    problem = fingerprint_mismatch(checkpoint.location, json.loads(stored_text), expected)
    if problem is not None:
        raise JobRefused(problem, EXIT_BAD_INPUT)
