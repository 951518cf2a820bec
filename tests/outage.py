"""A network path to a real server that a test can cut and restore: a TCP forwarder on a loopback port.

`down()` closes the listening socket and every open connection (a client sees "connection refused", and a
request in flight loses its answer, as when the server dies mid-request); `up()` listens on the same port
again. The server behind it keeps running, so an outage costs no restart of Hindsight (~25 s of CPU each).
"""

from __future__ import annotations

import socket
import threading
from urllib.parse import urlsplit

from dashboard.processes import free_port


class Outage:
    def __init__(self, target_url: str):
        target = urlsplit(target_url)
        self._target = (target.hostname, target.port)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._open: set[socket.socket] = set()

    def __enter__(self) -> Outage:
        self.up()
        return self

    def __exit__(self, *_exc) -> None:
        self.down()

    def up(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        with self._lock:
            self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def down(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            connections, self._open = self._open, set()
        if listener is not None:
            listener.close()
        for conn in connections:
            _close(conn)

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:  # closed by down()
                return
            try:
                server = socket.create_connection(self._target, timeout=10)
                server.settimeout(None)  # the timeout is for connecting; a slow answer is still an answer
            except OSError:
                _close(client)
                continue
            with self._lock:
                if self._listener is not listener:  # went down meanwhile
                    _close(client)
                    _close(server)
                    return
                self._open |= {client, server}
            for src, dst in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            with self._lock:
                self._open -= {src, dst}
            _close(src)
            _close(dst)


def _close(conn: socket.socket) -> None:
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    conn.close()
