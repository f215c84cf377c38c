/**
 * Feeds the MCP SDK's stdio transport one chunk per line. Its ReadBuffer concatenates everything it
 * holds with each chunk it is given (64 KiB at a time from a pipe), so a line of n bytes costs
 * n²/128 KiB of copying with the MCP thread blocked: 0.8 s for 12 MB, 29 s for 60 MB. Joined here
 * once per line, reading is linear. A line over the limit is dropped as it streams in, never held,
 * and reported with the request id when one can be read from its ends.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { requestIdFromEnds, type RequestId } from '../mcp/jsonrpc-screen.js';

/** How a dropped line's request id is read, shared with the screens of stdio and HTTP. */
export { requestIdFromEnds, type RequestId } from '../mcp/jsonrpc-screen.js';

export interface DroppedLine {
  /** Bytes of the line, without its newline. */
  readonly bytes: number;
  /** The id of the request, when the start or the end of the line shows it; undefined otherwise. */
  readonly id: RequestId | undefined;
}

/** Bytes kept from each end of a dropped line to find its id. */
const ENDS = 256;

const firstBytes = (parts: readonly Buffer[], n: number): Buffer => {
  const kept: Buffer[] = [];
  for (let left = n, i = 0; left > 0 && i < parts.length; i++) {
    const part = (parts[i] as Buffer).subarray(0, left);
    kept.push(part);
    left -= part.length;
  }
  return Buffer.concat(kept);
};
const lastBytes = (parts: readonly Buffer[], n: number): Buffer => {
  const kept: Buffer[] = [];
  for (let left = n, i = parts.length - 1; left > 0 && i >= 0; i--) {
    const part = parts[i] as Buffer;
    const slice = part.subarray(Math.max(0, part.length - left));
    kept.unshift(slice);
    left -= slice.length;
  }
  return Buffer.concat(kept);
};

/**
 * A stream of whole lines (newline included) from a stream of chunks; lines over `maxLineBytes`
 * go to `onDropped` instead.
 * @example process.stdin.pipe(new WholeLines(32 * 2 ** 20, (line) => log(line.bytes)))
 */
export class WholeLines extends Transform {
  private parts: Buffer[] = [];
  private held = 0;
  /** Bytes of the line being dropped so far, or undefined while the line fits. */
  private dropping: number | undefined;
  private head: Buffer = Buffer.alloc(0);
  private tail: Buffer = Buffer.alloc(0);

  /** `screen`: sees each whole line that fits first; true keeps it from the transport (it was answered). */
  constructor(
    private readonly maxLineBytes: number,
    private readonly onDropped: (line: DroppedLine) => void,
    private readonly screen: (line: Buffer) => boolean = () => false,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    for (let start = 0; start < chunk.length;) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline + 1;
      this.addPiece(chunk.subarray(start, end), newline !== -1);
      start = end;
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    // A last line without a newline is passed on as it is: the transport never reads it either way.
    if (this.dropping === undefined && this.held > 0) this.push(Buffer.concat(this.parts, this.held));
    done();
  }

  private addPiece(piece: Buffer, endsLine: boolean): void {
    if (this.dropping === undefined && this.held + piece.length <= this.maxLineBytes + (endsLine ? 1 : 0)) {
      this.parts.push(piece);
      this.held += piece.length;
      if (endsLine) {
        const line = this.parts.length === 1 ? piece : Buffer.concat(this.parts, this.held);
        this.parts = [];
        this.held = 0;
        if (!this.screen(line)) this.push(line);
      }
      return;
    }
    if (this.dropping === undefined) {
      this.head = firstBytes([...this.parts, piece], ENDS);
      this.tail = lastBytes(this.parts, ENDS);
      this.dropping = this.held;
      this.parts = [];
      this.held = 0;
    }
    this.dropping += piece.length;
    this.tail = lastBytes([this.tail, piece], ENDS);
    if (!endsLine) return;
    const line = { bytes: this.dropping - 1, id: requestIdFromEnds(this.head.toString('utf8'), this.tail.toString('utf8')) };
    this.dropping = undefined;
    this.head = Buffer.alloc(0);
    this.tail = Buffer.alloc(0);
    this.onDropped(line);
  }
}
