/**
 * acp-cancel/replicas: cancels across replicas of HTTP services (A2A servers, RAP tool servers,
 * AOS guardians) over PostgreSQL or Redis. Both clients (`pg`, `redis`) are optional peers,
 * loaded only by the bus that needs them.
 */
export { BusUnavailableError, type CancelBus, type CancelBusOptions, type CancelVerdict } from "./cancel-bus.js";
export { postgresCancelBus, redisCancelBus } from "./buses.js";
export { guardTerminalTaskStates } from "./terminal-task-guard.js";
export { replicateCalls } from "./rap-calls.js";
export { redisRateCounter } from "./redis-rate-counter.js";
