// The one reader of a small file (server/src/render/small-file.ts), on real files: what is not a
// regular file is refused without ever being waited on, nothing is read past the limit, and a link
// is refused where the caller asks for that.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import {
  readSmallFile,
  readSmallFileAsync,
  readSmallText,
  readSmallTextAsync,
} from '../../../server/src/render/small-file';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-small-file-'));
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return p;
};

const readers = [
  {
    name: 'sync',
    read: async (p: string, o: Parameters<typeof readSmallFile>[1]) => readSmallFile(p, o),
    text: async (p: string, o: Parameters<typeof readSmallFile>[1]) => readSmallText(p, o),
  },
  { name: 'async', read: readSmallFileAsync, text: readSmallTextAsync },
];

for (const r of readers) {
  test(`${r.name}: a regular file under the limit is read whole, links followed unless refused`, async () => {
    const p = file(`ok-${r.name}.yaml`, 'kind: ConfigMap\n');
    assert.equal(await r.text(p, { maxBytes: 100 }), 'kind: ConfigMap\n');
    const link = path.join(dir, `link-${r.name}.yaml`);
    fs.symlinkSync(p, link);
    assert.equal(await r.text(link, { maxBytes: 100 }), 'kind: ConfigMap\n');
    const refused = await r.read(link, { maxBytes: 100, noLinks: true });
    assert.equal(refused.ok, false);
    assert.equal(await r.text(link, { maxBytes: 100, noLinks: true }), undefined);
  });

  test(`${r.name}: a file over the limit is refused with its size, before it is read`, async () => {
    const p = file(`big-${r.name}.yaml`, 'x'.repeat(101));
    assert.deepEqual(await r.read(p, { maxBytes: 100 }), { ok: false, refused: 'too-large', size: 101, grew: false });
    assert.equal((await r.read(p, { maxBytes: 101 })).ok, true);
  });

  test(`${r.name}: a FIFO nobody writes to, a device, a folder are refused, never waited on`, async () => {
    const fifo = path.join(dir, `fifo-${r.name}`);
    execFileSync('mkfifo', [fifo]);
    for (const p of [fifo, '/dev/zero', dir]) {
      const read = await r.read(p, { maxBytes: 100 });
      assert.equal(read.ok, false, p);
      assert.equal(!read.ok && read.refused, 'not-regular', p);
    }
  });

  test(`${r.name}: what is not there is an error, as data`, async () => {
    const read = await r.read(path.join(dir, 'missing.yaml'), { maxBytes: 100 });
    assert.equal(!read.ok && read.refused === 'error' && (read.error as NodeJS.ErrnoException).code, 'ENOENT');
  });
}
