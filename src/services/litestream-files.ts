/**
 * The files a supervised Litestream leaves (src/services/replication.ts): its log, read as it
 * grows (`LogTail`), and `<db>.litestream.pid`, which lets the next start finish a Litestream an
 * earlier Textwire left running (`finishOrphan`).
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { basename, dirname } from "node:path";
import type { Logger } from "../lib/log";

/** How long Litestream gets for its last sync after SIGTERM before it is killed. */
export const STOP_GRACE_MS = 15_000;
/** Litestream's log file is emptied once this much of it has been read. */
const LOG_KEEP_BYTES = 1 << 20;

/** Litestream's log file, read from where the last look ended. */
export class LogTail {
  private offset = 0;
  private readonly decoder = new StringDecoder("utf8");
  private partial = "";

  constructor(private readonly path: string) {}

  /** Hands over every whole line written since the last call. */
  read(onLine: (line: string) => void): void {
    let size: number;
    try {
      size = statSync(this.path).size;
    } catch {
      return;
    }
    if (size < this.offset) this.offset = 0;
    if (size > this.offset) {
      const buf = Buffer.alloc(Math.min(size - this.offset, LOG_KEEP_BYTES));
      let n = 0;
      try {
        const fd = openSync(this.path, "r");
        try {
          n = readSync(fd, buf, 0, buf.length, this.offset);
        } finally {
          closeSync(fd);
        }
      } catch {
        return;
      }
      this.offset += n;
      const text = this.partial + this.decoder.write(buf.subarray(0, n));
      const lines = text.split("\n");
      this.partial = lines.pop() ?? "";
      for (const line of lines) onLine(line);
    }
    // Read to the end and grown large: emptied (Litestream appends, so its next line starts at 0).
    if (this.offset >= LOG_KEEP_BYTES) {
      try {
        if (statSync(this.path).size === this.offset) {
          truncateSync(this.path, 0);
          this.offset = 0;
        }
      } catch {}
    }
  }

  /** The last line, not yet ended by a newline (the process exited mid-line). */
  rest(): string {
    return this.partial;
  }
}

const pidPath = (dbPath: string) => `${dbPath}.litestream.pid`;

/** `<db>.litestream.pid`: the running Litestream's pid, and the folder of its configuration. */
export function writePid(dbPath: string, pid: number, configFile: string) {
  try {
    writeFileSync(pidPath(dbPath), `${pid}\n${dirname(configFile)}\n`);
  } catch {}
}

export function clearPid(dbPath: string, pid: number) {
  try {
    if (readFileSync(pidPath(dbPath), "utf8").split("\n")[0] === String(pid)) rmSync(pidPath(dbPath), { force: true });
  } catch {}
}

/**
 * A Litestream that an earlier Textwire on this database left running (a server killed outright:
 * its Litestream got SIGTERM and is making its last sync, or never got it where setpriv is
 * missing) would replicate alongside the new one: at every start (replicating or not) it is asked
 * to stop (SIGTERM: its last sync) and waited for, up to STOP_GRACE_MS, then killed; its
 * configuration folder is removed. Only a process whose command line is Litestream's replicate is
 * touched.
 */
export async function finishOrphan(dbPath: string, logger: Logger): Promise<void> {
  const file = pidPath(dbPath);
  if (!existsSync(file)) return;
  const [pidText, configDir] = readFileSync(file, "utf8").split("\n");
  const pid = Number(pidText);
  rmSync(file, { force: true });
  const removeConfig = () => {
    // Its configuration (an SFTP password, maybe) is not left in the temp folder either.
    if (configDir && basename(configDir).startsWith("textwire-litestream-")) rmSync(configDir, { recursive: true, force: true });
  };
  if (!Number.isInteger(pid) || pid <= 1 || !isLitestream(pid)) return removeConfig();
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return removeConfig();
  }
  const deadline = Date.now() + STOP_GRACE_MS;
  while (isLitestream(pid) && Date.now() < deadline) await Bun.sleep(50);
  if (isLitestream(pid)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
    logger.warn("stopped a Litestream left running by an earlier Textwire on this database (it did not finish its last sync in time)", { pid });
  } else {
    logger.info("a Litestream left by an earlier Textwire on this database finished its last sync", { pid });
  }
  removeConfig();
}

/** Whether `pid` runs Litestream's replicate (a zombie or another program does not count). */
function isLitestream(pid: number): boolean {
  try {
    if (/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"))) return false;
    const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    return cmd.includes("litestream") && cmd.includes("replicate");
  } catch {
    return false;
  }
}
