import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { embeddedLitestream, LitestreamChecksumError } from "../../../src/services/litestream-binary";
import { tempDir } from "../../helpers/server";

const sha = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");

describe("the Litestream carried inside the executable", () => {
  test("is put in a private folder on first use, checked against its checksum, and used from there", () => {
    const dir = tempDir("textwire-ls-");
    const src = join(dir, "embedded");
    writeFileSync(src, "#!/bin/sh\necho litestream v0\n");
    const path = embeddedLitestream({ file: src, sha256: sha(readFileSync(src)), target: "linux-x64" }, join(dir, "cache"))!;
    expect(readFileSync(path, "utf8")).toBe(readFileSync(src, "utf8"));
    expect(Bun.spawnSync([path]).stdout.toString()).toBe("litestream v0\n");
  });

  test("a copy changed on disk is replaced, never run", () => {
    const dir = tempDir("textwire-ls-");
    const src = join(dir, "embedded");
    writeFileSync(src, "#!/bin/sh\necho good\n");
    const e = { file: src, sha256: sha(readFileSync(src)), target: "linux-x64" };
    const cache = join(dir, "cache2");
    mkdirSync(cache, { mode: 0o700 });
    const name = join(cache, `litestream-${e.sha256.slice(0, 16)}`);
    writeFileSync(name, "#!/bin/sh\necho evil\n", { mode: 0o700 });
    const path = embeddedLitestream(e, cache)!;
    expect(Bun.spawnSync([path]).stdout.toString()).toBe("good\n");
  });

  test("a damaged executable (bytes not matching the checksum) is refused in plain words; a folder others can write to is refused", () => {
    const dir = tempDir("textwire-ls-");
    const src = join(dir, "embedded");
    writeFileSync(src, "damaged");
    expect(() => embeddedLitestream({ file: src, sha256: sha("original"), target: "linux-x64" }, join(dir, "c3"))).toThrow(LitestreamChecksumError);
    const open = join(dir, "open");
    mkdirSync(open);
    chmodSync(open, 0o777);
    expect(() => embeddedLitestream({ file: src, sha256: sha("damaged"), target: "linux-x64" }, open)).toThrow(/private folder/);
  });

  test("a build without one (a source checkout) has none", () => {
    expect(embeddedLitestream(null)).toBeUndefined();
  });
});
