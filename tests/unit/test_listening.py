"""tests/support/listening.py against this process's own sockets: an HTTP server it finds answering, a listener that
never answers, and a port nobody holds."""

from __future__ import annotations

import http.server
import os
import socket
import threading

from tests.support.listening import answers_http, listening_ports, process_tree


def test_a_processes_listening_ports_and_which_answer_http():
    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    silent = socket.create_server(("127.0.0.1", 0))  # listens, never accepts: a request waits for good
    closed = socket.create_server(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()
    try:
        http_port, silent_port = server.server_address[1], silent.getsockname()[1]
        ports = listening_ports(process_tree(os.getpid()))
        assert {http_port, silent_port} <= ports
        assert closed_port not in ports
        assert answers_http(http_port)
        assert not answers_http(silent_port, timeout=1.0)
        assert not answers_http(closed_port, timeout=1.0)
    finally:
        server.shutdown()
        server.server_close()
        silent.close()


def test_a_process_tree_holds_its_children():
    assert os.getpid() in process_tree(os.getppid())
    assert process_tree(os.getpid()) >= {os.getpid()}
