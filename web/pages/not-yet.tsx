/** A page of the navigation that this version of the dashboard does not have yet: says so plainly. */
export function NotYet(props: { name: string; api?: string }) {
  return (
    <section>
      <h1>{props.name}</h1>
      <p class="notice">
        This page is not in this version of the dashboard yet.
        {props.api ? (
          <>
            {" "}
            Everything it will show is available through the API at <code>{props.api}</code> — see the <a href="/v1/docs">API documentation</a>.
          </>
        ) : null}
      </p>
    </section>
  );
}
