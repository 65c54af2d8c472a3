#!/usr/bin/python3
"""An outage of the app at N users (docs/intake-hold.md): the memory of the run that holds every
user's alert, of the next run that finds them all held, and of the dry run that lists them.

    /usr/bin/python3 bench/mass-hold.py [--users N] [--binary B] [--before B0]     (N 200,000)

A throwaway PostgreSQL (bench.py's) with N users who all checked in every day from D − 18 to
D − 3 and not on D − 2 and D − 1, the app's outage: the check-ins go in through the app's trigger
and are folded as the daemon folds them, so the intake of each day is what the guard judges. On
a fresh copy of that database for each binary (`CREATE DATABASE … TEMPLATE`): `--run-now --date
D` (it holds every alert: N held, none sent — checked), the same again (every hold found recorded,
nothing new — checked), and `--run-now --dry-run --format json --date D` (N users held — checked),
each under `/usr/bin/time -v`: wall time and peak RSS. `--before B0`: the same with another
binary, in the same run (the comparison that holds on a shared machine).

Mail goes to an outbox folder: a held alert is never sent, so none is written (and no
introductions: INTRODUCE_CONTACTS=off).
"""
import argparse, datetime, importlib.util, json, os, shutil, sys, tempfile

import psycopg2

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("bench", os.path.join(HERE, "bench.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

RUN_DATE = datetime.date(2026, 1, 13)


def measure(cluster, env, binary, name):
    """Copies the population to database `name` and runs the three measurements on it."""
    admin = psycopg2.connect(cluster.url)
    admin.autocommit = True
    admin.cursor().execute(f"CREATE DATABASE {name} TEMPLATE bench")
    admin.close()
    url = cluster.database_url(name)
    box = tempfile.mkdtemp(prefix="sileme-mass-hold-", dir="/var/tmp")
    try:
        # No introductions: the new contacts would be introduced, 10,000 a run, beside the holds.
        run_env = dict(env, DATABASE_URL=url, MAIL_TRANSPORT="outbox", OUTBOX_DIR=box, INTRODUCE_CONTACTS="off")
        figures = {}
        for step in ("first run", "second run"):
            seconds, rss, status, cpu = bench.run_notifier(binary, ["--run-now", "--date", str(RUN_DATE)], run_env)
            bench.check(status == 0, f"{name}: the {step} exited {status}")
            figures[step] = (seconds, rss, cpu)
        report = os.path.join(box, "report.json")
        with open(report, "w") as out:
            seconds, rss, status, cpu = bench.run_notifier(binary, ["--run-now", "--dry-run", "--format", "json", "--date", str(RUN_DATE)],
                                                           run_env, stdout=out)
        bench.check(status == 0, f"{name}: the dry run exited {status}")
        figures["dry run"] = (seconds, rss, cpu)
        with open(report) as f:
            held = sum(1 for row in json.load(f)["users"] if row.get("decision") == "held")
        conn = psycopg2.connect(url)
        cur = conn.cursor()
        cur.execute("SELECT count(*), count(DISTINCT (user_id, streak_after)) FROM sileme.held_alerts")
        holds, streaks = cur.fetchone()
        cur.execute("SELECT held, due FROM sileme.notifier_runs ORDER BY id")
        runs = cur.fetchall()
        cur.execute("SELECT count(*) FROM notification_logs WHERE email_sent AND kind = 'alert'")
        sent = cur.fetchone()[0]
        conn.close()
        return figures, dict(held_report=held, holds=holds, streaks=streaks, runs=runs, sent=sent)
    finally:
        shutil.rmtree(box, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=200_000)
    parser.add_argument("--binary", default=os.path.join(bench.ROOT, ".build/release/sileme-notifier"))
    parser.add_argument("--before", help="another binary, measured the same way in the same run")
    args = parser.parse_args()
    base = tempfile.mkdtemp(prefix="sileme-mass-hold-", dir="/var/tmp")
    cluster = bench.Cluster(base)
    try:
        url, env = bench.migrated_database(cluster, args.binary)
        bench.steady_users(url, args.users, RUN_DATE - datetime.timedelta(days=18), RUN_DATE - datetime.timedelta(days=3))
        bench.log(f"{args.users:,} users, the app down on {RUN_DATE - datetime.timedelta(days=2)} and the day after")
        results = []
        for label, binary in [("binary", args.binary)] + ([("before", args.before)] if args.before else []):
            figures, state = measure(cluster, env, binary, f"hold_{label}")
            n = args.users
            bench.check(state["held_report"] == n and state["holds"] == n == state["streaks"] and state["sent"] == 0
                        and [tuple(r) for r in state["runs"]] == [(n, 0), (n, 0)],
                        f"{label}: expected {n} held by each run and recorded once, none sent: {state}")
            results.append((label, binary, figures))
        print(f"\n{args.users:,} users, every alert held over an intake gap (run date {RUN_DATE}); "
              f"each run checked: {args.users:,} held, each streak recorded once, nothing sent")
        print(f"{'':10} {'':12} {'wall s':>8} {'CPU s':>7} {'peak RSS MB':>12}")
        for label, binary, figures in results:
            for step, (seconds, rss, cpu) in figures.items():
                print(f"{label:10} {step:12} {seconds:8.2f} {cpu:7.2f} {rss / 1024:12.1f}")
            print(f"{'':10} ({binary})")
        return 0
    finally:
        cluster.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
