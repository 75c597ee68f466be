"""Registry credentials: where they come from, and the origins they are ever sent to.

Credentials are `HORON_REGISTRY_USERNAME` + `HORON_REGISTRY_PASSWORD`, else the Docker config
(`$DOCKER_CONFIG/config.json`, `~/.docker/config.json`, credential helpers: read with oras-py's
loader, imported only then). They answer the registry's own challenge: after a `Basic` one
they go with every request to the registry's origin; after a `Bearer` one they buy a token
from the realm it names, kept per repository. They never go anywhere else (scheme, host,
port), with one exception: the token request to a realm on another origin that `oci_realms`
allows (HTTPS, and a host the registry is known to delegate to or the user named), and only
that request, never a redirect of it off the realm's origin (the transport, `oci_http`,
strips `Authorization` from a request to any other origin). Any other realm is asked
anonymously; a 401 from another origin (an upload `Location`, a redirect) is refused rather
than answered with credentials.
"""

from __future__ import annotations

import base64
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.strictjson import read_json
from horon_bundle.publish.destinations.interface import OciAddress
from horon_bundle.publish.destinations.oci_deadline import Deadline
from horon_bundle.publish.destinations.oci_http import Answer, RegistryHttp
from horon_bundle.publish.destinations.oci_origin import Origin, path_of
from horon_bundle.publish.destinations.oci_realms import realm_withheld

USERNAME_VARIABLE = "HORON_REGISTRY_USERNAME"
PASSWORD_VARIABLE = "HORON_REGISTRY_PASSWORD"  # noqa: S105 - the variable's name, not a secret
MAX_TOKEN_CHARS = 16 << 10  # a bearer token (JWTs of real registries: 1-4 KiB)
_PARAMETER = re.compile(  # name=value or name="quoted value", then a comma
    r'\s*([A-Za-z][A-Za-z0-9_-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]*))\s*,?')
_TOKEN = re.compile(r"[A-Za-z0-9._~+/=-]+")
_REPOSITORY = re.compile(r"/v2/(.+?)/(?:blobs|manifests|tags|referrers)/.*")


@dataclass(frozen=True, slots=True, kw_only=True)
class Credentials:
    basic: str | None = None  # base64 of `user:password`
    problem: str | None = None  # why none could be found, said when the registry asks


def find_credentials(address: OciAddress, environ: Mapping[str, str]) -> Credentials:
    username = environ.get(USERNAME_VARIABLE, "")
    password = environ.get(PASSWORD_VARIABLE, "")
    if username and password:
        return Credentials(basic=base64.b64encode(f"{username}:{password}".encode()).decode())
    if username or password:
        return Credentials(problem=f"only one of {USERNAME_VARIABLE} and {PASSWORD_VARIABLE} "
                                   "is set")
    import oras.auth.base  # type: ignore[import-untyped]  # noqa: PLC0415 - heavy: requests
    import oras.container  # type: ignore[import-untyped]  # noqa: PLC0415

    configs = [f"{environ['DOCKER_CONFIG']}/config.json"] if environ.get("DOCKER_CONFIG") else []
    backend = oras.auth.base.AuthBackend()
    try:
        backend.load_configs(oras.container.Container(f"{address.namespace}/probe",
                                                      registry=address.registry),
                             configs=configs or None)
    except (OSError, ValueError):
        return Credentials(problem="the Docker config cannot be read")
    found = getattr(backend, "_basic_auth", None)
    return Credentials(basic=str(found) if found else None)


def parse_challenge(header: str | None) -> tuple[str, dict[str, str]] | None:
    """`WWW-Authenticate: Bearer realm="…",service="…",scope="…"` as (scheme, parameters)."""
    if not header:
        return None
    scheme, _, rest = header.strip().partition(" ")
    parameters: dict[str, str] = {}
    position = 0
    while True:  # each match consumes at least `name=`
        match = _PARAMETER.match(rest, position)  # prefix match: one parameter at a time
        if match is None:
            break
        quoted, bare = match.group(2), match.group(3)
        value = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else bare
        parameters.setdefault(match.group(1).lower(), value)
        position = match.end()
    return scheme.lower(), parameters


def repository_of(url: str) -> str:
    """The repository a registry URL addresses ("" for the ping and foreign paths)."""
    match = _REPOSITORY.fullmatch(urllib.parse.urlsplit(url).path)
    return match.group(1) if match else ""


