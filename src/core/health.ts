/**
 * One line of `limbic doctor`: what was checked, how it stands, and for a problem the command that
 * fixes it. Backends report their own parts (src/store/sqlite/sqlite-health.ts,
 * src/embed/onnx/model-health.ts); src/cli/doctor.ts runs and prints them.
 */
export type HealthStatus = 'ok' | 'warn' | 'fail';

export interface HealthCheck {
  /** Short name of the part: "node", "sqlite", "model", "database", … */
  readonly name: string;
  readonly status: HealthStatus;
  /** What was found, in a line. */
  readonly detail: string;
  /** For warn and fail: the command (or step) that fixes it. */
  readonly fix?: string;
}

export const healthCheck = (name: string, status: HealthStatus, detail: string, fix?: string): HealthCheck =>
  fix === undefined ? { name, status, detail } : { name, status, detail, fix };
