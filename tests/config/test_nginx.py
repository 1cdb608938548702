"""Debian's nginx in front of gunicorn, with the configuration the docs give
(deploy/nginx/registry.conf, rendered with free ports and a certificate made here).

Clients connect from distinct loopback addresses (all of 127.0.0.0/8 is local on Linux):
127.0.0.2 and 127.0.0.3 are two clients behind the proxy; nginx reaches gunicorn from
127.0.0.1, the one trusted proxy. Through it: each client is throttled and locked out on its
own, HSTS and Secure cookies are sent, a body over the limit is 413, and slow clients wait on
nginx while the registry sees nothing of them; a client's forged tokens of another's key
prefix spend nothing of that key's limit. Without it: a peer that is not the proxy cannot
choose its address or claim HTTPS. And a proxy left out of the trusted list is noticed.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import re
import signal
import socket
import ssl
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import psutil
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from keys.models import ApiKey, KeyEvent, token_prefix
from keys.services import key_revoke
from tests.doc_commands import OPERATIONS, command_after, run_sh
from tests.factories import course
from tests.ingestion.api.test_ratelimit import forged
from tests.ingestion.conftest import mint
from tests.services import Stack, _wait_for_port, free_port
from tests.workers import ROOT, wait_for, worker_environment

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

NGINX = Path("/usr/sbin/nginx")
SITE = ROOT / "deploy" / "nginx" / "registry.conf"
NGINX_FILL = command_after(OPERATIONS, "fill the placeholders")
CLIENT_A, CLIENT_B, ELSEWHERE = "127.0.0.2", "127.0.0.3", "127.0.0.4"
PASSWORD = "correct horse battery staple"
BOGUS = "rgk_" + "x" * 40
PAIR_LIMIT, ADDRESS_LIMIT = 5, 8
WEB = {
    "REGISTRY_HTTPS": "true",
    "REGISTRY_TRUSTED_PROXIES": "127.0.0.1",
    "REGISTRY_SIGN_IN_ADDRESS_LIMIT": str(ADDRESS_LIMIT),
    "REGISTRY_AUTH_FAILURE_RATE": "5/m",
}


# -- The stack: a certificate, gunicorn, nginx ---------------------------------------------


def self_signed_certificate(directory: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "fullchain.pem", directory / "privkey.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def replace_once(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"deploy/nginx/registry.conf should hold {old!r} once"
    return text.replace(old, new)


def render_site(*, upstream: str, http_port: int, https_port: int, cert: Path, key: Path) -> str:
    """The committed file filled by the docs' own command, with free ports on 127.0.0.1."""
    site = cert.parent / "registry.filled.conf"
    site.write_text(SITE.read_text())
    values = {
        "SERVER_NAME": "localhost",
        "HTTP_PORT": str(http_port),
        "HTTPS_PORT": str(https_port),
        "UPSTREAM": upstream,
        "SITE": str(site),
    }
    assert (cert.name, key.name) == ("fullchain.pem", "privkey.pem")  # the docs' names
    run_sh(NGINX_FILL, env={**os.environ, **values, "CERTIFICATES": str(cert.parent)})
    text = site.read_text()
    unknown = re.findall(r"@[A-Z_]+@", re.sub(r"#.*", "", text))
    assert not unknown, f"placeholders the docs' command does not fill: {unknown}"
    access_log = str(cert.parent / "registry.access.log")
    text = text.replace("/var/log/nginx/registry.access.log", access_log)
    text = replace_once(text, f"listen {http_port};", f"listen 127.0.0.1:{http_port};")
    text = replace_once(text, f"listen {https_port} ssl;", f"listen 127.0.0.1:{https_port} ssl;")
    text = replace_once(text, f"listen [::]:{http_port};\n", "")
    return replace_once(text, f"listen [::]:{https_port} ssl;\n", "")


MAIN = """
daemon off;
worker_processes 1;
{user}
pid {tmp}/nginx.pid;
error_log {tmp}/error.log info;
events {{ worker_connections 256; }}
http {{
    access_log {tmp}/access.log;
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    include {tmp}/registry.conf;
}}
"""


