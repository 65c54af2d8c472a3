#!/usr/bin/python3
"""RETENTION_DAYS at scale: the daemon deletes 1,000,000 old notification rows after its daily run
while the app keeps inserting check-ins; how long it takes, and how long a check-in insert waited.

    bench/retention.py [--users 100000] [--days 10] [--binary .build/release/sileme-notifier]

A throwaway PostgreSQL and SMTP sink (bench.py's); `--users` × `--days` accepted notifications
dated 100 days back and older (all past a 30-day retention), the latest 30 days of each user's
history kept. A client inserts single check-ins in autocommit as fast as it can, before and during
the deletion; the report compares their latencies. Exits 1 when the deletion leaves a row it should
have deleted, deletes one it should have kept, or breaks the summary.
"""
import argparse
import datetime
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import psycopg2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the throwaway cluster, the SMTP sink, the checks)

ZONE_OFFSET = datetime.timezone(datetime.timedelta(hours=8))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--days", type=int, default=10, help="old accepted notifications per user")
    parser.add_argument("--binary", default=os.path.join(bench.ROOT, ".build/release/sileme-notifier"))
    args = parser.parse_args()
    base = tempfile.mkdtemp(prefix="sileme-retention-", dir="/var/tmp")
    cluster = sink = daemon = None
    try:
        cluster = bench.Cluster(base)
        sink = bench.Sink(base)
        admin = psycopg2.connect(cluster.url)
        admin.autocommit = True
        admin.cursor().execute("CREATE DATABASE retention")
        url = cluster.database_url("retention")
        env = {"PATH": "/usr/bin:/bin", "DATABASE_URL": url, "MIGRATIONS_DIR": os.path.join(bench.ROOT, "Sources/Store/Migrations"),
               "SMTP_HOST": "127.0.0.1", "SMTP_PORT": str(sink.port), "SMTP_TLS": "none", "FROM_EMAIL": "noreply@sileme.app",
               "RETENTION_DAYS": "30"}
        bench.check(subprocess.run([args.binary, "migrate"], env=env, stdout=subprocess.DEVNULL).returncode == 0, "migrate")
        today = datetime.datetime.now(ZONE_OFFSET).date()
        conn = psycopg2.connect(url)
        cur = conn.cursor()
        cur.execute("""
            INSERT INTO users (id, name, emergency_email)
            SELECT md5('u' || g)::uuid, '用户' || g, 'user' || g || '@bench.example' FROM generate_series(1, %s) g
            """, (args.users,))
        # Everyone checked in today (nobody is due); and yesterday's run completed.
        cur.execute("INSERT INTO check_ins (user_id, check_in_date) SELECT id, %s FROM users", (today,))
        cur.execute("INSERT INTO sileme.notifier_runs (run_date, mode, host, pid, status, finished_at) "
                    "VALUES (%s, 'daemon', 'bench', 1, 'completed', now())", (today - datetime.timedelta(days=1),))
        cur.execute("""
            INSERT INTO notification_logs (user_id, notification_date, email_sent, consecutive_miss_days, status, sent_at)
            SELECT id, %s::date - 100 - d, true, 2, 'sent', now() FROM users, generate_series(0, %s - 1) d
            """, (today, args.days))
        # Kept: one recent accepted notification each for a tenth of the users (it stays the summary's).
        cur.execute("""
            INSERT INTO notification_logs (user_id, notification_date, email_sent, consecutive_miss_days, status, sent_at)
            SELECT id, %s::date - 20, true, 2, 'sent', now() FROM users WHERE get_byte(decode(md5(id::text), 'hex'), 0) < 26
            """, (today,))
        conn.commit()
        conn.autocommit = True
        cur.execute("VACUUM ANALYZE")
        cur.execute("SELECT count(*) FROM notification_logs WHERE notification_date < %s::date - 30", (today,))
        old = cur.fetchone()[0]
        cur.execute("SELECT count(*) FROM notification_logs WHERE notification_date >= %s::date - 30", (today,))
        kept = cur.fetchone()[0]
        bench.log(f"{args.users} users, {old} notification rows past a 30-day retention, {kept} within it")

        # The app: single check-ins (a new day for a random user each time), latency per insert.
        latencies = {"before": [], "during": []}
        phase = ["before"]
        stop = threading.Event()

        def app():
            c = psycopg2.connect(url)
            c.autocommit = True
            k = c.cursor()
            day = 1
            while not stop.is_set():
                user = f"u{random.randint(1, args.users)}"
                start = time.perf_counter()
                k.execute("INSERT INTO check_ins (user_id, check_in_date) VALUES (md5(%s)::uuid, %s::date - %s) "
                          "ON CONFLICT DO NOTHING", (user, today, day))
                latencies[phase[0]].append(time.perf_counter() - start)
                day = day % 29 + 1
            c.close()

        inserter = threading.Thread(target=app)
        inserter.start()
        time.sleep(3)
        fire = (datetime.datetime.now(ZONE_OFFSET) + datetime.timedelta(seconds=3)).strftime("%H:%M:%S")
        daemon = subprocess.Popen([args.binary], env=dict(env, NOTIFY_TIME=fire), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # The deletion starts after the day's run; it is over when no old row is left.
        deadline = time.time() + 1800
        started = None
        while time.time() < deadline:
            cur.execute("SELECT count(*) FROM notification_logs WHERE notification_date < %s::date - 30", (today,))
            left = cur.fetchone()[0]
            if started is None and left < old:
                started = time.perf_counter()
                phase[0] = "during"
            if left == 0:
                break
            time.sleep(0.2)
        finished = time.perf_counter()
        stop.set()
        inserter.join()
        bench.check(started is not None and left == 0, f"the old rows were deleted ({left} left)")
        cur.execute("SELECT count(*) FROM notification_logs")
        bench.check(cur.fetchone()[0] == kept, "every row within the retention kept")
        cur.execute("""SELECT count(*) FROM sileme.user_last_check_in s
                       WHERE s.last_notified_date IS DISTINCT FROM
                             (SELECT max(notification_date) FROM notification_logs n WHERE n.user_id = s.user_id AND email_sent)""")
        bench.check(cur.fetchone()[0] == 0, "the summary's latest notification is right for every user")

        def summary(values):
            values = sorted(values)
            return (f"{len(values)} inserts, median {statistics.median(values) * 1000:.2f} ms, "
                    f"p99 {values[int(len(values) * 0.99)] * 1000:.2f} ms, max {values[-1] * 1000:.1f} ms")

        print(f"retention: {old:,} rows deleted in {finished - started:.1f} s ({old / (finished - started):,.0f} rows/s), "
              f"batches of 500; {kept:,} kept")
        print(f"check-in inserts before: {summary(latencies['before'])}")
        print(f"check-in inserts during: {summary(latencies['during'])}")
    finally:
        if daemon:
            daemon.terminate()
            daemon.wait()
        if sink:
            sink.stop()
        if cluster:
            cluster.stop()
        subprocess.run(["rm", "-rf", base])


if __name__ == "__main__":
    main()
