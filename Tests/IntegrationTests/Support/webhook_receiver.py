#!/usr/bin/python3
"""A webhook receiver for sileme-notifier's integration tests (Python 3 standard library only).

It listens on 127.0.0.1 over plain HTTP and, given a certificate, over HTTPS too, and for every
request it receives:

- checks the Standard Webhooks signature with its own HMAC-SHA256 (hmac, hashlib, base64: no code
  shared with the notifier): the signed content is "{webhook-id}.{webhook-timestamp}.{body}", the
  key the base64-decoded part of the whsec_ secret, the header "v1,<base64>" (several may be given,
  separated by spaces); the timestamp must be within --tolerance seconds of now;
- answers as the failure script says (200 when it says nothing);
- de-duplicates by webhook-id: the first verified 2xx answer for an id is its delivery, a later
  verified request with that id is a duplicate (answered 200 without being delivered again);
- appends one JSON line to --records (written before it answers, so a hang or a dropped connection
  is recorded too): seq, received_at, tls, port, peer, method, path, headers (lower-case names),
  body, id, timestamp, signature, signature_ok, fresh, verified, verify_error, answer, delivered,
  duplicate.

The failure script (--script, JSON) says how to answer:
  {"by_id": {"msg_1": [500, 200]}, "sequence": [{"status": 429, "retry_after": "1"}, "hang"], "default": 200}
A request takes the next answer of its id's list, else the next of "sequence", else "default".
An answer is a status (200, 404, ...), "hang" (never answer: the connection is held until the
receiver stops), "drop" (close the connection without a word), or an object:
  {"status": 503, "retry_after": "2", "body": "busy", "headers": {"Location": "http://..."}, "delay": 1.5}
("delay" waits that many seconds before answering).

Once it listens it writes --ready (JSON: plain_port, tls_port, pid) atomically. SIGTERM or SIGINT
stop it; held connections are closed.
"""

import argparse
import base64
import hashlib
import hmac
import json
import os
import signal
import socket
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def signing_key(secret):
    """The HMAC key of a whsec_<base64> (or bare base64) secret."""
    if secret.startswith("whsec_"):
        secret = secret[len("whsec_"):]
    return base64.b64decode(secret + "=" * (-len(secret) % 4), validate=True)


def verify(key, headers, body, tolerance, now):
    """(signature_ok, fresh, error) for a request's webhook-* headers and raw body."""
    msg_id = headers.get("webhook-id")
    stamp = headers.get("webhook-timestamp")
    given = headers.get("webhook-signature")
    if not msg_id or not stamp or not given:
        return False, False, "missing webhook-id, webhook-timestamp or webhook-signature"
    try:
        seconds = int(stamp)
    except ValueError:
        return False, False, "webhook-timestamp is not a whole number"
    fresh = abs(now - seconds) <= tolerance
    content = msg_id.encode() + b"." + stamp.encode() + b"." + body
    expected = base64.b64encode(hmac.new(key, content, hashlib.sha256).digest()).decode()
    for entry in given.split(" "):
        version, _, signature = entry.partition(",")
        if version == "v1" and hmac.compare_digest(signature, expected):
            return True, fresh, None if fresh else "timestamp outside the tolerance"
    return False, fresh, "no v1 signature matches"


class State:
    """What all connections share: the script, the delivered ids, the records file."""

    def __init__(self, script, records, key, tolerance):
        self.lock = threading.Lock()
        self.by_id = {k: list(v) for k, v in script.get("by_id", {}).items()}
        self.sequence = list(script.get("sequence", []))
        self.default = script.get("default", 200)
        self.records = records
        self.key = key
        self.tolerance = tolerance
        self.delivered = set()
        self.seq = 0
        self.stopping = threading.Event()

    def next_answer(self, msg_id):
        with self.lock:
            queue = self.by_id.get(msg_id)
            if queue:
                return queue.pop(0)
            if self.sequence:
                return self.sequence.pop(0)
            return self.default

    def record(self, entry, status):
        """Numbers the entry, settles delivered/duplicate for a 2xx answer, appends it."""
        with self.lock:
            self.seq += 1
            entry["seq"] = self.seq
            delivered = duplicate = False
            if entry["verified"] and status is not None and 200 <= status < 300:
                if entry["id"] in self.delivered:
                    duplicate = True
                else:
                    self.delivered.add(entry["id"])
                    delivered = True
            entry["delivered"] = delivered
            entry["duplicate"] = duplicate
            with open(self.records, "a", encoding="utf-8") as out:
                out.write(json.dumps(entry, ensure_ascii=False) + "\n")
                out.flush()
                os.fsync(out.fileno())
            return duplicate


