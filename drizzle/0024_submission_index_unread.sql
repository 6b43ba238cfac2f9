-- Issue 15 item 4: one index entry fewer per applied submission.
--
-- (account_id, created_at) on submissions has no reader: form stats read the rollups (migration
-- 0022), their residue and a form delete read (form_id, created_at), doctor and backups scan the
-- table, and an account's submissions go with its forms (the form_id cascade). At 200k
-- submissions it was 15 MiB of the file and one more b-tree written per submission.
DROP INDEX IF EXISTS `submissions_account_created_idx`;
