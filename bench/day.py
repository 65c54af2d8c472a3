#!/usr/bin/python3
"""The daemon's day end to end (docs/user-time.md): the real daemon serving every notify instant of
a day of users' own times, against the single run of everyone (`--run-now --date D`), on the same
data, each with its writes and its messages.

    bench/day.py [--users N] [--instants K] [--gap S] [--quiet Q]  (N default 1,000,000; K 192; S 2; Q 180)

Generates bench.py's population with today (UTC) as its run date D, then copies the database: on
the copy, `--run-now --date D` (the single run); on the original, every user is given one of K
notify times in UTC, S seconds apart and starting a little after the set-up — a day's K instants
pressed into K * S seconds — and the daemon (`sileme-notifier` with no command) serves them, a
run per instant (or one for the instants that came while its last run went on), until every slot
of every instant has been served by a completed run. Mail goes to an outbox folder
(`MAIL_TRANSPORT=outbox`): the transport costs the same either way and is not the database's.

Reported, for each side: the runs, the mails, the wall time, and the CPU time of the notifier's
process and of the PostgreSQL server processes it used (the server's children's CPU, counted
when they exit: autovacuum is off meanwhile; the daemon's kept sessions end with it). The two
must send the same mails (checked). The daemon's side also pays what a daemon does whatever its
runs (a fold every second, a look every minute, one all-clear pass at start): over K * S seconds,
not a whole day's worth.

Then, the day's runs done and the next instants a day away, the daemon's quiet minutes: its CPU and
that of its kept server sessions over Q seconds of waiting (a look a minute at every user's time).

    bench/day.py ... --statements

also gives, over those quiet minutes, the server's statements by their time (pg_stat_statements)
and the plans of those over 5 ms (auto_explain, from the server's log): what a quiet minute reads.

    bench/day.py --cluster-dir DIR --users N [--shared-buffers 6GB --prewarm] [--warm W] [--update-rate R] [...]

On a cluster bench.py keeps (bench/history/ten-million.md), its population dated today (UTC): made
with `bench.py --cluster-dir DIR --users N --generate-only --run-date TODAY`, or by this command
when DIR holds none. No copy fits beside a population of 10M users, so the single run goes first on
the kept database and is undone (bench.py's restore, checked), then the day; after it the users'
times are unset and the database put back again, and found the same. The users' times are set in the
`30 + N / R` seconds (R 20,000 users a second) before the first instant. `--warm W` dry runs of D
come first, untimed, so that the single run does not pay alone for a cold cache.
"""
import argparse, datetime, importlib.util, os, resource, shutil, signal, subprocess, sys, tempfile, time

import zoneinfo

