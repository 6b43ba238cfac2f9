-- Issue 15 item 4: form stats read their submissions and new contacts from the rollups too.
--
-- Two columns on message_rollups (not a sibling table): a submission and its message share the
-- form and the instant, so they add to the same rows — the applier's batch writes no extra
-- upsert for them and form stats read them in the same range sums as the messages (no extra
-- seeks). Only a form's own rows carry them ('*' and '' rows keep 0: form stats are the only
-- reader, and a contact of no form belongs to no form's stats). Inserts are recorded per batch
-- (src/db/derived-counts.ts recordFormRows); deletes (direct, or cascades from form and account
-- deletes) and changes of account, form or createdAt are kept by the triggers below.
ALTER TABLE `message_rollups` ADD `submissions` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE `message_rollups` ADD `new_contacts` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
INSERT INTO message_rollups (account_id, form_id, level, bucket, reason, submissions, new_contacts)
  SELECT account_id, form_id, 2, q, '', SUM(s), SUM(c) FROM (
    SELECT account_id, form_id, substr(submissions.created_at, 1, 14) || printf('%02d', CAST(substr(submissions.created_at, 15, 2) AS INTEGER) / 15 * 15) AS q, 1 AS s, 0 AS c FROM submissions
    UNION ALL SELECT account_id, form_id, substr(contacts.created_at, 1, 14) || printf('%02d', CAST(substr(contacts.created_at, 15, 2) AS INTEGER) / 15 * 15), 0, 1 FROM contacts WHERE form_id IS NOT NULL)
  WHERE true GROUP BY 1, 2, 4
  ON CONFLICT (account_id, form_id, level, bucket, reason) DO UPDATE SET submissions = excluded.submissions, new_contacts = excluded.new_contacts;
--> statement-breakpoint
INSERT INTO message_rollups (account_id, form_id, level, bucket, reason, submissions, new_contacts)
  SELECT account_id, form_id, 1, substr(bucket, 1, 13), '', SUM(submissions), SUM(new_contacts) FROM message_rollups
  WHERE level = 2 AND (submissions <> 0 OR new_contacts <> 0) GROUP BY 1, 2, 4
  ON CONFLICT (account_id, form_id, level, bucket, reason) DO UPDATE SET submissions = excluded.submissions, new_contacts = excluded.new_contacts;
--> statement-breakpoint
INSERT INTO message_rollups (account_id, form_id, level, bucket, reason, submissions, new_contacts)
  SELECT account_id, form_id, 0, substr(bucket, 1, 10), '', SUM(submissions), SUM(new_contacts) FROM message_rollups
  WHERE level = 1 AND (submissions <> 0 OR new_contacts <> 0) GROUP BY 1, 2, 4
  ON CONFLICT (account_id, form_id, level, bucket, reason) DO UPDATE SET submissions = excluded.submissions, new_contacts = excluded.new_contacts;
--> statement-breakpoint
CREATE TRIGGER submissions_rollup_delete AFTER DELETE ON submissions BEGIN
  INSERT INTO message_rollups (account_id, form_id, level, bucket, reason, submissions) VALUES
    (OLD.account_id, OLD.form_id, 0, substr(OLD.created_at, 1, 10), '', -1),
    (OLD.account_id, OLD.form_id, 1, substr(OLD.created_at, 1, 13), '', -1),
    (OLD.account_id, OLD.form_id, 2, substr(OLD.created_at, 1, 14) || printf('%02d', CAST(substr(OLD.created_at, 15, 2) AS INTEGER) / 15 * 15), '', -1)
  ON CONFLICT (account_id, form_id, level, bucket, reason) DO UPDATE SET submissions = submissions + excluded.submissions;
