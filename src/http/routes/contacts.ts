import { Elysia, t } from "elysia";
import type { AppDeps } from "../../deps";
import { validationError } from "../../errors";
import { authOf, stateOf } from "../context";
import { EnumQuery, IdParam } from "../models/common";
import {
  AnalyticsQuery,
  BulkBody,
  BulkDeleteAnswer,
  BulkIdsBody,
  BulkOptOutAnswer,
  BulkOptOutBody,
  ConsentHistoryAnswer,
  OptOutAnswer,
  OptOutBody,
  ContactAnalyticsAnswer,
  ContactAnswer,
  ContactWithRunsAnswer,
  ContactBody,
  ContactBulkAnswer,
  ContactCreateBody,
  ContactDeleted,
  ContactListAnswer,
  type ContactList,
  type ContactMessages,
  ContactListQuery,
  ContactMessagesAnswer,
  ExportFile,
  ExportQuery,
  ImportAnswer,
  ImportCsv,
  ImportUpload,
  ImportXlsx,
  PagingQuery,
  SearchBody,
} from "../models/contacts";
import { parseAnalyticsQuery, parseListQuery, parseSearchBody } from "../../domain/contact-query";
import { enumError, parsePaging } from "../../domain/query-params";
import type { FieldError } from "../../domain/submission";
import { readImportUpload } from "../import-upload";
import { importBatches } from "../../services/contact-import";
import { IMPORT_BODY_LIMIT } from "../server";
import { routeAccess } from "../plugins/route-access";
import { actorOf } from "../../domain/permissions";

