-- A contact's consent history (docs/api-decisions.md, "Contact care"): every change of its
-- opt-out, whoever made it — a STOP or START text, the owner by hand (with a reason and who they
-- are), an import or an API call. Deleting the contact deletes its history.
CREATE TABLE `consent_history` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` text NOT NULL,
	`contact_id` text NOT NULL,
	`action` text NOT NULL,
	`source` text NOT NULL,
	`reason` text,
	`actor` text,
	`at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`contact_id`) REFERENCES `contacts`(`id`) ON UPDATE no action ON DELETE cascade
);--> statement-breakpoint
CREATE INDEX `consent_history_contact_idx` ON `consent_history` (`contact_id`,`id`);
