import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC_KEY = 'bookcase:public';

/** Opts a route out of the global JWT guard. Everything else requires a valid access token. */
export const Public = () => SetMetadata(IS_PUBLIC_KEY, true);
