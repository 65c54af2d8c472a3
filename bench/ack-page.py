#!/usr/bin/python3
"""Measures the acknowledgement page (docs/acknowledgement.md): requests per second it serves and
the daemon's memory with the listener beside the idle daemon without it.

Usage: bench/ack-page.py [BINARY] [SECONDS]   (default .build/release/sileme-notifier, 10)

Needs `wrk` (Debian's package) and the configuration in the environment (DATABASE_URL, SMTP_*,
FROM_EMAIL, ...) with a migrated database. It adds one user with an accepted alert to three
contacts (rows written directly, no mail sent), then:

1. runs the daemon without ACK_LISTEN: its RSS after 5 s (the idle daemon);
2. runs it with ACK_LISTEN: its RSS after 5 s idle, then under load, then after;
3. wrk (2 threads, 16 connections, SECONDS each) against the real page (a GET that reads the
   streak from PostgreSQL) and against a forged link (the neutral page: no database).

The rate limit is set out of the way (ACK_RATE_LIMIT=10000000); the daily run is hours away.
"""
import base64, datetime, hashlib, hmac, os, re, socket, subprocess, sys, tempfile, time, uuid

binary = sys.argv[1] if len(sys.argv) > 1 else ".build/release/sileme-notifier"
seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 10
secret = "bench-ack-secret-0123456789abcdef0123456789"
zone_today = (datetime.datetime.utcnow() + datetime.timedelta(hours=8)).date()  # Asia/Shanghai, the default zone
alert = zone_today - datetime.timedelta(days=1)
user = str(uuid.uuid4())
contacts = [f"bench{i}@example.com" for i in range(3)]


def psql(sql):
    subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", os.environ["DATABASE_URL"], "-c", sql], check=True)


def token(contact):
    """The link's token, as AckKey.sign makes it (Sources/Acknowledgement/AckKey.swift)."""
    key = secret.encode()
    epoch = datetime.date(1970, 1, 1)
    tag = hmac.new(key, b"contact:" + contact.encode(), hashlib.sha256).digest()[:10]
    expires = (alert - epoch).days + 30 - 2
    payload = b"\x01" + uuid.UUID(user).bytes + (alert - epoch).days.to_bytes(4, "big") + expires.to_bytes(4, "big") + tag
    mac = hmac.new(key, b"token:" + payload, hashlib.sha256).digest()[:16]
    return base64.urlsafe_b64encode(payload + mac).decode().rstrip("=")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1])


def start(extra):
    later = (datetime.datetime.utcnow() + datetime.timedelta(hours=11)).strftime("%H:%M")
    env = dict(os.environ, NOTIFY_TIME=later, **extra)
    return subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wrk(url):
    out = subprocess.run(["wrk", "-t2", "-c16", f"-d{seconds}s", "-H", "Accept-Language: zh-CN", url],
                         capture_output=True, text=True, check=True).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    latency = re.search(r"Latency\s+(\S+)", out).group(1)
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return rate, latency, int(errors.group(1)) if errors else 0


psql(f"""
-- Today's and yesterday's runs done: the daemons only wait (and serve the page).
INSERT INTO sileme.notifier_runs (run_date, mode, host, pid, status, finished_at)
VALUES ('{zone_today}', 'daemon', 'bench', 1, 'completed', now()), ('{alert}', 'daemon', 'bench', 1, 'completed', now());
INSERT INTO users (id, name, emergency_email) VALUES ('{user}', '张三', '{contacts[0]}');
INSERT INTO check_ins (user_id, check_in_date) VALUES ('{user}', '{alert - datetime.timedelta(days=3)}');
""" + "".join(f"""
INSERT INTO emergency_contacts (user_id, email, position) VALUES ('{user}', '{c}', {i + 1});
INSERT INTO notification_logs (user_id, notification_date, kind, channel, contact, email_sent, consecutive_miss_days, status,
                               attempts, message_id, last_check_in_date, recipient_masked, sent_at, updated_at)
VALUES ('{user}', '{alert}', 'alert', 'email', '{c}', true, 2, 'sent', 1, 'bench.{i}@example.com',
        '{alert - datetime.timedelta(days=3)}', '{c[0]}***@example.com', now(), now());""" for i, c in enumerate(contacts)))

idle = start({})
try:
    time.sleep(5)
    idle_rss = rss_kb(idle.pid)
finally:
    idle.terminate()
    idle.wait()

port = free_port()
served = start({"ACK_LISTEN": f"127.0.0.1:{port}", "ACK_SECRET": secret, "ACK_BASE_URL": f"http://127.0.0.1:{port}/ack",
                "ACK_RATE_LIMIT": "10000000"})
try:
    time.sleep(5)
    listening_rss = rss_kb(served.pid)
    page = f"http://127.0.0.1:{port}/ack/{token(contacts[0])}"
    forged = page[:-1] + ("A" if page[-1] != "A" else "B")
    page_rate, page_latency, page_errors = wrk(page)
    neutral_rate, neutral_latency, neutral_errors = wrk(forged)
    loaded_rss = rss_kb(served.pid)
    time.sleep(3)
    after_rss = rss_kb(served.pid)
finally:
    served.terminate()
    served.wait()

print(f"idle daemon RSS: {idle_rss / 1024:.1f} MiB")
print(f"with ACK_LISTEN, idle: {listening_rss / 1024:.1f} MiB (+{(listening_rss - idle_rss) / 1024:.1f} MiB)")
print(f"  after the load: {after_rss / 1024:.1f} MiB (+{(after_rss - idle_rss) / 1024:.1f} MiB; {loaded_rss / 1024:.1f} MiB right after)")
print(f"page GET (reads the streak): {page_rate:.0f} requests/s, mean latency {page_latency}, {page_errors} non-2xx")
print(f"forged link (neutral page, 404): {neutral_rate:.0f} requests/s, mean latency {neutral_latency}")
