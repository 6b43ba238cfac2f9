import { useEffect } from "preact/hooks";
import { useSignal, useComputed } from "@preact/signals";
import Papa from "papaparse";
import { api, errorText } from "../api";
import type { Answer } from "../api-types";
import { importTarget } from "../../src/domain/import-columns";
import { readXlsxRows, XlsxError } from "../xlsx";
import { contactLabel, plainProblem } from "../plain-problems";

/** What a column can become: the import's own column names (the server reads them). */
const TARGETS: Array<[string, string]> = [
  ["", "Do not import"],
  ["phoneNumber", "Phone number"],
  ["firstName", "First name"],
  ["lastName", "Last name"],
  ["Name", "Full name (split into first and last)"],
  ["email", "E-mail"],
  ["status", "Status"],
  ["tags", "Tags (separated by , or ;)"],
  ["notes", "Notes"],
  ["source", "Source"],
];
const PREVIEW_ROWS = 5;
/** The whole file is checked by the server (a dry run) this long after the last change of a column's choice. */
const CHECK_AFTER_MS = 400;

interface Parsed {
  header: string[];
  rows: string[][];
}

function guess(header: string): string {
  const t = importTarget(header);
  if (!t || t.kind === "ignored") return "";
  if (t.kind === "fullName") return "Name";
  if (t.kind === "custom") return `customFields.${t.name}`;
  return TARGETS.some(([v]) => v === t.name) ? t.name : "";
}

/**
 * Contacts → Import: the file (CSV, or an Excel workbook's first sheet) is read here first, so the
 * owner says which column is which and sees the first rows (and their problems) before anything is
 * written; the server then imports the re-written CSV (upsert by phone).
 */
