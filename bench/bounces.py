#!/usr/bin/python3
"""The bounce reader (docs/bounces.md): a full Maildir, and an empty mailbox polled.

    bench/bounces.py [--reports N] [--seconds S] [--binary PATH]     (N default 10,000; S 60)

1. A full Maildir. Starts a throwaway cluster and the SMTP sink, adds N users due on RUN_DATE and
   alerts them with `--run-now` (BOUNCE_ADDRESS set: each mail's envelope sender is its row's
   tag). For each row it writes Postfix's real report of a `550 5.1.1` (the corpus'
   postfix-permanent-550.eml), readdressed to the row's tagged sender and contact, into a Maildir's
   `new/`, and times one `sileme-notifier bounces` over them: every report read, matched, applied
   (the row `bounced`, the contact `undeliverable`) and removed. The tags are computed here from
   the documented form (base 32 of the row id, then 80 bits of HMAC-SHA256 under BOUNCE_SECRET), not
   taken from the sink, so the check is independent of the notifier's own code.
2. An empty mailbox. Three idle daemons at once for S seconds — without bounces, reading an
   empty Maildir, and reading an empty IMAP folder of a private Dovecot — each every 5 s
   (BOUNCE_POLL_SECONDS' least): the CPU a poll costs the daemon is its CPU beyond the one without
   bounces, divided by its polls, and more exactly the CPU of the reader's own thread (`sileme-bounces`,
   nanoseconds from /proc's schedstat) a poll; Dovecot's own CPU for the IMAP polls is given beside it.

Checks its results (every report applied once, the Maildir empty, every daemon alive) and exits 1
when they are wrong. Needs root (PostgreSQL and Dovecot run as their own users), a release build.
"""
import argparse, base64, hashlib, hmac, importlib.util, os, shutil, signal, subprocess, sys, tempfile, time

