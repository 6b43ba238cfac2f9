/**
 * Message statuses and priorities have one home (docs/api-decisions.md, "One home per rule:
 * stores for accounts, forms, sessions, keys, broadcasts; statuses in one module"): the schema,
 * the queue and the rules take theirs from src/domain/statuses.ts.
 */
import { describe, expect, test } from "bun:test";
import { MESSAGE_STATUSES, PRIORITIES, PRIORITIES_BY_RANK, PRIORITY_RANK } from "../../../src/domain/statuses";
import { messages } from "../../../src/db/schema/messages";
import { broadcasts } from "../../../src/db/schema/broadcasts";
import { MESSAGE_STATUSES as TRANSITION_STATUSES, isMessageStatus } from "../../../src/domain/message-transitions";
import { PRIORITIES as FORM_PRIORITIES } from "../../../src/domain/form-definition";
import { MessageQueue, PRIORITY_RANK as QUEUE_RANK } from "../../../src/queue/priority-queue";

describe("message statuses and priorities", () => {
  test("the lists as the API documents them", () => {
    expect([...MESSAGE_STATUSES]).toEqual(["queued", "sent", "failed", "cancelled"]);
    expect([...PRIORITIES]).toEqual(["low", "normal", "high", "urgent"]);
  });

  test("ranks: urgent first, and PRIORITIES_BY_RANK is the rank order", () => {
    expect(PRIORITIES_BY_RANK.map((p) => PRIORITY_RANK[p])).toEqual([0, 1, 2, 3]);
    expect([...PRIORITIES_BY_RANK].sort()).toEqual([...PRIORITIES].sort());
  });

  test("the schema's enums, the transition rules, the form rules and the queue use the same lists", () => {
    expect(messages.status.enumValues).toEqual([...MESSAGE_STATUSES]);
    expect(messages.priority.enumValues).toEqual([...PRIORITIES]);
    expect(broadcasts.priority.enumValues).toEqual([...PRIORITIES]);
    expect(TRANSITION_STATUSES).toBe(MESSAGE_STATUSES);
    expect(FORM_PRIORITIES).toBe(PRIORITIES);
    expect(QUEUE_RANK).toBe(PRIORITY_RANK);
    for (const s of MESSAGE_STATUSES) expect(isMessageStatus(s)).toBe(true);
    expect(isMessageStatus("delivered")).toBe(false);
  });

  test("the queue serves in rank order", () => {
    const q = new MessageQueue();
    for (const [i, p] of PRIORITIES.entries()) q.insert({ id: `m${i}`, accountId: "a", priority: p, scheduledFor: 0, seq: i });
    expect(PRIORITIES_BY_RANK.map((p) => q.rank(`m${PRIORITIES.indexOf(p)}`))).toEqual([1, 2, 3, 4]);
  });
});
