#!/usr/bin/python3
"""sileme-notifier benchmark: the daily run at N users, side by side with the design doc's plan.

    bench/bench.sh [--users N] [--repeat R] [--connections C]      (N default 1,000,000)

Creates a throwaway PostgreSQL 15 cluster and a local SMTP sink, generates N users with 30 days
of check-in history (about 95% checking in each day, about 3% currently missing 2+ days, a third
of those already notified) and, for the guards of docs/guards.md (`--guard-share`, default 1%
each): users holding one check-in dated 2099-01-01, users with `paused_until` within 10 days
either side of the run date, and superseded pairs (a silent old account and a newer one with the
same contact and name that checks in), and `--contact-share` (default 30%) of the users with 1–3
rows in `emergency_contacts` — and measures in one run, with medians of R repetitions:

  baseline       the design doc's per-user loop: one prepared query per user over one
                 connection (timed on a sample of users, extrapolated to N, as it says)
  aggregate      the best single aggregate over check_ins (GROUP BY user_id, max(check_in_date)),
                 alone and joined with users for the names and addresses a run needs
  due-set        sileme-notifier's due-set query alone (the range scans over user_last_check_in
                 and users.paused_until, as NotificationStore runs it; its plan is printed):
                 ids and dates only (like for like with the aggregate), and with names,
                 addresses and contacts (one users probe per due user: what the run executes)
  dry run        `sileme-notifier --run-now --dry-run --format json`, process start to exit
  run-now        a real `--run-now` sending the due mails to the local sink (mails per second):
                 one alert per contact in force of every user to alert
  smtp bare      a bare SMTP load generator (C threads of smtplib, one connection each) to the
                 same sink, for the ceiling the sink allows
  insert path    what the triggers cost the app: pgbench single-row check-in inserts without
                 the trigger, with it (the common case), and with it ending an alerted streak
                 (the fold then queues the all-clear and NOTIFYs), each run's check-ins then
                 folded into the summary as the daemon does; see InsertPath

and the peak memory (max RSS) of the notifier process. Prints a table with ratios. It also checks
its results (the dry run lists the due set; every real run sends exactly the mails the dry run
said, exit 0) and exits 1 when they are wrong: CI runs it small (`--users 20000 --repeat 1`).

With `--cluster-dir DIR` the cluster is kept in DIR instead of a throwaway one: generated there
the first time, chunk by chunk and resumably (population.py; `--generate-only` stops after it),
and measured by later runs as it is, each run's writes undone at its end
(bench/history/ten-million.md).
"""
import argparse
import base64
import json
import os
import shutil
import smtplib
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import psycopg2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import population  # noqa: E402  (beside this file, also when another script loads it by path)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PG_BIN = "/usr/lib/postgresql/15/bin"
RUN_DATE = "2026-01-31"


