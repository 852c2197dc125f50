import { ApiProperty } from '@nestjs/swagger';

/** `{message, details: null}`. */
export class PasswordResetMessageResponse {
  @ApiProperty({ example: 'If an account uses that email, a reset link has been sent.' })
  message: string;

  @ApiProperty({ type: 'object', nullable: true, additionalProperties: true, example: null })
  details: null;
}