def normalise(answer):
    if isinstance(answer, int):
        return {"status": answer}
    if isinstance(answer, str):
        return {"action": answer}
    return dict(answer)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "sileme-test-receiver"

    def setup(self):
        if self.server.tls:
            try:
                self.request.do_handshake()
            except (ssl.SSLError, OSError) as error:
                self.log_message("TLS handshake failed: %s", error)
                self.request.close()
                raise
        super().setup()

    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s\n" % (time.strftime("%H:%M:%S"), fmt % args))
        sys.stderr.flush()

    def do_POST(self):
        self.handle_request()

    def do_PUT(self):
        self.handle_request()

    def do_GET(self):
        self.handle_request()

    def do_HEAD(self):
        self.handle_request()

    def handle_request(self):
        state = self.server.state
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        headers = {name.lower(): value for name, value in self.headers.items()}
        now = time.time()
        signature_ok, fresh, error = verify(state.key, headers, body, state.tolerance, int(now))
        msg_id = headers.get("webhook-id")
        answer = normalise(state.next_answer(msg_id))
        action = answer.get("action")
        status = answer.get("status", 200) if action is None else None
        entry = {
            "received_at": now, "tls": self.server.tls, "port": self.server.server_address[1],
            "peer": "%s:%d" % self.client_address[:2], "method": self.command, "path": self.path,
            "headers": headers, "body": body.decode("utf-8", errors="replace"), "id": msg_id,
            "timestamp": headers.get("webhook-timestamp"), "signature": headers.get("webhook-signature"),
            "signature_ok": signature_ok, "fresh": fresh, "verified": signature_ok and fresh, "verify_error": error,
            "answer": action or str(status),
        }
        duplicate = state.record(entry, status)
        if action == "hang":
            state.stopping.wait(600)
            self.close_connection = True
            return
        if action == "drop":
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if answer.get("delay"):
            if state.stopping.wait(float(answer["delay"])):
                self.close_connection = True
                return
        reply = answer.get("body")
        if reply is None:
            reply = "duplicate" if duplicate else ("ok" if 200 <= status < 300 else "status %d" % status)
        payload = reply.encode("utf-8")
        self.send_response(status)
        if answer.get("retry_after") is not None:
            self.send_header("Retry-After", str(answer["retry_after"]))
        for name, value in answer.get("headers", {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, state, context):
        self.state = state
        self.tls = context is not None
        super().__init__(("127.0.0.1", 0), Handler)
        if context is not None:
            self.socket = context.wrap_socket(self.socket, server_side=True, do_handshake_on_connect=False)

    def handle_error(self, request, client_address):
        # A client that gave up (timeout, TLS refused) is no error of the receiver's.
        sys.stderr.write("connection from %s ended: %r\n" % (client_address, sys.exc_info()[1]))
        sys.stderr.flush()


def main():
    parser = argparse.ArgumentParser(description="webhook receiver for the integration tests")
    parser.add_argument("--secret", required=True, help="the whsec_ secret the requests are signed with")
    parser.add_argument("--records", required=True, help="JSON lines file, one line per request")
    parser.add_argument("--ready", required=True, help="written (JSON: plain_port, tls_port, pid) once listening")
    parser.add_argument("--cert", help="PEM certificate for the HTTPS listener")
    parser.add_argument("--key", help="PEM key for the HTTPS listener")
    parser.add_argument("--script", default="{}", help="the failure script (JSON, see the module's documentation)")
    parser.add_argument("--tolerance", type=int, default=300, help="seconds a webhook-timestamp may be off (default 300)")
    args = parser.parse_args()

    state = State(json.loads(args.script), args.records, signing_key(args.secret), args.tolerance)
    open(args.records, "a").close()
    servers = [Server(state, None)]
    if args.cert and args.key:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
        servers.append(Server(state, context))
    threads = [threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True) for s in servers]
    for thread in threads:
        thread.start()

    def stop(*_):
        state.stopping.set()
        for server in servers:
            threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # A parent may start it with these blocked (a test runner's threads): they are how it stops.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    ready = {"plain_port": servers[0].server_address[1], "tls_port": servers[1].server_address[1] if len(servers) > 1 else None,
             "pid": os.getpid()}
    with open(args.ready + ".tmp", "w") as out:
        json.dump(ready, out)
    os.replace(args.ready + ".tmp", args.ready)
    while not state.stopping.wait(0.2):
        pass
    for thread in threads:
        thread.join(5)
    for server in servers:
        server.server_close()


if __name__ == "__main__":
    main()