def log(message):
    print(f"bench: {message}", file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def add_server_memory_args(parser, shared_buffers_help="the kept cluster's shared_buffers"):
    """A kept cluster's memory options: `--shared-buffers` and `--huge-pages` (`Cluster.kept`)."""
    parser.add_argument("--shared-buffers", default="1GB", help=shared_buffers_help)
    parser.add_argument("--huge-pages", action="store_true",
                        help="with --cluster-dir: the server's shared memory in huge pages (huge_pages = on), reserved for "
                             "the run (vm.nr_hugepages) and given back: no page fault per 4 kB of shared buffers in each session")


def notifier_env(url, smtp_port=25, **extra):
    """The environment the notifier runs with on a benchmark database `url`: plain SMTP to
    127.0.0.1:`smtp_port`, the tree's migrations, and nothing of the caller's own SMTP account,
    systemd socket or configuration file."""
    env = dict(os.environ, DATABASE_URL=url, SMTP_HOST="127.0.0.1", SMTP_PORT=str(smtp_port), SMTP_TLS="none",
               FROM_EMAIL="noreply@sileme.app", MIGRATIONS_DIR=os.path.join(ROOT, "Sources/Store/Migrations"), **extra)
    for key in ("SMTP_USER", "SMTP_PASSWORD", "NOTIFY_SOCKET", "SILEME_CONFIG"):
        env.pop(key, None)
    return env


def migrated_database(cluster, binary, name="bench"):
    """A database `name` on `cluster`, migrated by `binary`: its URL, and the environment the
    notifier runs with there (no mail server is reached: the benchmarks that use it only read)."""
    admin = psycopg2.connect(cluster.url)
    admin.autocommit = True
    admin.cursor().execute(f"DROP DATABASE IF EXISTS {name}")  # a kept cluster's, from an earlier run
    admin.cursor().execute(f"CREATE DATABASE {name}")
    admin.close()
    url = cluster.database_url(name)
    env = notifier_env(url)
    subprocess.run([binary, "migrate"], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return url, env


class Cluster:
    """A throwaway PostgreSQL cluster owned by the postgres user."""

    # A kept cluster's (`kept`): its shared memory in huge pages, and how many the kernel had
    # before this run reserved some (None: none reserved, nothing to give back).
    huge_pages = False
    huge_pages_before = None

    def __init__(self, base):
        self.dir = os.path.join(base, "pg")
        self.port = free_port()
        os.makedirs(self.dir)
        shutil.chown(self.dir, "postgres", "postgres")
        os.chmod(base, 0o755)
        self.run_as_postgres([f"{PG_BIN}/initdb", "-D", self.dir + "/data", "-A", "trust", "-U", "postgres", "-E", "UTF8"])
        with open(self.dir + "/data/postgresql.auto.conf", "a") as f:
            f.write(self.settings())
        self.run_as_postgres([f"{PG_BIN}/pg_ctl", "-D", self.dir + "/data", "-l", self.dir + "/log", "-w", "start"])
        self.url = self.database_url("postgres")

    def settings(self, max_wal_size="8GB", shared_buffers="1GB"):
        return (f"port = {self.port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{self.dir}'\n"
                f"fsync = off\nsynchronous_commit = off\nfull_page_writes = off\nshared_buffers = {shared_buffers}\n"
                "wal_level = minimal\nmax_wal_senders = 0\nmax_parallel_maintenance_workers = 2\n"
                f"work_mem = 64MB\nmaintenance_work_mem = 512MB\nmax_wal_size = {max_wal_size}\nmax_connections = 100\n")

    @classmethod
    def kept(cls, base, shared_buffers="1GB", huge_pages=False):
        """The cluster kept in `base` (made there if there is none), started on a free port with
        the settings above alone (`shared_buffers` as given): what an earlier run added
        (`restart`) is dropped. Stop it with `shutdown`, which leaves it consistent for the next run.
        `huge_pages`: its shared memory in the kernel's huge pages (`huge_pages = on`), as many
        reserved as it needs for the run and given back by `shutdown` (docs/operating.md)."""
        data = os.path.join(base, "pg", "data")
        if not os.path.exists(os.path.join(data, "PG_VERSION")):
            os.makedirs(base, exist_ok=True)
            shutil.rmtree(os.path.join(base, "pg"), ignore_errors=True)
            cls(base).shutdown()  # made; started below as every later time
        cluster = cls.__new__(cls)
        cluster.dir = os.path.join(base, "pg")
        cluster.stop_orphan()
        cluster.port = free_port()
        cluster.huge_pages, cluster.huge_pages_before = huge_pages, None
        with open(data + "/postgresql.auto.conf", "w") as f:
            # Less WAL kept on disk: the kept cluster is large already, and the disk shared.
            f.write("# Written by bench.py for its kept cluster at each start.\n" + cluster.settings("1GB", shared_buffers)
                    + ("huge_pages = on\n" if huge_pages else ""))
        if huge_pages:
            cluster.reserve_huge_pages()
        cluster.run_as_postgres([f"{PG_BIN}/pg_ctl", "-D", data, "-l", cluster.dir + "/log", "-w", "-t", "3600", "start"])
        cluster.url = cluster.database_url("postgres")
        return cluster

    def reserve_huge_pages(self):
        """Reserves the huge pages the server's shared memory needs with its settings (PostgreSQL
        computes the number: `postgres -C shared_memory_size_in_huge_pages`) when the kernel has
        fewer, remembering how many it had for `shutdown` to give back."""
        needed = int(subprocess.run(["runuser", "-u", "postgres", "--", f"{PG_BIN}/postgres", "-D", self.dir + "/data", "-C",
                                     "shared_memory_size_in_huge_pages"], check=True, capture_output=True, text=True).stdout)
        path = "/proc/sys/vm/nr_hugepages"
        with open(path) as f:
            before = int(f.read())
        if before >= needed:
            return
        with open(path, "w") as f:
            f.write(str(needed))
        if self.huge_pages_before is None:  # what the kernel had before this run's first reservation
            self.huge_pages_before = before
        with open(path) as f:
            got = int(f.read())
        log(f"huge pages: {needed} reserved for the server's shared memory (vm.nr_hugepages {before} -> {got})")
        check(got >= needed, f"the kernel gave {got} huge pages of the {needed} the server needs (its memory fragmented): "
                             f"run without --huge-pages, or reserve them early (vm.nr_hugepages)")

    def stop_orphan(self):
        """A kept cluster's server still running from a run that was killed (its session ended)
        is stopped, so that this run starts it with its own settings; one that has clients —
        another bench.py using the cluster, or a generation going on — is left alone, and this
        run stops with a message."""
        data = os.path.join(self.dir, "data")
        if subprocess.run(["runuser", "-u", "postgres", "--", f"{PG_BIN}/pg_ctl", "-D", data, "status"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
            return
        with open(os.path.join(data, "postmaster.pid")) as f:
            lines = f.read().splitlines()
        conn = psycopg2.connect(f"postgresql://postgres@127.0.0.1:{lines[3]}/postgres")
        cur = conn.cursor()
        cur.execute("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")
        clients = cur.fetchone()[0]
        conn.close()
        check(clients == 0, f"the kept cluster in {os.path.dirname(self.dir)} is in use ({clients} sessions on port {lines[3]}): "
                            f"wait for it, or stop it with runuser -u postgres -- {PG_BIN}/pg_ctl -D {data} stop")
        log(f"stopping the kept cluster's server left running (port {lines[3]})")
        self.shutdown()

    def database_url(self, name):
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def run_as_postgres(self, argv):
        subprocess.run(["runuser", "-u", "postgres", "--"] + argv, check=True, stdout=subprocess.DEVNULL)

    def restart(self, settings):
        """Restarts the server with `settings` (lines of postgresql.conf) added — in huge pages, with
        as many reserved as its shared memory now needs (a preloaded library adds some)."""
        with open(self.dir + "/data/postgresql.auto.conf", "a") as f:
            f.write(settings)
        if not self.huge_pages:
            self.run_as_postgres([f"{PG_BIN}/pg_ctl", "-D", self.dir + "/data", "-l", self.dir + "/log", "-w", "restart"])
            return
        self.run_as_postgres([f"{PG_BIN}/pg_ctl", "-D", self.dir + "/data", "-m", "fast", "-w", "stop"])
        self.reserve_huge_pages()
        self.run_as_postgres([f"{PG_BIN}/pg_ctl", "-D", self.dir + "/data", "-l", self.dir + "/log", "-w", "start"])

    def stop(self):
        subprocess.run(["runuser", "-u", "postgres", "--", f"{PG_BIN}/pg_ctl", "-D", self.dir + "/data", "-m", "immediate", "stop"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def shutdown(self):
        """A clean stop (a checkpoint first): the kept cluster's next start needs no recovery. The
        huge pages `kept` reserved are given back."""
        subprocess.run(["runuser", "-u", "postgres", "--", f"{PG_BIN}/pg_ctl", "-D", self.dir + "/data", "-m", "fast",
                        "-t", "3600", "stop"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if self.huge_pages_before is not None:
            with open("/proc/sys/vm/nr_hugepages", "w") as f:
                f.write(str(self.huge_pages_before))
            self.huge_pages_before = None


class Sink:
    """The project's SMTP test server in plain mode, counting without storing (`store`: keeping
    each message as a file too). Either way it records each accepted message in
    `deliveries.jsonl`: recipients, Message-ID and its own acceptance time. `max_per_second`: a
    relay's quota, `data_delay_ms` its latency per message (smtp_server.py)."""

    def __init__(self, base, store=False, max_per_second=0, data_delay_ms=0):
        self.port = free_port()
        self.maildir = os.path.join(base, "maildir")
        os.makedirs(self.maildir)
        self.process = subprocess.Popen(
            ["/usr/bin/python3", os.path.join(ROOT, "scripts/testenv/smtp_server.py"), "--host", "127.0.0.1",
             "--port", str(self.port), "--mode", "plain", "--maildir", self.maildir] + ([] if store else ["--no-store"])
            + (["--max-per-second", str(max_per_second)] if max_per_second else [])
            + (["--data-delay-ms", str(data_delay_ms)] if data_delay_ms else []),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("SMTP sink did not start")

    def deliveries(self):
        """The accepted messages so far: one dict per message (see smtp_server.py)."""
        path = os.path.join(self.maildir, "deliveries.jsonl")
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return [json.loads(line) for line in f if line.endswith("\n")]

    def stop(self):
        self.process.terminate()
        self.process.wait()


def generate(conn, users, guard_share, contact_share=0.0, missing_share=0.03, seed=1):
    """N users with 30 days of history before RUN_DATE, the guards' data, and a `contact_share` of
    the users with 1–3 rows in `emergency_contacts` (see the top and population.py), in one
    transaction. `missing_share` of the users are missing 2+ days (1: every user, whom the dry run
    then lists: `dry_run_memory`). The same `seed` and N give the same population."""
    return population.generate(conn, population.Model(users, guard_share, contact_share, missing_share, seed, RUN_DATE))


def steady_users(url, users, first, last):
    """`users` users ('steady 1', … at @bench.example) who checked in every day from `first`
    through `last` (dates), through the app's trigger, folded as the daemon folds (so that each
    day's intake is what the intake guard judges); then VACUUM ANALYZE."""
    conn = psycopg2.connect(url)
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("""INSERT INTO users (name, emergency_email)
                   SELECT 'steady ' || g, 'steady' || g || '@bench.example' FROM generate_series(1, %s) g""", (users,))
    cur.execute("""INSERT INTO check_ins (user_id, check_in_date)
                   SELECT u.id, d::date FROM users u, generate_series(%s::date, %s::date, interval '1 day') d""", (first, last))
    for _ in range(1000):  # the daemon's fold, until the queue is empty
        cur.execute("SELECT count(*) FROM sileme.sileme_fold_check_ins()")
        cur.execute("SELECT count(*) FROM sileme.check_in_queue")
        if cur.fetchone()[0] == 0:
            break
    else:
        check(False, "the check-in queue does not empty")
    cur.execute("VACUUM ANALYZE")
    conn.close()


def kept_population(cluster, args, env):
    """The population of the kept cluster's `bench` database: created and migrated if it is not
    there, generated (or its generation continued) unless complete with the same parameters.
    Returns the check-ins' count as generated."""
    admin = psycopg2.connect(cluster.url)
    admin.autocommit = True
    cur = admin.cursor()
    cur.execute("SELECT 1 FROM pg_database WHERE datname = 'bench'")
    if cur.fetchone() is None:
        cur.execute("CREATE DATABASE bench")
    admin.close()
    subprocess.run([args.binary, "migrate"], env=env, check=True, stdout=subprocess.DEVNULL)
    conn = psycopg2.connect(cluster.database_url("bench"))
    # The run date: the one asked for (`--run-date`, at the generation), else the one of the
    # population the cluster holds (or began), else RUN_DATE; every measurement after this reads RUN_DATE.
    global RUN_DATE
    RUN_DATE = getattr(args, "run_date", None) or (population.started(conn) or {}).get("run_date") or RUN_DATE
    model = population.Model(args.users, args.guard_share, args.contact_share, 0.03, args.seed, RUN_DATE,
                             shape="bench_gen.shape", temporary=False)
    held = population.is_complete(conn)
    if held is None:
        log(f"generating {args.users:,} users in {args.cluster_dir} (resumable: run the same command again to go on)")
        population.generate_resumable(conn, model, log, args.chunk_users, data_dir=args.cluster_dir, min_free_gb=args.min_free_gb)
    else:
        check(held == model.params(), f"{args.cluster_dir} holds {held}, not {model.params()}")
        log(f"{args.cluster_dir}: generated already ({held})")
    rows = population.generated_rows(conn)
    conn.close()
    return rows


# The tables a run's and a dry run's per-user probes read (with their indexes): what `prewarm` loads.
PROBED = ["public.users", "public.emergency_contacts", "sileme.user_last_check_in", "public.notification_logs"]


def prewarm(url):
    """Loads the tables in PROBED and their indexes into the shared buffers (pg_prewarm, in
    large sequential reads), as far as they fit: after the oracle's scans of check_ins have
    pushed them out of every cache, the due set's random probes would otherwise read them from
    the disk 8 kB at a time (at 10 million users, over ten minutes for the first run). The
    extension is dropped again: the kept population's figures stay the same. Returns the
    seconds taken and the MB read."""
    conn = psycopg2.connect(url)
    conn.autocommit = True
    cur = conn.cursor()
    start = time.perf_counter()
    cur.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
    try:
        cur.execute("""SELECT coalesce(sum(pg_prewarm(r)), 0) FROM (
                           SELECT t::regclass AS r FROM unnest(%s::text[]) t
                           UNION ALL
                           SELECT i.indexrelid::regclass FROM pg_index i WHERE i.indrelid = ANY(%s::text[]::regclass[])) x""",
                    (PROBED, PROBED))
        blocks = cur.fetchone()[0]
    finally:
        cur.execute("DROP EXTENSION pg_prewarm")
        conn.close()
    seconds = time.perf_counter() - start
    log(f"prewarmed {', '.join(PROBED)} and their indexes: {blocks * 8 / 1024:.0f} MB in {seconds:.0f} s")
    return seconds, blocks * 8 / 1024


def kept_snapshot(url):
    conn = psycopg2.connect(url)
    figures = population.state(conn)
    conn.close()
    return figures


def kept_restore(url, before):
    """The kept population as it was before this run's measurements (population.restore),
    checked: the next run measures the same data."""
    conn = psycopg2.connect(url)
    start = time.perf_counter()
    touched = population.restore(conn, before)
    after = population.state(conn)
    conn.close()
    log(f"kept cluster restored in {time.perf_counter() - start:.0f} s ({', '.join(touched)})")
    changed = {k: (before.get(k), after.get(k)) for k in set(before) | set(after) if before.get(k) != after.get(k)}
    check(not changed, f"the kept population differs after its restore: {changed}")


def add_old_months(conn, months):
    """Spreads the history over `months` months: one check-in for every user on the 15th of each of
    the `months - 1` months before the model's first (its 30 days), as years of daily check-ins
    would leave rows in every month, thinner. Older than each user's latest, they change no
    summary row, so the notifier's triggers are skipped for the load. Returns the rows added."""
    if months <= 1:
        return 0
    cur = conn.cursor()
    cur.execute("SET session_replication_role = replica")
    cur.execute("""INSERT INTO check_ins (user_id, check_in_date)
                   SELECT u.id, (date_trunc('month', %s::date - 30) - make_interval(months => m) + interval '14 days')::date
                   FROM generate_series(1, %s - 1) m, users u""", (RUN_DATE, months))
    added = cur.rowcount
    cur.execute("RESET session_replication_role")
    conn.commit()
    return added


def partition_check_ins(conn, binary, env, months=1):
    """Converts the generated `check_ins` into a table partitioned by month with pg_partman, as
    docs/operating.md converts a running installation (a new partitioned table, the rows copied,
    the names swapped, in one transaction; the copy skips the foreign key's per-row checks), then `migrate` puts the notifier's triggers on it and
    checks what they missed (nothing here: the summary was built from the same rows). The first
    month is the history's (`months` months before the run date's, `add_old_months`); the 2099
    rows go to the default partition. Returns the seconds of the copy and of `migrate`."""
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("CREATE SCHEMA IF NOT EXISTS partman")
    cur.execute("CREATE EXTENSION IF NOT EXISTS pg_partman SCHEMA partman")
    conn.autocommit = False
    start = time.perf_counter()
    cur.execute("""
        CREATE TABLE check_ins_partitioned (LIKE check_ins INCLUDING DEFAULTS,
            PRIMARY KEY (id, check_in_date), UNIQUE (user_id, check_in_date),
            FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE) PARTITION BY RANGE (check_in_date)""")
    cur.execute("ALTER TABLE check_ins RENAME TO check_ins_old")
    cur.execute("ALTER TABLE check_ins_partitioned RENAME TO check_ins")
    cur.execute("""SELECT partman.create_parent('public.check_ins', 'check_in_date', 'native', 'monthly',
                                               p_start_partition := to_char(date_trunc('month', %s::date - 30)
                                                                            - make_interval(months => %s - 1), 'YYYY-MM-DD'))""",
                (RUN_DATE, months))
    # The rows were checked on their way into the old table: no foreign-key check per row again.
    cur.execute("SET LOCAL session_replication_role = replica")
    cur.execute("INSERT INTO check_ins SELECT * FROM check_ins_old")
    cur.execute("ALTER SEQUENCE check_ins_id_seq OWNED BY check_ins.id")
    conn.commit()
    copied = time.perf_counter() - start
    start = time.perf_counter()
    out = subprocess.run([binary, "migrate"], env=env, capture_output=True, text=True)
    migrated = time.perf_counter() - start
    check(out.returncode == 0, f"migrate on the partitioned check_ins: exit {out.returncode}: {out.stderr[-500:]}")
    conn.autocommit = True
    cur.execute("DROP TABLE check_ins_old")
    cur.execute("VACUUM ANALYZE check_ins")
    cur.execute("""SELECT count(*) FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'check_ins'""")
    partitions = cur.fetchone()[0]
    cur.execute("""SELECT count(DISTINCT t.tgname) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                   WHERE c.relname = 'check_ins' AND c.relkind = 'p' AND NOT t.tgisinternal AND t.tgname LIKE 'sileme_%'""")
    triggers = cur.fetchone()[0]
    check(partitions > 1 and triggers == 4, f"partitioned check_ins: {partitions} partitions, {triggers} of the notifier's triggers")
    log(f"check_ins partitioned by month: {partitions} partitions; copied in {copied:.0f} s, migrate {migrated:.0f} s "
        f"({(out.stdout + out.stderr).strip().splitlines()[-1][:200] if (out.stdout + out.stderr).strip() else 'silent'})")
    return copied, migrated


def timed(fn, repeat):
    times = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def baseline(url, users, sample):
    """The design doc's loop: for each user, one prepared query for the latest check-in before D
    and whether a notification was already logged — over one connection."""
    conn = psycopg2.connect(url)
    cur = conn.cursor()
    cur.execute("SELECT id FROM users ORDER BY random() LIMIT %s", (sample,))
    ids = [r[0] for r in cur.fetchall()]
    cur.execute("""
        PREPARE last_check_in(uuid, date) AS
        SELECT (SELECT max(check_in_date) FROM check_ins WHERE user_id = $1 AND check_in_date < $2),
               EXISTS (SELECT 1 FROM notification_logs WHERE user_id = $1 AND notification_date = $2)
        """)
    start = time.perf_counter()
    for user in ids:
        cur.execute("EXECUTE last_check_in(%s, %s)", (user, RUN_DATE))
        cur.fetchone()
    elapsed = time.perf_counter() - start
    conn.close()
    return elapsed * users / sample


def query_seconds(url, sql, params, jit=True):
    """Client time of `sql`; `jit=False` as the notifier runs its due-set statement."""
    conn = psycopg2.connect(url)
    cur = conn.cursor()
    if not jit:
        cur.execute("SET jit = off")
    start = time.perf_counter()
    cur.execute(sql, params)
    rows = cur.fetchall()
    elapsed = time.perf_counter() - start
    conn.close()
    return elapsed, len(rows)


def server_seconds(url, sql, params, jit=True):
    """The server's execution time of `sql` (EXPLAIN ANALYZE with per-node timing off)."""
    conn = psycopg2.connect(url)
    cur = conn.cursor()
    if not jit:
        cur.execute("SET jit = off")
    cur.execute("EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) " + sql, params)
    plan = cur.fetchone()[0]
    conn.close()
    return plan[0]["Execution Time"] / 1000


def run_notifier(binary, args, env, stdout=None):
    """Runs the notifier under /usr/bin/time -v; returns (seconds, max RSS kB, exit status, CPU
    seconds of the notifier process, user + system). `stdout`, if given, is an open file that
    takes the notifier's standard output."""
    start = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-v", binary] + args, env=env, stdout=stdout or subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    rss = next((int(l.split()[-1]) for l in p.stderr.splitlines() if "Maximum resident set size" in l), 0)
    cpu = sum(float(l.split()[-1]) for l in p.stderr.splitlines() if l.strip().startswith(("User time", "System time")))
    return elapsed, rss, p.returncode, cpu


def dry_run_memory(cluster, binary, sizes, repeat):
    """The dry run's peak RSS against the number of users it lists: for each N of `sizes`, a
    database of N users who all miss 2+ days (bench.py's shape otherwise, no guards' data), so
    that the dry run lists every one of them, and `repeat` dry runs of it; then one real
    `--run-now` of the same users to an outbox (it alerts every one of them once). Returns
    ({N: [max RSS kB of each dry run]}, {N: (max RSS kB of the real run, mails written)}). The
    dry run streams its rows (docs/interfaces.md) and the real run streams its alerts into the
    senders (docs/delivery.md), so neither's memory should grow with N; what one keeps per
    listed user shows at 20,000 users here as it would at ~500,000 of the model's (where ~4% are
    listed). The dry runs have the webhook on (an address never reached: a dry run sends
    nothing), so that they also list a webhook event for each user to send to."""
    peaks, runs = {}, {}
    for n in sizes:
        url, env = migrated_database(cluster, binary, f"rss_{n}")
        conn = psycopg2.connect(url)
        generate(conn, n, 0, 0.3, missing_share=1.0)
        conn.close()
        peaks[n] = []
        hooked = dict(env, WEBHOOK_URL="http://127.0.0.1:9/never", WEBHOOK_SECRET="whsec_" + base64.b64encode(bytes(32)).decode())
        for _ in range(repeat):
            with tempfile.TemporaryFile("w+") as report:
                _, rss, status, _ = run_notifier(binary, ["--run-now", "--dry-run", "--format", "json", "--date", RUN_DATE],
                                                 hooked, report)
                report.seek(0)
                listed = json.load(report) if status == 0 else {"users": [], "messages": []}
            sends = sum(1 for u in listed["users"] if u["decision"] == "send")
            events = sum(1 for m in listed["messages"] if m["channel"] == "webhook" and m["kind"] == "alert")
            check(status == 0 and len(listed["users"]) == n and events == sends > 0,
                  f"dry run of {n:,} users all missing: exit {status}, {len(listed['users'])} listed, {sends} to send, {events} webhook events")
            peaks[n].append(rss)
        with tempfile.TemporaryDirectory(prefix="sileme-outbox-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as outbox:
            _, rss, status, _ = run_notifier(binary, ["--run-now", "--date", RUN_DATE],
                                             dict(env, MAIL_TRANSPORT="outbox", OUTBOX_DIR=outbox, SMTP_CONNECTIONS="4"))
            mails = sum(len(files) for _, _, files in os.walk(outbox))
        # Those missing 10+ days are past the catch-up window (stale): about a fifth get no mail.
        check(status == 0 and mails >= n // 2, f"real run of {n:,} users all missing: exit {status}, {mails:,} mails")
        runs[n] = (rss, mails)
    return peaks, runs


def hide_contacts(url, hidden):
    """Swaps emergency_contacts for an empty copy (`hidden`), or back: the dry run without the
    contacts' rows, interleaved with the real one in the same run."""
    conn = psycopg2.connect(url)
    cur = conn.cursor()
    if hidden:
        cur.execute("ALTER TABLE emergency_contacts RENAME TO bench_contacts_hidden")
        cur.execute("CREATE TABLE emergency_contacts (LIKE bench_contacts_hidden INCLUDING ALL)")
    else:
        cur.execute("DROP TABLE emergency_contacts")
        cur.execute("ALTER TABLE bench_contacts_hidden RENAME TO emergency_contacts")
    conn.commit()
    if hidden:
        conn.autocommit = True
        cur.execute("ANALYZE emergency_contacts")
    conn.close()


def add_due_users(cur, count, local, domain):
    """`count` users named 'User N' whose contact is `localN@domain`, each with one check-in three
    days before RUN_DATE: all due on it."""
    cur.execute("""WITH u AS (INSERT INTO users (name, emergency_email)
                              SELECT 'User ' || g, %s || g || '@' || %s FROM generate_series(1, %s) g RETURNING id)
                   INSERT INTO check_ins (user_id, check_in_date) SELECT id, %s::date - 3 FROM u""",
                (local, domain, count, RUN_DATE))


def check(condition, message):
    """The benchmark's own sanity checks: a wrong result is not a fast one."""
    if not condition:
        sys.exit(f"bench: CHECK FAILED: {message}")


def bare_smtp(port, messages, connections):
    """A bare SMTP load generator: `connections` threads, each one smtplib connection."""
    body = ("From: bench@bench.example\r\nTo: x@bench.example\r\nSubject: bench\r\n\r\n" + "x" * 600 + "\r\n").encode()
    per = messages // connections

    def worker():
        s = smtplib.SMTP("127.0.0.1", port)
        for _ in range(per):
            s.sendmail("bench@bench.example", ["sink@bench.example"], body)
        s.quit()

    threads = [threading.Thread(target=worker) for _ in range(connections)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return per * connections / (time.perf_counter() - start)


# The insert path: what the triggers cost a single-row check-in (pgbench, 1 client, simple query
# protocol, over TCP on this machine). Every insert is a user's first check-in of a new day — the
# app's common write — drawn without repetition from a pool of users made for it (a sequence
# numbers them; each pgbench run uses a later date than the last, so each insert moves the user's
# latest check-in forward, as a real one does). Variants:
#   none       no trigger on check_ins (ours disabled; the foreign key's check stays)
#   common     ours, sileme_queue_check_in: the check-in appended to check_in_queue; the user not in
#              an alerted streak (the common case)
#   clearing   the same, each check-in ending an alerted streak (the fold queues the user in
#              pending_all_clears and NOTIFYs; the queue is emptied before each run, so that each
#              fold's queueing is a real one, not a conflict)
# After each run of ours, the run's check-ins are folded into the summary as the daemon does
# (sileme.sileme_fold_check_ins(), one statement; timed per check-in: the work 012 moved off the app's
# transaction) and checked: every user's summary moved, and for `clearing` every user queued.
# And, to see where the time goes (`--insert-diagnostics`), in place of ours:
#   noop       a plpgsql AFTER INSERT trigger that returns at once (the call alone)
#   noop-definer  the same, SECURITY DEFINER SET search_path as ours (what those two clauses cost)
#   sync-011   the trigger body of migration 011, which 012 replaced: the summary row updated in
#              the app's transaction (what the summary cost the insert before the queue)
#   append     ours without the queue's index on user_id: what that index costs the append
# With `--insert-durable` the server is then restarted with PostgreSQL's durable defaults (fsync,
# synchronous_commit, full_page_writes on; the bench's cluster runs without them) and none, ours
# and sync-011 are timed again: what the app's real inserts, each waiting for its commit's flush,
# see (on this machine's disk).
# Besides pgbench's tps, the server's own figures: the INSERT's mean execution time
# (pg_stat_statements, triggers included) and the trigger functions' time per call
# (track_functions), less disturbed by the other work on a shared machine than the client's rate.
INSERT_VARIANTS = ["none", "common", "clearing"]
INSERT_DIAGNOSTICS = ["noop", "noop-definer", "sync-011", "append"]
INSERT_DURABLE = ["none", "common", "sync-011"]
BENCH_TRIGGERS = {"noop": "bench_noop", "noop-definer": "bench_noop_definer", "sync-011": "bench_sync011",
                  "append": "bench_append"}


def migration_function(migration, name, renamed):
    """The trigger function `name` as `migration` (a file of Sources/Store/Migrations) defines it,
    renamed: the body a later migration replaced, timed as it was."""
    with open(os.path.join(ROOT, "Sources/Store/Migrations", migration)) as f:
        text = f.read()
    start = text.index(f"CREATE OR REPLACE FUNCTION {name}()")
    end = text.index("END $$;", start) + len("END $$;")
    # The notifier's tables are in its own schema since 013: the old body finds them there.
    return (text[start:end].replace(f"FUNCTION {name}()", f"FUNCTION {renamed}()", 1)
            .replace("SET search_path = pg_catalog, public", "SET search_path = pg_catalog, sileme, public", 1))


INSERT_TRIGGER_SQL = "\n".join([
    "CREATE FUNCTION bench_noop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;",
    "CREATE FUNCTION bench_noop_definer() RETURNS trigger "
    "LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$ BEGIN RETURN NULL; END $$;",
    migration_function("011_trigger_costs.sql", "sileme_track_last_check_in", "bench_sync011"),
    "CREATE TABLE bench_append_log (user_id uuid NOT NULL, check_in_date date NOT NULL);",
    "CREATE FUNCTION bench_append() RETURNS trigger "
    "LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$ BEGIN "
    "INSERT INTO bench_append_log (user_id, check_in_date) VALUES (NEW.user_id, NEW.check_in_date); RETURN NULL; END $$;",
])


class InsertPath:
    def __init__(self, cluster, db, seconds):
        self.cluster = cluster
        self.db = db
        self.seconds = seconds
        # A pool no single-client run can exhaust (it fails loudly if one does: the sequence ends).
        self.pool = max(20_000, seconds * 25_000)
        self.day = 0
        # The server's own figures need pg_stat_statements loaded: the server is restarted (the
        # insert path is measured last) and warmed up by a first, unreported run.
        cluster.restart("shared_preload_libraries = 'pg_stat_statements'\ntrack_functions = 'pl'\n")
        self.conn = psycopg2.connect(cluster.database_url(db))
        self.conn.autocommit = True
        cur = self.conn.cursor()
        cur.execute("CREATE EXTENSION pg_stat_statements")
        cur.execute("SET session_replication_role = replica")
        # Pool 'ip': checked in on RUN_DATE - 1, never alerted. Pool 'ia': last check-in
        # RUN_DATE - 5, an alert accepted (the summary's latest accepted alert is dated far ahead,
        # so that every later check-in of a run ends the streak again).
        for prefix, last, notified in (("ip", 1, None), ("ia", 5, "2090-01-01")):
            cur.execute("""INSERT INTO users (id, name, emergency_email)
                           SELECT md5(%s || g)::uuid, 'insert ' || g, %s || g || '@bench.example' FROM generate_series(1, %s) g""",
                        (prefix, prefix, self.pool))
            cur.execute("""INSERT INTO check_ins (user_id, check_in_date)
                           SELECT md5(%s || g)::uuid, %s::date - %s FROM generate_series(1, %s) g""", (prefix, RUN_DATE, last, self.pool))
            cur.execute("""INSERT INTO sileme.user_last_check_in (user_id, last_check_in_date, last_notified_date)
                           SELECT md5(%s || g)::uuid, %s::date - %s, %s::date FROM generate_series(1, %s) g""",
                        (prefix, RUN_DATE, last, notified, self.pool))
            if notified:
                cur.execute("""INSERT INTO notification_logs (user_id, notification_date, email_sent, consecutive_miss_days, status,
                                                              sent_at, kind, contact, last_check_in_date, message_id)
                               SELECT md5(%s || g)::uuid, %s::date - 2, true, 2, 'sent', now(), 'alert', %s || g || '@bench.example',
                                      %s::date - %s, md5(%s || g) || '@bench.example' FROM generate_series(1, %s) g""",
                            (prefix, RUN_DATE, prefix, RUN_DATE, last, prefix, self.pool))
        cur.execute("SET session_replication_role = origin")
        cur.execute(f"CREATE SEQUENCE bench_insert_seq MAXVALUE {self.pool} NO CYCLE")
        cur.execute(INSERT_TRIGGER_SQL)
        for name in BENCH_TRIGGERS.values():
            cur.execute(f"CREATE TRIGGER {name} AFTER INSERT ON check_ins FOR EACH ROW EXECUTE FUNCTION {name}()")
            cur.execute(f"ALTER TABLE check_ins DISABLE TRIGGER {name}")
        cur.execute("VACUUM ANALYZE users, check_ins, sileme.user_last_check_in, notification_logs")
        self.run("common")  # the warm-up

    def durable(self):
        """Restarts the server with PostgreSQL's durable defaults and warms it up again."""
        self.conn.close()
        self.cluster.restart("fsync = on\nsynchronous_commit = on\nfull_page_writes = on\n")
        self.conn = psycopg2.connect(self.cluster.database_url(self.db))
        self.conn.autocommit = True
        self.run("common")

    def triggers(self):
        """The triggers on check_ins and user_last_check_in (for the report): name, enabled."""
        cur = self.conn.cursor()
        cur.execute("""SELECT c.relname || '.' || t.tgname, t.tgenabled <> 'D' FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                       WHERE c.relname IN ('check_ins', 'user_last_check_in') AND NOT t.tgisinternal ORDER BY 1""")
        return cur.fetchall()

    def set_triggers(self, variant):
        ours = variant in ("common", "clearing")
        cur = self.conn.cursor()
        for v, name in list(BENCH_TRIGGERS.items()) + [(None, "sileme_queue_check_in")]:
            enable = (v == variant) or (v is None and ours)
            cur.execute(f"ALTER TABLE check_ins {'ENABLE' if enable else 'DISABLE'} TRIGGER {name}")

    def run(self, variant):
        """One pgbench run of `variant`; returns {tps, latency (s), server (s per insert), functions
        ({name: (s per call total, self)})}."""
        self.day += 1
        pool = "ia" if variant == "clearing" else "ip"
        self.set_triggers(variant)
        cur = self.conn.cursor()
        cur.execute("DELETE FROM sileme.pending_all_clears")
        cur.execute("TRUNCATE bench_append_log")
        cur.execute("ALTER SEQUENCE bench_insert_seq RESTART")
        cur.execute("VACUUM sileme.user_last_check_in, sileme.pending_all_clears, sileme.check_in_queue")
        cur.execute("CHECKPOINT")
        cur.execute("SELECT pg_stat_statements_reset(), pg_stat_reset()")
        script = os.path.join(os.path.dirname(self.cluster.dir), "insert.sql")
        with open(script, "w") as f:
            f.write(f"INSERT INTO check_ins (user_id, check_in_date) VALUES (md5('{pool}' || nextval('bench_insert_seq'))::uuid, "
                    f"DATE '{RUN_DATE}' + {self.day}) ON CONFLICT DO NOTHING;\n")
        os.chmod(script, 0o644)
        out = subprocess.run(["runuser", "-u", "postgres", "--", f"{PG_BIN}/pgbench", "-n", "-h", "127.0.0.1",
                              "-p", str(self.cluster.port), "-U", "postgres", "-f", script, "-T", str(self.seconds), "-c", "1", self.db],
                             capture_output=True, text=True)
        check(out.returncode == 0, f"pgbench ({variant}) failed: {out.stderr.strip()[-500:]}")
        lines = out.stdout.splitlines()
        tps = float(next(l for l in lines if l.startswith("tps")).split()[2])
        latency = float(next(l for l in lines if l.startswith("latency average")).split()[3]) / 1000
        done = int(next(l for l in lines if "number of transactions actually processed" in l).split(":")[1].split("/")[0])
        # Every insert was what the variant says: a new check-in.
        cur.execute("SELECT count(*) FROM check_ins WHERE check_in_date = %s::date + %s", (RUN_DATE, self.day))
        inserted = cur.fetchone()[0]
        check(inserted == done, f"pgbench ({variant}) processed {done} transactions but inserted {inserted} check-ins")
        cur.execute("SELECT calls, mean_exec_time / 1000 FROM pg_stat_statements WHERE query LIKE 'INSERT INTO check_ins%%'")
        calls, server = cur.fetchone()
        check(calls == done, f"pg_stat_statements saw {calls} inserts of {done}")
        # pgbench's backend reports its function statistics as it exits (the fold below is ours).
        rows = self.poll(cur, """SELECT funcname, calls, total_time / calls / 1000, self_time / calls / 1000
                                 FROM pg_stat_user_functions WHERE calls > 0 AND funcname <> 'sileme_fold_check_ins'""",
                         lambda rows: variant == "none" or (rows and all(r[1] == done for r in rows)))
        functions = {r[0]: (r[2], r[3]) for r in rows or []}
        fold = None
        if variant in ("common", "clearing"):
            # The daemon's share: the run's check-ins folded into the summary in one statement.
            start = time.perf_counter()
            cur.execute("SELECT count(*) FROM sileme.sileme_fold_check_ins()")
            cleared = cur.fetchone()[0]
            fold = (time.perf_counter() - start) / done
            cur.execute("SELECT count(*) FROM sileme.user_last_check_in WHERE last_check_in_date = %s::date + %s", (RUN_DATE, self.day))
            moved = cur.fetchone()[0]
            check(moved == done, f"pgbench ({variant}): the fold moved {moved} users' summary of {done} check-ins")
            cur.execute("SELECT count(*) FROM sileme.check_in_queue")
            check(cur.fetchone()[0] == 0, f"pgbench ({variant}): the fold left rows in the queue")
            check(cleared == (done if variant == "clearing" else 0), f"pgbench ({variant}): the fold cleared {cleared} streaks of {done}")
        # For `clearing`, a queued user each.
        cur.execute("SELECT count(*) FROM sileme.pending_all_clears")
        queued = cur.fetchone()[0]
        check(queued == (done if variant == "clearing" else 0), f"pgbench ({variant}): {queued} users queued for an all-clear of {done}")
        if variant == "append":
            cur.execute("SELECT count(*) FROM bench_append_log")
            check(cur.fetchone()[0] == done, "pgbench (append): not every check-in was appended")
        self.set_triggers("common")
        return {"tps": tps, "latency": latency, "server": server, "functions": functions, "fold": fold}

    @staticmethod
    def poll(cur, sql, ready, seconds=5):
        """The rows of `sql` once `ready(rows)` holds, polled for up to `seconds`; None if never."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            cur.execute(sql)
            rows = cur.fetchall()
            if ready(rows):
                return rows
            time.sleep(0.1)
        return None

    def measure(self, rounds, variants):
        """`rounds` rounds, each running every variant once (the order rotated each round, so
        that a change in the machine's load falls on all of them); returns {variant: [result…]},
        each result with `ratio`: its tps over none's tps of the same round."""
        results = {v: [] for v in variants}
        for r in range(rounds):
            order = variants[r % len(variants):] + variants[:r % len(variants)]
            this = {v: self.run(v) for v in order}
            for v in variants:
                this[v]["ratio"] = this[v]["tps"] / this["none"]["tps"]
                this[v]["server_ratio"] = this[v]["server"] / this["none"]["server"]
                results[v].append(this[v])
        return results

    def close(self):
        self.conn.close()


def print_insert_results(results):
    """One line per insert-path variant: medians of its rounds, each round's cost beside none's."""
    for v, res in results.items():
        cost = [(1 - r["ratio"]) * 100 for r in res]
        server_cost = [(r["server_ratio"] - 1) * 100 for r in res]
        names = sorted({n for r in res for n in r["functions"]})
        functions = "; ".join(f"{n} {statistics.median(r['functions'][n][0] for r in res if n in r['functions']) * 1e6:.1f} us"
                              + (f" (self {statistics.median(r['functions'][n][1] for r in res if n in r['functions']) * 1e6:.1f})"
                                 if any(abs(r['functions'][n][0] - r['functions'][n][1]) > 1e-7 for r in res if n in r['functions']) else "")
                              for n in names)
        fold = [r["fold"] for r in res if r.get("fold") is not None]
        print(f"  {v:<13} {statistics.median(r['tps'] for r in res):>7,.0f} tps {statistics.median(cost):>5.1f}% "
              f"(rounds {', '.join(f'{c:.0f}%' for c in cost)}); latency {statistics.median(r['latency'] for r in res) * 1e6:.0f} us; "
              f"server {statistics.median(r['server'] for r in res) * 1e6:.1f} us {statistics.median(server_cost):+.0f}%"
              + (f"; trigger: {functions}" if functions else "")
              + (f"; then folded at {statistics.median(fold) * 1e6:.1f} us per check-in" if fold else ""))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--sample", type=int, default=20_000)
    parser.add_argument("--pgbench-seconds", type=int, default=5, help="length of each insert-path measurement")
    parser.add_argument("--insert-diagnostics", action=argparse.BooleanOptionalAction, default=True,
                        help="also time the insert path with a no-op trigger (plain and SECURITY DEFINER), "
                             "migration 011's synchronous summary update, and ours without the queue's index "
                             "(where the trigger's time goes)")
    parser.add_argument("--insert-durable", action=argparse.BooleanOptionalAction, default=True,
                        help="then time none, ours and sync-011 again with fsync, synchronous_commit and full_page_writes on")
    parser.add_argument("--contact-share", type=float, default=0.3,
                        help="share of users with 1-3 rows in emergency_contacts (0: none)")
    parser.add_argument("--keep", action="store_true", help="leave the cluster running and print its URL (for EXPLAIN)")
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/release/sileme-notifier"))
    parser.add_argument("--guard-share", type=float, default=0.01,
                        help="share of users with a future-dated row, of paused users, and of superseded pairs (0: none)")
    parser.add_argument("--rss-users", default="1000,20000",
                        help="SMALL,LARGE: the dry run's memory at SMALL and at LARGE users, every one listed (empty: skip)")
    parser.add_argument("--rss-ratio-limit", type=float, default=1.5,
                        help="fail when the dry run's peak RSS at LARGE listed users exceeds this many times that at SMALL")
    parser.add_argument("--run-rss-ratio-limit", type=float, default=1.2,
                        help="fail when the real run's peak RSS at LARGE users (every one alerted) exceeds this many times that at SMALL")
    parser.add_argument("--layout", choices=("plain", "partitioned"), default="plain",
                        help="check_ins as generated, or partitioned by month with pg_partman as docs/operating.md converts it")
    parser.add_argument("--months", type=int, default=1,
                        help="the history over this many months: a check-in for every user in each month before the model's "
                             "30 days (either layout; partitioned, a partition per month, each holding a row per user)")
    parser.add_argument("--seed", type=int, default=1, help="the population's seed: the same seed and --users, the same data")
    parser.add_argument("--cluster-dir", help="keep the cluster in this folder: made and generated there the first time "
                                              "(resumably: an interrupted generation goes on), reused by later runs")
    add_server_memory_args(parser, "with --cluster-dir: the kept cluster's shared_buffers "
                                   "(bench/history/ten-million.md: ~6GB holds what the probes read at 10M users)")
    parser.add_argument("--prewarm", action="store_true", help="load what the due set's probes read into the shared buffers "
                                                               "after the oracle's aggregates (pg_prewarm), before the due-set query")
    parser.add_argument("--generate-only", action="store_true", help="with --cluster-dir: generate (or go on), then stop")
    parser.add_argument("--run-date", help=f"with --cluster-dir: the run date D of a population generated now (default "
                                           f"{RUN_DATE}; a kept population keeps its own: day.py needs one dated today)")
    parser.add_argument("--chunk-users", type=int, default=population.CHUNK_USERS,
                        help="with --cluster-dir: the users whose check-ins one committed chunk writes")
    parser.add_argument("--min-free-gb", type=float, default=15,
                        help="with --cluster-dir: before each step of the generation, wait while the disk has less free")
    args = parser.parse_args()
    if args.generate_only and not args.cluster_dir:
        parser.error("--generate-only needs --cluster-dir")
    if args.months > 1 and args.cluster_dir:
        parser.error("--months adds to the generated table: not with --cluster-dir, which keeps its population as generated")
    if args.layout == "partitioned" and args.cluster_dir:
        parser.error("--layout partitioned converts the generated table: not with --cluster-dir, which keeps its population as generated")

    base = tempfile.mkdtemp(prefix="sileme-bench-", dir="/var/tmp")
    cluster = sink = kept_state = None
    try:
        log(f"PostgreSQL and SMTP sink in {base}")
        cluster = Cluster.kept(args.cluster_dir, args.shared_buffers, args.huge_pages) if args.cluster_dir else Cluster(base)
        sink = Sink(base)
        url = cluster.database_url("bench")
        env = notifier_env(url, sink.port, SMTP_CONNECTIONS=str(args.connections))
        start = time.perf_counter()
        if args.cluster_dir:
            rows = kept_population(cluster, args, env)
            if args.generate_only:
                return
            kept_state = kept_snapshot(url)
        else:
            admin = psycopg2.connect(cluster.url)
            admin.autocommit = True
            admin.cursor().execute("CREATE DATABASE bench")
            subprocess.run([args.binary, "migrate"], env=env, check=True)
            conn = psycopg2.connect(url)
            rows = generate(conn, args.users, args.guard_share, args.contact_share, seed=args.seed)
            conn.close()
        conn = psycopg2.connect(url)
        contact_rows = conn.cursor()
        contact_rows.execute("SELECT count(*), count(DISTINCT user_id) FROM emergency_contacts")
        n_contacts, n_contact_users = contact_rows.fetchone()
        conn.close()
        log(f"generated {args.users} users, {rows} check-ins, {n_contacts} contacts of {n_contact_users} users "
            f"in {time.perf_counter() - start:.0f} s")
        if args.months > 1:
            conn = psycopg2.connect(url)
            added = add_old_months(conn, args.months)
            conn.close()
            rows += added
            log(f"the history spread over {args.months} months: {added:,} older check-ins")
        if args.layout == "partitioned":
            conn = psycopg2.connect(url)
            partition_check_ins(conn, args.binary, env, args.months)
            conn.close()

        sample = min(args.sample, args.users)
        t_baseline = baseline(url, args.users, sample)
        aggregate_sql = """
            SELECT user_id, max(check_in_date) FROM check_ins WHERE check_in_date < %s::date
            GROUP BY user_id HAVING max(check_in_date) <= %s::date - 3"""
        t_aggregate = statistics.median(query_seconds(url, aggregate_sql, (RUN_DATE, RUN_DATE))[0] for _ in range(args.repeat))
        n_aggregate = query_seconds(url, aggregate_sql, (RUN_DATE, RUN_DATE))[1]
        if args.prewarm:
            prewarm(url)
        # NotificationStore.streamCandidates for the real run (threshold 2, catch-up 7, SUPERSEDE=on),
        # with the contacts (GuardSQL.contacts) of the users the rule could send to.
        # GuardSQL.latestTrustedCheckIn: the last month asked first (a partitioned check_ins prunes
        # to two partitions), the rest only when it holds none.
        latest_trusted = lambda user: f"""coalesce(
            (SELECT max(c.check_in_date) FROM check_ins c WHERE c.user_id = {user} AND c.check_in_date <= %(d)s::date + 1
                AND c.check_in_date > %(d)s::date + 1 - 31),
            (SELECT max(c.check_in_date) FROM check_ins c WHERE c.user_id = {user} AND c.check_in_date <= %(d)s::date + 1))"""
        due_sql = """
            WITH due AS (
                SELECT s.user_id, s.last_check_in_date AS last, NULL::date AS future, s.last_notified_date AS notified
                FROM sileme.user_last_check_in s
                WHERE s.last_check_in_date <= %(d)s::date - 3 AND s.last_check_in_date >= %(d)s::date - 10
                UNION ALL
                SELECT s.user_id, r.last, s.last_check_in_date, s.last_notified_date
                FROM sileme.user_last_check_in s
                CROSS JOIN LATERAL (SELECT """ + latest_trusted("s.user_id") + """ AS last OFFSET 0) r
                WHERE s.last_check_in_date > %(d)s::date + 1 AND r.last <= %(d)s::date - 3
                UNION ALL
                SELECT s.user_id, s.last_check_in_date, NULL, s.last_notified_date
                FROM users p
                CROSS JOIN LATERAL (SELECT * FROM sileme.user_last_check_in s WHERE s.user_id = p.id
                                    AND s.last_check_in_date < %(d)s::date - 10 OFFSET 0) s
                WHERE p.paused_until >= %(d)s::date - 10
            )
            SELECT u.id::text, u.name, u.emergency_email, d.last, u.notified, u.paused_until, d.future, o.id, o.name, o.last,
                   c.contacts
            FROM due d
            CROSS JOIN LATERAL (SELECT id, name, emergency_email, paused_until,
                                       coalesce(d.notified > greatest(d.last, paused_until), false) AS notified
                                FROM users WHERE users.id = d.user_id OFFSET 0) u
            LEFT JOIN LATERAL (
                SELECT b.id::text AS id, b.name, """ + latest_trusted("b.id") + """ AS last
                FROM users b
                WHERE true AND (u.paused_until IS NULL OR u.paused_until < %(d)s::date) AND NOT u.notified
                  AND greatest(d.last, u.paused_until) BETWEEN %(d)s::date - 10 AND %(d)s::date - 3
                  AND lower(btrim(b.emergency_email)) = lower(btrim(u.emergency_email)) AND b.id <> u.id
                OFFSET 0) o ON true
            LEFT JOIN LATERAL (
                SELECT json_agg(json_build_array(e.email, e.position) ORDER BY e.position, e.id)::text AS contacts
                FROM (SELECT email, position, id FROM emergency_contacts e
                      WHERE (u.paused_until IS NULL OR u.paused_until < %(d)s::date) AND NOT u.notified
                        AND greatest(d.last, u.paused_until) BETWEEN %(d)s::date - 10 AND %(d)s::date - 3
                        AND e.user_id = u.id ORDER BY position, id LIMIT 5) e) c ON true
            WHERE d.last >= %(d)s::date - 10 OR u.paused_until >= %(d)s::date - 10
            ORDER BY greatest(d.last, u.paused_until) DESC, d.user_id"""
        due_params = {"d": RUN_DATE}
        t_dueset = statistics.median(query_seconds(url, due_sql, due_params, jit=False)[0] for _ in range(args.repeat))
        n_due = query_seconds(url, due_sql, due_params, jit=False)[1]
        plan_conn = psycopg2.connect(url)
        plan_cur = plan_conn.cursor()
        plan_cur.execute("SET jit = off")
        plan_cur.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) " + due_sql, due_params)
        due_plan = "\n".join(r[0] for r in plan_cur.fetchall())
        plan_conn.close()
        # Like for like with the aggregate, which yields ids and dates only: the due set without
        # the users' names and addresses (the same range scan, no users probe).
        due_ids_sql = """
            SELECT s.user_id, s.last_check_in_date, coalesce(s.last_notified_date > s.last_check_in_date, false)
            FROM sileme.user_last_check_in s
            WHERE s.last_check_in_date <= %s::date - 3 AND s.last_check_in_date >= %s::date - 10"""
        t_due_ids = statistics.median(query_seconds(url, due_ids_sql, (RUN_DATE, RUN_DATE))[0] for _ in range(args.repeat))
        # And the other way round: the aggregate as the app would need it, with names and addresses.
        aggregate_users_sql = f"""
            SELECT u.id, u.name, u.emergency_email, a.max FROM ({aggregate_sql}) a JOIN users u ON u.id = a.user_id"""
        t_aggregate_users = statistics.median(query_seconds(url, aggregate_users_sql, (RUN_DATE, RUN_DATE))[0] for _ in range(args.repeat))
        # The same queries as the server alone executes them (no client, no row transfer).
        s_aggregate = statistics.median(server_seconds(url, aggregate_sql, (RUN_DATE, RUN_DATE)) for _ in range(args.repeat))
        s_dueset = statistics.median(server_seconds(url, due_sql, due_params, jit=False) for _ in range(args.repeat))
        # The same query without the contacts (as it was before migration 010), in the same run:
        # what reading emergency_contacts adds.
        start_c, end_c = due_sql.index("            LEFT JOIN LATERAL (\n                SELECT json_agg"), due_sql.index("            WHERE d.last >=")
        due_sql_pre010 = due_sql[:start_c].replace(",\n                   c.contacts", "") + due_sql[end_c:]
        check("emergency_contacts" not in due_sql_pre010 and "c.contacts" not in due_sql_pre010, "the query without contacts")
        t_dueset_pre010 = statistics.median(query_seconds(url, due_sql_pre010, due_params, jit=False)[0] for _ in range(args.repeat))
        s_dueset_pre010 = statistics.median(server_seconds(url, due_sql_pre010, due_params, jit=False) for _ in range(args.repeat))
        s_due_ids = statistics.median(server_seconds(url, due_ids_sql, (RUN_DATE, RUN_DATE)) for _ in range(args.repeat))

        n_due_ids = query_seconds(url, due_ids_sql, (RUN_DATE, RUN_DATE))[1]
        check(n_due >= n_due_ids, f"the app's due set ({n_due}) lacks users of the summary's window ({n_due_ids})")
        report_path = os.path.join(base, "dry-run.json")
        bare_path = os.path.join(base, "dry-run-no-contacts.json")
        dry = []
        dry_bare = []  # the same with emergency_contacts emptied, interleaved: what the contacts add
        for _ in range(args.repeat):
            with open(report_path, "w") as report:
                dry.append(run_notifier(args.binary, ["--run-now", "--dry-run", "--format", "json", "--date", RUN_DATE], env, report))
            if args.contact_share > 0:
                hide_contacts(url, True)
                try:
                    with open(bare_path, "w") as report:
                        dry_bare.append(run_notifier(args.binary, ["--run-now", "--dry-run", "--format", "json", "--date", RUN_DATE],
                                                     env, report))
                finally:
                    hide_contacts(url, False)
        t_dry = statistics.median(d[0] for d in dry)
        cpu_dry = statistics.median(d[3] for d in dry)
        rss_dry = max(d[1] for d in dry)
        check(all(d[2] == 0 for d in dry + dry_bare), f"dry run exit statuses {[d[2] for d in dry + dry_bare]}")
        with open(report_path) as report:
            dry_report = json.load(report)
        if dry_bare:
            with open(bare_path) as report:
                bare_summary = json.load(report)["summary"]
            check(bare_summary == dry_report["summary"], f"the contacts changed the dry run's decisions: {bare_summary}")
        decisions = [u["decision"] for u in dry_report["users"]]
        to_send = decisions.count("send")
        in_window = len(decisions) - decisions.count("stale")  # the report also lists the stale users
        # The due set's rows the rule lists: all but those a pause's end keeps below the threshold.
        check(0 < in_window <= n_due and to_send > 0, f"dry run lists {in_window} users in the window ({to_send} to send), the due set has {n_due}")
        summary = dry_report["summary"]
        if args.guard_share > 0:
            check(summary.get("superseded", 0) > 0 and summary.get("paused", 0) > 0 and dry_report["future_check_ins_ignored"] > 0,
                  f"the guards' data is not seen: summary {summary}, future {dry_report['future_check_ins_ignored']}")
            future_listed = sum(1 for u in dry_report["users"] if "ignored_future_check_in" in u)
            check(future_listed > 0, "no listed user has an ignored future-dated check-in")

        # The mails the dry run's `send` users are owed: one alert per contact in force (their rows
        # of emergency_contacts, at most 5, else users.emergency_email).
        send_ids = [u["user_id"] for u in dry_report["users"] if u["decision"] == "send"]
        counter = psycopg2.connect(url)
        cur = counter.cursor()
        cur.execute("""SELECT coalesce(sum(CASE WHEN n = 0 THEN 1 ELSE least(n, 5) END), 0),
                              count(*) FILTER (WHERE n > 0)
                       FROM (SELECT (SELECT count(*) FROM emergency_contacts e WHERE e.user_id = x) AS n
                             FROM unnest(%s::uuid[]) x) c""", (send_ids,))
        to_mail, send_with_contacts = cur.fetchone()
        counter.close()
        messages = dry_report.get("messages_summary")  # the dry run's own count per kind, where it gives one
        if messages is not None:
            check(messages.get("alert") == to_mail and sum(messages.values()) == to_mail,
                  f"the dry run's messages {messages}, the contacts of its send users {to_mail}")
        runs = []
        for _ in range(args.repeat):
            reset = psycopg2.connect(url)
            reset.autocommit = True
            reset.cursor().execute("DELETE FROM notification_logs WHERE notification_date = %s", (RUN_DATE,))
            reset.cursor().execute("DELETE FROM sileme.notifier_runs")
            reset.close()
            elapsed, rss, status, _ = run_notifier(args.binary, ["--run-now", "--date", RUN_DATE], env)
            counter = psycopg2.connect(url)
            cur = counter.cursor()
            cur.execute("""SELECT count(*), count(DISTINCT user_id), count(*) FILTER (WHERE kind <> 'alert')
                           FROM notification_logs WHERE notification_date = %s AND email_sent""", (RUN_DATE,))
            sent, sent_users, other_kinds = cur.fetchone()
            counter.close()
            runs.append((elapsed, rss, status, sent, sent_users, other_kinds))
        check(all(r[2] == 0 and r[3] == to_mail and r[4] == to_send and r[5] == 0 for r in runs),
              f"run-now (exit status, mails sent, users, other kinds) {[(r[2], r[3], r[4], r[5]) for r in runs]}, "
              f"the dry run said {to_send} users, {to_mail} mails")
        t_run = statistics.median(r[0] for r in runs)
        sent = runs[-1][3]
        rss_run = max(r[1] for r in runs)
        mails_per_second = statistics.median(r[3] / r[0] for r in runs)
        rss_sizes = [int(n) for n in args.rss_users.split(",") if n.strip()]
        rss_peaks, rss_runs = dry_run_memory(cluster, args.binary, rss_sizes, args.repeat) if len(rss_sizes) == 2 else (None, None)
        bare = statistics.median(bare_smtp(sink.port, 6000, args.connections) for _ in range(args.repeat))

        inserts = InsertPath(cluster, "bench", args.pgbench_seconds)
        insert_variants = INSERT_VARIANTS + (INSERT_DIAGNOSTICS if args.insert_diagnostics else [])
        insert_results = inserts.measure(args.repeat, insert_variants)
        insert_triggers = inserts.triggers()
        durable_results = None
        if args.insert_durable:
            inserts.durable()
            durable_results = inserts.measure(args.repeat, INSERT_DURABLE)
        inserts.close()

        print()
        print(f"sileme-notifier benchmark: {args.users:,} users, {rows:,} check-ins ({args.layout} check_ins), "
              f"{n_contacts:,} emergency_contacts rows "
              f"of {n_contact_users:,} users, run date {RUN_DATE}, "
              f"medians of {args.repeat}, {args.connections} SMTP connections, {os.cpu_count()} cores")
        print(f"{'measure':<44} {'time':>10} {'rows/mails':>11} {'max RSS':>9} {'vs baseline':>12}")
        def row(name, seconds, count, rss=None):
            ratio = f"{t_baseline / seconds:,.0f}x" if seconds > 0 else "-"
            print(f"{name:<44} {seconds:>9.3f}s {count:>11,} {(f'{rss / 1024:.1f} MB' if rss else ''):>9} {ratio:>12}")
        row(f"baseline: per-user loop (sample {sample:,}, extrapolated)", t_baseline, args.users)
        row("best single aggregate over check_ins", t_aggregate, n_aggregate)
        row("  the same, server execution only", s_aggregate, n_aggregate)
        row("aggregate joined with users (names, emails)", t_aggregate_users, n_aggregate)
        row("due set: ids and dates (like the aggregate)", t_due_ids, n_due)
        row("  the same, server execution only", s_due_ids, n_due)
        row("due-set query with names, emails (the app's)", t_dueset, n_due)
        row("  the same, server execution only", s_dueset, n_due)
        row("  without the contacts (009's query)", t_dueset_pre010, n_due)
        row("  the same, server execution only", s_dueset_pre010, n_due)
        row("dry run --format json, end to end", t_dry, n_due, rss_dry)
        if dry_bare:
            row("  the same, emergency_contacts emptied", statistics.median(d[0] for d in dry_bare), n_due)
        row(f"run-now to the SMTP sink (exit {runs[-1][2]})", t_run, sent, rss_run)
        print()
        print(f"due-set vs baseline: {t_baseline / t_dueset:,.0f}x faster (the app's query, names included)")
        print(f"due-set vs best aggregate, like for like (ids and dates): {t_aggregate / t_due_ids:,.1f}x faster "
              f"(server execution only: {s_aggregate / s_due_ids:,.1f}x)")
        print(f"due-set vs best aggregate, both with names and emails: {t_aggregate_users / t_dueset:,.1f}x faster; "
              f"app query vs bare aggregate: {t_aggregate / t_dueset:,.1f}x (server only: {s_aggregate / s_dueset:,.1f}x)")
        mb = lambda kb: f"{kb / 1024:.1f}"
        print(f"dry run: {', '.join(f'{d[0]:.3f}' for d in dry)} s (CPU of the notifier {cpu_dry:.3f} s), "
              f"peak RSS {', '.join(mb(d[1]) for d in dry)} MB"
              + (f"; emergency_contacts emptied, interleaved: {', '.join(f'{d[0]:.3f}' for d in dry_bare)} s "
                 f"(CPU {statistics.median(d[3] for d in dry_bare):.3f} s)" if dry_bare else ""))
        print(f"run-now: {to_send:,} users to alert ({send_with_contacts:,} of them with emergency_contacts rows), "
              f"{to_mail:,} alerts sent, as the dry run said; {', '.join(f'{r[0]:.3f}' for r in runs)} s, "
              f"peak RSS {', '.join(mb(r[1]) for r in runs)} MB")
        print(f"dispatch: {mails_per_second:,.0f} mails/s; bare SMTP generator to the same sink: {bare:,.0f} mails/s "
              f"({mails_per_second / bare * 100:.0f}% of it)")
        print(f"insert path (pgbench, 1 client, single-row check-ins, each a user's first of a new day; {args.repeat} rounds "
              f"of {args.pgbench_seconds} s, order rotated; medians; % = 1 - tps / none's tps of the same round; server = "
              f"the INSERT's mean execution time, triggers included, and its % over none's; trigger = the functions' time per call):")
        print_insert_results(insert_results)
        print(f"  triggers: {', '.join(n for n, _ in insert_triggers if not n.startswith('check_ins.bench_'))}")
        if durable_results:
            print("the same with PostgreSQL's durable defaults (fsync, synchronous_commit, full_page_writes on; each insert "
                  "waits for its commit's flush to this machine's disk):")
            print_insert_results(durable_results)
        print(f"guards in the dry run: {', '.join(f'{k} {v:,}' for k, v in summary.items())}; "
              f"users with future-dated check-ins ignored: {dry_report['future_check_ins_ignored']:,}")
        if rss_peaks:
            small, large = rss_sizes
            rss_small, rss_large = statistics.median(rss_peaks[small]), statistics.median(rss_peaks[large])
            ratio = rss_large / rss_small
            print(f"dry run's memory, every user listed: {small:,} users {', '.join(mb(k) for k in rss_peaks[small])} MB, "
                  f"{large:,} users {', '.join(mb(k) for k in rss_peaks[large])} MB: {ratio:.2f}x "
                  f"({(rss_large - rss_small) * 1024 / (large - small):,.0f} bytes a listed user; limit {args.rss_ratio_limit}x)")
            (run_small, mails_small), (run_large, mails_large) = rss_runs[small], rss_runs[large]
            run_ratio = run_large / run_small
            print(f"real run's memory, every user alerted (outbox): {small:,} users {mb(run_small)} MB ({mails_small:,} mails), "
                  f"{large:,} users {mb(run_large)} MB ({mails_large:,} mails): {run_ratio:.2f}x "
                  f"({(run_large - run_small) * 1024 / (mails_large - mails_small):,.0f} bytes a mail; limit {args.run_rss_ratio_limit}x)")
        print()
        print("due-set plan (EXPLAIN ANALYZE, the real run's query):")
        print(due_plan)
        if rss_peaks:
            check(ratio <= args.rss_ratio_limit,
                  f"the dry run's peak RSS grows with the users it lists: {mb(rss_small)} MB at {small:,}, "
                  f"{mb(rss_large)} MB at {large:,} ({ratio:.2f}x, limit {args.rss_ratio_limit}x)")
            check(run_ratio <= args.run_rss_ratio_limit,
                  f"the real run's peak RSS grows with the mails it sends: {mb(run_small)} MB at {small:,} users, "
                  f"{mb(run_large)} MB at {large:,} ({run_ratio:.2f}x, limit {args.run_rss_ratio_limit}x)")
    finally:
        if sink:
            sink.stop()
        if args.keep and cluster:
            print(f"kept: {cluster.database_url('bench')} (stop: pg_ctl -D {cluster.dir}/data stop; rm -rf {base})")
        elif args.cluster_dir:
            if kept_state:
                kept_restore(url, kept_state)
            if cluster:
                cluster.shutdown()
            shutil.rmtree(base, ignore_errors=True)
        else:
            if cluster:
                cluster.stop()
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
