#!/usr/bin/python3
"""Fallback relays (docs/delivery.md, "Fallback relays"): what a primary relay that is down costs
a run's sending.

    bench/failover.py [--users N] [--repeat R] [--connections C] [--binary PATH]   (N 5,000; R 3; C 4)

Starts a throwaway cluster and two SMTP sinks (smtp_server.py, plain, counting without storing),
adds N users due on RUN_DATE, and times `--run-now` sending their N alerts, with SMTP_FALLBACK
naming the second sink, in three cases, alternated R times (a fresh database each time):

  up        the primary is the first sink: every mail goes through it
  refused   the primary's port has nothing listening (connection refused): each worker meets it
            once, then it rests (SMTP_FALLBACK_RETRY) and every mail goes through the fallback
  silent    the primary accepts the connection and never greets (a hung provider): the first
            message of each worker waits SMTP_TIMEOUT_SECONDS (5 here) before it moves on

and prints mails per second of each (N divided by the run's wall time; medians of R). Checks that
every mail went out once, through the relay expected, and exits 1 when not. Needs root (PostgreSQL
runs as its own user), a release build.
"""
import argparse, importlib.util, os, shutil, socket, statistics, subprocess, sys, tempfile, time

import psycopg2

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("bench", os.path.join(HERE, "bench.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def one_run(cluster, base, binary, users, connections, case, primary, fallback, round_):
    url, env = bench.migrated_database(cluster, binary, f"failover_{case}_{round_}")
    env = dict(env, SMTP_PORT=str(primary), INTRODUCE_CONTACTS="off", SMTP_CONNECTIONS=str(connections),
               SMTP_FALLBACK=f"smtp://127.0.0.1:{fallback.port}?tls=none", SMTP_TIMEOUT_SECONDS="5")
    conn = psycopg2.connect(url)
    conn.autocommit = True
    cur = conn.cursor()
    bench.add_due_users(cur, users, "contact", "family.example")
    start = time.perf_counter()
    sent = subprocess.run([binary, "--run-now", "--date", bench.RUN_DATE], env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    bench.check(sent.returncode == 0, f"{case}: --run-now exited {sent.returncode}: {sent.stderr[-800:]}")
    cur.execute("SELECT relay, count(*) FROM notification_logs WHERE status = 'sent' GROUP BY relay")
    relays = dict(cur.fetchall())
    expected = f"smtp://127.0.0.1:{primary if case == 'up' else fallback.port}"
    bench.check(relays == {expected: users}, f"{case}: sent {relays}, expected {users} through {expected}")
    conn.close()
    return seconds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--binary", default=os.path.join(bench.ROOT, ".build/release/sileme-notifier"))
    args = parser.parse_args()
    base = tempfile.mkdtemp(prefix="sileme-failover-", dir="/var/tmp")
    cluster = bench.Cluster(base)
    first = bench.Sink(os.path.join(base, "first"))
    second = bench.Sink(os.path.join(base, "second"))
    # A port where nothing listens, and one that takes the connection and never says a word.
    refused = bench.free_port()
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)
    primaries = {"up": first.port, "refused": refused, "silent": silent.getsockname()[1]}
    times = {case: [] for case in primaries}
    try:
        for round_ in range(args.repeat):
            for case, primary in primaries.items():
                seconds = one_run(cluster, base, args.binary, args.users, args.connections, case, primary, second, round_)
                times[case].append(seconds)
                bench.log(f"{case}: {args.users:,} mails in {seconds:.2f} s ({args.users / seconds:,.0f}/s)")
        bench.check(len(first.deliveries()) == args.users * args.repeat, "the first sink took exactly the 'up' runs' mails")
        bench.check(len(second.deliveries()) == 2 * args.users * args.repeat, "the fallback took exactly the other runs' mails")
        print(f"\nFallback relays: {args.users:,} alerts, {args.connections} connections, medians of {args.repeat}")
        print(f"{'primary':<10} {'seconds':>8} {'mails/s':>9} {'vs up':>7}")
        up = statistics.median(times["up"])
        for case, values in times.items():
            median = statistics.median(values)
            print(f"{case:<10} {median:>8.2f} {args.users / median:>9,.0f} {up / median:>7.2f}")
    finally:
        silent.close()
        first.stop()
        second.stop()
        cluster.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
