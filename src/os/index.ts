// Linux's /proc process table and stopping processes without signalling a reused pid; imports nothing of ours.
export * from "./process-table.js";
export * from "./terminate.js";
export * from "./tool-span.js";
export * from "./watchdog.js";
