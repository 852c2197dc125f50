import { Clock } from '../../src/common/clock.js';

/** A clock the test moves by hand. */
export class FakeClock extends Clock {
  constructor(private current = Date.parse('2026-06-15T12:00:00.000Z')) {
    super();
  }

  override now(): number {
    return this.current;
  }

  advance(ms: number): void {
    this.current += ms;
  }

  set(ms: number): void {
    this.current = ms;
  }
}
