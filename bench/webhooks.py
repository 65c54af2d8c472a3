#!/usr/bin/python3
"""Webhook throughput: the notifier's signed events per second to a local receiver, against the
rate a bare load generator gets from the same receiver.

    bench/bench.sh webhooks [--users 20000] [--repeat 3] [--connections 4] [--mail reminders,outbox,smtp]
                            [--outbox-parent /dev/shm] [--json FILE] [--binary .build/release/sileme-notifier]

A throwaway PostgreSQL and, for `--mail smtp`, the SMTP sink (bench.py's), and a local HTTP/1.1
receiver (`receive` below, its own process: keep-alive, 200 with an empty body to every POST; it
counts the requests, the distinct `webhook-id`s, the TCP connections and the event types, and
records the first and last request's arrival). N users, each with one contact
(`users.emergency_email`, known already: no introductions, and INTRODUCE_CONTACTS=off), their
last check-in three days before the run date (threshold 2: every user is due). Measured, in
`--repeat` rounds, the order rotated each round so that the machine's noise falls on all of them:

  bare     a bare load generator to a fresh receiver: `--connections` threads, each one
           keep-alive http.client connection POSTing N / C requests like the notifier's (a
           ~400-byte JSON body, the webhook-* headers, signed): the ceiling of this receiver
           with a Python client (one interpreter lock: with http.server's ThreadingHTTPServer
           as the receiver it gets about as much)
  reminders  `sileme-notifier --run-now --date D-1` with WEBHOOK_URL at a fresh receiver,
           USER_REMINDER=on and WEBHOOK_EVENTS=checkin.reminder: every user has missed one day,
           so the run sends one `checkin.reminder` per user and no mail — the webhook channel
           alone
  outbox   `sileme-notifier --run-now --date D` with WEBHOOK_URL at a fresh receiver,
           WEBHOOK_EVENTS=checkin.alert, the alert mails to MAIL_TRANSPORT=outbox in a folder
           of /dev/shm (`--outbox-parent`): on a tmpfs its two fsyncs per mail cost nothing, so
           the mails weigh as little as they can
  smtp     the same with the mails to the SMTP sink (as bench.py's run-now)

Events per second are counted at the receiver: requests / (last arrival - first arrival), for the
generator and the notifier alike. The notifier sends one mail and one webhook event per user
through the same SMTP_CONNECTIONS (= --connections) workers, so its rate is of a run doing both.
Before each notifier run notification_logs and notifier_runs are emptied (and vacuumed).

Checks (exit 1 when wrong): every run exits 0; the receiver got exactly N events, N distinct
webhook-ids (no duplicate), all `checkin.alert` (`checkin.reminder` for reminders), over at most --connections connections;
notification_logs holds N webhook rows, all `sent`, and N sent alert mails (none for reminders);
the outbox or the sink holds as many messages; the generator's N requests arrive once each. The ratio to the bare rate
(goal >= 40%) is printed, not gated. `--receiver-fail-every K` makes the notifier's receiver answer
503 (`Retry-After: 0`) to every K-th request: the notifier retries those with the same
`webhook-id`, which the receiver does not count as duplicates (it counts a duplicate only when an
id already answered 200 comes again); the checks then expect N + the 503s requests, N distinct ids
delivered once each.
"""
import argparse
import asyncio
import base64
import datetime
import hashlib
import hmac
import http.client
import json
import os
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import psycopg2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the throwaway cluster, the SMTP sink, running the notifier, the checks)

RUN_DATE = bench.RUN_DATE
PATH = "/hooks/sileme"
OK = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
UNAVAILABLE = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 0\r\nContent-Length: 0\r\n\r\n"


# The receiver: its own process (the generator's threads and the receiver do not share a GIL).

