CREATE TABLE `devices` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`kind` text NOT NULL,
	`external_id` text,
	`name` text NOT NULL,
	`token_hash` text,
	`signing_key` text,
	`push_token` text,
	`sim_cards` text DEFAULT '[]' NOT NULL,
	`app_version` text,
	`last_seen_at` text,
	`last_ip` text,
	`battery` integer,
	`send_rate_per_minute` integer,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `devices_token_idx` ON `devices` (`token_hash`);
--> statement-breakpoint
CREATE UNIQUE INDEX `devices_account_external_idx` ON `devices` (`account_id`, `external_id`);
--> statement-breakpoint
CREATE TABLE `device_registration_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`token_hash` text NOT NULL,
	`reusable` integer NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `device_registration_tokens_hash_idx` ON `device_registration_tokens` (`token_hash`);
--> statement-breakpoint
CREATE TABLE `device_daily_counts` (
	`device_id` text NOT NULL,
	`day` text NOT NULL,
	`sent` integer DEFAULT 0 NOT NULL,
	`failed` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`device_id`, `day`),
	FOREIGN KEY (`device_id`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `device_webhook_events` (
	`device_id` text NOT NULL,
	`event_id` text NOT NULL,
	`received_at` text NOT NULL,
	PRIMARY KEY(`device_id`, `event_id`),
	FOREIGN KEY (`device_id`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `accounts` ADD `time_zone` text;
