#!/usr/bin/python3
"""Measures the daemon's start-to-READY time, idle memory and idle CPU.

Usage: bench/daemon-idle.py [BINARY] [SECONDS]   (default .build/release/sileme-notifier, 60)

Runs BINARY as the daemon with a notify socket it listens on (WatchdogSec=60 equivalent), with the
configuration taken from the environment (DATABASE_URL, SMTP_*, FROM_EMAIL, ...): the database must
be migrated and today's run already completed, so that the daemon only waits.
"""
import os, socket, subprocess, sys, tempfile, time

binary = sys.argv[1] if len(sys.argv) > 1 else ".build/release/sileme-notifier"
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 60.0
path = os.path.join(tempfile.mkdtemp(), "notify.sock")
listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
listener.bind(path)
listener.settimeout(30)
env = dict(os.environ, NOTIFY_SOCKET=path, WATCHDOG_USEC="60000000")

def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

def rss(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS"):
            return line.split()[1] + " kB"

started = time.monotonic()
daemon = subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    while "READY=1" not in listener.recv(4096).decode():
        pass
    print(f"start -> READY=1: {(time.monotonic() - started) * 1000:.0f} ms")
    time.sleep(3)
    cpu0, t0 = cpu_seconds(daemon.pid), time.monotonic()
    time.sleep(seconds)
    cpu1, t1 = cpu_seconds(daemon.pid), time.monotonic()
    print(f"idle RSS: {rss(daemon.pid)}; CPU over {t1 - t0:.0f} s of waiting: {cpu1 - cpu0:.2f} s")
finally:
    daemon.terminate()
    daemon.wait()
