/**
 * (Kept apart from the exporter so that asking costs no OpenTelemetry package load.)
 * Whether tracing is asked for: the flag, or the standard variables naming an OTLP endpoint or
 * exporter. `OTEL_SDK_DISABLED=true` and `OTEL_TRACES_EXPORTER=none` turn the variables' ask off.
 */
export function otelRequested(flag: boolean, env: NodeJS.ProcessEnv = process.env): boolean {
  if (flag) return true;
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter === "none") return false;
  return exporter === "otlp" || Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT) || Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}
