-- SMSGate's third-party API (docs/api-decisions.md, "SMSGate third-party API").
-- A message as an SMSGate client sent it: the client's id (unique per account) and the options
-- that apply to all its recipients. Each recipient is one Textwire message (smsgate_recipients).
CREATE TABLE `smsgate_messages` (
	`account_id` text NOT NULL,
	`id` text NOT NULL,
	`device_id` text,
	`sim_number` integer,
	`with_delivery_report` integer DEFAULT 1 NOT NULL,
	`valid_until` text,
	-- 1 while valid_until has not been judged yet: the expiry sweep reads only these rows.
	`expiry_pending` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`account_id`, `id`),
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `smsgate_messages_created_idx` ON `smsgate_messages` (`account_id`,`created_at`);
--> statement-breakpoint
CREATE INDEX `smsgate_messages_expiry_idx` ON `smsgate_messages` (`valid_until`) WHERE `expiry_pending` = 1;
--> statement-breakpoint
-- One row per phone number of an SMSGate message, in the order given: its Textwire message, or
-- none when a rule refused the number (error says which: opted-out, recipient-limit).
CREATE TABLE `smsgate_recipients` (
	`account_id` text NOT NULL,
	`smsgate_id` text NOT NULL,
	`position` integer NOT NULL,
	`phone_number` text NOT NULL,
	`message_id` text,
	`error` text,
	`processed_at` text,
	PRIMARY KEY(`account_id`, `smsgate_id`, `position`),
	FOREIGN KEY (`account_id`,`smsgate_id`) REFERENCES `smsgate_messages`(`account_id`,`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`message_id`) REFERENCES `messages`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `smsgate_recipients_message_idx` ON `smsgate_recipients` (`message_id`);
--> statement-breakpoint
-- Per account: the key that signs SMSGate-format webhooks (X-Signature; needed in clear to sign,
-- like an endpoint's secret), and the rules for its texts that no form carries: quiet hours and
-- the per-recipient daily limit (null = off).
CREATE TABLE `smsgate_clients` (
	`account_id` text PRIMARY KEY NOT NULL,
	`signing_key` text NOT NULL,
	`quiet_hours` text,
	`recipient_limit_per_day` integer,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
-- Outbound endpoints registered through SMSGate's /webhooks: their body and signature are
-- SMSGate's, their id the client's, and an optional device filter.
ALTER TABLE `webhook_endpoints` ADD `format` text DEFAULT 'textwire' NOT NULL;
--> statement-breakpoint
ALTER TABLE `webhook_endpoints` ADD `external_id` text;
--> statement-breakpoint
ALTER TABLE `webhook_endpoints` ADD `device_id` text;
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_endpoints_external_idx` ON `webhook_endpoints` (`account_id`,`external_id`) WHERE `external_id` IS NOT NULL;
