/** acp-cancel/replicas: cancels across replicas over PostgreSQL or Redis (optional peers `pg`, `redis`). */
export { BusUnavailableError, type CancelBus, type CancelBusOptions, type CancelVerdict } from "./cancel-bus.js";
export { postgresCancelBus, redisCancelBus } from "./buses.js";
export { guardTerminalTaskStates } from "./terminal-task-guard.js";
export { replicateCalls } from "./rap-calls.js";
export { redisRateCounter } from "./redis-rate-counter.js";