import psycopg2

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("bench", os.path.join(HERE, "bench.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

ADDRESS = "bounces@notify.sileme.test"
SECRET = "bench-bounce-key-0123456789abcdef0123"
POLL = 5
CORPUS = os.path.join(bench.ROOT, "Tests/SilemeNotifierTests/Fixtures/bounces/postfix-permanent-550.eml")


def tag(row):
    """The row's tag as docs/bounces.md describes it."""
    digits = "0123456789abcdefghijklmnopqrstuv"
    number, text = row, ""
    while True:
        text = digits[number & 31] + text
        number >>= 5
        if number == 0:
            break
    mac = hmac.new(SECRET.encode(), b"bounce:" + text.encode(), hashlib.sha256).digest()[:10]
    return text + base64.b32hexencode(mac).decode().lower()


def sender(row):
    local, domain = ADDRESS.split("@")
    return f"{local}+{tag(row)}@{domain}"


def server_cpu(cluster):
    """CPU seconds of the postmaster's exited children (its cutime + cstime): the sessions' work."""
    with open(os.path.join(cluster.dir, "data", "postmaster.pid")) as f:
        pid = int(f.readline())
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def maildir(path):
    for sub in ("new", "cur", "tmp", ".Unparsed/new", ".Unparsed/cur", ".Unparsed/tmp"):
        os.makedirs(os.path.join(path, sub), exist_ok=True)
    return path


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_cpu(pid, name="sileme-bounces"):
    """CPU seconds of the daemon's thread `name` (nanoseconds from schedstat: a poll costs less than a clock tick)."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            if open(f"/proc/{pid}/task/{tid}/comm").read().strip() == name:
                return int(open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[0]) / 1e9
        except OSError:
            continue
    return None


def tree_cpu(root):
    """CPU seconds of `root` and every process whose parent it is (Dovecot's master and its services)."""
    total = cpu_seconds(root)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == root:
                total += (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")
    return total


class Dovecot:
    """A private Dovecot (IMAPS on a free port, a passwd-file user, its own Maildir), as the tests' one."""

    def __init__(self, base):
        self.dir = os.path.join(base, "dovecot")
        self.port = bench.free_port()
        self.maildir = maildir(os.path.join(self.dir, "mail/bounces"))
        os.makedirs(os.path.join(self.dir, "run"))
        self.ca = os.path.join(self.dir, "cert.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", os.path.join(self.dir, "key.pem"), "-out", self.ca],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.password = os.path.join(self.dir, "password")
        with open(self.password, "w") as f:
            f.write("Bench-pw-4711")
        with open(os.path.join(self.dir, "passwd"), "w") as f:
            f.write(f"bounces:{{PLAIN}}Bench-pw-4711:65534:65534::{self.maildir}\n")
        conf = f"""protocols = imap
base_dir = {self.dir}/run
state_dir = {self.dir}/state
instance_name = sn-bench-dovecot-{self.port}
listen = 127.0.0.1
log_path = {self.dir}/dovecot.log
ssl = required
ssl_cert = <{self.ca}
ssl_key = <{self.dir}/key.pem
auth_mechanisms = plain login
passdb {{
  driver = passwd-file
  args = scheme=PLAIN {self.dir}/passwd
}}
userdb {{
  driver = passwd-file
  args = {self.dir}/passwd
}}
mail_location = maildir:~
first_valid_uid = 1
service imap-login {{
  inet_listener imap {{
    port = 0
  }}
  inet_listener imaps {{
    address = 127.0.0.1
    port = {self.port}
    ssl = yes
  }}
}}
service anvil {{
  chroot =
}}
service stats {{
  chroot =
}}
"""
        self.conf = os.path.join(self.dir, "dovecot.conf")
        with open(self.conf, "w") as f:
            f.write(conf)
        subprocess.run(["chown", "-R", "nobody:nogroup", os.path.join(self.dir, "mail")], check=True)
        subprocess.run(["/usr/sbin/dovecot", "-c", self.conf], check=True)
        for _ in range(100):
            if os.path.exists(os.path.join(self.dir, "run/master.pid")):
                break
            time.sleep(0.1)
        self.pid = int(open(os.path.join(self.dir, "run/master.pid")).read())

    def stop(self):
        try:
            os.kill(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        for _ in range(30):
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)
        os.kill(self.pid, signal.SIGKILL)


def full_maildir(cluster, base, binary, reports):
    url, env = bench.migrated_database(cluster, binary, "bounces")
    sink = bench.Sink(base)
    box = maildir(os.path.join(base, "bounces"))
    env = dict(env, SMTP_PORT=str(sink.port), BOUNCE_ADDRESS=ADDRESS, BOUNCE_SECRET=SECRET, BOUNCE_MAILBOX=f"maildir:{box}",
               INTRODUCE_CONTACTS="off", SMTP_CONNECTIONS="4")
    try:
        conn = psycopg2.connect(url)
        conn.autocommit = True
        cur = conn.cursor()
        bench.add_due_users(cur, reports, "dead", "gone.example")
        bench.log(f"alerting {reports:,} users through the sink")
        sent = subprocess.run([binary, "--run-now", "--date", bench.RUN_DATE], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        bench.check(sent.returncode == 0, f"--run-now exited {sent.returncode}: {sent.stderr[-800:]}")
        cur.execute("SELECT l.id, u.emergency_email FROM notification_logs l JOIN users u ON u.id = l.user_id WHERE l.status = 'sent'")
        rows = cur.fetchall()
        bench.check(len(rows) == reports, f"{len(rows)} rows sent, not {reports}")
        by_recipient = {d["rcpt_tos"][0]: d.get("mail_from") for d in sink.deliveries()}
        template = open(CORPUS, "rb").read().decode()
        for row, contact in rows:
            if row % 997 == 0:
                # The sink recorded the tagged sender the notifier used: the same as computed here.
                bench.check(by_recipient.get(contact) == sender(row), f"row {row}: the sink saw {by_recipient.get(contact)}")
            text = template.replace("bounces+7k3mq2xw9d8f1a@notify.sileme.test", sender(row)).replace("perm550@gone.example", contact)
            name = f"1795773667.V801I{row}M1.relay"
            with open(os.path.join(box, "tmp", name), "w") as f:
                f.write(text)
            os.rename(os.path.join(box, "tmp", name), os.path.join(box, "new", name))
        bench.log(f"{reports:,} reports in {box}/new; reading them")
        server = server_cpu(cluster)
        seconds, rss, status, cpu = bench.run_notifier(binary, ["bounces"], env)
        bench.check(status == 0, f"bounces exited {status}")
        time.sleep(1)  # its session's server process has ended: its CPU is the postmaster's children's
        server = server_cpu(cluster) - server
        cur.execute("SELECT count(*) FROM notification_logs WHERE status = 'bounced'")
        bounced = cur.fetchone()[0]
        cur.execute("SELECT count(*) FROM contact_status WHERE status = 'undeliverable'")
        undeliverable = cur.fetchone()[0]
        waiting = len(os.listdir(os.path.join(box, "new"))) + len(os.listdir(os.path.join(box, "cur")))
        bench.check(bounced == reports and undeliverable == reports and waiting == 0,
                    f"{bounced} bounced, {undeliverable} undeliverable, {waiting} left in the Maildir")
        print(f"{reports:,} reports in a Maildir: `bounces` read, applied and removed them in {seconds:.2f} s "
              f"({reports / seconds:,.0f}/s), CPU {cpu:.2f} s the notifier + {server:.2f} s its PostgreSQL session, max RSS {rss / 1024:.1f} MB; "
              f"{bounced:,} rows bounced (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
        return url, env
    finally:
        sink.stop()


def empty_polls(cluster, base, binary, seconds, env):
    dovecot = Dovecot(base)
    empty = maildir(os.path.join(base, "empty"))
    # No run is due while they wait: today's and its neighbours' runs are recorded as done.
    conn = psycopg2.connect(env["DATABASE_URL"])
    conn.autocommit = True
    cur = conn.cursor()
    for offset in (-1, 0, 1):
        cur.execute("INSERT INTO sileme.notifier_runs (run_date, mode, host, pid, status, finished_at) "
                    "VALUES (current_date + %s, 'daemon', 'bench', 1, 'completed', now())", (offset,))
    hour = (time.gmtime().tm_hour + 8 + 3) % 24  # three hours from now in the service zone (UTC+8)
    common = {k: v for k, v in env.items() if not k.startswith("BOUNCE_")}
    common.update(NOTIFY_TIME=f"{hour:02d}:00", ALL_CLEAR_POLL_SECONDS="3600")
    bounce = dict(BOUNCE_ADDRESS=ADDRESS, BOUNCE_SECRET=SECRET, BOUNCE_POLL_SECONDS=str(POLL))
    variants = {
        "no bounces": common,
        "empty Maildir": dict(common, **bounce, BOUNCE_MAILBOX=f"maildir:{empty}"),
        "empty IMAP folder": dict(common, **bounce, BOUNCE_MAILBOX=f"imaps://bounces@127.0.0.1:{dovecot.port}/INBOX",
                                  BOUNCE_PASSWORD_FILE=dovecot.password, BOUNCE_CA_FILE=dovecot.ca),
    }
    logs = {name: tempfile.TemporaryFile(mode="w+", dir="/var/tmp") for name in variants}
    daemons = {name: subprocess.Popen([binary], env=variant, stdout=subprocess.DEVNULL, stderr=logs[name])
               for name, variant in variants.items()}
    try:
        time.sleep(15)  # started, the first polls done (the IMAP session opened and kept)
        start = {name: cpu_seconds(d.pid) for name, d in daemons.items()}
        reader = {name: thread_cpu(daemons[name].pid) for name in ("empty Maildir", "empty IMAP folder")}
        bench.check(all(v is not None for v in reader.values()), "no sileme-bounces thread in the daemons: " + ", ".join(
            sorted({open(f"/proc/{daemons['empty Maildir'].pid}/task/{t}/comm").read().strip() for t in os.listdir(f"/proc/{daemons['empty Maildir'].pid}/task")})))
        server = tree_cpu(dovecot.pid)
        began = time.monotonic()
        time.sleep(seconds)
        elapsed = time.monotonic() - began
        spent = {name: cpu_seconds(d.pid) - start[name] for name, d in daemons.items()}
        reader = {name: thread_cpu(daemons[name].pid) - before for name, before in reader.items()}
        server = tree_cpu(dovecot.pid) - server
        for name, d in daemons.items():
            logs[name].seek(0)
            bench.check(d.poll() is None, f"the daemon ({name}) exited: {logs[name].read()[-800:]}")
        logs["empty IMAP folder"].seek(0)
        bench.check("cannot read the bounce mailbox" not in logs["empty IMAP folder"].read(), "the IMAP daemon could not read its mailbox")
        polls = elapsed / POLL
        base_cpu = spent["no bounces"]
        print(f"idle daemons over {elapsed:.0f} s ({polls:.0f} polls of {POLL} s): CPU without bounces {base_cpu * 1000:.0f} ms")
        for name in ("empty Maildir", "empty IMAP folder"):
            print(f"  {name}: the reader's thread {reader[name] * 1000 / polls:.3f} ms CPU a poll; the whole daemon "
                  f"{spent[name] * 1000:.0f} ms ({(spent[name] - base_cpu) * 1000 / polls:+.1f} ms a poll against the one without bounces, "
                  f"at 10 ms a clock tick)")
        print(f"  Dovecot for the IMAP polls: {server * 1000 / polls:.2f} ms a poll")
    finally:
        for d in daemons.values():
            d.send_signal(signal.SIGTERM)
        for d in daemons.values():
            d.wait(timeout=30)
        dovecot.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reports", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--binary", default=os.path.join(bench.ROOT, ".build/release/sileme-notifier"))
    args = parser.parse_args()
    base = tempfile.mkdtemp(prefix="sileme-bounces-", dir="/var/tmp")
    cluster = bench.Cluster(base)
    try:
        _, env = full_maildir(cluster, base, args.binary, args.reports)
        empty_polls(cluster, base, args.binary, args.seconds, env)
    finally:
        cluster.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
