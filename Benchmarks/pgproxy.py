#!/usr/bin/env python3
"""A TCP proxy between payservice and PostgreSQL for the benchmark: it holds every chunk, each way,
for half of a fixed delay before passing it on (a network's latency, on loopback, where the kernel
here has no netem), and counts round trips, so that what each round trip of an order costs shows,
and how many an order makes.

A round trip is counted each time the client sends after the server last spoke (or first): one
exchange of the protocol, however many messages it pipelines. Chunks are delayed in flight, not
one after another, so pipelined traffic keeps its overlap. Standard library only.

    proxy = PgProxy("127.0.0.1", 5432, delay_ms=0.5).start()
    ... connect to 127.0.0.1:proxy.port ...
    proxy.round_trips(); proxy.reset(); proxy.stop()
"""
import collections
import socket
import threading
import time


class PgProxy:
    def __init__(self, host, port, delay_ms=0.0):
        self.target = (host, port)
        self.half = delay_ms / 2000.0
        self._trips = 0
        self._lock = threading.Lock()
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port = self._listener.getsockname()[1]
        self._stopped = False

    def start(self):
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def round_trips(self):
        with self._lock:
            return self._trips

    def reset(self):
        with self._lock:
            self._trips = 0

    def stop(self):
        self._stopped = True
        try:
            self._listener.close()
        except OSError:
            pass

    def _accept(self):
        while not self._stopped:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            for s in (client, server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            last = {"side": "server"}
            self._direction(client, server, "client", last)
            self._direction(server, client, "server", last)

    def _direction(self, source, target, side, last):
        """Reads `source` and writes to `target` what it read, each chunk `half` later."""
        queue = collections.deque()
        ready = threading.Condition()

        def read():
            while True:
                try:
                    chunk = source.recv(65536)
                except OSError:
                    chunk = b""
                if chunk and side == "client" and last["side"] == "server":
                    with self._lock:
                        self._trips += 1
                if chunk:
                    last["side"] = side
                with ready:
                    queue.append((time.perf_counter() + self.half, chunk))
                    ready.notify()
                if not chunk:
                    return

        def write():
            while True:
                with ready:
                    while not queue:
                        ready.wait()
                    due, chunk = queue.popleft()
                wait = due - time.perf_counter()
                if wait > 0:
                    time.sleep(wait)
                if not chunk:
                    try:
                        target.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                    return
                try:
                    target.sendall(chunk)
                except OSError:
                    return

        threading.Thread(target=read, daemon=True).start()
        threading.Thread(target=write, daemon=True).start()
