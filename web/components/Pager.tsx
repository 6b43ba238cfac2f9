/** Previous / next page buttons under a list; nothing when the list fits on one page. */
export function Pager(props: { page: number; totalPages: number; label: string; onPage: (page: number) => void }) {
  const { page, totalPages } = props;
  if (totalPages <= 1) return null;
  return (
    <nav class="pager" aria-label={props.label}>
      <button type="button" class="secondary" disabled={page <= 1} onClick={() => props.onPage(page - 1)}>Previous page</button>
      <span>Page {page} of {totalPages}</span>
      <button type="button" class="secondary" disabled={page >= totalPages} onClick={() => props.onPage(page + 1)}>Next page</button>
    </nav>
  );
}
