// When the server asks the editor to pull diagnostics again (lsp/refresh.ts): as soon as nothing
// the clusters were asked is still on its way, never before that (a file would be judged on half
// its facts, then again), at most the interval after a change while answers are out (longer when
// the passes a refresh causes are long), and never twice within the interval. On node:test's mock clock: each case is a script of changes, answers
// and elapsed time, and the refreshes the editor would see.
import { mock, test } from 'node:test';
import * as assert from 'node:assert/strict';
import type { Connection } from 'vscode-languageserver/node';
import { busyShare, longestBusyWaitMs, RefreshScheduler, refreshIntervalMs } from '../../../server/src/lsp/refresh';

type Step =
  /** Facts changed (an object, a schema), `change` times in one turn of the event loop. */
  | { change: number }
  /** A request goes out. */
  | { send: true }
  /**
   * Its answer lands: the facts it brings change (when `change`), then, as the transport does, once
   * the last answer's handlers have run, the sessions say they are quiet.
   */
  | { answer: true; change?: true; /** The answer's handler asks for more, in the same turn. */ asks?: true }
  | { wait: number }
  /** The editor judges its open files (after a refresh): the clock and the work done move on by this many ms. */
  | { pass: number };

interface Case {
  readonly name: string;
  readonly steps: readonly Step[];
  /** The mock clock's reading at each refresh. */
  readonly refreshesAt: readonly number[];
}

const I = refreshIntervalMs;
// The cases below are written for a spacing of passes that outlasts 240 ms after a 40 ms pass.
assert.ok(busyShare * 40 > 240 && longestBusyWaitMs > 500);
const cases: Case[] = [
  { name: 'nothing is asked of the cluster: at once', steps: [{ change: 1 }, { wait: 2 * I }], refreshesAt: [0] },
  { name: 'changes in one turn: one refresh', steps: [{ change: 3 }, { wait: 2 * I }], refreshesAt: [0] },
  {
    name: 'the list landed, its schema is on its way: once, when the schema lands',
    steps: [
      { send: true },
      { send: true },
      { wait: 5 },
      { answer: true, change: true },
      { wait: 10 },
      { answer: true, change: true },
      { wait: 2 * I },
    ],
    refreshesAt: [15],
  },
  {
    name: 'an answer that takes long: at the interval, then again when it lands',
    steps: [
      { send: true },
      { send: true },
      { answer: true, change: true },
      { wait: 3 * I },
      { answer: true, change: true },
      { wait: 2 * I },
    ],
    refreshesAt: [I, 3 * I],
  },
  {
    name: 'the answer that lands last asks for more (a list, then its schema): when that lands too',
    steps: [
      { send: true },
      { wait: 5 },
      { answer: true, change: true, asks: true },
      { wait: 5 },
      { answer: true, change: true },
      { wait: 2 * I },
    ],
    refreshesAt: [10],
  },
  {
    name: 'a change soon after a refresh: at the end of the interval, even with nothing pending',
    steps: [{ change: 1 }, { wait: 10 }, { change: 1 }, { wait: 2 * I }],
    refreshesAt: [0, I],
  },
  {
    name: 'a burst of watch events over a while: at most one refresh per interval',
    steps: [
      { change: 1 },
      { wait: 20 },
      { change: 1 },
      { wait: 20 },
      { change: 1 },
      { wait: 20 },
      { change: 1 },
      { wait: 20 },
      { change: 1 },
      { wait: 3 * I },
    ],
    refreshesAt: [0, I, 2 * I],
  },
  {
    name: 'long passes while answers are out: the next refresh waits for them or their spacing, not the interval',
    steps: [
      { send: true },
      { change: 1 },
      { wait: I },
      { pass: 40 },
      { change: 1 },
      { wait: 200 },
      { answer: true, change: true },
      { wait: 2 * I },
    ],
    // The spacing (busyShare x 40 ms from the first refresh) outlasts the answer: no refresh at 2 x I.
    refreshesAt: [I, I + 40 + 200],
  },
  {
    name: 'long passes while answers are out: at the end of their spacing, which is bounded',
    steps: [
      { send: true },
      { change: 1 },
      { wait: I },
      { pass: 500 },
      { change: 1 },
      { wait: longestBusyWaitMs },
      { answer: true, change: true },
      { wait: 2 * I },
    ],
    refreshesAt: [I, I + longestBusyWaitMs, I + 500 + longestBusyWaitMs],
  },
  {
    name: 'a long pass before the first refresh (the file judged when opened) spaces the refreshes after it',
    steps: [
      { pass: 40 },
      { send: true },
      { change: 1 },
      { wait: I },
      { change: 1 },
      { wait: 200 },
      { answer: true, change: true },
      { wait: 2 * I },
    ],
    refreshesAt: [40 + I, 40 + I + 200],
  },
  {
    name: 'short passes while answers are out: the interval, as without them',
    steps: [
      { send: true },
      { change: 1 },
      { wait: I },
      { pass: 5 },
      { change: 1 },
      { wait: 200 },
      { answer: true, change: true },
      { wait: 2 * I },
    ],
    refreshesAt: [I, 2 * I, I + 5 + 200],
  },
  {
    name: 'long passes with nothing asked of the cluster: the interval, as without them',
    steps: [{ change: 1 }, { pass: 40 }, { change: 1 }, { wait: 2 * I }],
    refreshesAt: [0, I],
  },
  {
    name: 'an answer with no change: nothing to refresh',
    steps: [{ send: true }, { wait: 10 }, { answer: true }, { wait: 2 * I }],
    refreshesAt: [],
  },
];

for (const c of cases) {
  test(`refresh: ${c.name}`, () => {
    mock.timers.enable({ apis: ['setTimeout', 'setImmediate', 'Date'], now: 0 });
    try {
      const refreshes: number[] = [];
      const connection = {
        languages: { diagnostics: { refresh: () => refreshes.push(Date.now()) } },
      } as unknown as Connection;
      const scheduler = new RefreshScheduler(connection);
      scheduler.initialize({ workspace: { diagnostics: { refreshSupport: true } } });
      let inFlight = 0;
      const quiet: (() => void)[] = [];
      scheduler.waitFor({ busy: () => inFlight > 0, onQuiet: (l) => quiet.push(l) });
      let work = 0;
      scheduler.measureWork(() => work);
      for (const step of c.steps) {
        if ('answer' in step) {
          inFlight--;
          if (step.change) scheduler.schedule();
          if (step.asks) inFlight++;
          if (inFlight === 0) setImmediate(() => inFlight === 0 && quiet.forEach((l) => l()));
        } else if ('change' in step) for (let i = 0; i < step.change; i++) scheduler.schedule();
        else if ('send' in step) inFlight++;
        else if ('pass' in step) {
          // A pass runs on the event loop: no timer fires in it.
          work += step.pass;
          mock.timers.tick(0);
          for (let i = 0; i < step.pass; i++) mock.timers.tick(1);
        } else {
          // One millisecond at a time, so that each immediate runs at the time it was queued.
          for (let i = 0; i < step.wait; i++) mock.timers.tick(1);
        }
        // What the event loop runs before the next thing happens: the immediates queued so far.
        mock.timers.tick(0);
      }
      assert.deepEqual(refreshes, c.refreshesAt);
    } finally {
      mock.timers.reset();
    }
  });
}
