import { connect } from "node:net";

/** One raw HTTP/1.1 exchange (for targets and methods fetch cannot send); the connection closes. */
export function rawRequest(port: number, head: string, body = ""): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, "127.0.0.1", () => sock.write(`${head}\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`));
    let out = "";
    sock.setEncoding("utf8");
    sock.on("data", (d) => (out += d));
    sock.on("error", reject);
    sock.on("close", () => {
      const [headers, ...rest] = out.split("\r\n\r\n");
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(out)?.[1] ?? 0), headers, body: rest.join("\r\n\r\n") });
    });
  });
}
