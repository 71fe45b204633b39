"""An OAuth 2 client-credentials token for librdkafka's ``oauth_cb``, fetched here, in Python.

librdkafka's own OIDC login (``sasl.oauthbearer.method=oidc``, what ``librdkafka.conf`` renders) checks the token
endpoint's certificate against the system's CA store only: librdkafka 2.8 has no setting for another CA. When the
profile names the token endpoint's CA (``sasl.token_endpoint_ca``), secure_mirror's own librdkafka clients
(pre-flight, lag, verify) fetch the token with this function instead, trusting that CA, as Kafka's Java client does.
"""

from __future__ import annotations

import base64
import json
import ssl
import time
import urllib.parse
import urllib.request


class TokenError(Exception):
    """The token endpoint gave no token; the message names the endpoint and its answer (never the secret)."""


def fetch_token(
    url: str,
    client_id: str,
    client_secret: str,
    scope: str | None,
    ca_file: str | None,
    timeout: float,
    _oauth_config: str | None = None,
) -> tuple[str, float, str]:
    """(token, expiry in seconds since the epoch, principal) as confluent-kafka's ``oauth_cb`` returns them."""
    form = {"grant_type": "client_credentials", **({"scope": scope} if scope else {})}
    basic = base64.b64encode(
        f"{urllib.parse.quote_plus(client_id)}:{urllib.parse.quote_plus(client_secret)}".encode()
    ).decode()
    request = urllib.request.Request(
        url,
        data=urllib.parse.urlencode(form).encode(),
        method="POST",
        headers={
            "Authorization": f"Basic {basic}",
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
        },
    )
    context = ssl.create_default_context(cafile=ca_file) if url.lower().startswith("https") else None
    try:
        # url: the profile's token_endpoint_url, which validate holds to http:// or https://
        with urllib.request.urlopen(request, timeout=timeout, context=context) as answer:
            body = json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        raise TokenError(
            f"the token endpoint {url} answered {exc.code}: {exc.read()[:200].decode(errors='replace')}"
        ) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise TokenError(f"no token from {url}: {getattr(exc, 'reason', exc)}") from None
    if "access_token" not in body:
        raise TokenError(f"the token endpoint {url} answered without an access_token")
    return body["access_token"], time.time() + float(body.get("expires_in", 300)), client_id


def token_served(client, conf: dict):
    """``client`` once it holds its first token: confluent-kafka runs ``oauth_cb`` only from ``poll``, and a client
    that never polls before its first request (an AdminClient, a consumer listing topics) would wait for it."""
    if callable(conf.get("oauth_cb")):
        client.poll(0)
    return client
