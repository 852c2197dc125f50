import { PollLoop } from './poll-loop.js';

/** A promise the test resolves by hand. */
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

const until = async (condition: () => boolean) => {
  for (let i = 0; i < 200 && !condition(); i += 1) await new Promise((r) => setTimeout(r, 5));
  expect(condition()).toBe(true);
};

describe('PollLoop', () => {
  it('ticks again only after the previous tick ended, and stop() waits for the tick in flight', async () => {
    let running = 0;
    let overlapped = false;
    let ticks = 0;
    const gates: ReturnType<typeof deferred>[] = [];
    const loop = new PollLoop(
      1,
      async () => {
        ticks += 1;
        running += 1;
        if (running > 1) overlapped = true;
        const gate = deferred();
        gates.push(gate);
        await gate.promise;
        running -= 1;
      },
      () => undefined,
    );
    loop.start();
    await until(() => ticks === 1);
    await new Promise((r) => setTimeout(r, 20));
    expect(ticks).toBe(1);
    gates[0].resolve();
    await until(() => ticks === 2);
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(stopped).toBe(false);
    gates[1].resolve();
    await stopping;
    await new Promise((r) => setTimeout(r, 20));
    expect(ticks).toBe(2);
    expect(overlapped).toBe(false);
  });

  it('reports a failed tick and keeps going; stop() also waits for runs started by hand', async () => {
    const errors: unknown[] = [];
    let ticks = 0;
    const loop = new PollLoop(
      1,
      async () => {
        ticks += 1;
        if (ticks === 1) throw new Error('boom');
      },
      (error) => errors.push(error),
    );
    loop.start();
    await until(() => ticks >= 2);
    expect((errors[0] as Error).message).toBe('boom');
    const gate = deferred();
    let done = false;
    void loop.track(gate.promise.then(() => (done = true)));
    const stopping = loop.stop();
    gate.resolve();
    await stopping;
    expect(done).toBe(true);
  });
});
