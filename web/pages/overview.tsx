import { useEffect, useRef } from "preact/hooks";
import { useSignal } from "@preact/signals";
import "uplot/dist/uPlot.min.css";
import { api, errorText, isOperator } from "../api";
import { useResource } from "../resource";
import { fmtAge, fmtDate, fmtNum, zone } from "../format";
import { pauseWords } from "./devices";
import { PRIORITIES_BY_RANK } from "../../src/domain/statuses";
import { dayAxis, dayPoints, dayText } from "../day-axis";
import { healthWarnings, replicationText, statusWarnings, type Health } from "../warnings";
import type { Answer, OverviewInfo } from "../api-types";
import { cliCommand } from "../cli";
import { BusinessNameAsk } from "./settings-business";

const PRIORITIES = PRIORITIES_BY_RANK;

interface OverviewData extends OverviewInfo {
  health: Health;
  /** Phones paused after a failure they reported, with why (docs/phones.md, "When a phone or SIM is paused"). */
  paused: Array<{ id: string; text: string }>;
}

/** Two requests: the Overview's own answer and the server's health (docs/api-decisions.md, "The dashboard never locks itself out; honest status"). */
async function loadOverview(): Promise<OverviewData> {
  const [o, health, devices] = await Promise.all([
    api.get("/v1/overview", { query: { timezone: zone } }),
    fetch("/health").then((r) => r.json() as Promise<Health>),
    api.get("/v1/devices").catch(() => null),
  ]);
  const paused = (devices?.data.devices ?? []).flatMap((d) => {
    const c = d.capacity;
    const out: Array<{ id: string; text: string }> = [];
    if (c.pausedUntil) out.push({ id: `paused-${d.id}`, text: `“${d.name}” is paused until ${fmtDate(c.pausedUntil)}. ${pauseWords(c.pauseReason)}` });
    else
      for (const sim of c.sims) {
        if (sim.pausedUntil) out.push({ id: `paused-${d.id}-${sim.slot}`, text: `SIM ${sim.slot || 1} of “${d.name}” is paused until ${fmtDate(sim.pausedUntil)}. ${pauseWords(sim.pauseReason)}` });
      }
    return out;
  });
  return { ...o.data, health, paused };
}

