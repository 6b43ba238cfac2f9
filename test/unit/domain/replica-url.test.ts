import { describe, expect, test } from "bun:test";
import { displayReplica, litestreamConfig, parseReplicaUrl, redactReplicaUrl, ReplicaUrlError } from "../../../src/domain/replica-url";

const bad = (url: string) => {
  try {
    parseReplicaUrl(url);
  } catch (err) {
    expect(err).toBeInstanceOf(ReplicaUrlError);
    return (err as Error).message;
  }
  throw new Error(`accepted: ${url}`);
};

describe("replica URLs", () => {
  test("the three forms parse", () => {
    expect(parseReplicaUrl("file:///mnt/usb/textwire/")).toEqual({ type: "file", path: "/mnt/usb/textwire" });
    expect(parseReplicaUrl("file:///mnt/my%20disk")).toEqual({ type: "file", path: "/mnt/my disk" });
    expect(parseReplicaUrl("sftp://me@backup.example.com/srv/tw")).toEqual({ type: "sftp", host: "backup.example.com", port: 22, user: "me", path: "/srv/tw" });
    expect(parseReplicaUrl("sftp://me:p%40ss@10.0.0.2:2222/tw?key=/home/me/.ssh/id_ed25519")).toEqual({
      type: "sftp",
      host: "10.0.0.2",
      port: 2222,
      user: "me",
      password: "p@ss",
      path: "/tw",
      keyPath: "/home/me/.ssh/id_ed25519",
    });
    expect(parseReplicaUrl("s3://shop-backups/textwire")).toEqual({ type: "s3", bucket: "shop-backups", path: "textwire" });
    expect(parseReplicaUrl("s3://b2b/tw/db?endpoint=https://abc.r2.cloudflarestorage.com/&region=auto&force-path-style=true")).toEqual({
      type: "s3",
      bucket: "b2b",
      path: "tw/db",
      endpoint: "https://abc.r2.cloudflarestorage.com",
      region: "auto",
      forcePathStyle: true,
    });
  });

  test("bad addresses get a sentence that says what to write", () => {
    expect(bad("")).toContain("file:///folder");
    expect(bad("/mnt/usb")).toContain("file:///mnt/usb");
    expect(bad("file://mnt/usb")).toContain("three slashes");
    expect(bad("file:///")).toContain("not the root");
    expect(bad("file:///a/../etc")).toContain("..");
    expect(bad("file:///a?x=1")).toContain("no options");
    expect(bad("ftp://host/x")).toContain("not to ftp://");
    expect(bad("sftp://host/x")).toContain("user name");
    expect(bad("sftp://me@host")).toContain("folder");
    expect(bad("sftp://me@host/x?key=id_rsa")).toContain("full path");
    expect(bad("s3://KEY:SECRET@bucket/x")).toContain("LITESTREAM_ACCESS_KEY_ID");
    expect(bad("s3://Bad_Bucket/x")).toContain("bucket name");
    expect(bad("s3://bucket/x?endpoint=minio:9000")).toContain("http(s)");
    expect(bad("s3://bucket/x?acl=public")).toContain("endpoint, region, force-path-style");
    expect(bad("s3://bucket/x?region=us-east-1&region=eu-west-1")).toContain("twice");
    expect(bad("file:///a\nb")).toContain("control character");
    expect(bad("s3://" + "a".repeat(2000))).toContain("longer than");
  });

  test("what is shown never holds a password", () => {
    const t = parseReplicaUrl("sftp://me:hunter2@host/x");
    expect(displayReplica(t)).toBe("sftp://me:***@host/x");
    expect(redactReplicaUrl("sftp://me:hunter2@host/x")).not.toContain("hunter2");
    // Not parseable, still masked.
    expect(redactReplicaUrl("s3://AKIA:topsecret@bucket/x")).not.toContain("topsecret");
  });

  test("Litestream's configuration quotes every value (nothing typed can add a line)", () => {
    const yml = litestreamConfig({
      dbPath: "/data/tw.db",
      target: parseReplicaUrl('sftp://me:pa"ss%0Aword@host/x'.replace("%0A", "")),
      metricsAddr: "127.0.0.1:9999",
      timings: { monitorMs: 200, syncMs: 500, snapshotMs: 86_400_000, retentionMs: 3 * 86_400_000, maxCheckpointPages: 65536 },
    });
    expect(yml).toContain('addr: "127.0.0.1:9999"');
    expect(yml).toContain('  - path: "/data/tw.db"');
    expect(yml).toContain("    monitor-interval: 200ms");
    expect(yml).toContain('      - type: sftp');
    expect(yml).toContain('        host: "host:22"');
    expect(yml).toContain('        password: "pa\\"ssword"');
    expect(yml).toContain("        sync-interval: 500ms");
    expect(yml).toContain("        snapshot-interval: 24h");
    expect(yml).toContain("        retention: 72h");
    expect(yml.split("\n").filter((l) => l.includes("password")).length).toBe(1);
  });
});
