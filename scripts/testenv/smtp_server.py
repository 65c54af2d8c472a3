#!/usr/bin/python3
"""Real SMTP test server for sileme-notifier's integration tests.

Built on Debian's python3-aiosmtpd (1.4.x). Run it with Debian's interpreter,
/usr/bin/python3, not another python3 found on PATH.

    smtp_server.py --host 127.0.0.1 --port P --mode {starttls,tls,plain} \
        --cert CERT.pem --key KEY.pem --auth USER:PASSWORD --maildir DIR \
        [--pidfile FILE] [--no-store] [--max-per-second K] [--verbose]

Modes
  starttls  STARTTLS offered and required before anything else; AUTH (PLAIN,
            LOGIN) required after TLS; only USER:PASSWORD is accepted.
  tls       implicit TLS from the first byte (smtps); AUTH required.
  plain     no TLS, no AUTH offered or required (clear-text refusal tests and
            the SMTP_TLS=none opt-out).

Output (several servers may share one DIR; every line is one O_APPEND write,
so it is visible to readers at once and lines never interleave)
  DIR/<counter>-<random>.eml  each accepted message: the DATA bytes as the
                              client meant them (CRLF kept, SMTP dot-stuffing
                              undone); not written with --no-store.
  DIR/deliveries.jsonl        one line per accepted message:
      {"file": name or null, "mail_from", "rcpt_tos": [...],
       "message_id": header value as written ("<...>") or null, "time",
       "mode", "tls": bool, "auth_user": str or null, "size": bytes,
       "helo": the name the client gave in EHLO/HELO}
  DIR/events.jsonl            one line per RCPT decision and, after DATA, one
                              line per recipient of the message:
      {"event": "rcpt"|"data", "address", "code": int, "time", "mode"}

Failure injection, by the recipient's local part (case-insensitive)
  temp451once    first RCPT for that exact address (per server process) gets
                 451 4.3.0, later ones are accepted
  temp451always  every RCPT gets 451 4.3.0
  perm550        550 5.1.1 <addr>: Recipient address rejected
  full552        552 5.2.2 <addr>: Mailbox full (a live address, docs/bounces.md)
  spam571        550 5.7.1 <addr>: Message rejected as spam (a live address)
  route544       550 5.4.4 <addr>: Host or domain name not found (a live address)
  data554        RCPT accepted, DATA answered 554 5.6.0
  slow<N>        wait N seconds before answering DATA (then accept)
  close421once   first RCPT for that exact address gets 421 4.3.2 and the
                 server closes the connection; later ones are accepted
  dropdataonce   the first message for that exact address is stored (accepted)
                 but the connection is cut before the reply to DATA: the
                 client cannot know; later ones are accepted normally
When several apply: perm550, full552, spam571, route544, then temp451always, then temp451once at RCPT;
at DATA the longest slow<N> of all recipients is waited, then data554 of any
recipient rejects the whole message.

A relay's quota (--max-per-second K, for the benchmarks): the server accepts at
most K messages a second over all its connections; a message over the quota
waits before its DATA is answered (as a throttling relay holds its clients),
so a client with more connections only waits on more of them.

SIGTERM or SIGINT stops the server.
"""

import argparse
import asyncio
import hmac
import itertools
import json
import logging
import os
import re
import secrets
import signal
import ssl
import sys
import time

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword

log = logging.getLogger("sileme.smtp")

TEMP_FAIL = "451 4.3.0 Temporary failure, try again"
CLOSING = "421 4.3.2 Service shutting down, closing connection"
DATA_REJECT = "554 5.6.0 Message rejected: content refused"
# The permanent refusals of a live address (docs/bounces.md's classes): local-part marker, code, reply.
PERMANENT_REFUSALS = [
    ("full552", 552, "552 5.2.2 <%s>: Mailbox full"),
    ("spam571", 550, "550 5.7.1 <%s>: Message rejected as spam"),
    ("route544", 550, "550 5.4.4 <%s>: Host or domain name not found"),
]
SLOW_RE = re.compile(r"slow(\d+)")
# Message-ID header at the start of a header line, with folded continuations.
MESSAGE_ID_RE = re.compile(
    rb"^message-id[ \t]*:[ \t]*((?:[^\r\n]|\r?\n[ \t])*)", re.IGNORECASE | re.MULTILINE
)


