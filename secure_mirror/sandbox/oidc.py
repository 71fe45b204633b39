"""The sandbox's OAuth 2.0 identity provider: a small HTTP server on loopback with a client-credentials token endpoint and a
JWKS endpoint, so OAUTHBEARER runs as users run it (Kafka's OAuthBearerLoginCallbackHandler and librdkafka's
``oidc`` method fetch a signed JWT; the brokers' OAuthBearerValidatorCallbackHandler checks it against the keys),
rather than with Kafka's unsecured JWS, which no production cluster accepts.

Plain HTTP, on purpose: librdkafka 2.8 (kcat, confluent-kafka, so pre-flight) fetches tokens with libcurl against
the system's CA store only (its rdhttp.c sets no CA of its own and it has no setting for one), so an endpoint signed
by the sandbox CA could not be reached by it. Pre-flight warns about an http token endpoint, as it should.

Run as ``python -m secure_mirror.sandbox.oidc --dir DIR --port PORT``. DIR holds ``clients.json`` (client id -> the
file holding its secret); the signing key is made at start and never leaves the process. A token's ``sub`` is the
client id, so the brokers see ``User:<client id>``.
"""

from __future__ import annotations

import argparse
import base64
import hmac
import json
import subprocess
import sys
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from secure_mirror.sandbox import procs

TOKEN_PATH, JWKS_PATH = "/oauth2/token", "/oauth2/jwks"
TOKEN_LIFETIME = 3600
IDP_HOST = "idp.corp.test"  # the name of the https endpoint (scripts/setup maps it to loopback)
KEY_ID = "sandbox-1"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _int_b64(value: int) -> str:
    return _b64(value.to_bytes((value.bit_length() + 7) // 8, "big"))


class Signer:
    """RS256 JWTs and the JWKS that verifies them."""

    def __init__(self):
        from cryptography.hazmat.primitives.asymmetric import rsa

        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def jwks(self) -> dict:
        numbers = self.key.public_key().public_numbers()
        return {
            "keys": [
                {
                    "kty": "RSA",
                    "use": "sig",
                    "alg": "RS256",
                    "kid": KEY_ID,
                    "n": _int_b64(numbers.n),
                    "e": _int_b64(numbers.e),
                }
            ]
        }

    def token(self, subject: str, scope: str | None, now: int | None = None) -> str:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        now = int(time.time()) if now is None else now
        header = {"alg": "RS256", "typ": "JWT", "kid": KEY_ID}
        claims = {"sub": subject, "iat": now, "exp": now + TOKEN_LIFETIME, "iss": "secure-mirror-sandbox"}
        if scope:
            claims["scope"] = scope
        signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
        signature = self.key.sign(signing_input.encode("ascii"), padding.PKCS1v15(), hashes.SHA256())
        return f"{signing_input}.{_b64(signature)}"


def client_credentials(headers, body: str) -> tuple[str, str] | None:
    """(client id, secret) from HTTP Basic (both URL-encoded, RFC 6749 2.3.1) or the form's client_id/secret."""
    auth = headers.get("Authorization") or ""
    if auth.startswith("Basic "):
        try:
            pair = base64.b64decode(auth[6:], validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return None
        client, _, secret = pair.partition(":")
        return urllib.parse.unquote_plus(client), urllib.parse.unquote_plus(secret)
    form = urllib.parse.parse_qs(body)
    if "client_id" in form and "client_secret" in form:
        return form["client_id"][0], form["client_secret"][0]
    return None


def make_handler(signer: Signer, clients: dict[str, Path]):
    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):  # http.server's name
            if self.path == JWKS_PATH:
                self._send(200, signer.jwks())
            else:
                self._send(404, {"error": "not_found"})

        def do_POST(self):  # http.server's name
            if self.path != TOKEN_PATH:
                return self._send(404, {"error": "not_found"})
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode("utf-8", "replace")
            form = urllib.parse.parse_qs(body)
            if form.get("grant_type", [""])[0] != "client_credentials":
                return self._send(400, {"error": "unsupported_grant_type"})
            found = client_credentials(self.headers, body)
            if found is None or found[0] not in clients:
                return self._send(401, {"error": "invalid_client"})
            expected = clients[found[0]].read_bytes().rstrip(b"\n")
            if not hmac.compare_digest(found[1].encode("utf-8"), expected):
                return self._send(401, {"error": "invalid_client"})
            scope = form.get("scope", [None])[0]
            self._send(
                200,
                {
                    "access_token": signer.token(found[0], scope),
                    "token_type": "Bearer",
                    "expires_in": TOKEN_LIFETIME,
                    **({"scope": scope} if scope else {}),
                },
            )

        def log_message(self, fmt, *args):  # one line per request, no secrets (the path and status only)
            print(f"{self.address_string()} {fmt % args}", flush=True)

    return Handler


def serve(folder: Path, port: int, tls_port: int | None = None) -> None:
    """http on ``port``; with ``tls_port`` the same endpoints (same signing key) over HTTPS too, with the certificate
    and key in ``folder/server.pem`` (issued by the sandbox's CA for IDP_HOST): what a profile naming the token
    endpoint's CA (sasl.token_endpoint_ca) talks to."""
    import ssl
    import threading

    clients = {cid: Path(path) for cid, path in json.loads((folder / "clients.json").read_text()).items()}
    handler = make_handler(Signer(), clients)
    if tls_port is not None:
        secure = ThreadingHTTPServer(("127.0.0.1", tls_port), handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(folder / "server.pem")
        secure.socket = context.wrap_socket(secure.socket, server_side=True)
        threading.Thread(target=secure.serve_forever, daemon=True).start()
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    print(f"serving on {port}" + (f" and {tls_port} (https)" if tls_port else ""), flush=True)
    server.serve_forever()


def launch(folder: Path, clients: dict[str, Path], port: int, tls_port: int | None = None) -> subprocess.Popen:
    """Start :func:`serve` as a process of its own (its log ``folder/oidc.log``) for ``clients`` (client id -> the
    file holding its secret); :func:`wait_ready` waits until it serves."""
    (folder / "clients.json").write_text(json.dumps({cid: str(path) for cid, path in clients.items()}))
    tls = ["--tls-port", str(tls_port)] if tls_port else []
    return procs.start(
        [sys.executable, "-m", "secure_mirror.sandbox.oidc", "--dir", str(folder), "--port", str(port), *tls],
        env=procs.inherited_env("PYTHONPATH"),
        log=folder / "oidc.log",
    )


def wait_ready(proc: subprocess.Popen, folder: Path, port: int, timeout: float) -> None:
    procs.wait_until(
        lambda: procs.tcp_open(port),
        what="the sandbox's identity provider",
        timeout=timeout,
        proc=proc,
        log=folder / "oidc.log",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="secure_mirror.sandbox.oidc")
    parser.add_argument("--dir", required=True, type=Path)
    parser.add_argument("--port", required=True, type=int)
    parser.add_argument("--tls-port", type=int)
    args = parser.parse_args(argv)
    serve(args.dir, args.port, args.tls_port)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