@dataclass
class Proxy:
    https_port: int
    http_port: int
    upstream_port: int
    ca: Path
    web_log: Path | None = None  # gunicorn's output: its access log and Django's logs

    def access_logs(self) -> str:
        """What nginx's access logs hold: the site's own, and the default one of the test's
        main configuration (where requests would go if the site logged nothing itself)."""
        logs = [self.ca.parent / "registry.access.log", self.ca.parent / "access.log"]
        return "".join(log.read_text() for log in logs if log.exists())

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.https_port}"

    def client(self, source: str) -> httpx.Client:
        """A client connecting from ``source``, trusting the test's certificate."""
        context = ssl.create_default_context(cafile=str(self.ca))
        transport = httpx.HTTPTransport(verify=context, local_address=source)
        return httpx.Client(base_url=self.url, transport=transport, timeout=30)

    def tls_socket(self, source: str) -> ssl.SSLSocket:
        context = ssl.create_default_context(cafile=str(self.ca))
        raw = socket.create_connection(
            ("127.0.0.1", self.https_port), timeout=30, source_address=(source, 0)
        )
        return context.wrap_socket(raw, server_hostname="localhost")


@contextmanager
def nginx(tmp: Path, *, upstream_port: int) -> Iterator[Proxy]:
    if not NGINX.exists():
        pytest.fail("no /usr/sbin/nginx: `make test` installs it (Debian's nginx package)")
    cert, key = self_signed_certificate(tmp)
    proxy = Proxy(free_port(), free_port(), upstream_port, cert)
    site = render_site(
        upstream=f"127.0.0.1:{upstream_port}",
        http_port=proxy.http_port,
        https_port=proxy.https_port,
        cert=cert,
        key=key,
    )
    (tmp / "registry.conf").write_text(site)
    user = "user root;" if os.geteuid() == 0 else ""  # workers write the temporary files here
    (tmp / "nginx.conf").write_text(MAIN.format(tmp=tmp, user=user))
    command = [str(NGINX), "-c", str(tmp / "nginx.conf"), "-p", str(tmp), "-e", str(tmp / "e.log")]
    checked = subprocess.run([*command, "-t"], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr
    process = subprocess.Popen(command, start_new_session=True)
    try:
        _wait_for_port(proxy.https_port)
        yield proxy
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)