def local_part(address):
    """Lower-cased local part of an address (the whole address if no '@')."""
    return address.rsplit("@", 1)[0].lower()


def parse_message_id(content):
    """The Message-ID header value of a raw message, unfolded, or None."""
    end = content.find(b"\r\n\r\n")
    if end < 0:
        end = content.find(b"\n\n")
    headers = content if end < 0 else content[: end + 2]
    match = MESSAGE_ID_RE.search(headers)
    if match is None:
        return None
    value = " ".join(match.group(1).decode("utf-8", "replace").split())
    return value or None


class Store:
    """Appends JSON lines and writes .eml files into the shared maildir."""

    def __init__(self, maildir, store_messages):
        self.maildir = maildir
        self.store_messages = store_messages
        self.counter = itertools.count(1)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        self.deliveries_fd = os.open(os.path.join(maildir, "deliveries.jsonl"), flags, 0o644)
        self.events_fd = os.open(os.path.join(maildir, "events.jsonl"), flags, 0o644)

    @staticmethod
    def _append(fd, record):
        # One write() per line on an O_APPEND descriptor: unbuffered, and lines
        # from several processes never interleave.
        os.write(fd, (json.dumps(record, separators=(",", ":")) + "\n").encode())

    def event(self, record):
        self._append(self.events_fd, record)

    def delivery(self, record):
        self._append(self.deliveries_fd, record)

    def save(self, content):
        """Writes one message; returns its file name, or None with --no-store."""
        if not self.store_messages:
            return None
        while True:
            name = "%010d-%s.eml" % (next(self.counter), secrets.token_hex(6))
            final = os.path.join(self.maildir, name)
            temp = os.path.join(self.maildir, "." + name + ".tmp")
            try:
                fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
            except FileExistsError:
                continue
            try:
                view = memoryview(content)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            # Rename, so that a *.eml glob never sees a half-written file.
            os.rename(temp, final)
            return name


