CREATE TABLE `accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`plan` text DEFAULT 'standard' NOT NULL,
	`api_limit_per_hour` integer,
	`api_burst_per_minute` integer,
	`monthly_quota` integer,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`key_hash` text NOT NULL,
	`last4` text NOT NULL,
	`permission` text NOT NULL,
	`created_at` text NOT NULL,
	`last_used_at` text,
	`revoked_at` text,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash_idx` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_account_idx` ON `api_keys` (`account_id`);--> statement-breakpoint
CREATE TABLE `forms` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`description` text,
	`message_template` text NOT NULL,
	`is_active` integer DEFAULT true NOT NULL,
	`fields` text NOT NULL,
	`settings` text DEFAULT '{}' NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `forms_account_name_idx` ON `forms` (`account_id`,`name_key`);--> statement-breakpoint
CREATE INDEX `forms_account_created_idx` ON `forms` (`account_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`form_id` text NOT NULL,
	`key` text NOT NULL,
	`status` integer NOT NULL,
	`body` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`form_id`, `key`),
	FOREIGN KEY (`form_id`) REFERENCES `forms`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `idempotency_created_idx` ON `idempotency_keys` (`created_at`);--> statement-breakpoint
CREATE TABLE `submissions` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`form_id` text NOT NULL,
	`contact_id` text NOT NULL,
	`message_id` text NOT NULL,
	`new_contact` integer NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`form_id`) REFERENCES `forms`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `submissions_form_created_idx` ON `submissions` (`form_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `submissions_account_created_idx` ON `submissions` (`account_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `contact_tags` (
	`contact_id` text NOT NULL,
	`account_id` text NOT NULL,
	`tag` text NOT NULL,
	PRIMARY KEY(`contact_id`, `tag`),
	FOREIGN KEY (`contact_id`) REFERENCES `contacts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `contact_tags_account_tag_idx` ON `contact_tags` (`account_id`,`tag`);--> statement-breakpoint
CREATE TABLE `contacts` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`phone_number` text NOT NULL,
	`first_name` text,
	`last_name` text,
	`email` text,
	`status` text DEFAULT 'new' NOT NULL,
	`form_id` text,
	`custom_fields` text DEFAULT '{}' NOT NULL,
	`tags` text DEFAULT '[]' NOT NULL,
	`last_contacted_at` text,
	`last_response_at` text,
	`message_count` integer DEFAULT 0 NOT NULL,
	`source` text,
	`notes` text,
	`search_text` text DEFAULT '' NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`form_id`) REFERENCES `forms`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `contacts_account_phone_idx` ON `contacts` (`account_id`,`phone_number`);--> statement-breakpoint
CREATE INDEX `contacts_account_created_idx` ON `contacts` (`account_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `contacts_account_status_created_idx` ON `contacts` (`account_id`,`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `contacts_account_updated_idx` ON `contacts` (`account_id`,`updated_at`);--> statement-breakpoint
CREATE INDEX `contacts_account_first_idx` ON `contacts` (`account_id`,`first_name`);--> statement-breakpoint
CREATE INDEX `contacts_account_last_idx` ON `contacts` (`account_id`,`last_name`);--> statement-breakpoint
CREATE INDEX `contacts_form_created_idx` ON `contacts` (`form_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `messages` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`form_id` text,
	`form_name` text,
	`contact_id` text,
	`content` text NOT NULL,
	`recipient_phone` text NOT NULL,
	`recipient_name` text,
	`status` text DEFAULT 'queued' NOT NULL,
	`priority` text DEFAULT 'normal' NOT NULL,
	`priority_rank` integer DEFAULT 2 NOT NULL,
	`webhook_data` text,
	`template_used` text,
	`scheduled_for` text NOT NULL,
	`sent_at` text,
	`failure_reason` text,
	`retry_count` integer DEFAULT 0 NOT NULL,
	`metadata` text DEFAULT '{}' NOT NULL,
	`seq` integer NOT NULL,
	`lease_token` text,
	`lease_expires_at` text,
	`lease_device_id` text,
	`lease_expiries` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`form_id`) REFERENCES `forms`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`contact_id`) REFERENCES `contacts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `messages_account_created_idx` ON `messages` (`account_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `messages_account_status_created_idx` ON `messages` (`account_id`,`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `messages_account_priority_idx` ON `messages` (`account_id`,`priority_rank`,`created_at`);--> statement-breakpoint
CREATE INDEX `messages_account_scheduled_idx` ON `messages` (`account_id`,`scheduled_for`);--> statement-breakpoint
CREATE INDEX `messages_account_sent_idx` ON `messages` (`account_id`,`sent_at`);--> statement-breakpoint
CREATE INDEX `messages_form_created_idx` ON `messages` (`form_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `messages_form_scheduled_idx` ON `messages` (`form_id`,`scheduled_for`);--> statement-breakpoint
CREATE INDEX `messages_contact_created_idx` ON `messages` (`contact_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `messages_status_lease_idx` ON `messages` (`status`,`lease_expires_at`);