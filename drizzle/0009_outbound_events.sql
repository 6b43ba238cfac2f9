CREATE TABLE `webhook_endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`url` text NOT NULL,
	`events` text NOT NULL,
	`description` text,
	`is_active` integer DEFAULT 1 NOT NULL,
	`allow_insecure` integer DEFAULT 0 NOT NULL,
	`secret` text NOT NULL,
	`previous_secret` text,
	`previous_secret_expires_at` text,
	`failing_since` text,
	`disabled_at` text,
	`disabled_reason` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_endpoints_account_idx` ON `webhook_endpoints` (`account_id`);
--> statement-breakpoint
CREATE TABLE `events` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`account_id` text NOT NULL,
	`type` text NOT NULL,
	`payload` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `events_id_idx` ON `events` (`id`);
--> statement-breakpoint
CREATE TABLE `event_deliveries` (
	`id` integer PRIMARY KEY NOT NULL,
	`event_id` text NOT NULL,
	`endpoint_id` text NOT NULL,
	`account_id` text NOT NULL,
	`event_type` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` text,
	`last_attempt_at` text,
	`last_status_code` integer,
	`last_response_body` text,
	`last_error` text,
	`delivered_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`event_id`) REFERENCES `events`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`endpoint_id`) REFERENCES `webhook_endpoints`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `event_deliveries_event_endpoint_idx` ON `event_deliveries` (`event_id`, `endpoint_id`);
--> statement-breakpoint
CREATE INDEX `event_deliveries_endpoint_idx` ON `event_deliveries` (`endpoint_id`);
--> statement-breakpoint
CREATE INDEX `event_deliveries_due_idx` ON `event_deliveries` (`endpoint_id`, `next_attempt_at`) WHERE `status` = 'pending';
--> statement-breakpoint
CREATE TABLE `event_fanout` (
	`id` integer PRIMARY KEY NOT NULL,
	`done_seq` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `event_fanout` (`id`, `done_seq`) VALUES (1, 0);
