#!/usr/bin/python3
"""The intake guard at N users (docs/intake-hold.md): what it adds to a run, to the daemon's minute
and to the fold.

    bench/intake.py [--users N] [--repeat R] [--batch B] [--binary PATH]      (N default 1,000,000)

Generates bench.py's population (bench.generate: 30 days of history), fills daily_intake as
migration 031 does, and measures, medians of R:

  per run        the statement a run adds (RunPlan.Holds.read): the intake of the judged days and
                 their 14 days before (HoldStore.intake, with the queue). The recorded holds come
                 with each user the batch query lists (HoldStore.recordedSQL, one probe of a user
                 the rule could send to): their cost is in the dry run's, on against off below;
                 the memory of a run that holds every user is bench/mass-hold.py's
  per minute     what the daemon adds to its look (HoldStore.nextRelease: the next hold's end),
                 and what `check` and the metrics file read (HoldStore.open), with no hold and with
                 every due user held
  per fold       a fold of B queued check-ins with the intake upsert (the fold since 016) against
                 the same fold without it (012's body, as a function of the bench's own), on
                 batches of the same size, alternated
  dry run        `--run-now --dry-run --date D`, process start to exit, with the guard on (the
                 default) and off (INTAKE_DROP_RATIO=0): the guard's share of a whole plan
"""
import argparse, datetime, os, statistics, subprocess, sys, tempfile, time
import importlib.util

