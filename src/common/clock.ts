import { Injectable } from '@nestjs/common';

export const HOUR_MS = 3_600_000;

/** The service's notion of "now". Injected so tests can move time instead of sleeping. */
@Injectable()
export class Clock {
  now(): number {
    return Date.now();
  }

  date(): Date {
    return new Date(this.now());
  }
}
