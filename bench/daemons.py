#!/usr/bin/python3
"""Several daemons at one instant: mails per second with 1, 2 and 4 daemons on one database,
against one SMTP sink, with and without the sink's own quota.

    /usr/bin/python3 bench/daemons.py [--users N] [--daemons 1,2,4] [--rounds R] [--connections C]
                                      [--sink-rates 0,K] [--data-delay-ms D] [--linger S] [--binary PATH]

Generates bench.py's population (N users, default 200,000; guards' data 1%, contacts 30%) with
today (UTC) as its run date D, every user at the one notify time of the configuration
(`NOTIFY_TIME`, UTC: none has a time or zone of their own), yesterday's run recorded as done. Then,
for each sink quota (`--sink-rates`, messages a second the sink accepts, 0 for none) and each
round, for each number of daemons (order rotated each round): a fresh copy of the database
(`CREATE DATABASE … TEMPLATE`), a fresh sink, and that many daemons (`sileme-notifier`, no
command, `SMTP_CONNECTIONS=C` each, the same configuration as the two-daemon tests: one
database, one relay) started together with the instant a little ahead; once the instant's run
has completed and the sink has every mail (and `--linger` seconds more, to see a waiting daemon
come back and find the run done), they are stopped.

Reported for each: the mails, the sending rate at the sink (its first acceptance to its last),
the instant to the last acceptance, the runs recorded (the one that decided and those that joined
its sending, mode `daemon-join`) and how many daemons sent, the CPU of the
notifiers, of the PostgreSQL server processes they used, and of the sink. Checked, and exit 1
otherwise: every alert of the instant is sent exactly once across the daemons — as many sent
rows in `notification_logs` as the dry run of the same data counts, one per (user, contact), as
many messages at the sink, each Message-ID once — and one completed daemon run of D (the
joins aside), none failed.
"""
import argparse, datetime, importlib.util, json, os, shutil, signal, statistics, subprocess, sys, tempfile, time

import psycopg2

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name, file):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, file))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = load("bench", "bench.py")
day = load("day", "day.py")  # server_cpu, settled, process_cpu, children_cpu


def expected_mails(binary, env):
    """The alerts of D the dry run counts (its `messages_summary`), on the template."""
    out = subprocess.run([binary, "--run-now", "--dry-run", "--format", "json", "--date", bench.RUN_DATE],
                         env=env, capture_output=True, text=True)
    bench.check(out.returncode == 0, f"dry run exit {out.returncode}: {out.stderr[-500:]}")
    report = json.loads(out.stdout)
    messages = report.get("messages_summary") or {}
    bench.check(messages.get("alert", 0) > 0 and sum(messages.values()) == messages["alert"],
                f"the dry run's messages {messages}: alerts only expected")
    return messages["alert"], report["summary"].get("send", 0)


def copy(cluster, template, name):
    admin = psycopg2.connect(cluster.url)
    admin.autocommit = True
    cur = admin.cursor()
    cur.execute(f"DROP DATABASE IF EXISTS {name}")
    cur.execute(f"CREATE DATABASE {name} TEMPLATE {template}")
    admin.close()


