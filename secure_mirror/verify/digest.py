"""Order-independent digests of a stream of records, in constant memory.

Each record (key, value, headers) gets a 64-bit hash. A :class:`Digest` keeps the record count, the sum of
the hashes (mod 2**64) and a small invertible Bloom lookup table (IBLT) over the hashes. Two digests are equal
exactly when the multisets are equal (up to hash collisions); when they differ, subtracting one sketch from the
other and peeling it lists the differing hashes with their multiplicity, as long as there are not many more of
them than the sketch has cells. Memory is fixed by the number of cells, whatever the number of records.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field

PRIME = (1 << 61) - 1  # ids and sums live in the field of this Mersenne prime
MASK64 = (1 << 64) - 1
HASHES = 3
DEFAULT_CELLS = 96  # per compared partition: lists up to ~60 differing records


def _field(data: bytes | None) -> bytes:
    return b"\xff" if data is None else struct.pack(">I", len(data)) + data


def record_hash(key: bytes | None, value: bytes | None, headers, ignore_prefix: str | None = None) -> int:
    """The 64-bit hash of (key, value, headers); headers whose name starts with ``ignore_prefix`` are left out."""
    parts = [_field(key), _field(value)]
    for name, header_value in headers or ():
        if ignore_prefix and name.startswith(ignore_prefix):
            continue
        parts.append(_field(name.encode("utf-8")) + _field(header_value))
    digest = hashlib.blake2b(b"".join(parts), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def _check(item: int) -> int:
    return (
        int.from_bytes(hashlib.blake2b(item.to_bytes(8, "big"), digest_size=8, person=b"check").digest(), "big") % PRIME
    )


def _cells(item: int, cells: int) -> list[int]:
    width = cells // HASHES
    seed = hashlib.blake2b(item.to_bytes(8, "big"), digest_size=12, person=b"cells").digest()
    return [i * width + int.from_bytes(seed[4 * i : 4 * i + 4], "big") % width for i in range(HASHES)]


@dataclass
class Digest:
    cells: int = DEFAULT_CELLS
    count: int = 0
    total: int = 0  # sum of record hashes mod 2**64
    counts: list[int] = field(default_factory=list)
    ids: list[int] = field(default_factory=list)
    checks: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.cells -= self.cells % HASHES
        for name in ("counts", "ids", "checks"):
            if not getattr(self, name):
                setattr(self, name, [0] * self.cells)

    def add(self, item: int, times: int = 1) -> None:
        self.count += times
        self.total = (self.total + times * item) & MASK64
        ident = item % PRIME
        check = _check(ident)
        for cell in _cells(ident, self.cells):
            self.counts[cell] += times
            self.ids[cell] = (self.ids[cell] + times * ident) % PRIME
            self.checks[cell] = (self.checks[cell] + times * check) % PRIME

    def same_as(self, other: Digest) -> bool:
        return self.count == other.count and self.total == other.total

    def to_dict(self) -> dict:
        return {"count": self.count, "digest": f"{self.total:016x}"}


def difference(left: Digest, right: Digest) -> dict[int, int] | None:
    """item -> (times in left) - (times in right), or None when the sketch cannot list every difference.

    Items come back as ids (``record_hash(...) % PRIME``), the form the sketch stores.
    """
    counts = [a - b for a, b in zip(left.counts, right.counts)]
    ids = [(a - b) % PRIME for a, b in zip(left.ids, right.ids)]
    checks = [(a - b) % PRIME for a, b in zip(left.checks, right.checks)]
    found: dict[int, int] = {}
    progress = True
    while progress:
        progress = False
        for cell in range(len(counts)):
            times = counts[cell]
            if times == 0 or times % PRIME == 0:
                continue
            ident = ids[cell] * pow(times % PRIME, -1, PRIME) % PRIME
            if checks[cell] != times * _check(ident) % PRIME:
                continue
            found[ident] = found.get(ident, 0) + times
            for other in _cells(ident, len(counts)):
                counts[other] -= times
                ids[other] = (ids[other] - times * ident) % PRIME
                checks[other] = (checks[other] - times * _check(ident)) % PRIME
            progress = True
    if any(counts) or any(ids) or any(checks):
        return None
    return {item: times for item, times in found.items() if times}
