/**
 * The dashboard's names for what the API answers, taken from the generated OpenAPI types
 * (web/api-schema.gen.ts, written by scripts/api-docs.ts from the live document), so a page
 * cannot drift from the API: a renamed or retyped field fails `tsc -p web`. Types only; the
 * bundle holds none of this.
 */
import type { paths } from "./api-schema.gen";

export type Method = "get" | "post" | "put" | "patch" | "delete";
type Json<R> = R extends { content: { "application/json": infer B } } ? B : never;

type Success = 200 | 201 | 202 | 204;
/**
 * The JSON body of an operation's success answer: 200, 201 for a create, 202 for work accepted,
 * null for 204. An operation with two (a dry run's 200 and the real call's 202) answers either,
 * and the page tells them apart by a field.
 */
export type Answer<P extends keyof paths, M extends Method = "get"> = paths[P][M] extends { responses: infer R }
  ? { [C in keyof R & Success]: C extends 204 ? null : Json<R[C]> }[keyof R & Success]
  : never;

/** The addresses that answer method `M`. */
export type PathsWith<M extends Method> = { [P in keyof paths]: paths[P] extends Record<M, object> ? P : never }[keyof paths];
/** The operation behind `M P`. */
export type Op<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;

type Parameters<O> = O extends { parameters: infer X } ? X : never;
type PathParams<O> = Parameters<O> extends { path: infer X } ? NonNullable<X> : never;
type QueryParams<O> = NonNullable<Parameters<O> extends { query?: infer X } ? X : never>;
type Body<O> = O extends { requestBody?: infer B } ? NonNullable<B> : never;
type JsonBody<O> = Body<O> extends { content: { "application/json": infer J } } ? J : never;
type Uploads<O> = Exclude<keyof (Body<O> extends { content: infer C } ? C : never), "application/json">;

/**
 * What a call of operation `O` carries: its path parameters (required when the address has any),
 * its query (every key the document lists, nothing else), its JSON body (required when the
 * operation requires one) or, for an upload, a file `body` with its Content-Type in `headers`.
 */
export type Init<O> = ([PathParams<O>] extends [never] ? { path?: undefined } : { path: PathParams<O> }) &
  ([QueryParams<O>] extends [never] ? { query?: undefined } : { query?: QueryParams<O> }) &
  ([JsonBody<O>] extends [never]
    ? { json?: undefined }
    : O extends { requestBody: object }
      ? [Uploads<O>] extends [never]
        ? { json: JsonBody<O> }
        : { json?: JsonBody<O> }
      : { json?: JsonBody<O> }) &
  ([Uploads<O>] extends [never] ? { body?: undefined } : { body?: NonNullable<RequestInit["body"]> }) & { headers?: Record<string, string> };

/** The optional or required `init` argument of a call of `O`. */
export type InitArgs<O> = {} extends Init<O> ? [init?: Init<O>] : [init: Init<O>];

/** The signed-in session as GET/POST /v1/session answer it. */
export type Session = Answer<"/v1/session">["data"];
/** GET /health. */
export type Health = Answer<"/health">;
/** GET /v1/account: the account, its limits and this month's usage. */
export type AccountInfo = Answer<"/v1/account">["data"];
/** GET /v1/overview: what the Overview shows, in one answer. */
export type OverviewInfo = Answer<"/v1/overview">["data"];
/** GET /v1/admin/backups. */
export type StoredBackups = Answer<"/v1/admin/backups">["data"];
export type ApiKey = Answer<"/v1/api-keys">["data"]["keys"][number];
export type SignedInBrowser = Answer<"/v1/sessions">["data"]["sessions"][number];

/** A form as the list shows it (GET /v1/forms): no fields, template or settings. */
export type FormSummary = Answer<"/v1/forms">["data"]["forms"][number];
/** A whole form (GET /v1/forms/{id}), as the editor loads and saves it. */
export type Form = Answer<"/v1/forms/{id}">["data"]["form"];
export type FormField = Form["fields"][number];

/** GET /v1/messages: one page of messages with its pagination and status summary. */
export type MessageList = Answer<"/v1/messages">;
export type Message = MessageList["data"]["messages"][number];

/** A whole contact (GET /v1/contacts/{id}). */
export type Contact = Answer<"/v1/contacts/{id}">["data"]["contact"];
/** A contact as a list shows it (GET /v1/contacts). */
export type ContactListItem = Answer<"/v1/contacts">["data"]["contacts"][number];
/** One change of a contact's opt-out (GET /v1/contacts/{id}/consent-history). */
export type ConsentEntry = Answer<"/v1/contacts/{id}/consent-history">["data"]["entries"][number];

export type Conversation = Answer<"/v1/conversations">["data"]["conversations"][number];
export type ThreadMessage = Answer<"/v1/conversations/{contactId}">["data"]["messages"][number];

export type Broadcast = Answer<"/v1/broadcasts">["data"]["broadcasts"][number];
/** POST /v1/broadcasts?dryRun=true: the confirmation's figures. */
export type BroadcastPreview = Exclude<Answer<"/v1/broadcasts", "post">["data"], { broadcast: unknown }>;

export type Device = Answer<"/v1/devices">["data"]["devices"][number];
export type RegistrationToken = Answer<"/v1/devices/registration-tokens", "post">["data"];
export type Person = Answer<"/v1/people">["data"]["people"][number];
/** A keyword reply (GET /v1/keyword-replies). */
export type KeywordReply = Answer<"/v1/keyword-replies">["data"]["keywordReplies"][number];

/** The query of `M P`: every parameter the document lists for it. */
export type Query<P extends keyof paths, M extends Method = "get"> = QueryParams<Op<P, M>>;
/** The JSON body `M P` takes. */
export type RequestBody<P extends keyof paths, M extends Method> = JsonBody<Op<P, M>>;
