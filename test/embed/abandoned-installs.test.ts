/** Issue 25, item 5: installs whose process died leave no `.installing-*` folders behind for good. */
import { mkdirSync, readdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeAbandonedInstalls } from '../../src/embed/onnx/model-files.js';
import { tempDir } from '../helpers/fixtures.js';

describe('removeAbandonedInstalls', () => {
  const tmp = tempDir();
  afterEach(() => tmp.cleanup());

  it("removes a dead process's staging folder and any over an hour old, and keeps a running install's", () => {
    const id = 'multilingual-e5-small';
    const at = (name: string, ageMs = 0) => {
      const dir = join(tmp.dir, name);
      mkdirSync(join(dir, 'onnx'), { recursive: true });
      const t = (Date.now() - ageMs) / 1000;
      utimesSync(dir, t, t);
    };
    const hour = 60 * 60 * 1000;
    at(`.${id}.installing-${process.pid}-abc123`); // this process: running
    at(`.${id}.installing-2147483646-def456`); // no such process
    at(`.${id}.installing-${process.pid}-old999`, 2 * hour); // running, but too old to be a live install
    at(`.${id}.installing-Xq81zz`); // before the pid was in the name, recent: may be running
    at(`.${id}.installing-Yr92aa`, 2 * hour); // before the pid was in the name, old
    at(`.other-model.installing-2147483646-aaa`); // another model's: not this install's business
    at(id); // the installed model itself
    const removed = removeAbandonedInstalls(tmp.dir, id).sort();
    expect(removed).toEqual(
      [`.${id}.installing-2147483646-def456`, `.${id}.installing-${process.pid}-old999`, `.${id}.installing-Yr92aa`].sort(),
    );
    expect(readdirSync(tmp.dir).sort()).toEqual(
      [`.${id}.installing-${process.pid}-abc123`, `.${id}.installing-Xq81zz`, `.other-model.installing-2147483646-aaa`, id].sort(),
    );
  });
});
