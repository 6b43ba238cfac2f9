-- Issue 15 item 4: the search index (contacts_fts, drizzle/0002) indexes each contact's text once,
-- off the write path. A new contact no longer writes its ~140 trigrams in the writer's
-- transaction (~55 us and 1.8 KiB of WAL per contact): its rowid goes into
-- contacts_fts_pending (rowid-keyed, appended at the right edge), and the intake applier Worker
-- indexes pending rows in chunks when it is idle (src/db/contact-search-pending.ts).
--
-- Searches stay exact at every moment: they read the index's matches plus every pending rowid,
-- and the exact test on the row (which always ran after the index) decides (services/contacts.ts).
--
-- A changed search column of a pending row does nothing to the index (an external-content
-- 'delete' of an entry that was never inserted corrupts it); of an indexed row it does what it
-- did before. A deleted pending row leaves the pending table; an indexed one leaves the index.
-- FTS5's integrity-check compares the index with every contact: `textwire doctor` checks it with
-- the pending rows indexed inside a savepoint that is rolled back.
--
-- Existing databases stay fully indexed: nothing is pending after this migration. A later
-- migration that rebuilds `contacts` (new rowids) must end with the index's 'rebuild' AND empty
-- contacts_fts_pending.
CREATE TABLE `contacts_fts_pending` (
	`contact_rowid` integer PRIMARY KEY NOT NULL
);
--> statement-breakpoint
DROP TRIGGER `contacts_fts_insert`;
--> statement-breakpoint
DROP TRIGGER `contacts_fts_update`;
--> statement-breakpoint
DROP TRIGGER `contacts_fts_delete`;
--> statement-breakpoint
CREATE TRIGGER `contacts_fts_insert` AFTER INSERT ON `contacts` BEGIN
  INSERT INTO `contacts_fts_pending` (`contact_rowid`) VALUES (NEW.rowid);
END;
--> statement-breakpoint
CREATE TRIGGER `contacts_fts_update` AFTER UPDATE OF `search_text`, `custom_fields` ON `contacts`
  WHEN (OLD.`search_text` IS NOT NEW.`search_text` OR OLD.`custom_fields` IS NOT NEW.`custom_fields`)
    AND NOT EXISTS (SELECT 1 FROM `contacts_fts_pending` WHERE `contact_rowid` = NEW.rowid) BEGIN
  INSERT INTO `contacts_fts` (`contacts_fts`, rowid, search_text, custom_fields) VALUES ('delete', OLD.rowid, OLD.`search_text`, OLD.`custom_fields`);
  INSERT INTO `contacts_fts` (rowid, search_text, custom_fields) VALUES (NEW.rowid, NEW.`search_text`, NEW.`custom_fields`);
END;
--> statement-breakpoint
CREATE TRIGGER `contacts_fts_delete` AFTER DELETE ON `contacts` BEGIN
  INSERT INTO `contacts_fts` (`contacts_fts`, rowid, search_text, custom_fields)
    SELECT 'delete', OLD.rowid, OLD.`search_text`, OLD.`custom_fields`
    WHERE NOT EXISTS (SELECT 1 FROM `contacts_fts_pending` WHERE `contact_rowid` = OLD.rowid);
  DELETE FROM `contacts_fts_pending` WHERE `contact_rowid` = OLD.rowid;
END;
