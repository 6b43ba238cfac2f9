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