class Authorizer:
    """What to send to the registry, and how to answer its 401."""

    def __init__(self, http: RegistryHttp, credentials: Credentials,
                 token_hosts: frozenset[str] = frozenset()) -> None:
        self.http = http
        self.credentials = credentials
        self.token_hosts = token_hosts  # realms on other hosts the user allows credentials to
        self._basic = False  # the registry asked for Basic: sent with every request since
        self._tokens: dict[str, str] = {}  # repository -> bearer token
        self._withheld: dict[str, str] = {}  # repository -> why its token was bought anonymously

    def headers(self, url: str) -> dict[str, str]:
        if Origin.of(url) != self.http.origin:
            return {}
        token = self._tokens.get(repository_of(url))
        if token is not None:
            return {"Authorization": f"Bearer {token}"}
        if self._basic and self.credentials.basic:
            return {"Authorization": f"Basic {self.credentials.basic}"}
        return {}

    def answer(self, method: str, answer: Answer, deadline: Deadline) -> None:
        """Make the next `headers()` answer the 401 `answer`, or refuse."""
        display, what = self.http.display, f"{method} {path_of(answer.url)}"
        if Origin.of(answer.url) != self.http.origin:
            raise Refused.one(codes.PUBLISH_AUTH, f"{display}: {what}: {Origin.of(answer.url).text}"
                              " asks for credentials; they are only ever sent to the registry "
                              f"itself ({self.http.origin.text})")
        if self.credentials.problem:
            raise Refused.one(codes.PUBLISH_AUTH, f"{display}: {self.credentials.problem}")
        challenge = parse_challenge(answer.header("WWW-Authenticate"))
        if challenge is not None and challenge[0] == "bearer":
            repository = repository_of(answer.url)
            self._tokens[repository] = self._token(what, challenge[1], deadline, repository)
            return
        if challenge is None or challenge[0] != "basic":
            raise Refused.one(codes.PUBLISH_AUTH, f"{display}: {what}: 401 without a Basic or "
                                                  "Bearer challenge")
        if not self.credentials.basic:
            raise Refused.one(codes.PUBLISH_AUTH, f"{display}: the registry asks for credentials "
                                                  "and none were found")
        self._basic = True

    def refusal(self, method: str, answer: Answer) -> Refused:
        """Why a request is refused that was answered 401 again after its challenge was."""
        what = f"{method} {path_of(answer.url)}"
        withheld = self._withheld.get(repository_of(answer.url))
        if withheld is not None:
            return Refused.one(codes.PUBLISH_AUTH, f"{self.http.display}: {what}: the token "
                               f"bought without credentials was not enough; {withheld}")
        return Refused.one(codes.PUBLISH_AUTH, f"{self.http.display}: credentials refused for "
                                               f"{what}")

    def _token(self, what: str, challenge: dict[str, str], deadline: Deadline,
               repository: str) -> str:
        """A token from the challenge's realm: with the credentials where `oci_realms` allows
        them (the registry's own origin, a known or named token service), else anonymously."""
        display = self.http.display
        realm = self.http.resolve(self.http.origin.text + "/", challenge.get("realm"),
                                  f"{what}: token realm")
        query = urllib.parse.urlencode({k: v for k, v in challenge.items()
                                        if k in ("service", "scope")})
        url = realm + ("&" if "?" in realm else "?") + query if query else realm
        withheld = realm_withheld(self.http.origin, realm, self.token_hosts) \
            if self.credentials.basic else None
        basic = {"Authorization": f"Basic {self.credentials.basic}"} \
            if self.credentials.basic and withheld is None else {}
        got = self.http.send("GET", url, deadline=deadline, headers=basic,
                             authorized=Origin.of(realm))
        if got.status != 200:
            raise Refused.one(codes.PUBLISH_AUTH, f"{display}: {what}: the token realm "
                              f"{Origin.of(got.url).text} answered {got.status}" + (
                                  f" to a request without credentials; {withheld}"
                                  if withheld else ""))
        unusable = Refused.one(codes.PUBLISH_AUTH, f"{display}: {what}: the token realm "
                               f"{Origin.of(got.url).text} answered no usable token")
        try:
            document = read_json(got.body, source="token")  # over 1 MiB: no token either
        except Refused:
            raise unusable from None
        token = document.get("token") or document.get("access_token") \
            if isinstance(document, dict) else None
        if not isinstance(token, str) or len(token) > MAX_TOKEN_CHARS \
                or not _TOKEN.fullmatch(token):
            raise unusable
        if withheld is not None:
            self._withheld[repository] = withheld
        else:
            self._withheld.pop(repository, None)
        return token
