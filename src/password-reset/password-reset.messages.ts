/** The answers of the password reset (issue 20). The request's answer never depends on the address. */
export const RESET_MESSAGES = {
  requested: 'If an account uses that email, a reset link has been sent.',
  done: 'Your password has been reset. You can now sign in with it.',
  invalidLink: 'This password reset link is invalid, expired or already used. Ask for a new one.',
  passwordsDoNotMatch: 'New passwords do not match.',
  invalidEmail: 'Provide a valid email address.',
} as const;
