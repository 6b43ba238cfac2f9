-- Automations (docs/api-decisions.md, "Automations"): timed texts after a form's submission that
-- stop by themselves. A run is one contact going through one automation; each of its steps is one
-- row of automation_run_steps, keyed (run, step), holding the step's queued message: the key and
-- the unique message id make "one message per (run, step)" a rule of the schema, and the rows are
-- written in the transaction that writes the messages.
CREATE TABLE `automations` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL REFERENCES `accounts`(`id`) ON DELETE cascade,
	`form_id` text NOT NULL REFERENCES `forms`(`id`) ON DELETE cascade,
	`name` text NOT NULL,
	`is_active` integer DEFAULT 1 NOT NULL,
	`steps` text NOT NULL,
	`stop_on_reply` integer DEFAULT 1 NOT NULL,
	`stop_on_status` text DEFAULT '[]' NOT NULL,
	`restart_on_resubmit` integer DEFAULT 0 NOT NULL,
	`deleted_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `automations_account_created_idx` ON `automations` (`account_id`,`created_at`);
--> statement-breakpoint
CREATE INDEX `automations_form_live_idx` ON `automations` (`form_id`) WHERE `is_active` = 1 AND `deleted_at` IS NULL;
--> statement-breakpoint
CREATE TABLE `automation_runs` (
	`id` text PRIMARY KEY NOT NULL,
	`automation_id` text NOT NULL REFERENCES `automations`(`id`) ON DELETE cascade,
	`account_id` text NOT NULL,
	`contact_id` text NOT NULL,
	`submission_id` text,
	`status` text NOT NULL,
	`stop_reason` text,
	`started_at` text NOT NULL,
	`ends_at` text NOT NULL,
	`finished_at` text
);
--> statement-breakpoint
-- One active run per (automation, contact): a start that finds one skips, a restart stops it first.
CREATE UNIQUE INDEX `automation_runs_one_active_idx` ON `automation_runs` (`automation_id`,`contact_id`) WHERE `status` = 'active';
--> statement-breakpoint
CREATE UNIQUE INDEX `automation_runs_submission_idx` ON `automation_runs` (`automation_id`,`submission_id`) WHERE `submission_id` IS NOT NULL;
--> statement-breakpoint
CREATE INDEX `automation_runs_list_idx` ON `automation_runs` (`automation_id`,`status`,`started_at`);
--> statement-breakpoint
CREATE INDEX `automation_runs_contact_idx` ON `automation_runs` (`contact_id`,`started_at`);
--> statement-breakpoint
CREATE INDEX `automation_runs_due_idx` ON `automation_runs` (`ends_at`) WHERE `status` = 'active';
--> statement-breakpoint
CREATE INDEX `automation_runs_stopping_idx` ON `automation_runs` (`account_id`) WHERE `status` = 'active' AND `stop_reason` IS NOT NULL;
--> statement-breakpoint
CREATE TABLE `automation_run_steps` (
	`run_id` text NOT NULL REFERENCES `automation_runs`(`id`) ON DELETE cascade,
	`step_index` integer NOT NULL,
	`scheduled_for` text,
	`message_id` text,
	`skipped` text,
	PRIMARY KEY(`run_id`, `step_index`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE UNIQUE INDEX `automation_run_steps_message_idx` ON `automation_run_steps` (`message_id`) WHERE `message_id` IS NOT NULL;
--> statement-breakpoint
-- Submissions waiting to start runs: written by a trigger in the applier's own transaction, so an
-- applied submission of a form with a live automation is never missed, whichever connection
-- applied it; the automations service deletes each row in the transaction that starts its run.
CREATE TABLE `automation_inbox` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`automation_id` text NOT NULL,
	`submission_id` text NOT NULL,
	`contact_id` text NOT NULL,
	`account_id` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE TRIGGER `automation_inbox_on_submission` AFTER INSERT ON `submissions` BEGIN
  INSERT INTO `automation_inbox` (`automation_id`, `submission_id`, `contact_id`, `account_id`, `created_at`)
    SELECT a.`id`, NEW.`id`, NEW.`contact_id`, NEW.`account_id`, NEW.`created_at` FROM `automations` a
    WHERE a.`form_id` = NEW.`form_id` AND a.`is_active` = 1 AND a.`deleted_at` IS NULL;
END;
--> statement-breakpoint
-- Stopping: the cause (a reply, an opt-out, a status, a deleted contact) marks the contact's active
-- runs in its own transaction, whichever code path made it; the service then cancels the marked
-- runs' unsent steps. A crash in between leaves the mark, and boot finishes the stop. An opt-out
-- outranks a reply, a reply a status (an answer also moves the contact to "responded").
CREATE TRIGGER `automation_stop_on_reply` AFTER INSERT ON `inbound_messages` BEGIN
  UPDATE `automation_runs` SET `stop_reason` = 'replied'
    WHERE `contact_id` = NEW.`contact_id` AND `status` = 'active' AND (`stop_reason` IS NULL OR `stop_reason` = 'status')
      AND `automation_id` IN (SELECT `id` FROM `automations` WHERE `stop_on_reply` = 1);
END;
--> statement-breakpoint
CREATE TRIGGER `automation_stop_on_opt_out` AFTER UPDATE OF `opted_out` ON `contacts` WHEN NEW.`opted_out` = 1 AND OLD.`opted_out` = 0 BEGIN
  UPDATE `automation_runs` SET `stop_reason` = 'opted-out' WHERE `contact_id` = NEW.`id` AND `status` = 'active';
END;
--> statement-breakpoint
CREATE TRIGGER `automation_stop_on_status` AFTER UPDATE OF `status` ON `contacts` WHEN NEW.`status` IS NOT OLD.`status` BEGIN
  UPDATE `automation_runs` SET `stop_reason` = 'status'
    WHERE `contact_id` = NEW.`id` AND `status` = 'active' AND `stop_reason` IS NULL
      AND `automation_id` IN (SELECT a.`id` FROM `automations` a, json_each(a.`stop_on_status`) s WHERE s.`value` = NEW.`status`);
END;
--> statement-breakpoint
CREATE TRIGGER `automation_stop_on_contact_delete` AFTER DELETE ON `contacts` BEGIN
  UPDATE `automation_runs` SET `stop_reason` = 'contact-deleted' WHERE `contact_id` = OLD.`id` AND `status` = 'active';
END;
--> statement-breakpoint
-- POST /v1/automations/<id>/start: runs for a segment of existing contacts, a chunk per
-- transaction; `cursor` (the last contact id done) moves in the chunk's transaction, so a restart
-- carries on after the last committed chunk.
CREATE TABLE `automation_starts` (
	`id` text PRIMARY KEY NOT NULL,
	`automation_id` text NOT NULL REFERENCES `automations`(`id`) ON DELETE cascade,
	`account_id` text NOT NULL,
	`segment` text NOT NULL,
	`last_contact_id` text NOT NULL,
	`cursor` text DEFAULT '' NOT NULL,
	`status` text NOT NULL,
	`started` integer DEFAULT 0 NOT NULL,
	`skipped` text DEFAULT '{}' NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `automation_starts_running_idx` ON `automation_starts` (`status`) WHERE `status` = 'running';
