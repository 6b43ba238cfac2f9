-- Substring search over contacts (GET /contacts?search=, POST /contacts/search customFields):
-- an FTS5 trigram index over contacts.search_text and contacts.custom_fields, external content
-- (the text lives in contacts only), kept in step by the triggers below. drizzle-kit cannot
-- express virtual tables or triggers: this file is written by hand (the snapshot is unchanged).
-- A future drizzle-kit rebuild of `contacts` (CREATE __new_contacts / DROP / RENAME) drops these
-- triggers and renumbers rowids: such a migration must recreate them and end with 'rebuild'.
CREATE VIRTUAL TABLE `contacts_fts` USING fts5(
  search_text, custom_fields,
  content = 'contacts', content_rowid = 'rowid', tokenize = 'trigram'
);
--> statement-breakpoint
CREATE TRIGGER `contacts_fts_insert` AFTER INSERT ON `contacts` BEGIN
  INSERT INTO `contacts_fts` (rowid, search_text, custom_fields) VALUES (NEW.rowid, NEW.`search_text`, NEW.`custom_fields`);
END;
--> statement-breakpoint
CREATE TRIGGER `contacts_fts_delete` AFTER DELETE ON `contacts` BEGIN
  INSERT INTO `contacts_fts` (`contacts_fts`, rowid, search_text, custom_fields) VALUES ('delete', OLD.rowid, OLD.`search_text`, OLD.`custom_fields`);
END;
--> statement-breakpoint
CREATE TRIGGER `contacts_fts_update` AFTER UPDATE OF `search_text`, `custom_fields` ON `contacts`
  WHEN OLD.`search_text` IS NOT NEW.`search_text` OR OLD.`custom_fields` IS NOT NEW.`custom_fields` BEGIN
  INSERT INTO `contacts_fts` (`contacts_fts`, rowid, search_text, custom_fields) VALUES ('delete', OLD.rowid, OLD.`search_text`, OLD.`custom_fields`);
  INSERT INTO `contacts_fts` (rowid, search_text, custom_fields) VALUES (NEW.rowid, NEW.`search_text`, NEW.`custom_fields`);
END;
--> statement-breakpoint
INSERT INTO `contacts_fts` (`contacts_fts`) VALUES ('rebuild');
