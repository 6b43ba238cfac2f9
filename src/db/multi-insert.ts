/**
 * One statement per batch size for inserting (or updating from VALUES) many rows at once: the
 * intake applier's batches (stores/intake-applier.ts and its parts in stores/contacts/ and
 * stores/messages/). Prepared once on the connection, never per batch.
 */
import type { Database, Statement } from "bun:sqlite";

/** Rows per multi-row INSERT statement, largest first (what is left after the largest goes in smaller ones). */
const ROWS_PER_INSERT = [32, 8, 1];

/** INSERT (or UPDATE … FROM VALUES) statements over the same columns for each size in ROWS_PER_INSERT. */
export class MultiInsert {
  private readonly statements: Array<[number, Statement<unknown, any[]>]>;
  /** `tail` follows the VALUES list (an UPDATE … FROM (VALUES …) AS v WHERE …). */
  constructor(sqlite: Database, head: string, row: string, tail = "") {
    this.statements = ROWS_PER_INSERT.map((n) => [n, sqlite.prepare(`${head} VALUES ${Array(n).fill(row).join(", ")}${tail}`)]);
  }
  run(rows: unknown[][]): void {
    let i = 0;
    for (const [n, statement] of this.statements) {
      for (; i + n <= rows.length; i += n) statement.run(...(n === 1 ? rows[i] : rows.slice(i, i + n).flat()));
    }
  }
}
