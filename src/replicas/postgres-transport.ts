/**
 * The PostgreSQL backend: LISTEN/NOTIFY, unlogged tables of remembered cancels and owner leases
 * (rows carry their expiry) and of claim records. A `pg` pool for commands, one client that listens.
 */
import { Socket } from "node:net";
import type { Client, Pool } from "pg";
import type { CancelBusOptions, OrphanedClaim } from "./cancel-bus.js";
import type { BusMessage, BusTransport, CancelMessage, KeyHolder, LeasedKey, RawListener } from "./transport.js";
import { reconnectDelay, REPLICA_DEFAULTS } from "./transport.js";

type Pg = typeof import("pg");

export async function loadPg(): Promise<Pg> {
  try {
    const module = await import("pg");
    return (module as unknown as { default?: Pg }).default ?? module;
  } catch (error) {
    throw new Error("acp-cancel/replicas: the PostgreSQL bus needs the optional peer dependency `pg` (npm install pg)", { cause: error });
  }
}

const SWEEP_EVERY_MS = 10_000;

export class PostgresTransport implements BusTransport {
  readonly backend = "postgres";
  private pg: Pg | undefined;
  private pool: Pool | undefined;
  private listener: Client | undefined;
  /** The listening client while it connects and sets up (a server that stops answering holds it there). */
  private setup: Client | undefined;
  private reconnect: ReturnType<typeof setTimeout> | undefined;
  private retries = 0;
  private closed = false;
  private lastSweep = 0;
  private readonly sockets = new Set<Socket>();
  private readonly early: string;
  private readonly owners: string;
  private readonly claims: string;
  /** `namespace`, the channel and table-name prefix, is a plain SQL identifier. */
  private readonly options: { url: string; namespace: string; operationMs: number };

  constructor(url: string, options: CancelBusOptions) {
    const { namespace = REPLICA_DEFAULTS.namespace, operationMs = REPLICA_DEFAULTS.operationMs } = options;
    if (!/^[a-z_][a-z0-9_]{0,40}$/.test(namespace)) {
      throw new Error(`acp-cancel/replicas: namespace "${namespace}" must be a lower-case SQL identifier for PostgreSQL`);
    }
    this.options = { url, namespace, operationMs };
    this.early = `${namespace}_early`;
    this.owners = `${namespace}_owner`;
    this.claims = `${namespace}_claim`;
  }

  async connect(onMessage: RawListener, onConnectedChange: (connected: boolean) => void): Promise<void> {
    const pg = await loadPg();
    this.pg = pg;
    this.pool = new pg.Pool({ ...this.connection(), max: 10 });
    this.pool.on("error", () => undefined); // an idle client lost its server: the pool drops it
    await this.listen(onMessage, onConnectedChange);
  }

