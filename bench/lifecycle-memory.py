#!/usr/bin/python3
"""The memory of the lifecycle's owed messages (docs/delivery.md): a run and a dry run that owe
K all-clears at once, against K.

    /usr/bin/python3 bench/lifecycle-memory.py [--sizes 5000,50000] [--binary B] [--before B0]

For each K of `--sizes`, a throwaway database (bench.py's PostgreSQL) of K users who checked in
daily until D − 4: `--run-now --date D−1` alerts every one of them (K alerts, checked), then every
user checks in on D, and the dry run of D and the run of D owe K all-clears (checked: K sent). The
alerts stream into the senders; the owed messages are read a page at a time (the run: counted by
its first pass, streamed into the senders by its second; the dry run: onto disk until its report
lists them), so neither should grow with K. `--before B0`: the same with another binary, in the
same run. Peak RSS from `/usr/bin/time -v`; mail to an outbox folder; no introductions
(INTRODUCE_CONTACTS=off) and no intake guard (INTAKE_DROP_RATIO=0: every user stopped on the same
day, which it would hold).
"""
import argparse, datetime, importlib.util, os, shutil, sys, tempfile

import psycopg2

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("bench", os.path.join(HERE, "bench.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

RUN_DATE = datetime.date(2026, 1, 13)


def measure(cluster, binary, k, index):
    """One database of `k` users alerted on D − 1 and checked in on D: the figures of the alert run,
    the dry run of D and the run of D (seconds, peak RSS kB)."""
    url, env = bench.migrated_database(cluster, binary, name=f"owed_{index}")
    box = tempfile.mkdtemp(prefix="sileme-owed-", dir="/var/tmp")
    try:
        env = dict(env, MAIL_TRANSPORT="outbox", OUTBOX_DIR=box, INTRODUCE_CONTACTS="off", INTAKE_DROP_RATIO="0")
        bench.steady_users(url, k, RUN_DATE - datetime.timedelta(days=18), RUN_DATE - datetime.timedelta(days=4))
        conn = psycopg2.connect(url)
        conn.autocommit = True
        cur = conn.cursor()
        figures = {}
        seconds, rss, status, _ = bench.run_notifier(binary, ["--run-now", "--date", str(RUN_DATE - datetime.timedelta(days=1))], env)
        bench.check(status == 0, f"K={k}: the alert run exited {status}")
        figures["the alert run (D−1)"] = (seconds, rss)
        cur.execute("INSERT INTO check_ins (user_id, check_in_date) SELECT id, %s FROM users", (RUN_DATE,))
        seconds, rss, status, _ = bench.run_notifier(binary, ["--run-now", "--dry-run", "--format", "json", "--date", str(RUN_DATE)], env)
        bench.check(status == 0, f"K={k}: the dry run exited {status}")
        figures["the dry run of D"] = (seconds, rss)
        seconds, rss, status, _ = bench.run_notifier(binary, ["--run-now", "--date", str(RUN_DATE)], env)
        bench.check(status == 0, f"K={k}: the run of D exited {status}")
        figures["the run of D (all-clears)"] = (seconds, rss)
        cur.execute("SELECT kind, count(*) FROM notification_logs WHERE email_sent GROUP BY kind ORDER BY kind")
        sent = dict(cur.fetchall())
        bench.check(sent == {"alert": k, "all_clear": k}, f"K={k}: expected {k} alerts and {k} all-clears sent, found {sent}")
        conn.close()
        return figures
    finally:
        shutil.rmtree(box, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="5000,50000")
    parser.add_argument("--binary", default=os.path.join(bench.ROOT, ".build/release/sileme-notifier"))
    parser.add_argument("--before", help="another binary, measured the same way in the same run")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    binaries = [("binary", args.binary)] + ([("before", args.before)] if args.before else [])
    base = tempfile.mkdtemp(prefix="sileme-owed-", dir="/var/tmp")
    cluster = bench.Cluster(base)
    try:
        index = 0
        results = {}
        for label, binary in binaries:
            for k in sizes:
                results[label, k] = measure(cluster, binary, k, index)
                index += 1
        print(f"\nK users alerted on {RUN_DATE - datetime.timedelta(days=1)}, every one checked in on {RUN_DATE}: "
              f"K alerts, then K all-clears owed (each run checked)")
        for label, binary in binaries:
            print(f"\n{label}: {binary}")
            print(f"{'':28}" + "".join(f"{f'K = {k:,}':>22}" for k in sizes))
            for step in results[label, sizes[0]]:
                print(f"{step:28}" + "".join(f"{results[label, k][step][0]:9.1f} s {results[label, k][step][1] / 1024:7.1f} MB"
                                             for k in sizes))
            if len(sizes) > 1:
                small, large = sizes[0], sizes[-1]
                for step in ("the dry run of D", "the run of D (all-clears)"):
                    grown = (results[label, large][step][1] - results[label, small][step][1]) * 1024 / (large - small)
                    print(f"{step}: {grown:,.0f} bytes more per owed message")
        return 0
    finally:
        cluster.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
