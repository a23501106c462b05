/**
 * Whether tracing is asked for: the flag, or the standard variables naming an OTLP endpoint or exporter
 * (unless `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`). Apart, so asking loads no OpenTelemetry.
 */
export function otelRequested(flag: boolean, env: NodeJS.ProcessEnv = process.env): boolean {
  if (flag) return true;
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter === "none") return false;
  return exporter === "otlp" || Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT) || Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}