class Counts:
    def __init__(self, fail_every):
        self.requests = 0
        self.ids = set()
        self.duplicates = 0  # requests answered 200 whose webhook-id had been answered 200 before
        self.no_id = 0
        self.types = {}
        self.connections = 0
        self.first = None
        self.last = None
        self.failed = 0
        self.fail_every = fail_every

    def stats(self):
        return {"requests": self.requests, "distinct_ids": len(self.ids), "duplicates": self.duplicates,
                "no_id": self.no_id, "types": self.types, "connections": self.connections, "first": self.first, "last": self.last,
                "answered_503": self.failed}


class Receiver(asyncio.Protocol):
    """HTTP/1.1 with keep-alive, requests with a Content-Length (the notifier's and the
    generator's): each POST is answered 200 at once; GET /_stats answers the counts as JSON."""

    def __init__(self, counts):
        self.counts = counts
        self.buffer = b""

    def connection_made(self, transport):
        self.transport = transport
        self.counts.connections += 1

    def data_received(self, data):
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buffer[:end].decode("latin-1").split("\r\n")
            headers = {}
            for line in head[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            length = int(headers.get("content-length", "0"))
            if len(self.buffer) < end + 4 + length:
                return
            body = self.buffer[end + 4:end + 4 + length]
            self.buffer = self.buffer[end + 4 + length:]
            method, target = head[0].split(" ")[:2]
            if method == "GET" and target == "/_stats":
                answer = json.dumps(self.counts.stats()).encode()
                self.transport.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                                     b"Content-Length: %d\r\n\r\n" % len(answer) + answer)
                self.transport.close()
                return
            self.request(headers, body)
            if headers.get("connection", "").lower() == "close":
                self.transport.close()
                return

    def request(self, headers, body):
        c = self.counts
        now = time.time()
        if c.first is None:
            c.first = now
        c.last = now
        c.requests += 1
        event_id = headers.get("webhook-id")
        if c.fail_every and c.requests % c.fail_every == 0:
            # Not delivered: the sender retries with the same webhook-id, which is no duplicate.
            c.failed += 1
            self.transport.write(UNAVAILABLE)
            return
        if event_id is None:
            c.no_id += 1
        elif event_id in c.ids:
            c.duplicates += 1
        else:
            c.ids.add(event_id)
        start = body.find(b'"type":"')
        kind = body[start + 8:body.find(b'"', start + 8)].decode() if start >= 0 else "?"
        c.types[kind] = c.types.get(kind, 0) + 1
        self.transport.write(OK)


def receive(port, fail_every):
    """Runs the receiver on 127.0.0.1:`port` until SIGTERM; says "ready" on stdout once it listens."""
    loop = asyncio.new_event_loop()
    counts = Counts(fail_every)
    server = loop.run_until_complete(loop.create_server(lambda: Receiver(counts), "127.0.0.1", port, backlog=1024))
    loop.add_signal_handler(signal.SIGTERM, loop.stop)
    print("ready", flush=True)
    loop.run_forever()
    server.close()


