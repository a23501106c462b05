/**
 * acp-cancel/replicas: cancels across replicas of HTTP services (A2A servers, RAP tool servers,
 * AOS guardians) over PostgreSQL or Redis. Both clients (`pg`, `redis`) are optional peers,
 * loaded only by the bus that needs them.
 */
export {
  BusUnavailableError,
  type CancelBus,
  type CancelBusOptions,
  type CancelHandler,
  type CancelOptions,
  type CancelRequest,
  type CancelVerdict,
  type Claim,
} from "./cancel-bus.js";
export { postgresCancelBus, redisCancelBus } from "./buses.js";
export { guardTerminalTaskStates, type TerminalGuardOptions } from "./terminal-task-guard.js";
export { type ForwardedNotice, type LocalCallRegistry, rapCallKey, replicateCalls, type ReplicatedCallsOptions } from "./rap-calls.js";
export { type RedisRateCounter, redisRateCounter, type RedisRateCounterOptions } from "./redis-rate-counter.js";
