"""Which token realms registry credentials may go to (`oci_realms`): the decision itself, with no
network (the well-known pairs, look-alikes, the variable), and the token flow against a
registry the test serves on 127.0.0.1 naming a token service on 127.0.0.2 — over HTTPS with a
test CA — that records what reached it: nothing without HORON_REGISTRY_TOKEN_HOSTS, the Basic
credentials with it, never over plain HTTP, never after a redirect off the realm's origin.

In-process and quick (judges of `nox -s mutants` for the realms and the credentials).
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest

from horon_bundle.publish.destinations.oci_origin import Origin
from horon_bundle.publish.destinations.oci_realms import (
    KNOWN_TOKEN_HOSTS,
    TOKEN_HOSTS_VARIABLE,
    read_token_hosts,
    realm_withheld,
)
from tests.hostile_registry import Fault, HostileRegistry, Reply, Seen, json_reply, tls_pair
from tests.transport_support import BASIC, CREDENTIALS, REPO, client_of, refusal

PREFIX = "oci://127.0.0.1:"
TOKEN = "tok-9"  # noqa: S105 - what the test token service issues for the credentials
ANONYMOUS = "anon-1"  # what it issues to anyone: pull only, refused by the registry


# --- the decision, without a network ---------------------------------------------------------


@pytest.mark.parametrize(("registry", "realm"), [
    ("https://registry-1.docker.io", "https://auth.docker.io/token"),
    ("https://index.docker.io", "https://auth.docker.io/token"),
    ("https://docker.io", "https://auth.docker.io/token?x=1"),
    ("https://registry-1.docker.io", "https://AUTH.docker.IO:443/token"),
    ("https://registry.gitlab.com", "https://gitlab.com/jwt/auth"),
    ("https://ghcr.io", "https://ghcr.io/token"),  # the registry's own origin: GHCR, Quay, …
    ("https://quay.io", "https://quay.io/v2/auth"),
    ("http://127.0.0.1:5000", "http://127.0.0.1:5000/token"),
])
def test_credentials_go_to_a_registrys_own_or_well_known_token_service(registry: str,
                                                                       realm: str) -> None:
    assert realm_withheld(Origin.of(registry), realm, frozenset()) is None


@pytest.mark.parametrize(("registry", "realm", "why"), [
    ("https://evil.example", "https://auth.docker.io/token", "known to use"),  # not Docker Hub
    ("https://registry.gitlab.com", "https://auth.docker.io/token", "known to use"),
    ("https://registry-1.docker.io", "https://auth.docker.io.evil.example/token", "known to use"),
    ("https://registry-1.docker.io", "https://auth-docker.io/token", "known to use"),
    ("https://registry-1.docker.io", "https://xauth.docker.io/token", "known to use"),
    ("https://registry-1.docker.io", "https://auth.docker.io./token", "known to use"),
    ("https://registry-1.docker.io", "https://docker.io/token", "known to use"),
    ("https://registry.gitlab.com", "https://gitlab.com.evil.example/jwt/auth", "known to use"),
    ("https://registry.gitlab.com", "https://evil.gitlab.com/jwt/auth", "known to use"),
    ("https://registry-1.docker.io", "http://auth.docker.io/token", "only over HTTPS"),
    ("https://registry-1.docker.io", "https://ci:pw@auth.docker.io/token", "user information"),
    ("https://registry.example", "https://ci:pw@registry.example/token", "user information"),
    ("http://127.0.0.1:5000", "http://127.0.0.1:5001/token", "only over HTTPS"),
    ("http://127.0.0.1:5000", "https://127.0.0.1:5000/token", "known to use"),
    ("https://127.0.0.1:5000", "https://127.0.0.2:5000/token", "known to use"),
])
def test_credentials_never_go_to_any_other_realm(registry: str, realm: str, why: str) -> None:
    reason = realm_withheld(Origin.of(registry), realm, frozenset())
    assert reason is not None and why in reason
    assert "pw" not in reason


def test_the_variable_names_exact_hosts_for_https_realms_only() -> None:
    registry = Origin.of("https://registry.example")
    named = frozenset({"auth.example", "127.0.0.2"})
    assert realm_withheld(registry, "https://auth.example/token", named) is None
    assert realm_withheld(registry, "https://auth.example:8443/token", named) is None
    assert realm_withheld(registry, "https://127.0.0.2:4443/token", named) is None
    for other in ("https://eu.auth.example/t", "https://auth.example.evil/t",
                  "https://example/t", "https://127.0.0.3/t"):
        assert realm_withheld(registry, other, named) is not None, other
    assert realm_withheld(registry, "http://auth.example/token", named) == (
        "credentials go to a token service on another origin only over HTTPS, and "
        "http://auth.example:80 is not")
    assert realm_withheld(registry, "https://other.example/t", named) == (
        "credentials go to a token service on another host only when it is one the registry "
        f"is known to use or {TOKEN_HOSTS_VARIABLE} names it ({TOKEN_HOSTS_VARIABLE}="
        "other.example would allow other.example)")


def test_the_built_in_table_is_small_and_https_hosts_only() -> None:
    assert dict(KNOWN_TOKEN_HOSTS) == {
        "registry-1.docker.io": {"auth.docker.io"}, "index.docker.io": {"auth.docker.io"},
        "docker.io": {"auth.docker.io"}, "registry.gitlab.com": {"gitlab.com"}}
    with pytest.raises(TypeError):
        KNOWN_TOKEN_HOSTS["evil.example"] = frozenset()  # type: ignore[index]


def test_the_variable_is_exact_host_names_or_refused() -> None:
    assert read_token_hosts({}) == read_token_hosts({TOKEN_HOSTS_VARIABLE: " "}) == frozenset()
    assert read_token_hosts({TOKEN_HOSTS_VARIABLE: "Auth.Example, gitlab.corp.example,,"
                             " 127.0.0.2 fd00::1"}) == {"auth.example", "gitlab.corp.example",
                                                        "127.0.0.2", "fd00::1"}
    for value in ("*.example", "*", "https://auth.example", "auth.example:443",
                  "auth.example/jwt", "ci@auth.example", "-auth.example", "auth..example",
                  "auth.example,\u0430uth.example"):
        message = refusal("publish.auth", TOKEN_HOSTS_VARIABLE, read_token_hosts,
                          {TOKEN_HOSTS_VARIABLE: value})
        assert "is not a host name" in message and "no wildcard, scheme, port or path" in message


# --- a registry delegating to a token service on another host --------------------------------


@pytest.fixture(name="trust")
def trust_fixture(tmp_path: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    return tls_pair(tmp_path, "127.0.0.2")


def _token_service(anonymous: bool = False) -> Fault:
    """Issues TOKEN for the test credentials, ANONYMOUS (or 401) to anyone else."""
    def fault(seen: Seen) -> Reply:
        if seen.authorization == BASIC:
            return json_reply({"token": TOKEN})
        return json_reply({"token": ANONYMOUS}) if anonymous else Reply(401)
    return fault


def _delegating(realm: str) -> Fault:
    """A registry taking only TOKEN, naming `realm` in its challenge."""
    def fault(seen: Seen) -> Reply | None:
        if seen.authorization == f"Bearer {TOKEN}" or seen.path == "/v2/":
            return None
        return Reply(401, {"WWW-Authenticate": f'Bearer realm="{realm}",service="test",'
                                               f'scope="repository:{REPO}:pull,push"'})
    return fault


@pytest.fixture(name="service")
def service_fixture(trust: tuple[ssl.SSLContext, ssl.SSLContext]) -> Iterator[HostileRegistry]:
    """The token service on 127.0.0.2, over HTTPS with the test CA."""
    with HostileRegistry("127.0.0.2", tls=trust[0], fault=_token_service()) as service:
        yield service


def test_a_token_service_on_another_host_gets_no_credentials_unless_named(
        service: HostileRegistry, trust: tuple[ssl.SSLContext, ssl.SSLContext]) -> None:
    with HostileRegistry(fault=_delegating(f"{service.origin}/token")) as registry:
        message = refusal("publish.auth", PREFIX, client_of(registry, tls=trust[1]).get_manifest,
                          REPO, "t")
    assert message.endswith(f"GET /v2/{REPO}/manifests/t: the token realm {service.origin} "
                            "answered 401 to a request without credentials; credentials go to "
                            "a token service on another host only when it is one the registry "
                            f"is known to use or {TOKEN_HOSTS_VARIABLE} names it "
                            f"({TOKEN_HOSTS_VARIABLE}=127.0.0.2 would allow 127.0.0.2)")
    assert [s.authorization for s in service.seen] == [None]


def test_an_anonymous_token_that_is_not_enough_is_refused_naming_the_variable(
        trust: tuple[ssl.SSLContext, ssl.SSLContext]) -> None:
    with HostileRegistry("127.0.0.2", tls=trust[0], fault=_token_service(anonymous=True)) \
            as service, HostileRegistry(fault=_delegating(f"{service.origin}/token")) as registry:
        message = refusal("publish.auth", PREFIX, client_of(registry, tls=trust[1]).push_blob,
                          REPO, b"{}")
    assert message.endswith(f"HEAD /v2/{REPO}/blobs/sha256:44136fa355b3678a1146ad16f7e8649e94fb4"
                            "fc21fe77e8310c060f61caaff8a: the token bought without credentials "
                            f"was not enough; credentials go to a token service on another host "
                            f"only when it is one the registry is known to use or "
                            f"{TOKEN_HOSTS_VARIABLE} names it ({TOKEN_HOSTS_VARIABLE}=127.0.0.2 "
                            "would allow 127.0.0.2)")
    assert [s.authorization for s in service.seen] == [None]
    assert {s.authorization for s in registry.seen} == {None, f"Bearer {ANONYMOUS}"}


def test_a_named_token_service_gets_the_credentials_as_basic_and_only_it(
        service: HostileRegistry, trust: tuple[ssl.SSLContext, ssl.SSLContext]) -> None:
    environ = {**CREDENTIALS, TOKEN_HOSTS_VARIABLE: "auth.example, 127.0.0.2"}
    with HostileRegistry(fault=_delegating(f"{service.origin}/token?client=horon")) as registry:
        client = client_of(registry, environ, tls=trust[1])
        client.push_blob(REPO, b"{}")
        assert client.get_manifest(REPO, "t") is None
    assert [(s.path, s.authorization) for s in service.seen] == [
        (f"/token?client=horon&service=test&scope=repository%3A{REPO.replace('/', '%2F')}"
         "%3Apull%2Cpush", BASIC)]  # one token per repository, kept
    assert {s.authorization for s in registry.seen} == {None, f"Bearer {TOKEN}"}


def test_a_plain_http_token_service_gets_no_credentials_even_when_named() -> None:
    with HostileRegistry("127.0.0.2", fault=_token_service()) as service, \
            HostileRegistry(fault=_delegating(f"{service.origin}/token")) as registry:
        client = client_of(registry, {**CREDENTIALS, TOKEN_HOSTS_VARIABLE: "127.0.0.2"})
        message = refusal("publish.auth", PREFIX, client.get_manifest, REPO, "t")
    assert message.endswith(f"the token realm {service.origin} answered 401 to a request "
                            "without credentials; credentials go to a token service on another "
                            f"origin only over HTTPS, and {service.origin} is not")
    assert [s.authorization for s in service.seen] == [None]


def test_a_named_token_service_redirecting_elsewhere_sends_no_credentials_there(
        trust: tuple[ssl.SSLContext, ssl.SSLContext]) -> None:
    with HostileRegistry("127.0.0.2", tls=trust[0], fault=_token_service()) as elsewhere:
        moved = f"{elsewhere.origin}/token"
        with HostileRegistry("127.0.0.2", tls=trust[0],
                             fault=lambda _seen: Reply(307, {"Location": moved})) as service, \
                HostileRegistry(fault=_delegating(f"{service.origin}/token")) as registry:
            client = client_of(registry, {**CREDENTIALS, TOKEN_HOSTS_VARIABLE: "127.0.0.2"},
                               tls=trust[1])
            message = refusal("publish.auth", PREFIX, client.get_manifest, REPO, "t")
    assert message.endswith(f"the token realm {elsewhere.origin} answered 401")
    assert [s.authorization for s in service.seen] == [BASIC]  # the realm named: yes
    assert [s.authorization for s in elsewhere.seen] == [None]  # another port: no


@pytest.mark.parametrize("realm", ["https://ci:pw@127.0.0.2:{port}/token",
                                   "https://127.0.0.2:{port}@127.0.0.3/token",
                                   "ftp://127.0.0.2:{port}/token"])
def test_a_realm_that_is_not_a_safe_url_is_refused_before_it_is_asked(
        service: HostileRegistry, trust: tuple[ssl.SSLContext, ssl.SSLContext],
        realm: str) -> None:
    with HostileRegistry(fault=_delegating(realm.format(port=service.port))) as registry:
        client = client_of(registry, {**CREDENTIALS, TOKEN_HOSTS_VARIABLE: "127.0.0.2"},
                           tls=trust[1])
        message = refusal("publish.unsafe-location", PREFIX, client.get_manifest, REPO, "t")
    assert "token realm: the location" in message and "pw" not in message
    assert service.seen == []