class Handler:
    """aiosmtpd handler: recipient decisions, failure injection, storage."""

    def __init__(self, mode, store, max_per_second=0, data_delay_ms=0):
        self.mode = mode
        self.store = store
        self.temp_once_seen = set()
        self.interval = 1 / max_per_second if max_per_second else 0
        self.next_slot = 0.0
        self.data_delay = data_delay_ms / 1000

    async def _quota(self):
        """Waits for this message's turn under --max-per-second: turns are handed out
        `interval` apart, in the order the messages' DATA arrived."""
        if not self.interval:
            return
        now = time.monotonic()
        slot = max(now, self.next_slot)
        self.next_slot = slot + self.interval
        if slot > now:
            await asyncio.sleep(slot - now)

    def _rcpt_decision(self, address):
        local = local_part(address)
        if "perm550" in local:
            return 550, "550 5.1.1 <%s>: Recipient address rejected: mailbox unavailable" % address
        for marker, code, reply in PERMANENT_REFUSALS:
            if marker in local:
                return code, reply % address
        if "temp451always" in local:
            return 451, TEMP_FAIL
        if "close421once" in local:
            key = "421:" + address.lower()
            if key not in self.temp_once_seen:
                self.temp_once_seen.add(key)
                return 421, CLOSING
        if "temp451once" in local:
            key = address.lower()
            if key not in self.temp_once_seen:
                self.temp_once_seen.add(key)
                return 451, TEMP_FAIL
        return 250, "250 OK"

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        code, reply = self._rcpt_decision(address)
        if code == 250:
            envelope.rcpt_tos.append(address)
            envelope.rcpt_options.extend(rcpt_options)
        self.store.event(
            {"event": "rcpt", "address": address, "code": code, "time": time.time(), "mode": self.mode}
        )
        if code == 421:
            # After the reply is written, hang up (as a server going down does).
            asyncio.get_running_loop().call_later(0.05, server.transport.close)
        return reply

    async def handle_DATA(self, server, session, envelope):
        locals_ = [local_part(a) for a in envelope.rcpt_tos]
        delay = max((int(m) for lp in locals_ for m in SLOW_RE.findall(lp)), default=0)
        if delay:
            await asyncio.sleep(delay)
        if self.data_delay:
            # A relay far away or busy: each message's DATA answered this much later, every
            # connection waiting on its own (unlike the quota, which all connections share).
            await asyncio.sleep(self.data_delay)
        await self._quota()
        drop = [a for a in envelope.rcpt_tos if "dropdataonce" in local_part(a) and "drop:" + a.lower() not in self.temp_once_seen]
        if drop:
            # Accepted and stored, but the reply never reaches the client.
            for address in drop:
                self.temp_once_seen.add("drop:" + address.lower())
            self._accept(session, envelope)
            for address in envelope.rcpt_tos:
                self.store.event({"event": "data", "address": address, "code": 0, "time": time.time(), "mode": self.mode})
            server.transport.abort()
            return "250 OK (never sent: the connection is gone)"
        if any("data554" in lp for lp in locals_):
            code, reply = 554, DATA_REJECT
        else:
            try:
                self._accept(session, envelope)
                code, reply = 250, "250 OK"
            except Exception as error:  # e.g. the maildir vanished: answer 451, keep serving
                log.error("cannot store message: %r", error, exc_info=error)
                code, reply = 451, "451 4.3.0 Test server error: %s" % type(error).__name__
        now = time.time()
        for address in envelope.rcpt_tos:
            self.store.event(
                {"event": "data", "address": address, "code": code, "time": now, "mode": self.mode}
            )
        return reply

    def _accept(self, session, envelope):
        """Stores an accepted message and records its delivery."""
        content = envelope.original_content
        name = self.store.save(content)
        auth = session.auth_data
        self.store.delivery(
            {
                "file": name,
                "mail_from": envelope.mail_from,
                "rcpt_tos": list(envelope.rcpt_tos),
                "message_id": parse_message_id(content),
                "time": time.time(),
                "mode": self.mode,
                "tls": session.ssl is not None,
                "auth_user": auth.login.decode("utf-8", "replace")
                if isinstance(auth, LoginPassword)
                else None,
                "size": len(content),
                "helo": session.host_name,
            }
        )

    async def handle_exception(self, error):
        # Called by aiosmtpd for any exception raised while handling a command;
        # the session and the server go on.
        log.error("handler exception: %r", error, exc_info=error)
        return "451 4.3.0 Test server error: %s" % type(error).__name__


class TestSMTP(SMTP):
    """aiosmtpd's SMTP, also aware of implicit TLS.

    aiosmtpd 1.4.3 only counts a session as encrypted after its own STARTTLS
    (it looks at `_tls_protocol`), so behind an implicit-TLS listener it
    neither advertises nor accepts AUTH while `auth_require_tls` is on
    (upstream issues aio-libs/aiosmtpd#274 and #281). Mark such sessions as
    encrypted here.
    """

    def connection_made(self, transport):
        super().connection_made(transport)
        if self._tls_protocol is None and transport.get_extra_info("ssl_object") is not None:
            self._tls_protocol = transport  # truthy: "TLS is in place"
            self.session.ssl = {"implicit": True}


def make_authenticator(user, password):
    user_b, password_b = user.encode(), password.encode()

    def authenticator(server, session, envelope, mechanism, auth_data):
        ok = (
            isinstance(auth_data, LoginPassword)
            and hmac.compare_digest(auth_data.login, user_b)
            and hmac.compare_digest(auth_data.password, password_b)
        )
        if not ok:
            log.warning("AUTH %s failed from %s", mechanism, session.peer)
        return AuthResult(success=ok, handled=False, auth_data=auth_data if ok else None)

    return authenticator


