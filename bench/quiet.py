#!/usr/bin/python3
"""The daemon's minute with many slots (docs/user-time.md): its CPU and that of its kept
server sessions while it only waits, looks and folds.

    bench/quiet.py [--zones Z] [--seconds S] [--binary PATH]     (Z default 38, of user-time.py's 40; S 180)

Starts a throwaway cluster, migrates it, and adds one user for each of Z zones x 192 notify times
(every 7.5 minutes of the day): no check-ins, so nobody is ever due, but every user's time is a
slot the daemon looks at, and an instant comes every 7.5 minutes (a run each, serving nobody).
With `--zones 0` there are no users: the daemon has the service's time only, as before users had
times of their own. The daemon starts (outbox transport), catches up for 40 s, and then its CPU
and its sessions' are read over S seconds (bench/day.py's quiet_minutes) and given per minute.
The difference between the two readings is what the slots cost the daemon a minute.

With `--cluster-dir DIR --users N` (a cluster bench.py keeps, bench/history/ten-million.md) the
daemon runs on that population instead, every user at the service's time: the quiet minute at 10
million users, and the daemon's peak RSS; the cluster is put back as it was after.
"""
import argparse, importlib.util, os, shutil, signal, subprocess, sys, tempfile, time

import psycopg2

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("day", os.path.join(HERE, "day.py"))
day = importlib.util.module_from_spec(spec)
spec.loader.exec_module(day)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--zones", type=int, default=38)
    parser.add_argument("--seconds", type=float, default=180)
    parser.add_argument("--binary", default=os.path.join(day.bench.ROOT, ".build/release/sileme-notifier"))
    parser.add_argument("--cluster-dir", help="a cluster bench.py keeps (with --users N): the daemon on its population, "
                                              "every user at the service's time (--zones 0), put back after")
    parser.add_argument("--users", type=int, help="with --cluster-dir: the population's users")
    day.bench.add_server_memory_args(parser, "with --cluster-dir: the kept cluster's shared_buffers")
    args = parser.parse_args()
    if args.cluster_dir:
        args.zones = 0
        return kept(args)
    base = tempfile.mkdtemp(prefix="sileme-quiet-", dir="/var/tmp")
    cluster = day.bench.Cluster(base)
    try:
        url, env = day.bench.migrated_database(cluster, args.binary)
        conn = psycopg2.connect(url)
        conn.autocommit = True
        cur = conn.cursor()
        times = [f"{k * 450 // 3600:02d}:{k * 450 % 3600 // 60:02d}:{k * 450 % 60:02d}" for k in range(192)]
        for zone in day.user_time.ZONES[:args.zones]:
            cur.executemany("INSERT INTO users (name, emergency_email, time_zone, notify_time) VALUES ('q', 'q@bench.example', %s, %s)",
                            [(zone, t) for t in times])
        cur.execute("SELECT count(DISTINCT coalesce(time_zone, '') || '|' || coalesce(notify_time::text, '')) FROM users")
        slots = cur.fetchone()[0]
        quiet, _ = quiet_daemon(args, env, cur)
        print(f"{slots} users' times ({args.zones} zones x 192, or the service's only): over {quiet['seconds']:.0f} s, CPU a minute "
              f"{quiet['client'] * 60_000 / quiet['seconds']:.1f} ms the notifier, "
              f"{quiet['server'] * 60_000 / quiet['seconds']:.1f} ms its {quiet['sessions']} kept sessions")
    finally:
        cluster.stop()
        for path in [base] + day.boxes:
            shutil.rmtree(path, ignore_errors=True)


CATCH_UP_LIMIT = 3600  # seconds: the daemon's runs at its start, or the one it finishes on SIGTERM


def quiet_daemon(args, env, cur):
    """Starts the daemon (outbox transport), lets it catch up — at least 40 s, and until none of
    its runs is still going: at 10 million users its first runs read for minutes on a cold cache
    —, reads its quiet minutes; returns them (with the catch-up's seconds) and the daemon's peak
    RSS (kB, VmHWM) before it is stopped. On SIGTERM the daemon finishes a run first: it is
    given as long as a run takes."""
    box = day.outbox("sileme-quiet-box-")
    log = tempfile.TemporaryFile(mode="w+", dir="/var/tmp")
    daemon = subprocess.Popen([args.binary], env=dict(env, MAIL_TRANSPORT="outbox", OUTBOX_DIR=box, ALL_CLEAR_POLL_SECONDS="3600"),
                              stdout=subprocess.DEVNULL, stderr=log)
    try:
        start = time.monotonic()
        time.sleep(40)
        settled = 0
        while settled < 2 and time.monotonic() - start < CATCH_UP_LIMIT and daemon.poll() is None:
            cur.execute("SELECT count(*) FROM sileme.notifier_runs WHERE status = 'running'")
            settled = settled + 1 if cur.fetchone()[0] == 0 else 0
            if settled < 2:
                time.sleep(5)
        if daemon.poll() is not None:
            log.seek(0)
            sys.exit(f"the daemon exited {daemon.returncode}: {log.read()[-800:]}")
        catch_up = time.monotonic() - start
        if settled < 2:
            sys.exit(f"the daemon's runs were still going {catch_up:.0f} s after its start")
        quiet = day.quiet_minutes(daemon.pid, cur, args.seconds)
        quiet["catch_up"] = catch_up
        with open(f"/proc/{daemon.pid}/status") as f:
            peak = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=CATCH_UP_LIMIT)
    return quiet, peak


def kept(args):
    """The quiet minutes of the daemon on a kept cluster's population (bench.py --cluster-dir):
    today's run finds nobody due when the population's run date is long past (one dated today,
    as day.py's, has its day's mails sent first: the quiet minutes after a day), then it waits,
    looks and folds as on any day. What it wrote (its runs) is undone after, and checked."""
    bench = day.bench
    for name, value in (("guard_share", 0.01), ("contact_share", 0.3), ("seed", 1), ("min_free_gb", 15),
                        ("chunk_users", bench.population.CHUNK_USERS)):
        setattr(args, name, value)
    cluster = before = None
    try:
        cluster = bench.Cluster.kept(args.cluster_dir, args.shared_buffers, args.huge_pages)
        url = cluster.database_url("bench")
        env = bench.notifier_env(url)
        bench.kept_population(cluster, args, env)
        before = bench.kept_snapshot(url)
        conn = psycopg2.connect(url)
        conn.autocommit = True
        quiet, peak = quiet_daemon(args, env, conn.cursor())
        conn.close()
        print(f"{args.users:,} users ({args.cluster_dir}), the service's time only, after the daemon's runs at its start "
              f"({quiet['catch_up']:.0f} s): over {quiet['seconds']:.0f} s, CPU a minute "
              f"{quiet['client'] * 60_000 / quiet['seconds']:.1f} ms the notifier, "
              f"{quiet['server'] * 60_000 / quiet['seconds']:.1f} ms its {quiet['sessions']} kept sessions; "
              f"the daemon's peak RSS {peak / 1024:.1f} MB")
    finally:
        if cluster:
            if before:
                bench.kept_restore(cluster.database_url("bench"), before)
            cluster.shutdown()
        for path in day.boxes:
            shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
