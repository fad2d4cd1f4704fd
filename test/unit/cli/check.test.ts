// What the checks of several contexts do once between them (server/src/cli/check.ts CheckShare):
// a file is parsed once, so its objects and their node trees are the same for every context; a
// file whose text changed, or another file, is parsed anew; the named files are classified once.
// test/cli/fleet.test.ts judges through it.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { createCheckShare } from '../../../server/src/cli/check';
import { hasNodeTree } from '../../../server/src/core/manifest/manifest';

const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: fast\n';

test('the same file with the same text is parsed once: its objects, and the tree one context built, serve every context', () => {
  const once = createCheckShare();
  const first = once.parse('k8s/settings.yaml', text);
  const again = once.parse('k8s/settings.yaml', text);
  assert.equal(again, first);
  const [resource] = first.resources;
  assert.ok(resource && !hasNodeTree(resource));
  void resource.root; // one context's comparison of fields builds the tree…
  assert.ok(hasNodeTree(again.resources[0]!), '…and the next context finds it built');
});

test('another text or another file is parsed anew', () => {
  const once = createCheckShare();
  const first = once.parse('k8s/settings.yaml', text);
  assert.notEqual(once.parse('k8s/other.yaml', text), first);
  const changed = once.parse('k8s/settings.yaml', text.replace('fast', 'safe'));
  assert.notEqual(changed, first);
  assert.deepEqual(changed.resources[0]!.object.data, { mode: 'safe' });
});

test('the named files are classified once for every context; another text is classified anew', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-classify-once-'));
  try {
    const file = path.join(dir, 'settings.yaml');
    fs.writeFileSync(file, text);
    const once = createCheckShare();
    // Each context reads the file itself: equal texts in maps of its own.
    const first = once.classify(new Map([[file, text]]), new Map());
    assert.deepEqual([...first.values()], [{ kind: 'manifest' }]);
    assert.equal(once.classify(new Map([[file, text]]), new Map()), first);
    const changed = once.classify(new Map([[file, text.replace('fast', 'safe')]]), new Map());
    assert.notEqual(changed, first);
    assert.notEqual(
      once.classify(new Map([[file, text]]), new Map([[path.join(dir, 'kustomization.yaml'), '']])),
      first,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
