-- Every accepted submission keeps what the visitor sent (docs/api-decisions.md, "The owner hears
-- back: every request kept and listed"). `form_values`: one compact JSON object of the posted
-- values by field name (labels are the form's, read at answer time, never stored per row);
-- `suppressed`: why no text was queued (opted-out, no-consent, recipient-limit) or null;
-- `read_at`: when someone on the team opened it in the inbox. One index only: a contact's
-- submissions (the timeline, and deleting a contact deletes what they sent); the account's list
-- walks the primary key (time-ordered UUIDv7 ids), so it needs none.
ALTER TABLE `submissions` ADD `form_values` text;
--> statement-breakpoint
ALTER TABLE `submissions` ADD `suppressed` text;
--> statement-breakpoint
ALTER TABLE `submissions` ADD `read_at` text;
--> statement-breakpoint
CREATE INDEX `submissions_contact_idx` ON `submissions` (`contact_id`);
