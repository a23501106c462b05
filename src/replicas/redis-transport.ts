/**
 * The Redis backend: pub/sub, keys with a TTL for remembered cancels and owner leases, one hash of
 * claim records. The scripts read lease keys they compute: standalone Redis, not Cluster.
 */
import type { createClient as CreateClient, RedisClientType } from "redis";
import type { CancelBusOptions, OrphanedClaim } from "./cancel-bus.js";
import type { BusMessage, BusTransport, CancelMessage, KeyHolder, LeasedKey, RawListener } from "./transport.js";
import { reconnectDelay, REPLICA_DEFAULTS } from "./transport.js";

/** Deletes a lease while this replica holds it and, if ARGV[3], the claim record while it names this replica. */
const UNLEASE = `
local dropped = 0
if redis.call('GET', KEYS[1]) == ARGV[1] then dropped = redis.call('DEL', KEYS[1]) end
if ARGV[3] == '1' then
  local held = redis.call('HGET', KEYS[2], ARGV[2])
  if held and cjson.decode(held).replica == ARGV[1] then redis.call('HDEL', KEYS[2], ARGV[2]) end
end
return dropped`;

/** The claim records under a prefix (ARGV[1]) whose lease key (ARGV[2] .. key) is gone; at most ARGV[3]. */
const ORPHANS = `
local found = {}
local limit = tonumber(ARGV[3])
local claims = redis.call('HGETALL', KEYS[1])
for i = 1, #claims, 2 do
  if #found >= limit * 2 then break end
  local key = claims[i]
  if string.sub(key, 1, #ARGV[1]) == ARGV[1] and redis.call('EXISTS', ARGV[2] .. key) == 0 then
    found[#found + 1] = key
    found[#found + 1] = claims[i + 1]
  end
end
return found`;

/** Drops a claim record that still names the same replica (ARGV[2]) and still has no lease (KEYS[2]). */
const FORGET = `
local held = redis.call('HGET', KEYS[1], ARGV[1])
if held and cjson.decode(held).replica == ARGV[2] and redis.call('EXISTS', KEYS[2]) == 0 then
  return redis.call('HDEL', KEYS[1], ARGV[1])
end
return 0`;

/** The bus's and the rate counter's client: no offline queue (commands fail at once while down), reconnecting forever. */
export async function redisClient(url: string, connectTimeout: number): Promise<RedisClientType> {
  let createClient: typeof CreateClient;
  try {
    createClient = (await import("redis")).createClient;
  } catch (error) {
    throw new Error("acp-cancel/replicas: the Redis bus needs the optional peer dependency `redis` (npm install redis)", { cause: error });
  }
  const client = createClient({ url, disableOfflineQueue: true, socket: { reconnectStrategy: reconnectDelay, connectTimeout } });
  client.on("error", () => undefined);
  return client as RedisClientType;
}

export class RedisTransport implements BusTransport {
  readonly backend = "redis";
  private readonly channel: string;
  /** The hash of claim records: field = key, value = JSON { replica, record }. */
  private readonly claims: string;
  private commands: RedisClientType | undefined;
  private listener: RedisClientType | undefined;
  private closing: RedisClientType[] = [];
  private readonly namespace: string;

  constructor(
    private readonly url: string,
    private readonly options: CancelBusOptions,
  ) {
    this.namespace = options.namespace ?? REPLICA_DEFAULTS.namespace;
    this.channel = `${this.namespace}:bus`;
    this.claims = `${this.namespace}:claims`;
  }

  async connect(onMessage: RawListener, onConnectedChange: (connected: boolean) => void): Promise<void> {
    const commands = await redisClient(this.url, this.options.operationMs ?? REPLICA_DEFAULTS.operationMs);
    const listener = commands.duplicate();
    this.commands = commands;
    this.listener = listener;
    let subscribed: Promise<void> | undefined;
    let isSubscribed = false;
    const report = () => onConnectedChange(commands.isReady && listener.isReady && isSubscribed);
    // Subscribe once, at the listener's first "ready": the client resubscribes by itself after
    // reconnects, and two subscriptions would deliver every message twice.
    const subscribe = () => {
      subscribed ??= listener.subscribe(this.channel, onMessage).then(() => {
        isSubscribed = true;
        report();
      }, (error: unknown) => {
        subscribed = undefined; // tried again at the next "ready"
        throw error;
      });
      return subscribed;
    };
    for (const client of [commands, listener]) {
      client.on("error", () => undefined); // shows as isReady false in `report`; it reconnects
      for (const event of ["ready", "end", "reconnecting"]) client.on(event, report);
    }
    listener.on("ready", () => void subscribe().catch(() => undefined));
    // A backend down at start: give up waiting at the first error (the clients keep reconnecting).
    const firstError = new Promise<never>((_, reject) => commands.once("error", reject));
    const connecting = Promise.all([commands.connect(), listener.connect()]);
    connecting.catch(() => undefined);
    firstError.catch(() => undefined);
    await Promise.race([connecting, firstError]);
    await subscribe();
  }

