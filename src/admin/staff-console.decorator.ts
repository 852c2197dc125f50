import { HtmlPages } from '../common/http/html-pages.decorator.js';
import { ConsoleExceptionFilter } from './console-exception.filter.js';
import { ConsoleSessionGuard } from './console-session.guard.js';

/** A controller of staff console pages under /admin: a staff session is required, errors are console pages. */
export const StaffConsole = () => HtmlPages('admin', ConsoleExceptionFilter, ConsoleSessionGuard);
