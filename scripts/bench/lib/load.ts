#!/usr/bin/env bun
/**
 * Load generator for the webhook benchmark (runs as its own process, so it does not share the
 * server's CPU time slice). Posts a realistic 5-field JSON submission to the forms' webhooks from
 * N concurrent connections for D seconds; about half the phone numbers are new, half repeat one
 * already sent (an existing contact). Prints one JSON line: {requests, errors, seconds, rps, p50Ms, p99Ms, maxMs, statuses}.
 *
 *   bun scripts/bench/lib/load.ts --base http://127.0.0.1:8080 --forms id1,id2 --concurrency 64 --seconds 10 [--offset 0] [--path-prefix /v1/forms]
 */
const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ""), process.argv[i + 1]);
const base = args.get("base")!;
const forms = args.get("forms")!.split(",");
const concurrency = Number(args.get("concurrency") ?? 64);
const seconds = Number(args.get("seconds") ?? 10);
const offset = Number(args.get("offset") ?? 0);

/** Assigned US area codes: every generated number is a valid NANP number (FIXED_LINE_OR_MOBILE). */
const AREAS = [201, 202, 203, 205, 206, 207, 208, 209, 210, 212, 213, 214, 215, 216, 217, 218, 219, 224, 225, 228, 229, 231, 234, 239, 240, 248, 251, 252, 253, 254, 256, 260, 262, 267, 269, 270, 276, 281, 301, 302, 303, 304, 305, 307, 308, 309, 310, 312, 313, 314, 315, 316, 317, 318, 319, 320, 321, 323, 325, 330, 331, 334, 336, 337, 339, 347, 351, 352, 360, 361, 386, 401, 402, 404, 405, 406, 407, 408, 409, 410, 412, 413, 414, 415, 417, 419, 423, 424, 425, 430, 432, 434, 435, 440, 443, 469, 470, 475, 478, 479, 480, 484, 501, 502, 503, 504, 505, 507, 508, 509, 510, 512, 513, 515, 516, 517, 518, 520, 530, 540, 541, 551, 559, 561, 562, 563, 567, 570, 571, 573, 574, 575, 580, 585, 586, 601, 602, 603, 605, 606, 607, 608, 609, 610, 612, 614, 615, 616, 617, 618, 619, 620, 623, 626, 630, 631, 636, 641, 646, 650, 651, 660, 661, 662, 678, 682, 701, 702, 703, 704, 706, 707, 708, 712, 713, 714, 715, 716, 717, 718, 719, 720, 724, 727, 731, 732, 734, 740, 747, 754, 757, 760, 762, 763, 765, 770, 772, 773, 774, 775, 781, 785, 786, 801, 802, 803, 804, 805, 806, 808, 810, 812, 813, 814, 815, 816, 817, 818, 828, 830, 831, 832, 843, 845, 847, 848, 850, 856, 857, 858, 859, 860, 862, 863, 864, 865, 870, 872, 878, 901, 903, 904, 906, 907, 908, 909, 910, 912, 913, 914, 915, 916, 917, 918, 919, 920, 925, 928, 931, 936, 937, 940, 941, 947, 949, 951, 952, 954, 956, 970, 971, 972, 973, 978, 979, 980, 985, 989];
export function phoneFor(i: number): string {
  const area = AREAS[i % AREAS.length];
  const k = Math.floor(i / AREAS.length);
  let exch = 200 + (k % 700);
  if (exch % 100 === 11) exch++;
  const sub = Math.floor(k / 700) % 10000;
  return `+1${area}${exch}${String(sub).padStart(4, "0")}`;
}

const FIRST = ["Ann", "Bob", "Chloé", "Dev", "Eve", "Femi", "Gus", "Hana"];
const LAST = ["Lee", "Smith", "Okafor", "García", "Ng", "Brown"];
let fresh = offset;
let sent = 0;
function nextBody(): string {
  // Half new numbers, half a number this run already sent (an existing contact).
  const i = sent++ % 2 === 0 || fresh === offset ? fresh++ : offset + Math.floor(Math.random() * (fresh - offset));
  const first = FIRST[i % FIRST.length];
  const last = LAST[i % LAST.length];
  return JSON.stringify({
    phoneNumber: phoneFor(i),
    firstName: first,
    lastName: last,
    email: `${first.toLowerCase().replace(/[^a-z]/g, "")}.${i}@example.com`,
    company: `Company ${i % 97}`,
  });
}

const urls = forms.map((id) => `${base}/v1/forms/${id}/webhook`);
const latencies = new Float64Array(4_000_000);
let count = 0;
let errors = 0;
const statuses: Record<string, number> = {};
const headers = { "Content-Type": "application/json" };
const started = performance.now();
const endAt = started + seconds * 1000;
let formIdx = 0;

async function worker() {
  while (performance.now() < endAt) {
    const url = urls[formIdx++ % urls.length];
    const body = nextBody();
    const t0 = performance.now();
    let status = 0;
    try {
      const res = await fetch(url, { method: "POST", headers, body });
      await res.arrayBuffer();
      status = res.status;
    } catch {
      status = -1;
    }
    const t1 = performance.now();
    if (count < latencies.length) latencies[count] = t1 - t0;
    count++;
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (status !== 200) errors++;
  }
}
await Promise.all(Array.from({ length: concurrency }, worker));
const elapsed = (performance.now() - started) / 1000;
const lat = latencies.subarray(0, Math.min(count, latencies.length)).sort();
const pct = (p: number) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] : 0);
console.log(
  JSON.stringify({
    requests: count,
    errors,
    seconds: Math.round(elapsed * 100) / 100,
    rps: Math.round(count / elapsed),
    p50Ms: Math.round(pct(0.5) * 100) / 100,
    p99Ms: Math.round(pct(0.99) * 100) / 100,
    maxMs: Math.round((lat[lat.length - 1] ?? 0) * 100) / 100,
    statuses,
    nextOffset: fresh,
  }),
);
