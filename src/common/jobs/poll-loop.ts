/**
 * The background loop of a durable job: runs `tick` every `intervalMs` (measured from the end of the previous tick,
 * so ticks never overlap), keeps track of runs in flight (the loop's and any started by hand through `track`), and
 * on `stop` waits for them. The timer is unref'd: it never keeps a process alive. `PollingWorker` wires it into a
 * Nest provider's lifecycle; what a tick claims (and how) is the worker's.
 */
export class PollLoop {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly intervalMs: number,
    private readonly tick: () => Promise<unknown>,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.track(this.tick())
        .catch(this.onError)
        .finally(() => this.start());
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Registers a run so that `stop()` waits for it; answers the run itself. */
  track<T>(run: Promise<T>): Promise<T> {
    this.inFlight.add(run);
    void run.finally(() => this.inFlight.delete(run)).catch(() => undefined);
    return run;
  }

  /** No further tick starts; resolves once the runs in flight have settled. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await Promise.allSettled([...this.inFlight]);
  }
}
