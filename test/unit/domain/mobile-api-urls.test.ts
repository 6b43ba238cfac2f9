import { describe, expect, test } from "bun:test";
import { mobileApiUrls } from "../../../src/domain/mobile-api-urls";

describe("mobileApiUrls: what a phone types into the SMSGate app", () => {
  test("--public-url is the one address when set (trailing slash dropped)", () => {
    expect(mobileApiUrls({ publicUrl: "https://sms.example.com/", origin: "https://192.168.1.5:8080", behindProxy: false, addresses: ["192.168.1.5"] })).toEqual([
      "https://sms.example.com/api/mobile/v1",
    ]);
  });

  test("the browser's address first, then the machine's LAN addresses with the same scheme and port, IPv4 before IPv6, no repeats", () => {
    expect(mobileApiUrls({ origin: "https://192.168.1.5:8443", behindProxy: false, addresses: ["fd00::5", "192.168.1.5", "10.0.0.2"] })).toEqual([
      "https://192.168.1.5:8443/api/mobile/v1",
      "https://10.0.0.2:8443/api/mobile/v1",
      "https://[fd00::5]:8443/api/mobile/v1",
    ]);
  });

  test("a loopback origin (localhost, 127.x, ::1) is left out: a phone cannot reach it", () => {
    for (const origin of ["http://localhost:8080", "http://127.0.0.1:8080", "http://[::1]:8080"]) {
      expect(mobileApiUrls({ origin, behindProxy: false, addresses: ["192.168.1.5"] })).toEqual(["http://192.168.1.5:8080/api/mobile/v1"]);
    }
    expect(mobileApiUrls({ origin: "http://localhost:8080", behindProxy: false, addresses: [] })).toEqual([]);
  });

  test("behind a trusted proxy only the address the proxy answers on", () => {
    expect(mobileApiUrls({ origin: "https://sms.shop.lan", behindProxy: true, addresses: ["192.168.1.5"] })).toEqual(["https://sms.shop.lan/api/mobile/v1"]);
  });

  test("a default port is not written", () => {
    expect(mobileApiUrls({ origin: "https://box.lan", behindProxy: false, addresses: ["192.168.1.5"] })).toEqual([
      "https://box.lan/api/mobile/v1",
      "https://192.168.1.5/api/mobile/v1",
    ]);
  });
});
