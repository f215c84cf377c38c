/** Where diagnostics go. The real one writes to stderr (stdout belongs to MCP); tests use the no-op. */
export interface Logger {
  info(message: string): void;
  warn(message: string, error?: unknown): void;
}

export const noopLogger: Logger = Object.freeze({
  info: () => undefined,
  warn: () => undefined,
});