def parse_args(argv):
    p = argparse.ArgumentParser(description="SMTP test server (aiosmtpd) for sileme-notifier tests.")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--mode", choices=("starttls", "tls", "plain"), required=True)
    p.add_argument("--cert", help="PEM certificate (starttls and tls modes)")
    p.add_argument("--key", help="PEM private key (starttls and tls modes)")
    p.add_argument("--auth", help="USER:PASSWORD accepted by AUTH (starttls and tls modes)")
    p.add_argument("--maildir", required=True)
    p.add_argument("--pidfile", help="write the pid here once listening")
    p.add_argument("--no-store", action="store_true", help="write no .eml files, only deliveries.jsonl")
    p.add_argument("--max-per-second", type=float, default=0,
                   help="accept at most this many messages a second, holding the others' DATA (0: no limit)")
    p.add_argument("--data-delay-ms", type=float, default=0,
                   help="answer each DATA this many milliseconds late, on every connection at once (a relay's latency)")
    p.add_argument("--verbose", action="store_true", help="log every SMTP command (slow)")
    args = p.parse_args(argv)
    if args.mode != "plain":
        if not (args.cert and args.key and args.auth):
            p.error("--cert, --key and --auth are required in mode %s" % args.mode)
        if ":" not in args.auth:
            p.error("--auth must be USER:PASSWORD")
    return args


async def serve(args):
    loop = asyncio.get_running_loop()
    os.makedirs(args.maildir, exist_ok=True)
    handler = Handler(args.mode, Store(args.maildir, not args.no_store), args.max_per_second, args.data_delay_ms)

    tls_context = None
    if args.mode != "plain":
        tls_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls_context.load_cert_chain(args.cert, args.key)

    smtp_kwargs = dict(
        hostname="localhost",  # else aiosmtpd calls socket.getfqdn() per connection
        ident="sileme-test-smtp (%s)" % args.mode,
        enable_SMTPUTF8=True,
        loop=loop,
    )
    if args.mode == "starttls":
        smtp_kwargs.update(tls_context=tls_context, require_starttls=True, auth_required=True)
    elif args.mode == "tls":
        smtp_kwargs.update(auth_required=True)
    if args.mode != "plain":
        user, _, password = args.auth.partition(":")
        smtp_kwargs["authenticator"] = make_authenticator(user, password)

    server = await loop.create_server(
        lambda: TestSMTP(handler, **smtp_kwargs),
        host=args.host,
        port=args.port,
        ssl=tls_context if args.mode == "tls" else None,
        reuse_address=True,
        backlog=1024,
    )

    def on_loop_exception(loop, context):
        # Never let a stray exception in a callback or a dropped TLS handshake
        # take the server down; just report it.
        log.warning("event loop: %s %r", context.get("message"), context.get("exception"))

    loop.set_exception_handler(on_loop_exception)

    stopping = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)

    if args.pidfile:
        temp = args.pidfile + ".tmp"
        with open(temp, "w") as f:
            f.write("%d\n" % os.getpid())
        os.rename(temp, args.pidfile)
    log.info("listening on %s:%d mode=%s maildir=%s", args.host, args.port, args.mode, args.maildir)

    await stopping.wait()
    log.info("stopping")
    server.close()
    await server.wait_closed()


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.INFO,
        format="%(asctime)s smtp[" + args.mode + ":" + str(args.port) + "] %(levelname)s %(message)s",
    )
    # aiosmtpd logs every command at INFO on "mail.log" (and a deprecation
    # warning per successful AUTH): far too slow and noisy for benchmarks.
    logging.getLogger("mail.log").setLevel(logging.DEBUG if args.verbose else logging.ERROR)
    try:
        asyncio.run(serve(args))
    except OSError as error:
        log.error("cannot serve: %s", error)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