  async publish(message: BusMessage): Promise<void> {
    await this.client().publish(this.channel, JSON.stringify(message));
  }

  async rememberAndPublish(cancels: readonly CancelMessage[], ms: number): Promise<void> {
    const batch = this.client().multi();
    const messages = cancels.map((cancel) => JSON.stringify(cancel));
    cancels.forEach(({ key }, i) => batch.set(this.keyOf("early", key), messages[i] as string, { expiration: { type: "PX", value: ms } }));
    for (const message of messages) batch.publish(this.channel, message);
    await batch.exec();
  }

  async remembered(keys: readonly string[]): Promise<Map<string, CancelMessage>> {
    const found = new Map<string, CancelMessage>();
    const values = await this.client().mGet(keys.map((key) => this.keyOf("early", key)));
    values.forEach((raw, i) => {
      if (typeof raw === "string") found.set(keys[i] as string, JSON.parse(raw) as CancelMessage);
    });
    return found;
  }

  async lease(keys: readonly LeasedKey[], replica: string, ms: number): Promise<void> {
    const batch = this.client().multi();
    for (const { key, record } of keys) {
      batch.set(this.keyOf("owner", key), replica, { expiration: { type: "PX", value: ms } });
      if (record !== undefined) batch.hSet(this.claims, key, JSON.stringify({ replica, record }));
    }
    await batch.exec();
  }

  async unlease(key: string, replica: string, dropRecord: boolean): Promise<void> {
    await this.client().eval(UNLEASE, { keys: [this.keyOf("owner", key), this.claims], arguments: [replica, key, dropRecord ? "1" : "0"] });
  }

  async orphans(prefix: string, limit: number): Promise<OrphanedClaim[]> {
    const flat = (await this.client().eval(ORPHANS, {
      keys: [this.claims],
      arguments: [prefix, this.keyOf("owner", ""), String(limit)],
    })) as string[];
    const found: OrphanedClaim[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const held = parseRecord(flat[i + 1] as string);
      if (held !== undefined) found.push({ key: flat[i] as string, ...held });
    }
    return found;
  }

  async forget(orphan: OrphanedClaim): Promise<void> {
    const keys = [this.claims, this.keyOf("owner", orphan.key)];
    await this.client().eval(FORGET, { keys, arguments: [orphan.key, orphan.replica] });
  }

  async holder(key: string): Promise<KeyHolder> {
    const [owner, held] = (await this.client().multi().get(this.keyOf("owner", key)).hGet(this.claims, key).exec()) as unknown[];
    const recorded = typeof held === "string" ? parseRecord(held)?.replica : undefined;
    return { owner: typeof owner === "string" ? owner : undefined, recorded };
  }

  async close(): Promise<void> {
    const clients = [this.listener, this.commands].filter((client) => client !== undefined);
    this.listener = undefined;
    this.commands = undefined;
    this.closing = clients;
    await Promise.allSettled(clients.map((client) => (client.isOpen ? client.close() : client.destroy())));
  }

  destroy(): void {
    for (const client of [...this.closing, this.listener, this.commands]) {
      if (client?.isOpen === true) client.destroy();
    }
  }

  private client(): RedisClientType {
    if (this.commands === undefined) throw new Error("the Redis bus is not connected");
    return this.commands;
  }

  /** A remembered cancel's key, or an owner lease's. */
  private keyOf(kind: "early" | "owner", key: string): string {
    return `${this.namespace}:${kind}:${key}`;
  }
}

function parseRecord(raw: string): { replica: string; record: string } | undefined {
  try {
    const held = JSON.parse(raw) as { replica?: unknown; record?: unknown };
    return typeof held.replica === "string" && typeof held.record === "string" ? { replica: held.replica, record: held.record } : undefined;
  } catch {
    return undefined;
  }
}
