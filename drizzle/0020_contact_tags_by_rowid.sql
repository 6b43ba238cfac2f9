-- Issue 15 item 6: tag filters at 100k contacts, and the import's cost per tag.
--
-- contact_tags keyed on the contact's rowid, one WITHOUT ROWID b-tree (account, tag, contact
-- rowid): a tag's contacts are read in rowid order straight from it, and a list of rowids joins
-- contacts (and the status index, whose entries end in the rowid) with no lookup through the
-- text id index; a contact's tag is one seek (account, tag, rowid). A new contact's entries
-- append at the right edge of each tag's range (rowids grow) instead of landing at random
-- places of two indexes keyed on a random text id.
--
-- The rows are derived from contacts.tags and kept by the triggers below (every writer of tags —
-- API, import, webhook applier — writes only contacts.tags; `textwire doctor` checks and
-- rebuilds them like the search index). A rowid is not a declared column, so no foreign key can
-- name it: the delete trigger stands in for ON DELETE CASCADE (it also runs for contacts removed
-- by a cascade, as the search index's does). Like contacts_fts, these rows rely on contacts'
-- rowids staying put: VACUUM INTO (backups) keeps them; a migration that rebuilds `contacts`
-- must rebuild this table and the search index.
CREATE TABLE `__new_contact_tags` (
	`account_id` text NOT NULL,
	`tag` text NOT NULL,
	`contact_rowid` integer NOT NULL,
	PRIMARY KEY(`account_id`, `tag`, `contact_rowid`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT OR IGNORE INTO `__new_contact_tags` (`account_id`, `tag`, `contact_rowid`)
  SELECT c.`account_id`, j.`value`, c.`rowid` FROM `contacts` c, json_each(c.`tags`) j WHERE c.`tags` <> '[]' AND json_valid(c.`tags`);
--> statement-breakpoint
DROP TABLE `contact_tags`;
--> statement-breakpoint
ALTER TABLE `__new_contact_tags` RENAME TO `contact_tags`;
--> statement-breakpoint
CREATE TRIGGER `contacts_tags_insert` AFTER INSERT ON `contacts` WHEN NEW.`tags` <> '[]' BEGIN
  INSERT OR IGNORE INTO `contact_tags` (`account_id`, `tag`, `contact_rowid`) SELECT NEW.`account_id`, `value`, NEW.rowid FROM json_each(NEW.`tags`);
END;
--> statement-breakpoint
CREATE TRIGGER `contacts_tags_update` AFTER UPDATE OF `tags` ON `contacts` WHEN OLD.`tags` IS NOT NEW.`tags` BEGIN
  DELETE FROM `contact_tags` WHERE `account_id` = OLD.`account_id` AND `contact_rowid` = OLD.rowid AND `tag` IN (SELECT `value` FROM json_each(OLD.`tags`));
  INSERT OR IGNORE INTO `contact_tags` (`account_id`, `tag`, `contact_rowid`) SELECT NEW.`account_id`, `value`, NEW.rowid FROM json_each(NEW.`tags`);
END;
--> statement-breakpoint
CREATE TRIGGER `contacts_tags_delete` AFTER DELETE ON `contacts` WHEN OLD.`tags` <> '[]' BEGIN
  DELETE FROM `contact_tags` WHERE `account_id` = OLD.`account_id` AND `contact_rowid` = OLD.rowid AND `tag` IN (SELECT `value` FROM json_each(OLD.`tags`));
END;
