import type { ComponentChildren } from "preact";

/**
 * A list shown as a table on a wide screen and as cards on a narrow one (table.cards in the
 * stylesheet; each cell's data-label names it on a card). `columns` are the header cells in order;
 * a false one is left out (the Actions column only admins get). `caption` names the table for
 * screen readers only. The rows are the children.
 */
export function CardTable(props: { columns: Array<string | false>; caption?: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap">
      <table class="cards">
        {props.caption !== undefined ? <caption class="visually-hidden">{props.caption}</caption> : null}
        <thead>
          <tr>{props.columns.map((c) => (c === false ? null : <th scope="col" key={c}>{c}</th>))}</tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}
