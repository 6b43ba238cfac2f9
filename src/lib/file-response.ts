/**
 * A response that sends a temporary file and then removes it (the admin backup download).
 *
 * Sent by the server itself (`new Response(Bun.file(path))`: sendfile on plain HTTP, a native
 * read/write loop under TLS), not piped through JavaScript: 100 MB pumped through a ReadableStream
 * costs the request path a second of CPU on a small box. The catch is knowing
 * when the file may go: the server opens the file a moment after the handler returns and gives no
 * signal when the send ends. On Linux an open file can be removed while it is read, so the file is
 * removed as soon as `/proc/self/fd` shows this process holding it, or its access time shows it was
 * read already (a few milliseconds); the memory or disk it used is freed when the server closes it
 * after the last byte. A file the server never opens (the client left first) is removed after
 * OPEN_WAIT_MS. A small file is simply read into memory and removed at once. Without /proc
 * (macOS), the file is streamed through JavaScript and removed at its end, as before.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from "node:fs";

/** A file the server has not opened by then is removed anyway. */
export const OPEN_WAIT_MS = 60_000;
/** Up to this size a file is sent from memory (read once, removed at once). */
export const IN_MEMORY_BYTES = 8 * 1_048_576;
const POLL_MS = 5;
const FD_DIR = "/proc/self/fd";

export function fileResponseThenRemove(path: string, dir: string, init: ResponseInit): Response {
  const remove = () => rmSync(dir, { recursive: true, force: true });
  const written = statSync(path);
  if (written.size <= IN_MEMORY_BYTES) {
    const bytes = readFileSync(path);
    remove();
    return new Response(bytes, init);
  }
  if (!existsSync(FD_DIR)) return new Response(streamThenRemove(path, remove), init);
  const deadline = performance.now() + OPEN_WAIT_MS;
  const poll = () => {
    if (isOpenHere(path) || readSince(path, written.mtimeMs) || performance.now() > deadline) remove();
    else setTimeout(poll, POLL_MS);
  };
  setTimeout(poll, 0);
  return new Response(Bun.file(path), init);
}

/** Whether this process has `path` open (a descriptor in /proc/self/fd links to it). */
export function isOpenHere(path: string): boolean {
  let fds: string[];
  try {
    fds = readdirSync(FD_DIR);
  } catch {
    return false;
  }
  for (const fd of fds) {
    try {
      if (readlinkSync(`${FD_DIR}/${fd}`) === path) return true;
    } catch {
      // closed while we looked
    }
  }
  return false;
}

/** Whether the file was read after it was written (the server sent it already: a quick send can open and close it between two polls). */
function readSince(path: string, mtimeMs: number): boolean {
  try {
    return statSync(path).atimeMs > mtimeMs;
  } catch {
    return true;
  }
}

/** A file stream that removes the file once it has been read to the end (or the client left). */
function streamThenRemove(path: string, remove: () => void): ReadableStream<Uint8Array> {
  const reader = Bun.file(path).stream().getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          remove();
        } else controller.enqueue(value);
      } catch (err) {
        remove();
        controller.error(err);
      }
    },
    cancel() {
      void reader.cancel();
      remove();
    },
  });
}
