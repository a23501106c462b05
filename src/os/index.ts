/**
 * The operating system's process table, read from Linux's /proc: who descends from whom,
 * when each started, and stopping a set of processes without ever signalling a reused pid.
 * The bottom layer for whatever supervises processes (bridge, rap); imports nothing of ours.
 */
export * from "./process-table.js";
export * from "./terminate.js";
export * from "./tool-span.js";
export * from "./watchdog.js";
