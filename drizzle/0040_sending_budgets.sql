-- Sending budgets (docs/phones.md, "How fast a phone sends"; docs/api-decisions.md, "Texts that
-- actually go out"). Every table here is written when a text is handed to a phone, never by a
-- submission: the webhook's write cost is unchanged.
-- One row per text handed to a phone, with the SIM slot chosen (0 = the phone's own choice) and
-- its parts: the rolling windows are derived from these rows at boot, written in the lease's own
-- transaction, so a crash never loses or doubles a count. No index: read whole at boot (the last
-- 30 days), pruned by time.
CREATE TABLE `send_handouts` (
	`device_id` text NOT NULL,
	`slot` integer NOT NULL,
	`at` integer NOT NULL,
	`parts` integer NOT NULL,
	`recipient` text NOT NULL
);
--> statement-breakpoint
-- A phone's or SIM's pause after a failure it reported (slot -1 = the whole phone).
CREATE TABLE `send_pauses` (
	`device_id` text NOT NULL,
	`slot` integer NOT NULL,
	`until` integer NOT NULL,
	`reason` text NOT NULL,
	`failures` integer NOT NULL,
	`since` integer NOT NULL,
	PRIMARY KEY(`device_id`, `slot`)
) WITHOUT ROWID;
--> statement-breakpoint
-- The phone and SIM each number last exchanged texts with (sent or received): its next text goes
-- out from the same one, so the customer's replies stay in one thread.
CREATE TABLE `contact_senders` (
	`account_id` text NOT NULL,
	`phone` text NOT NULL,
	`device_id` text NOT NULL,
	`slot` integer NOT NULL,
	`at` integer NOT NULL,
	PRIMARY KEY(`account_id`, `phone`)
) WITHOUT ROWID;
--> statement-breakpoint
-- A phone's own limits and its SIMs' ({limits, sims: [{slot, limits}]}, JSON; null = the account's).
ALTER TABLE `devices` ADD `sending_limits` text;
--> statement-breakpoint
-- A contact's own IANA time zone (null = the form's).
ALTER TABLE `contacts` ADD `time_zone` text;
