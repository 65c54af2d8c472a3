#!/usr/bin/env python3
"""Floods the acknowledgement page with connections, for the tests (loopback only).

    page_flood.py PORT CONNECTIONS SECONDS

Opens CONNECTIONS connections to 127.0.0.1:PORT (non-blocking, so a full accept queue does not
serialise them) and holds them for SECONDS: half stay idle, half send a GET every second. A
connection the server closes is opened again (at most once a second each), so the pressure stays
at CONNECTIONS. Bounded in count and time; it stops by itself. Prints one JSON line: how many
connections were open at the peak, how many the server closed, how many answers were read.
"""
import errno
import json
import resource
import select
import socket
import sys
import time

port, wanted, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
need = wanted + 64
if soft < need:
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(need, hard), hard))

REQUEST = b"GET /ack/flood HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
slots = [None] * wanted          # socket or None
opened_at = [0.0] * wanted
stats = {"peak_open": 0, "closed_by_server": 0, "answers": 0, "connect_errors": 0}


poller = select.poll()
where = {}                       # descriptor -> slot index


def connect(index, now):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setblocking(False)
    code = sock.connect_ex(("127.0.0.1", port))
    if code not in (0, errno.EINPROGRESS):
        sock.close()
        stats["connect_errors"] += 1
        return
    slots[index] = sock
    opened_at[index] = now
    poller.register(sock.fileno(), select.POLLIN)
    where[sock.fileno()] = index


def drop(index):
    sock = slots[index]
    poller.unregister(sock.fileno())
    del where[sock.fileno()]
    sock.close()
    slots[index] = None


started = time.monotonic()
for i in range(wanted):
    connect(i, started)
last_send = 0.0
# One persistent poll set, waited on (not spun): the flood's own CPU stays small, so that what the
# test measures is the daemon under the flood, not the machine under the flooder.
while time.monotonic() - started < seconds:
    now = time.monotonic()
    if now - last_send >= 1.0:
        last_send = now
        for i in range(0, wanted, 2):  # the active half
            sock = slots[i]
            if sock is not None:
                try:
                    sock.send(REQUEST)
                except OSError:
                    pass
        for i in range(wanted):
            if slots[i] is None and now - opened_at[i] >= 1.0:
                connect(i, now)
    stats["peak_open"] = max(stats["peak_open"], len(where))
    for fd, _ in poller.poll(250):
        index = where.get(fd)
        if index is None:
            continue
        try:
            data = slots[index].recv(65536)
        except OSError:
            data = b""
        if data:
            stats["answers"] += data.count(b"HTTP/1.")
            continue
        drop(index)
        stats["closed_by_server"] += 1
for i in range(wanted):
    if slots[i] is not None:
        drop(i)
print(json.dumps(stats))
