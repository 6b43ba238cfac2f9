import { describe, expect, test } from "bun:test";
import { Changes, type Change } from "../../../src/lib/changes";

describe("Changes: the services' announcements", () => {
  test("each listener hears its own kind only, in order; unsubscribing stops it", () => {
    const changes = new Changes();
    const heard: Change[] = [];
    const offMessages = changes.on("message", (c) => heard.push(c));
    changes.on("device", (c) => heard.push(c));
    changes.message("acc-1", "queued", "queue");
    changes.contact("acc-1", "updated");
    changes.device("acc-2", "asked-for-work", 5);
    expect(heard).toEqual([
      { kind: "message", accountId: "acc-1", what: "queued", cause: "queue" },
      { kind: "device", accountId: "acc-2", what: "asked-for-work", at: 5 },
    ]);
    offMessages();
    changes.message("acc-1", "settled", "api");
    expect(heard.length).toBe(2);
  });

  test("a listener that unsubscribes while being told does not make another miss the change", () => {
    const changes = new Changes();
    const heard: string[] = [];
    const off = changes.on("contact", () => {
      heard.push("first");
      off();
    });
    changes.on("contact", () => heard.push("second"));
    changes.contact("acc", "created");
    changes.contact("acc", "created");
    expect(heard).toEqual(["first", "second", "second"]);
  });
});
