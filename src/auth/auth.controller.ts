import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Patch,
  Post,
  Put,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { AuthUser } from '../common/auth/auth-user.js';
import { CurrentUser } from '../common/auth/auth.decorators.js';
import { Public } from '../common/auth/public.decorator.js';
import { ErrorResponse } from '../common/errors/error.response.js';
import { PASSWORD_LOGIN_BUCKET, RateLimit } from '../common/rate-limit/rate-limit.decorator.js';
import { AccountService } from './account.service.js';
import { AuthService } from './auth.service.js';
import { SocialAuthService } from './social-auth.service.js';
import {
  AccessTokenResponse,
  AccountMessageResponse,
  TokenPairResponse,
  UserResponse,
} from './dto/auth.response.js';
import { ChangeEmailDto } from './dto/change-email.dto.js';
import { ChangePasswordDto } from './dto/change-password.dto.js';
import { DeleteAccountDto } from './dto/delete-account.dto.js';
import { LoginDto } from './dto/login.dto.js';
import { RefreshDto } from './dto/refresh.dto.js';
import { RegisterDto } from './dto/register.dto.js';
import { SocialLoginDto } from './dto/social-login.dto.js';

/** Accounts and tokens (decisions §3). The token-issuing routes are public and ignore any Authorization header. */
@ApiTags('auth')
@Controller('auth')
export class AuthController {
  constructor(
    private readonly auth: AuthService,
    private readonly social: SocialAuthService,
    private readonly account: AccountService,
  ) {}

  @Post('register')
  @Public()
  @RateLimit('register')
  @ApiOperation({ summary: 'Create an account and sign in' })
  @ApiCreatedResponse({ type: TokenPairResponse })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description:
      'Username already exists. / Email already exists. / Provide a valid email address. / password policy',
  })
  register(@Body() dto: RegisterDto): Promise<TokenPairResponse> {
    return this.auth.register(dto);
  }

  @Post('login')
  @Public()
  @HttpCode(HttpStatus.OK)
  @RateLimit('login', { bucket: PASSWORD_LOGIN_BUCKET })
  @ApiOperation({ summary: 'Sign in with username or email and password' })
  @ApiOkResponse({ type: TokenPairResponse })
  @ApiUnauthorizedResponse({ type: ErrorResponse, description: 'Invalid credentials.' })
  login(@Body() dto: LoginDto): Promise<TokenPairResponse> {
    return this.auth.login(dto);
  }

  @Post('refresh')
  @Public()
  @HttpCode(HttpStatus.OK)
  @RateLimit('refresh')
  @ApiOperation({ summary: 'Exchange a refresh token for a new access token' })
  @ApiOkResponse({ type: AccessTokenResponse })
  @ApiUnauthorizedResponse({
    type: ErrorResponse,
    description: 'Invalid or expired refresh token.',
  })
  refresh(@Body() dto: RefreshDto): Promise<AccessTokenResponse> {
    return this.auth.refresh(dto);
  }

  @Post('social')
  @Public()
  @HttpCode(HttpStatus.OK)
  @RateLimit('social')
  @ApiOperation({ summary: 'Sign in with an Apple or Google identity token' })
  @ApiOkResponse({ type: TokenPairResponse })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description: "Unsupported provider. Use 'apple' or 'google'. / Invalid identity token.",
  })
  socialLogin(@Body() dto: SocialLoginDto): Promise<TokenPairResponse> {
    return this.social.signIn(dto);
  }

  @Get('me')
  @RateLimit('read')
  @ApiBearerAuth('bearer')
  @ApiOperation({ summary: 'The signed-in user' })
  @ApiOkResponse({ type: UserResponse })
  me(@CurrentUser() user: AuthUser): Promise<UserResponse> {
    return this.account.me(user);
  }

  @Patch('me/email')
  @RateLimit('write')
  @ApiBearerAuth('bearer')
  @ApiOperation({ summary: 'Change the email address' })
  @ApiOkResponse({ type: UserResponse })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description:
      'Provide a valid email address. / This is already your current email address. / Email already exists.',
  })
  @ApiForbiddenResponse({
    type: ErrorResponse,
    description: 'Social login accounts cannot change their email address.',
  })
  changeEmail(@CurrentUser() user: AuthUser, @Body() dto: ChangeEmailDto): Promise<UserResponse> {
    return this.account.changeEmail(user, dto);
  }

  @Put('me/password')
  @RateLimit('write')
  @ApiBearerAuth('bearer')
  @ApiOperation({ summary: 'Change the password; every other session is signed out' })
  @ApiOkResponse({ type: AccountMessageResponse })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description: 'Current password is incorrect. / New passwords do not match. / password policy',
  })
  @ApiForbiddenResponse({
    type: ErrorResponse,
    description: 'Social login accounts cannot change their password.',
  })
  changePassword(
    @CurrentUser() user: AuthUser,
    @Body() dto: ChangePasswordDto,
  ): Promise<AccountMessageResponse> {
    return this.account.changePassword(user, dto);
  }

  @Delete('me')
  @RateLimit('write')
  @ApiBearerAuth('bearer')
  @ApiOperation({
    summary: 'Delete the account (libraries, reports and photos stay, without author)',
  })
  @ApiOkResponse({ type: AccountMessageResponse })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description:
      "Password is required. / Incorrect password. / Send confirm_text set to 'DELETE' to delete your account.",
  })
  deleteAccount(
    @CurrentUser() user: AuthUser,
    @Body() dto: DeleteAccountDto,
  ): Promise<AccountMessageResponse> {
    return this.account.deleteAccount(user, dto);
  }
}
