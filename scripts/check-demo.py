#!/usr/bin/python3
"""Checks that the demo (scripts/demo.sh) shows the design doc's scenario, from what it printed.

    bash scripts/demo.sh 2>&1 | tee demo.log; /usr/bin/python3 scripts/check-demo.py demo.log

The demo can exit 0 and show nothing (a sample-data file that the schema no longer accepts once
did exactly that for a whole round), so CI reads its output as a person would: the dry run's
decisions, the run's summary, the mails the SMTP sink received and the notification_logs table.
Exits 1 naming every difference.
"""
import re
import sys

# The sample users (config/sample-data.sql) and what the day's run must do with each.
DUE = {  # name in the dry run -> (days missed, contact address)
    "张三": (2, "zhangsan.family@example.com"),
    "李四 🌸": (2, "lisi.daughter@example.com"),
    "王五": (4, "wangwu.son@example.com"),
    "Alice Bcc: …": (2, "alice.mother@example.com"),
}
NOT_MAILED = {  # name in the dry run -> decision (absent: not listed at all)
    "赵六": "already_notified",
    "吴九": "stale",
    "郑十": "invalid_email",
    "孙七": None,   # one day missed: not yet
    "周八": None,   # checked in today
}
NEVER_MAILED = ["zhaoliu.friend@example.com", "wujiu.brother@example.com", "sunqi.neighbour@example.com",
                "zhouba.wife@example.com", "zhengshi", "everyone@example.com"]


def sections(text):
    """The demo's '== title' sections: title -> body."""
    parts = re.split(r"^== (.*)$", text, flags=re.M)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def main(path):
    text = re.sub(r"\x1b\[[0-9;]*m", "", open(path, encoding="utf-8").read())
    parts = sections(text)
    problems = []

    def find(prefix):
        return next((body for title, body in parts.items() if title.startswith(prefix)), None)

    dry = find("sileme-notifier --run-now --dry-run")
    run = parts.get("sileme-notifier --run-now")
    mails = find("Mails ")
    logs = find("notification_logs")
    for name, body in [("dry run", dry), ("run", run), ("mails", mails), ("notification_logs", logs)]:
        if body is None:
            problems.append(f"the demo printed no {name} section")
    if problems:
        return report(problems)

    # The dry run: one row per user with its days and decision (columns: USER NAME EMAIL LAST DAYS DECISION).
    rows = {}
    for line in dry.splitlines():
        m = re.match(r"^\S{8}\s{2}(.+?)\s{2,}\S+\s+(\d{4}-\d{2}-\d{2})\s+(\d+)\s+(\w+)\s*$", line)
        if m:
            rows[m.group(1).strip()] = (int(m.group(3)), m.group(4))
    for name, (days, _) in DUE.items():
        if rows.get(name) != (days, "send"):
            problems.append(f"dry run: {name} should be 'send' at {days} days, shows {rows.get(name)}")
    for name, decision in NOT_MAILED.items():
        got = rows.get(name, (None, None))[1]
        if got != decision:
            problems.append(f"dry run: {name} should be {decision or 'not listed'}, shows {got or 'not listed'}")
    if "Summary: send 4, already_notified 1, stale 1, invalid_email 1, invalid_name 0" not in dry:
        problems.append("dry run: the summary is not 'send 4, already_notified 1, stale 1, invalid_email 1, invalid_name 0'")

    # The run: four sent, the unusable address skipped, nothing else sent.
    if not re.search(r"run finished for \d{4}-\d{2}-\d{2}: 4 sent, 0 failed, 1 skipped, 1 already notified, 1 stale$", run, re.M):
        problems.append("run: the summary is not '4 sent, 0 failed, 1 skipped, 1 already notified, 1 stale'")
    if "exit status: 0" not in run:
        problems.append("run: the exit status is not 0")

    # The mails: exactly one alert to each due user's contact, naming the user and the days.
    blocks = [b for b in mails.split("-" * 72) if "To:" in b]
    recipients = sorted(re.search(r"^To: (.*)$", b, re.M).group(1) for b in blocks)
    expected = sorted(address for _, address in DUE.values())
    if recipients != expected:
        problems.append(f"mails: received for {recipients}, expected one each for {expected}")
    for name, (days, address) in DUE.items():
        shown = name.replace(" …", " everyone@example.com")  # the dry run cuts the cleaned name short
        block = next((b for b in blocks if f"To: {address}" in b), "")
        if block and not re.search(rf"^Subject: \[一键打卡\] 关于 {re.escape(shown)} 的签到提醒$", block, re.M):
            problems.append(f"mails: the alert to {address} has no subject naming {shown}")
        if block and f"{shown} 已连续 {days} 天未" not in block:
            problems.append(f"mails: the alert to {address} does not say {days} days")
    for address in NEVER_MAILED:
        if re.search(rf"^To: .*{re.escape(address)}", mails, re.M):
            problems.append(f"mails: {address} was mailed")
    if re.search(r"^(Bcc|Cc): ", mails, re.M):
        problems.append("mails: a Bcc or Cc header made it into a mail (the name with a line break was not cleaned)")

    # notification_logs: today's four alerts sent, the unusable address skipped, yesterday's alert kept.
    sent = len(re.findall(r"\| alert \| [24] \| sent    \| t ", logs))
    if sent != 5 or "| skipped | f " not in logs or "(6 rows)" not in logs:
        problems.append(f"notification_logs: expected 5 sent alerts (4 today, 1 yesterday), 1 skipped, 6 rows; saw {sent} sent")
    return report(problems)


def report(problems):
    if problems:
        print("check-demo: the demo does not show the scenario:", file=sys.stderr)
        for p in problems:
            print(f"  - {p}", file=sys.stderr)
        return 1
    print("check-demo: the demo shows the scenario: 张三, 李四 and Alice alerted at 2 days, 王五 at 4; "
          "nobody else mailed; the unusable address skipped", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
