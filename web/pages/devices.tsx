import { useEffect, useRef } from "preact/hooks";
import { useSignal } from "@preact/signals";
import { api, can, errorText, isPerson } from "../api";
import { useResource } from "../resource";
import { act } from "../act";
import type { Answer, Device } from "../api-types";
import { fmtAge, fmtDate, fmtNum } from "../format";
import { path } from "../router";
import { useLiveMessages } from "../live";
import { Confirm } from "../components/Confirm";
import { AddPhone } from "./add-phone";

/** A phone as GET /v1/devices answers it. */

/** Online state and last seen change without any message changing: read again this often. */
const REFRESH_MS = 30_000;
const RATE_MAX = 10_000;

export function Devices() {
  if (path.value.split("/")[2] === "add") return <AddPhone />;
  return <DeviceList />;
}

function DeviceList() {
  const notice = useSignal("");
  const editing = useSignal<Device | null>(null);
  const removing = useSignal<Device | null>(null);
  const now = useSignal(Date.now());
  const { data: devices, error, load } = useResource(() => api.get("/v1/devices").then((r) => r.data.devices), [], { onLoad: () => (now.value = Date.now()) });
  // Today's counts change with every report a phone makes: the live feed says when.
  useLiveMessages(() => load());
  useEffect(() => {
    const timer = setInterval(load, REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
  async function remove() {
    const d = removing.value;
    removing.value = null;
    if (!d) return;
    await act(notice, () => api.delete("/v1/devices/{id}", { path: { id: d.id } }), () => `${d.name} was removed. It can no longer fetch texts; any it held go to your other phones.`, load);
  }
  const list = devices.value;
  const admin = can("devices.write");
  return (
    <section>
      <div class="page-head">
        <h1>Devices</h1>
        {admin && list && list.length > 0 ? (
          <a class="button-link" href="/devices/add">
            Add a phone
          </a>
        ) : null}
      </div>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      <p role="status" aria-live="polite" class={notice.value ? "notice" : "visually-hidden"}>
        {notice.value}
      </p>
      {!list && !error.value ? <p role="status">Loading…</p> : null}
      {list && list.length === 0 ? <EmptyState admin={admin} /> : null}
      {list && list.length > 0 ? (
        <>
          <p class="summary">
            {list.filter((d) => d.online).length} of {list.length} {list.length === 1 ? "phone" : "phones"} online. A phone is online while it keeps a live connection or
            has asked for work in the last few minutes. “Failed attempts today” counts every time the phone could not send a text today, including texts that were then tried again and sent (the Overview shows the same total).
          </p>
          <div class="table-wrap wide-only">
            <table class="devices">
              <caption class="visually-hidden">Your phones</caption>
              <thead>
                <tr>
                  <th scope="col">Phone</th>
                  <th scope="col">State</th>
                  <th scope="col">Last seen</th>
                  <th scope="col" class="num">Battery</th>
                  <th scope="col" class="num">Sent today</th>
                  <th scope="col" class="num">Failed attempts today</th>
                  <th scope="col">This hour</th>
                  {admin ? <th scope="col">Actions</th> : null}
                </tr>
              </thead>
              <tbody>
                {list.map((d) => (
                  <tr key={d.id}>
                    <th scope="row">
                      {d.name}
                      <span class="hint device-kind">{d.kind === "smsgate" ? `SMSGate app${d.appVersion ? " " + d.appVersion : ""}` : "Hand-built recipe"}</span>
                    </th>
                    <td>
                      <span class={`badge ${d.online ? "status-sent" : "status-failed"}`}>{d.online ? "Online" : "Offline"}</span>
                    </td>
                    <td>{d.lastSeenAt ? <span title={fmtDate(d.lastSeenAt)}>{fmtAge(now.value - Date.parse(d.lastSeenAt))} ago</span> : "never"}</td>
                    <td class="num">{d.battery === null ? "—" : `${d.battery} %`}</td>
                    <td class="num">{fmtNum(d.sentToday)}</td>
                    <td class={`num${d.failedToday > 0 ? " status-failed" : ""}`}>{fmtNum(d.failedToday)}</td>
                    <td>
                      <Budget device={d} />
                    </td>
                    {admin ? (
                      <td class="device-actions">
                        <Actions device={d} onEdit={() => (editing.value = d)} onRemove={() => (removing.value = d)} />
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {/* On a phone's screen the same figures as cards (CSS shows one or the other). */}
          <ul class="device-cards narrow-only" aria-label="Your phones">
            {list.map((d) => (
              <li key={d.id} class="device-card">
                <h2>
                  {d.name} <span class={`badge ${d.online ? "status-sent" : "status-failed"}`}>{d.online ? "Online" : "Offline"}</span>
                </h2>
                <p class="hint">{d.kind === "smsgate" ? `SMSGate app${d.appVersion ? " " + d.appVersion : ""}` : "Hand-built recipe"}</p>
                <dl class="facts">
                  <div>
                    <dt>Last seen</dt>
                    <dd>{d.lastSeenAt ? `${fmtAge(now.value - Date.parse(d.lastSeenAt))} ago` : "never"}</dd>
                  </div>
                  <div>
                    <dt>Battery</dt>
                    <dd>{d.battery === null ? "—" : `${d.battery} %`}</dd>
                  </div>
                  <div>
                    <dt>Sent today</dt>
                    <dd>{fmtNum(d.sentToday)}</dd>
                  </div>
                  <div>
                    <dt>Failed attempts today</dt>
                    <dd>{fmtNum(d.failedToday)}</dd>
                  </div>
                  <div>
                    <dt>This hour</dt>
                    <dd>
                      <Budget device={d} />
                    </dd>
                  </div>
                </dl>
                {admin ? (
                  <p class="head-actions">
                    <Actions device={d} onEdit={() => (editing.value = d)} onRemove={() => (removing.value = d)} />
                  </p>
                ) : null}
              </li>
            ))}
          </ul>
          {!admin ? <p class="hint">{isPerson() ? "Only an owner or an admin of the account can add, change or remove phones." : "Signed in with a standard key: adding, changing and removing phones needs an admin key."}</p> : null}
        </>
      ) : null}
      <EditPhone
        device={editing.value}
        onDone={(msg) => {
          editing.value = null;
          if (msg) notice.value = msg;
          load();
        }}
      />
      <Confirm
        open={removing.value !== null}
        title={`Remove ${removing.value?.name ?? "this phone"}?`}
        body="It stops getting texts at once and its token stops working; texts it was holding go to your other phones. To use it again, add it again with a new registration token."
        action="Remove phone"
        onConfirm={remove}
        onCancel={() => (removing.value = null)}
      />
    </section>
  );
}

function Actions(props: { device: Device; onEdit: () => void; onRemove: () => void }) {
  return (
    <>
      <button type="button" class="secondary" aria-label={`Change ${props.device.name}`} onClick={props.onEdit}>
        Change
      </button>{" "}
      <button type="button" class="secondary" aria-label={`Remove ${props.device.name}`} onClick={props.onRemove}>
        Remove
      </button>
    </>
  );
}

function EmptyState(props: { admin: boolean }) {
  return (
    <div class="notice empty-devices">
      <h2>No phones yet</h2>
      <p>
        Textwire does not send texts by itself. A phone you own does it: the free Android app <strong>SMSGate</strong> takes each text from this server, sends it through
        the phone's own SIM card, and reports back whether it went out. Replies people send to that phone show up in Conversations.
      </p>
      <p>Setting up a phone takes about five minutes. Until one is connected, your texts wait in the queue.</p>
      {props.admin ? (
        <a class="button-link" href="/devices/add">
          Add a phone
        </a>
      ) : (
        <p class="hint">{isPerson() ? "Adding a phone is for an owner or an admin of the account: ask one of them." : "Adding a phone needs an admin key: sign in with one, or ask whoever has it."}</p>
      )}
    </div>
  );
}

/** Why a phone or SIM is paused, in the owner's words (docs/phones.md, "When a phone or SIM is paused"). */
export function pauseWords(reason: string | null): string {
  switch (reason) {
    case "android-limit":
      return "Android's own sending limit was reached; it goes on by itself within a minute. To raise the limit, see the phones guide.";
    case "no-service":
      return "The SIM had no signal; texts go from your other phones or SIMs meanwhile.";
    case "radio-off":
      return "The phone's radio is off (airplane mode?); texts go from your other phones or SIMs meanwhile.";
    case "repeated-failures":
      return "Several texts in a row failed; it is tried again after a pause.";
    default:
      return reason ?? "";
  }
}

/** "142 of 200 this hour", each SIM's when there are several, and a pause in plain words. */
function Budget(props: { device: Device }) {
  const c = props.device.capacity;
  const of = (used: number, limit: number) => `${fmtNum(used)} of ${fmtNum(limit)} this hour`;
  return (
    <span class="budget">
      {of(c.used.partsLastHour, c.limits.partsPerHour)}
      {c.sims.length > 1
        ? c.sims.map((sim) => (
            <span key={sim.slot} class="hint">
              SIM {sim.slot}: {of(sim.used.partsLastHour, sim.limits.partsPerHour)}
              {sim.pausedUntil ? ` — paused until ${fmtDate(sim.pausedUntil)}` : ""}
            </span>
          ))
        : null}
      {c.pausedUntil ? (
        <span class="hint status-failed">
          Paused until {fmtDate(c.pausedUntil)}: {pauseWords(c.pauseReason)}
        </span>
      ) : null}
    </span>
  );
}

const LIMIT_FIELDS = [
  ["partsPerMinute", "Per minute", "Android lets an app send 30 a minute; 20 leaves room for your own texts."],
  ["partsPerHour", "Per hour", "Carriers look hard at personal SIMs that send more than a few hundred an hour."],
  ["partsPerDay", "Per day", ""],
  ["newRecipientsPerDay", "New numbers per day", "Numbers this phone has not texted in the last 24 hours."],
] as const;

/** Rename a phone, set its own send rate (empty = the server's default) and its sending limits. */
function EditPhone(props: { device: Device | null; onDone: (message?: string) => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const name = useSignal("");
  const rate = useSignal("");
  const useDefault = useSignal(false);
  const error = useSignal("");
  const limits = useSignal<Record<string, string>>({});
  const d = props.device;
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    if (d) {
      name.value = d.name;
      rate.value = "";
      useDefault.value = false;
      error.value = "";
      const l = d.capacity.limits;
      limits.value = { ...Object.fromEntries(LIMIT_FIELDS.map(([k]) => [k, String(l[k])])), spacingMin: String(l.spacingSeconds.min), spacingMax: String(l.spacingSeconds.max) };
      if (!el.open) el.showModal();
    } else if (el.open) el.close();
  }, [d]);
  async function save(e: Event) {
    e.preventDefault();
    if (!d) return;
    const body: { name?: string; sendRatePerMinute?: number | null; limits?: Record<string, unknown> } = {};
    // Only what the owner changed becomes the phone's own; the server checks every value.
    const own: Record<string, unknown> = {};
    const l = d.capacity.limits;
    for (const [k] of LIMIT_FIELDS) if (limits.value[k] !== String(l[k])) own[k] = Number(limits.value[k]);
    if (limits.value.spacingMin !== String(l.spacingSeconds.min) || limits.value.spacingMax !== String(l.spacingSeconds.max)) {
      own.spacingSeconds = { min: Number(limits.value.spacingMin), max: Number(limits.value.spacingMax) };
    }
    if (Object.keys(own).length) body.limits = own;
    if (name.value.trim() !== d.name) body.name = name.value.trim();
    const r = rate.value.trim();
    if (useDefault.value) body.sendRatePerMinute = null;
    else if (r) {
      const n = Number(r);
      if (!Number.isInteger(n) || n < 1 || n > RATE_MAX) {
        error.value = `The send rate is a whole number of texts a minute, from 1 to ${fmtNum(RATE_MAX)}.`;
        return;
      }
      body.sendRatePerMinute = n;
    }
    if (!Object.keys(body).length) return props.onDone();
    try {
      const res = await api.patch("/v1/devices/{id}", { path: { id: d.id }, json: body });
      const l = res.data.device.capacity.limits;
      props.onDone(`Saved: ${res.data.device.name} sends at most ${fmtNum(Math.min(l.partsPerMinute, res.data.device.sendRatePerMinute))} texts a minute and ${fmtNum(l.partsPerHour)} an hour.`);
    } catch (err) {
      error.value = errorText(err);
    }
  }
  return (
    <dialog ref={ref} aria-labelledby="edit-phone-title" class="confirm" onCancel={() => props.onDone()}>
      <form method="dialog" onSubmit={save}>
        <h2 id="edit-phone-title">Change {d?.name}</h2>
        <span class="field wide">
          <label for="phone-name">Name</label>
          <input id="phone-name" value={name.value} maxLength={100} required onInput={(e) => (name.value = (e.target as HTMLInputElement).value)} />
        </span>
        <span class="field wide">
          <label for="phone-rate">Texts a minute, at most</label>
          <input
            id="phone-rate"
            inputMode="numeric"
            placeholder={d ? String(d.sendRatePerMinute) : ""}
            aria-describedby="phone-rate-hint"
            value={rate.value}
            disabled={useDefault.value}
            onInput={(e) => (rate.value = (e.target as HTMLInputElement).value)}
          />
          <span id="phone-rate-hint" class="hint">
            Now {d ? fmtNum(d.sendRatePerMinute) : ""}. Leave empty to keep it. Carriers may block a SIM that sends too fast; the app applies a new rate after it restarts.
          </span>
        </span>
        <label class="check">
          <input type="checkbox" checked={useDefault.value} onChange={(e) => (useDefault.value = (e.target as HTMLInputElement).checked)} />
          Use the server's default rate instead
        </label>
        <fieldset class="limits">
          <legend>At most this many texts (a long text counts as 2 or more)</legend>
          {LIMIT_FIELDS.map(([k, label, hint]) => (
            <span class="field" key={k}>
              <label for={`limit-${k}`}>{label}</label>
              <input
                id={`limit-${k}`}
                inputMode="numeric"
                value={limits.value[k] ?? ""}
                aria-describedby={hint ? `limit-${k}-hint` : undefined}
                onInput={(e) => (limits.value = { ...limits.value, [k]: (e.target as HTMLInputElement).value })}
              />
              {hint ? (
                <span id={`limit-${k}-hint`} class="hint">
                  {hint}
                </span>
              ) : null}
            </span>
          ))}
          <span class="field">
            <label for="limit-spacing-min">Pause between texts, from (seconds)</label>
            <input id="limit-spacing-min" inputMode="numeric" value={limits.value.spacingMin ?? ""} onInput={(e) => (limits.value = { ...limits.value, spacingMin: (e.target as HTMLInputElement).value })} />
          </span>
          <span class="field">
            <label for="limit-spacing-max">to (seconds)</label>
            <input id="limit-spacing-max" inputMode="numeric" value={limits.value.spacingMax ?? ""} onInput={(e) => (limits.value = { ...limits.value, spacingMax: (e.target as HTMLInputElement).value })} />
          </span>
        </fieldset>
        {error.value ? <p class="error" role="alert">{error.value}</p> : null}
        <div class="dialog-actions">
          <button type="submit">Save</button>
          <button type="button" class="secondary" onClick={() => props.onDone()}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}
