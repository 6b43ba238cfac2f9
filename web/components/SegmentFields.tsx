import { splitTags } from "../../src/domain/tags";
import type { RequestBody } from "../api-types";
import { errAttrs, FieldError, type ApiFieldErrors } from "./FieldError";

/**
 * A contact's statuses (src/domain/contact-update.ts's CONTACT_STATUSES, which `tsc -p web`
 * checks this list against): that module validates phone numbers, and importing it would put
 * libphonenumber's metadata into the dashboard's first load.
 */
export const CONTACT_STATUSES = ["new", "contacted", "responded", "converted"] as const satisfies ReadonlyArray<import("../../src/domain/contact-update").ContactStatus>;

/** The API's `segment` (POST /v1/broadcasts and an automation's start take the same). */
type Segment = NonNullable<RequestBody<"/v1/broadcasts", "post">["segment"]>;

/** Which contacts, as the broadcasts' segment filters (status, all these tags, from a form, matching). */
export interface SegmentDraft {
  status: string;
  tags: string;
  formId: string;
  search: string;
}

/** The API's `segment` object: only the filters that are set (none = every contact). */
export function segmentOf(d: SegmentDraft): Segment {
  const s: Segment = {};
  if (d.status) s.status = d.status as Segment["status"];
  const tags = splitTags(d.tags);
  if (tags.length) s.tags = tags;
  if (d.formId) s.formId = d.formId;
  if (d.search.trim()) s.search = d.search.trim();
  return s;
}

/** The segment's inputs in a fieldset "Which contacts"; the API's errors (`segment.tags`…) under each. */
export function SegmentFields(props: { idPrefix: string; value: SegmentDraft; forms: Array<{ id: string; name: string }>; errors: ApiFieldErrors; onChange: (v: SegmentDraft) => void }) {
  const p = props.idPrefix;
  const v = props.value;
  const set = (k: keyof SegmentDraft) => (e: Event) => props.onChange({ ...v, [k]: (e.target as HTMLInputElement | HTMLSelectElement).value });
  const errs = props.errors;
  return (
    <fieldset class="choices">
      <legend>Which contacts</legend>
      <span class="field">
        <label for={`${p}-status`}>Contact status</label>
        <select id={`${p}-status`} value={v.status} onChange={set("status")} {...errAttrs(errs, "segment.status", `${p}-status-error`)}>
          <option value="">Any</option>
          {CONTACT_STATUSES.map((s) => (
            <option key={s} value={s}>{s}</option>
          ))}
        </select>
        <FieldError errors={errs} name="segment.status" id={`${p}-status-error`} />
      </span>
      <span class="field">
        <label for={`${p}-tags`}>With all these tags</label>
        <input id={`${p}-tags`} value={v.tags} onInput={set("tags")} placeholder="vip, spring" {...errAttrs(errs, "segment.tags", `${p}-tags-error`)} />
        <FieldError errors={errs} name="segment.tags" id={`${p}-tags-error`} />
      </span>
      <span class="field">
        <label for={`${p}-form`}>From form</label>
        <select id={`${p}-form`} value={v.formId} onChange={set("formId")} {...errAttrs(errs, "segment.formId", `${p}-form-error`)}>
          <option value="">Any form</option>
          {props.forms.map((f) => (
            <option key={f.id} value={f.id}>{f.name}</option>
          ))}
        </select>
        <FieldError errors={errs} name="segment.formId" id={`${p}-form-error`} />
      </span>
      <span class="field">
        <label for={`${p}-search`}>Matching (name, e-mail, phone)</label>
        <input id={`${p}-search`} value={v.search} onInput={set("search")} {...errAttrs(errs, "segment.search", `${p}-search-error`)} />
        <FieldError errors={errs} name="segment.search" id={`${p}-search-error`} />
      </span>
    </fieldset>
  );
}
