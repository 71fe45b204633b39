"""Reading a framed answer off a socket: exactly ``size`` bytes, or the caller's error."""

from __future__ import annotations


def recv_exactly(conn, size: int, error: type[Exception], who: str) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise error(f"{who} closed the connection without an answer")
        data += chunk
    return data
