-- Sample users for the local demo (scripts/demo.sh): the design doc's scenario and its edge cases,
-- with dates relative to the run date of a run now: the date of the latest 09:00 (NOTIFY_TIME) in
-- Asia/Shanghai — before 09:00 that is yesterday — so that a run now has something to do.
-- Contacts are on example.com and go to the demo's local SMTP sink only.
BEGIN;
CREATE TEMP TABLE demo (id uuid, name text, email text, last_offset int, notified_offset int);
INSERT INTO demo VALUES
  -- m = 2: the design doc's "第3天" case, mailed today.
  ('00000000-0000-4000-8000-000000000001', '张三', 'zhangsan.family@example.com', 3, NULL),
  -- m = 2, with an emoji in the name.
  ('00000000-0000-4000-8000-000000000002', '李四 🌸', 'lisi.daughter@example.com', 3, NULL),
  -- m = 4, nothing sent yet (the daemon was down): caught up today with the real count.
  ('00000000-0000-4000-8000-000000000003', '王五', 'wangwu.son@example.com', 5, NULL),
  -- m = 3, already mailed yesterday: once per streak, nothing today.
  ('00000000-0000-4000-8000-000000000004', '赵六', 'zhaoliu.friend@example.com', 4, 1),
  -- m = 1: not yet.
  ('00000000-0000-4000-8000-000000000005', '孙七', 'sunqi.neighbour@example.com', 2, NULL),
  -- checked in today: fine.
  ('00000000-0000-4000-8000-000000000006', '周八', 'zhouba.wife@example.com', 0, NULL),
  -- m = 40: stale, left the app long ago; reported, never mailed.
  ('00000000-0000-4000-8000-000000000007', '吴九', 'wujiu.brother@example.com', 41, NULL),
  -- m = 2 but the contact address is unusable: skipped with a recorded reason.
  ('00000000-0000-4000-8000-000000000008', '郑十', 'zhengshi at example.com', 3, NULL),
  -- m = 2, a name with a line break inside (cleaned, cannot add a header).
  ('00000000-0000-4000-8000-000000000009', E'Alice\r\nBcc: everyone@example.com', 'alice.mother@example.com', 3, NULL);

INSERT INTO users (id, name, emergency_email)
SELECT id, name, email FROM demo ON CONFLICT DO NOTHING;

-- A daily check-in for 10 days up to each user's last check-in.
INSERT INTO check_ins (user_id, check_in_date)
SELECT d.id, (now() AT TIME ZONE 'Asia/Shanghai' - interval '9 hours')::date - d.last_offset - g
FROM demo d, generate_series(0, 9) g
ON CONFLICT DO NOTHING;

INSERT INTO notification_logs (user_id, notification_date, email_sent, consecutive_miss_days, status, sent_at)
SELECT d.id, (now() AT TIME ZONE 'Asia/Shanghai' - interval '9 hours')::date - d.notified_offset, true, d.last_offset - d.notified_offset - 1, 'sent', now() - interval '1 day'
FROM demo d WHERE d.notified_offset IS NOT NULL
ON CONFLICT DO NOTHING;

-- These users signed up ten days ago and their contacts were introduced then: the demo shows the
-- day's alerts, not a first day's introductions.
UPDATE sileme.known_contacts SET state = 'introduced' WHERE user_id IN (SELECT id FROM demo);
COMMIT;
