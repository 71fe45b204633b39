"""The built-in test bed: a real MIT KDC with two realms and two kerberized KRaft Kafka clusters."""

from secure_mirror.sandbox.bed import Sandbox

__all__ = ["Sandbox"]
