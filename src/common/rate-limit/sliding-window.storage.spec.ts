import { FakeClock } from '../../../test/support/clock.js';
import {
  rateLimitStorageContract,
  WINDOW,
} from '../../../test/support/rate-limit-storage.contract.js';
import { MemorySlidingWindowStorage } from './sliding-window.storage.js';

describe('MemorySlidingWindowStorage: the rate-limit storage contract', () => {
  rateLimitStorageContract((clock) => {
    const storage = new MemorySlidingWindowStorage(clock);
    return { storage, close: () => storage.close() };
  });
});

describe('MemorySlidingWindowStorage: its own key table', () => {
  let clock: FakeClock;
  let storage: MemorySlidingWindowStorage;

  beforeEach(() => {
    clock = new FakeClock();
    storage = new MemorySlidingWindowStorage(clock);
  });

  afterEach(() => storage.close());

  it('sweep() frees keys whose newest request has aged out, and only those', async () => {
    storage.close();
    storage = new MemorySlidingWindowStorage(clock, WINDOW);
    await storage.hit('idle', WINDOW, 2);
    clock.advance(200_000);
    await storage.hit('busy', WINDOW, 1);
    await storage.hit('busy', WINDOW, 1); // refused, the key stays at one hit
    expect(storage.size()).toBe(2);

    clock.advance(WINDOW - 200_000 - 1); // 'idle' is window-1 ms old: still counted, so kept
    storage.sweep();
    expect(storage.size()).toBe(2);

    clock.advance(1); // 'idle' ages out; 'busy' is 100 s old
    storage.sweep();
    expect(storage.size()).toBe(1);
    expect((await storage.hit('busy', WINDOW, 1)).isBlocked).toBe(true); // sweeping kept its counter

    clock.advance(200_000); // 'busy' ages out too
    storage.sweep();
    expect(storage.size()).toBe(0);
  });

  it('sweep() with the default horizon keeps a key until the longest configurable window has passed', async () => {
    await storage.hit('k', 86_400_000, 1);
    clock.advance(86_400_000 - 1);
    storage.sweep();
    expect(await storage.hit('k', 86_400_000, 1)).toMatchObject({
      isBlocked: true,
      retryAfterSeconds: 1,
    });
    clock.advance(1);
    storage.sweep();
    expect(storage.size()).toBe(0);
  });

  it('keeps no key for a refused penalty block (blockDuration > 0)', async () => {
    await expect(storage.increment('k', WINDOW, 2, WINDOW, 'tier')).rejects.toThrow(
      /blockDuration must be 0/,
    );
    expect(storage.size()).toBe(0);
  });
});
