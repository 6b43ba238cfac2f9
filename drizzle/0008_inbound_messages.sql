CREATE TABLE `inbound_messages` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`contact_id` text NOT NULL,
	`from_phone` text NOT NULL,
	`body` text NOT NULL,
	`received_at` text NOT NULL,
	`device_id` text,
	`external_id` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`contact_id`) REFERENCES `contacts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `inbound_account_created_idx` ON `inbound_messages` (`account_id`,`created_at`);
--> statement-breakpoint
CREATE INDEX `inbound_contact_received_idx` ON `inbound_messages` (`contact_id`,`received_at`);
--> statement-breakpoint
CREATE UNIQUE INDEX `inbound_external_idx` ON `inbound_messages` (`account_id`,ifnull(`device_id`, ''),`external_id`) WHERE `external_id` IS NOT NULL;
