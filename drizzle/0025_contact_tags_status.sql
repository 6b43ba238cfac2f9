-- Issue 15 item 6: a tag filter with a status, counted cold at 100k contacts.
--
-- contact_tags carries its contact's status, and an index (account, status, tag) — its entries
-- end in the contact rowid — makes "these tags with this status" one range per tag, in rowid
-- order: counted from contact_tags alone (one tag: a range count; several: their ranges merged)
-- instead of walking the status index (a quarter of the account) against a set built from the
-- whole tag lists (~20 ms at 100k contacts, warm or cold). The status is not put in the primary
-- key: the key (account, tag, contact rowid) stays what every other tag plan reads — a contact's
-- tag in one seek without knowing its status, a tag's contacts in one rowid-ordered run. The
-- index puts the status before the tag so that a query without a status cannot use it for
-- (account, tag) and keeps reading the key (with the tag first, SQLite took the index for
-- tag-only lists too, whose rowids then come out of order, one run per status).
--
-- Derived from contacts.status like the rest of the row from contacts.tags, and kept the same
-- way: every writer of a status (API, import, sends, replies, the applier) writes the column, and
-- the triggers below follow it. `textwire doctor` checks and rebuilds the column with the rows.
-- The table is rebuilt (not ALTER TABLE ADD COLUMN): the status has no default to give.
DROP TRIGGER IF EXISTS `contacts_tags_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `contacts_tags_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `contacts_tags_delete`;
--> statement-breakpoint
CREATE TABLE `__new_contact_tags` (
	`account_id` text NOT NULL,
	`tag` text NOT NULL,
	`contact_rowid` integer NOT NULL,
	`status` text NOT NULL,
	PRIMARY KEY(`account_id`, `tag`, `contact_rowid`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_contact_tags` (`account_id`, `tag`, `contact_rowid`, `status`)
  SELECT t.`account_id`, t.`tag`, t.`contact_rowid`, c.`status` FROM `contact_tags` t JOIN `contacts` c ON c.rowid = t.`contact_rowid`;
--> statement-breakpoint
DROP TABLE `contact_tags`;
--> statement-breakpoint
ALTER TABLE `__new_contact_tags` RENAME TO `contact_tags`;
--> statement-breakpoint
CREATE INDEX `contact_tags_status_idx` ON `contact_tags` (`account_id`, `status`, `tag`);
--> statement-breakpoint
CREATE TRIGGER `contacts_tags_insert` AFTER INSERT ON `contacts` WHEN NEW.`tags` <> '[]' BEGIN
  INSERT OR IGNORE INTO `contact_tags` (`account_id`, `tag`, `contact_rowid`, `status`) SELECT NEW.`account_id`, `value`, NEW.rowid, NEW.`status` FROM json_each(NEW.`tags`);
END;
--> statement-breakpoint
CREATE TRIGGER `contacts_tags_update` AFTER UPDATE OF `tags` ON `contacts` WHEN OLD.`tags` IS NOT NEW.`tags` BEGIN
  DELETE FROM `contact_tags` WHERE `account_id` = OLD.`account_id` AND `contact_rowid` = OLD.rowid AND `tag` IN (SELECT `value` FROM json_each(OLD.`tags`));
  INSERT OR IGNORE INTO `contact_tags` (`account_id`, `tag`, `contact_rowid`, `status`) SELECT NEW.`account_id`, `value`, NEW.rowid, NEW.`status` FROM json_each(NEW.`tags`);
END;
--> statement-breakpoint
-- Whichever of the two update triggers runs first, the rows end as NEW's tags with NEW's status.
CREATE TRIGGER `contacts_tags_status` AFTER UPDATE OF `status` ON `contacts` WHEN OLD.`status` IS NOT NEW.`status` AND NEW.`tags` <> '[]' BEGIN
  UPDATE `contact_tags` SET `status` = NEW.`status` WHERE `account_id` = NEW.`account_id` AND `contact_rowid` = NEW.rowid AND `tag` IN (SELECT `value` FROM json_each(NEW.`tags`));
END;
--> statement-breakpoint
CREATE TRIGGER `contacts_tags_delete` AFTER DELETE ON `contacts` WHEN OLD.`tags` <> '[]' BEGIN
  DELETE FROM `contact_tags` WHERE `account_id` = OLD.`account_id` AND `contact_rowid` = OLD.rowid AND `tag` IN (SELECT `value` FROM json_each(OLD.`tags`));
END;
