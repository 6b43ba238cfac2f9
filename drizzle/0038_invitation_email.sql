-- An invitation is for the e-mail the inviter typed: the person accepting sets a name and a
-- password, not the address (docs/api-decisions.md, "Nothing the phone reports is lost, and nobody
-- takes the dashboard: hardening round three"). Invitations made before have none and can no
-- longer be used: the owner makes a new one.
ALTER TABLE `invitations` ADD `email` text;
