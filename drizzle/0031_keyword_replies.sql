-- Keyword replies (docs/api-decisions.md, "Keyword replies"): an owner's automatic answer to a
-- text that is one of its keywords ("HOURS"), with tags and a status given to the contact.
-- keywords and add_tags are JSON arrays of strings; keywords are stored normalised (upper-case,
-- single spaces), so matching is a list lookup. Whether a contact was answered in the last hour
-- is read from its messages (metadata.keywordReplyId), not kept here.
CREATE TABLE `keyword_replies` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`keywords` text NOT NULL,
	`reply` text NOT NULL,
	`add_tags` text DEFAULT '[]' NOT NULL,
	`set_status` text,
	`is_active` integer DEFAULT true NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);--> statement-breakpoint
CREATE INDEX `keyword_replies_account_created_idx` ON `keyword_replies` (`account_id`,`created_at`);