@pytest.fixture(scope="module")
def proxy(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[Proxy]:
    tmp = tmp_path_factory.mktemp("nginx")
    with django_db_blocker.unblock():
        env = worker_environment(**WEB)
    with Stack(env, tmp).web() as web, nginx(tmp, upstream_port=_port(web.url)) as running:
        running.web_log = web.log
        yield running


def _port(url: str) -> int:
    return int(urlsplit(url).port or 80)


# -- Sign-in and the API, through the proxy ------------------------------------------------


@pytest.fixture
def accounts(db):
    from django.contrib.auth.models import User

    return {name: User.objects.create_user(name, password=PASSWORD) for name in ["sam", "rita"]}


def sign_in(client: httpx.Client, username: str, password: str) -> httpx.Response:
    page = client.get("/accounts/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert token, page.text[:500]
    return client.post(
        "/accounts/login/",
        data={"username": username, "password": password, "csrfmiddlewaretoken": token[1]},
        headers={"Origin": str(client.base_url).rstrip("/")},
    )


def test_tls_hsts_and_secure_cookies_are_sent(proxy, accounts):
    with proxy.client(CLIENT_A) as client:
        page = client.get("/accounts/login/")
        assert page.status_code == 200
        assert page.headers["strict-transport-security"] == "max-age=31536000; includeSubDomains"
        assert "; Secure" in page.headers["set-cookie"]
        signed_in = sign_in(client, "sam", PASSWORD)
        assert signed_in.status_code == 302
        session = [c for c in signed_in.headers.get_list("set-cookie") if "sessionid=" in c]
        assert session and "; Secure" in session[0] and "HttpOnly" in session[0]


def test_plain_http_is_redirected_but_healthz_answers_a_probe(proxy):
    base = f"http://127.0.0.1:{proxy.http_port}"
    redirected = httpx.get(f"{base}/accounts/login/")
    assert redirected.status_code == 301
    assert redirected.headers["location"].startswith("https://")
    assert httpx.get(f"{base}/healthz").status_code == 200


def test_the_redirect_to_https_keeps_a_port_other_than_443(proxy):
    redirected = httpx.get(f"http://127.0.0.1:{proxy.http_port}/accounts/login/?next=/settings/")
    assert redirected.status_code == 301
    location = redirected.headers["location"]
    assert location == f"https://127.0.0.1:{proxy.https_port}/accounts/login/?next=/settings/"
    with proxy.client(CLIENT_A) as client:
        assert client.get(location).status_code == 200


def test_the_docs_command_fills_the_placeholders_and_leaves_the_comments(tmp_path):
    site = tmp_path / "registry.conf"
    site.write_text(SITE.read_text())
    values = {"SERVER_NAME": "registry.example.org", "HTTP_PORT": "80", "HTTPS_PORT": "443"}
    values |= {"UPSTREAM": "127.0.0.1:8000", "CERTIFICATES": "/etc/tls", "SITE": str(site)}
    run_sh(NGINX_FILL, env={**os.environ, **values})
    before, after = SITE.read_text().splitlines(), site.read_text().splitlines()
    comments = [i for i, line in enumerate(before) if line.lstrip().startswith("#")]
    assert [after[i] for i in comments] == [before[i] for i in comments]
    assert not re.findall(r"@[A-Z_]+@", re.sub(r"#.*", "", site.read_text()))
    assert "        return 301 https://$host:443$request_uri;" in after


def test_sign_in_lock_outs_are_per_client_behind_the_proxy(proxy, accounts):
    with proxy.client(CLIENT_A) as a, proxy.client(CLIENT_B) as b:
        answers = [sign_in(a, "sam", "wrong").status_code for _ in range(PAIR_LIMIT)]
        assert answers == [200] * (PAIR_LIMIT - 1) + [429]
        assert sign_in(a, "sam", PASSWORD).status_code == 429  # the pair is locked
        assert sign_in(b, "sam", PASSWORD).status_code == 302  # sam, elsewhere, is not
        # Client A reaches the address limit across usernames: locked for rita too.
        failures = PAIR_LIMIT + 1  # the refused right password counts as a failure too
        for _ in range(ADDRESS_LIMIT - failures - 1):
            assert sign_in(a, "nobody", "wrong").status_code == 200
        assert sign_in(a, "nobody", "wrong").status_code == 429  # the address's last failure
        assert sign_in(a, "rita", PASSWORD).status_code == 429
        assert sign_in(b, "rita", PASSWORD).status_code == 302


def test_api_failures_from_one_client_never_throttle_another(proxy, practice):
    token = mint(practice)
    with proxy.client(CLIENT_A) as a, proxy.client(CLIENT_B) as b:

        def submit(client: httpx.Client, key: str, **headers: str) -> httpx.Response:
            return client.post(
                "/api/registry/fhir/Bundle",
                json=course("C-1"),
                headers={"Authorization": f"Bearer {key}", **headers},
            )

        # A forges B's address: nginx appends A's own, which is the one believed.
        answers = [submit(a, BOGUS, **{"X-Forwarded-For": CLIENT_B}).status_code for _ in range(6)]
        assert answers == [401] * 5 + [429]
        accepted = submit(a, token)  # a valid key is never refused for failures
        assert accepted.status_code == 202
        assert accepted.headers["content-location"].startswith(f"{proxy.url}/")  # https, host
        assert submit(b, BOGUS).status_code == 401
        assert submit(b, token).status_code == 202


def test_forged_tokens_of_a_keys_prefix_spend_nothing_of_its_owners(
    proxy, practice, other_practice
):
    """Issue 31, through the proxy: a client sending tokens made of another practice's key
    prefix and a random secret (the prefix is shown to every member) is refused, and
    throttled on its own address; the key's owner, elsewhere, is answered as ever, its "last
    used" is written by its own request alone, and no log line names a refused key's prefix."""
    token, revoked = mint(practice), mint(other_practice)
    key_revoke(practice=other_practice, via=KeyEvent.Via.COMMAND)
    with proxy.client(CLIENT_A) as attacker, proxy.client(CLIENT_B) as owner:

        def call(client: httpx.Client, endpoint: str, key: str) -> httpx.Response:
            headers = {"Authorization": f"Bearer {key}"}
            if endpoint == "receipt":
                return client.get(f"/api/registry/fhir/ingestions/{uuid.uuid4()}", headers=headers)
            return client.post(endpoint, json=course("C-9"), headers=headers)

        endpoints = ["/api/registry/fhir/Bundle", "receipt", "/api/registry/fhir/Bundle/$validate"]
        for _ in range(130):
            for endpoint in endpoints:
                assert call(attacker, endpoint, forged(token)).status_code in (401, 429)
        assert ApiKey.objects.get(prefix=token_prefix(token)).last_used_at is None
        submitted = call(owner, endpoints[0], token)
        assert submitted.status_code == 202
        receipt = owner.get(
            submitted.headers["content-location"], headers={"Authorization": f"Bearer {token}"}
        )
        assert receipt.status_code == 200
        assert call(owner, endpoints[2], token).status_code == 200
        assert ApiKey.objects.get(prefix=token_prefix(token)).last_used_at is not None
        assert call(owner, "receipt", revoked).status_code == 401
    assert proxy.web_log is not None
    logged = proxy.web_log.read_text(errors="replace")
    assert "refused revoked api key" in logged
    for prefix in (token_prefix(token), token_prefix(revoked)):
        assert prefix[len("rgk_") :] not in logged


# -- The body limit and slow clients -------------------------------------------------------


def test_the_body_limit_is_the_registrys(settings):
    limit = re.search(r"client_max_body_size (\d+)m;", SITE.read_text())
    assert limit and int(limit[1]) * 1024 * 1024 == settings.REGISTRY_MAX_BODY_BYTES


def test_a_body_over_the_limit_is_413_from_the_proxy(proxy, settings):
    connection = proxy.tls_socket(CLIENT_A)
    with connection:
        connection.sendall(
            b"POST /api/registry/fhir/Bundle HTTP/1.1\r\nHost: localhost\r\n"
            b"Content-Type: application/fhir+json\r\n"
            b"Content-Length: " + str(settings.REGISTRY_MAX_BODY_BYTES + 1).encode() + b"\r\n\r\n"
            b'{"resourceType": "Bundle"'
        )
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            piece = connection.recv(65536)
            if not piece:
                break
            answer += piece
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413")
    assert b"application/fhir+json" in head
    assert b'"OperationOutcome"' in body and b'"too-costly"' in body


def upstream_ports(proxy: Proxy) -> set[int]:
    """nginx's ends of the connections open to gunicorn now."""
    return {
        c.raddr.port
        for c in psutil.net_connections(kind="tcp4")
        if c.status == psutil.CONN_ESTABLISHED and c.laddr and c.laddr.port == proxy.upstream_port
    }


def upstream_connections(proxy: Proxy) -> int:
    """Connections open to gunicorn now (nginx keeps an idle one for 1 s)."""
    return len(upstream_ports(proxy))


def test_slow_clients_wait_on_nginx_and_the_registry_sees_nothing_of_them(proxy):
    """Eight clients send a header line at a time (and one its body a piece at a time):
    meanwhile another client is answered, and gunicorn has no connection from nginx for any
    of them until their requests are whole."""
    with ExitStack() as stack:
        slow = []
        for i in range(8):
            connection = stack.enter_context(proxy.tls_socket(CLIENT_A))
            if i == 0:
                connection.sendall(
                    b"POST /api/registry/fhir/Bundle HTTP/1.1\r\nHost: localhost\r\n"
                    b"Content-Type: application/fhir+json\r\nContent-Length: 20\r\n\r\n{"
                )
            else:
                connection.sendall(b"GET /healthz HTTP/1.1\r\n")
            slow.append(connection)
        for line in [b"Host: localhost\r\n", b"Accept: */*\r\n", b"X-Slow: 1\r\n"]:
            time.sleep(1)  # a header line a second
            for connection in slow[1:]:
                connection.sendall(line)
            slow[0].sendall(b" ")  # and a byte of body
            with proxy.client(CLIENT_B) as other:
                assert other.get("/healthz").status_code == 200
            # Whatever nginx forwarded is answered and closed; none of the slow ones was.
            wait_for(lambda: upstream_connections(proxy) == 0, timeout=10, message="idle")
        for connection in slow[1:]:
            connection.sendall(b"Connection: close\r\n\r\n")
        slow[0].sendall(b"x" * 16)
        answers = [connection.recv(65536).split(b"\r\n", 1)[0] for connection in slow]
    assert answers[1:] == [b"HTTP/1.1 200 OK"] * 7
    assert answers[0].startswith(b"HTTP/1.1 401")  # whole, forwarded, and answered


def test_nginx_keeps_its_connection_to_the_registry_and_drops_it_when_idle(proxy):
    """Requests one after another, each from a new client connection, go to gunicorn on
    one kept connection (a new one per request costs the web CPU); idle, nginx closes it
    before gunicorn's keepalive would."""
    wait_for(lambda: not upstream_ports(proxy), timeout=10, message="no upstream connection")
    seen = []
    for _ in range(6):
        with proxy.client(CLIENT_B) as client:
            assert client.get("/healthz").status_code == 200
        seen.append(upstream_ports(proxy))
    assert all(len(ports) == 1 for ports in seen), seen
    assert len(set.union(*seen)) == 1, seen
    wait_for(lambda: not upstream_ports(proxy), timeout=10, message="the idle one closed")


# -- Without the proxy ---------------------------------------------------------------------


def test_a_peer_that_is_not_the_proxy_cannot_claim_https(proxy):
    direct = httpx.Client(
        base_url=f"http://127.0.0.1:{proxy.upstream_port}",
        transport=httpx.HTTPTransport(local_address=CLIENT_A),
    )
    with direct:
        response = direct.get("/accounts/login/", headers={"X-Forwarded-Proto": "https"})
        assert response.status_code == 301  # not believed: sent to HTTPS
        assert "strict-transport-security" not in response.headers
        assert direct.get("/healthz").status_code == 200  # a load balancer's plain probe


def test_a_peer_that_is_not_the_proxy_cannot_choose_its_address(tmp_path, practice):
    """gunicorn reached directly (here without REGISTRY_HTTPS, so the API answers over HTTP):
    X-Forwarded-For from a peer that is not the proxy changes nothing."""
    env = worker_environment(REGISTRY_TRUSTED_PROXIES="127.0.0.1", REGISTRY_AUTH_FAILURE_RATE="5/m")
    token = mint(practice)
    with Stack(env, tmp_path).web() as web:

        def submit(source: str, key: str, forwarded_for: str) -> int:
            transport = httpx.HTTPTransport(local_address=source)
            with httpx.Client(base_url=web.url, transport=transport) as client:
                return client.post(
                    "/api/registry/fhir/Bundle",
                    json=course("C-1"),
                    headers={"Authorization": f"Bearer {key}", "X-Forwarded-For": forwarded_for},
                ).status_code

        answers = [submit(CLIENT_A, BOGUS, f"192.0.2.{i}") for i in range(6)]
        assert answers == [401] * 5 + [429]  # counted on its own address, whatever it said
        assert submit(CLIENT_B, BOGUS, CLIENT_A) == 401  # and naming A does not hurt B
        assert submit(ELSEWHERE, token, CLIENT_A) == 202


def test_a_proxy_missing_from_the_trusted_list_is_noticed(tmp_path):
    """Issue 31: behind nginx with REGISTRY_TRUSTED_PROXIES unset, every client looked like
    nginx and nothing said so. Now the web logs it, once a minute, naming no address."""
    env = worker_environment(REGISTRY_HTTPS="true", REGISTRY_TRUSTED_PROXIES="")
    with Stack(env, tmp_path).web() as web, nginx(tmp_path, upstream_port=_port(web.url)) as proxy:
        with proxy.client(CLIENT_A) as client:
            assert all(client.get("/healthz").status_code == 200 for _ in range(3))
        wait_for(lambda: "REGISTRY_TRUSTED_PROXIES" in web.output(), timeout=10, message="log")
        noticed = [line for line in web.output().splitlines() if "X-Forwarded-For" in line]
    assert len(noticed) == 1, noticed
    assert CLIENT_A not in noticed[0] and "127.0.0.1" not in noticed[0]


# A reset link's uid and token, and what a client may put in a path under the FHIR base.
TOKEN = "c3po42-8f1d2a6b9e0c4d7f1a2b3c4d5e6f7a8b"
SECRETS = ["pat-mk-77aa1", "chart-4711", TOKEN, "Mjc"]
PATHS = [
    f"/accounts/reset/Mjc/{TOKEN}/",
    "/api/registry/fhir/Patient/pat-mk-77aa1",
    "/api/registry/fhir/Bundle/chart-4711",
    "/api/registry/fhir/pat-mk-77aa1/_history",
]


def test_no_id_or_token_in_a_path_reaches_an_access_or_request_log(proxy):
    with proxy.client(CLIENT_A) as client:
        for path in PATHS:
            assert client.get(path).status_code < 500
        assert client.get("/healthz?after=paths").status_code == 200
    web_log = proxy.web_log
    assert web_log is not None
    wait_for(lambda: "/healthz" in proxy.access_logs(), timeout=30)
    wait_for(lambda: "/healthz" in web_log.read_text(), timeout=30)
    logs = {"nginx": proxy.access_logs(), "gunicorn and Django": web_log.read_text()}
    for name, text in logs.items():
        for secret in SECRETS:
            assert secret not in text, (name, secret)
        assert "/api/registry/fhir/Bundle/:id" in text, name
        assert "/accounts/reset/:id/" in text, name
        assert "after=paths" not in text, name


def test_the_operations_guide_fills_every_placeholder():
    placeholders = set(re.findall(r"@[A-Z_]+@", re.sub(r"#.*", "", SITE.read_text())))
    guide = (ROOT / "docs" / "operations.md").read_text()
    assert placeholders == {
        "@SERVER_NAME@",
        "@HTTP_PORT@",
        "@HTTPS_PORT@",
        "@CERTIFICATE@",
        "@CERTIFICATE_KEY@",
        "@UPSTREAM@",
    }
    for placeholder in placeholders:
        assert f"s|{placeholder}|" in guide, placeholder
