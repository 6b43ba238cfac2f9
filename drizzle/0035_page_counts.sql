-- Pages with years of data (docs/api-decisions.md, "Pages with years of data"): two counts the
-- dashboard asks on every visit read an index alone instead of the rows.
--
-- The Forms page's contacts and converted contacts per form: (form_id, status) answers
-- count(*) and sum(status = 'converted') per form from the index (the rows' status is not in
-- contacts_form_created_idx, so every contact of every form was read: ~0.3 s at 100,000 contacts
-- on two cores, more under load).
CREATE INDEX `contacts_form_status_idx` ON `contacts` (`form_id`, `status`);
--> statement-breakpoint
-- The Conversations page's unread total: only the conversations with something unread, per
-- account (it scanned the whole table, every account's conversations).
CREATE INDEX `conversations_account_unread_idx` ON `conversations` (`account_id`, `unread_count`) WHERE `unread_count` > 0;
