import { Body, Catch, Get, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { HtmlPages } from '../common/http/html-pages.decorator.js';
import { PageExceptionFilter, type ErrorBody } from '../common/errors/all-exceptions.filter.js';
import { ApiError } from '../common/errors/api-error.js';
import { RefusedError } from '../common/errors/domain-errors.js';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator.js';
import { CSRF_MESSAGE } from '../admin/console-session.guard.js';
import { ResetPageFormDto } from './dto/reset-page-form.dto.js';
import { RESET_CONFIRM_BUCKET } from './password-reset.controller.js';
import { RESET_MESSAGES } from './password-reset.messages.js';
import { PasswordResetService } from './password-reset.service.js';
import { ResetPasswordPage } from './reset-password-page.js';

/** Paths served outside the API prefix. */
export const RESET_PAGE_PATHS = ['reset-password'];

/** Errors on the page (rate limit, a broken form, anything unexpected) as the page, never as JSON. */
@Catch()
export class ResetPageExceptionFilter extends PageExceptionFilter {
  constructor(private readonly page: ResetPasswordPage) {
    super();
  }

  protected renderError(req: Request, res: Response, status: number, body: ErrorBody): void {
    this.page.render(req, res, { view: 'error', message: body.message }, status);
  }
}

/**
 * The page the reset mail links to: `GET /reset-password?token=…` shows the form (or why the link cannot be used),
 * `POST /reset-password` sets the password through the same service as the API's confirm.
 */
@HtmlPages('reset-password', ResetPageExceptionFilter)
export class ResetPasswordPageController {
  constructor(
    private readonly reset: PasswordResetService,
    private readonly page: ResetPasswordPage,
  ) {}

  @Get()
  @RateLimit('read')
  async form(
    @Req() req: Request,
    @Res() res: Response,
    @Query('token') token?: string,
  ): Promise<void> {
    const value = typeof token === 'string' ? token : '';
    if (!(await this.reset.isUsable(value))) {
      return this.page.render(
        req,
        res,
        { view: 'invalid', message: RESET_MESSAGES.invalidLink },
        400,
      );
    }
    this.page.render(req, res, { view: 'form', token: value });
  }

  @Post()
  @RateLimit('password_reset', { bucket: RESET_CONFIRM_BUCKET })
  async submit(
    @Req() req: Request,
    @Res() res: Response,
    @Body() form: ResetPageFormDto,
  ): Promise<void> {
    if (!this.page.csrfValid(req)) throw ApiError.forbidden(CSRF_MESSAGE);
    const token = form.token ?? '';
    try {
      const done = await this.reset.confirm({
        token,
        new_password: form.new_password ?? '',
        new_password_confirm: form.new_password_confirm ?? '',
      });
      this.page.render(req, res, { view: 'done', message: done.message });
    } catch (error) {
      if (!(error instanceof RefusedError)) throw error;
      const message = error.message;
      if (message === RESET_MESSAGES.invalidLink) {
        this.page.render(req, res, { view: 'invalid', message }, 400);
      } else {
        this.page.render(req, res, { view: 'form', token, error: message }, 400);
      }
    }
  }
}
