-- The business's name and forms still posted over plain HTTP (docs/api-decisions.md, "The
-- business's name, the server address and HTTPS without breaking forms").
-- name_set_at: when a person chose the account's name. Until then replies to STOP/START/HELP say
-- "this number": the placeholder a first start gives ("Default account") is never sent to a
-- customer. An account named by a person before this migration counts as named.
ALTER TABLE `accounts` ADD `name_set_at` text;--> statement-breakpoint
UPDATE `accounts` SET `name_set_at` = `created_at` WHERE `name` <> 'Default account';--> statement-breakpoint
-- plain_http_post_at: the last time the form's old plain-HTTP address was posted to after HTTPS
-- was turned on (recorded by the redirect listener, flushed from memory), so the owner can be told
-- which website still needs the new address.
ALTER TABLE `forms` ADD `plain_http_post_at` text;