/** The fixed paths (export, analytics, bulk…, search, import) are declared before `/:id`. */
export function contactsRoutes(deps: AppDeps) {
  return new Elysia({ name: "contacts-routes", prefix: "/v1/contacts" })
    .use(routeAccess)
    .get(
      "/export",
      ({ request, query }) => {
        const x = deps.exports.open(authOf(request).accountId, query);
        return new Response(x.body, {
          headers: {
            "Content-Type": x.contentType,
            "Content-Disposition": `attachment; filename=${x.filename}`,
            "Cache-Control": "no-store",
          },
        });
      },
      { permission: "contacts.export", rateLimit: "api-key", query: ExportQuery, response: { 200: ExportFile }, detail: { summary: "Export contacts as JSON, CSV or XLSX, streamed (admin)", tags: ["Contacts"] } },
    )
    .get(
      "/analytics",
      ({ request, query }) => {
        const q = parseAnalyticsQuery(query);
        if (!q.ok) throw validationError(q.errors);
        // The spec lists the figures directly ("Response: statusDistribution, …"); they are also
        // under data.analytics, the shape of GET /messages/analytics.
        const analytics = deps.contacts.analytics(authOf(request).accountId, q.value);
        return { status: "success", data: { ...analytics, analytics } };
      },
      { permission: "contacts.read", rateLimit: "api-key", query: AnalyticsQuery, response: { 200: ContactAnalyticsAnswer }, detail: { summary: "Contact analytics: status distribution, conversion, response time, top forms", tags: ["Contacts"] } },
    )
    .put(
      "/bulk",
      ({ request, body }) => ({ status: "success", data: deps.contacts.bulk(authOf(request).accountId, body) }),
      { permission: "contacts.write", rateLimit: "api-key", body: BulkBody, response: { 200: ContactBulkAnswer }, detail: { summary: "Apply one update to up to 1000 contacts", tags: ["Contacts"] } },
    )
    .post(
      "/bulk/opt-out",
      ({ request, body }) => {
        const auth = authOf(request);
        const data = deps.contacts.bulkOptOut(auth.accountId, body, actorOf(auth));
        return { status: "success", message: `${data.optedOut} contact(s) opted out`, data };
      },
      {
        permission: "contacts.write", rateLimit: "api-key", body: BulkOptOutBody, response: { 200: BulkOptOutAnswer },
        detail: { summary: "Opt up to 1000 contacts out by hand, with one reason (recorded in each consent history)", tags: ["Contacts"] },
      },
    )
    .post(
      "/bulk/delete",
      ({ request, body }) => {
        const data = deps.contacts.bulkDelete(authOf(request).accountId, body);
        return { status: "success", message: `${data.deleted} contact(s) and their message history deleted`, data };
      },
      {
        permission: "contacts.delete", rateLimit: "api-key", body: BulkIdsBody, response: { 200: BulkDeleteAnswer },
        detail: { summary: "Delete up to 1000 contacts with their message history and conversations (admin)", tags: ["Contacts"] },
      },
    )
    .post(
      "/search",
      ({ request, body }) => {
        const q = parseSearchBody(body);
        if (!q.ok) throw validationError(q.errors);
        return { status: "success", data: deps.contacts.list(authOf(request).accountId, q.value) as ContactList };
      },
      { permission: "contacts.read", rateLimit: "api-key", body: SearchBody, response: { 200: ContactListAnswer }, detail: { summary: "Search contacts by exact custom field values (and tags, status)", tags: ["Contacts"] } },
    )
    .post(
      "/import",
      async ({ request, query }) => {
        const dryRun = query.dryRun === "true";
        if (query.dryRun !== undefined && query.dryRun !== "true" && query.dryRun !== "false") throw validationError([enumError("dryRun", ["true", "false"], String(query.dryRun).slice(0, 100))]);
        const upload = await readImportUpload(request, IMPORT_BODY_LIMIT);
        const { refusedRows, ...data } = await deps.contacts.importRows(authOf(request).accountId, importBatches(upload.format, upload.body), { dryRun });
        if (dryRun) {
          return { status: "success", message: `Checked, nothing saved: ${data.created} would be created, ${data.updated} updated, ${refusedRows ?? 0} rows refused`, data: { ...data, dryRun: true } };
        }
        return { status: "success", message: `Imported: ${data.created} created, ${data.updated} updated, ${refusedRows ?? 0} rows refused`, data };
      },
      {
        permission: "contacts.import", rateLimit: "api-key",
        parse: "none",
        query: t.Object({ dryRun: EnumQuery(["true", "false"], "true: check every row as the import would and save nothing (the answer lists each row that would be refused, with its row number and reason)") }, { additionalProperties: true }),
        response: { 200: ImportAnswer },
        detail: {
          summary: "Import contacts from CSV or XLSX (sent as is or as a form upload); upsert by phone (admin)",
          tags: ["Contacts"],
          requestBody: {
            required: true,
            content: {
              "text/csv": { schema: ImportCsv },
              "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": { schema: ImportXlsx },
              "multipart/form-data": { schema: ImportUpload },
            },
          },
        },
      },
    )
    .get(
      "/",
      ({ request, query }) => {
        const q = parseListQuery(query);
        if (!q.ok) throw validationError(q.errors);
        return { status: "success", data: deps.contacts.list(authOf(request).accountId, q.value) as ContactList };
      },
      { permission: "contacts.read", rateLimit: "api-key", query: ContactListQuery, response: { 200: ContactListAnswer }, detail: { summary: "List contacts", tags: ["Contacts"] } },
    )
    .post(
      "/",
      ({ request, body, set }) => {
        const auth = authOf(request);
        const contact = deps.contacts.create(auth.accountId, body, { ipAddress: stateOf(request).clientIp, actor: actorOf(auth) });
        set.status = 201;
        return { status: "success", message: "Contact created", data: { contact } };
      },
      { permission: "contacts.write", rateLimit: "api-key", body: ContactCreateBody, response: { 201: ContactAnswer }, detail: { summary: "Create a contact", tags: ["Contacts"], "x-errors": ["DUPLICATE_PHONE_NUMBER"] } },
    )
    .get(
      "/:id",
      ({ request, params }) => {
        const accountId = authOf(request).accountId;
        const contact = deps.contacts.get(accountId, params.id);
        return { status: "success", data: { contact, automationRuns: deps.automations.contactRuns(accountId, contact.id) } };
      },
      {
        permission: "contacts.read", rateLimit: "api-key", params: IdParam, response: { 200: ContactWithRunsAnswer },
        detail: { summary: "Get a contact, with its automation runs (newest first, at most 50)", tags: ["Contacts"] },
      },
    )
    .get(
      "/:id/messages",
      ({ request, params, query }) => {
        const errors: FieldError[] = [];
        const paging = parsePaging(query, errors);
        if (errors.length) throw validationError(errors);
        return { status: "success", data: deps.contacts.messages(authOf(request).accountId, params.id, paging) as ContactMessages };
      },
      { permission: "contacts.read", rateLimit: "api-key", params: IdParam, query: PagingQuery, response: { 200: ContactMessagesAnswer }, detail: { summary: "A contact's message history, newest first", tags: ["Contacts"] } },
    )
    .get(
      "/:id/consent-history",
      ({ request, params, query }) => {
        const errors: FieldError[] = [];
        const paging = parsePaging(query, errors);
        if (errors.length) throw validationError(errors);
        return { status: "success", data: deps.contacts.consentHistory(authOf(request).accountId, params.id, paging) };
      },
      { permission: "contacts.read", rateLimit: "api-key", params: IdParam, query: PagingQuery, response: { 200: ConsentHistoryAnswer }, detail: { summary: "A contact's consent history: each opt-out and opt-in, how, why, who and when; newest first", tags: ["Contacts"] } },
    )
    .post(
      "/:id/opt-out",
      ({ request, params, body }) => {
        const auth = authOf(request);
        const data = deps.contacts.setOptOutByHand(auth.accountId, params.id, true, body, actorOf(auth));
        return { status: "success", message: data.changed ? "Opted out: no more texts to this number" : "Already opted out; nothing changed", data };
      },
      {
        permission: "contacts.write", rateLimit: "api-key", params: IdParam, body: OptOutBody, response: { 200: OptOutAnswer },
        detail: { summary: "Opt a contact out by hand (as a STOP: queued texts cancelled, contact.opted_out), with an optional reason", tags: ["Contacts"] },
      },
    )
    .post(
      "/:id/opt-in",
      ({ request, params, body }) => {
        const auth = authOf(request);
        const data = deps.contacts.setOptOutByHand(auth.accountId, params.id, false, body, actorOf(auth));
        return { status: "success", message: data.changed ? "Opted back in: texts to this number are allowed again" : "Not opted out; nothing changed", data };
      },
      {
        permission: "contacts.write", rateLimit: "api-key", params: IdParam, body: OptOutBody, response: { 200: OptOutAnswer },
        detail: { summary: "Opt a contact back in by hand (as a START, without the reply text); the reason is required", tags: ["Contacts"] },
      },
    )
    .put(
      "/:id",
      ({ request, params, body }) => ({
        status: "success",
        message: "Contact updated",
        data: { contact: deps.contacts.update(authOf(request).accountId, params.id, body, actorOf(authOf(request))) },
      }),
      { permission: "contacts.write", rateLimit: "api-key", params: IdParam, body: ContactBody, response: { 200: ContactAnswer }, detail: { summary: "Update a contact (tags replace, customFields merge)", tags: ["Contacts"], "x-errors": ["DUPLICATE_PHONE_NUMBER"] } },
    )
    .delete(
      "/:id",
      ({ request, params }) => {
        const { deletedId } = deps.contacts.delete(authOf(request).accountId, params.id);
        return { status: "success", message: "Contact and its message history deleted", data: { deletedId } };
      },
      { permission: "contacts.delete", rateLimit: "api-key", params: IdParam, response: { 200: ContactDeleted }, detail: { summary: "Delete a contact and its message history (admin)", tags: ["Contacts"] } },
    );
}