export function Overview() {
  const { data, error } = useResource(loadOverview, [], { onLoad: (d) => (cliCommand.value = d.cliCommand) });
  const now = Date.now();
  const d = data.value;
  const warnings = d ? healthWarnings(d.health, d.queue.oldestDueAt, now, fmtAge) : [];
  const status = d ? statusWarnings({ ...d, cliCommand: isOperator() ? d.cliCommand : null }) : [];
  return (
    <section>
      <h1>Overview</h1>
      <BusinessNameAsk />
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      {!d && !error.value ? <p role="status">Loading…</p> : null}
      {d ? (
        <>
          <div class="warnings" aria-live="polite">
            {warnings.length || status.length || d.paused.length ? (
              <ul class="warning-list">
                {d.paused.map((w) => (
                  <li key={w.id} class="warning" data-warning="phone-paused">
                    {w.text} <a href="/devices">See your phones</a>
                  </li>
                ))}
                {status.map((w) => (
                  <li key={w.id} class="warning" data-warning={w.id}>
                    {w.text} {w.link ? <a href={w.link.href}>{w.link.text}</a> : null}
                  </li>
                ))}
                {warnings.map((w) => (
                  <li key={w} class="warning">{w}</li>
                ))}
              </ul>
            ) : (
              <p class="ok">No warnings: the server is healthy.</p>
            )}
          </div>
          <div class="tiles">
            <Tile label="Queued" value={fmtNum(d.queue.queued)} />
            <Tile label="Due now" value={fmtNum(d.queue.queued - d.queue.scheduled)} />
            <Tile label="Scheduled for later" value={(d.queue.scheduledCapped ? "≥ " : "") + fmtNum(d.queue.scheduled)} />
            <Tile label="Oldest due" value={d.queue.oldestDueAt ? fmtAge(now - Date.parse(d.queue.oldestDueAt)) : "none"} />
            <Tile label="Sent today" value={fmtNum(d.today.sent)} />
            <Tile label="Failed for good today" value={fmtNum(d.today.failed)} />
            <Tile label="Failed attempts today" value={fmtNum(d.phones.failedAttemptsToday)} href="/devices" />
            <Tile label="Phones online" value={`${fmtNum(d.phones.online)} of ${fmtNum(d.phones.total)}`} href="/devices" />
            <Tile label="Last backup" value={backupAge(d.health, fmtAge)} />
            <Tile label="Replica" value={replicaTile(d.health, fmtAge)} href="/settings/server#replication" />
          </div>
          <p class="hint">
            “Failed for good” counts today’s texts that will not be tried again. “Failed attempts” counts every time a phone could not send a text today, including texts that were then tried again and sent; the Devices page shows the same figure per phone.
          </p>
          {d.health.replication ? <p class="hint" data-testid="replication-line">{replicationText(d.health.replication, fmtAge)}</p> : null}
          <h2>Queue by priority</h2>
          <table>
            <thead>
              <tr>
                <th scope="col">Priority</th>
                <th scope="col" class="num">Queued</th>
              </tr>
            </thead>
            <tbody>
              {PRIORITIES.map((p) => (
                <tr key={p}>
                  <th scope="row">{p}</th>
                  <td class="num">{fmtNum(d.queue.byPriority[p])}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <h2>Last 7 days</h2>
          <WeekChart week={d.week} />
        </>
      ) : null}
    </section>
  );
}

function Tile(props: { label: string; value: string; href?: string }) {
  return (
    <div class="tile">
      <span class="tile-label">{props.href ? <a href={props.href}>{props.label}</a> : props.label}</span>
      <span class="tile-value">{props.value}</span>
    </div>
  );
}

function replicaTile(h: Health, age: (ms: number) => string): string {
  const r = h.replication;
  if (!r || r.state === "off") return "off";
  if (r.state === "starting") return "starting";
  if (r.state === "ok") return "up to date";
  return `${age((r.lagSeconds ?? 0) * 1000)} behind`;
}

function backupAge(h: Health, age: (ms: number) => string): string {
  if (!h.backup) return "off";
  if (h.backup.ageSeconds === null) return "none yet";
  return `${age(h.backup.ageSeconds * 1000)} ago`;
}

function WeekChart(props: { week: OverviewData["week"] }) {
  const box = useRef<HTMLDivElement>(null);
  const failed = useSignal(false);
  useEffect(() => {
    let dispose = () => {};
    let gone = false;
    import("uplot")
      .then(({ default: uPlot }) => {
        if (!gone) dispose = draw(uPlot);
      })
      .catch(() => (failed.value = true));
    return () => {
      gone = true;
      dispose();
    };
  }, [props.week]);
  function draw(uPlot: typeof import("uplot")) {
    const el = box.current;
    if (!el) return () => {};
    const xs = dayPoints(props.week.map((d) => d.date));
    const style = getComputedStyle(document.documentElement);
    const plot = new uPlot(
      {
        width: Math.max(280, el.clientWidth),
        height: 220,
        series: [
          { label: "Day", value: (_u: unknown, v: number | null) => (v == null ? "—" : dayText(v)) },
          { label: "Sent", stroke: style.getPropertyValue("--ok").trim() || "green", width: 2 },
          { label: "Failed for good", stroke: style.getPropertyValue("--bad").trim() || "red", width: 2 },
        ],
        axes: [
          { stroke: style.getPropertyValue("--fg").trim(), ...dayAxis(xs) },
          // Whole texts only: no 0.5 ticks when the counts are small.
          { stroke: style.getPropertyValue("--fg").trim(), values: (_u, splits) => splits.map((v) => (Number.isInteger(v) ? fmtNum(v) : "")) },
        ],
        scales: { x: { time: true } },
      },
      [xs, props.week.map((d) => d.sent), props.week.map((d) => d.failed)],
      el,
    );
    const resize = () => plot.setSize({ width: Math.max(280, el.clientWidth), height: 220 });
    addEventListener("resize", resize);
    return () => {
      removeEventListener("resize", resize);
      plot.destroy();
    };
  }
  return (
    <figure>
      {failed.value ? null : <div ref={box} class="chart" role="img" aria-label="Texts sent and failed for good per day over the last 7 days (the table below has the figures)" />}
      <table>
        <caption>Texts per day</caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            <th scope="col" class="num">Sent</th>
            <th scope="col" class="num">Failed for good</th>
          </tr>
        </thead>
        <tbody>
          {props.week.map((d) => (
            <tr key={d.date}>
              <th scope="row">{d.date}</th>
              <td class="num">{fmtNum(d.sent)}</td>
              <td class="num">{fmtNum(d.failed)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
