/**
 * Outbound events go to the address that was checked, keeping the receiver's name: the Host
 * header, and for https the TLS server name (SNI) and the certificate check
 * (docs/api-decisions.md, "Hostile input, round two: template names, the links rule, outbound
 * addresses"). Measured against local HTTPS servers whose certificates come from the project's
 * local CA (src/tls/local-ca.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { initLocalCa } from "../../../src/tls/local-ca";
import { fetchAt, hostIsAddress, urlForAddress } from "../../../src/services/outbound-http";
import { tempDir } from "../../helpers/server";

/** A CA and a server certificate for `name` (the local CA always adds 127.0.0.1 and localhost too). */
function certFor(name: string) {
  const r = initLocalCa(join(tempDir("textwire-outbound-"), "x.db"), { ips: [], names: [name] }, Date.now(), []);
  const read = (p: string) => readFileSync(p, "utf8");
  return { ca: read(r.paths.caCert), cert: read(r.paths.serverCert), key: read(r.paths.serverKey) };
}

const alpha = certFor("alpha.test");
const beta = certFor("beta.test");
const seen: Array<{ host: string | null; url: string; body: string }> = [];
let tlsServer: ReturnType<typeof Bun.serve>;
let plainServer: ReturnType<typeof Bun.serve>;

beforeAll(() => {
  const handler = async (req: Request) => {
    seen.push({ host: req.headers.get("host"), url: req.url, body: await req.text() });
    return new Response("ok");
  };
  // One port, two names: the certificate is chosen by the SNI the client sends.
  tlsServer = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    tls: [
      { serverName: "alpha.test", cert: alpha.cert, key: alpha.key },
      { serverName: "beta.test", cert: beta.cert, key: beta.key },
    ],
    fetch: handler,
  });
  plainServer = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: handler });
});
afterAll(() => {
  tlsServer.stop(true);
  plainServer.stop(true);
});

const request = (ca?: string) => ({ method: "POST", headers: { "Content-Type": "application/json" }, body: '{"x":1}', signal: AbortSignal.timeout(10_000), ca });

describe("urlForAddress", () => {
  test("replaces the host only; IPv6 is bracketed; port, path and query are kept", () => {
    expect(urlForAddress(new URL("https://hooks.example:8443/a/b?c=1#f"), "93.184.216.34").href).toBe("https://93.184.216.34:8443/a/b?c=1#f");
    expect(urlForAddress(new URL("https://hooks.example/a"), "2001:4860:4860::8888").href).toBe("https://[2001:4860:4860::8888]/a");
    expect(hostIsAddress(new URL("https://[::1]/"))).toBe(true);
    expect(hostIsAddress(new URL("https://127.0.0.1/"))).toBe(true);
    expect(hostIsAddress(new URL("https://hooks.example/"))).toBe(false);
  });
});

describe("fetchAt", () => {
  test("https: connects to the address, sends the name as SNI and Host, and checks the certificate against the name", async () => {
    for (const [name, ca] of [["alpha.test", alpha.ca], ["beta.test", beta.ca]] as const) {
      const url = new URL(`https://${name}:${tlsServer.port}/hook?x=1`);
      const res = await fetchAt(url, "127.0.0.1", request(ca));
      expect(res.status).toBe(200);
      expect(seen.at(-1)).toEqual({ host: `${name}:${tlsServer.port}`, url: `https://${name}:${tlsServer.port}/hook?x=1`, body: '{"x":1}' });
    }
  });

  test("https: a certificate for another name is refused, though it also names 127.0.0.1", async () => {
    const before = seen.length;
    // alpha's CA trusts only alpha's certificate; asking for beta.test under alpha's CA fails,
    // and so does a name neither certificate has (the default certificate is alpha's).
    await expect(fetchAt(new URL(`https://beta.test:${tlsServer.port}/`), "127.0.0.1", request(alpha.ca))).rejects.toThrow();
    await expect(fetchAt(new URL(`https://gamma.test:${tlsServer.port}/`), "127.0.0.1", request(alpha.ca))).rejects.toThrow();
    // Without the test CA the system store does not know the local CA: refused too.
    await expect(fetchAt(new URL(`https://alpha.test:${tlsServer.port}/`), "127.0.0.1", request())).rejects.toThrow();
    expect(seen.length).toBe(before);
  });

  test("http: connects to the address with the URL's Host header", async () => {
    const res = await fetchAt(new URL(`http://receiver.invalid:${plainServer.port}/in`), "127.0.0.1", request());
    expect(res.status).toBe(200);
    expect(seen.at(-1)!.host).toBe(`receiver.invalid:${plainServer.port}`);
  });

  test("a URL whose host is an address is used as it is", async () => {
    const res = await fetchAt(new URL(`http://127.0.0.1:${plainServer.port}/in`), "127.0.0.1", request());
    expect(res.status).toBe(200);
    expect(seen.at(-1)!.host).toBe(`127.0.0.1:${plainServer.port}`);
  });
});
