#!/usr/bin/python3
"""Each user's own time at N users (docs/user-time.md): what the daemon's day costs when the users
are spread over 40 zones and 96 notify times.

    bench/user-time.py [--users N] [--repeat R] [--binary PATH]      (N default 1,000,000)

Generates bench.py's population (bench.generate), then gives every user one of 40 zones and one of
96 quarter-hour notify times (3,840 slots), and measures, medians of R:

  quiet minute    what the daemon reads every minute: the count of changes of the slots
                  (SlotSQL.changes, one row) and the state of their run dates (DaemonState); and
                  what it reads besides when the count moved: the distinct slots (the skip scan
                  of users_slot_idx, SlotSQL.keys)
  due set         the batch query's due set with the users probe (as bench.py's due-set), for
                  everyone on one date (today's single run) and filtered to the slots of one
                  notify instant (a run of the daemon), for the busiest instant and summed over
                  every distinct instant of a day (the day's total against the single run, timed
                  in R rounds of the single run and every instant, each instant's median summed)
  whole plan      every statement a run's plan sends, replayed from the server's log of the
                  binary's own dry runs (`--date D` for the single run; `--at` for a run date's
                  statements, given each instant's times): the single run against the day's runs,
                  client time and server time (planning + execution), in R rounds; and again with
                  each run on a new session (connecting, a new server process's first plans)
  dry run         `--run-now --dry-run --format json`, process start to exit: `--date D` (everyone
                  on D) and `--at` an instant (each user on their own date: three run dates), on the
                  population as of that instant (no check-in dated after its user's own date)
"""
import argparse, datetime, os, re, statistics, subprocess, sys, tempfile, time, zoneinfo
import importlib.util

