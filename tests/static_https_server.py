"""A static HTTPS server for one test, run as a child process inside a private network
namespace (tests/named_https.py starts it, and stops it by its PID):

    python -I static_https_server.py ROOT CERT KEY PORT_FILE

It brings the namespace's loopback interface up (a new network namespace has it down, and
has no other interface), serves ROOT on 127.0.0.1 at a free port, writes the port to
PORT_FILE (atomically) once it listens, and logs every request on stderr. Only the standard
library: this runs as its own program.
"""

from __future__ import annotations

import fcntl
import functools
import http.server
import socket
import ssl
import struct
import sys
from pathlib import Path

SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1


def loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH", fcntl.ioctl(probe, SIOCGIFFLAGS, request)[:18])[1]
        fcntl.ioctl(probe, SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, b""))


def main(root: str, cert: str, key: str, port_file: str) -> None:
    loopback_up()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=root)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    partial = Path(port_file + ".partial")
    partial.write_text(str(server.server_address[1]), encoding="ascii")
    partial.replace(port_file)
    sys.stderr.write(f"serving {root} on 127.0.0.1:{server.server_address[1]}\n")
    sys.stderr.flush()
    server.serve_forever()


if __name__ == "__main__":
    main(*sys.argv[1:5])