export function ContactImport() {
  const file = useSignal<File | null>(null);
  const parsed = useSignal<Parsed | null>(null);
  const mapping = useSignal<string[]>([]);
  const error = useSignal("");
  const busy = useSignal(false);
  const result = useSignal<Answer<"/v1/contacts/import", "post">["data"] | null>(null);
  /** The server's dry run of the whole file with the chosen columns: what the import will do. */
  const check = useSignal<Answer<"/v1/contacts/import", "post">["data"] | null>(null);
  const checking = useSignal(false);

  async function choose(e: Event) {
    const f = (e.target as HTMLInputElement).files?.[0] ?? null;
    file.value = f;
    parsed.value = null;
    result.value = null;
    error.value = "";
    if (!f) return;
    let data: string[][];
    try {
      data = /\.xlsx$/i.test(f.name) ? await readXlsxRows(f) : Papa.parse<string[]>(await f.text(), { skipEmptyLines: "greedy" }).data;
    } catch (e) {
      error.value = e instanceof XlsxError ? e.message : `The file cannot be read: ${errorText(e)}`;
      return;
    }
    if (!data.length) {
      error.value = "The file is empty.";
      return;
    }
    const [header, ...rows] = data;
    parsed.value = { header, rows };
    mapping.value = header.map(guess);
  }

  const preview = useComputed(() => {
    const p = parsed.value;
    if (!p) return null;
    const cols = mapping.value.map((m, i) => ({ m, i })).filter((c) => c.m);
    const phone = mapping.value.indexOf("phoneNumber");
    const problems: string[] = [];
    if (phone < 0) problems.push("Choose which column holds the phone number.");
    // Each row's own problems come from the server's dry run of the whole file (below).
    const rows = p.rows.slice(0, PREVIEW_ROWS).map((r) => cols.map((c) => r[c.i] ?? ""));
    const dup = mapping.value.filter((m, i) => m && mapping.value.indexOf(m) !== i);
    if (dup.length) problems.push(`Two columns are set to ${[...new Set(dup)].join(", ")}: choose one.`);
    return { heads: cols.map((c) => TARGETS.find(([v]) => v === c.m)?.[1] ?? c.m.replace("customFields.", "Custom field ")), rows, problems, total: p.rows.length };
  });

  /** The file as the import is sent: the chosen columns, re-written as CSV. */
  function upload(): { body: BodyInit; type: string } | null {
    const f = file.value;
    if (!f) return null;
    const p = parsed.value;
    if (!p) return { body: f, type: f.type || "application/octet-stream" };
    const keep = mapping.value.map((m, i) => ({ m, i })).filter((c) => c.m);
    return { body: Papa.unparse([keep.map((c) => c.m), ...p.rows.map((r) => keep.map((c) => r[c.i] ?? ""))]), type: "text/csv" };
  }

  // Every change of the columns' choices: the server checks every row as the import would.
  useEffect(() => {
    check.value = null;
    const pv = preview.value;
    if (!pv || pv.problems.length) return;
    let gone = false;
    const timer = setTimeout(async () => {
      const u = upload();
      if (!u) return;
      checking.value = true;
      try {
        const r = await api.post("/v1/contacts/import", { query: { dryRun: "true" }, body: u.body, headers: { "Content-Type": u.type } });
        if (!gone) check.value = r.data;
      } catch (e) {
        if (!gone) error.value = errorText(e);
      } finally {
        if (!gone) checking.value = false;
      }
    }, CHECK_AFTER_MS);
    return () => {
      gone = true;
      clearTimeout(timer);
    };
  }, [parsed.value, mapping.value.join("\u0000")]);

  async function submit() {
    const u = upload();
    if (!u) return;
    busy.value = true;
    error.value = "";
    try {
      const r = await api.post("/v1/contacts/import", { body: u.body, headers: { "Content-Type": u.type } });
      result.value = r.data;
    } catch (e) {
      error.value = errorText(e);
    } finally {
      busy.value = false;
    }
  }

  const pv = preview.value;
  return (
    <section>
      <p>
        <a href="/contacts">← All contacts</a>
      </p>
      <h1>Contacts: import</h1>
      <p>
        A CSV or Excel (.xlsx) file with a header row; from a workbook, its first sheet is read. A contact whose phone number is already known is updated, the others are
        added. You choose below which column is which and see the first rows before anything is saved.
      </p>
      <span class="field">
        <label for="import-file">CSV or Excel file</label>
        <input id="import-file" type="file" accept=".csv,text/csv,.xlsx,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" onChange={choose} />
      </span>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      {parsed.value ? (
        <>
          <h2>1. Which column is which</h2>
          <div class="table-wrap">
            <table class="mapping cards">
              <thead>
                <tr>
                  <th scope="col">Column in the file</th>
                  <th scope="col">First value</th>
                  <th scope="col">Import as</th>
                </tr>
              </thead>
              <tbody>
                {parsed.value.header.map((h, i) => (
                  <tr key={i}>
                    <th scope="row">{h || `(column ${i + 1})`}</th>
                    <td data-label="First value">{parsed.value!.rows[0]?.[i] ?? ""}</td>
                    <td data-label="Import as">
                      <select
                        aria-label={`Import column ${h || i + 1} as`}
                        value={mapping.value[i]}
                        onChange={(e) => (mapping.value = mapping.value.map((m, j) => (j === i ? (e.target as HTMLSelectElement).value : m)))}
                      >
                        {[...TARGETS, [`customFields.${h}`, `Custom field “${h}”`] as [string, string]].map(([v, t]) => (
                          <option key={v} value={v}>{t}</option>
                        ))}
                      </select>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {pv ? (
            <>
              <h2>2. Preview of the first rows</h2>
              <p>{pv.total} row(s) in the file.</p>
              <div class="table-wrap">
                <table data-testid="import-preview" class="cards">
                  <thead>
                    <tr>
                      {pv.heads.map((h) => (
                        <th scope="col" key={h}>{h}</th>
                      ))}
                    </tr>
                  </thead>
                  <tbody>
                    {pv.rows.map((r, n) => (
                      <tr key={n}>
                        {r.map((v, j) => (
                          <td key={j} data-label={pv.heads[j]}>{v}</td>
                        ))}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              {pv.problems.length ? (
                <ul class="warning-list" aria-label="Problems found">
                  {pv.problems.map((x) => (
                    <li class="warning" key={x}>{x}</li>
                  ))}
                </ul>
              ) : null}
              <h2>3. What the import will do</h2>
              {checking.value && !check.value ? <p role="status">Checking every row…</p> : null}
              {check.value ? (
                <div role="status" data-testid="import-check">
                  <p>
                    Every row checked, nothing saved yet: {check.value.created} to add, {check.value.updated} to update,{" "}
                    {new Set(check.value.errors.map((x) => x.row)).size} row(s) will be refused.
                  </p>
                  {check.value.errors.length ? (
                    <ul class="warning-list" aria-label="Rows that will be refused">
                      {check.value.errors.map((x, i) => (
                        <li class="warning" key={i}>
                          Row {x.row}: {plainProblem(x.field, x.message, contactLabel)}
                        </li>
                      ))}
                    </ul>
                  ) : null}
                </div>
              ) : null}
            </>
          ) : null}
        </>
      ) : null}
      {file.value ? (
        <p>
          <button type="button" disabled={busy.value || (pv ? pv.problems.length > 0 : false)} onClick={submit}>
            Import contacts
          </button>
        </p>
      ) : null}
      {result.value ? (
        <div role="status" class="notice">
          <p>
            <strong>
              Imported: {result.value.created} added, {result.value.updated} updated, {new Set(result.value.errors.map((x) => x.row)).size} row(s) refused.
            </strong>
          </p>
          {result.value.errors.length ? (
            <ul>
              {result.value.errors.map((x, i) => (
                <li key={i}>
                  Row {x.row}: {plainProblem(x.field, x.message, contactLabel)}
                </li>
              ))}
            </ul>
          ) : null}
          <p>
            <a href="/contacts">See the contacts</a>
          </p>
        </div>
      ) : null}
    </section>
  );
}