import psycopg2

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("bench", os.path.join(HERE, "bench.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

# The 40 zones, one IANA name a line (bench/slots reads the same file).
with open(os.path.join(HERE, "zones.txt")) as _f:
    ZONES = [line.strip() for line in _f if line.strip()]
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
CHANGES_SQL = "SELECT changes FROM sileme.user_times_changes"
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


# The whole plan of a run, as the binary sends it: every statement of a dry run, read back from
# the server's log (log_min_duration_statement = 0) with its parameters, so that the bench replays
# the notifier's own SQL rather than a copy of it. A statement a run of some times leaves to the
# daemon's all-clear pass (its sweeps read every recent alert) is marked, by what it reads.
LOG_ENTRY = re.compile(r"\n(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ UTC \[\d+\] )")
EXECUTE = re.compile(r"\S+ \S+ UTC \[(\d+)\] LOG:  duration: [\d.]+ ms  execute <unnamed>: (.*)", re.S)
DETAIL = re.compile(r"\S+ \S+ UTC \[(\d+)\] DETAIL:  parameters: (.*)", re.S)
PARAMETER = re.compile(r"\$(\d+) = (NULL|'(?:[^']|'')*')")
OTHER_LOG = re.compile(r"\S+ \S+ UTC \[(\d+)\] LOG:  ")
CURSOR = "DECLARE sileme_stream NO SCROLL CURSOR FOR "
# Read by the daemon when it decides, every minute (the quiet minute), not by its run.
DECIDING = ("WITH RECURSIVE slot(key)",)
SWEEPS = ("sileme.pending_all_clears", "FROM sileme.acknowledgements k")
SHARE = re.compile(r"\(\$(\d+)::int IS NULL OR \(hashtext\(d\.user_id::text\) & 2147483647\) % \$\d+::int = \$(\d+)::int\)")


def captured_plan(cluster, url, binary, env, extra, oldest):
    """The statements of `--run-now --dry-run` with `extra`: [(sql, params, jit_off, sweep, pid)],
    the cursor's query as a plain query, without transaction control, cursor fetches and settings;
    `pid`: the server process, one per connection (a run date's plan has connections of its own)."""
    admin = psycopg2.connect(url)
    admin.autocommit = True
    cur = admin.cursor()
    cur.execute("ALTER SYSTEM SET log_min_duration_statement = 0")
    cur.execute("ALTER SYSTEM SET log_line_prefix = '%m [%p] '")
    cur.execute("SELECT pg_reload_conf()")
    time.sleep(0.5)
    log = os.path.join(cluster.dir, "log")
    start = os.path.getsize(log)
    subprocess.run([binary, "--run-now", "--dry-run", "--format", "json"] + extra, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cur.execute("ALTER SYSTEM RESET log_min_duration_statement")
    cur.execute("ALTER SYSTEM RESET log_line_prefix")
    cur.execute("SELECT pg_reload_conf()")
    admin.close()
    with open(log, encoding="utf-8", errors="replace") as f:
        f.seek(start)
        text = f.read()
    statements, jit_off, last = [], set(), {}
    for entry in LOG_ENTRY.split(text):
        m = EXECUTE.match(entry)
        other = OTHER_LOG.match(entry)
        if other and not m:
            last[other.group(1)] = None  # a parse or bind, whose parameters are not the last execute's
            continue
        if m:
            pid, sql = m.group(1), m.group(2).strip()
            if sql in ("COMMIT", "ROLLBACK") or sql.startswith("BEGIN"):
                jit_off.discard(pid)
            last[pid] = None
            if sql.startswith(("BEGIN", "COMMIT", "ROLLBACK", "FETCH ", "CLOSE ")):
                continue
            if sql.startswith("SELECT set_config("):
                last[pid] = "setting"
                continue
            if sql.startswith(DECIDING):
                continue
            item = [sql.removeprefix(CURSOR), [], pid in jit_off, any(t in sql for t in SWEEPS), pid]
            statements.append(item)
            last[pid] = item
            continue
        m = DETAIL.match(entry)
        if m and last.get(m.group(1)) is not None:
            pid, values = m.group(1), [None if v == "NULL" else v[1:-1].replace("''", "'")
                                       for _, v in PARAMETER.findall(m.group(2))]
            if last[pid] == "setting":
                if values[:2] == ["jit", "off"]:
                    jit_off.add(pid)
            else:
                last[pid][1] = values
            last[pid] = None
    # The dry run reads its widest run date in two shares side by side, each on a connection of
    # its own; a run reads it whole: the statements of the first share's connection, its batch
    # query without the share's condition, are the run's, the other share's are left out. The
    # dry run lists the users past the catch-up window too (from `-infinity`); a run reads from
    # the window's start, `oldest`.
    others = set()
    for sql, params, _, _, pid in statements:
        share = SHARE.search(sql)
        if share and params[int(share.group(2)) - 1] not in (None, "0"):
            others.add(pid)
    plan = []
    for sql, params, jit, sweep, pid in statements:
        if pid in others:
            continue
        params = [oldest if v == "-infinity" else v for v in params]
        share = SHARE.search(sql)
        if share:
            params = [None if str(i + 1) in share.group(1, 2) else v for i, v in enumerate(params)]
        plan.append((sql, params, jit, sweep, pid))
    return plan


def replay(cur, statements, slots=None, sweeps=True, server=False):
    """The time of `statements` run one after another, each in the transaction it ran in (JIT off
    where the notifier turns it off): as the client sees it (the rows fetched), or with `server`
    the server's planning and execution time alone (EXPLAIN ANALYZE without per-node timing).
    `slots`: (captured array, array to use)."""
    total = 0.0
    for sql, params, jit_off, sweep, _ in statements:
        if sweep and not sweeps:
            continue
        if slots is not None:
            params = [slots[1] if p == slots[0] else p for p in params]
        query = re.sub(r"\$(\d+)", lambda m: f"%(p{m.group(1)})s", sql.replace("%", "%%"))
        cur.execute("BEGIN")
        if jit_off:
            cur.execute("SET LOCAL jit = off")
        binds = {f"p{i + 1}": v for i, v in enumerate(params)}
        if server:
            cur.execute("EXPLAIN (ANALYZE, TIMING OFF, SUMMARY, FORMAT JSON) " + query, binds)
            summary = cur.fetchone()[0][0]
            total += (summary["Planning Time"] + summary["Execution Time"]) / 1000
        else:
            begin = time.perf_counter()
            cur.execute(query, binds)
            if cur.description is not None:
                cur.fetchall()
            total += time.perf_counter() - begin
        cur.execute("COMMIT")
    return total


def replay_in_new_session(url, statements, slots=None, sweeps=True):
    """`replay`'s client time on a session of its own, connecting included: a run that opens its
    connection pays for a new server process and fills its catalog caches before its first plan."""
    begin = time.perf_counter()
    conn = psycopg2.connect(url)
    conn.autocommit = True
    connected = time.perf_counter() - begin
    try:
        return connected + replay(conn.cursor(), statements, slots, sweeps=sweeps)
    finally:
        conn.close()


def slot_array(keys):
    return "{" + ",".join(keys) + "}"


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
        t_changes, _ = timed(cur, CHANGES_SQL, {}, args.repeat * 3)
        t_keys, n_keys = timed(cur, KEYS_SQL, {}, args.repeat * 3)
        t_state, _ = timed(cur, STATE_SQL, {"days": days}, args.repeat * 3)
        t_retry, _ = timed(cur, RETRY_SQL, {"days": days}, args.repeat * 3)

        # The day against the single run, in rounds: each round times the single run once and
        # every instant of the day once, so both see the same moment of a shared machine. The
        # day's total is the sum of each instant's median over the rounds; each round's own
        # ratio is reported too, to show the spread.
        groups = instants(run_date)
        single, per_instant, ratios = [], {instant: [] for instant in groups}, []
        n_all = 0
        for _ in range(args.repeat):
            t, n_all = timed(cur, DUE_SQL, {"d": bench.RUN_DATE, "slots": None}, 1)
            single.append(t)
            round_total = 0.0
            for instant, keys in sorted(groups.items()):
                seconds, rows = timed(cur, DUE_SQL, {"d": bench.RUN_DATE, "slots": keys}, 1)
                per_instant[instant].append((seconds, rows))
                round_total += seconds
            ratios.append(round_total / t)
        t_all = statistics.median(single)
        busiest = max(groups, key=lambda i: len(groups[i]))
        t_busiest, n_busiest = timed(cur, DUE_SQL, {"d": bench.RUN_DATE, "slots": groups[busiest]}, args.repeat)
        day_total = sum(statistics.median(s for s, _ in runs) for runs in per_instant.values())
        day_rows = sum(runs[0][1] for runs in per_instant.values())

        # The whole plan of a run, replayed from the statements the binary sends: the single run
        # (a dry run of everyone on D) against, for every instant of the day, the daemon's run of
        # that instant's times — the at-instant dry run's statements of the run date D (those of
        # the users on D at 01:00Z, and those of no run date), with the instant's times for D's.
        at = f"{bench.RUN_DATE}T01:00:00Z"
        at_instant = datetime.datetime.fromisoformat(at.replace("Z", "+00:00"))
        oldest = str(run_date - datetime.timedelta(days=10))  # D - 3 - the 7 days of catch-up
        single_plan = captured_plan(cluster, url, args.binary, env, ["--date", bench.RUN_DATE], oldest)
        instant_plan = captured_plan(cluster, url, args.binary, env, ["--at", at], oldest)
        on_date = slot_array(sorted(k for i, keys in groups.items() if i <= at_instant for k in keys))

        def of_slots(value):
            return value is not None and value.startswith("{") and "|" in value
        # D's statements: those of the connections that read D's users, and the owed messages'.
        ours = {st[4] for st in instant_plan if on_date in st[1] or st[3]}
        assert ours, "no statement of the run date D found"
        run_plan = [st for st in instant_plan if st[4] in ours]
        sweeps = [st for st in run_plan if st[3]]
        plan = {False: ([], []), True: ([], [])}  # client time, server time: (single, day) per round
        for _ in range(args.repeat):
            for server in (False, True):
                plan[server][0].append(replay(cur, single_plan, server=server))
                plan[server][1].append(sum(replay(cur, run_plan, (on_date, slot_array(sorted(keys))), sweeps=False, server=server)
                                           for _, keys in sorted(groups.items())))
        t_plan_single, t_plan_day = statistics.median(plan[False][0]), statistics.median(plan[False][1])
        s_plan_single, s_plan_day = statistics.median(plan[True][0]), statistics.median(plan[True][1])
        plan_ratios = {server: [d / o for o, d in zip(*plan[server])] for server in plan}
        t_sweeps = statistics.median(replay(cur, sweeps) for _ in range(args.repeat))
        fresh = ([], [])  # the same, each run on a new session: (single, day) per round
        for _ in range(args.repeat):
            fresh[0].append(replay_in_new_session(url, single_plan))
            fresh[1].append(sum(replay_in_new_session(url, run_plan, (on_date, slot_array(sorted(keys))), sweeps=False)
                                for _, keys in sorted(groups.items())))
        f_single, f_day = statistics.median(fresh[0]), statistics.median(fresh[1])

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
        cur.execute("""DELETE FROM check_ins c USING users u
                       WHERE u.id = c.user_id AND c.check_in_date < DATE '2099-01-01'
                         AND c.check_in_date > (%s::timestamptz AT TIME ZONE u.time_zone)::date""", (at,))
        not_yet = cur.rowcount
        cur.execute("VACUUM ANALYZE check_ins, sileme.user_last_check_in")
        cur.execute("CHECKPOINT")  # the deletion's writes are not the dry runs' to wait for
        bench.log(f"dry runs: {not_yet} check-ins dated after their user's own date at {at} removed")
        t_dry_date = dry(["--date", bench.RUN_DATE])
        t_dry_at = dry(["--at", at])

        print(f"\n{args.users:,} users, {n_keys} slots ({len(ZONES)} zones x {len(TIMES)} times), "
              f"{len(groups)} distinct notify instants a day; medians of {args.repeat}")
        print(f"{'what':58} {'seconds':>10} {'rows':>9}")
        for name, seconds, rows in [
            ("quiet minute: the count of changes of the users' times", t_changes, None),
            ("quiet minute: the run dates' runs (DaemonState)", t_state, None),
            ("quiet minute: the next retry (DaemonState)", t_retry, None),
            ("when the count moved: the distinct slots (skip scan)", t_keys, n_keys),
            ("due set, everyone on one date (the single run)", t_all, n_all),
            (f"due set, busiest instant ({busiest:%H:%M}Z, {len(groups[busiest])} slots)", t_busiest, n_busiest),
            (f"due set, every instant of the day ({len(groups)} runs)", day_total, day_rows),
            (f"whole plan, the single run ({len(single_plan)} statements)", t_plan_single, None),
            (f"whole plan, every instant of the day ({len(run_plan) - len(sweeps)} statements a run)", t_plan_day, None),
            ("  the same on the server (planning + execution): single run", s_plan_single, None),
            ("  the same on the server: every instant of the day", s_plan_day, None),
            (f"  the all-clear sweeps a run of some times leaves out, per run", t_sweeps, None),
            ("whole plan on a new session per run (connecting too): single run", f_single, None),
            ("  the same: every instant of the day", f_day, None),
            ("dry run --date (everyone on D), process", t_dry_date, None),
            ("dry run --at (each user on their own date), process", t_dry_at, None),
        ]:
            print(f"{name:58} {seconds:10.4f} {'' if rows is None else rows:>9}")
        print(f"\nquiet minute total {t_changes + t_state + t_retry:.4f} s ({t_keys + t_state + t_retry:.4f} s when a time changed); day / single run = {day_total / t_all:.2f}x "
              f"(medians of {args.repeat} rounds; each round's own ratio: "
              f"{', '.join(f'{r:.2f}' for r in ratios)})")
        for server, name, single, day in ((False, "client", t_plan_single, t_plan_day), (True, "server", s_plan_single, s_plan_day)):
            print(f"whole plan ({name} time): day / single run = {day / single:.2f}x (each round's own ratio: "
                  f"{', '.join(f'{r:.2f}' for r in plan_ratios[server])})")
        print(f"whole plan on a new session per run: day / single run = {f_day / f_single:.2f}x (each round's own ratio: "
              f"{', '.join(f'{d / o:.2f}' for o, d in zip(*fresh))})")
        print(f"with the all-clear sweeps at every instant the day would add {t_sweeps * len(groups):.1f} s")
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
