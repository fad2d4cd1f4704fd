// Render targets, the one home the editor and the command line share (server/src/render/targets.ts):
// the top chart of a chart file, found one way, and the release a chart is rendered as. On real
// folders: the rule is about what the disk holds.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { chartRelease, overlayFailureSource, topChart } from '../../../server/src/render/targets';

const dir = fs
  .realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'kch-targets-')))
  .split(path.sep)
  .join('/');
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function chart(folder: string, name: string): string {
  fs.mkdirSync(folder, { recursive: true });
  fs.writeFileSync(`${folder}/Chart.yaml`, `apiVersion: v2\nname: ${name}\nversion: 0.1.0\n`);
  return folder;
}

test('a subchart is rendered by the chart that holds it, however deep, and a chart alone by itself', () => {
  const shop = chart(`${dir}/shop`, 'shop');
  const cache = chart(`${shop}/charts/cache`, 'cache');
  const inner = chart(`${cache}/charts/metrics`, 'metrics');
  assert.equal(topChart(inner), shop);
  assert.equal(topChart(cache), shop);
  assert.equal(topChart(shop), shop);
  // Relative, as the command line is given it: the same chart.
  assert.equal(topChart(path.relative(process.cwd(), inner)), shop);
});

test('a folder called charts whose parent holds no Chart.yaml file is no subchart', () => {
  const loose = chart(`${dir}/repo/charts/web`, 'web');
  assert.equal(topChart(loose), loose);
  // A folder named Chart.yaml is no chart: helm loads none from it.
  fs.mkdirSync(`${dir}/odd/Chart.yaml`, { recursive: true });
  const sub = chart(`${dir}/odd/charts/api`, 'api');
  assert.equal(topChart(sub), sub);
});

test('the editor looks no higher than its workspace folders', () => {
  const outer = chart(`${dir}/outer`, 'outer');
  const sub = chart(`${outer}/charts/sub`, 'sub');
  assert.equal(topChart(sub), outer);
  assert.equal(
    topChart(sub, (folder) => folder.startsWith(`${outer}/charts/`)),
    sub,
  );
});

test("the release: named, else the chart's name in the user's namespace, else the default one", () => {
  const web = chart(`${dir}/rel/web`, 'storefront');
  assert.deepEqual(chartRelease(web, {}, 'team'), { named: {}, guess: { release: 'storefront', namespace: 'team' } });
  assert.deepEqual(chartRelease(web, { release: 'prod', namespace: 'shop' }, 'team'), {
    named: { release: 'prod', namespace: 'shop' },
    guess: { release: 'prod', namespace: 'shop' },
  });
  // Empty settings name nothing.
  assert.deepEqual(chartRelease(web, { release: '', namespace: '' }, 'default'), {
    named: {},
    guess: { release: 'storefront', namespace: 'default' },
  });
  // A folder without a chart's name: the folder's.
  fs.mkdirSync(`${dir}/rel/nameless`, { recursive: true });
  assert.equal(chartRelease(`${dir}/rel/nameless`, {}, 'default').guess.release, 'nameless');
});

test("an overlay's failure is shown on its kustomization, by kustomize's names in order", () => {
  const overlay = `${dir}/overlays/prod`;
  fs.mkdirSync(overlay, { recursive: true });
  assert.deepEqual(overlayFailureSource(overlay), {
    tool: 'kustomize',
    kustomization: `${overlay}/kustomization.yaml`,
  });
  fs.writeFileSync(`${overlay}/Kustomization`, 'resources: []\n');
  const read = new Map([[`${overlay}/Kustomization`, 'resources: []\n']]);
  assert.deepEqual(overlayFailureSource(overlay, read), {
    tool: 'kustomize',
    kustomization: `${overlay}/Kustomization`,
    kustomizationText: 'resources: []\n',
  });
});
