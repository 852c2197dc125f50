import { InitialPlatform1763700000000 } from './1763700000000-initial-platform.js';

/** Every migration, oldest first. Listed explicitly so the app, the CLI and the tests load the same set. */
export const MIGRATIONS = [InitialPlatform1763700000000];
