"""The sandbox identity provider's pure parts: the JWTs it signs verify with the key its JWKS publishes, and client
credentials are read as RFC 6749 sends them (HTTP Basic with URL-encoded parts, or the form)."""

from __future__ import annotations

import base64
import json

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from secure_mirror.sandbox import oidc


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def test_a_token_verifies_with_the_published_key_and_names_the_client():
    signer = oidc.Signer()
    token = signer.token("mirror", "kafka", now=1_000)
    header, claims, signature = token.split(".")
    key = signer.jwks()["keys"][0]
    public = rsa.RSAPublicNumbers(
        int.from_bytes(_unb64(key["e"]), "big"), int.from_bytes(_unb64(key["n"]), "big")
    ).public_key()
    public.verify(_unb64(signature), f"{header}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256())
    assert json.loads(_unb64(header)) == {"alg": "RS256", "typ": "JWT", "kid": key["kid"]}
    assert json.loads(_unb64(claims)) == {
        "sub": "mirror",
        "iat": 1_000,
        "exp": 1_000 + oidc.TOKEN_LIFETIME,
        "iss": "secure-mirror-sandbox",
        "scope": "kafka",
    }


def test_client_credentials_from_basic_auth_or_the_form():
    basic = base64.b64encode(b"mir%3Aror:s%2Bc:r%20t").decode()
    assert oidc.client_credentials({"Authorization": f"Basic {basic}"}, "") == ("mir:ror", "s+c:r t")
    assert oidc.client_credentials({}, "grant_type=client_credentials&client_id=m&client_secret=s") == ("m", "s")
    assert oidc.client_credentials({"Authorization": "Basic !!"}, "") is None
    assert oidc.client_credentials({}, "grant_type=client_credentials") is None
