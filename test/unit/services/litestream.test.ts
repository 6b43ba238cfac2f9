import { describe, expect, test } from "bun:test";
import { litestreamSyncErrors, parseLitestreamLine } from "../../../src/services/litestream";

describe("reading Litestream", () => {
  test("its log lines become a level, a message and fields (an error field makes it an error)", () => {
    expect(parseLitestreamLine('time=2026-11-26T08:46:18.114Z level=INFO msg="wal segment written" db=/tmp/a.db replica=file position=3378285c76edc226/00000002:4152 elapsed=2.0ms sz=16512')).toEqual({
      level: "info",
      msg: "wal segment written",
      fields: { db: "/tmp/a.db", replica: "file", position: "3378285c76edc226/00000002:4152", elapsed: "2.0ms", sz: "16512" },
    });
    expect(parseLitestreamLine('time=x level=INFO msg="monitor error" db=/tmp/a.db replica=s3 error="dial tcp: lookup nowhere: no such host"')).toMatchObject({ level: "error", msg: "monitor error", fields: { error: "dial tcp: lookup nowhere: no such host" } });
    expect(parseLitestreamLine("level=WARN msg=\"init: cannot determine last wal position, clearing generation\"").level).toBe("warn");
    expect(parseLitestreamLine("cannot open config file")).toEqual({ level: "error", msg: "cannot open config file", fields: {} });
  });

  test("the sync error count from its metrics", () => {
    expect(litestreamSyncErrors(["# HELP x", 'litestream_sync_count{db="/a.db"} 9', 'litestream_sync_error_count{db="/a.db"} 2', ""].join("\n"))).toBe(2);
    expect(litestreamSyncErrors("litestream_db_size 1")).toBeUndefined();
  });
});