END;
--> statement-breakpoint
CREATE TRIGGER submissions_rollup_rekey AFTER UPDATE OF account_id, form_id, created_at ON submissions
  WHEN NOT (OLD.account_id = NEW.account_id AND OLD.form_id = NEW.form_id AND OLD.created_at = NEW.created_at) BEGIN
  INSERT INTO message_rollups (account_id, form_id, level, bucket, reason, submissions) VALUES
    (OLD.account_id, OLD.form_id, 0, substr(OLD.created_at, 1, 10), '', -1),
    (OLD.account_id, OLD.form_id, 1, substr(OLD.created_at, 1, 13), '', -1),
    (OLD.account_id, OLD.form_id, 2, substr(OLD.created_at, 1, 14) || printf('%02d', CAST(substr(OLD.created_at, 15, 2) AS INTEGER) / 15 * 15), '', -1)
  ON CONFLICT (account_id, form_id, level, bucket, reason) DO UPDATE SET submissions = submissions + excluded.submissions;
  INSERT INTO message_rollups (account_id, form_id, level, bucket, reason, submissions) VALUES
    (NEW.account_id, NEW.form_id, 0, substr(NEW.created_at, 1, 10), '', 1),
    (NEW.account_id, NEW.form_id, 1, substr(NEW.created_at, 1, 13), '', 1),
    (NEW.account_id, NEW.form_id, 2, substr(NEW.created_at, 1, 14) || printf('%02d', CAST(substr(NEW.created_at, 15, 2) AS INTEGER) / 15 * 15), '', 1)
  ON CONFLICT (account_id, form_id, level, bucket, reason) DO UPDATE SET submissions = submissions + excluded.submissions;
END;
--> statement-breakpoint
CREATE TRIGGER contacts_rollup_delete AFTER DELETE ON contacts WHEN OLD.form_id IS NOT NULL BEGIN
  INSERT INTO message_rollups (account_id, form_id, level, bucket, reason, new_contacts) VALUES
    (OLD.account_id, OLD.form_id, 0, substr(OLD.created_at, 1, 10), '', -1),
    (OLD.account_id, OLD.form_id, 1, substr(OLD.created_at, 1, 13), '', -1),
    (OLD.account_id, OLD.form_id, 2, substr(OLD.created_at, 1, 14) || printf('%02d', CAST(substr(OLD.created_at, 15, 2) AS INTEGER) / 15 * 15), '', -1)
  ON CONFLICT (account_id, form_id, level, bucket, reason) DO UPDATE SET new_contacts = new_contacts + excluded.new_contacts;
END;
--> statement-breakpoint
CREATE TRIGGER contacts_rollup_rekey AFTER UPDATE OF account_id, form_id, created_at ON contacts
  WHEN NOT (OLD.account_id = NEW.account_id AND OLD.form_id IS NEW.form_id AND OLD.created_at = NEW.created_at) BEGIN
  INSERT INTO message_rollups (account_id, form_id, level, bucket, reason, new_contacts) SELECT * FROM (VALUES
    (OLD.account_id, OLD.form_id, 0, substr(OLD.created_at, 1, 10), '', -1),
    (OLD.account_id, OLD.form_id, 1, substr(OLD.created_at, 1, 13), '', -1),
    (OLD.account_id, OLD.form_id, 2, substr(OLD.created_at, 1, 14) || printf('%02d', CAST(substr(OLD.created_at, 15, 2) AS INTEGER) / 15 * 15), '', -1)) WHERE OLD.form_id IS NOT NULL
  ON CONFLICT (account_id, form_id, level, bucket, reason) DO UPDATE SET new_contacts = new_contacts + excluded.new_contacts;
  INSERT INTO message_rollups (account_id, form_id, level, bucket, reason, new_contacts) SELECT * FROM (VALUES
    (NEW.account_id, NEW.form_id, 0, substr(NEW.created_at, 1, 10), '', 1),
    (NEW.account_id, NEW.form_id, 1, substr(NEW.created_at, 1, 13), '', 1),
    (NEW.account_id, NEW.form_id, 2, substr(NEW.created_at, 1, 14) || printf('%02d', CAST(substr(NEW.created_at, 15, 2) AS INTEGER) / 15 * 15), '', 1)) WHERE NEW.form_id IS NOT NULL
  ON CONFLICT (account_id, form_id, level, bucket, reason) DO UPDATE SET new_contacts = new_contacts + excluded.new_contacts;
END;
