/**
 * One catalogue of error codes. Every message says what went wrong and what to do next;
 * the MCP adapter turns a MemoryError into an `isError` tool result the model can act on.
 */
export const ERROR_CODES = {
  ENTITY_NOT_FOUND: 'ENTITY_NOT_FOUND',
  INVALID_INPUT: 'INVALID_INPUT',
  INPUT_TOO_LARGE: 'INPUT_TOO_LARGE',
  INVALID_QUERY: 'INVALID_QUERY',
  MODEL_UNAVAILABLE: 'MODEL_UNAVAILABLE',
  VECTOR_UNAVAILABLE: 'VECTOR_UNAVAILABLE',
  STORE_BUSY: 'STORE_BUSY',
  STORE_FAILED: 'STORE_FAILED',
  IMPORT_FAILED: 'IMPORT_FAILED',
  CONFIG_INVALID: 'CONFIG_INVALID',
  /** Limbic's own fault (a broken invariant), not the caller's: the message says what broke. */
  INTERNAL: 'INTERNAL',
} as const;

export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

export class MemoryError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MemoryError';
    this.code = code;
  }
}

export const isMemoryError = (e: unknown): e is MemoryError => e instanceof MemoryError;

/** The official server's wording, kept so clients that match on it keep working, plus the next step. */
export function entityNotFound(name: string): MemoryError {
  return new MemoryError(
    ERROR_CODES.ENTITY_NOT_FOUND,
    `Entity with name ${name} not found. Create it first with create_entities; nothing from this call was saved.`,
  );
}