class ReceiverProcess:
    def __init__(self, fail_every=0):
        self.port = bench.free_port()
        self.process = subprocess.Popen([sys.executable, os.path.abspath(__file__), "receive", "--port", str(self.port),
                                         "--fail-every", str(fail_every)], stdout=subprocess.PIPE, text=True)
        bench.check(self.process.stdout.readline().strip() == "ready", "the webhook receiver did not start")

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}{PATH}"

    def stats(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        conn.request("GET", "/_stats")
        stats = json.loads(conn.getresponse().read())
        conn.close()
        stats["connections"] -= 1  # this one
        return stats

    def stop(self):
        self.process.terminate()
        self.process.wait()


def rate(stats):
    """Events per second at the receiver: requests / (last arrival - first arrival)."""
    span = (stats["last"] or 0) - (stats["first"] or 0)
    return stats["requests"] / span if span > 0 else 0.0


# The bare load generator.

def signed_headers(key, event_id):
    stamp = str(int(time.time()))
    return stamp, lambda body: {
        "Content-Type": "application/json", "User-Agent": "bench", "webhook-id": event_id, "webhook-timestamp": stamp,
        "webhook-signature": "v1," + base64.b64encode(hmac.new(key, f"{event_id}.{stamp}.".encode() + body, hashlib.sha256).digest()).decode()}


def bare_webhooks(receiver, requests, connections, key):
    """`connections` threads, each one keep-alive http.client connection, POSTing `requests` in
    all (an alert's JSON, ~400 bytes, signed as the notifier signs); returns the generator's own
    wall time."""
    def body(n):
        return json.dumps({"type": "checkin.alert", "timestamp": "2026-01-31T01:00:00Z", "data": {
            "user_id": "3f0e6a5c-1111-4222-8333-%012d" % n, "user_name": f"用户{n}", "run_date": RUN_DATE,
            "last_check_in_date": "2026-01-28", "miss_days": 2,
            "contacts": [{"email": f"user{n}@bench.example", "position": 1}, {"email": f"other{n}@bench.example", "position": 2}]}},
            ensure_ascii=False, separators=(",", ":")).encode()

    shares = [requests // connections + (1 if i < requests % connections else 0) for i in range(connections)]
    errors = []

    def worker(w):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", receiver.port, timeout=30)
            for i in range(shares[w]):
                n = w * shares[0] + i
                payload = body(n)
                _, headers = signed_headers(key, f"msg_bare_{w}_{i}")
                conn.request("POST", PATH, payload, headers(payload))
                response = conn.getresponse()
                response.read()
                if response.status != 200:
                    raise RuntimeError(f"HTTP {response.status}")
            conn.close()
        except Exception as e:  # reported by the caller's check
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(connections)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    bench.check(not errors, f"bare generator: {errors[:3]}")
    return elapsed


# The data and the notifier's runs.

def generate(url, users):
    """`users` users, each with one contact (known: no introductions) and eight days of check-ins
    up to three days before RUN_DATE: every one of them due."""
    conn = psycopg2.connect(url)
    cur = conn.cursor()
    cur.execute("""INSERT INTO users (id, name, emergency_email)
                   SELECT md5('w' || g)::uuid, '用户' || g, 'user' || g || '@bench.example' FROM generate_series(1, %s) g""",
                (users,))
    cur.execute("UPDATE sileme.known_contacts SET state = 'existing'")
    cur.execute("""INSERT INTO check_ins (user_id, check_in_date)
                   SELECT md5('w' || g)::uuid, %s::date - d FROM generate_series(1, %s) g, generate_series(3, 10) d""",
                (RUN_DATE, users))
    conn.commit()
    conn.autocommit = True
    cur.execute("VACUUM ANALYZE")
    conn.close()


def reset(url):
    """The deliveries and runs removed (the summary's triggers forget the alerts), vacuumed."""
    conn = psycopg2.connect(url)
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("DELETE FROM notification_logs")
    cur.execute("DELETE FROM sileme.notifier_runs")
    cur.execute("SELECT count(*) FROM sileme.user_last_check_in WHERE last_notified_date IS NOT NULL")
    bench.check(cur.fetchone()[0] == 0, "the summary still says some users were notified after the reset")
    cur.execute("VACUUM ANALYZE notification_logs, sileme.user_last_check_in, sileme.notifier_runs")
    conn.close()


def logged(url, date=RUN_DATE, kind="alert"):
    """(webhook rows of `kind`, of them sent, alert mails sent, rows of any other kind) of `date`."""
    conn = psycopg2.connect(url)
    cur = conn.cursor()
    cur.execute("""SELECT count(*) FILTER (WHERE channel = 'webhook' AND kind = %(kind)s),
                          count(*) FILTER (WHERE channel = 'webhook' AND kind = %(kind)s AND status = 'sent'),
                          count(*) FILTER (WHERE channel = 'email' AND kind = 'alert' AND status = 'sent' AND email_sent),
                          count(*) FILTER (WHERE NOT (channel IN ('webhook', 'email') AND kind IN ('alert', %(kind)s)))
                   FROM notification_logs WHERE notification_date = %(date)s""", {"date": date, "kind": kind})
    row = cur.fetchone()
    conn.close()
    return row


def outbox_count(outbox):
    return len(os.listdir(os.path.join(outbox, "new"))) if os.path.isdir(os.path.join(outbox, "new")) else 0


def notifier_run(mail, args, env, url, base, sink, key_secret):
    """One --run-now with the webhook at a fresh receiver; returns its figures (a dict) after the checks."""
    reset(url)
    receiver = ReceiverProcess(args.receiver_fail_every)
    outbox = None
    try:
        run_env = dict(env, WEBHOOK_URL=receiver.url, WEBHOOK_SECRET=key_secret, WEBHOOK_EVENTS="checkin.alert")
        run_date = RUN_DATE
        if mail == "reminders":
            # The day before: every user has missed one day (m = 1), so the run sends each one
            # reminder event and no mail at all.
            run_date = (datetime.date.fromisoformat(RUN_DATE) - datetime.timedelta(days=1)).isoformat()
            run_env.update(USER_REMINDER="on", WEBHOOK_EVENTS="checkin.reminder")
        if mail in ("outbox", "reminders"):
            outbox = os.path.join(args.outbox_parent or base, f"sileme-webhooks-outbox-{os.getpid()}")
            shutil.rmtree(outbox, ignore_errors=True)
            os.makedirs(outbox)
            run_env.update(MAIL_TRANSPORT="outbox", OUTBOX_DIR=outbox)
        else:
            run_env.update(MAIL_TRANSPORT="smtp", SMTP_HOST="127.0.0.1", SMTP_PORT=str(sink.port), SMTP_TLS="none")
            mails_before = len(sink.deliveries())
        elapsed, rss, status, cpu = bench.run_notifier(args.binary, ["--run-now", "--date", run_date], run_env)
        stats = receiver.stats()
        mails = outbox_count(outbox) if outbox else len(sink.deliveries()) - mails_before
    finally:
        receiver.stop()
        if outbox:
            shutil.rmtree(outbox, ignore_errors=True)
    event = "checkin.reminder" if mail == "reminders" else "checkin.alert"
    hooks, hooks_sent, mails_logged, others = logged(url, run_date, "reminder" if mail == "reminders" else "alert")
    n = args.users
    mails_expected = 0 if mail == "reminders" else n
    bench.check(status == 0, f"{mail}: --run-now exited {status}")
    bench.check(stats["requests"] == n + stats["answered_503"] and stats["distinct_ids"] == n and stats["duplicates"] == 0
                and stats["no_id"] == 0,
                f"{mail}: the receiver got {stats['requests']} requests, {stats['distinct_ids']} distinct webhook-ids, "
                f"{stats['duplicates']} duplicates, {stats['no_id']} without an id ({stats['answered_503']} answered 503); "
                f"{n} users due")
    bench.check(stats["types"] == {event: n}, f"{mail}: event types {stats['types']}")
    bench.check(0 < stats["connections"] <= args.connections,
                f"{mail}: {stats['connections']} connections to the receiver for {args.connections} workers")
    bench.check(hooks == n and hooks_sent == n and others == 0,
                f"{mail}: notification_logs holds {hooks} webhook rows, {hooks_sent} sent, {others} others; {n} expected")
    bench.check(mails_logged == mails_expected and mails == mails_expected,
                f"{mail}: {mails_logged} alert mails logged sent, {mails} in the outbox or sink; {mails_expected} expected")
    span = stats["last"] - stats["first"]
    return {"mail": mail, "events": stats["requests"], "distinct_ids": stats["distinct_ids"], "duplicates": stats["duplicates"],
            "connections": stats["connections"], "span": span, "events_per_second": rate(stats), "wall": elapsed, "cpu": cpu,
            "max_rss_kb": rss, "jobs_per_second": (n + mails_expected) / elapsed, "mails": mails}


def bare_run(args, key):
    receiver = ReceiverProcess()
    try:
        elapsed = bare_webhooks(receiver, args.users, args.connections, key)
        stats = receiver.stats()
    finally:
        receiver.stop()
    bench.check(stats["requests"] == args.users and stats["distinct_ids"] == args.users and stats["duplicates"] == 0,
                f"bare: the receiver got {stats['requests']} requests, {stats['distinct_ids']} distinct ids of {args.users}")
    bench.check(stats["connections"] == args.connections, f"bare: {stats['connections']} connections, {args.connections} threads")
    return {"events": stats["requests"], "span": stats["last"] - stats["first"], "events_per_second": rate(stats),
            "generator_per_second": args.users / elapsed}


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "receive":
        parser = argparse.ArgumentParser(prog="webhooks.py receive")
        parser.add_argument("--port", type=int, required=True)
        parser.add_argument("--fail-every", type=int, default=0)
        sub = parser.parse_args(sys.argv[2:])
        return receive(sub.port, sub.fail_every)

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=20_000, help="due users: one alert mail and one webhook event each")
    parser.add_argument("--repeat", type=int, default=3, help="rounds (bare and each notifier variant once a round)")
    parser.add_argument("--connections", type=int, default=4, help="SMTP_CONNECTIONS, and the bare generator's threads")
    parser.add_argument("--mail", default="reminders,outbox,smtp",
                        help="the notifier's variants: reminders (webhook events only), outbox, smtp (where the alert mails go)")
    parser.add_argument("--outbox-parent", default="/dev/shm" if os.path.isdir("/dev/shm") else None,
                        help="where the outbox folder is made (default /dev/shm, a tmpfs: the outbox's fsyncs cost nothing, "
                             "so that the mails weigh little; '' for the temporary folder on disk)")
    parser.add_argument("--json", type=argparse.FileType("w"), help="write the figures here as JSON")
    parser.add_argument("--receiver-fail-every", type=int, default=0,
                        help="the notifier's receiver answers 503 to every K-th request (the checks must then fail)")
    parser.add_argument("--binary", default=os.path.join(bench.ROOT, ".build/release/sileme-notifier"))
    args = parser.parse_args()
    mails = [m.strip() for m in args.mail.split(",") if m.strip()]
    bench.check(mails and all(m in ("outbox", "smtp", "reminders") for m in mails), "--mail: outbox, smtp, reminders")
    bench.check(args.users > 0 and args.connections > 0 and args.repeat > 0, "--users, --connections and --repeat must be positive")

    load_start = os.getloadavg()
    secret_bytes = secrets.token_bytes(32)
    key_secret = "whsec_" + base64.b64encode(secret_bytes).decode()
    base = tempfile.mkdtemp(prefix="sileme-webhooks-", dir="/var/tmp")
    cluster = sink = None
    variants = ["bare"] + mails
    results = {v: [] for v in variants}
    try:
        bench.log(f"PostgreSQL{' and SMTP sink' if 'smtp' in mails else ''} in {base}")
        cluster = bench.Cluster(base)
        if "smtp" in mails:
            sink = bench.Sink(base)
        admin = psycopg2.connect(cluster.url)
        admin.autocommit = True
        admin.cursor().execute("CREATE DATABASE bench")
        admin.close()
        url = cluster.database_url("bench")
        env = {"PATH": "/usr/bin:/bin", "DATABASE_URL": url, "MIGRATIONS_DIR": os.path.join(bench.ROOT, "Sources/Store/Migrations"),
               "FROM_EMAIL": "noreply@sileme.app", "SMTP_CONNECTIONS": str(args.connections), "INTRODUCE_CONTACTS": "off"}
        migrate = subprocess.run([args.binary, "migrate"], env=env, capture_output=True, text=True)
        bench.check(migrate.returncode == 0, f"migrate: {migrate.stderr[-500:]}")
        start = time.perf_counter()
        generate(url, args.users)
        bench.log(f"generated {args.users} due users in {time.perf_counter() - start:.0f} s")
        for r in range(args.repeat):
            order = variants[r % len(variants):] + variants[:r % len(variants)]
            for v in order:
                result = bare_run(args, secret_bytes) if v == "bare" else notifier_run(v, args, env, url, base, sink, key_secret)
                results[v].append(result)
                bench.log(f"round {r + 1} {v}: {result['events_per_second']:,.0f} events/s"
                          + (f", run {result['wall']:.2f} s" if v != "bare" else f" (generator {result['generator_per_second']:,.0f}/s)"))
    finally:
        if sink:
            sink.stop()
        if cluster:
            cluster.stop()
        shutil.rmtree(base, ignore_errors=True)

    def med(v, field):
        return statistics.median(x[field] for x in results[v])

    def rounds(v):
        return ", ".join(f"{x['events_per_second']:,.0f}" for x in results[v])

    bare = med("bare", "events_per_second")
    summary = {"users": args.users, "connections": args.connections, "repeat": args.repeat, "cores": os.cpu_count(),
               "load_average": {"start": load_start, "end": os.getloadavg()}, "run_date": RUN_DATE,
               "bare_events_per_second": bare, "bare_generator_per_second": med("bare", "generator_per_second"),
               "runs": results, "notifier": {}}
    print()
    print(f"webhook throughput: {args.users:,} users (alerts: one mail and one checkin.alert event each; reminders: one event each), "
          f"{args.connections} workers (SMTP_CONNECTIONS) / generator threads, medians of {args.repeat}, {os.cpu_count()} cores "
          f"(load average {load_start[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end)")
    print(f"  bare generator -> receiver: {bare:,.0f} events/s at the receiver "
          f"(rounds {rounds('bare')}; "
          f"the generator's own wall-clock rate {med('bare', 'generator_per_second'):,.0f}/s)")
    for m in mails:
        eps = med(m, "events_per_second")
        ratio = eps / bare
        summary["notifier"][m] = {"events_per_second": eps, "ratio": ratio, "wall": med(m, "wall"), "cpu": med(m, "cpu"),
                                  "jobs_per_second": med(m, "jobs_per_second"), "max_rss_kb": max(x["max_rss_kb"] for x in results[m])}
        where = {"outbox": f"alerts, mail to the outbox (MAIL_TRANSPORT=outbox, in {args.outbox_parent or base})",
                 "smtp": "alerts, mail to the SMTP sink (plain, counting only)",
                 "reminders": "reminders only (USER_REMINDER=on, the day before: no mail)"}[m]
        print(f"  notifier, {where}: {eps:,.0f} webhook events/s "
              f"(rounds {rounds(m)}) = {ratio * 100:.0f}% of bare "
              f"(goal >= 40%: {'met' if ratio >= 0.4 else 'NOT met'}); run wall {med(m, 'wall'):.2f} s, "
              f"notifier CPU {med(m, 'cpu'):.2f} s, {med(m, 'jobs_per_second'):,.0f} jobs/s (mails + events), "
              f"max RSS {summary['notifier'][m]['max_rss_kb'] / 1024:.1f} MB")
        print(f"    every run: {args.users:,} events, {args.users:,} distinct webhook-ids, 0 duplicates, "
              f"{', '.join(str(x['connections']) for x in results[m])} connection(s); notification_logs {args.users:,} webhook rows "
              f"sent, {0 if m == 'reminders' else args.users:,} alert mails")
    if args.json:
        json.dump(summary, args.json, indent=2)
        args.json.write("\n")


if __name__ == "__main__":
    main()