import psycopg2

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("bench", os.path.join(HERE, "bench.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)
spec = importlib.util.spec_from_file_location("user_time", os.path.join(HERE, "user-time.py"))
user_time = importlib.util.module_from_spec(spec)
spec.loader.exec_module(user_time)


def zones_on(day, instants):
    """The zones of user-time.py's 40 in which every one of `instants` falls on `day`: their users'
    run date is then `day` at each instant, as for the single run of `day`."""
    return [zone for zone in user_time.ZONES
            if all(instant.astimezone(zoneinfo.ZoneInfo(zone)).date() == day for instant in instants)]


def server_cpu(cluster):
    """The CPU seconds of the postmaster's exited children (its cutime + cstime)."""
    with open(os.path.join(cluster.dir, "data", "postmaster.pid")) as f:
        pid = int(f.readline())
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def settled(cluster, database):
    """Waits (up to 10 s) until no session but this one is left on `database`: the server CPU of
    a side is read once all its server processes have ended."""
    conn = psycopg2.connect(cluster.database_url(database))
    conn.autocommit = True
    try:
        for _ in range(100):
            cur = conn.cursor()
            cur.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
            if cur.fetchone()[0] == 0:
                return
            time.sleep(0.1)
        sys.exit(f"sessions on {database} still open 10 s after the notifier ended")
    finally:
        conn.close()


def process_cpu(pid):
    """The CPU seconds of process `pid` so far (utime + stime); 0 once it has gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def quiet_minutes(daemon, cur, seconds, statements=False):
    """The CPU of the daemon (process `daemon`) and of its kept server sessions over `seconds` of
    waiting after the day's runs, its next instants a day away: what the daemon costs a quiet
    minute — its look at every user's time, the scheduler's reads, the folds. `statements`: also
    the server's statements over those seconds, by their time (`pg_stat_statements` loaded)."""
    time.sleep(5)  # the last run's settling
    cur.execute("SELECT pid FROM pg_stat_activity WHERE application_name = 'sileme-notifier (daemon)'")
    backends = [row[0] for row in cur.fetchall()]
    if statements:
        explain(cur, "5ms")
        cur.execute("SELECT pg_stat_statements_reset()")
    before = process_cpu(daemon), sum(process_cpu(pid) for pid in backends)
    time.sleep(seconds)
    after = process_cpu(daemon), sum(process_cpu(pid) for pid in backends)
    top = []
    if statements:
        cur.execute("""SELECT calls, total_exec_time, shared_blks_hit + shared_blks_read, rows,
                              regexp_replace(query, '\\s+', ' ', 'g')
                       FROM pg_stat_statements WHERE query NOT LIKE '%%pg_stat_statements%%'
                       ORDER BY total_exec_time DESC LIMIT 12""")
        top = cur.fetchall()
        explain(cur, None)
    return dict(seconds=seconds, client=after[0] - before[0], server=after[1] - before[1], sessions=len(backends),
                statements=top)


def explain(cur, over):
    """auto_explain's plans (with their buffers) of the statements that take longer than `over`
    from now on, in the server's log (None: none)."""
    for name, value in (("log_min_duration", over or "-1"), ("log_analyze", "on"), ("log_buffers", "on")):
        cur.execute(f"ALTER SYSTEM SET auto_explain.{name} = '{value}'")
    cur.execute("SELECT pg_reload_conf()")
    time.sleep(1)


def statements_extension(url):
    conn = psycopg2.connect(url)
    conn.autocommit = True
    conn.cursor().execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    conn.close()


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


boxes = []  # the outbox folders made, removed at the end


def outbox(prefix):
    path = tempfile.mkdtemp(prefix=prefix, dir="/var/tmp")
    boxes.append(path)
    return path


def mails(path):
    """The mails in outbox folder `path` (its `new/`)."""
    folder = os.path.join(path, "new")
    return sum(1 for name in os.listdir(folder) if name.endswith(".eml")) if os.path.isdir(folder) else 0


def single_run(args, cluster, database, env):
    """`--run-now --date D` on `database`, its mails to an outbox: its figures (a dict)."""
    box = outbox("sileme-day-single-")
    single_env = dict(env, DATABASE_URL=cluster.database_url(database), MAIL_TRANSPORT="outbox", OUTBOX_DIR=box)
    server, client, begin = server_cpu(cluster), children_cpu(), time.perf_counter()
    result = subprocess.run([args.binary, "--run-now", "--date", bench.RUN_DATE], env=single_env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    single = dict(wall=time.perf_counter() - begin, client=children_cpu() - client, mails=mails(box), runs=1)
    settled(cluster, database)
    single["server"] = server_cpu(cluster) - server
    shutil.rmtree(box, ignore_errors=True)  # counted: at 10M users its ~220,000 files are in the way
    if result.returncode != 0:
        sys.exit(f"the single run exited {result.returncode}: {result.stderr[-500:]}")
    return single


def yesterday_done(url):
    """Yesterday's runs are done: the daemon catches nothing up at start."""
    conn = psycopg2.connect(url)
    conn.autocommit = True
    conn.cursor().execute("""INSERT INTO sileme.notifier_runs (run_date, mode, host, pid, status, finished_at)
                             VALUES (%s::date - 1, 'daemon', 'bench', 0, 'completed', now())""", (bench.RUN_DATE,))
    conn.close()


def daemon_day(args, cluster, url, env, today, deadline_extra):
    """Every user on one of the instants, which begin shortly after the update, and the daemon
    serving them: its figures (a dict) and the quiet minutes after (or None)."""
    conn = psycopg2.connect(url)
    conn.autocommit = True
    cur = conn.cursor()
    first = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=30 + args.users / args.update_rate)
    instants = [first + datetime.timedelta(seconds=k * args.gap) for k in range(args.instants)]
    zones = zones_on(today, instants)
    if len(zones) < 10:
        sys.exit(f"only {len(zones)} of the zones are on {today} through the day's instants: run it between 05:00 and 10:00 UTC")
    # Each user: one of the zones, and the time of day there of one of the instants.
    set_times(cur, """UPDATE users u SET time_zone = z.zone,
                                         notify_time = ((%s::timestamptz + make_interval(secs => z.k * %s))
                                                        AT TIME ZONE z.zone)::time
                      FROM (SELECT id, (%s::text[])[1 + abs(hashtext(id::text)) %% %s] AS zone,
                                   abs(hashtext('t' || id::text)) %% %s AS k FROM users) z
                      WHERE z.id = u.id""", (first, args.gap, zones, len(zones), args.instants))
    cur.execute("CHECKPOINT")
    lead = (first - datetime.datetime.now(datetime.timezone.utc)).total_seconds()
    bench.log(f"the users' times set; the first instant {lead:.0f} s away")
    if lead < 5:
        sys.exit(f"the set-up took too long: the first instant is {lead:.0f} s away (a lower --update-rate gives it more)")
    day_box = outbox("sileme-day-daemon-")
    day_env = dict(env, MAIL_TRANSPORT="outbox", OUTBOX_DIR=day_box, ALL_CLEAR_POLL_SECONDS="3600",
                   NOTIFY_TIME_ZONE="UTC")
    server, client, begin = server_cpu(cluster), children_cpu(), time.perf_counter()
    # Its log to a file: a pipe nobody reads fills up and stops the daemon at its next line.
    log = tempfile.TemporaryFile(mode="w+", dir="/var/tmp")
    daemon = subprocess.Popen([args.binary], env=day_env, stdout=subprocess.DEVNULL, stderr=log, text=True)
    deadline = time.time() + lead + args.instants * args.gap + deadline_extra
    # Served: every slot of every instant in a completed run. A run that starts while instants
    # have come since the last one began serves their slots together, so there may be fewer runs
    # than instants (at 10M users the busiest runs take longer than the gap).
    slots = len(zones) * args.instants
    runs = served = 0
    quiet = None
    try:
        while time.time() < deadline and daemon.poll() is None:
            time.sleep(1)
            cur.execute("""SELECT count(DISTINCT r.id), count(DISTINCT s) FROM sileme.notifier_runs r LEFT JOIN LATERAL unnest(r.slots) s ON true
                           WHERE r.run_date = %s AND r.status = 'completed'""", (bench.RUN_DATE,))
            runs, served = cur.fetchone()
            if served >= slots:
                break
        if served >= slots and args.quiet > 0:
            log_start = os.path.getsize(os.path.join(cluster.dir, "log"))
            quiet = quiet_minutes(daemon.pid, cur, args.quiet, args.statements)
            if args.statements:
                with open(os.path.join(cluster.dir, "log")) as server_log:
                    server_log.seek(log_start)
                    quiet["plans"] = [entry for entry in server_log.read().split("LOG:  ") if entry.startswith("duration:")]
    except BaseException:
        daemon.kill()  # not left serving a database that is about to be put back
        daemon.wait()
        raise
    daemon.send_signal(signal.SIGTERM)
    daemon.wait(timeout=600)  # a run still going finishes first
    log.seek(0)
    errors = log.read()
    day = dict(wall=time.perf_counter() - begin, client=children_cpu() - client, mails=mails(day_box), runs=runs,
               zones=len(zones))
    shutil.rmtree(day_box, ignore_errors=True)
    cur.close()
    conn.close()
    settled(cluster, "bench")
    day["server"] = server_cpu(cluster) - server
    if served < slots:
        sys.exit(f"the daemon's {runs} completed runs served {served} of the {slots} slots: {errors[-800:]}")
    return day, quiet


def set_times(cur, update, params=()):
    """Runs `update` (of the users' zones and notify times) as one transaction, with what the
    users' triggers do for such an update done set-based instead of row by row (at 10M users the
    row triggers' summary updates, queued to the statement's end, outlasted a 12-minute lead): the summary's slot key (`sileme_track_slot`, migration 015)
    and one count of the users' times changing (`sileme_count_user_times_change`, 019); then checks
    that every summary row's slot is its user's, and VACUUM ANALYZE."""
    cur.execute("BEGIN")
    cur.execute("SET LOCAL session_replication_role = replica")
    cur.execute(update, params)
    slot = "coalesce(u.time_zone, '') || '|' || coalesce(u.notify_time::text, '')"
    cur.execute(f"UPDATE sileme.user_last_check_in s SET slot = {slot} FROM users u WHERE u.id = s.user_id AND s.slot <> {slot}")
    cur.execute("UPDATE sileme.user_times_changes SET changes = changes + 1, last_xact = pg_current_xact_id()")
    cur.execute("COMMIT")
    cur.execute(f"SELECT count(*) FROM sileme.user_last_check_in s JOIN users u ON u.id = s.user_id WHERE s.slot <> {slot}")
    bench.check(cur.fetchone()[0] == 0, "a summary row's slot is not its user's")
    cur.execute("VACUUM ANALYZE users, sileme.user_last_check_in")


def unset_times(url):
    """The kept population's users back without a zone or a notify time, as generated."""
    conn = psycopg2.connect(url)
    conn.autocommit = True
    cur = conn.cursor()
    start = time.perf_counter()
    set_times(cur, "UPDATE users SET time_zone = NULL, notify_time = NULL WHERE time_zone IS NOT NULL OR notify_time IS NOT NULL")
    conn.close()
    bench.log(f"the users' times unset in {time.perf_counter() - start:.0f} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--instants", type=int, default=192)
    parser.add_argument("--gap", type=float, default=2.0, help="seconds between two instants")
    parser.add_argument("--quiet", type=float, default=180, help="seconds of waiting measured after the day (0: none)")
    parser.add_argument("--cluster-dir", help="a cluster bench.py keeps (with --users N), its population dated today (UTC): "
                                              "the single run and the day run on it one after the other, each put back")
    bench.add_server_memory_args(parser, "with --cluster-dir: the kept cluster's shared_buffers")
    parser.add_argument("--prewarm", action="store_true", help="with --cluster-dir: load what the runs' probes read into the "
                                                               "shared buffers (pg_prewarm, as bench.py's option) first")
    parser.add_argument("--warm", type=int, default=0, help="untimed dry runs of D before the single run, so that neither side "
                                                            "pays for a cold cache")
    parser.add_argument("--update-rate", type=float, default=20_000,
                        help="users a second the setting of the users' times is given before the first instant")
    parser.add_argument("--statements", action="store_true",
                        help="the server's statements over the quiet minutes, by their time (pg_stat_statements loaded: a restart), "
                             "and the plans of those over 5 ms in the server's log (auto_explain)")
    parser.add_argument("--binary", default=os.path.join(bench.ROOT, ".build/release/sileme-notifier"))
    args = parser.parse_args()
    today = datetime.datetime.now(datetime.timezone.utc).date()
    bench.RUN_DATE = str(today)
    base = tempfile.mkdtemp(prefix="sileme-day-", dir="/var/tmp")
    cluster = before = None
    try:
        if args.cluster_dir:
            # A kept population (bench/history/ten-million.md): no copy fits beside it, so the single
            # run goes first on it and is undone, then the day, undone too.
            cluster = bench.Cluster.kept(args.cluster_dir, args.shared_buffers, args.huge_pages)
            url = cluster.database_url("bench")
            env = bench.notifier_env(url)
            population = argparse.Namespace(cluster_dir=args.cluster_dir, users=args.users, binary=args.binary, seed=1,
                                            guard_share=0.01, contact_share=0.3, min_free_gb=15,
                                            chunk_users=bench.population.CHUNK_USERS, run_date=bench.RUN_DATE)
            bench.kept_population(cluster, population, env)
            conn = psycopg2.connect(url)
            conn.autocommit = True
            conn.cursor().execute("ALTER SYSTEM SET autovacuum = off")  # the kept cluster rewrites its settings at each start
            conn.cursor().execute("SELECT pg_reload_conf()")
            conn.close()
            if args.statements:
                cluster.restart("shared_preload_libraries = 'pg_stat_statements, auto_explain'\n")
            if args.prewarm:
                bench.prewarm(url)
            before = bench.kept_snapshot(url)
            if args.statements:  # after the snapshot: the restore drops it
                statements_extension(url)
            yesterday_done(url)
            for _ in range(args.warm):
                warm = subprocess.run([args.binary, "--run-now", "--dry-run", "--format", "json", "--date", bench.RUN_DATE], env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                bench.check(warm.returncode == 0, f"the warming dry run exited {warm.returncode}")
            single = single_run(args, cluster, "bench", env)
            bench.kept_restore(url, before)
            if args.statements:  # the restore dropped it again
                statements_extension(url)
            yesterday_done(url)
            bench.log(f"the single run: {single['mails']:,} mails in {single['wall']:.0f} s; undone; now the day")
            day, quiet = daemon_day(args, cluster, url, env, today, 300 + 3 * single["wall"])
        else:
            cluster = bench.Cluster(base)
            url, env = bench.migrated_database(cluster, args.binary)
            conn = psycopg2.connect(url)
            bench.generate(conn, args.users, 0.01, 0.3)
            cur = conn.cursor()
            cur.execute("ALTER SYSTEM SET autovacuum = off")
            cur.execute("SELECT pg_reload_conf()")
            conn.close()
            yesterday_done(url)
            if args.statements:
                cluster.restart("shared_preload_libraries = 'pg_stat_statements, auto_explain'\n")
                statements_extension(url)
            admin = psycopg2.connect(cluster.url)
            admin.autocommit = True
            admin.cursor().execute("CREATE DATABASE single TEMPLATE bench")
            admin.close()
            bench.log(f"generated {args.users} users (D = {bench.RUN_DATE}) and copied them")
            single = single_run(args, cluster, "single", env)
            day, quiet = daemon_day(args, cluster, url, env, today, 300)
        if day["mails"] != single["mails"]:
            sys.exit(f"the day sent {day['mails']} mails, the single run {single['mails']}")

        print(f"\n{args.users:,} users; D = {bench.RUN_DATE}; the day: {args.instants} instants {args.gap:g} s apart in "
              f"{day['zones']} zones ({day['zones'] * args.instants} users' times), served by the daemon; "
              f"the single run: --run-now --date D" + (f"; on the kept cluster {args.cluster_dir}" if args.cluster_dir else ""))
        print(f"{'':28} {'runs':>6} {'mails':>7} {'wall s':>8} {'notifier CPU s':>15} {'server CPU s':>13} {'CPU s':>7}")
        for name, side in (("the single run", single), ("the day (the daemon)", day)):
            print(f"{name:28} {side['runs']:>6} {side['mails']:>7} {side['wall']:>8.1f} {side['client']:>15.2f} "
                  f"{side['server']:>13.2f} {side['client'] + side['server']:>7.2f}")
        total = lambda side: side["client"] + side["server"]
        print(f"\nday / single run: server CPU {day['server'] / single['server']:.2f}x, "
              f"notifier CPU {day['client'] / single['client']:.2f}x, both {total(day) / total(single):.2f}x")
        if quiet:
            print(f"\nthe quiet minutes after the day ({quiet['seconds']:.0f} s, the next instants a day away; a look a minute "
                  f"over the {day['zones'] * args.instants} times, a fold a second): CPU a minute "
                  f"{quiet['client'] * 60_000 / quiet['seconds']:.1f} ms the notifier, "
                  f"{quiet['server'] * 60_000 / quiet['seconds']:.1f} ms its {quiet['sessions']} kept sessions")
            if quiet["statements"]:
                print(f"the server's statements over those {quiet['seconds']:.0f} s, by their time (ms a minute):")
                print(f"{'calls':>7} {'ms/min':>8} {'ms each':>8} {'buffers each':>12} {'rows':>8}  statement")
                for calls, total, buffers, rows, query in quiet["statements"]:
                    print(f"{calls:>7} {total * 60 / quiet['seconds']:>8.2f} {total / calls:>8.3f} {buffers / calls:>12.1f} "
                          f"{rows:>8}  {query[:150]}")
                for plan in quiet["plans"][:6]:
                    print("\n" + plan.rstrip())

    finally:
        if cluster and args.cluster_dir:
            if before:
                unset_times(cluster.database_url("bench"))
                bench.kept_restore(cluster.database_url("bench"), before)
            cluster.shutdown()
        elif cluster:
            cluster.stop()
        for path in [base] + boxes:
            shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
