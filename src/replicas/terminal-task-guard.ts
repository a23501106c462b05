/**
 * Keeps a final A2A task final in the SDK's `DatabaseTaskStore` on PostgreSQL, whose `save` is a
 * plain upsert: a row trigger keeps a final status whatever a late write brings, and lets an orphan
 * marking change the status only (docs/decisions.md, "Scale-out: the store race in full").
 * Late-persisted artifacts still pass: they were produced before the stop.
 */
import { loadPg } from "./postgres-transport.js";
import { REPLICA_DEFAULTS } from "./transport.js";

/** acp-cancel/a2a's `ORPHANED_MARK` (a binding imports no other binding; the replica tests tie them). */
const ORPHANED_MARK = "acpCancelOrphaned";

const FINAL_STATES = ["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"];

export interface TerminalGuardOptions {
  /** The store's table (default "tasks", the SDK's `TASK_TABLE`). */
  tableName?: string;
}

/**
 * Installs (idempotently) the trigger on the task table, which must exist already (the SDK's
 * `a2a-db upgrade` creates it). An operator step, like the SDK's own migrations.
 */
export async function guardTerminalTaskStates(url: string, options: TerminalGuardOptions = {}): Promise<void> {
  const table = options.tableName ?? "tasks";
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(table)) throw new Error(`acp-cancel/replicas: "${table}" is not a plain table name`);
  const pg = await loadPg();
  // A server that never answers the login fails this as it fails the bus's connections.
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: REPLICA_DEFAULTS.operationMs });
  await client.connect();
  try {
    const states = FINAL_STATES.map((state) => `'${state}'`).join(", ");
    await client.query(`
      CREATE OR REPLACE FUNCTION acp_cancel_keep_final_task() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.status::jsonb #> '{message,metadata,${ORPHANED_MARK}}' IS NOT NULL THEN
          -- an orphan marking changes the status of the current row, nothing else (and never a final one)
          IF OLD.status_state IN (${states}) THEN RETURN OLD; END IF;
          NEW.context_id := OLD.context_id;
          NEW.artifacts := OLD.artifacts;
          NEW.history := OLD.history;
          NEW.metadata := OLD.metadata;
        ELSIF OLD.status_state IN (${states}) THEN
          -- a final status is never replaced: keep it, take the rest (late-persisted artifacts)
          NEW.status_state := OLD.status_state;
          NEW.status := OLD.status;
          NEW.status_last_updated := OLD.status_last_updated;
        END IF;
        RETURN NEW;
      END $$`);
    await client.query("BEGIN");
    await client.query(`DROP TRIGGER IF EXISTS acp_cancel_keep_final_task ON "${table}"`);
    await client.query(
      `CREATE TRIGGER acp_cancel_keep_final_task BEFORE UPDATE ON "${table}" FOR EACH ROW EXECUTE FUNCTION acp_cancel_keep_final_task()`,
    );
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    await client.end();
  }
}
