"""Proving the target matches the source: constant-memory digests per partition, and examples of differences."""

from secure_mirror.verify.compare import Comparison, VerifyResult, verify

__all__ = ["Comparison", "VerifyResult", "verify"]
