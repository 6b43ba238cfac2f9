-- Issue 15 item 4: message analytics read rollups instead of wide expression indexes, and the
-- per-row count/usage triggers on INSERT become one upsert per write batch
-- (src/db/derived-counts.ts, flushed by the group commit before COMMIT).
--
-- message_rollups: per account, per form ('*' = all of the account's messages, '' = messages of
-- no form), per UTC bucket at three levels (0 = day 'YYYY-MM-DD', 1 = hour 'YYYY-MM-DDTHH',
-- 2 = quarter hour 'YYYY-MM-DDTHH:MM'), by createdAt: the messages per current status, the sum
-- and number of response times (sentAt − createdAt, ms) of sent ones. reason '' is that row;
-- reason '#<failure reason>' rows count failed messages per reason. Any local day of any zone
-- whose offset is a multiple of 15 minutes is whole days + hours + quarters; analytics
-- (src/services/analytics.ts) adds them up, exactly.
CREATE TABLE `message_rollups` (
	`account_id` text NOT NULL,
	`form_id` text NOT NULL,
	`level` integer NOT NULL,
	`bucket` text NOT NULL,
	`reason` text NOT NULL,
	`queued` integer DEFAULT 0 NOT NULL,
	`sent` integer DEFAULT 0 NOT NULL,
	`failed` integer DEFAULT 0 NOT NULL,
	`cancelled` integer DEFAULT 0 NOT NULL,
	`sent_ms` integer DEFAULT 0 NOT NULL,
	`sent_timed` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`account_id`, `form_id`, `level`, `bucket`, `reason`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO message_rollups (account_id, form_id, level, bucket, reason, queued, sent, failed, cancelled, sent_ms, sent_timed)
  SELECT account_id, coalesce(form_id, ''), 2, substr(created_at, 1, 14) || printf('%02d', CAST(substr(created_at, 15, 2) AS INTEGER) / 15 * 15), '',
    SUM(status = 'queued'), SUM(status = 'sent'), SUM(status = 'failed'), SUM(status = 'cancelled'),
    SUM(CASE WHEN status = 'sent' AND sent_at IS NOT NULL THEN CAST(round((julianday(sent_at) - julianday(created_at)) * 86400000.0) AS INTEGER) ELSE 0 END),
    SUM(status = 'sent' AND sent_at IS NOT NULL)
  FROM messages GROUP BY 1, 2, 4;
--> statement-breakpoint
INSERT INTO message_rollups (account_id, form_id, level, bucket, reason, queued, sent, failed, cancelled, sent_ms, sent_timed)
  SELECT account_id, coalesce(form_id, ''), 2, substr(created_at, 1, 14) || printf('%02d', CAST(substr(created_at, 15, 2) AS INTEGER) / 15 * 15),
    '#' || coalesce(failure_reason, 'unknown'), 0, 0, COUNT(*), 0, 0, 0
  FROM messages WHERE status = 'failed' GROUP BY 1, 2, 4, 5;
--> statement-breakpoint
INSERT INTO message_rollups (account_id, form_id, level, bucket, reason, queued, sent, failed, cancelled, sent_ms, sent_timed)
  SELECT account_id, form_id, 1, substr(bucket, 1, 13), reason, SUM(queued), SUM(sent), SUM(failed), SUM(cancelled), SUM(sent_ms), SUM(sent_timed)
  FROM message_rollups WHERE level = 2 GROUP BY 1, 2, 4, 5;
--> statement-breakpoint
INSERT INTO message_rollups (account_id, form_id, level, bucket, reason, queued, sent, failed, cancelled, sent_ms, sent_timed)
  SELECT account_id, form_id, 0, substr(bucket, 1, 10), reason, SUM(queued), SUM(sent), SUM(failed), SUM(cancelled), SUM(sent_ms), SUM(sent_timed)
  FROM message_rollups WHERE level = 1 GROUP BY 1, 2, 4, 5;
--> statement-breakpoint
INSERT INTO message_rollups (account_id, form_id, level, bucket, reason, queued, sent, failed, cancelled, sent_ms, sent_timed)
  SELECT account_id, '*', level, bucket, reason, SUM(queued), SUM(sent), SUM(failed), SUM(cancelled), SUM(sent_ms), SUM(sent_timed)
  FROM message_rollups WHERE form_id <> '*' GROUP BY 1, 3, 4, 5;
--> statement-breakpoint
-- Status changes and deletes (one per message, off the webhook path; cascades from contact, form
-- and account deletes included) keep the rollups by trigger; the same-key trigger is one upsert
-- of the difference per bucket. The insert triggers of message_counts and monthly_usage go: the
-- writers record their inserts (src/db/derived-counts.ts).
CREATE TRIGGER messages_rollup_update AFTER UPDATE OF status, sent_at, failure_reason ON messages
  WHEN OLD.account_id = NEW.account_id AND OLD.form_id IS NEW.form_id AND OLD.created_at = NEW.created_at AND (OLD.status IS NOT NEW.status OR OLD.sent_at IS NOT NEW.sent_at OR OLD.failure_reason IS NOT NEW.failure_reason) BEGIN
  INSERT INTO message_rollups (account_id, form_id, level, bucket, reason, queued, sent, failed, cancelled, sent_ms, sent_timed) VALUES
    (NEW.account_id, '*', 0, substr(NEW.created_at, 1, 10), '', (NEW.status = 'queued') - (OLD.status = 'queued'), (NEW.status = 'sent') - (OLD.status = 'sent'), (NEW.status = 'failed') - (OLD.status = 'failed'), (NEW.status = 'cancelled') - (OLD.status = 'cancelled'), (CASE WHEN NEW.status = 'sent' AND NEW.sent_at IS NOT NULL THEN CAST(round((julianday(NEW.sent_at) - julianday(NEW.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END) - (CASE WHEN OLD.status = 'sent' AND OLD.sent_at IS NOT NULL THEN CAST(round((julianday(OLD.sent_at) - julianday(OLD.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END), (NEW.status = 'sent' AND NEW.sent_at IS NOT NULL) - (OLD.status = 'sent' AND OLD.sent_at IS NOT NULL)),
    (NEW.account_id, '*', 1, substr(NEW.created_at, 1, 13), '', (NEW.status = 'queued') - (OLD.status = 'queued'), (NEW.status = 'sent') - (OLD.status = 'sent'), (NEW.status = 'failed') - (OLD.status = 'failed'), (NEW.status = 'cancelled') - (OLD.status = 'cancelled'), (CASE WHEN NEW.status = 'sent' AND NEW.sent_at IS NOT NULL THEN CAST(round((julianday(NEW.sent_at) - julianday(NEW.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END) - (CASE WHEN OLD.status = 'sent' AND OLD.sent_at IS NOT NULL THEN CAST(round((julianday(OLD.sent_at) - julianday(OLD.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END), (NEW.status = 'sent' AND NEW.sent_at IS NOT NULL) - (OLD.status = 'sent' AND OLD.sent_at IS NOT NULL)),
    (NEW.account_id, '*', 2, substr(NEW.created_at, 1, 14) || printf('%02d', CAST(substr(NEW.created_at, 15, 2) AS INTEGER) / 15 * 15), '', (NEW.status = 'queued') - (OLD.status = 'queued'), (NEW.status = 'sent') - (OLD.status = 'sent'), (NEW.status = 'failed') - (OLD.status = 'failed'), (NEW.status = 'cancelled') - (OLD.status = 'cancelled'), (CASE WHEN NEW.status = 'sent' AND NEW.sent_at IS NOT NULL THEN CAST(round((julianday(NEW.sent_at) - julianday(NEW.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END) - (CASE WHEN OLD.status = 'sent' AND OLD.sent_at IS NOT NULL THEN CAST(round((julianday(OLD.sent_at) - julianday(OLD.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END), (NEW.status = 'sent' AND NEW.sent_at IS NOT NULL) - (OLD.status = 'sent' AND OLD.sent_at IS NOT NULL)),
    (NEW.account_id, coalesce(NEW.form_id, ''), 0, substr(NEW.created_at, 1, 10), '', (NEW.status = 'queued') - (OLD.status = 'queued'), (NEW.status = 'sent') - (OLD.status = 'sent'), (NEW.status = 'failed') - (OLD.status = 'failed'), (NEW.status = 'cancelled') - (OLD.status = 'cancelled'), (CASE WHEN NEW.status = 'sent' AND NEW.sent_at IS NOT NULL THEN CAST(round((julianday(NEW.sent_at) - julianday(NEW.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END) - (CASE WHEN OLD.status = 'sent' AND OLD.sent_at IS NOT NULL THEN CAST(round((julianday(OLD.sent_at) - julianday(OLD.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END), (NEW.status = 'sent' AND NEW.sent_at IS NOT NULL) - (OLD.status = 'sent' AND OLD.sent_at IS NOT NULL)),
    (NEW.account_id, coalesce(NEW.form_id, ''), 1, substr(NEW.created_at, 1, 13), '', (NEW.status = 'queued') - (OLD.status = 'queued'), (NEW.status = 'sent') - (OLD.status = 'sent'), (NEW.status = 'failed') - (OLD.status = 'failed'), (NEW.status = 'cancelled') - (OLD.status = 'cancelled'), (CASE WHEN NEW.status = 'sent' AND NEW.sent_at IS NOT NULL THEN CAST(round((julianday(NEW.sent_at) - julianday(NEW.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END) - (CASE WHEN OLD.status = 'sent' AND OLD.sent_at IS NOT NULL THEN CAST(round((julianday(OLD.sent_at) - julianday(OLD.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END), (NEW.status = 'sent' AND NEW.sent_at IS NOT NULL) - (OLD.status = 'sent' AND OLD.sent_at IS NOT NULL)),
    (NEW.account_id, coalesce(NEW.form_id, ''), 2, substr(NEW.created_at, 1, 14) || printf('%02d', CAST(substr(NEW.created_at, 15, 2) AS INTEGER) / 15 * 15), '', (NEW.status = 'queued') - (OLD.status = 'queued'), (NEW.status = 'sent') - (OLD.status = 'sent'), (NEW.status = 'failed') - (OLD.status = 'failed'), (NEW.status = 'cancelled') - (OLD.status = 'cancelled'), (CASE WHEN NEW.status = 'sent' AND NEW.sent_at IS NOT NULL THEN CAST(round((julianday(NEW.sent_at) - julianday(NEW.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END) - (CASE WHEN OLD.status = 'sent' AND OLD.sent_at IS NOT NULL THEN CAST(round((julianday(OLD.sent_at) - julianday(OLD.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END), (NEW.status = 'sent' AND NEW.sent_at IS NOT NULL) - (OLD.status = 'sent' AND OLD.sent_at IS NOT NULL))
  ON CONFLICT (account_id, form_id, level, bucket, reason) DO UPDATE SET queued = queued + excluded.queued, sent = sent + excluded.sent,
    failed = failed + excluded.failed, cancelled = cancelled + excluded.cancelled, sent_ms = sent_ms + excluded.sent_ms, sent_timed = sent_timed + excluded.sent_timed;
  INSERT INTO message_rollups (account_id, form_id, level, bucket, reason, queued, sent, failed, cancelled, sent_ms, sent_timed) SELECT * FROM (VALUES
    (OLD.account_id, '*', 0, substr(OLD.created_at, 1, 10), '#' || coalesce(OLD.failure_reason, 'unknown'), 0, 0, -1, 0, 0, 0),
    (OLD.account_id, '*', 1, substr(OLD.created_at, 1, 13), '#' || coalesce(OLD.failure_reason, 'unknown'), 0, 0, -1, 0, 0, 0),
    (OLD.account_id, '*', 2, substr(OLD.created_at, 1, 14) || printf('%02d', CAST(substr(OLD.created_at, 15, 2) AS INTEGER) / 15 * 15), '#' || coalesce(OLD.failure_reason, 'unknown'), 0, 0, -1, 0, 0, 0),
    (OLD.account_id, coalesce(OLD.form_id, ''), 0, substr(OLD.created_at, 1, 10), '#' || coalesce(OLD.failure_reason, 'unknown'), 0, 0, -1, 0, 0, 0),
    (OLD.account_id, coalesce(OLD.form_id, ''), 1, substr(OLD.created_at, 1, 13), '#' || coalesce(OLD.failure_reason, 'unknown'), 0, 0, -1, 0, 0, 0),
    (OLD.account_id, coalesce(OLD.form_id, ''), 2, substr(OLD.created_at, 1, 14) || printf('%02d', CAST(substr(OLD.created_at, 15, 2) AS INTEGER) / 15 * 15), '#' || coalesce(OLD.failure_reason, 'unknown'), 0, 0, -1, 0, 0, 0)) WHERE OLD.status = 'failed'
  ON CONFLICT (account_id, form_id, level, bucket, reason) DO UPDATE SET queued = queued + excluded.queued, sent = sent + excluded.sent,
    failed = failed + excluded.failed, cancelled = cancelled + excluded.cancelled, sent_ms = sent_ms + excluded.sent_ms, sent_timed = sent_timed + excluded.sent_timed;
  INSERT INTO message_rollups (account_id, form_id, level, bucket, reason, queued, sent, failed, cancelled, sent_ms, sent_timed) SELECT * FROM (VALUES
    (NEW.account_id, '*', 0, substr(NEW.created_at, 1, 10), '#' || coalesce(NEW.failure_reason, 'unknown'), 0, 0, 1, 0, 0, 0),
    (NEW.account_id, '*', 1, substr(NEW.created_at, 1, 13), '#' || coalesce(NEW.failure_reason, 'unknown'), 0, 0, 1, 0, 0, 0),
    (NEW.account_id, '*', 2, substr(NEW.created_at, 1, 14) || printf('%02d', CAST(substr(NEW.created_at, 15, 2) AS INTEGER) / 15 * 15), '#' || coalesce(NEW.failure_reason, 'unknown'), 0, 0, 1, 0, 0, 0),
    (NEW.account_id, coalesce(NEW.form_id, ''), 0, substr(NEW.created_at, 1, 10), '#' || coalesce(NEW.failure_reason, 'unknown'), 0, 0, 1, 0, 0, 0),
    (NEW.account_id, coalesce(NEW.form_id, ''), 1, substr(NEW.created_at, 1, 13), '#' || coalesce(NEW.failure_reason, 'unknown'), 0, 0, 1, 0, 0, 0),
    (NEW.account_id, coalesce(NEW.form_id, ''), 2, substr(NEW.created_at, 1, 14) || printf('%02d', CAST(substr(NEW.created_at, 15, 2) AS INTEGER) / 15 * 15), '#' || coalesce(NEW.failure_reason, 'unknown'), 0, 0, 1, 0, 0, 0)) WHERE NEW.status = 'failed'
  ON CONFLICT (account_id, form_id, level, bucket, reason) DO UPDATE SET queued = queued + excluded.queued, sent = sent + excluded.sent,
    failed = failed + excluded.failed, cancelled = cancelled + excluded.cancelled, sent_ms = sent_ms + excluded.sent_ms, sent_timed = sent_timed + excluded.sent_timed;
END;
--> statement-breakpoint
CREATE TRIGGER messages_rollup_rekey AFTER UPDATE OF account_id, form_id, created_at ON messages
  WHEN NOT (OLD.account_id = NEW.account_id AND OLD.form_id IS NEW.form_id AND OLD.created_at = NEW.created_at) BEGIN
  INSERT INTO message_rollups (account_id, form_id, level, bucket, reason, queued, sent, failed, cancelled, sent_ms, sent_timed) VALUES
    (OLD.account_id, '*', 0, substr(OLD.created_at, 1, 10), '', -(OLD.status = 'queued'), -(OLD.status = 'sent'), -(OLD.status = 'failed'), -(OLD.status = 'cancelled'), -(CASE WHEN OLD.status = 'sent' AND OLD.sent_at IS NOT NULL THEN CAST(round((julianday(OLD.sent_at) - julianday(OLD.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END), -(OLD.status = 'sent' AND OLD.sent_at IS NOT NULL)),
    (OLD.account_id, '*', 1, substr(OLD.created_at, 1, 13), '', -(OLD.status = 'queued'), -(OLD.status = 'sent'), -(OLD.status = 'failed'), -(OLD.status = 'cancelled'), -(CASE WHEN OLD.status = 'sent' AND OLD.sent_at IS NOT NULL THEN CAST(round((julianday(OLD.sent_at) - julianday(OLD.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END), -(OLD.status = 'sent' AND OLD.sent_at IS NOT NULL)),
    (OLD.account_id, '*', 2, substr(OLD.created_at, 1, 14) || printf('%02d', CAST(substr(OLD.created_at, 15, 2) AS INTEGER) / 15 * 15), '', -(OLD.status = 'queued'), -(OLD.status = 'sent'), -(OLD.status = 'failed'), -(OLD.status = 'cancelled'), -(CASE WHEN OLD.status = 'sent' AND OLD.sent_at IS NOT NULL THEN CAST(round((julianday(OLD.sent_at) - julianday(OLD.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END), -(OLD.status = 'sent' AND OLD.sent_at IS NOT NULL)),
    (OLD.account_id, coalesce(OLD.form_id, ''), 0, substr(OLD.created_at, 1, 10), '', -(OLD.status = 'queued'), -(OLD.status = 'sent'), -(OLD.status = 'failed'), -(OLD.status = 'cancelled'), -(CASE WHEN OLD.status = 'sent' AND OLD.sent_at IS NOT NULL THEN CAST(round((julianday(OLD.sent_at) - julianday(OLD.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END), -(OLD.status = 'sent' AND OLD.sent_at IS NOT NULL)),
    (OLD.account_id, coalesce(OLD.form_id, ''), 1, substr(OLD.created_at, 1, 13), '', -(OLD.status = 'queued'), -(OLD.status = 'sent'), -(OLD.status = 'failed'), -(OLD.status = 'cancelled'), -(CASE WHEN OLD.status = 'sent' AND OLD.sent_at IS NOT NULL THEN CAST(round((julianday(OLD.sent_at) - julianday(OLD.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END), -(OLD.status = 'sent' AND OLD.sent_at IS NOT NULL)),
    (OLD.account_id, coalesce(OLD.form_id, ''), 2, substr(OLD.created_at, 1, 14) || printf('%02d', CAST(substr(OLD.created_at, 15, 2) AS INTEGER) / 15 * 15), '', -(OLD.status = 'queued'), -(OLD.status = 'sent'), -(OLD.status = 'failed'), -(OLD.status = 'cancelled'), -(CASE WHEN OLD.status = 'sent' AND OLD.sent_at IS NOT NULL THEN CAST(round((julianday(OLD.sent_at) - julianday(OLD.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END), -(OLD.status = 'sent' AND OLD.sent_at IS NOT NULL))
  ON CONFLICT (account_id, form_id, level, bucket, reason) DO UPDATE SET queued = queued + excluded.queued, sent = sent + excluded.sent,
    failed = failed + excluded.failed, cancelled = cancelled + excluded.cancelled, sent_ms = sent_ms + excluded.sent_ms, sent_timed = sent_timed + excluded.sent_timed;
  INSERT INTO message_rollups (account_id, form_id, level, bucket, reason, queued, sent, failed, cancelled, sent_ms, sent_timed) VALUES
    (NEW.account_id, '*', 0, substr(NEW.created_at, 1, 10), '', (NEW.status = 'queued'), (NEW.status = 'sent'), (NEW.status = 'failed'), (NEW.status = 'cancelled'), (CASE WHEN NEW.status = 'sent' AND NEW.sent_at IS NOT NULL THEN CAST(round((julianday(NEW.sent_at) - julianday(NEW.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END), (NEW.status = 'sent' AND NEW.sent_at IS NOT NULL)),
    (NEW.account_id, '*', 1, substr(NEW.created_at, 1, 13), '', (NEW.status = 'queued'), (NEW.status = 'sent'), (NEW.status = 'failed'), (NEW.status = 'cancelled'), (CASE WHEN NEW.status = 'sent' AND NEW.sent_at IS NOT NULL THEN CAST(round((julianday(NEW.sent_at) - julianday(NEW.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END), (NEW.status = 'sent' AND NEW.sent_at IS NOT NULL)),
    (NEW.account_id, '*', 2, substr(NEW.created_at, 1, 14) || printf('%02d', CAST(substr(NEW.created_at, 15, 2) AS INTEGER) / 15 * 15), '', (NEW.status = 'queued'), (NEW.status = 'sent'), (NEW.status = 'failed'), (NEW.status = 'cancelled'), (CASE WHEN NEW.status = 'sent' AND NEW.sent_at IS NOT NULL THEN CAST(round((julianday(NEW.sent_at) - julianday(NEW.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END), (NEW.status = 'sent' AND NEW.sent_at IS NOT NULL)),
    (NEW.account_id, coalesce(NEW.form_id, ''), 0, substr(NEW.created_at, 1, 10), '', (NEW.status = 'queued'), (NEW.status = 'sent'), (NEW.status = 'failed'), (NEW.status = 'cancelled'), (CASE WHEN NEW.status = 'sent' AND NEW.sent_at IS NOT NULL THEN CAST(round((julianday(NEW.sent_at) - julianday(NEW.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END), (NEW.status = 'sent' AND NEW.sent_at IS NOT NULL)),
    (NEW.account_id, coalesce(NEW.form_id, ''), 1, substr(NEW.created_at, 1, 13), '', (NEW.status = 'queued'), (NEW.status = 'sent'), (NEW.status = 'failed'), (NEW.status = 'cancelled'), (CASE WHEN NEW.status = 'sent' AND NEW.sent_at IS NOT NULL THEN CAST(round((julianday(NEW.sent_at) - julianday(NEW.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END), (NEW.status = 'sent' AND NEW.sent_at IS NOT NULL)),
    (NEW.account_id, coalesce(NEW.form_id, ''), 2, substr(NEW.created_at, 1, 14) || printf('%02d', CAST(substr(NEW.created_at, 15, 2) AS INTEGER) / 15 * 15), '', (NEW.status = 'queued'), (NEW.status = 'sent'), (NEW.status = 'failed'), (NEW.status = 'cancelled'), (CASE WHEN NEW.status = 'sent' AND NEW.sent_at IS NOT NULL THEN CAST(round((julianday(NEW.sent_at) - julianday(NEW.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END), (NEW.status = 'sent' AND NEW.sent_at IS NOT NULL))
  ON CONFLICT (account_id, form_id, level, bucket, reason) DO UPDATE SET queued = queued + excluded.queued, sent = sent + excluded.sent,
    failed = failed + excluded.failed, cancelled = cancelled + excluded.cancelled, sent_ms = sent_ms + excluded.sent_ms, sent_timed = sent_timed + excluded.sent_timed;
  INSERT INTO message_rollups (account_id, form_id, level, bucket, reason, queued, sent, failed, cancelled, sent_ms, sent_timed) SELECT * FROM (VALUES
    (OLD.account_id, '*', 0, substr(OLD.created_at, 1, 10), '#' || coalesce(OLD.failure_reason, 'unknown'), 0, 0, -1, 0, 0, 0),
    (OLD.account_id, '*', 1, substr(OLD.created_at, 1, 13), '#' || coalesce(OLD.failure_reason, 'unknown'), 0, 0, -1, 0, 0, 0),
    (OLD.account_id, '*', 2, substr(OLD.created_at, 1, 14) || printf('%02d', CAST(substr(OLD.created_at, 15, 2) AS INTEGER) / 15 * 15), '#' || coalesce(OLD.failure_reason, 'unknown'), 0, 0, -1, 0, 0, 0),
    (OLD.account_id, coalesce(OLD.form_id, ''), 0, substr(OLD.created_at, 1, 10), '#' || coalesce(OLD.failure_reason, 'unknown'), 0, 0, -1, 0, 0, 0),
    (OLD.account_id, coalesce(OLD.form_id, ''), 1, substr(OLD.created_at, 1, 13), '#' || coalesce(OLD.failure_reason, 'unknown'), 0, 0, -1, 0, 0, 0),
    (OLD.account_id, coalesce(OLD.form_id, ''), 2, substr(OLD.created_at, 1, 14) || printf('%02d', CAST(substr(OLD.created_at, 15, 2) AS INTEGER) / 15 * 15), '#' || coalesce(OLD.failure_reason, 'unknown'), 0, 0, -1, 0, 0, 0)) WHERE OLD.status = 'failed'
  ON CONFLICT (account_id, form_id, level, bucket, reason) DO UPDATE SET queued = queued + excluded.queued, sent = sent + excluded.sent,
    failed = failed + excluded.failed, cancelled = cancelled + excluded.cancelled, sent_ms = sent_ms + excluded.sent_ms, sent_timed = sent_timed + excluded.sent_timed;
  INSERT INTO message_rollups (account_id, form_id, level, bucket, reason, queued, sent, failed, cancelled, sent_ms, sent_timed) SELECT * FROM (VALUES
    (NEW.account_id, '*', 0, substr(NEW.created_at, 1, 10), '#' || coalesce(NEW.failure_reason, 'unknown'), 0, 0, 1, 0, 0, 0),
    (NEW.account_id, '*', 1, substr(NEW.created_at, 1, 13), '#' || coalesce(NEW.failure_reason, 'unknown'), 0, 0, 1, 0, 0, 0),
    (NEW.account_id, '*', 2, substr(NEW.created_at, 1, 14) || printf('%02d', CAST(substr(NEW.created_at, 15, 2) AS INTEGER) / 15 * 15), '#' || coalesce(NEW.failure_reason, 'unknown'), 0, 0, 1, 0, 0, 0),
    (NEW.account_id, coalesce(NEW.form_id, ''), 0, substr(NEW.created_at, 1, 10), '#' || coalesce(NEW.failure_reason, 'unknown'), 0, 0, 1, 0, 0, 0),
    (NEW.account_id, coalesce(NEW.form_id, ''), 1, substr(NEW.created_at, 1, 13), '#' || coalesce(NEW.failure_reason, 'unknown'), 0, 0, 1, 0, 0, 0),
    (NEW.account_id, coalesce(NEW.form_id, ''), 2, substr(NEW.created_at, 1, 14) || printf('%02d', CAST(substr(NEW.created_at, 15, 2) AS INTEGER) / 15 * 15), '#' || coalesce(NEW.failure_reason, 'unknown'), 0, 0, 1, 0, 0, 0)) WHERE NEW.status = 'failed'
  ON CONFLICT (account_id, form_id, level, bucket, reason) DO UPDATE SET queued = queued + excluded.queued, sent = sent + excluded.sent,
    failed = failed + excluded.failed, cancelled = cancelled + excluded.cancelled, sent_ms = sent_ms + excluded.sent_ms, sent_timed = sent_timed + excluded.sent_timed;
END;
--> statement-breakpoint
CREATE TRIGGER messages_rollup_delete AFTER DELETE ON messages BEGIN
  INSERT INTO message_rollups (account_id, form_id, level, bucket, reason, queued, sent, failed, cancelled, sent_ms, sent_timed) VALUES
    (OLD.account_id, '*', 0, substr(OLD.created_at, 1, 10), '', -(OLD.status = 'queued'), -(OLD.status = 'sent'), -(OLD.status = 'failed'), -(OLD.status = 'cancelled'), -(CASE WHEN OLD.status = 'sent' AND OLD.sent_at IS NOT NULL THEN CAST(round((julianday(OLD.sent_at) - julianday(OLD.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END), -(OLD.status = 'sent' AND OLD.sent_at IS NOT NULL)),
    (OLD.account_id, '*', 1, substr(OLD.created_at, 1, 13), '', -(OLD.status = 'queued'), -(OLD.status = 'sent'), -(OLD.status = 'failed'), -(OLD.status = 'cancelled'), -(CASE WHEN OLD.status = 'sent' AND OLD.sent_at IS NOT NULL THEN CAST(round((julianday(OLD.sent_at) - julianday(OLD.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END), -(OLD.status = 'sent' AND OLD.sent_at IS NOT NULL)),
    (OLD.account_id, '*', 2, substr(OLD.created_at, 1, 14) || printf('%02d', CAST(substr(OLD.created_at, 15, 2) AS INTEGER) / 15 * 15), '', -(OLD.status = 'queued'), -(OLD.status = 'sent'), -(OLD.status = 'failed'), -(OLD.status = 'cancelled'), -(CASE WHEN OLD.status = 'sent' AND OLD.sent_at IS NOT NULL THEN CAST(round((julianday(OLD.sent_at) - julianday(OLD.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END), -(OLD.status = 'sent' AND OLD.sent_at IS NOT NULL)),
    (OLD.account_id, coalesce(OLD.form_id, ''), 0, substr(OLD.created_at, 1, 10), '', -(OLD.status = 'queued'), -(OLD.status = 'sent'), -(OLD.status = 'failed'), -(OLD.status = 'cancelled'), -(CASE WHEN OLD.status = 'sent' AND OLD.sent_at IS NOT NULL THEN CAST(round((julianday(OLD.sent_at) - julianday(OLD.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END), -(OLD.status = 'sent' AND OLD.sent_at IS NOT NULL)),
    (OLD.account_id, coalesce(OLD.form_id, ''), 1, substr(OLD.created_at, 1, 13), '', -(OLD.status = 'queued'), -(OLD.status = 'sent'), -(OLD.status = 'failed'), -(OLD.status = 'cancelled'), -(CASE WHEN OLD.status = 'sent' AND OLD.sent_at IS NOT NULL THEN CAST(round((julianday(OLD.sent_at) - julianday(OLD.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END), -(OLD.status = 'sent' AND OLD.sent_at IS NOT NULL)),
    (OLD.account_id, coalesce(OLD.form_id, ''), 2, substr(OLD.created_at, 1, 14) || printf('%02d', CAST(substr(OLD.created_at, 15, 2) AS INTEGER) / 15 * 15), '', -(OLD.status = 'queued'), -(OLD.status = 'sent'), -(OLD.status = 'failed'), -(OLD.status = 'cancelled'), -(CASE WHEN OLD.status = 'sent' AND OLD.sent_at IS NOT NULL THEN CAST(round((julianday(OLD.sent_at) - julianday(OLD.created_at)) * 86400000.0) AS INTEGER) ELSE 0 END), -(OLD.status = 'sent' AND OLD.sent_at IS NOT NULL))
  ON CONFLICT (account_id, form_id, level, bucket, reason) DO UPDATE SET queued = queued + excluded.queued, sent = sent + excluded.sent,
    failed = failed + excluded.failed, cancelled = cancelled + excluded.cancelled, sent_ms = sent_ms + excluded.sent_ms, sent_timed = sent_timed + excluded.sent_timed;
  INSERT INTO message_rollups (account_id, form_id, level, bucket, reason, queued, sent, failed, cancelled, sent_ms, sent_timed) SELECT * FROM (VALUES
    (OLD.account_id, '*', 0, substr(OLD.created_at, 1, 10), '#' || coalesce(OLD.failure_reason, 'unknown'), 0, 0, -1, 0, 0, 0),
    (OLD.account_id, '*', 1, substr(OLD.created_at, 1, 13), '#' || coalesce(OLD.failure_reason, 'unknown'), 0, 0, -1, 0, 0, 0),
    (OLD.account_id, '*', 2, substr(OLD.created_at, 1, 14) || printf('%02d', CAST(substr(OLD.created_at, 15, 2) AS INTEGER) / 15 * 15), '#' || coalesce(OLD.failure_reason, 'unknown'), 0, 0, -1, 0, 0, 0),
    (OLD.account_id, coalesce(OLD.form_id, ''), 0, substr(OLD.created_at, 1, 10), '#' || coalesce(OLD.failure_reason, 'unknown'), 0, 0, -1, 0, 0, 0),
    (OLD.account_id, coalesce(OLD.form_id, ''), 1, substr(OLD.created_at, 1, 13), '#' || coalesce(OLD.failure_reason, 'unknown'), 0, 0, -1, 0, 0, 0),
    (OLD.account_id, coalesce(OLD.form_id, ''), 2, substr(OLD.created_at, 1, 14) || printf('%02d', CAST(substr(OLD.created_at, 15, 2) AS INTEGER) / 15 * 15), '#' || coalesce(OLD.failure_reason, 'unknown'), 0, 0, -1, 0, 0, 0)) WHERE OLD.status = 'failed'
  ON CONFLICT (account_id, form_id, level, bucket, reason) DO UPDATE SET queued = queued + excluded.queued, sent = sent + excluded.sent,
    failed = failed + excluded.failed, cancelled = cancelled + excluded.cancelled, sent_ms = sent_ms + excluded.sent_ms, sent_timed = sent_timed + excluded.sent_timed;
END;
--> statement-breakpoint
DROP TRIGGER `messages_count_insert`;
--> statement-breakpoint
DROP TRIGGER `messages_usage_insert`;
--> statement-breakpoint
DROP INDEX `messages_account_status_created_sent_idx`;
--> statement-breakpoint
DROP INDEX `messages_form_status_created_idx`;
--> statement-breakpoint
-- Every row sat in (status, lease_expires_at); its readers only want queued or leased rows.
DROP INDEX `messages_status_lease_idx`;
--> statement-breakpoint
CREATE INDEX `messages_queued_idx` ON `messages` (`scheduled_for`) WHERE `status` = 'queued';
--> statement-breakpoint
CREATE INDEX `messages_leased_idx` ON `messages` (`lease_expires_at`) WHERE `status` = 'queued' AND `lease_expires_at` IS NOT NULL;
