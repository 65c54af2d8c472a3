#!/usr/bin/python3
"""Each user's own time at N users (docs/user-time.md): what the daemon's day costs when the users
are spread over 40 zones and 96 notify times.

    bench/user-time.py [--users N] [--repeat R] [--binary PATH]      (N default 1,000,000)

Generates bench.py's population (bench.generate), then gives every user one of 40 zones and one of
96 quarter-hour notify times (3,840 slots), and measures, medians of R:

  quiet minute    what the daemon reads every minute: the distinct slots (the skip scan of
                  users_slot_idx, SlotSQL.keys) and the state of their run dates (DaemonState)
  due set         the batch query's due set with the users probe (as bench.py's due-set), for
                  everyone on one date (today's single run) and filtered to the slots of one
                  notify instant (a run of the daemon), for the busiest instant and summed over
                  every distinct instant of a day (the day's total against the single run)
  dry run         `--run-now --dry-run --format json`, process start to exit: `--date D` (everyone
                  on D) and `--at` an instant (each user on their own date: three run dates), on the
                  population as of that instant (no check-in dated after its user's own date)
"""
import argparse, datetime, os, statistics, subprocess, sys, tempfile, time, zoneinfo
import importlib.util

import psycopg2

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("bench", os.path.join(HERE, "bench.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

ZONES = [
    "Asia/Shanghai", "Asia/Tokyo", "Asia/Seoul", "Asia/Singapore", "Asia/Kolkata", "Asia/Kathmandu", "Asia/Dubai",
    "Asia/Karachi", "Asia/Dhaka", "Asia/Bangkok", "Asia/Jakarta", "Asia/Manila", "Asia/Tehran", "Asia/Jerusalem",
    "Europe/London", "Europe/Paris", "Europe/Berlin", "Europe/Moscow", "Europe/Istanbul", "Europe/Lisbon",
    "Africa/Cairo", "Africa/Lagos", "Africa/Nairobi", "Africa/Johannesburg", "America/New_York", "America/Chicago",
    "America/Denver", "America/Los_Angeles", "America/Anchorage", "America/Sao_Paulo", "America/Mexico_City",
    "America/Bogota", "America/St_Johns", "Pacific/Honolulu", "Pacific/Auckland", "Pacific/Chatham",
    "Pacific/Kiritimati", "Australia/Sydney", "Australia/Adelaide", "Australia/Perth",
]
TIMES = [f"{m // 60:02d}:{m % 60:02d}:00" for m in range(0, 24 * 60, 15)]


def key(zone, time_text):
    return f"{zone}|{time_text}"


def instants(day):
    """Every slot's notify instant on `day` (a date) in UTC, grouped: {instant: [key, ...]}."""
    groups = {}
    for zone in ZONES:
        tz = zoneinfo.ZoneInfo(zone)
        for t in TIMES:
            h, m, _ = map(int, t.split(":"))
            local = datetime.datetime(day.year, day.month, day.day, h, m, tzinfo=tz)
            groups.setdefault(local.astimezone(datetime.timezone.utc), []).append(key(zone, t))
    return groups


SLOT = "(coalesce({u}.time_zone, '') || '|' || coalesce({u}.notify_time::text, ''))"
KEYS_SQL = f"""
    WITH RECURSIVE slot(key) AS (
        (SELECT {SLOT.format(u='u')} FROM users u ORDER BY 1 LIMIT 1)
        UNION ALL
        SELECT (SELECT {SLOT.format(u='u')} FROM users u WHERE {SLOT.format(u='u')} > slot.key ORDER BY 1 LIMIT 1)
        FROM slot WHERE slot.key IS NOT NULL)
    SELECT key FROM slot WHERE key IS NOT NULL"""
STATE_SQL = """
    SELECT run_date, status = 'completed', array_to_json(slots)::text FROM sileme.notifier_runs
    WHERE run_date = ANY(%(days)s::date[]) AND mode <> 'retry'"""
RETRY_SQL = """
    SELECT min(coalesce(n.next_attempt_at, now())) FROM notification_logs n
    WHERE n.notification_date = ANY(%(days)s::date[]) AND NOT n.email_sent AND n.status IN ('retry', 'sending')"""
# NotificationStore.streamCandidates' due set and users probe (its slot filter), as bench.py's due-set.
DUE_SQL = f"""
    WITH due AS (
        SELECT s.user_id, s.last_check_in_date AS last FROM sileme.user_last_check_in s
        WHERE s.last_check_in_date <= %(d)s::date - 3 AND s.last_check_in_date >= %(d)s::date - 10
          AND (%(slots)s::text[] IS NULL OR s.slot = ANY(%(slots)s::text[]))
        UNION ALL
        SELECT s.user_id, r.last FROM sileme.user_last_check_in s
        CROSS JOIN LATERAL (SELECT max(c.check_in_date) AS last FROM check_ins c
                            WHERE c.user_id = s.user_id AND c.check_in_date <= %(d)s::date + 1 OFFSET 0) r
        WHERE s.last_check_in_date > %(d)s::date + 1 AND r.last <= %(d)s::date - 3
          AND (%(slots)s::text[] IS NULL OR s.slot = ANY(%(slots)s::text[]))
        UNION ALL
        SELECT s.user_id, s.last_check_in_date FROM users p
        CROSS JOIN LATERAL (SELECT * FROM sileme.user_last_check_in s WHERE s.user_id = p.id
                            AND s.last_check_in_date < %(d)s::date - 10 OFFSET 0) s
        WHERE p.paused_until >= %(d)s::date - 10
          AND (%(slots)s::text[] IS NULL OR {SLOT.format(u='p')} = ANY(%(slots)s::text[])))
    SELECT u.id, u.name, u.emergency_email, d.last FROM due d
    CROSS JOIN LATERAL (SELECT id, name, emergency_email FROM users
                        WHERE users.id = d.user_id AND (%(slots)s::text[] IS NULL OR {SLOT.format(u='users')} = ANY(%(slots)s::text[]))
                        OFFSET 0) u"""


def timed(cur, sql, params, repeat):
    seconds = []
    rows = 0
    for _ in range(repeat):
        start = time.perf_counter()
        cur.execute(sql, params)
        rows = len(cur.fetchall())
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--binary", default=os.path.join(bench.ROOT, ".build/release/sileme-notifier"))
    parser.add_argument("--keep", action="store_true", help="leave the cluster running and print its URL (for EXPLAIN)")
    args = parser.parse_args()
    base = tempfile.mkdtemp(prefix="sileme-user-time-", dir="/var/tmp")
    cluster = bench.Cluster(base)
    try:
        url, env = bench.migrated_database(cluster, args.binary)
        conn = psycopg2.connect(url)
        start = time.perf_counter()
        bench.generate(conn, args.users, 0.01, 0.3)
        cur = conn.cursor()
        cur.execute("""UPDATE users SET time_zone = (%s::text[])[1 + abs(hashtext(id::text)) %% 40],
                                        notify_time = ((%s::text[])[1 + abs(hashtext('t' || id::text)) %% 96])::time""",
                    (ZONES, TIMES))
        cur.execute("VACUUM ANALYZE users, sileme.user_last_check_in")  # the slot trigger rewrote every summary row
        bench.log(f"generated {args.users} users over {len(ZONES)} zones and {len(TIMES)} times in {time.perf_counter() - start:.0f} s")

        run_date = datetime.date.fromisoformat(bench.RUN_DATE)
        days = [str(run_date - datetime.timedelta(days=1)), str(run_date)]
        t_keys, n_keys = timed(cur, KEYS_SQL, {}, args.repeat * 3)
        t_state, _ = timed(cur, STATE_SQL, {"days": days}, args.repeat * 3)
        t_retry, _ = timed(cur, RETRY_SQL, {"days": days}, args.repeat * 3)

        t_all, n_all = timed(cur, DUE_SQL, {"d": bench.RUN_DATE, "slots": None}, args.repeat)
        groups = instants(run_date)
        per_instant = {}
        for instant, keys in sorted(groups.items()):
            per_instant[instant] = timed(cur, DUE_SQL, {"d": bench.RUN_DATE, "slots": keys}, 1)
        busiest = max(groups, key=lambda i: len(groups[i]))
        t_busiest, n_busiest = timed(cur, DUE_SQL, {"d": bench.RUN_DATE, "slots": groups[busiest]}, args.repeat)
        day_total = sum(t for t, _ in per_instant.values())
        day_rows = sum(n for _, n in per_instant.values())

        def dry(extra):
            seconds = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                subprocess.run([args.binary, "--run-now", "--dry-run", "--format", "json"] + extra, env=env, check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                seconds.append(time.perf_counter() - start)
            return statistics.median(seconds)
        # The dry runs see the population as of the instant: a user whose own calendar is still
        # on the day before (the Americas at 01:00Z) has made no check-in dated RUN_DATE yet. The
        # generated history ends on RUN_DATE for everyone (right for the day's instants above);
        # left as it is, a third of the users would carry a check-in dated after their own D + 1
        # and be counted future-dated (38,148 instead of the 10,000 made so), each with a probe
        # of its real last check-in that no real population asks for.
        at = f"{bench.RUN_DATE}T01:00:00Z"
        cur.execute("""DELETE FROM check_ins c USING users u
                       WHERE u.id = c.user_id AND c.check_in_date < DATE '2099-01-01'
                         AND c.check_in_date > (%s::timestamptz AT TIME ZONE u.time_zone)::date""", (at,))
        not_yet = cur.rowcount
        cur.execute("VACUUM ANALYZE check_ins, sileme.user_last_check_in")
        bench.log(f"dry runs: {not_yet} check-ins dated after their user's own date at {at} removed")
        t_dry_date = dry(["--date", bench.RUN_DATE])
        t_dry_at = dry(["--at", at])

        print(f"\n{args.users:,} users, {n_keys} slots ({len(ZONES)} zones x {len(TIMES)} times), "
              f"{len(groups)} distinct notify instants a day; medians of {args.repeat}")
        print(f"{'what':58} {'seconds':>10} {'rows':>9}")
        for name, seconds, rows in [
            ("quiet minute: distinct slots (skip scan)", t_keys, n_keys),
            ("quiet minute: the run dates' runs (DaemonState)", t_state, None),
            ("quiet minute: the next retry (DaemonState)", t_retry, None),
            ("due set, everyone on one date (the single run)", t_all, n_all),
            (f"due set, busiest instant ({busiest:%H:%M}Z, {len(groups[busiest])} slots)", t_busiest, n_busiest),
            (f"due set, every instant of the day ({len(groups)} runs)", day_total, day_rows),
            ("dry run --date (everyone on D), process", t_dry_date, None),
            ("dry run --at (each user on their own date), process", t_dry_at, None),
        ]:
            print(f"{name:58} {seconds:10.4f} {'' if rows is None else rows:>9}")
        print(f"\nquiet minute total {t_keys + t_state + t_retry:.4f} s; day / single run = {day_total / t_all:.1f}x")
        if args.keep:
            print(f"kept: {url}")
            return 0
    except BaseException:
        args.keep = False
        raise
    finally:
        if not args.keep:
            cluster.stop()


if __name__ == "__main__":
    sys.exit(main())
