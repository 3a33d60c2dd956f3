"""The checks of a webhook URL: its form, and the addresses the service will not call.

One function decides whether an address may be called (:func:`address_problem`), at
registration (of a host written as an address, in any form the system's resolver reads:
:func:`literal_address`) and at each delivery (of every address its host resolves to,
:func:`resolve`). Unless ``MAYI_WEBHOOK_ALLOW_PRIVATE``, only public addresses are called.
Every refusal is one line that names the field, the address and why.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from mayi_service.config import Settings

#: The longest ``webhook_url`` accepted.
MAX_URL_LENGTH = 2048
#: The field every refusal names.
FIELD = "webhook_url"
#: The setting that lets webhooks reach addresses that are not public.
ALLOW_PRIVATE = Settings.env_name("webhook_allow_private")

_METADATA = {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_ULA = ipaddress.ip_network("fc00::/7")
#: Special-purpose ranges (the IANA registries) that the ``ipaddress`` of some Python
#: versions counts as global, each with what it is.
_SPECIAL: tuple[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, str], ...] = (
    (ipaddress.ip_network("192.0.0.0/24"), "an IETF protocol assignment address"),
    (ipaddress.ip_network("192.88.99.0/24"), "a 6to4 relay anycast address"),
    (ipaddress.ip_network("198.18.0.0/15"), "a benchmarking address"),
    (ipaddress.ip_network("64:ff9b:1::/48"), "a NAT64 address"),
    (ipaddress.ip_network("2001:db8::/32"), "an IPv6 documentation address"),
    (ipaddress.ip_network("3fff::/20"), "an IPv6 documentation address"),
    (ipaddress.ip_network("5f00::/16"), "an IPv6 segment routing address"),
)
#: IPv4-compatible IPv6 addresses (``::a.b.c.d``, deprecated by RFC 4291).
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
#: IPv6 global unicast: every other range is special.
_GLOBAL_UNICAST = ipaddress.ip_network("2000::/3")


class RefusedURL(Exception):
    """A webhook URL the service will not call; the message (one line) names the field and why."""


def url_problem(url: str) -> str | None:
    """What is wrong with the form of ``url`` as a webhook URL (``None``: nothing), as what it
    must be."""
    if len(url) > MAX_URL_LENGTH:
        return f"at most {MAX_URL_LENGTH} characters"
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        return "no spaces or control characters"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"not a valid URL ({exc})"
    if parts.scheme not in ("https", "http"):
        return "an https:// (or http://) URL"
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        return "no user name or password in the URL"
    if not parts.hostname:
        return "a URL with a host"
    if port == 0:
        return "a port from 1 to 65535"
    if parts.fragment:
        return "no #fragment"
    return None


def refused_address(shown: str, why: str) -> str:
    """Why a webhook to ``shown`` (a host, or a host and its address) is refused, and the
    setting that would allow it."""
    return f"{shown} is {why}: the service does not call it ({ALLOW_PRIVATE}=true allows it, for local work and tests)"


def address_problem(address: str) -> str | None:
    """Why the service must not connect to ``address`` (``None``: a public address). An IPv6
    address that carries an IPv4 one is refused as that one is (6to4), or always (Teredo:
    a tunnel to a host behind a NAT; the message names the host's IPv4 address)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if ip in _METADATA:
        return "a cloud metadata address"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return "an IPv4-mapped IPv6 address"
        if ip in _NAT64:
            return "a NAT64 address"
        if ip in _ULA:
            return "an IPv6 unique local address"
        if ip.is_site_local:
            return "an IPv6 site-local address"
        if ip.sixtofour is not None:
            inner = address_problem(str(ip.sixtofour))
            if inner:
                return f"a 6to4 address of {ip.sixtofour}, {inner}"
        if ip.teredo is not None:
            client = ip.teredo[1]
            inner = address_problem(str(client))
            return f"a Teredo address of {client}" + (f", {inner}" if inner else "")
        if ip in _IPV4_COMPATIBLE and int(ip) > 1:
            return "an IPv4-compatible IPv6 address"
    for network, what in _SPECIAL:
        if ip.version == network.version and ip in network:
            return what
    if ip.is_unspecified:
        return "an unspecified address"
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_multicast:
        return "a multicast address"
    if isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT:
        return "a carrier-grade NAT address"
    if ip.is_reserved:
        return "a reserved address"
    if ip.is_private:
        return "a private address"
    if not ip.is_global or (isinstance(ip, ipaddress.IPv6Address) and ip not in _GLOBAL_UNICAST):
        return "a reserved address"
    return None


def literal_address(host: str) -> str | None:
    """The address ``host`` is written as, normalised (``None``: a host name). An IPv6
    address as a URL writes it (without brackets); an IPv4 address in any form the system's
    resolver reads (``socket.inet_aton``: ``127.1``, ``2130706433``, ``0x7f.1``,
    ``0177.0.0.1``, a final dot), after the host's IDNA mapping (``１２７。０。０。１``)."""
    try:
        return str(ipaddress.ip_address(host.split("%", 1)[0]))
    except ValueError:
        pass
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError:
        return None
    name = ascii_host.removesuffix(".")
    if not name or not all(c.isalnum() or c == "." for c in name):
        return None
    try:
        return socket.inet_ntoa(socket.inet_aton(name))
    except (OSError, ValueError):
        return None


@dataclass(frozen=True)
class Target:
    """Where one attempt connects: the checked address, and what the URL says."""

    scheme: str
    host: str
    port: int
    address: str
    path: str


def resolve(url: str, allow_private: bool = False) -> Target:
    """Resolve ``url``'s host once and check every address it has; the target is the first.
    :class:`RefusedURL` names the field, the address and why it is refused."""
    problem = url_problem(url)
    if problem:
        raise RefusedURL(f"{FIELD}: must be {problem}")
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    # An IPv4 address in any form is read as registration reads it, not looked up.
    lookup = host if ":" in host else literal_address(host) or host
    try:
        infos = socket.getaddrinfo(lookup, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise RefusedURL(f"{FIELD}: the host {host!r} does not resolve ({exc})") from exc
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise RefusedURL(f"{FIELD}: the host {host!r} has no address")
    if not allow_private:
        for address in addresses:
            why = address_problem(address)
            if why:
                shown = host if host == address else f"{host} ({address})"
                raise RefusedURL(f"{FIELD}: {refused_address(shown, why)}")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return Target(parts.scheme, host, port, addresses[0], path)
