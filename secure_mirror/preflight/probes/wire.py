"""Sockets: reading a framed answer off one (exactly ``size`` bytes, or the caller's error), and the address this
machine connects to a server from."""

from __future__ import annotations

import socket


def recv_exactly(conn, size: int, error: type[Exception], who: str) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise error(f"{who} closed the connection without an answer")
        data += chunk
    return data


def local_address(host: str, port: int) -> str:
    """The address a server at ``host:port`` sees this machine connect from (what host-restricted ACLs are matched
    against); ``*`` when it cannot be told."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((host, port))
            return s.getsockname()[0]
    except OSError:
        return "*"