def one(cluster, env, binary, daemons, connections, rate, expected, lead, linger, base, delay_ms=0):
    """One instant served by `daemons` daemons on a fresh copy, against a fresh sink of quota
    `rate`: its figures (dict), after the checks."""
    copy(cluster, "bench", "run")
    sink_dir = tempfile.mkdtemp(prefix="sink-", dir=base)
    sink = bench.Sink(sink_dir, max_per_second=rate, data_delay_ms=delay_ms)
    url = cluster.database_url("run")
    conn = psycopg2.connect(url)
    conn.autocommit = True
    cur = conn.cursor()
    instant = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=lead)).replace(microsecond=0)
    denv = dict(env, DATABASE_URL=url, SMTP_PORT=str(sink.port), SMTP_CONNECTIONS=str(connections),
                NOTIFY_TIME=instant.strftime("%H:%M:%S"), NOTIFY_TIME_ZONE="UTC", ALL_CLEAR_POLL_SECONDS="3600")
    logs, procs = [], []
    server, client, sink_cpu = day.server_cpu(cluster), day.children_cpu(), day.process_cpu(sink.process.pid)
    try:
        for k in range(daemons):
            # Its log to a file: a pipe nobody reads fills up and stops the daemon at its next line.
            log = open(os.path.join(base, f"daemon-{daemons}-{k}.log"), "w+")
            logs.append(log)
            procs.append(subprocess.Popen([binary], env=denv, stdout=subprocess.DEVNULL, stderr=log))
        deadline = time.time() + lead + 600
        done = False
        while time.time() < deadline and all(p.poll() is None for p in procs):
            time.sleep(0.5)
            cur.execute("SELECT count(*) FROM sileme.notifier_runs WHERE run_date = %s AND mode = 'daemon' AND status = 'completed'",
                        (bench.RUN_DATE,))
            if cur.fetchone()[0] >= 1 and len(sink.deliveries()) >= expected:
                done = True
                break
        time.sleep(1 + linger)
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    errors = []
    for log in logs:
        log.seek(0)
        errors.append(log.read())
        log.close()
    client = day.children_cpu() - client
    sink_cpu = day.process_cpu(sink.process.pid) - sink_cpu
    deliveries = sink.deliveries()
    sink.stop()
    bench.check(done, f"{daemons} daemons: the instant's run did not complete with every mail at the sink "
                      f"({len(deliveries)} of {expected}): {errors[0][-800:]}")
    cur.execute("""SELECT count(*), count(DISTINCT (user_id, contact)), count(DISTINCT claimed_by), count(DISTINCT message_id)
                   FROM notification_logs WHERE notification_date = %s AND email_sent AND kind = 'alert'""", (bench.RUN_DATE,))
    sent, pairs, claimers, message_ids = cur.fetchone()
    cur.execute("""SELECT status, pid, extract(epoch FROM started_at), extract(epoch FROM finished_at), mode, coalesce(sent, 0), error
                   FROM sileme.notifier_runs WHERE run_date = %s ORDER BY started_at""", (bench.RUN_DATE,))
    runs = cur.fetchall()
    cur.close()
    conn.close()
    day.settled(cluster, "run")
    server = day.server_cpu(cluster) - server
    at_sink = [d["message_id"] for d in deliveries]
    bench.check(sent == expected and pairs == sent and message_ids == sent,
                f"{daemons} daemons: {sent} sent rows, {pairs} (user, contact) pairs, {message_ids} Message-IDs; the dry run said {expected}")
    bench.check(len(at_sink) == expected and len(set(at_sink)) == expected,
                f"{daemons} daemons: the sink accepted {len(at_sink)} messages, {len(set(at_sink))} Message-IDs; expected {expected}")
    # One run decides the instant (the run lock's holder); the others join its sending (mode
    # daemon-join) and record runs of their own.
    completed = [r for r in runs if r[0] == "completed" and r[4] == "daemon"]
    bench.check(len(completed) == 1 and all(r[0] != "failed" for r in runs), f"{daemons} daemons: runs of D {runs}")
    pids = {p.pid for p in procs}
    times = sorted(d["time"] for d in deliveries)
    window = times[-1] - times[0]
    return dict(daemons=daemons, rate=rate, mails=len(deliveries), sending=(len(times) - 1) / window if window > 0 else 0,
                instant_to_last=times[-1] - instant.timestamp(), run_wall=float(completed[0][3]) - float(completed[0][2]),
                runs=len(runs), joins=sum(1 for r in runs if r[4] == "daemon-join"),
                runners=len({r[1] for r in runs if r[5] > 0} & pids), claimers=claimers,
                client=client, server=server, sink=sink_cpu)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=200_000)
    parser.add_argument("--daemons", default="1,2,4", help="the numbers of daemons, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=4, help="SMTP_CONNECTIONS of each daemon")
    parser.add_argument("--sink-rates", default="0,500",
                        help="the sink's quotas, messages a second (0: none), comma-separated")
    parser.add_argument("--lead", type=float, default=0, help="seconds from the daemons' start to the instant (0: 15 + N / 25,000)")
    parser.add_argument("--linger", type=float, default=0,
                        help="seconds the daemons keep running after the last mail (over 30: a waiting daemon looks again)")
    parser.add_argument("--data-delay-ms", type=float, default=0,
                        help="the sink answers each DATA this late, on every connection at once (a distant relay's latency)")
    parser.add_argument("--binary", default=os.path.join(bench.ROOT, ".build/release/sileme-notifier"))
    parser.add_argument("--json", help="write every measurement here")
    args = parser.parse_args()
    counts = [int(n) for n in args.daemons.split(",")]
    rates = [float(r) for r in args.sink_rates.split(",")]
    lead = args.lead or 15 + args.users / 25_000
    bench.RUN_DATE = str(datetime.datetime.now(datetime.timezone.utc).date())
    base = tempfile.mkdtemp(prefix="sileme-daemons-", dir="/var/tmp")
    cluster = bench.Cluster(base)
    results = []
    try:
        url, env = bench.migrated_database(cluster, args.binary)
        conn = psycopg2.connect(url)
        start = time.perf_counter()
        rows = bench.generate(conn, args.users, 0.01, 0.3)
        cur = conn.cursor()
        cur.execute("ALTER SYSTEM SET autovacuum = off")
        cur.execute("SELECT pg_reload_conf()")
        # Yesterday's runs are done: the daemons catch nothing up at start.
        cur.execute("""INSERT INTO sileme.notifier_runs (run_date, mode, host, pid, status, finished_at)
                       VALUES (%s::date - 1, 'daemon', 'bench', 0, 'completed', now())""", (bench.RUN_DATE,))
        cur.execute("CHECKPOINT")
        conn.close()
        expected, users = expected_mails(args.binary, env)
        bench.log(f"generated {args.users:,} users, {rows:,} check-ins in {time.perf_counter() - start:.0f} s; "
                  f"D = {bench.RUN_DATE}: {expected:,} alerts to {users:,} users")
        for rate in rates:
            for r in range(args.rounds):
                order = counts[r % len(counts):] + counts[:r % len(counts)]
                for n in order:
                    result = one(cluster, env, args.binary, n, args.connections, rate, expected, lead, args.linger, base,
                                 args.data_delay_ms)
                    result["round"] = r
                    results.append(result)
                    bench.log(f"quota {rate:g}/s, round {r + 1}, {n} daemons: {result['sending']:,.0f} mails/s at the sink, "
                              f"run {result['run_wall']:.2f} s, {result['runs']} run(s) ({result['joins']} joined), sent by {result['runners']} daemon(s)")
    finally:
        cluster.stop()
        shutil.rmtree(base, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)

    print(f"\n{args.users:,} users of bench.py's model, every one at one instant; D = {bench.RUN_DATE}: {expected:,} alerts "
          f"to {users:,} users; SMTP_CONNECTIONS={args.connections} per daemon; one sink"
          f"{f' answering each DATA {args.data_delay_ms:g} ms late' if args.data_delay_ms else ''}; medians of {args.rounds} rounds "
          f"(order rotated); {os.cpu_count()} cores")
    print(f"{'sink quota':>10} {'daemons':>8} {'mails/s at sink':>16} {'instant→last s':>15} {'run s':>7} "
          f"{'runs':>5} {'joins':>6} {'sent by':>7} {'notifier CPU s':>15} {'server CPU s':>13} {'sink CPU s':>11}")
    for rate in rates:
        for n in counts:
            these = [x for x in results if x["rate"] == rate and x["daemons"] == n]
            med = lambda key: statistics.median(x[key] for x in these)
            print(f"{(f'{rate:g}/s' if rate else 'none'):>10} {n:>8} {med('sending'):>16,.0f} {med('instant_to_last'):>15.2f} "
                  f"{med('run_wall'):>7.2f} {max(x['runs'] for x in these):>5} {max(x['joins'] for x in these):>6} {min(x['runners'] for x in these):>7} "
                  f"{med('client'):>15.2f} {med('server'):>13.2f} {med('sink'):>11.2f}")
        ones = [x for x in results if x["rate"] == rate and x["daemons"] == counts[0]]
        for n in counts[1:]:
            ratios = [x["sending"] / o["sending"] for o in ones for x in results
                      if x["rate"] == rate and x["daemons"] == n and x["round"] == o["round"]]
            print(f"{'':>10} {n} / {counts[0]} daemons, same round: {', '.join(f'{q:.2f}x' for q in ratios)}")
    print("every alert sent exactly once (notification_logs, the sink's Message-IDs); one completed daemon run of D each time "
          "(the others' runs joined its sending)")


if __name__ == "__main__":
    sys.exit(main())
