/**
 * A second thread for the sign codes' Hamming scan (sign-codes.ts): one persistent worker that
 * shares the kernel's memory (a shared WebAssembly.Memory) and scans the second half of the rows
 * while the caller scans the first. At 1M rows the scan reads 16-48 MB and runs at the speed one
 * core draws from memory; a second core reading the other half draws more.
 *
 * No message per scan: the caller writes the scan's arguments into a small shared array, bumps a
 * counter and wakes the worker (Atomics.notify), scans its own half, then waits (Atomics.wait) for
 * the worker's counter to catch up. The worker blocks in Atomics.wait between scans and costs
 * nothing while idle. A new memory (the codes grew) is handed over once, through a message port
 * read synchronously. The worker is plain JavaScript evaluated from a string (as
 * keyword-split.ts's), so it runs the same from dist/, from tsx and under vitest.
 */
import { MessageChannel, Worker } from 'node:worker_threads';

const WORKER_SOURCE = `
const { workerData, receiveMessageOnPort } = require('node:worker_threads');
const { control, port } = workerData;
let kernels = new Map();
let seen = 0;
for (;;) {
  Atomics.wait(control, 0, seen);
  seen = Atomics.load(control, 0);
  const op = control[2];
  if (op === 0) break;
  try {
    if (op === 1) {
      let m;
      for (let i = 0; i < 1000 && m === undefined; i++) {
        m = receiveMessageOnPort(port);
        if (m === undefined) Atomics.wait(control, 15, 0, 1);
      }
      kernels = new Map();
      for (const [words, module] of m.message.modules)
        kernels.set(words, new WebAssembly.Instance(module, { e: { m: m.message.memory } }).exports);
    } else {
      kernels.get(control[3]).scan(control[4], control[5], control[6], control[7], control[8]);
    }
    control[9] = 0;
  } catch (error) {
    control[9] = 1;
  }
  Atomics.store(control, 1, seen);
  Atomics.notify(control, 1);
}
port.close();
`;

const OP_CLOSE = 0;
const OP_ATTACH = 1;
const OP_SCAN = 2;
/** How long the caller waits for the worker's half before it gives up on it and scans that half itself. */
const WAIT_MS = 2000;

/** One worker scanning for the sign codes; `broken` once it failed or timed out (then callers scan alone). */
export class ScanHelper {
  private readonly worker: Worker;
  /** [0] started, [1] finished, [2] op, [3] words, [4..8] scan's arguments, [9] failed. */
  private readonly control = new Int32Array(new SharedArrayBuffer(64));
  private readonly port: MessageChannel['port1'];
  private started = 0;
  private attached: object | undefined;
  broken = false;

  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { control: this.control, port: port2 }, transferList: [port2] });
    this.worker.unref(); // never keeps the process alive
    this.worker.on('error', () => (this.broken = true));
    this.worker.on('exit', () => (this.broken = true));
  }

  /** A helper whose thread is up (so that the first scan handed to it does not wait for the thread to start). */
  static async start(): Promise<ScanHelper> {
    const helper = new ScanHelper();
    await new Promise<void>((resolve, reject) => {
      helper.worker.once('online', resolve);
      helper.worker.once('error', reject);
    });
    return helper;
  }

  /** Hands the worker a (new) shared memory and the compiled kernels, by code words; false when it failed. */
  attach(memory: object, modules: ReadonlyMap<number, object>): boolean {
    if (this.broken) return false;
    if (this.attached === memory) return true;
    this.port.postMessage({ memory, modules: [...modules] });
    this.signal(OP_ATTACH);
    if (!this.wait()) return false;
    this.attached = memory;
    return true;
  }

  /** Starts the worker's scan of `n` codes of `words` words at `codes` (the kernel's `scan`); `finish` waits for it. */
  start(memory: object, words: number, codes: number, n: number, query: number, out: number, hist: number): boolean {
    if (this.broken || this.attached !== memory) return false;
    this.control.set([words, codes, n, query, out, hist], 3);
    this.signal(OP_SCAN);
    return true;
  }

  /** Waits for the scan started last; false when the worker failed or did not answer in time (it is then given up). */
  finish(): boolean {
    return this.wait();
  }

  /** Ends the worker. */
  close(): void {
    if (this.broken) return;
    this.broken = true;
    this.signal(OP_CLOSE);
    this.port.close();
  }

  private signal(op: number): void {
    this.control[2] = op;
    this.started = Atomics.add(this.control, 0, 1) + 1;
    Atomics.notify(this.control, 0);
  }

  private wait(): boolean {
    const deadline = performance.now() + WAIT_MS;
    for (;;) {
      const done = Atomics.load(this.control, 1);
      if (done === this.started) break;
      const left = deadline - performance.now();
      if (left <= 0 || this.broken) {
        this.broken = true;
        void this.worker.terminate();
        return false;
      }
      Atomics.wait(this.control, 1, done, left);
    }
    if (this.control[9] !== 0) {
      this.close();
      return false;
    }
    return true;
  }
}