  /** (Re)connects the listening client; on loss, reports it and retries. */
  private async listen(onMessage: RawListener, onConnectedChange: (connected: boolean) => void): Promise<void> {
    if (this.closed || this.pg === undefined) return;
    const client = new this.pg.Client(this.connection());
    let lost = false;
    const onLost = () => {
      if (lost) return;
      lost = true;
      if (this.listener === client) this.listener = undefined;
      onConnectedChange(false);
      client.end().catch(() => undefined);
      if (this.closed) return;
      const delay = reconnectDelay(this.retries++);
      this.reconnect = setTimeout(() => void this.listen(onMessage, onConnectedChange).catch(() => undefined), delay);
    };
    client.on("error", onLost);
    client.on("end", onLost);
    client.on("notification", (notice) => onMessage(notice.payload));
    this.setup = client;
    try {
      await client.connect();
      await this.ensureTables(client);
      await client.query(`LISTEN ${this.options.namespace}`);
    } catch (error) {
      onLost();
      throw error;
    } finally {
      if (this.setup === client) this.setup = undefined;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
    this.retries = 0;
    onConnectedChange(true);
  }

  private async ensureTables(client: Client): Promise<void> {
    const columns = "(key text PRIMARY KEY, value text NOT NULL, expires_at timestamptz NOT NULL)";
    const tables: [string, string][] = [[this.early, columns], [this.owners, columns], [this.claims, "(key text PRIMARY KEY, replica text NOT NULL, record text NOT NULL)"]];
    for (const [table, definition] of tables) {
      try {
        await client.query(`CREATE UNLOGGED TABLE IF NOT EXISTS ${table} ${definition}`);
      } catch (error) {
        // Two replicas creating the table at once: the loser sees a duplicate, which is fine.
        const code = (error as { code?: string }).code;
        if (code !== "23505" && code !== "42P07") throw error;
      }
    }
  }

  async publish(message: BusMessage): Promise<void> {
    await this.query("SELECT pg_notify($1, $2)", [this.options.namespace, JSON.stringify(message)]);
  }

  async rememberAndPublish(cancels: readonly CancelMessage[], ms: number): Promise<void> {
    // One statement: notifications go out at commit, with the early rows visible. A key twice in
    // one batch is remembered once (ON CONFLICT cannot touch a row twice).
    const messages = cancels.map((cancel) => JSON.stringify(cancel));
    const early = new Map(cancels.map(({ key }, i) => [key, messages[i] as string]));
    await this.query(
      `WITH early AS (
         INSERT INTO ${this.early} (key, value, expires_at)
         SELECT k, v, now() + $3 * interval '1 millisecond' FROM unnest($1::text[], $2::text[]) AS e(k, v)
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at
       ) SELECT pg_notify($4, m) FROM unnest($5::text[]) AS m`,
      [[...early.keys()], [...early.values()], ms, this.options.namespace, messages],
    );
    // Housekeeping: the cancel is out once committed, so a failed sweep must not fail it.
    void this.sweep().catch(() => undefined);
  }

  async remembered(keys: readonly string[]): Promise<Map<string, CancelMessage>> {
    const result = await this.query<{ key: string; value: string }>(
      `SELECT key, value FROM ${this.early} WHERE key = ANY($1::text[]) AND expires_at > now()`,
      [keys],
    );
    return new Map(result.rows.map((row) => [row.key, JSON.parse(row.value) as CancelMessage]));
  }

  async lease(keys: readonly LeasedKey[], replica: string, ms: number): Promise<void> {
    // One statement: a claim record never exists without its lease having been written with it.
    const recorded = keys.filter((leased) => leased.record !== undefined);
    await this.query(
      `WITH leased AS (
         INSERT INTO ${this.owners} (key, value, expires_at) SELECT k, $2, now() + $3 * interval '1 millisecond' FROM unnest($1::text[]) AS k
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at
       ) INSERT INTO ${this.claims} (key, replica, record) SELECT k, $2, r FROM unnest($4::text[], $5::text[]) AS c(k, r)
       ON CONFLICT (key) DO UPDATE SET replica = EXCLUDED.replica, record = EXCLUDED.record`,
      [keys.map(({ key }) => key), replica, ms, recorded.map(({ key }) => key), recorded.map(({ record }) => record)],
    );
  }

  async unlease(key: string, replica: string, dropRecord: boolean): Promise<void> {
    await this.query(
      `WITH unleased AS (DELETE FROM ${this.owners} WHERE key = $1 AND value = $2)
       DELETE FROM ${this.claims} WHERE key = $1 AND replica = $2 AND $3`,
      [key, replica, dropRecord],
    );
  }

  async orphans(prefix: string, limit: number): Promise<OrphanedClaim[]> {
    const result = await this.query<OrphanedClaim>(
      `SELECT c.key, c.replica, c.record FROM ${this.claims} c WHERE starts_with(c.key, $1)
       AND NOT EXISTS (SELECT 1 FROM ${this.owners} o WHERE o.key = c.key AND o.expires_at > now()) LIMIT $2`,
      [prefix, limit],
    );
    return result.rows.map(({ key, replica, record }) => ({ key, replica, record }));
  }

  async forget(orphan: OrphanedClaim): Promise<void> {
    await this.query(
      `DELETE FROM ${this.claims} c WHERE c.key = $1 AND c.replica = $2
       AND NOT EXISTS (SELECT 1 FROM ${this.owners} o WHERE o.key = c.key AND o.expires_at > now())`,
      [orphan.key, orphan.replica],
    );
  }

  async holder(key: string): Promise<KeyHolder> {
    const result = await this.query<{ owner: string | null; recorded: string | null }>(
      `SELECT (SELECT value FROM ${this.owners} WHERE key = $1 AND expires_at > now()) AS owner,
              (SELECT replica FROM ${this.claims} WHERE key = $1) AS recorded`,
      [key],
    );
    const row = result.rows[0];
    return { owner: row?.owner ?? undefined, recorded: row?.recorded ?? undefined };
  }

  /** Every connection's settings; its socket is kept, so `destroy` can cut them all. */
  private connection() {
    return {
      connectionString: this.options.url,
      connectionTimeoutMillis: this.options.operationMs,
      stream: () => {
        const socket = new Socket();
        this.sockets.add(socket);
        socket.once("close", () => this.sockets.delete(socket));
        return socket;
      },
    };
  }

  destroy(): void {
    this.closed = true;
    clearTimeout(this.reconnect);
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnect);
    await Promise.allSettled([this.listener?.end(), this.setup?.end(), this.pool?.end()]);
  }

  /** Expired rows are ignored by every read; this drops them now and then so the tables stay small. */
  private async sweep(): Promise<void> {
    if (Date.now() - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = Date.now();
    await this.query(`DELETE FROM ${this.early} WHERE expires_at < now()`, []);
    await this.query(`DELETE FROM ${this.owners} WHERE expires_at < now()`, []);
  }

  private query<Row extends object = object>(sql: string, values: unknown[]) {
    if (this.pool === undefined) throw new Error("the PostgreSQL bus is not connected");
    return this.pool.query<Row & import("pg").QueryResultRow>(sql, values);
  }
}
