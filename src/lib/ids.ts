/**
 * Form ids are credentials (the webhook trusts them), so they stay random v4 (122 bits).
 * Messages and contacts use time-ordered v7 ids: inserts land at the end of the B-tree.
 */
export const newFormId = (): string => crypto.randomUUID();
export const newId = (): string => Bun.randomUUIDv7();
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
