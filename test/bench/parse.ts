// Parse benchmark: a 2,000-document file of typical Deployments, parsed whole, then re-parsed
// after a one-character edit with the cache, while a probe measures how long the event loop was
// blocked, then the same full parse in slices that yield to the event loop.
// Run: node --import tsx test/bench/parse.ts [documents]
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import {
  createManifestCache,
  parseManifestText,
  parseManifestTextInSlices,
} from '../../server/src/core/manifest/manifest';

const documentCount = Number(process.argv[2] ?? 2000);

function deployment(i: number): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-${i}
  namespace: shop
  labels:
    app: web-${i}
    app.kubernetes.io/part-of: shop
spec:
  replicas: 3
  selector:
    matchLabels: {app: web-${i}}
  template:
    metadata:
      labels:
        app: web-${i}
    spec:
      containers:
      - name: app
        image: registry.example.com/web:1.${i % 50}
        args: ["--port", "8080"]
        ports:
        - containerPort: 8080
        env:
        - name: MODE
          value: prod
        resources: {limits: {cpu: 500m, memory: 256Mi}}
`;
}

const text = Array.from({ length: documentCount }, (_, i) => deployment(i)).join('---\n');
// The one-character edit, in the middle of the file: replicas 3 -> 4 in one document.
const middle = text.indexOf('replicas: 3', Math.floor(text.length / 2));
const edited = `${text.slice(0, middle)}replicas: 4${text.slice(middle + 'replicas: 3'.length)}`;
// A line added near the top: every later document moves, none of them changes.
const shifted = `# a comment line added at the top\n${edited}`;

const histogram = monitorEventLoopDelay({ resolution: 1 });
let longestBlock = 0;
let last = performance.now();
const probe = setInterval(() => {
  const now = performance.now();
  longestBlock = Math.max(longestBlock, now - last - 1);
  last = now;
}, 1);

function timed<T>(fn: () => T): { ms: number; result: T } {
  const start = performance.now();
  const result = fn();
  return { ms: performance.now() - start, result };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

async function main(): Promise<void> {
  histogram.enable();
  await tick();
  const cold = timed(() => parseManifestText(text));
  await tick();
  const cache = createManifestCache();
  const warmup = timed(() => parseManifestText(text, cache));
  await tick();
  const edit = timed(() => parseManifestText(edited, cache));
  await tick();
  const shift = timed(() => parseManifestText(shifted, cache));
  await tick();
  const blockedBySync = longestBlock;
  longestBlock = 0;
  const slicedStart = performance.now();
  const sliced = await parseManifestTextInSlices(text, createManifestCache());
  const slicedMs = performance.now() - slicedStart;
  await tick();
  clearInterval(probe);
  histogram.disable();

  const kib = (Buffer.byteLength(text) / 1024).toFixed(0);
  console.log(`documents: ${documentCount} (${kib} KiB), resources: ${cold.result.resources.length}`);
  console.log(`full parse:                     ${cold.ms.toFixed(1)} ms`);
  console.log(`full parse into an empty cache: ${warmup.ms.toFixed(1)} ms`);
  console.log(
    `one-character edit (cached):    ${edit.ms.toFixed(1)} ms, documents parsed: ${edit.result.parsedDocuments}`,
  );
  console.log(
    `line added at the top (cached): ${shift.ms.toFixed(1)} ms, documents parsed: ${shift.result.parsedDocuments}`,
  );
  console.log(`longest event-loop block, synchronous parses:  ${blockedBySync.toFixed(0)} ms`);
  console.log(`full parse in 8 ms slices:      ${slicedMs.toFixed(1)} ms, resources: ${sliced.resources.length}`);
  console.log(`longest event-loop block, sliced parse:       ${longestBlock.toFixed(0)} ms`);
  console.log(`(event-loop delay histogram max over the whole run: ${(histogram.max / 1e6).toFixed(0)} ms)`);
}

void main();
