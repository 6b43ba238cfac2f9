import { describe, expect, test } from "bun:test";
import { smsInfo } from "../../../src/domain/sms-encoding";

const BASIC =
  "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?" +
  "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà";
const EXTENSION = "\f^{}\\[~]|€";

describe("smsInfo: GSM-7", () => {
  test("empty text is one GSM-7 segment", () => {
    expect(smsInfo("")).toEqual({ encoding: "GSM-7", units: 0, segments: 1 });
  });

  test("the whole default alphabet is GSM-7 at one septet each", () => {
    expect([...BASIC].length).toBe(127);
    expect(smsInfo(BASIC)).toEqual({ encoding: "GSM-7", units: 127, segments: 1 });
  });

  test("each extension character costs two septets", () => {
    expect(smsInfo(EXTENSION)).toEqual({ encoding: "GSM-7", units: 20, segments: 1 });
    for (const ch of EXTENSION) expect(smsInfo(ch)).toEqual({ encoding: "GSM-7", units: 2, segments: 1 });
  });

  test("160 / 161 boundary", () => {
    expect(smsInfo("a".repeat(160))).toEqual({ encoding: "GSM-7", units: 160, segments: 1 });
    expect(smsInfo("a".repeat(161))).toEqual({ encoding: "GSM-7", units: 161, segments: 2 });
  });

  test("153 septets per part in concatenated messages", () => {
    expect(smsInfo("a".repeat(306)).segments).toBe(2);
    expect(smsInfo("a".repeat(307)).segments).toBe(3);
    expect(smsInfo("a".repeat(459)).segments).toBe(3);
    expect(smsInfo("a".repeat(460)).segments).toBe(4);
  });

  test("extension characters at the single-message boundary", () => {
    expect(smsInfo("a".repeat(158) + "€")).toEqual({ encoding: "GSM-7", units: 160, segments: 1 });
    expect(smsInfo("a".repeat(159) + "€")).toEqual({ encoding: "GSM-7", units: 161, segments: 2 });
    expect(smsInfo("{}".repeat(40))).toEqual({ encoding: "GSM-7", units: 160, segments: 1 });
  });

  test("an escape pair is not split across parts", () => {
    // 152 + 2 = 154 septets would straddle the 153 boundary: the € moves to part 2.
    const text = "a".repeat(152) + "€" + "a".repeat(152);
    expect(smsInfo(text)).toEqual({ encoding: "GSM-7", units: 306, segments: 3 });
    expect(smsInfo("a".repeat(151) + "€" + "a".repeat(153))).toEqual({ encoding: "GSM-7", units: 306, segments: 2 });
  });

  test("line breaks are GSM-7", () => {
    expect(smsInfo("Hi\nthere\r\n").encoding).toBe("GSM-7");
  });
});

describe("smsInfo: UCS-2", () => {
  test("one character outside GSM switches the whole text", () => {
    expect(smsInfo("Hello ç")).toEqual({ encoding: "UCS-2", units: 7, segments: 1 });
    expect(smsInfo("Straße é ü → ok")).toEqual({ encoding: "UCS-2", units: 15, segments: 1 });
    expect(smsInfo("Привет")).toEqual({ encoding: "UCS-2", units: 6, segments: 1 });
    expect(smsInfo("`")).toEqual({ encoding: "UCS-2", units: 1, segments: 1 });
  });

  test("an emoji counts two units", () => {
    expect(smsInfo("😀")).toEqual({ encoding: "UCS-2", units: 2, segments: 1 });
    expect(smsInfo("Hi 👋🏽")).toEqual({ encoding: "UCS-2", units: 7, segments: 1 });
  });

  test("70 / 71 boundary", () => {
    expect(smsInfo("ж".repeat(70))).toEqual({ encoding: "UCS-2", units: 70, segments: 1 });
    expect(smsInfo("ж".repeat(71))).toEqual({ encoding: "UCS-2", units: 71, segments: 2 });
    expect(smsInfo("😀".repeat(35))).toEqual({ encoding: "UCS-2", units: 70, segments: 1 });
    expect(smsInfo("😀".repeat(35) + "a")).toEqual({ encoding: "UCS-2", units: 71, segments: 2 });
  });

  test("67 units per part in concatenated messages", () => {
    expect(smsInfo("ж".repeat(134)).segments).toBe(2);
    expect(smsInfo("ж".repeat(135)).segments).toBe(3);
  });

  test("a surrogate pair is not split across parts", () => {
    // 66 + 2 would straddle 67: the emoji moves to part 2.
    expect(smsInfo("ж".repeat(66) + "😀" + "ж".repeat(66))).toEqual({ encoding: "UCS-2", units: 134, segments: 3 });
    expect(smsInfo("ж".repeat(65) + "😀" + "ж".repeat(67))).toEqual({ encoding: "UCS-2", units: 134, segments: 2 });
  });
});

describe("smsInfo: the one-pass answer for short texts equals the part-by-part count", () => {
  /** The count before the one-pass path: per code point, then packed into parts. */
  function reference(text: string) {
    const basic = new Set("@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà");
    const ext = new Set("\f^{}\\[~]|€");
    const pack = (costs: number[], total: number, single: number, part: number) => {
      if (total <= single) return 1;
      let segments = 1;
      let used = 0;
      for (const c of costs) {
        if (used + c > part) {
          segments++;
          used = 0;
        }
        used += c;
      }
      return segments;
    };
    const gsm: number[] = [];
    for (const ch of text) {
      if (basic.has(ch)) gsm.push(1);
      else if (ext.has(ch)) gsm.push(2);
      else {
        const costs = [...text].map((c) => c.length);
        return { encoding: "UCS-2", units: text.length, segments: pack(costs, text.length, 70, 67) };
      }
    }
    const units = gsm.reduce((a, b) => a + b, 0);
    return { encoding: "GSM-7", units, segments: pack(gsm, units, 160, 153) };
  }

  test("on random texts of every mix and length around the limits", () => {
    const alphabet = ["a", "Z", "0", " ", "\n", "é", "€", "^", "{", "ß", "ç", "Ω", "😀", "\ud800", "中", "\u00a0"];
    let s = 42;
    const rnd = (n: number) => ((s = (s * 1103515245 + 12345) & 0x7fffffff) % n);
    for (let k = 0; k < 3000; k++) {
      const len = rnd(200);
      // Mostly GSM characters, sometimes one from elsewhere.
      const pool = rnd(3) === 0 ? alphabet : alphabet.slice(0, 10);
      let text = "";
      for (let i = 0; i < len; i++) text += pool[rnd(pool.length)];
      expect(smsInfo(text)).toEqual(reference(text) as any);
    }
  });
});
