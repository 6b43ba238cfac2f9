-- Issue 15 item 3: the webhook's append-only intake. A request commits one row here (plus its
-- idempotency row) before its 200; the applier (a Worker) turns rows into contacts, messages,
-- submissions and events in large batches, and moves intake_applied.seq in the same transaction.
CREATE TABLE `submission_intake` (
	`seq` integer PRIMARY KEY NOT NULL,
	`entry` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `intake_applied` (
	`id` integer PRIMARY KEY NOT NULL CHECK (`id` = 1),
	`seq` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `intake_applied` (`id`, `seq`) VALUES (1, 0);
--> statement-breakpoint
-- The webhook's form cache (src/db/webhook-form-cache.ts) is dropped when this moves, not on every
-- other connection's commit (the applier commits all the time and changes no form or account).
CREATE TABLE `webhook_forms_version` (
	`id` integer PRIMARY KEY NOT NULL CHECK (`id` = 1),
	`v` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `webhook_forms_version` (`id`, `v`) VALUES (1, 0);
--> statement-breakpoint
CREATE TRIGGER `webhook_forms_version_form_update` AFTER UPDATE ON `forms` BEGIN
  UPDATE `webhook_forms_version` SET `v` = `v` + 1 WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `webhook_forms_version_form_delete` AFTER DELETE ON `forms` BEGIN
  UPDATE `webhook_forms_version` SET `v` = `v` + 1 WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `webhook_forms_version_account_update` AFTER UPDATE ON `accounts` BEGIN
  UPDATE `webhook_forms_version` SET `v` = `v` + 1 WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `webhook_forms_version_account_delete` AFTER DELETE ON `accounts` BEGIN
  UPDATE `webhook_forms_version` SET `v` = `v` + 1 WHERE `id` = 1;
END;
