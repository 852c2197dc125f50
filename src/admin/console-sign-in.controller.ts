import { Body, Get, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { HtmlPages } from '../common/http/html-pages.decorator.js';
import { PASSWORD_LOGIN_BUCKET, RateLimit } from '../common/rate-limit/rate-limit.decorator.js';
import { ConsoleExceptionFilter } from './console-exception.filter.js';
import {
  clearCookie,
  consoleReturnPath,
  readCookie,
  SESSION_COOKIE,
  setCookie,
  SIGN_IN_CSRF_COOKIE,
} from './console-http.js';
import { ConsolePages, type ConsoleRequest } from './console-pages.js';
import { ConsoleSessionService } from './console-session.service.js';
import { SignInCsrfGuard } from './sign-in-csrf.guard.js';
import { ConsoleSignInDto } from './dto/console.dto.js';

/** Staff console sign-in (the only console page without a session). Rate-limited with the API's login. */
@HtmlPages('admin/login', ConsoleExceptionFilter)
export class ConsoleSignInController {
  constructor(
    private readonly sessions: ConsoleSessionService,
    private readonly pages: ConsolePages,
  ) {}

  @Get()
  @RateLimit('read')
  async form(
    @Req() req: ConsoleRequest,
    @Res() res: Response,
    @Query('next') next?: string,
  ): Promise<void> {
    const user = await this.sessions.resolve(readCookie(req, SESSION_COOKIE));
    if (user?.isStaff) return this.pages.redirect(req, res, consoleReturnPath(next, req));
    this.pages.signIn(req, res, { next });
  }

  @Post()
  @RateLimit('login', { bucket: PASSWORD_LOGIN_BUCKET })
  @UseGuards(SignInCsrfGuard)
  async signIn(
    @Req() req: ConsoleRequest,
    @Res() res: Response,
    @Body() form: ConsoleSignInDto,
  ): Promise<void> {
    const token = await this.sessions.signIn(form.username, form.password);
    clearCookie(req, res, SIGN_IN_CSRF_COOKIE);
    setCookie(req, res, SESSION_COOKIE, token);
    const next = consoleReturnPath(form.next ?? '/admin', req);
    this.pages.redirect(req, res, next.startsWith('/admin/login') ? '/admin' : next);
  }
}
