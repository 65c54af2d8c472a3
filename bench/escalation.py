#!/usr/bin/python3
"""The daemon's minute with many open alerts (docs/escalation.md): what finding the escalation
steps due costs, with nothing due and with some.

    bench/escalation.py [--users N] [--open K] [--due D] [--repeat R] [--binary PATH]
                        (N default 1,000,000; K 20,000; D 200; R 20)

Starts a throwaway cluster, migrates it, adds N users, each with one settled streak in
`sileme.escalations` (heard or closed long ago: the history a year of alerts leaves) and K of them
with an open streak alerted within the last 3 hours (so none is due at ESCALATE_AFTER=3h), and
ANALYZEs. Then it times the store's statement (`EscalationStore.due`, read from its source) on the server
(EXPLAIN ANALYZE, median of R) with nothing due, and again after D streaks were made due (their
clock moved back, as a wait run out or a bounce does), and prints both plans. Numbers only: the
requirement is one index probe, under 10 ms with nothing due.
"""
import argparse, importlib.util, os, shutil, statistics, sys, tempfile

import psycopg2

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("bench", os.path.join(HERE, "bench.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def due_sql():
    """The statement of `EscalationStore.due`, read from Sources/Store/EscalationStore.swift — the
    text the binary is built from, not a copy that could drift — with its binds as %(name)s. The
    literal is a Swift multi-line string: its lines lose the closing delimiter's indentation. One
    that interpolates Swift (a `\\(` in it) is no longer readable here: stop rather than guess."""
    import re
    with open(os.path.join(bench.ROOT, "Sources/Store/EscalationStore.swift"), encoding="utf-8") as f:
        source = f.read()
    body = source[source.index("static func due("):]
    opening = body.index('SQLStatement("""\n') + len('SQLStatement("""\n')
    closing = body.index('"""', opening)
    lines = body[opening:closing].split("\n")
    indent = len(lines[-1])  # the closing delimiter's line: its indentation only
    text = "\n".join(line[indent:] for line in lines[:-1])
    if "\\(" in text:
        sys.exit("bench/escalation.py: EscalationStore.due interpolates Swift now; teach due_sql() to read it")
    return re.sub(r"\$([A-Za-z_][A-Za-z0-9_]*)", r"%(\1)s", text.replace("%", "%%"))


DUE_SQL = due_sql()


def timed(cur, repeat):
    """The server's median execution time of the due statement (ms), and its plan."""
    params = {"before": None, "limit": 1000}
    cur.execute("SELECT extract(epoch FROM now() - interval '3 hours')")
    params["before"] = float(cur.fetchone()[0])
    times = []
    for _ in range(repeat):
        cur.execute("EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) " + DUE_SQL, params)
        times.append(cur.fetchone()[0][0]["Execution Time"])
    cur.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) " + DUE_SQL, params)
    plan = "\n".join(r[0] for r in cur.fetchall())
    cur.execute(DUE_SQL, params)
    return statistics.median(times), plan, len(cur.fetchall())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--open", type=int, default=20_000)
    parser.add_argument("--due", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--binary", default=os.path.join(bench.ROOT, ".build/release/sileme-notifier"))
    args = parser.parse_args()
    base = tempfile.mkdtemp(prefix="sileme-escalation-", dir="/var/tmp")
    cluster = bench.Cluster(base)
    try:
        url, _ = bench.migrated_database(cluster, args.binary)
        conn = psycopg2.connect(url)
        conn.autocommit = True
        cur = conn.cursor()
        cur.execute("""
            INSERT INTO users (id, name, emergency_email)
            SELECT md5(g::text)::uuid, 'u' || g, 'u' || g || '@bench.example' FROM generate_series(1, %s) g
            """, (args.users,))
        # The history: one settled streak a user, months ago.
        cur.execute("""
            INSERT INTO sileme.escalations (user_id, alert_date, last_check_in_date, first_sent_at, clock_at, stage, heard_at)
            SELECT id, date '2025-06-01' + (hashtext(id::text) & 127), date '2025-05-29' + (hashtext(id::text) & 127),
                   timestamptz '2025-06-01 01:00+00' + (hashtext(id::text) & 127) * interval '1 day',
                   timestamptz '2025-06-01 01:00+00' + (hashtext(id::text) & 127) * interval '1 day',
                   CASE WHEN hashtext(id::text) & 1 = 0 THEN 'heard' ELSE 'closed' END, now()
            FROM users
            """)
        # The open alerts: sent within the last 3 hours, none due yet; each with its accepted alert row.
        cur.execute("""
            WITH o AS (SELECT id, now() - (random() * interval '170 minutes') AS sent FROM users ORDER BY id LIMIT %s)
            INSERT INTO notification_logs (user_id, notification_date, kind, channel, contact, email_sent, status, sent_at,
                                           consecutive_miss_days, last_check_in_date)
            SELECT o.id, current_date, 'alert', 'email', u.emergency_email, true, 'sent', o.sent, 2, current_date - 3
            FROM o JOIN users u ON u.id = o.id
            """, (args.open,))
        cur.execute("VACUUM ANALYZE")
        cur.execute("SELECT count(*) FILTER (WHERE stage IN ('alerted', 'escalated')), count(*) FROM sileme.escalations")
        open_count, total = cur.fetchone()
        idle_ms, idle_plan, idle_rows = timed(cur, args.repeat)
        cur.execute("""
            UPDATE sileme.escalations SET clock_at = clock_at - interval '3 hours'
            WHERE (user_id, alert_date) IN (SELECT user_id, alert_date FROM sileme.escalations WHERE stage = 'alerted' LIMIT %s)
            """, (args.due,))
        due_ms, due_plan, due_rows = timed(cur, args.repeat)
        print(f"{args.users:,} users, {total:,} streaks recorded, {open_count:,} open:")
        print(f"  nothing due: {idle_ms:.3f} ms on the server ({idle_rows} rows; median of {args.repeat})")
        print(f"  {args.due} due:     {due_ms:.3f} ms on the server ({due_rows} rows, each with its facts)")
        print("\nplan, nothing due:\n" + idle_plan)
        print("\nplan, some due:\n" + due_plan)
        conn.close()
    finally:
        cluster.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