import psycopg2

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("bench", os.path.join(HERE, "bench.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

# HoldStore's statements, as the plan and the daemon run them.
INTAKE_SQL = """
    SELECT day::text AS day, time_zone, sum(users)::text AS users FROM (
        SELECT day, time_zone, users FROM sileme.daily_intake WHERE day BETWEEN %(first)s::date AND %(last)s::date
        UNION ALL
        SELECT q.check_in_date, left(coalesce(u.time_zone, ''), 64), count(*) FROM sileme.check_in_queue q
        LEFT JOIN users u ON u.id = q.user_id
        WHERE q.check_in_date BETWEEN %(first)s::date AND %(last)s::date GROUP BY 1, 2
    ) i GROUP BY day, time_zone"""
NEXT_SQL = "SELECT extract(epoch FROM min(release_at))::text FROM sileme.held_alerts WHERE ended_at IS NULL"
OPEN_SQL = """
    SELECT count(*)::text AS held, extract(epoch FROM min(h.release_at))::text AS next_release,
           (SELECT string_agg(d::text, ',' ORDER BY d) FROM (SELECT DISTINCT unnest(h2.gap_days) AS d
                FROM sileme.held_alerts h2 WHERE h2.ended_at IS NULL) g) AS gap_days
    FROM sileme.held_alerts h
    JOIN sileme.user_last_check_in s ON s.user_id = h.user_id
    WHERE h.ended_at IS NULL AND s.last_check_in_date <= h.streak_after"""


def timed(cur, sql, params, repeat):
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        cur.execute(sql, params)
        cur.fetchall()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def without_intake(cur):
    """The fold as 012 made it (no intake upsert), as a function of the bench's own."""
    cur.execute("SELECT pg_get_functiondef('sileme.sileme_fold_check_ins()'::regprocedure)")
    body = cur.fetchone()[0]
    start = body.index("        ), intake AS (")
    end = body.index("        ), latest AS (")
    body = body[:start] + body[end:]
    body = body.replace("sileme.sileme_fold_check_ins()", "sileme.bench_fold_without_intake()", 1)
    assert "daily_intake" not in body
    cur.execute(body)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--batch", type=int, default=5000)
    parser.add_argument("--binary", default=os.path.join(bench.ROOT, ".build/release/sileme-notifier"))
    args = parser.parse_args()
    base = tempfile.mkdtemp(prefix="sileme-intake-", dir="/var/tmp")
    cluster = bench.Cluster(base)
    try:
        url, env = bench.migrated_database(cluster, args.binary)
        conn = psycopg2.connect(url)
        start = time.perf_counter()
        bench.generate(conn, args.users, 0.01, 0.3)
        cur = conn.cursor()
        # The bulk load bypassed the triggers: the intake as 031 fills it (by day and the users' zone).
        cur.execute("""INSERT INTO sileme.daily_intake (day, time_zone, users)
                       SELECT c.check_in_date, left(coalesce(u.time_zone, ''), 64), count(*)
                       FROM check_ins c LEFT JOIN users u ON u.id = c.user_id GROUP BY 1, 2""")
        cur.execute("VACUUM ANALYZE sileme.daily_intake")
        bench.log(f"generated {args.users} users in {time.perf_counter() - start:.0f} s")

        run_date = datetime.date.fromisoformat(bench.RUN_DATE)
        # The plan's window with the defaults (MISS_THRESHOLD_DAYS 2, CATCH_UP_DAYS 7): the judged
        # days L'+1 … D−1 from the oldest due L' = D − 10, and the 14 days before them.
        oldest = run_date - datetime.timedelta(days=10)
        window = {"first": str(oldest + datetime.timedelta(days=1) - datetime.timedelta(days=14)),
                  "last": str(run_date - datetime.timedelta(days=1))}
        holds = {"first": str(oldest), "last": str(run_date - datetime.timedelta(days=3))}
        t_intake = timed(cur, INTAKE_SQL, window, args.repeat)
        t_next_none = timed(cur, NEXT_SQL, {}, args.repeat)
        t_open_none = timed(cur, OPEN_SQL, {}, args.repeat)

        # An outage at N users: every user due on D held.
        cur.execute("""INSERT INTO sileme.held_alerts (user_id, streak_after, run_date, gap_days, release_at)
                       SELECT user_id, last_check_in_date, %(d)s::date, ARRAY[%(d)s::date - 2, %(d)s::date - 1], now() + interval '6 hours'
                       FROM sileme.user_last_check_in
                       WHERE last_check_in_date BETWEEN %(first)s::date AND %(last)s::date""",
                    {"d": bench.RUN_DATE, **holds})
        held = cur.rowcount
        cur.execute("VACUUM ANALYZE sileme.held_alerts")
        t_next_all = timed(cur, NEXT_SQL, {}, args.repeat)
        t_open_all = timed(cur, OPEN_SQL, {}, args.repeat)
        cur.execute("TRUNCATE sileme.held_alerts")

        # The fold with and without the intake upsert, on batches of the same size (check-ins of
        # users with none dated D + 1 yet, a new batch each time).
        without_intake(cur)
        cur.execute("SELECT id FROM users ORDER BY id LIMIT %s", (args.batch * args.repeat * 2,))
        ids = [row[0] for row in cur.fetchall()]
        folds = {"with": [], "without": []}
        for i in range(args.repeat * 2):
            batch = ids[i * args.batch:(i + 1) * args.batch]
            cur.execute("INSERT INTO check_ins (user_id, check_in_date) SELECT unnest(%s::uuid[]), %s::date + 1",
                        (batch, bench.RUN_DATE))
            which = "with" if i % 2 == 0 else "without"
            function = "sileme.sileme_fold_check_ins()" if which == "with" else "sileme.bench_fold_without_intake()"
            start = time.perf_counter()
            cur.execute(f"SELECT count(*) FROM {function}")
            cur.fetchall()
            folds[which].append(time.perf_counter() - start)
        t_fold_with, t_fold_without = statistics.median(folds["with"]), statistics.median(folds["without"])

        def dry(extra):
            seconds = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                subprocess.run([args.binary, "--run-now", "--dry-run", "--format", "json", "--date", bench.RUN_DATE],
                               env=dict(env, **extra), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                seconds.append(time.perf_counter() - start)
            return statistics.median(seconds)
        t_dry_on = dry({})
        t_dry_off = dry({"INTAKE_DROP_RATIO": "0"})

        print(f"\n{args.users:,} users; medians of {args.repeat}")
        print(f"{'what':62} {'seconds':>10}")
        for name, seconds in [
            ("per run: the intake of the judged days (24 days)", t_intake),
            ("per minute (daemon): the next hold's end, none held", t_next_none),
            (f"per minute (daemon): the next hold's end, {held:,} held", t_next_all),
            ("check / metrics: the open holds and their gaps, none held", t_open_none),
            (f"check / metrics: the open holds and their gaps, {held:,} held", t_open_all),
            (f"fold of {args.batch:,} check-ins, with the intake upsert", t_fold_with),
            (f"fold of {args.batch:,} check-ins, without it (012)", t_fold_without),
            ("dry run --date D, guard on (process)", t_dry_on),
            ("dry run --date D, guard off (process)", t_dry_off),
        ]:
            print(f"{name:62} {seconds:10.4f}")
        print(f"\nguard per run {1000 * t_intake:.1f} ms; fold with/without intake = {t_fold_with / t_fold_without:.2f}x; "
              f"dry run on/off = {t_dry_on / t_dry_off:.2f}x")
        return 0
    finally:
        cluster.stop()


if __name__ == "__main__":
    sys.exit(main())
