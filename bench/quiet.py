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
    args = parser.parse_args()
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
        box = day.outbox("sileme-quiet-box-")
        log = tempfile.TemporaryFile(mode="w+", dir="/var/tmp")
        daemon = subprocess.Popen([args.binary], env=dict(env, MAIL_TRANSPORT="outbox", OUTBOX_DIR=box, ALL_CLEAR_POLL_SECONDS="3600"),
                                  stdout=subprocess.DEVNULL, stderr=log)
        try:
            time.sleep(40)
            if daemon.poll() is not None:
                log.seek(0)
                sys.exit(f"the daemon exited {daemon.returncode}: {log.read()[-800:]}")
            quiet = day.quiet_minutes(daemon.pid, cur, args.seconds)
        finally:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=60)
        print(f"{slots} users' times ({args.zones} zones x 192, or the service's only): over {quiet['seconds']:.0f} s, CPU a minute "
              f"{quiet['client'] * 60_000 / quiet['seconds']:.1f} ms the notifier, "
              f"{quiet['server'] * 60_000 / quiet['seconds']:.1f} ms its {quiet['sessions']} kept sessions")
    finally:
        cluster.stop()
        for path in [base] + day.boxes:
            shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
